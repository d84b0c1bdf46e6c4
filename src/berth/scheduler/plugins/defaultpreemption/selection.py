"""Choosing the node to preempt on among the dry run's candidates (kube's pickOneNodeForPreemption)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from berth.scheduler.plugins.defaultpreemption.victims import StartTimes, Victims

MAX_INT32 = 2**31 - 1


Rank = tuple[int, int, int, int, float]


class Candidate(NamedTuple):
    """A node where the preemptor fits once ``victims`` are gone (with its ``rank`` when known)."""

    node: str
    victims: Victims
    rank: Rank | None = None


def earliest_start_of_top_victims(victims: Victims, start: StartTimes) -> float:
    """kube's GetEarliestPodStartTime: the earliest start among the highest-priority victims."""
    pods = victims.pods
    top = pods[0].priority
    earliest = start.of(pods[0])
    for p in pods:
        if p.priority == top:
            t = start.of(p)
            if t < earliest:
                earliest = t
        elif p.priority > top:
            top = p.priority
            earliest = start.of(p)
    return earliest


def rank(victims: Victims, start: StartTimes) -> Rank:
    """kube's criteria for a candidate with ``victims``, in order of precedence, higher is better: fewest
    PDB violations, lowest highest-priority victim, smallest sum of priorities (each offset by 2^31), fewest
    victims, latest start of the top victims."""
    pods = victims.pods
    return (
        -victims.num_pdb_violations,
        -pods[0].priority,
        -(sum(p.priority for p in pods) + len(pods) * (MAX_INT32 + 1)),
        -len(pods),
        earliest_start_of_top_victims(victims, start),
    )


def pick_one_node(candidates: Sequence[Candidate], start: StartTimes) -> Candidate | None:
    """The best candidate by kube's criteria; remaining ties go to the first candidate in order."""
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]
    # kube narrows the candidates criterion by criterion and takes the first left: the first of the
    # lexicographically best ranks (max keeps the first of equal elements)
    ranks = [c.rank if c.rank is not None else rank(c.victims, start) for c in candidates]
    return candidates[max(range(len(ranks)), key=ranks.__getitem__)]
