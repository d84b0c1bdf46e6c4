"""``berth explain``: the scheduling attempts of one pod, node by node and plugin by plugin."""

from __future__ import annotations

from collections.abc import Sequence

from berth.scheduler.trace import PASSED, CycleTrace
from berth.sim.output import human_duration, render_table


def _filter_section(trace: CycleTrace) -> str:
    rows: list[list[str]] = []
    for node, per in trace.filter.items():
        rejected = [(p, msg) for p, msg in per.items() if msg != PASSED]
        if rejected:
            plugin, msg = rejected[0]
            rows.append([node, "rejected", plugin, msg])
        else:
            rows.append([node, "passed", "", ""])
    return render_table(["NODE", "FILTER", "PLUGIN", "REASON"], rows)


def _score_section(trace: CycleTrace) -> str:
    plugins = [name for name, _ in trace.score_plugins]
    weights = dict(trace.score_plugins)
    head = ["NODE", *(f"{p}(x{weights[p]})" for p in plugins), "TOTAL"]
    order = sorted(trace.total, key=lambda n: (-trace.total[n], n))
    rows = []
    for node in order:
        cells = [
            f"{trace.raw[node][p]}->{trace.normalized[node][p]}"
            + ("" if weights[p] == 1 else f"={trace.normalized[node][p] * weights[p]}")
            for p in plugins
        ]
        mark = " *" if node == trace.selected else ""
        rows.append([node + mark, *cells, str(trace.total[node])])
    return render_table(head, rows)


def render_trace(trace: CycleTrace, number: int, count: int) -> str:
    """One attempt as text: PreFilter verdicts, the per-node Filter table, the Score table, the outcome."""
    lines = [
        f"Pod {trace.pod} — attempt {number} of {count} at {human_duration(trace.time)} "
        f"(profile {trace.profile})"
    ]
    if trace.pre_filter:
        parts = [f"{p}: {v}" for p, v in trace.pre_filter.items()]
        lines.append("PreFilter: " + "; ".join(parts))
    if trace.filter:
        feasible = len(trace.feasible)
        lines.append(
            f"Filter ({feasible} of {len(trace.filter)} nodes feasible; plugins in order: "
            + ", ".join(trace.filter_plugins)
            + ")"
        )
        lines.append(_filter_section(trace).rstrip("\n"))
    if trace.total:
        skipped = len(trace.feasible) - len(trace.scored)
        extra = f"; {skipped} feasible node(s) not scored (percentageOfNodesToScore)" if skipped > 0 else ""
        lines.append(
            f"Score (raw->normalised[=x weight] per plugin; {len(trace.scored)} node(s) scored{extra})"
        )
        lines.append(_score_section(trace).rstrip("\n"))
    if trace.note:
        lines.append(f"Note: {trace.note}")
    if trace.selected:
        lines.append(f"Selected node: {trace.selected}")
    else:
        lines.append(f"Unschedulable: {trace.failure}")
    return "\n".join(lines) + "\n"


def render_traces(traces: Sequence[CycleTrace]) -> str:
    """Every attempt, separated by blank lines."""
    return "\n".join(render_trace(t, i + 1, len(traces)) for i, t in enumerate(traces))


__all__ = ["render_trace", "render_traces"]
