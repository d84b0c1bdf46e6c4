"""Run one descheduler plugin over a set of objects, as upstream's plugin unit tests do.

The objects go into an embedded store; the plugin is built from the registry with its args, under a profile
whose filter and preEvictionFilter are DefaultEvictor with `evictor_args`; it runs once over the view's
nodes (or the `nodes` named); the result is the evicted pods' names in eviction order. `args_error` is the
error that reading a plugin's args gives, for validation tables.

The view is read back from the store, as a cycle reads the cluster; with ``as_given=True`` it is built from
the objects exactly as given instead (their creation and deletion timestamps, uids, owner references and
statuses kept, none of them defaulted by the store), while evictions still go through the store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from berth.api.timestamps import parse_time
from berth.descheduler.args import PolicyError
from berth.descheduler.evictor import Limits, PodEvictor, ProfileEvictor
from berth.descheduler.framework import BalancePlugin, DeschedulePlugin, EvictorPlugin, Handle
from berth.descheduler.registry import builtin_plugins
from berth.descheduler.view import ClusterView, read_view
from berth.store import MemoryStore

Obj = dict[str, Any]


def new_store(objects: Sequence[Obj] = ()) -> MemoryStore:
    """An embedded store (no validation) holding `objects`."""
    store = MemoryStore(validate=None)
    for obj in objects:
        store.create(obj)
    return store


def build(
    store: MemoryStore,
    plugin: str,
    args: Mapping[str, Any] | None = None,
    *,
    evictor_args: Mapping[str, Any] | None = None,
    limits: Limits | None = None,
    now: str | None = None,
    view: ClusterView | None = None,
) -> tuple[Any, PodEvictor, ClusterView]:
    """The plugin built over the store's current state (or over `view`, when given), its PodEvictor and the
    view."""
    specs = builtin_plugins()
    if view is None:
        view = read_view(store, _unix(now or store.timestamp()))
    pod_evictor = PodEvictor(store, None, limits or Limits())
    evictor = ProfileEvictor(pod_evictor, "test", [], [])
    handle = Handle(view, evictor, "test")
    if "DefaultEvictor" in specs:
        spec = specs["DefaultEvictor"]
        default = spec.build(spec.read_args(dict(evictor_args or {}), "DefaultEvictor.args"), handle)
        assert isinstance(default, EvictorPlugin)
        evictor.filters.append(default.filter)
        evictor.pre_eviction_filters.append(default.pre_eviction_filter)
    spec = specs[plugin]
    return (
        spec.build(spec.read_args(dict(args) if args is not None else None, f"{plugin}.args"), handle),
        pod_evictor,
        view,
    )


def _unix(timestamp: str) -> float:
    at = parse_time(timestamp)
    assert at is not None
    return at.timestamp()


def view_as_given(objects: Sequence[Obj], now: str) -> ClusterView:
    """The view of the objects' nodes and pods exactly as given, at `now` (RFC 3339)."""
    return ClusterView(
        nodes=[o for o in objects if o["kind"] == "Node"],
        pods=[o for o in objects if o["kind"] == "Pod"],
        now=_unix(now),
    )


def run_plugin(
    objects: Sequence[Obj],
    plugin: str,
    args: Mapping[str, Any] | None = None,
    *,
    evictor_args: Mapping[str, Any] | None = None,
    limits: Limits | None = None,
    now: str | None = None,
    nodes: Sequence[str] | None = None,
    as_given: bool = False,
) -> list[str]:
    """Evicted pod names, in order, after one run of `plugin` (deschedule or balance) over the objects
    (with `as_given`, over the view of the objects as given, at `now` or the store's time)."""
    store = new_store(objects)
    given = view_as_given(objects, now or store.timestamp()) if as_given else None
    built, pod_evictor, view = build(
        store, plugin, args, evictor_args=evictor_args, limits=limits, now=now, view=given
    )
    chosen = view.nodes if nodes is None else [view.node_by_name[n] for n in nodes]
    if isinstance(built, DeschedulePlugin):
        built.deschedule(chosen)
    elif isinstance(built, BalancePlugin):
        built.balance(chosen)
    else:
        raise AssertionError(f"{plugin} is neither a deschedule nor a balance plugin")
    return [e.name for e in pod_evictor.evictions]


def args_error(read: Callable[[Any], object], raw: Any) -> str | None:
    """The text of the PolicyError `read(raw)` raises; None when `raw` reads without one."""
    try:
        read(raw)
    except PolicyError as e:
        return str(e)
    return None
