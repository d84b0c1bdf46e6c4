"""RemovePodsViolatingTopologySpreadConstraint (upstream ``pkg/framework/plugins/
removepodsviolatingtopologyspreadconstraint``), a Balance plugin.

Namespace by namespace, every distinct topology spread constraint of the considered pods (those the
profile's evictor filter allows and ``namespaces`` / ``labelSelector`` select, on the cycle's nodes) whose
``whenUnsatisfiable`` is in ``constraints`` is checked: its domains are the values of its topology key on
the cycle's nodes that pass its node inclusion policies (``nodeAffinityPolicy``, default Honor: the
constraint's pod's nodeSelector and required node affinity must match; ``nodeTaintsPolicy``, default
Ignore: with Honor its NoSchedule / NoExecute taints must be tolerated), plus any value holding a counted
pod; the pods counted are the considered, non-terminating pods of the namespace matching its selector
(merged with ``matchLabelKeys`` from the pod's labels). A constraint whose domains differ by more than
``maxSkew`` is balanced as upstream's ``balanceDomains`` does: domains sorted by size, the largest gives
to the smallest up to half the excess skew, never below or above the average; the pods given are taken
from the end of the domain's list (ordered: selector/affinity pods first, then by priority, lowest first),
preferring pods that fit a node of a domain below the average. With ``topologyBalanceNodeFit`` (default
true) a chosen pod that fits no such node (other than its own) is not evicted, though it still counts as
moved. ``minDomains`` is not consulted, as upstream. The chosen pods are then evicted, skipping nodes whose
eviction limit was hit.

Args (``RemovePodsViolatingTopologySpreadConstraintArgs``): ``namespaces``, ``labelSelector``,
``constraints`` (DoNotSchedule and/or ScheduleAnyway; default DoNotSchedule), ``topologyBalanceNodeFit``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from berth.api.labels import LabelSelectorError, Requirement, Selector, compile_label_selector
from berth.api.nodeselector import RequiredNodeAffinity, required_node_affinity
from berth.api.taints import (
    EFFECT_NO_EXECUTE,
    EFFECT_NO_SCHEDULE,
    Toleration,
    find_untolerated,
    parse_taints,
    parse_tolerations,
)
from berth.descheduler.args import ArgsReader
from berth.descheduler.framework import BALANCE, EvictOutcome, Handle, PluginSpec
from berth.descheduler.plugins._fitcache import FitMasks
from berth.descheduler.plugins.podselection import (
    EVERY_POD,
    LabelIndex,
    PodSelection,
    is_active,
    is_terminating,
    read_pod_selection,
)

__all__ = [
    "DO_NOT_SCHEDULE",
    "NAME",
    "SCHEDULE_ANYWAY",
    "SPECS",
    "RemovePodsViolatingTopologySpreadConstraint",
    "RemovePodsViolatingTopologySpreadConstraintArgs",
    "SpreadConstraint",
    "parse_args",
    "sort_domain_pods",
    "spread_constraint",
]

Obj = dict[str, Any]
NAME = "RemovePodsViolatingTopologySpreadConstraint"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
_ACTIONS = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
HONOR = "Honor"
IGNORE = "Ignore"
_HARD_EFFECTS = frozenset((EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE))


@dataclass(frozen=True)
class RemovePodsViolatingTopologySpreadConstraintArgs:
    """The plugin's args, defaulted and validated."""

    selection: PodSelection = EVERY_POD
    """``namespaces`` and ``labelSelector``: the pods considered."""
    constraints: tuple[str, ...] = (DO_NOT_SCHEDULE,)
    """``constraints``: the ``whenUnsatisfiable`` actions of the constraints enforced."""
    topology_balance_node_fit: bool = True
    """``topologyBalanceNodeFit``: evict only pods that fit a node of a domain below the average."""


def parse_args(reader: ArgsReader) -> RemovePodsViolatingTopologySpreadConstraintArgs:
    """Read ``RemovePodsViolatingTopologySpreadConstraintArgs`` with upstream's defaults."""
    selection = read_pod_selection(reader)
    constraints = reader.strings("constraints")
    for i, action in enumerate(constraints):
        if action not in _ACTIONS:
            raise reader.error(
                f"constraints[{i}]", f"constraint {action!r} is not one of {', '.join(_ACTIONS)}"
            )
    node_fit = reader.flag("topologyBalanceNodeFit", True)
    reader.finish()
    return RemovePodsViolatingTopologySpreadConstraintArgs(
        selection, tuple(constraints) or (DO_NOT_SCHEDULE,), node_fit
    )


@dataclass(frozen=True)
class SpreadConstraint:
    """One topology spread constraint of one pod, as the plugin compares and applies it (two pods' equal
    constraints compare equal: the node affinity and tolerations count only where their policy is Honor)."""

    max_skew: int
    topology_key: str
    selector: Selector
    node_affinity_policy: str
    node_taints_policy: str
    node_affinity_key: str | None
    tolerations_key: str | None
    node_affinity: RequiredNodeAffinity | None = field(default=None, compare=False)
    tolerations: tuple[Toleration, ...] = field(default=(), compare=False)

    def includes(self, node: Mapping[str, Any]) -> bool:
        """Whether the node passes the constraint's node inclusion policies."""
        meta = node["metadata"]
        if self.node_affinity is not None and not self.node_affinity.matches(
            meta.get("labels") or {}, str(meta["name"])
        ):
            return False
        if self.node_taints_policy == HONOR:
            taints = parse_taints((node.get("spec") or {}).get("taints"))
            if find_untolerated(taints, self.tolerations, _HARD_EFFECTS) is not None:
                return False
        return True


def spread_constraint(raw: Mapping[str, Any], pod: Mapping[str, Any]) -> SpreadConstraint:
    """Compile one of the pod's ``topologySpreadConstraints`` (raises LabelSelectorError on a bad selector).

    ``matchLabelKeys`` add the pod's values of those labels to the selector (a nil selector stays nil)."""
    selector = compile_label_selector(raw.get("labelSelector"))
    labels = (pod.get("metadata") or {}).get("labels")
    keys = raw.get("matchLabelKeys") or ()
    if keys and labels is not None:
        extra = [Requirement(k, "=", (str(labels[k]),)) for k in keys if k in labels]
        if extra and not selector.is_nothing():
            selector = Selector((*extra, *selector.requirements))
    spec = pod.get("spec") or {}
    affinity_policy = str(raw.get("nodeAffinityPolicy") or HONOR)
    taints_policy = str(raw.get("nodeTaintsPolicy") or IGNORE)
    node_affinity = None
    affinity_key = None
    if affinity_policy == HONOR:
        node_affinity = required_node_affinity(pod)
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        affinity_key = json.dumps([spec.get("nodeSelector") or None, required], sort_keys=True)
    tolerations: tuple[Toleration, ...] = ()
    tolerations_key = None
    if taints_policy == HONOR:
        tolerations = parse_tolerations(spec.get("tolerations"))
        tolerations_key = json.dumps(spec.get("tolerations"), sort_keys=True)
    return SpreadConstraint(
        int(raw.get("maxSkew") or 0),
        str(raw.get("topologyKey") or ""),
        selector,
        affinity_policy,
        taints_policy,
        affinity_key,
        tolerations_key,
        node_affinity,
        tolerations,
    )


def _has_selector_or_affinity(pod: Mapping[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    return (
        spec.get("nodeSelector") is not None or (spec.get("affinity") or {}).get("nodeAffinity") is not None
    )


def sort_domain_pods(pods: Sequence[Obj], is_evictable: Callable[[Obj], bool]) -> list[Obj]:
    """A domain's pods in upstream's ``sortDomains`` order (evictions are taken from the end): pods that
    may not be evicted first, then pods with a nodeSelector or node affinity, each group by priority
    ascending (pods without ``spec.priority`` lowest). Ties keep their order."""

    def key(pod: Obj) -> tuple[int, int, int, int]:
        priority = (pod.get("spec") or {}).get("priority")
        return (
            1 if is_evictable(pod) else 0,
            0 if _has_selector_or_affinity(pod) else 1,
            0 if priority is None else 1,
            0 if priority is None else int(priority),
        )

    return sorted(pods, key=key)


def _balanced(domains: Mapping[str, list[Obj]], max_skew: int) -> bool:
    """Whether no two domains differ by more than `max_skew` pods."""
    if not domains:
        return True
    sizes = [len(p) for p in domains.values()]
    return max(sizes) - min(sizes) <= max_skew


def _constraint_key(raw: Mapping[str, Any], pod: Mapping[str, Any]) -> str:
    """What `spread_constraint` reads: the constraint, the pod's values of its matchLabelKeys, and the pod's
    node selector, required node affinity and tolerations."""
    spec = pod.get("spec") or {}
    labels = (pod.get("metadata") or {}).get("labels")
    keys = raw.get("matchLabelKeys") or ()
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    return repr(
        (
            raw,
            None if labels is None else [labels.get(k) for k in keys],
            spec.get("nodeSelector"),
            required,
            spec.get("tolerations"),
        )
    )


def _layout(constraint: SpreadConstraint, nodes: Sequence[Obj]) -> dict[str, list[str]]:
    """The names of the nodes passing the constraint's inclusion policies, by their value of its topology
    key (values and names in node order)."""
    out: dict[str, list[str]] = {}
    for node in nodes:
        value = (node["metadata"].get("labels") or {}).get(constraint.topology_key)
        if value is not None and constraint.includes(node):
            out.setdefault(value, []).append(str(node["metadata"]["name"]))
    return out


@dataclass
class _Domain:
    value: str
    pods: list[Obj]


class RemovePodsViolatingTopologySpreadConstraint:
    """Evicts pods so that their topology spread constraints are met again."""

    name = NAME

    def __init__(self, args: RemovePodsViolatingTopologySpreadConstraintArgs, handle: Handle) -> None:
        """Build over the profile's handle."""
        self.args = args
        self.handle = handle
        self._fits: FitMasks | None = None

    def _considered(self, pod: Obj) -> bool:
        return self.args.selection.matches(pod) and self.handle.evictor.filter(pod)

    def balance(self, nodes: Sequence[Obj]) -> None:
        """Find the unbalanced constraints over `nodes`, choose the pods to move and evict them."""
        view = self.handle.view
        evictor = self.handle.evictor
        node_map = {str(n["metadata"]["name"]): n for n in nodes}
        index = LabelIndex(
            p for name in node_map for p in view.pods_on(name) if is_active(p) and self._considered(p)
        )
        allowed = frozenset(self.args.constraints)
        layouts: dict[tuple[str | None, str | None, str], dict[str, list[str]]] = {}
        compiled: dict[str, SpreadConstraint | None] = {}
        chosen: dict[int, Obj] = {}
        for namespace, pods in index.by_namespace.items():
            constraints: dict[SpreadConstraint, None] = {}
            for pod in pods:
                for raw in (pod.get("spec") or {}).get("topologySpreadConstraints") or ():
                    if raw.get("whenUnsatisfiable") not in allowed:
                        continue
                    key = _constraint_key(raw, pod)
                    if key not in compiled:
                        try:
                            compiled[key] = spread_constraint(raw, pod)
                        except LabelSelectorError:
                            compiled[key] = (
                                None  # upstream skips a constraint whose selector does not compile
                            )
                    constraint = compiled[key]
                    if constraint is not None:
                        constraints.setdefault(constraint, None)
            for constraint in constraints:
                place = (constraint.node_affinity_key, constraint.tolerations_key, constraint.topology_key)
                layout = layouts.get(place)
                if layout is None:
                    layout = layouts[place] = _layout(constraint, nodes)
                domains: dict[str, list[Obj]] = {value: [] for value in layout}
                total = 0
                for pod in index.matching((namespace,), constraint.selector):
                    if is_terminating(pod):
                        continue
                    node = node_map[str(pod["spec"]["nodeName"])]
                    value = (node["metadata"].get("labels") or {}).get(constraint.topology_key)
                    if value is None:
                        continue
                    domains.setdefault(value, []).append(pod)
                    total += 1
                if _balanced(domains, constraint.max_skew):
                    continue
                self._balance_domains(chosen, constraint, domains, total, layout)

        limited: set[str] = set()
        for pod in chosen.values():
            node_name = str(pod["spec"]["nodeName"])
            if node_name in limited or not self._considered(pod) or not evictor.pre_eviction_filter(pod):
                continue
            outcome = evictor.evict(pod, NAME)
            if outcome is EvictOutcome.NODE_LIMIT:
                limited.add(node_name)
            elif outcome is EvictOutcome.TOTAL_LIMIT:
                return

    def _balance_domains(
        self,
        chosen: dict[int, Obj],
        constraint: SpreadConstraint,
        topology: Mapping[str, list[Obj]],
        total: int,
        layout: Mapping[str, list[str]],
    ) -> None:
        """Upstream's ``balanceDomains``: move pods from the largest domains to the smallest; `layout` holds
        the cycle's nodes that pass the constraint's inclusion policies, by domain."""
        ideal = total / len(topology)
        # Every pod counted passed the evictor's filter already (upstream asks it again: same answer).
        domains = [_Domain(value, sort_domain_pods(pods, lambda _: True)) for value, pods in topology.items()]
        domains.sort(key=lambda d: len(d.pods))
        if self._fits is None:
            self._fits = FitMasks(self.handle.fit, self.handle.view)
        fit_masks = self._fits
        below = fit_masks.indices(
            name for d in domains if len(d.pods) < ideal for name in layout.get(d.value, ())
        )
        fits: dict[int, bool] = {}

        def can_move(pod: Obj) -> bool:
            got = fits.get(id(pod))
            if got is None:
                got = fit_masks.fits_any_other(pod, below)
                fits[id(pod)] = got
            return got

        node_fit = self.args.topology_balance_node_fit
        i, j = 0, len(domains) - 1
        while i < j:
            if len(domains[j].pods) <= ideal:
                j -= 1
            skew = len(domains[j].pods) - len(domains[i].pods)
            if skew <= constraint.max_skew:
                i += 1
                continue
            above_avg = math.ceil(len(domains[j].pods) - ideal)
            below_avg = math.ceil(ideal - len(domains[i].pods))
            half_skew = math.ceil((skew - constraint.max_skew) / 2)
            move = min(above_avg, below_avg, half_skew)
            if move <= 0:
                i += 1
                continue
            giving = domains[j].pods
            giving.sort(key=can_move)  # stable: pods that fit no node below the average first
            cut = len(giving) - move
            moved = giving[cut:]
            for pod in moved:
                if node_fit and not can_move(pod):
                    continue
                chosen.setdefault(id(pod), pod)
            domains[j].pods = giving[:cut]
            domains[i].pods.extend(moved)


def _build(args: Any, handle: Handle) -> RemovePodsViolatingTopologySpreadConstraint:
    return RemovePodsViolatingTopologySpreadConstraint(args, handle)


SPECS: tuple[PluginSpec, ...] = (PluginSpec(NAME, frozenset((BALANCE,)), parse_args, _build),)
