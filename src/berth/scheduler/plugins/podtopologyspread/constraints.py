"""Topology spread constraints compiled from a pod (or from the plugin's default constraints).

The internal form of kube's ``topologySpreadConstraint``: the label selector parsed (``matchLabelKeys``
merged in from the pod's labels), ``minDomains`` defaulted to 1, ``nodeAffinityPolicy`` to Honor and
``nodeTaintsPolicy`` to Ignore. Pods without constraints of their own get the default constraints with a
selector built from the controllers that own them (kube's ``DefaultSelector``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.api.contracts import Store
from berth.api.errors import NotFound
from berth.api.labels import (
    LabelSelectorError,
    Requirement,
    Selector,
    compile_label_selector,
    everything,
    selector_from_set,
)
from berth.scheduler.framework import PodInfo

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
HONOR = "Honor"
IGNORE = "Ignore"

# (apiVersion, kind) of the controllers whose selector kube's DefaultSelector reads, with their store keys
_SELECTOR_OWNERS: dict[tuple[str, str], tuple[str, str]] = {
    ("apps/v1", "ReplicaSet"): ("apps", "ReplicaSet"),
    ("apps/v1", "StatefulSet"): ("apps", "StatefulSet"),
    ("v1", "ReplicationController"): ("", "ReplicationController"),
}
SERVICE_KEY = ("", "Service")


@dataclass(frozen=True, slots=True)
class Constraint:
    """One spread constraint as the plugin evaluates it."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    honor_node_affinity: bool = True
    honor_node_taints: bool = False


@dataclass(frozen=True, slots=True)
class DefaultConstraint:
    """A default constraint from the plugin args (no selector: it is deduced per pod)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str


SYSTEM_DEFAULT_CONSTRAINTS: tuple[DefaultConstraint, ...] = (
    DefaultConstraint(3, HOSTNAME_LABEL, SCHEDULE_ANYWAY),
    DefaultConstraint(5, ZONE_LABEL, SCHEDULE_ANYWAY),
)


class ConstraintError(ValueError):
    """A pod's constraint cannot be compiled (e.g. an invalid label selector)."""


@dataclass(frozen=True, slots=True)
class PodConstraints:
    """A pod's constraints split by ``whenUnsatisfiable``; ``own`` says whether they came from its spec."""

    hard: tuple[Constraint, ...]
    soft: tuple[Constraint, ...]
    own: bool


NO_CONSTRAINTS = PodConstraints((), (), False)


def merge_match_label_keys(selector: Selector, keys: Sequence[str], labels: Mapping[str, str]) -> Selector:
    """The selector ANDed with ``key=value`` for each of ``keys`` the pod's labels carry (kube's merge)."""
    match = {k: labels[k] for k in keys if k in labels}
    if not match:
        return selector
    merged = selector_from_set(match)
    if selector.is_nothing():
        # a nothing selector has no requirements to add: kube keeps only the pod's label set
        return merged
    return Selector((*merged.requirements, *selector.requirements))


def compile_constraint(item: Mapping[str, Any], labels: Mapping[str, str]) -> Constraint:
    """The internal form of one wire-form TopologySpreadConstraint."""
    try:
        selector = compile_label_selector(item.get("labelSelector"))
    except LabelSelectorError as e:
        raise ConstraintError(str(e)) from None
    keys = item.get("matchLabelKeys") or ()
    if keys:
        selector = merge_match_label_keys(selector, [str(k) for k in keys], labels)
    min_domains = item.get("minDomains")
    return Constraint(
        max_skew=int(item.get("maxSkew") or 0),
        topology_key=str(item.get("topologyKey") or ""),
        selector=selector,
        min_domains=int(min_domains) if min_domains is not None else 1,
        honor_node_affinity=item.get("nodeAffinityPolicy") != IGNORE,
        honor_node_taints=item.get("nodeTaintsPolicy") == HONOR,
    )


def spec_constraints(pod: PodInfo) -> list[Mapping[str, Any]]:
    """The pod's spec.topologySpreadConstraints (empty when none)."""
    items = (pod.obj.get("spec") or {}).get("topologySpreadConstraints") or ()
    return [c for c in items if isinstance(c, Mapping)]


def controller_ref(pod: PodInfo) -> Mapping[str, Any] | None:
    """The pod's ownerReference with ``controller: true`` (metav1.GetControllerOf)."""
    for ref in (pod.obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return ref
    return None


def _lookup(client: Store, key: tuple[str, str], namespace: str, name: str) -> dict[str, Any] | None:
    try:
        return client.get(key, namespace, name)
    except NotFound:  # no such object, or a kind this cluster does not serve
        return None


def _services_selector(client: Store, pod: PodInfo) -> dict[str, str]:
    """The merged spec.selector of the Services in the pod's namespace that select the pod."""
    try:
        services, _ = client.list(SERVICE_KEY, pod.namespace)
    except NotFound:  # the cluster does not serve Services
        return {}
    merged: dict[str, str] = {}
    for svc in services:
        sel = (svc.get("spec") or {}).get("selector")
        if sel is None:
            continue  # a nil selector selects nothing
        if all(pod.labels.get(k) == v for k, v in sel.items()):
            merged.update(sel)
    return merged


_OWNER_SELECTORS: dict[str, Selector | None] = {}


def _owner_selector(sel: Any) -> Selector | None:
    """A controller's compiled spec.selector (None when invalid), shared by the pods it owns."""
    key = repr(sel)
    if key in _OWNER_SELECTORS:
        return _OWNER_SELECTORS[key]
    try:
        out: Selector | None = compile_label_selector(sel)
    except LabelSelectorError:
        out = None
    if len(_OWNER_SELECTORS) >= 4096:
        _OWNER_SELECTORS.clear()
    _OWNER_SELECTORS[key] = out
    return out


def default_selector(client: Store, pod: PodInfo, *, services: bool) -> Selector:
    """kube's DefaultSelector: the Services' selectors plus the owning ReplicaSet/StatefulSet/RC selector.

    ``services`` False skips the Service lookup (the cluster serves no Services)."""
    label_set = _services_selector(client, pod) if services else {}
    selector = selector_from_set(label_set)
    ref = controller_ref(pod)
    if ref is None:
        return selector
    key = _SELECTOR_OWNERS.get((str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")))
    if key is None:
        return selector
    owner = _lookup(client, key, pod.namespace, str(ref.get("name") or ""))
    if owner is None:
        return selector
    owner_sel = (owner.get("spec") or {}).get("selector")
    if key[1] == "ReplicationController":
        if isinstance(owner_sel, Mapping):
            return selector_from_set({**label_set, **owner_sel})
        return selector
    other = _owner_selector(owner_sel)
    if other is None or other.is_nothing():
        return selector
    reqs: tuple[Requirement, ...] = (*selector.requirements, *other.requirements)
    return Selector(reqs) if reqs else everything()


def build_defaults(
    defaults: Sequence[DefaultConstraint], selector: Selector
) -> tuple[tuple[Constraint, ...], tuple[Constraint, ...]]:
    """(hard, soft) constraints from the default constraints with ``selector``."""
    hard: list[Constraint] = []
    soft: list[Constraint] = []
    for d in defaults:
        c = Constraint(d.max_skew, d.topology_key, selector)
        (hard if d.when_unsatisfiable == DO_NOT_SCHEDULE else soft).append(c)
    return tuple(hard), tuple(soft)


_COMPILED: dict[
    tuple[str, tuple[str | None, ...]], tuple[tuple[Constraint, ...], tuple[Constraint, ...]]
] = {}


def _own_constraints(
    pod: PodInfo, items: list[Mapping[str, Any]]
) -> tuple[tuple[Constraint, ...], tuple[Constraint, ...]]:
    """(hard, soft) from the pod's spec, shared between pods with the same constraints (and label values
    for their matchLabelKeys), as pods of one template are."""
    label_keys = [str(k) for item in items for k in item.get("matchLabelKeys") or ()]
    key = (repr(items), tuple(pod.labels.get(k) for k in label_keys))
    hit = _COMPILED.get(key)
    if hit is not None:
        return hit
    hard: list[Constraint] = []
    soft: list[Constraint] = []
    for item in items:
        action = item.get("whenUnsatisfiable")
        if action == DO_NOT_SCHEDULE:
            hard.append(compile_constraint(item, pod.labels))
        elif action == SCHEDULE_ANYWAY:
            soft.append(compile_constraint(item, pod.labels))
    if len(_COMPILED) >= 4096:
        _COMPILED.clear()
    out = _COMPILED[key] = (tuple(hard), tuple(soft))
    return out


def pod_constraints(
    pod: PodInfo,
    defaults: Sequence[DefaultConstraint],
    client: Store | None,
    *,
    services: bool = False,
) -> PodConstraints:
    """The pod's constraints: its own, else the defaults with a selector from its controllers.

    Raises ConstraintError when a constraint cannot be compiled."""
    own = spec_constraints(pod)
    if own:
        hard, soft = _own_constraints(pod, own)
        return PodConstraints(hard, soft, True)
    if not defaults or client is None:
        return NO_CONSTRAINTS
    if not services and controller_ref(pod) is None:
        return NO_CONSTRAINTS  # nothing can give a selector: skip without touching the store
    selector = default_selector(client, pod, services=services)
    if selector.is_everything() or selector.is_nothing():
        return NO_CONSTRAINTS  # kube: an empty default selector means no default constraints
    h, s = build_defaults(defaults, selector)
    return PodConstraints(h, s, False)
