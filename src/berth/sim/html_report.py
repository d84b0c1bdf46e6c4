"""The self-contained HTML report of a run (``--report-html``): one file that opens offline.

The data (a `Timeline`'s, or a trace replay's series) is embedded as JSON in
``<script type="application/json" id="berth-data">`` so that tests and tools read it back exactly; the chart
code (``berth/assets/berth-charts.js``, dependency-free SVG) and its stylesheet are inlined from the package
data, read through importlib.resources so that ``berth serve`` can serve the same files.
"""

from __future__ import annotations

import html
import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["asset_text", "embedded_data", "render_html", "trace_data", "write_html"]

DATA_ID = "berth-data"
_DIGITS = re.compile(r"(\d+)")


def asset_text(name: str) -> str:
    """A file of ``berth/assets`` (package data)."""
    return (files("berth") / "assets" / name).read_text(encoding="utf-8")


def _json_for_script(data: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</`` and no ``<!--``)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\u0021--")


def render_html(data: dict[str, Any], title: str, summary: str = "") -> str:
    """The report page."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>\n{asset_text('berth-charts.css')}{asset_text('berth-report.css')}</style>\n"
        "</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n"
        f'<p class="summary">{html.escape(summary)}</p>\n'
        '<main id="berth-report"></main>\n'
        f'<script type="application/json" id="{DATA_ID}">{_json_for_script(data)}</script>\n'
        f"<script>\n{asset_text('berth-charts.js')}</script>\n"
        "</body>\n</html>\n"
    )


def write_html(path: Path, data: dict[str, Any], title: str, summary: str = "") -> None:
    """Write the report page to ``path``."""
    path.write_text(render_html(data, title, summary), encoding="utf-8")


def embedded_data(page: str) -> Any:
    """The JSON embedded in a report page (what tests compare with the run's figures)."""
    start_tag = f'<script type="application/json" id="{DATA_ID}">'
    start = page.index(start_tag) + len(start_tag)
    end = page.index("</script>", start)
    return json.loads(page[start:end])


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key putting digit runs in numeric order: ``n2`` < ``n10``."""
    return tuple((1, int(p)) if p.isdigit() else (0, p) for p in _DIGITS.split(name) if p)


def trace_data(result: Any, nodes: list[Any] | None = None) -> dict[str, Any]:
    """The embedded data of a trace replay report: its per-arrival (or, timed, per-second) series and, when
    the nodes are given, the final GPU / CPU placement per node (binned above 500 nodes)."""
    from berth.sim.timeline import HEATMAP_MAX_ROWS

    data: dict[str, Any] = {
        "kind": "trace",
        "policy": result.policy,
        "seed": result.seed,
        "time": list(result.series_time) if result.timed else [],
        "allocation": list(result.series_allocation),
        "arrived": list(result.series_arrived),
        "fragmentation": list(result.series_fragmentation),
        "podsScheduled": result.pods_scheduled,
        "podsFailed": result.pods_failed,
        "placement": {
            "resources": [],
            "nodes": [],
            "nodesPerRow": 1,
            "nodeCount": 0,
            "requested": [],
            "allocatable": [],
        },
    }
    if nodes:
        data["placement"] = _trace_placement(result, nodes, HEATMAP_MAX_ROWS)
    return data


def _trace_placement(result: Any, nodes: list[Any], max_rows: int) -> dict[str, Any]:
    """Per node (natural name order): the GPUs the pods placed on it use (distinct device indices) of its
    GPUs; ``podsPlaced`` counts the pods placed on each node."""
    names = sorted((n.name for n in nodes), key=natural_key)
    index = {name: i for i, name in enumerate(names)}
    gpus = {n.name: int(n.gpu) for n in nodes}
    used: dict[str, set[int]] = {}
    pods = np.zeros(len(names), dtype=np.int64)
    for p in result.placements:
        if p.node is not None and p.node in index:
            used.setdefault(p.node, set()).update(p.devices)
            pods[index[p.node]] += 1
    n = len(names)
    size = -(-n // max_rows) if n > max_rows else 1
    rows: list[str] = []
    requested: list[list[int]] = []
    allocatable: list[list[int]] = []
    for start in range(0, n, size):
        stop = min(n, start + size)
        chunk = names[start:stop]
        rows.append(names[start] if size == 1 else f"{names[start]} … {names[stop - 1]}")
        requested.append([sum(len(used.get(m, ())) for m in chunk)])
        allocatable.append([sum(gpus[m] for m in chunk)])
    return {
        "resources": ["gpu"],
        "podsPlaced": [int(v) for v in pods],
        "nodes": rows,
        "nodesPerRow": size,
        "nodeCount": n,
        "requested": requested,
        "allocatable": allocatable,
    }
