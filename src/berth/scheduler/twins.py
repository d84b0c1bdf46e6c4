"""Twin failures: pods that schedule alike need not all fail at the same instant.

"Twins" are pods that schedule alike (same profile, namespace, spec, labels, annotations, owners and
nominated node), e.g. the replicas of one ReplicaSet. When one fails cleanly (nothing nominated, nothing
changed), its twins would fail alike until an event one of its rejecting plugins cares about happens, so
the queue leaves them in backoffQ instead of popping them early at that virtual instant. The memo holds
only the failures of the current instant.
"""

from __future__ import annotations

import json

from berth.clock import Clock
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.runtime import Framework
from berth.scheduler.nominator import Nominator
from berth.scheduler.queue import QueuedPod, SchedulingQueue
from berth.scheduler.trace import without_result_annotations

TWIN_KEY = "berth/twin-key"


def twin_key(pod: PodInfo) -> str | None:
    """What makes pods schedule alike, besides their nominated node: profile, namespace, spec, labels,
    annotations and owners (None for pseudo pods); cached on the PodInfo."""
    if pod.kind != "Pod":
        return None
    key = pod.extra.get(TWIN_KEY)
    if key is None:
        obj = pod.obj
        meta = obj.get("metadata") or {}
        key = json.dumps(
            [
                pod.scheduler_name,
                pod.namespace,
                obj.get("spec"),
                meta.get("labels"),
                without_result_annotations(meta.get("annotations")),
                meta.get("ownerReferences"),
            ],
            sort_keys=True,
            default=str,
        )
        pod.extra[TWIN_KEY] = key
    return str(key)


class _TwinFailure:
    """A clean failure of a pod: the framework, its rejecting plugins, and the queue's move count when its
    attempt began (events since then are checked, incrementally, for one those plugins care about)."""

    __slots__ = ("checked", "fw", "plugins")

    def __init__(self, fw: Framework, plugins: frozenset[str], since: int) -> None:
        self.fw = fw
        self.plugins = plugins
        self.checked = since

    def stale(self, queue: SchedulingQueue) -> bool:
        """Whether an event the rejecting plugins care about happened since the failure."""
        plugins = set(self.plugins)
        moves = queue.moves_since(self.checked)
        if moves is None:
            return True
        for resource, action in moves:
            if self.fw.interested(plugins, resource, action):
                return True
        self.checked = queue.move_count
        return False


class TwinFailures:
    """The clean failures of the current virtual instant, by twin key and nominated node.

    ``failed_now`` is the queue's ``skip_early`` hook, so the memo is built before the queue: its owner sets
    ``queue`` (whose record of cluster events it reads) as soon as the queue exists.
    """

    __slots__ = ("_at", "_clock", "_failed", "_nominator", "queue")

    queue: SchedulingQueue

    def __init__(self, clock: Clock, nominator: Nominator) -> None:
        self._clock = clock
        self._nominator = nominator
        self._at = -1.0
        self._failed: dict[tuple[str, str], _TwinFailure] = {}

    def remember(self, fw: Framework, pod: PodInfo, plugins: set[str], since: int) -> None:
        """Remember that ``pod`` failed, rejected by ``plugins``, without changing anything: its twins need
        not try again at this instant until an event those plugins care about happens (after ``since``)."""
        key = twin_key(pod)
        if key is None:
            return
        now = self._clock.now()
        if now != self._at:
            self._at = now
            self._failed.clear()
        plugins.discard("")
        self._failed[(key, self._nominator.node_of(pod.uid))] = _TwinFailure(fw, frozenset(plugins), since)

    def failed_now(self, qp: QueuedPod) -> bool:
        """Whether a twin of the pod failed at this instant and no event its rejecting plugins care about
        happened since (the queue then leaves the pod in backoffQ instead of popping it early: its attempt
        would fail alike)."""
        if not self._failed or self._at != self._clock.now():
            return False
        key = twin_key(qp.pod)
        if key is None:
            return False
        failure = self._failed.get((key, self._nominator.node_of(qp.pod.uid)))
        if failure is None:
            return False
        if failure.stale(self.queue):
            del self._failed[(key, self._nominator.node_of(qp.pod.uid))]
            return False
        return True
