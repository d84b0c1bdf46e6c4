"""The outcomes of ``berth compare`` aggregated over seeds (mean, spread, min, max) and printed: one table per
workload with one row per configuration (``-o table``), or everything as JSON (``-o json``).

The spread is the sample standard deviation over the seeds (n - 1 in the denominator); with one seed there is
none (JSON null, no ``±`` in the table).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from typing import Any

from berth.sim.compare.outcome import METRICS, TRACE_ONLY, Outcome

SPREAD = "sample standard deviation over seeds"

PERCENT = ("gpuAllocation", "cpuAllocation", "memoryAllocation", "fragmentation")
SCENARIO_ONLY = ("preemptions", "latencyP50", "latencyP99")
HEADERS = {
    "placed": "PLACED",
    "pending": "PENDING",
    "gpuAllocation": "GPU ALLOC",
    "cpuAllocation": "CPU ALLOC",
    "memoryAllocation": "MEM ALLOC",
    "fragmentation": "GPU FRAG",
    "imbalance": "IMBALANCE",
    "preemptions": "PREEMPTED",
    "latencyP50": "LATENCY P50",
    "latencyP99": "LATENCY P99",
    "wallSeconds": "WALL",
}


def summarize(values: Sequence[float | int | None]) -> dict[str, float | None]:
    """Mean, sample standard deviation (None for fewer than two values), min and max of the values that are
    not None (all None when every one is)."""
    xs = [float(v) for v in values if v is not None]
    if not xs:
        return {"mean": None, "stdev": None, "min": None, "max": None}
    return {
        "mean": statistics.fmean(xs),
        "stdev": statistics.stdev(xs) if len(xs) > 1 else None,
        "min": min(xs),
        "max": max(xs),
    }


def aggregate(outcomes: Sequence[Outcome], kinds: dict[str, str]) -> list[dict[str, Any]]:
    """One entry per (workload, config), in first-seen order: the seeds, each metric's summary and the runs.
    ``kinds`` gives each workload's kind (scenario or trace)."""
    groups: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault((o["workload"], o["config"]), []).append(o)
    out = []
    for (workload, config), runs in groups.items():
        kind = kinds.get(workload, "scenario")
        metrics = [m for m in METRICS if _shown(m, kind)]
        out.append(
            {
                "workload": workload,
                "kind": kind,
                "config": config,
                "seeds": [r["seed"] for r in runs],
                "summary": {m: summarize([r[m] for r in runs]) for m in metrics},
                "runs": [{"seed": r["seed"], **{m: r[m] for m in metrics}} for r in runs],
            }
        )
    return out


def _shown(metric: str, kind: str) -> bool:
    if kind == "trace":
        return metric not in SCENARIO_ONLY
    return metric not in TRACE_ONLY


def to_json(groups: Sequence[dict[str, Any]]) -> str:
    """The JSON document of ``-o json``."""
    doc = {
        "spread": f"stdev: {SPREAD} (n - 1); null with one seed",
        "latency": "virtual seconds from creation to binding, nearest-rank percentiles",
        "results": list(groups),
    }
    return json.dumps(doc, indent=2) + "\n"


def _cell(metric: str, s: dict[str, float | None]) -> str:
    mean, sd = s["mean"], s["stdev"]
    if mean is None:
        return "-"
    if metric in PERCENT:
        text = f"{100 * mean:.2f}%"
        return text if sd is None else f"{text} ± {100 * sd:.2f}"
    if metric in ("placed", "pending", "preemptions"):
        text = f"{mean:.0f}" if mean == int(mean) else f"{mean:.1f}"
        return text if sd is None else f"{text} ± {sd:.1f}"
    if metric == "imbalance":
        return f"{mean:.4f}" if sd is None else f"{mean:.4f} ± {sd:.4f}"
    unit = "s"
    return f"{mean:.2f}{unit}" if sd is None else f"{mean:.2f}{unit} ± {sd:.2f}"


def cell(metric: str, value: float | int | None) -> str:
    """One value of ``metric`` as the table shows it (one run's, no spread)."""
    return _cell(metric, {"mean": None if value is None else float(value), "stdev": None})


def workload_tables(groups: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tables of ``-o table`` (and of the HTML page), one per workload in first-seen order: ``workload``,
    ``caption`` (its heading line), ``seeds``, ``metrics``, ``groups`` (its entries of ``groups``), and
    ``rows``, the header row then one row of cells per configuration."""
    by_workload: dict[str, list[dict[str, Any]]] = {}
    for g in groups:
        by_workload.setdefault(g["workload"], []).append(g)
    out = []
    for workload, rows in by_workload.items():
        seeds = rows[0]["seeds"]
        metrics = list(rows[0]["summary"])
        seed_text = f"seed {seeds[0]}" if len(seeds) == 1 else f"{len(seeds)} seeds, mean ± {SPREAD}"
        table = [["CONFIG", *(HEADERS[m] for m in metrics)]]
        table.extend([g["config"], *(_cell(m, g["summary"][m]) for m in metrics)] for g in rows)
        out.append(
            {
                "workload": workload,
                "kind": rows[0]["kind"],
                "caption": f"WORKLOAD {workload} ({rows[0]['kind']}, {seed_text})",
                "seeds": seeds,
                "metrics": metrics,
                "groups": rows,
                "rows": table,
            }
        )
    return out


def to_table(groups: Sequence[dict[str, Any]]) -> str:
    """One table per workload, a row per configuration, cells mean ± spread over its seeds."""
    blocks = []
    for t in workload_tables(groups):
        table = t["rows"]
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        lines = [t["caption"]]
        lines.extend("   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table)
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


__all__ = ["HEADERS", "SPREAD", "aggregate", "cell", "summarize", "to_json", "to_table", "workload_tables"]
