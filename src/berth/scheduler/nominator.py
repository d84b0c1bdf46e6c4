"""The nominator: pods nominated to nodes by a preemption and not bound yet (kube's nominator).

A nominated pod holds room on its node: the scheduling cycle adds the pods nominated with equal or higher
priority than the pod being scheduled to their nodes' load (``Nominator.overlay_for``) before filtering,
and the what-if filters of preemption count them node by node. As kube's
``RunFilterPluginsWithNominatedPods``, they count in Filter only: ``withdraw_nominated`` takes them off the
table before Score, which sees the nodes as they are.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from berth.scheduler.framework.cycle_state import CycleState, Overlay
from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.framework.podinfo import PodInfo

# CycleState key: True while the cycle's nominated-pod overlay is applied to the node table
OVERLAY_APPLIED_KEY = "berth/overlay-applied"
# CycleState key: the cycle's overlays that hold nominated pods (``add_nominated``)
NOMINATED_OVERLAYS_KEY = "berth/nominated-overlays"


def add_nominated(state: CycleState, overlays: list[Overlay]) -> None:
    """Add the nominated pods' ``overlays`` (from ``Nominator.overlay_for``) to the cycle's overlays and
    remember them, so that ``withdraw_nominated`` can take them off again."""
    if overlays:
        state.overlay.extend(overlays)
        state.write(NOMINATED_OVERLAYS_KEY, tuple(overlays))


def withdraw_nominated(state: CycleState, table: NodeTable) -> None:
    """Take the nominated pods' overlays off ``table`` (when applied) and out of the cycle: kube's Score
    plugins see the nodes without the pods nominated to them. The cycle's other overlays (a reservation's
    room shown to its owner) stay."""
    nominated: tuple[Overlay, ...] = state.get(NOMINATED_OVERLAYS_KEY) or ()
    if not nominated:
        return
    state.delete(NOMINATED_OVERLAYS_KEY)
    serials = {ov.serial for ov in nominated}
    state.overlay[:] = [ov for ov in state.overlay if ov.serial not in serials]
    if state.get(OVERLAY_APPLIED_KEY):
        table.apply_overlay(list(nominated), -1)
        state.write(OVERLAY_APPLIED_KEY, False)


class Nominator:
    """Pods nominated to nodes (status.nominatedNodeName) and not bound yet, as kube's nominator keeps them."""

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}
        self._version = 0
        self._cached: dict[tuple[int, int, int], Overlay | None] = {}

    @property
    def version(self) -> int:
        """Changes with every nomination change."""
        return self._version

    def set(self, pod: PodInfo, node: str) -> None:
        """Record (or with ``node`` "" forget) the nomination of ``pod``."""
        if node and self._node_of.get(pod.uid) == node:
            known = self._by_node[node][pod.uid]
            if (known.priority, known.requests, known.host_ports, known.labels) == (
                pod.priority,
                pod.requests,
                pod.host_ports,
                pod.labels,
            ):
                self._by_node[node][pod.uid] = pod  # the same nomination: nothing nominated changes
                return
        self._version += 1
        self._cached.clear()
        old = self._node_of.pop(pod.uid, None)
        if old is not None:
            pods = self._by_node.get(old)
            if pods is not None:
                pods.pop(pod.uid, None)
                if not pods:
                    del self._by_node[old]
        if node:
            self._node_of[pod.uid] = node
            self._by_node.setdefault(node, {})[pod.uid] = pod

    def node_of(self, uid: str) -> str:
        """The node ``uid`` is nominated to ("" if none)."""
        return self._node_of.get(uid, "")

    def on_node(self, node: str) -> Iterable[PodInfo]:
        """Pods nominated to ``node``."""
        return self._by_node.get(node, {}).values()

    def __bool__(self) -> bool:
        return bool(self._node_of)

    def overlay_for(
        self, pod: PodInfo, table: NodeTable, skip: Iterable[str] = (), node: str | None = None
    ) -> list[Overlay]:
        """Requests of pods nominated with equal or higher priority than ``pod`` (not ``pod`` itself), as
        extra load on their nodes (only ``node``'s when given): the overlays to apply, in order."""
        if node is not None or skip:
            out = self._build_overlay(pod, table, skip, node)
            return [] if out is None else [out]
        key = (self._version, pod.priority, table.layout)
        if key in self._cached:
            shared = self._cached[key]
        else:
            shared = self._cached[key] = self._build_overlay(pod, table, (), None, exclude_self=False)
        if shared is None:
            return []
        own = self._node_of.get(pod.uid, "")
        row = table.index.get(own) if own else None
        if not own or row is None:
            return [shared]
        # the shared overlay counts the pod's own nomination: take it back on its row
        known = self._by_node[own][pod.uid]
        correction = Overlay(
            np.asarray([row], dtype=np.int64),
            {r: np.asarray([-v], dtype=np.int64) for r, v in known.requests.items()},
            np.asarray([-known.nonzero_cpu], dtype=np.int64),
            np.asarray([-known.nonzero_memory], dtype=np.int64),
            np.asarray([-1], dtype=np.int64),
            [(row, tuple(known.host_ports))] if known.host_ports else [],
            ports_sign=1,
        )
        return [shared, correction]

    def _build_overlay(
        self,
        pod: PodInfo,
        table: NodeTable,
        skip: Iterable[str],
        node: str | None,
        *,
        exclude_self: bool = True,
    ) -> Overlay | None:
        rows: list[int] = []
        deltas: dict[str, list[int]] = {}
        nz_cpu: list[int] = []
        nz_mem: list[int] = []
        counts: list[int] = []
        ports: list[tuple[int, tuple[tuple[str, str, int], ...]]] = []
        skipped = set(skip)
        if node is not None:
            items: Iterable[tuple[str, dict[str, PodInfo]]] = (
                [(node, self._by_node[node])] if node in self._by_node else []
            )
        else:
            items = self._by_node.items()
        for name, pods in items:
            row = table.index.get(name)
            if row is None:
                continue
            chosen = [
                p
                for p in pods.values()
                if (p.uid != pod.uid or not exclude_self)
                and p.uid not in skipped
                and p.priority >= pod.priority
            ]
            if not chosen:
                continue
            rows.append(row)
            j = len(rows) - 1
            for p in chosen:
                for r, v in p.requests.items():
                    col = deltas.setdefault(r, [0] * j)
                    col.extend([0] * (j + 1 - len(col)))
                    col[j] += v
                if p.host_ports:
                    ports.append((row, tuple(p.host_ports)))
            for col in deltas.values():
                col.extend([0] * (j + 1 - len(col)))
            nz_cpu.append(sum(p.nonzero_cpu for p in chosen))
            nz_mem.append(sum(p.nonzero_memory for p in chosen))
            counts.append(len(chosen))
        if not rows:
            return None
        # ports are added, not freed: a negative use count in Overlay.ports means "in use"
        return Overlay(
            np.asarray(rows, dtype=np.int64),
            {r: np.asarray(v, dtype=np.int64) for r, v in deltas.items()},
            np.asarray(nz_cpu, dtype=np.int64),
            np.asarray(nz_mem, dtype=np.int64),
            np.asarray(counts, dtype=np.int64),
            ports,
            ports_sign=-1,
        )
