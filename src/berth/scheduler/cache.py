"""The scheduler's view of nodes and the pods counted on them, including assumed pods.

The cache owns the NodeTable. Pods bound in the store are added when their event arrives; a pod the
scheduler has chosen a node for is *assumed* (counted immediately) and confirmed by its bound event,
or forgotten if binding fails.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.framework.podinfo import PodInfo


def is_terminal(pod: Mapping[str, Any]) -> bool:
    """Whether the pod has finished (Succeeded or Failed): it no longer holds node resources."""
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed")


@dataclass(slots=True)
class _PodState:
    info: PodInfo
    node: str
    assumed: bool
    counted: bool  # whether the pod is counted in the table (its node exists)


class SchedulerCache:
    """Node and pod bookkeeping behind the NodeTable."""

    def __init__(self) -> None:
        self.table = NodeTable()
        self._pods: dict[str, _PodState] = {}
        self._orphans: dict[str, dict[str, _PodState]] = {}  # node name → pods of a node not (yet) known
        # state plugins keep once for the whole scheduler (shared by the profiles), by key (Handle.shared)
        self.plugin_state: dict[Hashable, object] = {}

    # ----- nodes ---------------------------------------------------------------------------
    def set_node(self, node: Mapping[str, Any]) -> None:
        """Add or update a node."""
        name = node["metadata"]["name"]
        i = self.table.set_node(node)
        for st in self._orphans.pop(name, {}).values():
            self.table.add_pod(i, st.info)
            st.counted = True

    def remove_node(self, name: str) -> None:
        """Remove a node; its pods stay known (they are counted again if the node returns)."""
        i = self.table.index.get(name)
        if i is None:
            return
        orphans = self._orphans.setdefault(name, {})
        for uid, info in list(self.table.pods[i].items()):
            st = self._pods.get(uid)
            if st is not None:
                st.counted = False
                orphans[uid] = st
            del info
        self.table.remove_node(name)

    # ----- pods ----------------------------------------------------------------------------
    def _count(self, st: _PodState) -> None:
        i = self.table.index.get(st.node)
        if i is None:
            self._orphans.setdefault(st.node, {})[st.info.uid] = st
            st.counted = False
        else:
            self.table.add_pod(i, st.info)
            st.counted = True

    def _uncount(self, st: _PodState) -> None:
        if st.counted:
            i = self.table.index.get(st.node)
            if i is not None:
                self.table.remove_pod(i, st.info)
        else:
            self._orphans.get(st.node, {}).pop(st.info.uid, None)
        st.counted = False

    def assume(self, pod: PodInfo, node: str) -> None:
        """Count ``pod`` on ``node`` before its binding is confirmed."""
        if pod.uid in self._pods:
            raise ValueError(f"pod {pod.key} is already in the cache")
        st = _PodState(pod, node, True, False)
        self._pods[pod.uid] = st
        self._count(st)

    def forget(self, pod: PodInfo) -> None:
        """Drop an assumed pod whose binding failed."""
        st = self._pods.get(pod.uid)
        if st is not None and st.assumed:
            self._uncount(st)
            del self._pods[pod.uid]

    def is_assumed(self, uid: str) -> bool:
        """Whether ``uid`` is assumed and not yet confirmed."""
        st = self._pods.get(uid)
        return st is not None and st.assumed

    def refresh_counted(self, uid: str, node: str, obj: Mapping[str, Any]) -> PodInfo | None:
        """The store reports pod ``uid`` bound to ``node`` as ``obj``. When the cache counts it there already as
        it is (its own assumed binding, now confirmed, or a write that changed neither spec nor labels): the
        counted PodInfo, now holding ``obj``; else None (nothing changed: the caller sets the pod anew)."""
        st = self._pods.get(uid)
        if st is None or st.node != node:
            return None
        info = st.info
        if not st.assumed:
            old = info.obj
            old_spec, spec = old.get("spec"), obj.get("spec")
            if old_spec is not spec and old_spec != spec:
                return None
            if (old.get("metadata") or {}).get("labels") != (obj.get("metadata") or {}).get("labels"):
                return None
        info.obj = obj
        st.assumed = False
        return info

    def set_pod(self, pod: PodInfo, node: str) -> bool:
        """A bound pod (added or updated) as the store reports it; whether the cache knew ``pod.uid``."""
        st = self._pods.get(pod.uid)
        if st is not None:
            if st.node == node:
                i = self.table.index.get(node) if st.counted else None
                if i is not None:  # the usual update: counted again on the same row
                    self.table.remove_pod(i, st.info)
                    st.info = pod
                    st.assumed = False
                    self.table.add_pod(i, pod)
                    return True
                self._uncount(st)
                st.info = pod
                st.assumed = False
                self._count(st)
                return True
            self._uncount(st)
        known = st is not None
        st = _PodState(pod, node, False, False)
        self._pods[pod.uid] = st
        self._count(st)
        return known

    def resize_pod(
        self, uid: str, node: str, requests: dict[str, int], nonzero_cpu: int, nonzero_memory: int
    ) -> PodInfo | None:
        """Change the requests of the pod ``uid`` known on ``node`` in place (counted anew on its row);
        returns its PodInfo, or None (nothing done) when the cache holds no pod ``uid`` on ``node``."""
        st = self._pods.get(uid)
        if st is None or st.node != node:
            return None
        info = st.info
        i = self.table.index.get(node) if st.counted else None
        if i is not None:  # the usual case: counted again on the same row
            self.table.remove_pod(i, info)
            info.requests, info.nonzero_cpu, info.nonzero_memory = requests, nonzero_cpu, nonzero_memory
            self.table.add_pod(i, info)
        else:
            self._uncount(st)
            info.requests, info.nonzero_cpu, info.nonzero_memory = requests, nonzero_cpu, nonzero_memory
            self._count(st)
        return info

    def remove_pod(self, uid: str) -> PodInfo | None:
        """A pod is gone (deleted or terminal); returns what was counted."""
        st = self._pods.pop(uid, None)
        if st is None:
            return None
        self._uncount(st)
        return st.info

    def pod(self, uid: str) -> PodInfo | None:
        """The PodInfo counted for ``uid``."""
        st = self._pods.get(uid)
        return None if st is None else st.info

    def pod_count(self) -> int:
        """Number of pods known to the cache."""
        return len(self._pods)
