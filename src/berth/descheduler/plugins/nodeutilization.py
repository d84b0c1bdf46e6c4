"""The descheduler's LowNodeUtilization and HighNodeUtilization balance plugins (upstream
``pkg/framework/plugins/nodeutilization``), on requested resources.

LowNodeUtilization evicts pods from overutilized nodes (some resource above ``targetThresholds``) while
underutilized nodes (every resource at or below ``thresholds``, and schedulable) have room for them, so
the scheduler can spread them; with ``useDeviationThresholds`` both thresholds are offsets from the average
usage. HighNodeUtilization evicts pods from underutilized nodes while the other schedulable nodes have room,
so the scheduler can pack them. Usage is what the pods request (``metricsUtilization`` — metrics-server or
Prometheus usage — is rejected: Berth has no metrics source).

Exactly as upstream: args, defaults and validation; the classification and the early returns ("no node is
underutilized", ``numberOfNodes``, "all nodes are underutilized", no overutilized / schedulable node); the
source nodes sorted by total usage (descending for Low, ascending for High; ties keep the nodes' order);
each node's evictable pods (the profile's ``filter``) ordered by priority, QoS class and the
``prefer-no-eviction`` annotation; and, per pod: the per-node ``evictionLimits``, a destination node whose
taints the pod tolerates, ``evictableNamespaces.exclude``, the profile's ``preEvictionFilter`` (NodeFit),
the eviction; then the node's usage and the destinations' total room shrink by the pod's requests (a pod for
``pods``) and the node stops when it is no longer above its target (Low) or when any resource of the total
room is used up. A node limit ends the node, the total limit the cycle.

Berth specifics, where upstream is undefined: Go iterates maps, so upstream's order of nodes with equal
usage and of pods that sort equal is random; here both keep the order of the cycle's nodes and of the
node's pods. A pod without ``spec.priority`` takes its ``priorityClassName``'s value when the class exists
(what admission would have set); with neither it has no priority and sorts first, as upstream's nil.
Resource names are taken as written (no pods threshold is added: upstream no longer does).

`node_utilization_fractions` (from `nodeutilization_usage`) gives the per-node requested/allocatable
fractions used by the dry-run report.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from berth.api.taints import Taint, Toleration, parse_taints, parse_tolerations
from berth.descheduler.args import ArgsReader, PolicyError, json_type_name
from berth.descheduler.framework import BALANCE, EvictOutcome, Handle, PluginSpec
from berth.descheduler.plugins.eviction_loop import evict_in_turn
from berth.descheduler.plugins.nodeutilization_usage import (
    BASIC_RESOURCES,
    UsageTable,
    cap_to_thresholds,
    deviation_thresholds,
    is_above,
    is_below,
    node_utilization_fractions,
    pod_eviction_order,
    sort_nodes_by_usage,
    usage_percentages,
    usage_table,
)

__all__ = [
    "EVICTION_MODE_ONLY_THRESHOLDING_RESOURCES",
    "HIGH_NODE_UTILIZATION",
    "LOW_NODE_UTILIZATION",
    "SPECS",
    "EvictableNamespaces",
    "EvictionLimits",
    "HighNodeUtilization",
    "HighNodeUtilizationArgs",
    "LowNodeUtilization",
    "LowNodeUtilizationArgs",
    "MetricsUtilization",
    "node_utilization_fractions",
    "parse_high_node_utilization_args",
    "parse_low_node_utilization_args",
]

Obj = dict[str, Any]
log = logging.getLogger(__name__)

LOW_NODE_UTILIZATION = "LowNodeUtilization"
HIGH_NODE_UTILIZATION = "HighNodeUtilization"
EVICTION_MODE_ONLY_THRESHOLDING_RESOURCES = "OnlyThresholdingResources"
_EVICTION_MODES = (EVICTION_MODE_ONLY_THRESHOLDING_RESOURCES,)
MIN_RESOURCE_PERCENTAGE = 0
MAX_RESOURCE_PERCENTAGE = 100
KUBERNETES_METRICS = "KubernetesMetrics"
PROMETHEUS_METRICS = "Prometheus"


# ---- args ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvictableNamespaces:
    """``evictableNamespaces``: namespaces whose pods are never evicted (``include`` is refused)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True)
class EvictionLimits:
    """``evictionLimits``: ``node`` caps the plugin's evictions per node in a cycle (None: no cap)."""

    node: int | None = None


@dataclass(frozen=True)
class MetricsUtilization:
    """``metricsUtilization`` as upstream reads it (only ever validated, then refused)."""

    metrics_server: bool = False
    source: str = ""
    prometheus_query: str | None = None
    """None when ``prometheus`` is absent."""


@dataclass(frozen=True)
class LowNodeUtilizationArgs:
    """LowNodeUtilization's args (upstream ``LowNodeUtilizationArgs``; percentages in 0-100)."""

    thresholds: Mapping[str, float]
    target_thresholds: Mapping[str, float]
    use_deviation_thresholds: bool = False
    number_of_nodes: int = 0
    evictable_namespaces: EvictableNamespaces | None = None
    eviction_limits: EvictionLimits | None = None


@dataclass(frozen=True)
class HighNodeUtilizationArgs:
    """HighNodeUtilization's args (upstream ``HighNodeUtilizationArgs``)."""

    thresholds: Mapping[str, float]
    number_of_nodes: int = 0
    eviction_modes: tuple[str, ...] = ()
    evictable_namespaces: EvictableNamespaces | None = None


def _fmt(value: float) -> str:
    """A percentage as Go's ``%v`` prints a float64 (``120``, ``20.5``)."""
    return str(int(value)) if value.is_integer() else repr(value)


def _read_thresholds(reader: ArgsReader, field: str) -> dict[str, float]:
    """A ResourceThresholds field: resource name -> percentage (a JSON number)."""
    raw = reader.value(field)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise reader.error(
            field, f"must be an object of resource names to percentages, not {json_type_name(raw)}"
        )
    out: dict[str, float] = {}
    for name, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise reader.error(f"{field}.{name}", f"must be a number, not {json_type_name(value)} {value!r}")
        out[str(name)] = float(value)
    return out


def _read_namespaces(reader: ArgsReader) -> EvictableNamespaces | None:
    if not reader.has("evictableNamespaces"):
        return None
    sub = reader.child("evictableNamespaces")
    namespaces = EvictableNamespaces(include=sub.strings("include"), exclude=sub.strings("exclude"))
    sub.finish()
    return namespaces


def _read_eviction_limits(reader: ArgsReader) -> EvictionLimits | None:
    if not reader.has("evictionLimits"):
        return None
    sub = reader.child("evictionLimits")
    limits = EvictionLimits(node=sub.integer("node", minimum=0))
    sub.finish()
    return limits


def _read_metrics(reader: ArgsReader) -> MetricsUtilization | None:
    if not reader.has("metricsUtilization"):
        return None
    sub = reader.child("metricsUtilization")
    server = sub.flag("metricsServer")
    source = sub.string("source")
    query: str | None = None
    if sub.has("prometheus"):
        prom = sub.child("prometheus")
        query = prom.string("query")
        prom.finish()
    sub.finish()
    return MetricsUtilization(metrics_server=server, source=source, prometheus_query=query)


def _validate_namespaces(reader: ArgsReader, namespaces: EvictableNamespaces | None) -> None:
    """Only ``exclude`` may be set (upstream: "only Exclude namespaces can be set, inclusion is not
    supported")."""
    if namespaces is not None and namespaces.include:
        raise reader.error(
            "evictableNamespaces.include",
            f"{list(namespaces.include)}: only Exclude namespaces can be set, inclusion is not supported",
        )


def _validate_thresholds(reader: ArgsReader, field: str, thresholds: Mapping[str, float]) -> None:
    """At least one resource, every percentage within 0-100 (upstream's ``validateThresholds``)."""
    if not thresholds:
        raise reader.error(field, "no resource threshold is configured")
    for name, percent in thresholds.items():
        if percent < MIN_RESOURCE_PERCENTAGE or percent > MAX_RESOURCE_PERCENTAGE:
            raise reader.error(
                f"{field}.{name}",
                f"{_fmt(percent)} is out of range {MIN_RESOURCE_PERCENTAGE}-{MAX_RESOURCE_PERCENTAGE}",
            )


def _validate_low_thresholds(reader: ArgsReader, args: LowNodeUtilizationArgs) -> None:
    """Upstream's ``validateLowNodeUtilizationThresholds``."""
    low, high = args.thresholds, args.target_thresholds
    _validate_thresholds(reader, "thresholds", low)
    _validate_thresholds(reader, "targetThresholds", high)
    different = (
        "thresholds and targetThresholds configured different resources "
        f"(thresholds: {', '.join(low)}; targetThresholds: {', '.join(high)})"
    )
    if len(low) != len(high):
        raise reader.error("targetThresholds", different)
    for name, value in low.items():
        target = high.get(name)
        if target is None:
            raise reader.error("targetThresholds", different)
        if value > target and not args.use_deviation_thresholds:
            raise reader.error(
                f"thresholds.{name}",
                f"{_fmt(value)} is greater than targetThresholds.{name} ({_fmt(target)})",
            )


def _validate_metrics(reader: ArgsReader, metrics: MetricsUtilization | None) -> None:
    """Upstream's checks of ``metricsUtilization``; a valid one is still refused (no metrics source)."""
    if metrics is None:
        return
    if metrics.source == KUBERNETES_METRICS and metrics.metrics_server:
        raise reader.error(
            "metricsUtilization",
            f'it is not allowed to set both "{KUBERNETES_METRICS}" source and metricsServer',
        )
    if metrics.source == KUBERNETES_METRICS and metrics.prometheus_query is not None:
        raise reader.error(
            "metricsUtilization.prometheus",
            f'prometheus configuration is not allowed to set when source is set to "{KUBERNETES_METRICS}"',
        )
    if metrics.source == PROMETHEUS_METRICS and not metrics.prometheus_query:
        raise reader.error(
            "metricsUtilization.prometheus.query",
            f'prometheus query is required when metrics source is set to "{PROMETHEUS_METRICS}"',
        )
    raise reader.error(
        "metricsUtilization",
        "Berth has no metrics source (metrics-server or Prometheus): node utilization is computed from "
        "requested resources only; remove metricsUtilization",
    )


def parse_low_node_utilization_args(reader: ArgsReader) -> LowNodeUtilizationArgs:
    """Read and validate LowNodeUtilization's args as upstream's ``ValidateLowNodeUtilizationArgs``."""
    use_deviation = reader.flag("useDeviationThresholds")
    thresholds = _read_thresholds(reader, "thresholds")
    targets = _read_thresholds(reader, "targetThresholds")
    number_of_nodes = reader.integer("numberOfNodes", 0)
    metrics = _read_metrics(reader)
    namespaces = _read_namespaces(reader)
    limits = _read_eviction_limits(reader)
    reader.finish()
    args = LowNodeUtilizationArgs(
        thresholds=MappingProxyType(thresholds),
        target_thresholds=MappingProxyType(targets),
        use_deviation_thresholds=use_deviation,
        number_of_nodes=number_of_nodes or 0,
        evictable_namespaces=namespaces,
        eviction_limits=limits,
    )
    _validate_namespaces(reader, namespaces)
    _validate_low_thresholds(reader, args)
    _validate_metrics(reader, metrics)
    return args


def parse_high_node_utilization_args(reader: ArgsReader) -> HighNodeUtilizationArgs:
    """Read and validate HighNodeUtilization's args as upstream's ``ValidateHighNodeUtilizationArgs``."""
    thresholds = _read_thresholds(reader, "thresholds")
    number_of_nodes = reader.integer("numberOfNodes", 0)
    modes = reader.strings("evictionModes")
    namespaces = _read_namespaces(reader)
    reader.finish()
    _validate_namespaces(reader, namespaces)
    _validate_thresholds(reader, "thresholds", thresholds)
    for i, mode in enumerate(modes):
        if mode not in _EVICTION_MODES:
            raise reader.error(
                f"evictionModes[{i}]",
                f"invalid eviction mode {mode} (known: {', '.join(_EVICTION_MODES)})",
            )
    return HighNodeUtilizationArgs(
        thresholds=MappingProxyType(thresholds),
        number_of_nodes=number_of_nodes or 0,
        eviction_modes=modes,
        evictable_namespaces=namespaces,
    )


# ---- eviction ------------------------------------------------------------------------------------------


def _with_basic_resources(names: Sequence[str]) -> list[str]:
    """The threshold resources plus cpu, memory and pods (upstream's ``uniquifyResourceNames``)."""
    return list(dict.fromkeys([*names, *BASIC_RESOURCES]))


def _unschedulable(nodes: Sequence[Obj]) -> np.ndarray[Any, np.dtype[np.bool_]]:
    return np.array([bool((n.get("spec") or {}).get("unschedulable")) for n in nodes], dtype=bool)


class _TaintCheck:
    """Upstream's ``PodToleratesTaints`` over the destination nodes: some destination has no more taints
    than the pod has tolerations, and the pod tolerates every one of them (whatever their effect)."""

    def __init__(self, taint_sets: Sequence[tuple[Taint, ...]]) -> None:
        self.sets = list(dict.fromkeys(taint_sets))
        self.any_untainted = any(not s for s in self.sets)
        self._cache: dict[str, bool] = {}

    def tolerates(self, pod: Obj) -> bool:
        if self.any_untainted:
            return True
        raw = (pod.get("spec") or {}).get("tolerations")
        key = json.dumps(raw, sort_keys=True)
        got = self._cache.get(key)
        if got is None:
            tolerations = parse_tolerations(raw)
            got = any(self._tolerates_all(tolerations, taints) for taints in self.sets)
            self._cache[key] = got
        return got

    @staticmethod
    def _tolerates_all(tolerations: Sequence[Toleration], taints: tuple[Taint, ...]) -> bool:
        if len(tolerations) < len(taints):
            return False
        return all(any(t.tolerates(taint) for t in tolerations) for taint in taints)


KeepGoing = Callable[[list[int], list[int], list[int]], bool]
"""``continueEvictionCond``: (node usage, node capped capacity, destinations' total room) -> go on?"""


def _total_room_left(total: list[int]) -> bool:
    return all(v > 0 for v in total)


def _low_keep_going(usage: list[int], available: list[int], total: list[int]) -> bool:
    """LowNodeUtilization: the node is still above its target and every resource has room left."""
    return any(u > a for u, a in zip(usage, available, strict=True)) and _total_room_left(total)


def _high_keep_going(usage: list[int], available: list[int], total: list[int]) -> bool:
    """HighNodeUtilization: every resource of the destinations still has room."""
    return _total_room_left(total)


@dataclass
class _Eviction:
    """One balance pass: the table, who moves where, and the rules of the plugin."""

    handle: Handle
    plugin: str
    table: UsageTable
    available: np.ndarray[Any, np.dtype[np.int64]]
    pod_filter: Callable[[Obj], bool]
    excluded_namespaces: frozenset[str]
    node_limit: int | None
    keep_going: KeepGoing

    def run(self, sources: Sequence[int], destinations: Sequence[int], nodes: Sequence[Obj]) -> None:
        """Upstream's ``evictPodsFromSourceNodes``."""
        dest = np.asarray(destinations, dtype=np.intp)
        total = (self.available[dest] - self.table.usage[dest]).sum(axis=0).tolist()
        taints = _TaintCheck([parse_taints((nodes[i].get("spec") or {}).get("taints")) for i in destinations])
        log.debug(
            "%s: total capacity to be moved %s",
            self.plugin,
            dict(zip(self.table.resources, total, strict=True)),
        )
        view = self.handle.view
        for i in sources:
            usage = self.table.usage[i].tolist()
            available = self.available[i].tolist()
            # upstream classifies the pods first and then checks this; the filter has no effect, so
            # checking first only saves the work when the node would stop at once
            if not self.keep_going(usage, available, total):
                continue
            removable = [p for p in self.table.pods[i] if self.pod_filter(p)]
            if not removable:
                log.debug("%s: no removable pods on node %s", self.plugin, self.table.names[i])
                continue
            outcome = self._evict_pods(pod_eviction_order(view, removable), usage, available, total, taints)
            if outcome is EvictOutcome.TOTAL_LIMIT:
                return

    def _evict_pods(
        self,
        pods: Sequence[Obj],
        usage: list[int],
        available: list[int],
        total: list[int],
        taints: _TaintCheck,
    ) -> EvictOutcome | None:
        """Upstream's ``evictPods`` for one source node; the limit outcome that ended it, if any."""
        view = self.handle.view
        evictor = self.handle.evictor
        resources = self.table.resources
        evicted = 0

        def movable() -> Iterator[Obj]:
            for pod in pods:
                if self.node_limit is not None and evicted >= self.node_limit:
                    return
                if not taints.tolerates(pod):
                    continue
                if str(pod["metadata"].get("namespace") or "") in self.excluded_namespaces:
                    continue
                if evictor.pre_eviction_filter(pod):
                    yield pod

        def moved(pod: Obj) -> bool:
            nonlocal evicted
            evicted += 1
            requests = view.requests(pod)
            for j, r in enumerate(resources):
                amount = 1 if r == "pods" else requests.get(r, 0)
                usage[j] -= amount
                total[j] -= amount
            return self.keep_going(usage, available, total)

        return evict_in_turn(evictor, self.plugin, movable(), on_evicted=moved)


def _excluded(namespaces: EvictableNamespaces | None) -> frozenset[str]:
    return frozenset(namespaces.exclude) if namespaces is not None else frozenset()


def _early_return(plugin: str, low: int, nodes: int, number_of_nodes: int) -> bool:
    """The checks both plugins make on the underutilized nodes before evicting anything."""
    if low == 0:
        log.debug("%s: no node is underutilized, nothing to do here", plugin)
        return True
    if low <= number_of_nodes:
        log.debug(
            "%s: %d underutilized nodes, numberOfNodes is %d: nothing to do", plugin, low, number_of_nodes
        )
        return True
    if low == nodes:
        log.debug("%s: all nodes are underutilized, nothing to do here", plugin)
        return True
    return False


class LowNodeUtilization:
    """Evicts pods from overutilized nodes while underutilized nodes can take them."""

    name = LOW_NODE_UTILIZATION

    def __init__(self, args: LowNodeUtilizationArgs, handle: Handle) -> None:
        """Build the plugin over the cycle's handle."""
        self.args = args
        self.handle = handle
        self.resource_names = list(args.thresholds)
        self.resources = _with_basic_resources(self.resource_names)

    def balance(self, nodes: Sequence[Obj]) -> None:
        """Classify `nodes` and move pods from the overutilized to the underutilized ones."""
        args = self.args
        table = usage_table(self.handle.view, nodes, self.resources)
        columns = {r: j for j, r in enumerate(table.resources)}
        pct = usage_percentages(table.usage, table.capacity, table.present)
        if args.use_deviation_thresholds:
            low, high = deviation_thresholds(
                pct, table.present, columns, args.thresholds, args.target_thresholds
            )
        else:
            low, high = dict(args.thresholds), dict(args.target_thresholds)
        under = ~_unschedulable(nodes) & is_below(pct, columns, low)
        over = ~under & is_above(pct, columns, high)
        low_rows = [int(i) for i in np.flatnonzero(under)]
        high_rows = [int(i) for i in np.flatnonzero(over)]
        log.debug(
            "%s: %d underutilized nodes (%s), %d overutilized nodes (%s)",
            self.name,
            len(low_rows),
            low,
            len(high_rows),
            high,
        )
        if _early_return(self.name, len(low_rows), len(nodes), args.number_of_nodes):
            return
        if not high_rows:
            log.debug("%s: all nodes are under target utilization, nothing to do here", self.name)
            return
        limits = args.eviction_limits
        _Eviction(
            handle=self.handle,
            plugin=self.name,
            table=table,
            available=cap_to_thresholds(table.capacity, table.present, table.resources, high),
            pod_filter=self.handle.evictor.filter,
            excluded_namespaces=_excluded(args.evictable_namespaces),
            node_limit=limits.node if limits is not None else None,
            keep_going=_low_keep_going,
        ).run(sort_nodes_by_usage(high_rows, table.usage, ascending=False), low_rows, nodes)


def _requests_any(names: Sequence[str]) -> Callable[[Obj], bool]:
    """Upstream's ``withResourceRequestForAny``: some container or init container states a request for
    one of `names` (even a zero one)."""
    wanted = frozenset(names)

    def check(pod: Obj) -> bool:
        spec = pod.get("spec") or {}
        for c in (*(spec.get("containers") or ()), *(spec.get("initContainers") or ())):
            requests = (c.get("resources") or {}).get("requests") or {}
            if any(name in wanted for name in requests):
                return True
        return False

    return check


class HighNodeUtilization:
    """Evicts pods from underutilized nodes while the other schedulable nodes can take them."""

    name = HIGH_NODE_UTILIZATION

    def __init__(self, args: HighNodeUtilizationArgs, handle: Handle) -> None:
        """Build the plugin over the cycle's handle."""
        self.args = args
        self.handle = handle
        self.resource_names = list(args.thresholds)
        self.resources = _with_basic_resources(self.resource_names)
        self.high_thresholds = {r: float(MAX_RESOURCE_PERCENTAGE) for r in args.thresholds}
        evictor_filter = handle.evictor.filter
        if EVICTION_MODE_ONLY_THRESHOLDING_RESOURCES in args.eviction_modes:
            requests_any = _requests_any(self.resource_names)

            def pod_filter(pod: Obj) -> bool:
                return evictor_filter(pod) and requests_any(pod)

            self.pod_filter: Callable[[Obj], bool] = pod_filter
        else:
            self.pod_filter = evictor_filter

    def balance(self, nodes: Sequence[Obj]) -> None:
        """Classify `nodes` and move pods off the underutilized ones."""
        args = self.args
        table = usage_table(self.handle.view, nodes, self.resources)
        columns = {r: j for j, r in enumerate(table.resources)}
        pct = usage_percentages(table.usage, table.capacity, table.present)
        under = is_below(pct, columns, args.thresholds)
        schedulable = ~under & ~_unschedulable(nodes)
        low_rows = [int(i) for i in np.flatnonzero(under)]
        dest_rows = [int(i) for i in np.flatnonzero(schedulable)]
        log.debug(
            "%s: %d underutilized nodes (%s), %d schedulable nodes",
            self.name,
            len(low_rows),
            dict(args.thresholds),
            len(dest_rows),
        )
        if _early_return(self.name, len(low_rows), len(nodes), args.number_of_nodes):
            return
        if not dest_rows:
            log.debug("%s: no node is available to schedule the pods, nothing to do here", self.name)
            return
        _Eviction(
            handle=self.handle,
            plugin=self.name,
            table=table,
            available=cap_to_thresholds(table.capacity, table.present, table.resources, self.high_thresholds),
            pod_filter=self.pod_filter,
            excluded_namespaces=_excluded(args.evictable_namespaces),
            node_limit=None,
            keep_going=_high_keep_going,
        ).run(sort_nodes_by_usage(low_rows, table.usage, ascending=True), dest_rows, nodes)


def _build_low(args: Any, handle: Handle) -> LowNodeUtilization:
    if not isinstance(args, LowNodeUtilizationArgs):
        raise PolicyError(f"{LOW_NODE_UTILIZATION}: want LowNodeUtilizationArgs, got {type(args).__name__}")
    return LowNodeUtilization(args, handle)


def _build_high(args: Any, handle: Handle) -> HighNodeUtilization:
    if not isinstance(args, HighNodeUtilizationArgs):
        raise PolicyError(f"{HIGH_NODE_UTILIZATION}: want HighNodeUtilizationArgs, got {type(args).__name__}")
    return HighNodeUtilization(args, handle)


SPECS: tuple[PluginSpec, ...] = (
    PluginSpec(LOW_NODE_UTILIZATION, frozenset({BALANCE}), parse_low_node_utilization_args, _build_low),
    PluginSpec(HIGH_NODE_UTILIZATION, frozenset({BALANCE}), parse_high_node_utilization_args, _build_high),
)
"""The two plugins, registered for the balance extension point."""
