"""The text form of a ``berth whatif`` answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from berth.api.quantity import format_resource
from berth.sim.output import render_table

if TYPE_CHECKING:
    from berth.sim.whatif import Answer, Trial

__all__ = ["render_answer"]


def _victims(trial: Trial, indent: str = "") -> list[str]:
    rows = [[v.namespace, v.name, v.node, str(v.priority)] for v in trial.victims]
    table = render_table(["NAMESPACE", "POD", "NODE", "PRIORITY"], rows).rstrip("\n")
    return [indent + line for line in table.splitlines()]


def _placement(answer: Answer) -> str:
    t = answer.trial
    if answer.question.kind == "PodGroup":
        return "; ".join(f"{who} on {node or '<none>'}" for who, node in t.nodes.items())
    return str(answer.node)


def render_answer(answer: Answer) -> str:
    """Fits or not; where; the victims and the quota borrowed; else the message, the per-node reasons as kube
    groups them and the changes that were tried."""
    from berth.sim.whatif import NOT_ATTEMPTED

    t = answer.trial
    title = answer.question.title
    lines: list[str] = []
    if t.fits:
        lines.append(f"{title} fits: {_placement(answer)}")
        if t.victims:
            lines.append(f"Preempts {len(t.victims)} pod(s):")
            lines.extend(_victims(t, "  "))
        for quota, amounts in sorted(t.borrowed.items()):
            shown = ", ".join(f"{r} {format_resource(r, v)}" for r, v in sorted(amounts.items()))
            lines.append(f"Borrows from other quotas through ElasticQuota {quota}: {shown}")
        return "\n".join(lines) + "\n"
    lines.append(f"{title} does not fit.")
    placed = {who: node for who, node in t.nodes.items() if node}
    if placed and answer.question.kind == "PodGroup":
        lines.append(
            "Only "
            + ", ".join(f"{who} on {node}" for who, node in placed.items())
            + " could be placed: the gang is all or nothing."
        )
    if t.message:
        lines.append(t.message)
    reasons = answer.reasons
    if reasons:
        lines.append("")
        lines.append(render_table(["NODES", "REASON"], [[str(n), r] for n, r in reasons]).rstrip("\n"))
    if t.nominated:
        lines.append("Nominated: " + ", ".join(f"{who} on {node}" for who, node in t.nominated.items()))
    if not answer.suggestions and t.message.startswith(NOT_ATTEMPTED):
        return "\n".join(lines) + "\n"
    lines.append("")
    fitting = [s for s in answer.suggestions if s.trial.fits]
    others = [s for s in answer.suggestions if not s.trial.fits]
    if not answer.suggestions and not t.message.startswith(NOT_ATTEMPTED):
        lines.append(
            "No change tried makes it fit (a higher priority, more quota, more nodes of an existing shape)."
        )
    if fitting:
        lines.append("It would fit with any one of these changes (each tried on a copy of the cluster):")
        for s in fitting:
            lines.append(f"- {s.summary}: {_placement_of(answer, s.trial)}")
            if s.trial.victims:
                lines.append("  evicting:")
                lines.extend(_victims(s.trial, "    "))
    for s in others:
        lines.append(
            f"- {s.summary}: tried on a copy, not enough alone ({s.trial.message or 'still pending'})"
        )
    return "\n".join(lines) + "\n"


def _placement_of(answer: Answer, trial: Trial) -> str:
    if answer.question.kind == "PodGroup":
        return "; ".join(f"{who} on {node}" for who, node in trial.nodes.items())
    return f"on {next(iter(trial.nodes.values()))}"
