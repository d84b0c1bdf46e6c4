"""Every run is deterministic in (workload, config, seed): the same figures in this process (--jobs 1), in worker
processes (--jobs 2) and on a dask.distributed cluster (a LocalCluster here, always closed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from compare_inputs import fit_config, packing_scenario, trace
from typer.testing import CliRunner

from berth.cli import app

runner = CliRunner()


def figures(out: str) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """The JSON results without the wall times (the only figure that may differ between runs)."""
    doc = json.loads(out)
    return [
        (g["workload"], g["config"], [{k: v for k, v in r.items() if k != "wallSeconds"} for r in g["runs"]])
        for g in doc["results"]
    ]


@pytest.fixture
def args(tmp_path: Path) -> list[str]:
    return [
        str(packing_scenario(tmp_path)),
        f"openb:{trace(tmp_path / 't')}?inflation=1.2",
        "--config",
        str(fit_config(tmp_path, "MostAllocated", "FGDScore")),
        "--config",
        str(fit_config(tmp_path, "LeastAllocated", "GpuPackingScore")),
        "--seeds",
        "1..3",
        "-o",
        "json",
    ]


def test_in_process_process_pool_and_dask_agree(args: list[str]) -> None:
    # the configs name a GPU policy for the trace (FGDScore, GpuPackingScore) beside NodeResourcesFit
    results = {}
    for jobs in ("1", "2"):
        r = runner.invoke(app, ["compare", *args, "--jobs", jobs])
        assert r.exit_code == 0, r.stderr
        results[jobs] = figures(r.stdout)
    from distributed import LocalCluster

    with LocalCluster(
        processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None, protocol="tcp://"
    ) as cluster:
        address = cluster.scheduler_address.removeprefix("tcp://")
        r = runner.invoke(app, ["compare", *args, "--executor", f"dask://{address}"])
    assert r.exit_code == 0, r.stderr
    results["dask"] = figures(r.stdout)
    assert results["1"] == results["2"] == results["dask"]
    # the two configs differ on the scenario, and both trace policies ran
    (scenario_most, scenario_least, trace_most, trace_least) = results["1"]
    assert [r["placed"] for r in scenario_most[2]] == [4, 4, 4]
    assert [r["placed"] for r in scenario_least[2]] == [3, 3, 3]
    assert trace_most[0].startswith("openb:") and len(trace_least[2]) == 3


def test_runs_do_not_depend_on_the_string_hash_seed(args: list[str]) -> None:
    """A remote worker is another interpreter, with its own PYTHONHASHSEED: the figures may not depend on it."""
    out = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        run = subprocess.run(
            [sys.executable, "-m", "berth", "compare", *args, "--jobs", "1"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        out.append(figures(run.stdout))
    assert out[0] == out[1]


def test_a_failing_run_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from berth.sim.compare import outcome

    def boom(*_: object) -> None:
        raise ValueError("no luck")

    monkeypatch.setattr(outcome, "_scenario", boom)
    path = packing_scenario(tmp_path)
    r = runner.invoke(app, ["compare", str(path), "--jobs", "1"])
    assert (r.exit_code, r.stdout) == (1, "")
    assert r.stderr == f'error: run of "{path}" under default with seed 0 failed: ValueError: no luck\n'
