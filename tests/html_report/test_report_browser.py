"""The HTML report in headless Chromium (Debian's /usr/bin/chromium and chromedriver, through Selenium):
the charts render with a non-zero size and the expected number of series; screenshots go to
benchmarks/results/screens/. Skipped, with the reason, where Chromium, chromedriver or selenium is missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from berth.cli import app
from browser_helpers import SCREENS, chromium, missing

EXAMPLES = Path(__file__).parents[2] / "examples"
REASON = missing()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"browser test skipped: {REASON}")

CHARTS = """
return Array.from(document.querySelectorAll("svg.berth-chart")).map((svg) => {
  const box = svg.getBoundingClientRect();
  return {
    title: svg.getAttribute("aria-label"),
    width: box.width,
    height: box.height,
    series: Number(svg.dataset.series),
    paths: svg.querySelectorAll("path.series").length,
    cells: svg.querySelectorAll("rect[fill]").length,
  };
});
"""


def _open(tmp_path: Path, page: Path, screen: str) -> list[dict[str, Any]]:
    with chromium(tmp_path / "profile", 1400, 1000) as driver:
        driver.get(page.as_uri())
        assert driver.execute_script("return document.body.dataset.rendered") == "true"
        charts: list[dict[str, Any]] = driver.execute_script(CHARTS)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1400, "height": min(int(height) + 20, 8000), "deviceScaleFactor": 1, "mobile": False},
        )
        SCREENS.mkdir(parents=True, exist_ok=True)
        assert driver.save_screenshot(str(SCREENS / screen))
    return charts


def test_simulation_report_renders(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    r = CliRunner().invoke(
        app,
        [
            "simulate",
            str(EXAMPLES / "elasticquota"),
            "--scheduler-config",
            str(EXAMPLES / "elasticquota-scheduler-config.yaml"),
            "--report-html",
            str(page),
            "-q",
        ],
    )
    assert r.exit_code == 0, r.stderr
    charts = _open(tmp_path, page, "report-simulate.png")
    by_title = {c["title"]: c for c in charts}
    for c in charts:
        assert c["width"] > 0 and c["height"] > 0, c
    assert by_title["Cluster"]["series"] == by_title["Cluster"]["paths"] == 3  # cpu, memory, pods
    assert by_title["Pending pods"]["paths"] == 1
    assert by_title["Preemptions and evictions (cumulative)"]["paths"] == 3
    assert by_title["ElasticQuota team-a/team-a: cpu"]["paths"] == 3  # used, min, max
    assert by_title["Reservation occupancy: cpu"]["paths"] == 3
    heat = by_title["Requested / allocatable per node"]
    assert heat["cells"] == 2 * 3  # 2 nodes x cpu, memory, pods
    assert (SCREENS / "report-simulate.png").stat().st_size > 10_000


def test_trace_report_renders(tmp_path: Path) -> None:
    from openb_helpers import pod_row, write_trace

    nodes = [f"n-{i},16000,65536,{1 + i % 4},T4" for i in range(12)]
    pods = [pod_row(f"p-{i}", 2000, 1, 300 + 100 * (i % 7)) for i in range(40)]
    folder = write_trace(tmp_path / "t", nodes, pods)
    page = tmp_path / "trace.html"
    r = CliRunner().invoke(app, ["trace", "openb", str(folder), "--report-html", str(page), "-q"])
    assert r.exit_code == 0, r.stderr
    charts = _open(tmp_path, page, "report-trace.png")
    assert len(charts) == 2
    line, heat = charts
    assert line["paths"] == 3 and line["width"] > 0 and line["height"] > 0
    assert heat["cells"] == 12  # 12 nodes x gpu


def test_compare_report_renders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compare_inputs import fit_config, node, pod, scenario, write
    from openb_helpers import pod_row, write_trace

    monkeypatch.chdir(tmp_path)  # short workload and config names in the page
    nodes = [f"n-{i},16000,65536,{1 + i % 4},T4" for i in range(12)]
    pods = [pod_row(f"p-{i}", 2000, 1, 300 + 100 * (i % 7)) for i in range(40)]
    write_trace(tmp_path / "trace", nodes, pods)
    # 1-CPU pods every 10 s, a 4-CPU pod every 30 s: it fits only where the small ones were packed
    waves = [
        (
            f"{10 * k}s",
            [pod(f"w{k}-{i}", "1") for i in range(2)] + ([pod(f"big-{k}", "4")] if k % 3 == 0 else []),
        )
        for k in range(1, 7)
    ]
    write(
        tmp_path / "waves.yaml", [*(node(f"n-{i}") for i in range(5)), scenario("waves", waves, until="2m")]
    )
    fit_config(tmp_path, "MostAllocated", "FGDScore")
    fit_config(tmp_path, "LeastAllocated", "GpuPackingScore")
    page = tmp_path / "compare.html"
    r = CliRunner().invoke(
        app,
        [
            "compare",
            "waves.yaml",
            "openb:trace",
            "--config",
            "mostallocated.yaml",
            "--config",
            "leastallocated.yaml",
            "--seeds",
            "1..3",
            "--jobs",
            "1",
            "--report-html",
            str(page),
            "-q",
        ],
    )
    assert r.exit_code == 0, r.stderr
    charts = _open(tmp_path, page, "report-compare.png")
    # the scenario: cpu, memory and pods utilisation, pending, scheduled, preemptions; the trace: 3 GPU charts
    assert len(charts) == 6 + 3
    for c in charts:
        assert c["width"] > 0 and c["height"] > 0, c
        assert c["series"] == c["paths"] == 2, c  # one line per configuration
    assert (SCREENS / "report-compare.png").stat().st_size > 10_000
