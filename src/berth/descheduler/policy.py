"""DeschedulerPolicy ``descheduler/v1alpha2``, read as kubernetes-sigs/descheduler reads it.

Field names are matched exactly, as the descheduler's strict codec (sigs.k8s.io/json) matches them:
``preevictionfilter`` is not ``preEvictionFilter``; anything unknown is an error
(``strict decoding error: unknown field "..."``, with a "did you mean" when one known field is close). Every profile gets DefaultEvictor at ``filter`` and ``preEvictionFilter`` (first) and a default
DefaultEvictor pluginConfig when it has none, as upstream's ``setDefaultEvictor``. A plugin enabled at an
extension point must exist and serve that point, and must have a ``pluginConfig`` entry (upstream: "unable
to find plugin config"). Each plugin's args are decoded strictly and validated by the plugin.

Koordinator's descheduler adds the ``evict`` extension point: ``MigrationController`` there routes the
profile's evictions through PodMigrationJobs (reservation first); its args are MigrationControllerArgs.
Errors are `PolicyError`s naming the file, the profile, the plugin and the field.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from berth.api.labels import LabelSelectorError, Selector, parse_selector
from berth.descheduler.args import ArgsReader, PolicyError
from berth.descheduler.evictor import Limits
from berth.descheduler.framework import BALANCE, DESCHEDULE, FILTER, PRE_EVICTION_FILTER, PluginSpec

__all__ = [
    "API_VERSION",
    "DEFAULT_EVICTOR",
    "EVICT",
    "KIND",
    "MIGRATION_CONTROLLER",
    "Policy",
    "ProfileConfig",
    "load_policy",
    "read_policy_file",
]

API_VERSION = "descheduler/v1alpha2"
KIND = "DeschedulerPolicy"
DEFAULT_EVICTOR = "DefaultEvictor"
MIGRATION_CONTROLLER = "MigrationController"
EVICT = "evict"
SORT = "sort"
PRESORT = "presort"
_POINTS = (PRESORT, SORT, DESCHEDULE, BALANCE, FILTER, PRE_EVICTION_FILTER, EVICT)
_POLICY_FIELDS = (
    "apiVersion",
    "kind",
    "profiles",
    "nodeSelector",
    "maxNoOfPodsToEvictPerNode",
    "maxNoOfPodsToEvictPerNamespace",
    "maxNoOfPodsToEvictTotal",
    "evictionFailureEventNotification",
    "metricsCollector",
    "metricsProviders",
    "gracePeriodSeconds",
)

ArgsParser = Callable[[Mapping[str, Any] | None, str], Any]


@dataclass(frozen=True)
class ProfileConfig:
    """One profile: its name, the plugins enabled per extension point and each plugin's parsed args."""

    name: str
    points: Mapping[str, tuple[str, ...]]
    args: Mapping[str, Any]

    def enabled(self, point: str) -> tuple[str, ...]:
        """The plugins enabled at an extension point, in order."""
        return self.points.get(point, ())


@dataclass(frozen=True)
class Policy:
    """A loaded, validated DeschedulerPolicy."""

    profiles: tuple[ProfileConfig, ...]
    limits: Limits = field(default_factory=Limits)
    node_selector: Selector | None = None
    grace_period_seconds: int | None = None
    eviction_failure_event_notification: bool = False
    source: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict)


def _fold(raw: Mapping[str, Any], known: Sequence[str], where: str) -> dict[str, Any]:
    """The fields of `raw`, each one of `known` (matched exactly, as the strict codec does); any other key is an
    error naming the nearest known field."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = str(key) if str(key) in known else None
        if name is None:
            reader = ArgsReader({key: value}, where)
            for k in known:
                reader.value(k)
            reader.finish()
        else:
            out[str(name)] = value
    return out


def _limit(top: ArgsReader, name: str) -> int | None:
    return top.integer(name, minimum=0)


def _plugin_set(raw: Any, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise PolicyError(f"{where}: must be an object with enabled/disabled lists")
    reader = ArgsReader(_fold(raw, ("enabled", "disabled"), where), where)
    enabled = reader.strings("enabled")
    reader.strings("disabled")
    reader.finish()
    return enabled


def _profile(
    raw: Any,
    index: int,
    where: str,
    plugins: Mapping[str, PluginSpec],
    extra_args: Mapping[str, ArgsParser],
) -> ProfileConfig:
    at = f"{where}profiles[{index}]"
    if not isinstance(raw, Mapping):
        raise PolicyError(f"{at}: must be an object")
    reader = ArgsReader(_fold(raw, ("name", "pluginConfig", "plugins"), at), at)
    name = reader.string("name")
    if not name:
        raise reader.error("name", "Required value: every profile needs a name")
    configs = reader.value("pluginConfig") or []
    plugin_sets = reader.value("plugins") or {}
    reader.finish()
    prefix = f'{where}profile "{name}"'
    if not isinstance(configs, list):
        raise PolicyError(f"{prefix}: pluginConfig must be a list")
    raw_args: dict[str, Mapping[str, Any] | None] = {}
    for i, entry in enumerate(configs):
        if not isinstance(entry, Mapping):
            raise PolicyError(f"{prefix}: pluginConfig[{i}] must be an object with name and args")
        e = ArgsReader(
            _fold(entry, ("name", "args"), f"{prefix}: pluginConfig[{i}]"), f"{prefix}: pluginConfig[{i}]"
        )
        plugin = e.string("name")
        args = e.value("args")
        e.finish()
        if not plugin:
            raise e.error("name", "Required value")
        if plugin not in plugins and plugin not in extra_args:
            raise PolicyError(
                f"{prefix}: plugin {plugin!r} in pluginConfig not registered{_suggest(plugin, plugins, extra_args)}"
            )
        if plugin in raw_args:
            raise PolicyError(f"{prefix}: pluginConfig[{i}]: duplicate entry for plugin {plugin!r}")
        if args is not None and not isinstance(args, Mapping):
            raise PolicyError(f'{prefix}: plugin "{plugin}": args must be an object')
        raw_args[plugin] = args
    if not isinstance(plugin_sets, Mapping):
        raise PolicyError(f"{prefix}: plugins must be an object")
    sets = _fold(plugin_sets, _POINTS, f"{prefix}: plugins")
    points: dict[str, tuple[str, ...]] = {
        p: _plugin_set(sets.get(p), f"{prefix}: plugins.{p}") for p in _POINTS
    }
    # upstream's setDefaultEvictor: DefaultEvictor always filters, first
    for p in (FILTER, PRE_EVICTION_FILTER):
        if DEFAULT_EVICTOR not in points[p]:
            points[p] = (DEFAULT_EVICTOR, *points[p])
    raw_args.setdefault(DEFAULT_EVICTOR, None)
    for point in _POINTS:
        for plugin in points[point]:
            if point == EVICT:
                if plugin not in extra_args:
                    raise PolicyError(
                        f"{prefix}: plugins.{point}: plugin {plugin!r} is not an evict plugin "
                        f"(only {', '.join(sorted(extra_args)) or 'none'})"
                    )
            else:
                spec = plugins.get(plugin)
                if spec is None or point not in spec.points:
                    raise PolicyError(
                        f"{prefix}: profile {name!r} configures {point} extension point of non-existing "
                        f"plugins: {plugin!r}{_suggest(plugin, plugins, extra_args)}"
                    )
            if plugin not in raw_args:
                raise PolicyError(
                    f'{prefix}: plugin "{plugin}" is enabled at {point} but has no pluginConfig entry '
                    f"(unable to find {plugin!r} plugin config)"
                )
    parsed: dict[str, Any] = {}
    for plugin, args in raw_args.items():
        where_args = f'{prefix}: plugin "{plugin}": args'
        parsed[plugin] = (
            extra_args[plugin](args, where_args)
            if plugin in extra_args
            else plugins[plugin].read_args(args, where_args)
        )
    return ProfileConfig(name, {p: v for p, v in points.items() if v}, parsed)


def _suggest(name: str, plugins: Mapping[str, Any], extra: Mapping[str, Any]) -> str:
    near = difflib.get_close_matches(name, [n for n in (*plugins, *extra) if n != name], n=1)
    return f' (did you mean "{near[0]}"?)' if near else ""


def load_policy(
    data: Any,
    plugins: Mapping[str, PluginSpec],
    *,
    source: str = "",
    extra_args: Mapping[str, ArgsParser] | None = None,
) -> Policy:
    """Validate a decoded DeschedulerPolicy document against the registered `plugins` (and the evict
    plugins' args parsers in `extra_args`); raises PolicyError."""
    where = f"{source}: " if source else ""
    if not isinstance(data, Mapping):
        raise PolicyError(f"{where}a DeschedulerPolicy must be a YAML/JSON object")
    head = ArgsReader(
        _fold({k: v for k, v in data.items() if str(k) in ("apiVersion", "kind")}, _POLICY_FIELDS, ""),
        f"{where}DeschedulerPolicy",
    )
    api_version = head.string("apiVersion")
    kind = head.string("kind")
    if kind != KIND:
        raise head.error("kind", f"must be {KIND!r}, not {kind!r}")
    if api_version != API_VERSION:
        hint = (
            " (the v1alpha1 strategies format was removed upstream; write profiles)"
            if "v1alpha1" in api_version
            else ""
        )
        raise head.error("apiVersion", f"unsupported {api_version!r}: must be {API_VERSION!r}{hint}")
    top = ArgsReader(_fold(data, _POLICY_FIELDS, f"{where}DeschedulerPolicy"), f"{where}DeschedulerPolicy")
    top.value("apiVersion")
    top.value("kind")
    limits = Limits(
        per_node=_limit(top, "maxNoOfPodsToEvictPerNode"),
        per_namespace=_limit(top, "maxNoOfPodsToEvictPerNamespace"),
        total=_limit(top, "maxNoOfPodsToEvictTotal"),
    )
    grace = top.integer("gracePeriodSeconds", minimum=0)
    notify = top.flag("evictionFailureEventNotification")
    selector_text = top.string("nodeSelector")
    selector: Selector | None = None
    if selector_text:
        try:
            selector = parse_selector(selector_text)
        except LabelSelectorError as e:
            raise top.error("nodeSelector", f"invalid selector {selector_text!r}: {e}") from None
    collector = top.child("metricsCollector")
    if collector.flag("enabled"):
        raise top.error("metricsCollector.enabled", "true is not supported: Berth has no metrics server")
    collector.finish()
    providers = top.value("metricsProviders")
    if providers:
        raise top.error("metricsProviders", "not supported: Berth uses requests, it has no metrics source")
    raw_profiles = top.value("profiles") or []
    top.finish()
    if not isinstance(raw_profiles, list):
        raise PolicyError(f"{where}profiles: must be a list")
    profiles: list[ProfileConfig] = []
    names: set[str] = set()
    for i, raw in enumerate(raw_profiles):
        profile = _profile(raw, i, where, plugins, extra_args or {})
        if profile.name in names:
            raise PolicyError(f"{where}profiles[{i}].name: duplicate profile name {profile.name!r}")
        names.add(profile.name)
        profiles.append(profile)
    return Policy(tuple(profiles), limits, selector, grace, notify, source, dict(data))


def read_policy_file(
    path: str, plugins: Mapping[str, PluginSpec], *, extra_args: Mapping[str, ArgsParser] | None = None
) -> Policy:
    """Load a DeschedulerPolicy from a YAML or JSON file; raises PolicyError (also for unreadable files)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise PolicyError(f"{path}: cannot read the descheduler policy: {e.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise PolicyError(f"{path}: not valid YAML: {e}") from None
    return load_policy(data, plugins, source=path, extra_args=extra_args)
