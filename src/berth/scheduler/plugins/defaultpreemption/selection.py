"""Choosing the node to preempt on among the dry run's candidates (kube's pickOneNodeForPreemption)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from berth.scheduler.plugins.defaultpreemption.victims import StartTimes, Victims

MAX_INT32 = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node where the preemptor fits once ``victims`` are gone."""

    node: str
    victims: Victims


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


def _criteria(start: StartTimes) -> tuple[Callable[[Candidate], float], ...]:
    """Scores in order of precedence; higher is better."""
    return (
        lambda c: -c.victims.num_pdb_violations,  # fewest PDB violations
        lambda c: -c.victims.pods[0].priority,  # lowest highest-priority victim
        lambda c: -sum(p.priority + MAX_INT32 + 1 for p in c.victims.pods),  # smallest sum of priorities
        lambda c: -len(c.victims.pods),  # fewest victims
        lambda c: earliest_start_of_top_victims(c.victims, start),  # latest start of the top victims
    )


def pick_one_node(candidates: Sequence[Candidate], start: StartTimes) -> Candidate | None:
    """The best candidate by kube's criteria; remaining ties go to the first candidate in order."""
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]
    remaining = list(candidates)
    for score in _criteria(start):
        best: float | None = None
        chosen: list[Candidate] = []
        for c in remaining:
            v = score(c)
            if best is None or v > best:
                best = v
                chosen = [c]
            elif v == best:
                chosen.append(c)
        if len(chosen) == 1:
            return chosen[0]
        remaining = chosen
    return remaining[0]
