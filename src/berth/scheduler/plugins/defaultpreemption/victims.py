"""Choosing the victims on one node (kube's SelectVictimsOnNode) and ordering pods by importance."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from berth.api.reservation import parse_rfc3339
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import Code, Status
from berth.scheduler.plugins.defaultpreemption.pdb import Budget, split_by_pdb_violation

MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
_START_KEY = "berth/start-time"

# the filters of the preemptor on the node with the given pods removed
FitsWithout = Callable[[Sequence[PodInfo]], Status]


class StartTimes:
    """Pod start times (status.startTime) in seconds since the Unix epoch; ``now`` for pods not started.

    kube reads time.Now() for a pod without a start time; one preemption attempt uses one ``now``.
    """

    __slots__ = ("_cache", "_now", "_now_fn")

    def __init__(self, now: Callable[[], float]) -> None:
        self._now_fn = now
        self._now: float | None = None
        self._cache: dict[str, float] = {}

    def of(self, pod: PodInfo) -> float:
        """The start time of ``pod`` (remembered on the pod; its object never changes)."""
        known: float | None = pod.extra.get(_START_KEY)
        if known is not None:
            return known
        raw = (pod.obj.get("status") or {}).get("startTime")
        if isinstance(raw, str) and raw:
            t = self._cache.get(raw)
            if t is None:
                try:
                    t = parse_rfc3339(raw).timestamp()
                except ValueError:
                    return self.now()
                self._cache[raw] = t
            pod.extra[_START_KEY] = t
            return t
        return self.now()

    def known(self, pod: PodInfo) -> bool:
        """Whether the pod's start time is its own (it has started), not the attempt's time."""
        return pod.extra.get(_START_KEY) is not None

    def importance(self, pod: PodInfo) -> tuple[int, float]:
        """The sort key of kube's MoreImportantPod, most important first: (-priority, start time)."""
        known: float | None = pod.extra.get(_START_KEY)
        return (-pod.priority, known if known is not None else self.of(pod))

    def all_known(self, pods: Iterable[PodInfo]) -> bool:
        """Whether every one of ``pods`` has started (see ``known``)."""
        return all(p.extra.get(_START_KEY) is not None for p in pods)

    def now(self) -> float:
        """The attempt's current time (read once)."""
        if self._now is None:
            self._now = self._now_fn()
        return self._now


def by_importance(pods: Iterable[PodInfo], start: StartTimes) -> list[PodInfo]:
    """``pods`` from most to least important (kube's MoreImportantPod: higher priority, then started earlier).

    The sort is stable: pods alike in both keep their order on the node.
    """
    return sorted(pods, key=start.importance)


def is_candidate_victim(victim: PodInfo, preemptor: PodInfo) -> bool:
    """Whether ``victim`` may be preempted by ``preemptor``: a real pod of lower priority.

    Reservation pseudo pods (and any other non-Pod kind) are never victims.
    """
    return victim.priority < preemptor.priority and victim.kind == "Pod"


class Victims(NamedTuple):
    """The pods to preempt on one node (most important first) and how many of them violate a PDB."""

    pods: tuple[PodInfo, ...]
    num_pdb_violations: int = 0


def select_victims_on_node(
    preemptor: PodInfo,
    node_pods: Iterable[PodInfo],
    fits_without: FitsWithout,
    budgets: Sequence[Budget],
    start: StartTimes,
) -> tuple[Victims | None, Status]:
    """The fewest lower-priority pods to remove from a node so that ``preemptor`` fits, as kube chooses them.

    All eligible pods are removed first; if the preemptor does not fit even then, the filters' status is
    returned. Otherwise pods are given back (reprieved) from the most important down, PDB-violating ones
    first, and every pod without which the preemptor no longer fits becomes a victim.
    """
    potential = [p for p in node_pods if is_candidate_victim(p, preemptor)]
    if not potential:
        return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_NO_VICTIMS,))
    s = fits_without(potential)
    if not s.is_success():
        return None, s
    ordered = by_importance(potential, start)
    violating, non_violating = split_by_pdb_violation(ordered, budgets)
    removed: dict[str, PodInfo] = {p.uid: p for p in ordered}
    victims: list[PodInfo] = []
    num_violating = 0

    def reprieve(p: PodInfo) -> bool:
        del removed[p.uid]
        s = fits_without(list(removed.values()))
        if s.code == Code.ERROR:
            raise _DryRunError(s)
        if s.is_success():
            return True
        removed[p.uid] = p
        victims.append(p)
        return False

    try:
        for p in violating:
            if not reprieve(p):
                num_violating += 1
        for p in non_violating:
            reprieve(p)
    except _DryRunError as e:
        return None, e.status
    if violating and non_violating:
        victims = by_importance(victims, start)
    return Victims(tuple(victims), num_violating), Status()


class _DryRunError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status
