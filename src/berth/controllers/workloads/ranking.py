"""Which pods a ReplicaSet deletes first when it scales down (kube's ActivePodsWithRanks order).

1. unassigned before assigned; 2. Pending < Unknown < Running; 3. not ready before ready; 4. lower
``controller.kubernetes.io/pod-deletion-cost`` first; 5. pods doubled up on a node (more related active pods
on the same node) first; 6. ready for less time first (log2-bucketed, LogarithmicScaleDown); 7. more container
restarts first; 8. newer first (log2-bucketed creation time); equal buckets break ties by uid.
Pods equal under every rule keep their input order (Go's sort.Sort is not stable; Berth's is).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cmp_to_key
from typing import Any

from berth.api.conditions import is_pod_ready
from berth.controllers.workloads.common import (
    DELETION_COST,
    is_pod_active,
    parse_time,
    ready_since,
)

__all__ = ["pods_to_delete"]

Obj = Mapping[str, Any]

_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def _deletion_cost(pod: Obj) -> int:
    raw = (pod["metadata"].get("annotations") or {}).get(DELETION_COST)
    if raw is None:
        return 0
    try:
        v = int(str(raw))
    except ValueError:
        return 0
    return v if -(1 << 31) <= v < (1 << 31) else 0


def _max_restarts(pod: Obj) -> tuple[int, int]:
    status = pod.get("status") or {}
    regular = max((int(c.get("restartCount", 0)) for c in status.get("containerStatuses") or ()), default=0)
    sidecars = {
        c.get("name")
        for c in (pod.get("spec") or {}).get("initContainers") or ()
        if c.get("restartPolicy") == "Always"
    }
    sidecar = max(
        (
            int(c.get("restartCount", 0))
            for c in status.get("initContainerStatuses") or ()
            if c.get("name") in sidecars
        ),
        default=0,
    )
    return regular, sidecar


def _log_rank(t: float, now: float) -> int:
    d = round((now - t) * 1e9)  # a Go time.Duration: nanoseconds
    return int(math.log2(d)) if d > 0 else -1


def _by_time(ti: float | None, tj: float | None, ui: str, uj: str, now: float) -> int:
    """-1 when i goes first, 1 when j does, for timestamps that differ (newer/zero first)."""
    if ti is None or tj is None:
        return -1 if ti is None else 1  # afterOrZero: the zero time first
    diff = _log_rank(ti, now) - _log_rank(tj, now)
    if diff == 0:
        return -1 if ui < uj else 1
    return -1 if diff < 0 else 1


class _Ranked:
    __slots__ = ("cost", "created", "node", "phase", "pod", "rank", "ready", "ready_at", "restarts", "uid")

    def __init__(self, pod: Obj, rank: int) -> None:
        self.pod = pod
        self.rank = rank
        self.node = (pod.get("spec") or {}).get("nodeName") or ""
        self.phase = _PHASE_ORDINAL.get((pod.get("status") or {}).get("phase") or "", 0)
        self.ready = is_pod_ready(pod)
        self.ready_at = ready_since(pod) if self.ready else None
        self.cost = _deletion_cost(pod)
        self.restarts = _max_restarts(pod)
        self.created = parse_time(pod["metadata"].get("creationTimestamp"))
        self.uid = str(pod["metadata"].get("uid", ""))


def _compare(a: _Ranked, b: _Ranked, now: float) -> int:
    if a.node != b.node and (not a.node or not b.node):
        return -1 if not a.node else 1
    if a.phase != b.phase:
        return -1 if a.phase < b.phase else 1
    if a.ready != b.ready:
        return -1 if not a.ready else 1
    if a.cost != b.cost:
        return -1 if a.cost < b.cost else 1
    if a.rank != b.rank:
        return -1 if a.rank > b.rank else 1
    if a.ready and b.ready and a.ready_at != b.ready_at:
        return _by_time(a.ready_at, b.ready_at, a.uid, b.uid, now)
    if a.restarts[0] != b.restarts[0]:
        return -1 if a.restarts[0] > b.restarts[0] else 1
    if a.restarts[1] != b.restarts[1]:
        return -1 if a.restarts[1] > b.restarts[1] else 1
    if a.created != b.created:
        return _by_time(a.created, b.created, a.uid, b.uid, now)
    return 0


def pods_to_delete(active: Sequence[Obj], related: Sequence[Obj], count: int, now: float) -> list[Obj]:
    """The `count` pods of `active` to delete first; `related` are the pods of every ReplicaSet of the same
    owner (they decide how "doubled up" a node is); `now` is seconds since the Unix epoch."""
    if count >= len(active):
        return list(active[:count])
    on_node: dict[str, int] = {}
    for p in related:
        if is_pod_active(p):
            node = (p.get("spec") or {}).get("nodeName") or ""
            on_node[node] = on_node.get(node, 0) + 1
    ranked = [_Ranked(p, on_node.get((p.get("spec") or {}).get("nodeName") or "", 0)) for p in active]
    ranked.sort(key=cmp_to_key(lambda a, b: _compare(a, b, now)))
    return [r.pod for r in ranked[:count]]
