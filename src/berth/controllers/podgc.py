"""The pod garbage collector's orphan sweep (kube-controller-manager's ``podgc``, gcOrphaned).

A pod bound to a node that no longer exists is force-deleted: unless it already finished, it is first marked
``phase: Failed`` with the condition ``DisruptionTarget=True`` (reason ``DeletionByPodGC``, message
``PodGC: node no longer exists``), then deleted with grace period 0. Its controller then replaces it.

Like kube, a node must stay absent for a quarantine period (40 s, kube's quarantineTime) before its pods are
collected; kube's sweep also runs only every 20 s, Berth checks exactly when the quarantine ends. Every wait
is a clock timer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from berth.api.contracts import Store
from berth.api.errors import Conflict, NotFound
from berth.clock import Clock, Timer
from berth.store.eviction import NODE_KEY, POD_KEY

__all__ = ["CONDITION_MESSAGE", "CONDITION_REASON", "QUARANTINE_SECONDS", "PodGCController"]

QUARANTINE_SECONDS = 40.0
CONDITION_REASON = "DeletionByPodGC"
CONDITION_MESSAGE = "PodGC: node no longer exists"
GC_PRIORITY = 10


class PodGCController:
    """Deletes pods bound to nodes that no longer exist (see the module docstring)."""

    def __init__(self, store: Store, clock: Clock, *, quarantine_seconds: float = QUARANTINE_SECONDS) -> None:
        """Create the collector; nodes and pods already in the store are indexed (and orphans scheduled)."""
        self.store = store
        self.clock = clock
        self.quarantine_seconds = float(quarantine_seconds)
        self._nodes: set[str] = set()
        self._pods: dict[str, dict[tuple[str, str], str]] = {}  # node -> (ns, name) -> uid
        self._where: dict[tuple[str, str], str] = {}  # pod -> node
        self._timers: dict[str, Timer] = {}
        for node in store.list(NODE_KEY)[0]:
            self._nodes.add(node["metadata"]["name"])
        for pod in store.list(POD_KEY)[0]:
            self.handle_pod("ADDED", pod)

    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to a Node or Pod event (other kinds are ignored)."""
        kind = obj.get("kind")
        if kind == "Pod":
            self.handle_pod(type_, obj)
        elif kind == "Node":
            name = obj["metadata"]["name"]
            if type_ == "DELETED":
                self._nodes.discard(name)
                if self._pods.get(name):
                    self._arm(name)
            else:
                self._nodes.add(name)
                timer = self._timers.pop(name, None)
                if timer is not None:
                    timer.cancel()

    def handle_pod(self, type_: str, pod: Mapping[str, Any]) -> None:
        """React to a Pod event: index the pod under its node."""
        meta = pod["metadata"]
        key = (meta.get("namespace") or "default", meta["name"])
        node = None if type_ == "DELETED" else (pod.get("spec") or {}).get("nodeName")
        old = self._where.get(key)
        if node and old == node:
            if node not in self._nodes:
                self._arm(node)
            return  # still on the same node (e.g. a status write): nothing moves
        if old is not None:
            del self._where[key]
            bucket = self._pods.get(old)
            if bucket is not None:
                bucket.pop(key, None)
                if not bucket:
                    del self._pods[old]
        if not node:
            return
        self._where[key] = node
        self._pods.setdefault(node, {})[key] = meta.get("uid") or ""
        if node not in self._nodes:
            self._arm(node)

    def _arm(self, node: str) -> None:
        timer = self._timers.get(node)
        if timer is not None and timer.active:
            return
        self._timers[node] = self.clock.call_at(
            self.clock.now() + self.quarantine_seconds, lambda: self._collect(node), GC_PRIORITY
        )

    def _collect(self, node: str) -> None:
        """Force-delete the pods of `node` if it is still gone."""
        self._timers.pop(node, None)
        if node in self._nodes:
            return
        try:
            self.store.get(NODE_KEY, "", node)
            return  # the node exists after all (kube checks the API before deleting)
        except NotFound:
            pass
        for (ns, name), uid in sorted((self._pods.get(node) or {}).items()):
            self._delete(ns, name, uid)

    def _delete(self, ns: str, name: str, uid: str) -> None:
        """markFailedAndDeletePodWithCondition, then delete with grace 0."""
        try:
            pod = self.store.get(POD_KEY, ns, name)
        except NotFound:
            return
        if pod["metadata"].get("uid") != uid:
            return
        status = pod.get("status") or {}
        if status.get("phase") not in ("Succeeded", "Failed"):
            now = self.store.timestamp()
            new_status = dict(status)
            new_status["phase"] = "Failed"
            conditions = [dict(c) for c in status.get("conditions") or ()]
            for c in conditions:
                if c.get("type") == "DisruptionTarget":
                    if c.get("status") != "True":
                        c["lastTransitionTime"] = now
                    c.update(status="True", reason=CONDITION_REASON, message=CONDITION_MESSAGE)
                    break
            else:
                conditions.append(
                    {
                        "type": "DisruptionTarget",
                        "status": "True",
                        "lastProbeTime": None,
                        "lastTransitionTime": now,
                        "reason": CONDITION_REASON,
                        "message": CONDITION_MESSAGE,
                    }
                )
            new_status["conditions"] = conditions
            try:
                self.store.update_status({**pod, "status": new_status})
            except (Conflict, NotFound):
                return
        with contextlib.suppress(NotFound):
            self.store.delete(POD_KEY, ns, name, grace_period_seconds=0)
