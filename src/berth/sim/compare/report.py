"""The HTML page of ``berth compare ... --report-html FILE``: one self-contained page for every workload and
configuration (`berth.sim.html_report.write_html`, drawn by ``drawCompare`` in ``berth-charts.js``).

Per workload: the comparison table (the cells of ``-o table``), then one chart per series of
`berth.sim.compare.series` overlaying the configurations on the same axes, one line per configuration: the
mean over its seeds of the runs' values at each point (a point where some runs have no value, past the end of
a shorter trace replay or while nothing of a resource is allocatable, is the mean of those that have one), then
every run's final values. The embedded JSON (``kind: "compare"``) carries the means, not the runs' series.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from berth.sim.compare.outcome import Outcome
from berth.sim.compare.runs import RunSpec
from berth.sim.compare.series import Series
from berth.sim.compare.table import HEADERS, SPREAD, cell, workload_tables

TITLE = "Berth comparison report"
TRACE_CHARTS = (
    ("allocation", "GPU allocation (allocated / GPU capacity)"),
    ("arrived", "Arrived GPU demand (of GPU capacity)"),
    ("fragmentation", "GPU fragmentation (fragmented share of idle GPU)"),
)
SCENARIO_CHARTS = (
    ("pending", "Pending pods"),
    ("scheduled", "Scheduled pods (cumulative)"),
    ("preemptions", "Preemption victims (cumulative)"),
)


def _values(record: Series, key: tuple[str, ...]) -> list[Any]:
    node: Any = record
    for k in key:
        node = node.get(k) if isinstance(node, dict) else None
    return list(node) if isinstance(node, list) else []


def mean_series(records: Sequence[Series], key: tuple[str, ...], xs: Sequence[float]) -> list[float | None]:
    """At each of ``xs``, the mean of the records' values of ``key`` there (None where none has one)."""
    at: dict[float, list[float]] = {x: [] for x in xs}
    for r in records:
        for x, v in zip(r["x"], _values(r, key), strict=False):
            if v is not None and x in at:
                at[x].append(float(v))
    return [statistics.fmean(at[x]) if at[x] else None for x in xs]


def _resources(records: Sequence[Series]) -> list[str]:
    seen: list[str] = []
    for r in records:
        seen.extend(k for k in r.get("utilisation", {}) if k not in seen)
    return seen


def report_data(
    groups: Sequence[dict[str, Any]], outcomes: Sequence[Outcome], runs: Sequence[RunSpec]
) -> dict[str, Any]:
    """The JSON embedded in the page: ``{"kind": "compare", "workloads": [...]}``, each workload with its
    table (``rows``: header then a row per configuration), its ``x`` (virtual seconds, or arrival numbers with
    ``xIndex``), its ``charts`` (``series``: one ``{name: config, values}`` per configuration, the mean over
    seeds at each x), the ``note`` saying so, and ``finals`` (a row per configuration and seed)."""
    every = {r.workload.label: r.series for r in runs}
    out = []
    for t in workload_tables(groups):
        label, kind = t["workload"], t["kind"]
        configs = [g["config"] for g in t["groups"]]
        records = {
            c: [
                o["series"] for o in outcomes if o["workload"] == label and o["config"] == c and "series" in o
            ]
            for c in configs
        }
        everything = [r for c in configs for r in records[c]]
        xs = sorted({x for r in everything for x in r["x"]})
        keys: list[tuple[tuple[str, ...], str, bool]]
        if kind == "trace":
            keys = [((k,), title, True) for k, title in TRACE_CHARTS]
        else:
            keys = [
                (("utilisation", r), f"{r} utilisation (requested / allocatable)", True)
                for r in _resources(everything)
            ]
            keys.extend(((k,), title, False) for k, title in SCENARIO_CHARTS)
        charts = [
            {
                "title": title,
                "key": ".".join(key),
                "percent": percent,
                "series": [{"name": c, "values": mean_series(records[c], key, xs)} for c in configs],
            }
            for key, title, percent in keys
        ]
        metrics = t["metrics"]
        finals = [["CONFIG", "SEED", *(HEADERS[m] for m in metrics)]]
        finals.extend(
            [g["config"], str(run["seed"]), *(cell(m, run[m]) for m in metrics)]
            for g in t["groups"]
            for run in g["runs"]
        )
        out.append(
            {
                "workload": label,
                "kind": kind,
                "caption": t["caption"],
                "seeds": t["seeds"],
                "rows": t["rows"],
                "x": xs,
                "xIndex": kind == "trace",
                "note": _note(kind, t["seeds"], xs, every.get(label)),
                "charts": charts,
                "finals": finals,
            }
        )
    return {"kind": "compare", "spread": SPREAD, "workloads": out}


def _note(kind: str, seeds: Sequence[int], xs: Sequence[float], every: float | None) -> str:
    over = f"its run (seed {seeds[0]})" if len(seeds) == 1 else f"the mean over its {len(seeds)} seeds"
    if kind == "trace":
        k = int(every or 1)
        where = "at every arrival" if k == 1 else f"every {k} arrivals"
        tail = (
            " Past the last arrival of a shorter replay the mean is over the seeds still replaying."
            if len(seeds) > 1
            else ""
        )
        return f"Each line is one configuration: {over}, {where} (x: arrivals).{tail}"
    step = xs[1] - xs[0] if len(xs) > 1 else (every or 0.0)
    return f"Each line is one configuration: {over}, every {step:g}s of virtual time."


def write_report(
    path: Path, groups: Sequence[dict[str, Any]], outcomes: Sequence[Outcome], runs: Sequence[RunSpec]
) -> None:
    """Write the comparison page to ``path``."""
    from berth.sim.html_report import write_html

    configs = list(dict.fromkeys(g["config"] for g in groups))
    workloads = list(dict.fromkeys(g["workload"] for g in groups))
    summary = (
        f"{len(outcomes)} runs: {len(workloads)} workload{'s' * (len(workloads) != 1)} under "
        f"{len(configs)} configuration{'s' * (len(configs) != 1)} ({', '.join(configs)}). Table cells: mean "
        f"± {SPREAD}. The charts overlay the configurations on the same axes, one line each."
    )
    write_html(path, report_data(groups, outcomes, runs), TITLE, summary)


__all__ = ["TITLE", "mean_series", "report_data", "write_report"]
