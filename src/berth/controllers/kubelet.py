"""A simulated kubelet: bound pods start, run, finish, and terminate gracefully.

A pod bound to a node becomes Running and Ready after its ``berth.dev/startup`` annotation
(default 0s), and Succeeded after ``berth.dev/duration`` if present. With a non-zero ``berth.dev/exit-code``
its run ends in failure instead: a pod with ``restartPolicy: Never`` becomes Failed (its containers terminated
with reason ``Error`` and that exit code); any other pod's containers are restarted after kubelet's crash-loop
back-off (10s doubling to 5m; ``CrashLoopBackOff`` meanwhile, ``restartCount`` counted) and run again.
A pod bound to a node that does not exist is never started (no kubelet runs it): it stays Pending, as in
kube, until the node appears or the pod garbage collector deletes it. A pod marked for deletion is
removed when its grace period ends, or earlier when its run (``berth.dev/duration``) ends first: its
containers are taken to ignore SIGTERM, so they stop at the end of their run or at the SIGKILL that
ends the grace period, whichever comes first. Every change is a status write to the store.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from berth.api.contracts import Store
from berth.api.errors import NotFound
from berth.api.wellknown import ANNOTATION_DURATION, ANNOTATION_EXIT_CODE, ANNOTATION_STARTUP, parse_duration
from berth.clock import Clock
from berth.store.handover import update_status_handed_over

POD_KEY = ("", "Pod")
NODE_KEY = ("", "Node")
CRASH_BACKOFF_INITIAL = 10.0
CRASH_BACKOFF_MAX = 300.0
"""kubelet's container restart back-off: 10s, doubling with each restart, at most 5 minutes."""

_duration = lru_cache(maxsize=1024)(parse_duration)
"""``parse_duration`` of an annotation's value, remembered: a run holds few distinct values (often none: 0s)."""


class SimKubelet:
    """Runs pods on every node of the store, on timers."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self._started: set[str] = set()  # uids whose start was scheduled
        self._finishing: dict[str, float] = {}  # uid -> when its run ends
        self._terminating: set[str] = set()
        # actions due at the same virtual time and priority run from one timer, one after the other, so the
        # cluster sees e.g. every pod finishing at that instant before anyone reacts
        self._batches: dict[tuple[float, int], list[Callable[[], None]]] = {}
        self._nodes: set[str] = {n["metadata"]["name"] for n in store.list(NODE_KEY)[0]}
        self._waiting: dict[str, dict[str, Mapping[str, Any]]] = {}  # missing node -> uid -> latest pod

    def _on_node(self, type_: str, node: Mapping[str, Any]) -> None:
        """A node that appears starts the pods bound to it meanwhile; one that goes stops nothing."""
        name = node["metadata"]["name"]
        if type_ == "DELETED":
            self._nodes.discard(name)
            return
        self._nodes.add(name)
        for pod in (self._waiting.pop(name, None) or {}).values():
            self.handle_pod("MODIFIED", pod)

    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to a Pod or Node change."""
        kind = obj.get("kind")
        if kind == "Node":
            self._on_node(type_, obj)
        elif kind == "Pod":
            self.handle_pod(type_, obj)

    def handle_pod(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to a Pod change."""
        meta = obj["metadata"]
        uid = meta.get("uid", "")
        node = (obj.get("spec") or {}).get("nodeName")
        if type_ == "DELETED":
            self._started.discard(uid)
            self._finishing.pop(uid, None)
            self._terminating.discard(uid)
            if node in self._waiting:
                self._unwait(node, uid)
            return
        if not node:
            return
        if node not in self._nodes:
            if uid not in self._started:
                self._waiting.setdefault(node, {})[uid] = obj
            return
        if meta.get("deletionTimestamp"):
            if uid not in self._terminating:
                self._terminate(obj, uid)
            return
        phase = (obj.get("status") or {}).get("phase")
        if phase == "Running":
            if uid in self._finishing:
                return
            annotations = meta.get("annotations")
            if annotations and ANNOTATION_DURATION in annotations:
                ns, name = meta.get("namespace", "default"), meta["name"]
                ends = self.clock.now() + _duration(annotations[ANNOTATION_DURATION])
                self._finishing[uid] = ends
                self._at(ends, 4, lambda: self._finish(ns, name, uid))
        elif uid not in self._started and phase not in ("Succeeded", "Failed"):
            self._started.add(uid)
            ns, name = meta.get("namespace", "default"), meta["name"]
            startup = _duration((meta.get("annotations") or {}).get(ANNOTATION_STARTUP, "0s"))
            self._at(self.clock.now() + startup, 3, lambda: self._start(ns, name, uid))

    def _terminate(self, pod: Mapping[str, Any], uid: str) -> None:
        """Remove a pod marked for deletion when its grace period ends (or its run, if that ends first)."""
        meta = pod["metadata"]
        ns, name = meta.get("namespace", "default"), meta["name"]
        self._terminating.add(uid)
        grace = meta.get("deletionGracePeriodSeconds")
        when = self.clock.now() + float(grace if grace is not None else 0)
        run_ends = self._finishing.get(uid)
        if run_ends is not None:
            when = min(when, max(run_ends, self.clock.now()))
        self._at(when, 5, lambda: self._remove(ns, name, uid))

    def _unwait(self, node: str, uid: str) -> None:
        waiting = self._waiting[node]
        waiting.pop(uid, None)
        if not waiting:
            del self._waiting[node]

    def _at(self, when: float, priority: int, action: Callable[[], None]) -> None:
        key = (when, priority)
        batch = self._batches.get(key)
        if batch is not None:
            batch.append(action)
            return
        self._batches[key] = [action]
        self.clock.call_at(when, lambda: self._run_batch(key), priority)

    def _run_batch(self, key: tuple[float, int]) -> None:
        for action in self._batches.pop(key):
            action()

    def _current(self, ns: str, name: str, uid: str) -> dict[str, Any] | None:
        try:
            pod = self.store.get(POD_KEY, ns, name)
        except NotFound:
            return None
        if pod["metadata"].get("uid") != uid:
            return None
        return pod

    def _start(self, ns: str, name: str, uid: str) -> None:
        pod = self._current(ns, name, uid)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            return
        node = (pod.get("spec") or {}).get("nodeName") or ""
        if node not in self._nodes:  # the node went before the pod started: it waits for the node
            self._started.discard(uid)
            self._waiting.setdefault(node, {})[uid] = pod
            return
        now = self.store.timestamp()
        status = dict(pod.get("status") or {})
        # in the kubelet's order: Initialized, Ready, ContainersReady, then the scheduler's PodScheduled
        conditions = [
            {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
            for t in ("Initialized", "Ready", "ContainersReady")
        ]
        conditions.extend(c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled")
        status.update(
            phase="Running",
            conditions=conditions,
            startTime=status.get("startTime") or now,
            containerStatuses=[
                {
                    "name": c.get("name", ""),
                    "image": c.get("image", ""),
                    "imageID": "",  # a required string in the API; no image is pulled here
                    "lastState": {},
                    "ready": True,
                    "started": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": now}},
                }
                for c in (pod.get("spec") or {}).get("containers") or []
            ],
        )
        update_status_handed_over(self.store, {**pod, "status": status})

    def _finish(self, ns: str, name: str, uid: str) -> None:
        pod = self._current(ns, name, uid)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            return
        code = _exit_code((pod["metadata"].get("annotations") or {}).get(ANNOTATION_EXIT_CODE))
        if code != 0:
            if (pod.get("spec") or {}).get("restartPolicy", "Always") == "Never":
                self._fail(pod, code)
            else:
                self._crash(pod, code)
            return
        now = self.store.timestamp()
        status = dict(pod.get("status") or {})
        conditions = []
        for c in status.get("conditions") or []:
            if c.get("type") in ("Ready", "ContainersReady"):
                c = {**c, "status": "False", "reason": "PodCompleted", "lastTransitionTime": now}
            conditions.append(c)
        status.update(
            phase="Succeeded",
            conditions=conditions,
            containerStatuses=[
                {
                    **cs,
                    "ready": False,
                    "started": False,
                    "state": {
                        "terminated": {
                            "exitCode": 0,
                            "reason": "Completed",
                            "startedAt": (cs.get("state") or {}).get("running", {}).get("startedAt"),
                            "finishedAt": now,
                        }
                    },
                }
                for cs in status.get("containerStatuses") or []
            ],
        )
        self.store.update_status({**pod, "status": status})

    def _fail(self, pod: Mapping[str, Any], code: int) -> None:
        """The run ended with exit code `code` and the pod does not restart: phase Failed."""
        now = self.store.timestamp()
        status = dict(pod.get("status") or {})
        conditions = []
        for c in status.get("conditions") or []:
            if c.get("type") in ("Ready", "ContainersReady"):
                c = {**c, "status": "False", "reason": "PodFailed", "lastTransitionTime": now}
            conditions.append(c)
        status.update(
            phase="Failed",
            conditions=conditions,
            containerStatuses=[
                {**cs, "ready": False, "started": False, "state": {"terminated": _terminated(cs, code, now)}}
                for cs in status.get("containerStatuses") or []
            ],
        )
        self.store.update_status({**pod, "status": status})

    def _crash(self, pod: Mapping[str, Any], code: int) -> None:
        """The run ended with exit code `code`: the containers wait out the crash-loop back-off, then restart."""
        meta = pod["metadata"]
        ns, name, uid = meta.get("namespace", "default"), meta["name"], meta.get("uid", "")
        now = self.store.timestamp()
        status = dict(pod.get("status") or {})
        statuses = status.get("containerStatuses") or []
        restarts = max((int(cs.get("restartCount") or 0) for cs in statuses), default=0)
        backoff = min(CRASH_BACKOFF_INITIAL * 2**restarts, CRASH_BACKOFF_MAX)
        names = [str(cs.get("name", "")) for cs in statuses]
        conditions = []
        for c in status.get("conditions") or []:
            if c.get("type") in ("Ready", "ContainersReady"):
                c = {
                    **c,
                    "status": "False",
                    "reason": "ContainersNotReady",
                    "message": f"containers with unready status: [{' '.join(names)}]",
                    "lastTransitionTime": now,
                }
            conditions.append(c)
        status.update(
            conditions=conditions,
            containerStatuses=[
                {
                    **cs,
                    "ready": False,
                    "started": False,
                    "restartCount": int(cs.get("restartCount") or 0) + 1,
                    "lastState": {"terminated": _terminated(cs, code, now)},
                    "state": {
                        "waiting": {
                            "reason": "CrashLoopBackOff",
                            "message": f"back-off {backoff:g}s restarting failed container={cs.get('name', '')} "
                            f"pod={name}_{ns}({uid})",
                        }
                    },
                }
                for cs in statuses
            ],
        )
        self.store.update_status({**pod, "status": status})
        self._at(self.clock.now() + backoff, 3, lambda: self._restart(ns, name, uid))

    def _restart(self, ns: str, name: str, uid: str) -> None:
        """The back-off is over: the containers run again (and their run is timed anew)."""
        pod = self._current(ns, name, uid)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            return
        self._finishing.pop(uid, None)
        now = self.store.timestamp()
        status = dict(pod.get("status") or {})
        conditions = []
        for c in status.get("conditions") or []:
            if c.get("type") in ("Ready", "ContainersReady"):
                c = {k: v for k, v in c.items() if k not in ("reason", "message")}
                c.update(status="True", lastTransitionTime=now)
            conditions.append(c)
        status.update(
            conditions=conditions,
            containerStatuses=[
                {**cs, "ready": True, "started": True, "state": {"running": {"startedAt": now}}}
                for cs in status.get("containerStatuses") or []
            ],
        )
        self.store.update_status({**pod, "status": status})

    def _remove(self, ns: str, name: str, uid: str) -> None:
        pod = self._current(ns, name, uid)
        if pod is None:
            return
        with contextlib.suppress(NotFound):
            self.store.delete(POD_KEY, ns, name, grace_period_seconds=0)


def _exit_code(value: object) -> int:
    """The ``berth.dev/exit-code`` annotation's value (0 when absent; 1 for a value that is not an integer)."""
    if value is None:
        return 0
    try:
        return int(str(value))
    except ValueError:
        return 1


def _terminated(cs: Mapping[str, Any], code: int, now: str) -> dict[str, Any]:
    """A container's terminated state after a run that exited with `code`."""
    return {
        "exitCode": code,
        "reason": "Completed" if code == 0 else "Error",
        "startedAt": (cs.get("state") or {}).get("running", {}).get("startedAt"),
        "finishedAt": now,
    }
