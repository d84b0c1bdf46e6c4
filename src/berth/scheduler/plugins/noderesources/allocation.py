"""Per-resource (requested, allocatable) pairs as kube's resource_allocation.go computes them for scoring."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from berth.scheduler.framework import NodeInfo, NodeTable, PodInfo
from berth.scheduler.framework.nodetable import IntArray
from berth.scheduler.plugins.helpers import is_scalar_resource
from berth.scheduler.plugins.noderesources.args import ResourceSpec

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"


def pod_request_list(pod: PodInfo, resources: Sequence[ResourceSpec], use_requested: bool) -> tuple[int, ...]:
    """The pod's request per scored resource; cpu/memory use the non-zero defaults unless ``use_requested``."""
    out = []
    for r in resources:
        if not use_requested and r.name == CPU:
            out.append(pod.nonzero_cpu)
        elif not use_requested and r.name == MEMORY:
            out.append(pod.nonzero_memory)
        else:
            out.append(pod.requests.get(r.name, 0))
    return tuple(out)


def _scored(name: str, pod_request: int) -> bool:
    """Whether the resource takes part at all (scalar resources the pod doesn't request are bypassed)."""
    if name in (CPU, MEMORY, EPHEMERAL_STORAGE):
        return True
    return pod_request != 0 and is_scalar_resource(name)


def node_pairs(
    node: NodeInfo, resources: Sequence[ResourceSpec], pod_requests: Sequence[int], use_requested: bool
) -> tuple[list[int], list[int]]:
    """Per-node (requested, allocatable) lists; a resource with zero allocatable reads (0, 0)."""
    requested: list[int] = []
    allocatable: list[int] = []
    for r, preq in zip(resources, pod_requests, strict=True):
        name = r.name
        alloc = node.allocatable(name) if _scored(name, preq) else 0
        if alloc == 0:
            requested.append(0)
            allocatable.append(0)
            continue
        if not use_requested and name == CPU:
            used = node.nonzero_cpu
        elif not use_requested and name == MEMORY:
            used = node.nonzero_memory
        else:
            used = node.requested(name)
        requested.append(used + preq)
        allocatable.append(alloc)
    return requested, allocatable


# where a row's requested amount of a resource is read: the table's requested column of that name, or the
# non-zero cpu / memory columns (kube's defaults for pods that request none)
REQUESTED, NONZERO_CPU, NONZERO_MEMORY = 0, 1, 2

# per resource taking part in a pod's score: (name, where its requested amount is read, the pod's request,
# the resource's weight)
RowPlan = tuple[tuple[str, int, int, int], ...]


def row_plan(resources: Sequence[ResourceSpec], pod_requests: Sequence[int], use_requested: bool) -> RowPlan:
    """What :func:`plan_pairs` reads for a pod requesting ``pod_requests``: the resources that take part."""
    plan = []
    for r, preq in zip(resources, pod_requests, strict=True):
        name = r.name
        if not _scored(name, preq):
            continue
        source = REQUESTED
        if not use_requested and name == CPU:
            source = NONZERO_CPU
        elif not use_requested and name == MEMORY:
            source = NONZERO_MEMORY
        plan.append((name, source, preq, r.weight))
    return tuple(plan)


def plan_pairs(table: NodeTable, row: int, plan: RowPlan) -> tuple[list[int], list[int], list[int]]:
    """:func:`node_pairs` of one table row, read straight from the columns, without the resources a scorer skips (bypassed for the pod, or zero
    allocatable on the row), plus their weights."""
    requested: list[int] = []
    allocatable: list[int] = []
    weights: list[int] = []
    for name, source, preq, weight in plan:
        col = table.allocatable.get(name)
        if col is None:
            continue
        alloc = col.item(row)
        if alloc == 0:
            continue
        if source == NONZERO_CPU:
            used = table.nonzero_cpu.item(row)
        elif source == NONZERO_MEMORY:
            used = table.nonzero_memory.item(row)
        else:
            used_col = table.requested.get(name)
            used = 0 if used_col is None else used_col.item(row)
        requested.append(used + preq)
        allocatable.append(alloc)
        weights.append(weight)
    return requested, allocatable, weights


def table_pairs(
    table: NodeTable,
    idx: IntArray,
    resources: Sequence[ResourceSpec],
    pod_requests: Sequence[int],
    use_requested: bool,
) -> tuple[list[IntArray], list[IntArray], list[int]]:
    """Batched form of :func:`node_pairs` over rows ``idx``: requested and allocatable arrays plus the weights.

    Resources bypassed for this pod are left out altogether (they would read zero allocatable on every row).
    """
    requested: list[IntArray] = []
    allocatable: list[IntArray] = []
    weights: list[int] = []
    n = table.size
    for r, preq in zip(resources, pod_requests, strict=True):
        name = r.name
        if not _scored(name, preq):
            continue
        col = table.allocatable.get(name)
        if col is None:
            continue
        alloc = col[:n][idx]
        if not use_requested and name == CPU:
            used = table.nonzero_cpu[:n][idx]
        elif not use_requested and name == MEMORY:
            used = table.nonzero_memory[:n][idx]
        else:
            used = table.requested[name][:n][idx]
        requested.append(used + preq)  # rows with zero allocatable are skipped by the scorers
        allocatable.append(alloc)
        weights.append(r.weight)
    return requested, allocatable, weights


def empty_scores(idx: IntArray) -> IntArray:
    """Zero scores for rows ``idx``."""
    return np.zeros(len(idx), dtype=np.int64)
