"""NodePreferAvoidPods: kube's former score plugin reading the node annotation
``scheduler.alpha.kubernetes.io/preferAvoidPods``.

For a pod whose controller (the ownerReference with ``controller: true``) is a ReplicationController or a
ReplicaSet, a node whose avoid list names that controller (same kind and uid) scores 0 and every other node
100; any other pod scores 100 everywhere. Berth's eviction API writes entries with an ``evictionTime`` that
expire after an hour (`AVOID_TTL_SECONDS`); expired entries are ignored. A malformed annotation avoids
nothing, as in kube. Default weight 10000, so the avoidance outweighs every other score.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from berth.api.timestamps import unix_seconds
from berth.scheduler.framework import CycleState, Handle, NodeInfo, NodeTable, PodInfo, Registry
from berth.scheduler.framework.nodetable import IntArray

NAME = "NodePreferAvoidPods"
ANNOTATION = "scheduler.alpha.kubernetes.io/preferAvoidPods"
AVOID_TTL_SECONDS = 3600.0
"""Entries with an evictionTime older than this are ignored (the eviction API's lifetime for them)."""
MAX_SCORE = 100
_AVOIDED_KINDS = ("ReplicationController", "ReplicaSet")

# one avoid entry: (controller kind, controller uid, eviction time as Unix seconds or None = never expires)
AvoidEntry = tuple[str, str, float | None]


def parse_avoid_pods(node: Mapping[str, Any]) -> tuple[AvoidEntry, ...]:
    """The node's avoid entries (v1helper.GetAvoidPodsFromNodeAnnotations); () when absent or malformed."""
    raw = ((node.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
    if not raw:
        return ()
    try:
        doc = json.loads(raw)
    except ValueError:
        return ()
    if not isinstance(doc, Mapping):
        return ()
    out: list[AvoidEntry] = []
    for entry in doc.get("preferAvoidPods") or ():
        if not isinstance(entry, Mapping):
            continue
        controller = (entry.get("podSignature") or {}).get("podController") or {}
        if not isinstance(controller, Mapping):
            continue
        out.append(
            (
                str(controller.get("kind") or ""),
                str(controller.get("uid") or ""),
                unix_seconds(entry.get("evictionTime")),
            )
        )
    return tuple(out)


def avoided_controller(pod: PodInfo) -> tuple[str, str] | None:
    """(kind, uid) of the pod's ReplicationController/ReplicaSet controller, or None."""
    for ref in pod.obj.get("metadata", {}).get("ownerReferences") or ():
        if ref.get("controller"):
            kind = ref.get("kind")
            if kind in _AVOIDED_KINDS:
                return str(kind), str(ref.get("uid") or "")
            return None
    return None


def _active(entry: AvoidEntry, controller: tuple[str, str], now: float) -> bool:
    kind, uid, when = entry
    if kind != controller[0] or uid != controller[1]:
        return False
    return when is None or now - when < AVOID_TTL_SECONDS


class _Index:
    """Per NodeTable version: controller uid → [(row, entry)] for the nodes carrying avoid entries."""

    __slots__ = ("by_uid", "node_version", "table_id")

    def __init__(self, table: NodeTable) -> None:
        self.table_id = id(table)
        self.node_version = table.node_version
        self.by_uid: dict[str, list[tuple[int, AvoidEntry]]] = {}
        for row in range(table.size):
            for entry in parse_avoid_pods(table.nodes[row]):
                self.by_uid.setdefault(entry[1], []).append((row, entry))


class NodePreferAvoidPods:
    """Score: 0 on nodes asking to avoid the pod's controller, 100 elsewhere (no normalisation)."""

    name = NAME

    def __init__(self, now: Callable[[], float]) -> None:
        """`now` returns the current time as Unix seconds (to expire entries)."""
        self._now = now
        self._index: _Index | None = None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """Per-node form."""
        controller = avoided_controller(pod)
        if controller is None:
            return MAX_SCORE
        entries = parse_avoid_pods(node.node)
        if not entries:
            return MAX_SCORE
        now = self._now()
        return 0 if any(_active(e, controller, now) for e in entries) else MAX_SCORE

    def uniform_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> bool:
        """The pod has no controller, or no node avoids any: every node scores 100."""
        return avoided_controller(pod) is None or not self._indexed(table).by_uid

    def _indexed(self, table: NodeTable) -> _Index:
        index = self._index
        if index is None or index.table_id != id(table) or index.node_version != table.node_version:
            index = self._index = _Index(table)
        return index

    def score_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: IntArray) -> IntArray:
        """Batched form over rows ``idx`` (avoid lists are parsed once per node-table version)."""
        out: IntArray = np.full(len(idx), MAX_SCORE, dtype=np.int64)
        controller = avoided_controller(pod)
        if controller is None:
            return out
        hits = self._indexed(table).by_uid.get(controller[1])
        if not hits:
            return out
        now = self._now()
        rows = [row for row, entry in hits if _active(entry, controller, now)]
        if rows:
            out[np.isin(idx, np.asarray(rows, dtype=np.int64))] = 0
        return out


def _clock_reader(handle: Handle) -> Callable[[], float]:
    """Unix seconds now, by the cluster's clock (the store's timestamps)."""

    def now() -> float:
        stamp = handle.client.timestamp()
        parsed = unix_seconds(stamp)
        if parsed is None:
            raise ValueError(f"the store's timestamp {stamp!r} is not RFC 3339")
        return parsed

    return now


def new(args: Mapping[str, Any], handle: Handle) -> NodePreferAvoidPods:
    """Factory (the plugin takes no args)."""
    return NodePreferAvoidPods(_clock_reader(handle))


def register(registry: Registry) -> None:
    """Add NodePreferAvoidPods to ``registry``."""
    registry.register(NAME, new)


__all__ = [
    "ANNOTATION",
    "AVOID_TTL_SECONDS",
    "NAME",
    "NodePreferAvoidPods",
    "avoided_controller",
    "new",
    "parse_avoid_pods",
    "register",
]
