"""``berth compare ... --report-html FILE``: one self-contained page for every workload and configuration; the
embedded series are, per configuration, the mean over seeds of what each run recorded; the table and JSON
output do not change."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest
from compare_inputs import fit_config, packing_scenario, trace
from typer.testing import CliRunner

from berth.cli import app
from berth.sim.compare import outcome, parse_config_arg, parse_workload
from berth.sim.compare.runs import RunSpec
from berth.sim.compare.series import MAX_POINTS, stride, trace_series
from berth.sim.html_report import embedded_data
from berth.sim.traces.command import OpenbOptions, run_openb

runner = CliRunner()


def compare(*args: str) -> tuple[str, str]:
    r = runner.invoke(app, ["compare", *args])
    assert r.exit_code == 0, r.stderr
    return r.stdout, r.stderr


def page_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = embedded_data(path.read_text())
    return data


def chart(workload: dict[str, Any], key: str) -> dict[str, list[float | None]]:
    (c,) = [c for c in workload["charts"] if c["key"] == key]
    return {s["name"]: s["values"] for s in c["series"]}


def recorded(workload: str, config: str, seed: int, series: float, until: float | None = None) -> Any:
    spec, _ = parse_config_arg(config)
    return outcome.run_one(RunSpec(parse_workload(workload), spec, seed, until, series))["series"]


def test_scenario_lines_are_the_mean_over_seeds(tmp_path: Path) -> None:
    scenario = str(packing_scenario(tmp_path))
    most, least = str(fit_config(tmp_path, "MostAllocated")), str(fit_config(tmp_path, "LeastAllocated"))
    page = tmp_path / "r.html"
    compare(
        scenario,
        "--config",
        most,
        "--config",
        least,
        "--seeds",
        "1..3",
        "--jobs",
        "1",
        "--report-html",
        str(page),
    )
    d = page_of(page)
    assert d["kind"] == "compare"
    (w,) = d["workloads"]
    assert (w["workload"], w["kind"], w["seeds"], w["xIndex"]) == (scenario, "scenario", [1, 2, 3], False)
    assert w["x"] == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]  # every 10 s (--sample's default) to 1m
    assert "mean over its 3 seeds" in w["note"]
    # MostAllocated packs p-1..p-3 onto one node, so the 4-CPU pod (at 1 s) fits: 3 then 7 of 12 CPUs;
    # LeastAllocated spreads them and the 4-CPU pod stays pending
    assert chart(w, "utilisation.cpu") == {most: [3 / 12] + [7 / 12] * 6, least: [3 / 12] * 7}
    assert chart(w, "pending") == {most: [0.0] * 7, least: [0.0] + [1.0] * 6}
    assert chart(w, "scheduled") == {most: [3.0] + [4.0] * 6, least: [3.0] * 7}
    assert chart(w, "preemptions") == {most: [0.0] * 7, least: [0.0] * 7}
    assert [c["key"] for c in w["charts"]] == [
        "utilisation.cpu",
        "utilisation.memory",
        "utilisation.pods",
        "pending",
        "scheduled",
        "preemptions",
    ]
    # each line is the mean over the seeds of what each run records
    for config in (most, least):
        runs = [recorded(scenario, config, seed, 10.0) for seed in (1, 2, 3)]
        assert all(r["x"] == w["x"] for r in runs)
        for key in ("pending", "scheduled", "preemptions"):
            assert chart(w, key)[config] == [
                statistics.fmean(v) for v in zip(*(r[key] for r in runs), strict=True)
            ]
        for resource in ("cpu", "memory", "pods"):
            values = zip(*(r["utilisation"][resource] for r in runs), strict=True)
            assert chart(w, f"utilisation.{resource}")[config] == [statistics.fmean(v) for v in values]
    # the final values of every run
    assert w["finals"][0][:3] == ["CONFIG", "SEED", "PLACED"]
    assert [(r[0], r[1], r[2], r[3]) for r in w["finals"][1:]] == [
        *((most, str(s), "4", "0") for s in (1, 2, 3)),
        *((least, str(s), "3", "1") for s in (1, 2, 3)),
    ]


def test_the_page_table_is_the_table_output(tmp_path: Path) -> None:
    scenario = str(packing_scenario(tmp_path))
    most, least = str(fit_config(tmp_path, "MostAllocated")), str(fit_config(tmp_path, "LeastAllocated"))
    page = tmp_path / "r.html"
    out, _ = compare(
        scenario,
        "--config",
        most,
        "--config",
        least,
        "--seeds",
        "1,2",
        "--jobs",
        "1",
        "--report-html",
        str(page),
    )
    (w,) = page_of(page)["workloads"]
    rows = w["rows"]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["   ".join(c.ljust(n) for c, n in zip(r, widths, strict=True)).rstrip() for r in rows]
    assert out == "\n".join([w["caption"], *lines]) + "\n"


def _no_wall(doc: dict[str, Any]) -> list[Any]:
    return [
        {
            **g,
            "summary": {k: v for k, v in g["summary"].items() if k != "wallSeconds"},
            "runs": [{k: v for k, v in r.items() if k != "wallSeconds"} for r in g["runs"]],
        }
        for g in doc["results"]
    ]


def _table_without_wall(out: str) -> list[str]:
    """The lines of ``-o table`` cut before the WALL column (the last; the other columns' widths do not depend
    on it)."""
    lines, cut = [], None
    for line in out.splitlines():
        if line.startswith("CONFIG"):
            cut = line.index("WALL")
        elif line.startswith("WORKLOAD") or not line:
            cut = None
        lines.append(line if cut is None else line[:cut])
    return lines


def test_output_is_the_same_with_and_without_the_page(tmp_path: Path) -> None:
    args = [
        str(packing_scenario(tmp_path)),
        f"openb:{trace(tmp_path / 't')}?inflation=1.2",
        "--config",
        str(fit_config(tmp_path, "MostAllocated", "FGDScore")),
        "--config",
        str(fit_config(tmp_path, "LeastAllocated", "GpuPackingScore")),
        "--seeds",
        "1,2",
        "--jobs",
        "1",
    ]
    plain, _ = compare(*args, "-o", "json")
    with_page, _ = compare(*args, "-o", "json", "--report-html", str(tmp_path / "r.html"))
    assert _no_wall(json.loads(plain)) == _no_wall(json.loads(with_page))
    assert set(json.loads(plain)) == set(json.loads(with_page))
    table, _ = compare(*args)
    table_with_page, _ = compare(*args, "--report-html", str(tmp_path / "r2.html"))
    assert _table_without_wall(table) == _table_without_wall(table_with_page)
    assert len(page_of(tmp_path / "r2.html")["workloads"]) == 2


def test_without_the_page_nothing_is_recorded(tmp_path: Path) -> None:
    spec, _ = parse_config_arg(str(fit_config(tmp_path, "MostAllocated")))
    run = outcome.run_one(RunSpec(parse_workload(str(packing_scenario(tmp_path))), spec, 1))
    assert "series" not in run
    trace_spec, _ = parse_config_arg("policy:BestFit")
    run = outcome.run_one(RunSpec(parse_workload(f"openb:{trace(tmp_path / 't')}"), trace_spec, 1))
    assert "series" not in run


def test_trace_lines_are_the_replay_series(tmp_path: Path) -> None:
    folder = trace(tmp_path / "t")
    spec = f"openb:{folder}?inflation=1.0"
    page = tmp_path / "r.html"
    compare(
        spec,
        "--config",
        "policy:BestFit",
        "--config",
        "policy:FGD",
        "--seeds",
        "3",
        "--jobs",
        "1",
        "--report-html",
        str(page),
    )
    (w,) = page_of(page)["workloads"]
    assert (w["kind"], w["xIndex"]) == ("trace", True)
    assert "seed 3" in w["note"] and "every arrival" in w["note"]
    for policy in ("BestFit", "FGD"):
        result = run_openb(OpenbOptions(folder, inflation=1.0, seed=3, policy=policy))
        assert w["x"] == list(range(1, len(result.series_allocation) + 1))
        assert chart(w, "allocation")[policy] == result.series_allocation
        assert chart(w, "arrived")[policy] == result.series_arrived
        assert chart(w, "fragmentation")[policy] == result.series_fragmentation
    assert w["finals"][0] == [
        "CONFIG",
        "SEED",
        "PLACED",
        "PENDING",
        "GPU ALLOC",
        "CPU ALLOC",
        "MEM ALLOC",
        "GPU FRAG",
        "IMBALANCE",
        "WALL",
    ]


def test_trace_mean_over_two_seeds(tmp_path: Path) -> None:
    folder = trace(tmp_path / "t")
    page = tmp_path / "r.html"
    compare(
        f"openb:{folder}",
        "--config",
        "policy:BestFit",
        "--seeds",
        "1,2",
        "--jobs",
        "1",
        "--report-html",
        str(page),
    )
    (w,) = page_of(page)["workloads"]
    runs = [run_openb(OpenbOptions(folder, seed=s, policy="BestFit")).series_allocation for s in (1, 2)]
    want = []
    for i in range(max(map(len, runs))):
        want.append(statistics.fmean(r[i] for r in runs if i < len(r)))
    assert chart(w, "allocation")["BestFit"] == want


def test_series_are_downsampled() -> None:
    assert stride(MAX_POINTS) == 1 and stride(MAX_POINTS + 1) == 2 and stride(10_800) == 22

    class Result:
        series_allocation = [i / 1000 for i in range(1, 1001)]
        series_arrived = series_allocation
        series_fragmentation = series_allocation

    s = trace_series(Result(), stride(1000))
    assert s["x"] == list(range(2, 1001, 2))
    assert s["allocation"] == [x / 1000 for x in s["x"]]


def test_long_scenarios_are_downsampled(tmp_path: Path) -> None:
    # 2 h sampled every 10 s: 721 samples, every other one kept
    s = recorded(str(packing_scenario(tmp_path)), str(fit_config(tmp_path, "MostAllocated")), 1, 10.0, 7200.0)
    assert s["x"] == [20.0 * i for i in range(361)]
    assert s["utilisation"]["cpu"] == [3 / 12] + [7 / 12] * 360


def test_page_is_self_contained(tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    compare(str(packing_scenario(tmp_path)), "--jobs", "1", "--report-html", str(page))
    text = page.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", text, re.IGNORECASE)
    assert "https://" not in text
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert text.count("<script") == 2
    assert "drawCompare" in text


def _without_wall(d: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(d))
    for w in out["workloads"]:
        w["rows"] = [r[:-1] for r in w["rows"]]  # WALL is the last column
        w["finals"] = [r[:-1] for r in w["finals"]]
    return out


def test_in_process_worker_processes_and_dask_agree(tmp_path: Path) -> None:
    args = [
        str(packing_scenario(tmp_path)),
        f"openb:{trace(tmp_path / 't')}?inflation=1.2",
        "--config",
        str(fit_config(tmp_path, "MostAllocated", "FGDScore")),
        "--config",
        str(fit_config(tmp_path, "LeastAllocated", "GpuPackingScore")),
        "--seeds",
        "1..3",
    ]
    pages = {}
    for jobs in ("1", "2"):
        page = tmp_path / f"r{jobs}.html"
        compare(*args, "--jobs", jobs, "--report-html", str(page))
        pages[jobs] = _without_wall(page_of(page))
    from distributed import LocalCluster

    with LocalCluster(
        processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None, protocol="tcp://"
    ) as cluster:
        page = tmp_path / "dask.html"
        address = cluster.scheduler_address.removeprefix("tcp://")
        compare(*args, "--executor", f"dask://{address}", "--report-html", str(page))
    pages["dask"] = _without_wall(page_of(page))
    assert pages["1"] == pages["2"] == pages["dask"]
    assert [w["kind"] for w in pages["1"]["workloads"]] == ["scenario", "trace"]


@pytest.fixture
def no_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(spec: object) -> None:
        raise AssertionError(f"a run started: {spec}")

    monkeypatch.setattr(outcome, "run_one", refuse)
    import berth.sim.compare.executor as executor

    monkeypatch.setattr(executor, "run_one", refuse)


@pytest.mark.parametrize("value", ["0s", "-5s", "soon"])
@pytest.mark.usefixtures("no_runs")
def test_bad_sample_exits_2_before_any_run(tmp_path: Path, value: str) -> None:
    page = tmp_path / "r.html"
    r = runner.invoke(
        app,
        [
            "compare",
            str(packing_scenario(tmp_path)),
            "--jobs",
            "1",
            "--report-html",
            str(page),
            "--sample",
            value,
        ],
    )
    assert (r.exit_code, r.stdout) == (2, "")
    (line,) = r.stderr.splitlines()
    assert line.startswith("error: --sample: ")
    assert not page.exists()


@pytest.mark.usefixtures("no_runs")
def test_missing_folder_exits_2_before_any_run(tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "r.html"
    r = runner.invoke(
        app, ["compare", str(packing_scenario(tmp_path)), "--jobs", "1", "--report-html", str(target)]
    )
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.splitlines() == [
        f'error: --report-html: cannot write "{target}": directory "{target.parent}" does not exist'
    ]
