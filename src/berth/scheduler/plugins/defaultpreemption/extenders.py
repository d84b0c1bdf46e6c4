"""Preemption candidates narrowed by the scheduler extenders (kube's Evaluator.callExtenders)."""

from __future__ import annotations

from collections.abc import Sequence

from berth.scheduler.framework.plugin import Handle
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import SUCCESS, Status
from berth.scheduler.plugins.defaultpreemption.selection import Candidate
from berth.scheduler.plugins.defaultpreemption.victims import Victims


def call_extenders(
    handle: Handle, pod: PodInfo, candidates: Sequence[Candidate]
) -> tuple[list[Candidate], Status]:
    """The candidates the extenders with a preempt verb keep, with the victims they chose, in the dry
    run's order (nodes an extender adds come last); the candidates unchanged when no extender preempts
    for ``pod``; an Error status when one failed."""
    victims = {c.node: (list(c.victims.pods), c.victims.num_pdb_violations) for c in candidates}
    answer, s = handle.extender_preemption(pod, victims)
    if not s.is_success():
        return [], s
    if answer is None:
        return list(candidates), SUCCESS
    kept = [
        Candidate(c.node, Victims(tuple(answer[c.node][0]), answer[c.node][1]))
        for c in candidates
        if c.node in answer
    ]
    kept += [Candidate(n, Victims(tuple(p), v)) for n, (p, v) in answer.items() if n not in victims]
    return kept, SUCCESS
