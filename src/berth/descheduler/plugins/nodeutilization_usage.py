"""Node usage for the descheduler's node-utilization plugins (upstream ``nodeutilization``'s requested-usage
client, ``normalizer`` and ``classifier``), computed over all nodes at once.

Upstream keeps one map of quantities per node; here a cycle's usage is a `UsageTable`: one row per node,
one column per resource, holding what the node's pods request (``pods`` = how many pods it runs; pods that
Succeeded or Failed count for nothing, as upstream's ``ListPodsOnANode``) and its capacity (``allocatable``
when the node has any, else ``capacity``, as ``referencedResourceListForNodeCapacity``). Percentages,
deviation thresholds, the under/over classification and the capping of capacities to a threshold are numpy
expressions over those columns that perform the same float64 operations as upstream, so the answers agree
to the bit. `node_utilization_fractions` is the same arithmetic for reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from berth.api.errors import InvalidObjectError, QuantityError
from berth.api.quantity import resource_amount
from berth.descheduler.plugins.podselection import (
    PREFER_NO_EVICTION,
    pod_qos,
    sort_by_priority_low_to_high,
)
from berth.descheduler.view import ClusterView, pod_phase

__all__ = [
    "BASIC_RESOURCES",
    "METRIC_RESOURCE",
    "NO_EVICTION_ANNOTATION",
    "UsageTable",
    "active_pods",
    "cap_to_thresholds",
    "deviation_thresholds",
    "is_above",
    "is_below",
    "node_capacity",
    "node_utilization_fractions",
    "pod_eviction_order",
    "pod_qos",
    "sort_nodes_by_usage",
    "usage_percentages",
    "usage_table",
]

Obj = dict[str, Any]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

BASIC_RESOURCES = ("cpu", "memory", "pods")
METRIC_RESOURCE = "MetricResource"
"""Upstream's pseudo resource for a metric query's value; every node has a capacity of 100 for it."""
NO_EVICTION_ANNOTATION = PREFER_NO_EVICTION
_TERMINAL_PHASES = frozenset(("Succeeded", "Failed"))


def node_capacity(node: Mapping[str, Any]) -> dict[str, int]:
    """The node's ``status.allocatable`` (its ``status.capacity`` when allocatable is empty), cpu in
    milli-units and everything else in whole units, plus ``MetricResource: 100``."""
    status = node.get("status") or {}
    part = "allocatable" if status.get("allocatable") else "capacity"
    out: dict[str, int] = {}
    for name, value in (status.get(part) or {}).items():
        try:
            out[str(name)] = resource_amount(str(name), value)
        except (QuantityError, TypeError):
            raise InvalidObjectError(
                "Node",
                str(node["metadata"]["name"]),
                f"status.{part}.{name}",
                value,
                f'invalid quantity "{value}"',
            ) from None
    out[METRIC_RESOURCE] = 100
    return out


def active_pods(view: ClusterView, node_name: str) -> list[Obj]:
    """The pods assigned to the node that occupy resources (phase neither Succeeded nor Failed)."""
    return [p for p in view.pods_on(node_name) if pod_phase(p) not in _TERMINAL_PHASES]


@dataclass
class UsageTable:
    """Requested resources and capacities of some nodes: rows are nodes, columns `resources`."""

    names: list[str]
    """The nodes' names, one per row."""
    resources: list[str]
    """The resources, one per column."""
    usage: IntArray
    """What the node's active pods request (cpu in milli-units; ``pods``: how many)."""
    capacity: IntArray
    """The node's capacity (0 where it has none)."""
    present: BoolArray
    """Whether the node lists the resource at all (a listed zero counts as present)."""
    pods: list[list[Obj]]
    """Each node's active pods, in the view's order."""

    def column(self, resource: str) -> int:
        """The column of a resource."""
        return self.resources.index(resource)


def usage_table(
    view: ClusterView, nodes: Sequence[Mapping[str, Any]], resources: Sequence[str]
) -> UsageTable:
    """The usage and capacity of `nodes` for `resources` (upstream's requested usage client)."""
    names = [str(n["metadata"]["name"]) for n in nodes]
    cols = {r: j for j, r in enumerate(resources)}
    n, k = len(names), len(cols)
    flat_usage = [0] * (n * k)
    flat_cap = [0] * (n * k)
    flat_present = [False] * (n * k)
    pods_col = cols.get("pods")
    all_pods: list[list[Obj]] = []
    for i, (name, node) in enumerate(zip(names, nodes, strict=True)):
        base = i * k
        for r, v in node_capacity(node).items():
            j = cols.get(r)
            if j is not None:
                flat_cap[base + j] = v
                flat_present[base + j] = True
        on = active_pods(view, name)
        all_pods.append(on)
        for p in on:
            for r, v in view.requests(p).items():
                j = cols.get(r)
                if j is not None and j != pods_col:
                    flat_usage[base + j] += v
        if pods_col is not None:
            flat_usage[base + pods_col] = len(on)
    return UsageTable(
        names=names,
        resources=list(cols),
        usage=np.array(flat_usage, dtype=np.int64).reshape(n, k),
        capacity=np.array(flat_cap, dtype=np.int64).reshape(n, k),
        present=np.array(flat_present, dtype=bool).reshape(n, k),
        pods=all_pods,
    )


def usage_percentages(usage: IntArray, capacity: IntArray, present: BoolArray) -> FloatArray:
    """Usage as a percentage of capacity (upstream's ``ResourceUsageToResourceThreshold``): 0 where the
    capacity is 0 or the node does not list the resource."""
    used = usage.astype(np.float64)
    cap = capacity.astype(np.float64)
    pct = np.zeros(usage.shape, dtype=np.float64)
    ok = present & (capacity > 0)
    np.divide(used, cap, out=pct, where=ok)
    pct *= 100.0
    return pct


def deviation_thresholds(
    pct: FloatArray,
    present: BoolArray,
    columns: Mapping[str, int],
    low: Mapping[str, float],
    high: Mapping[str, float],
) -> tuple[dict[str, float], dict[str, float]]:
    """Thresholds taken as deviations from the average usage: for each resource of `low` (at `columns`)
    that some node lists, ``clamp(average - low, 0, 100)`` and ``clamp(average + high, 0, 100)``, the
    average being over the nodes that list it. A resource no node lists has no threshold."""
    lower: dict[str, float] = {}
    higher: dict[str, float] = {}
    for r in low:
        j = columns[r]
        mask = present[:, j]
        count = int(mask.sum())
        if count == 0:
            continue
        total = 0.0
        for v in pct[mask, j].tolist():
            total += v
        average = total / count
        lower[r] = min(max(average + -low[r], 0.0), 100.0)
        higher[r] = min(max(average + high[r], 0.0), 100.0)
    return lower, higher


def is_below(pct: FloatArray, columns: Mapping[str, int], thresholds: Mapping[str, float]) -> BoolArray:
    """Nodes whose usage is at or below every threshold (upstream's ``isNodeBelowThreshold``)."""
    out = np.ones(pct.shape[0], dtype=bool)
    for r, t in thresholds.items():
        out &= ~(t < pct[:, columns[r]])
    return out


def is_above(pct: FloatArray, columns: Mapping[str, int], thresholds: Mapping[str, float]) -> BoolArray:
    """Nodes whose usage is above at least one threshold (upstream's ``isNodeAboveThreshold``)."""
    out = np.zeros(pct.shape[0], dtype=bool)
    for r, t in thresholds.items():
        out |= t < pct[:, columns[r]]
    return out


def cap_to_thresholds(
    capacity: IntArray, present: BoolArray, resources: Sequence[str], thresholds: Mapping[str, float]
) -> IntArray:
    """Capacities capped to percentage thresholds (upstream's ``capNodeCapacitiesToThreshold``): 0 where the
    node does not list the resource, the full capacity where no threshold is set, else
    ``int64(threshold * 0.01 * capacity)``."""
    out = np.where(present, capacity, 0).astype(np.int64)
    cap = capacity.astype(np.float64)
    for j, r in enumerate(resources):
        t = thresholds.get(r)
        if t is None:
            continue
        capped = np.trunc((t * 0.01) * cap[:, j]).astype(np.int64)
        out[:, j] = np.where(present[:, j], capped, 0)
    return out


def sort_nodes_by_usage(rows: Sequence[int], usage: IntArray, *, ascending: bool) -> list[int]:
    """`rows` ordered by the sum of their usage over all columns (upstream's ``sortNodesByUsage``:
    cpu in milli-units plus every other value); ties keep their order."""
    if not rows:
        return []
    idx = np.asarray(rows, dtype=np.intp)
    totals = usage[idx].sum(axis=1)
    order = np.argsort(totals if ascending else -totals, kind="stable")
    return [int(i) for i in idx[order]]


def pod_eviction_order(view: ClusterView, pods: Sequence[Obj]) -> list[Obj]:
    """Pods in upstream's ``SortPodsBasedOnPriorityLowToHigh`` order (`sort_by_priority_low_to_high`), a pod
    without ``spec.priority`` taking its priority class's value when the class exists."""
    return sort_by_priority_low_to_high(pods, view.declared_priority)


def node_utilization_fractions(view: ClusterView, resources: Sequence[str]) -> dict[str, dict[str, float]]:
    """For every node of the view, the fraction of its capacity (allocatable, as the node-utilization
    plugins read it) that its active pods request, per resource (``pods``: pods running / allowed); 0.0
    where the node has none of the resource."""
    table = usage_table(view, view.all_nodes, list(dict.fromkeys(resources)))
    fraction = np.zeros(table.usage.shape, dtype=np.float64)
    ok = table.present & (table.capacity > 0)
    np.divide(table.usage.astype(np.float64), table.capacity.astype(np.float64), out=fraction, where=ok)
    rows = cast(list[list[float]], fraction.tolist())
    return {
        name: dict(zip(table.resources, row, strict=True))
        for name, row in zip(table.names, rows, strict=True)
    }
