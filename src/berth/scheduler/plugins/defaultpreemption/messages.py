"""The texts DefaultPreemption reports, as kube-scheduler prints them."""

from __future__ import annotations

from collections.abc import Mapping

from berth.scheduler.framework.status import Status

PREFIX = "preemption: "
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CANDIDATE = "no candidate node for preemption"  # the extenders kept no candidate
PREEMPTED_MESSAGE = "preempted"  # the rejection message sent to a victim waiting at Permit
EVENT_REASON = "Preempted"
EVENT_ACTION = "Preempting"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


def condition_message(scheduler_name: str) -> str:
    """The DisruptionTarget condition message written on a victim."""
    return f"{scheduler_name}: preempting to accommodate a higher priority pod"


def event_message(preemptor_uid: str, node: str) -> str:
    """The ``Preempted`` event message on a victim."""
    return f"Preempted by pod {preemptor_uid} on node {node}"


def no_victim_error(node: str) -> str:
    """The error when a dry run succeeded on a node without choosing any victim."""
    return f'expected at least one victim pod on node "{node}"'


def fit_error(num_all_nodes: int, statuses: Mapping[str, Status], absent: Status) -> str:
    """kube's FitError text for a failed preemption: ``0/N nodes are available: <sorted histogram>.``

    Every reason of every listed node counts once; nodes not listed count with ``absent``'s reasons.
    """
    counts: dict[str, int] = {}
    for s in statuses.values():
        for r in s.reasons:
            counts[r] = counts.get(r, 0) + 1
    missing = num_all_nodes - len(statuses)
    if missing > 0:
        for r in absent.reasons:
            counts[r] = counts.get(r, 0) + missing
    msg = f"0/{num_all_nodes} nodes are available:"
    parts = sorted(f"{v} {k}" for k, v in counts.items())
    if parts:
        msg += " " + ", ".join(parts) + "."
    return msg
