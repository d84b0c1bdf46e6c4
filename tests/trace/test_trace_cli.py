"""``berth trace openb`` through the CLI: a small generated trace with hand-computed results, emit, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from openb_helpers import pod_row, write_trace
from typer.testing import CliRunner

from berth.cli import app
from berth.sim.traces.openb import GPU_INDEX

runner = CliRunner()

NODES = ["n-0,16000,65536,2,T4", "n-1,16000,65536,1,P100"]
# 3000 milli of GPU on 3 GPUs: inflation 1.0 keeps the list as it is (every draw would pass the target)
PODS = [
    pod_row("p-a", 4000, 1, 600),
    pod_row("p-b", 4000, 1, 1000),
    pod_row("p-c", 4000, 1, 500),
    pod_row("p-d", 4000, 1, 900),
]


def run(*args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, ["trace", "openb", *args])
    return r.exit_code, r.stdout, r.stderr


def test_best_fit_run_report(tmp_path: Path) -> None:
    d = write_trace(tmp_path / "t", NODES, PODS)
    report = tmp_path / "r.json"
    code, out, err = run(
        str(d), "--policy", "BestFit", "--inflation", "1.0", "--seed", "1", "--report", str(report)
    )
    assert (code, err) == (0, "")
    assert "policy BestFit seed 1:" in out
    data = json.loads(report.read_text())
    assert data["podsArrived"] == 4
    assert data["gpuAllocationRatio"] + 0.0 == pytest.approx(data["series"]["gpuAllocationRatio"][-1])
    assert data["arrivedGpuRatio"] == 1.0
    assert data["podsScheduled"] + data["podsFailed"] == 4
    assert len(data["series"]["fragmentationRatio"]) == 4
    for key in ("wallSeconds", "cpuSeconds", "podsFailed"):
        assert key in data


def test_exact_allocation_in_fixed_order(tmp_path: Path) -> None:
    from berth.sim.traces.openb import load_nodes, load_pods
    from berth.sim.traces.replay import replay

    d = write_trace(tmp_path, NODES, PODS)
    nodes, pods = load_nodes(d), load_pods(d)
    result = replay(nodes, pods, pods, "BestFit", seed=0)
    # p-a 600: BestFit raw n-0 (12000/128000 + 1400/8000)/2 -> 86, n-1 (… + 400/8000)/2 -> 92: n-1 GPU 0
    # p-b whole: only n-0 (GPU 0); p-c 500: only n-0 GPU 1 (n-1 has 400 left); p-d 900: nowhere
    assert [(p.node, p.devices) for p in result.placements] == [
        ("n-1", (0,)),
        ("n-0", (0,)),
        ("n-0", (1,)),
        (None, ()),
    ]
    assert result.series_allocation == [0.2, 1600 / 3000, 2100 / 3000, 2100 / 3000]
    assert result.series_arrived == [0.2, 1600 / 3000, 2100 / 3000, 1.0]
    # typical pods: the four shapes, a quarter each. After p-a: n-1 [400] is all fragment for the 600, 1000,
    # 500 and 900 pods (400 of 2400 idle); n-0 idle has none
    assert result.series_fragmentation[0] == pytest.approx(400 / 2400)
    # at the end: n-0 [0, 500] (the 600 and 900 pods and the whole GPU cannot use 500, the 500 one can: 3/4 x 500)
    # and n-1 [400] (all of it): (375 + 400) / 900
    assert result.series_fragmentation[-1] == pytest.approx(775 / 900)
    assert (result.pods_scheduled, result.pods_failed) == (3, 1)


def test_emit_is_a_scenario(tmp_path: Path) -> None:
    d = write_trace(tmp_path, NODES, PODS)
    code, out, _ = run(str(d), "--emit", "--inflation", "1.0", "--seed", "5")
    assert code == 0
    docs = list(yaml.safe_load_all(out))
    assert [x["kind"] for x in docs] == ["Node", "Node", "Scenario"]
    steps = docs[2]["spec"]["steps"]
    assert [s["at"] for s in steps] == ["1s", "2s", "3s", "4s"]
    assert sorted(s["create"][0]["metadata"]["name"] for s in steps) == ["p-a", "p-b", "p-c", "p-d"]


def test_scheduler_config_picks_the_heaviest_gpu_score(tmp_path: Path) -> None:
    d = write_trace(tmp_path, NODES, PODS)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- plugins:\n    score:\n      enabled:\n      - {name: BestFitScore, weight: 10}\n"
        "      - {name: GpuPackingScore, weight: 1000}\n"
    )
    code, out, _ = run(str(d), "--scheduler-config", str(cfg), "--inflation", "1.0")
    assert code == 0
    assert out.startswith("policy GpuPacking seed 42:")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--policy", "Tetris"],
            'error: unknown policy "Tetris" (known: Random, DotProduct, GpuClustering, GpuPacking, BestFit, FGD)\n',
        ),
        (["--inflation", "0"], "error: --inflation must be > 0, got 0.0\n"),
        (["--inflation", "-1.5"], "error: --inflation must be > 0, got -1.5\n"),
        (["--nodes", "cpu"], 'error: --nodes must be gpu or all, got "cpu"\n'),
        (["--pod-list", "gpushare40"], None),
    ],
)
def test_bad_input_exits_2(tmp_path: Path, args: list[str], message: str | None) -> None:
    d = write_trace(tmp_path, NODES, PODS)
    code, out, err = run(str(d), *args)
    assert (code, out) == (2, "")
    if message is None:
        assert err == f"error: csv/openb_pod_list_gpushare40.csv: file not found in trace folder {d}\n"
    else:
        assert err == message


def test_missing_folder_and_bad_row(tmp_path: Path) -> None:
    code, _, err = run(str(tmp_path / "nope"))
    assert (code, err) == (
        2,
        f'error: trace folder "{tmp_path / "nope"}" does not exist or is not a directory\n',
    )
    d = write_trace(tmp_path / "t", NODES, [*PODS, pod_row("p-e", 4000, 1, "lots")])  # type: ignore[arg-type]
    code, _, err = run(str(d))
    assert (code, err) == (
        2,
        'error: csv/openb_pod_list_default.csv: line 6, column gpu_milli: invalid integer "lots"\n',
    )


def test_emitted_scenario_runs_under_berth_simulate(tmp_path: Path) -> None:
    d = write_trace(tmp_path / "t", NODES, PODS)
    code, out, _ = run(str(d), "--emit", "--inflation", "1.0", "--seed", "5")
    assert code == 0
    (tmp_path / "s.yaml").write_text(out)
    (tmp_path / "c.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n      enabled: [{name: Open-Gpu-Share}]\n"
        "    score:\n      disabled: [{name: '*'}]\n      enabled: [{name: BestFitScore, weight: 1000}]\n"
    )
    r = runner.invoke(
        app,
        ["simulate", str(tmp_path / "s.yaml"), "--scheduler-config", str(tmp_path / "c.yaml"), "-o", "json"],
    )
    assert r.exit_code == 0, r.stderr
    placed = {
        o["metadata"]["name"]: (
            o["spec"].get("nodeName"),
            (o["metadata"].get("annotations") or {}).get(GPU_INDEX),
        )
        for o in json.loads(r.stdout)["items"]
        if o["kind"] == "Pod"
    }
    # GPU 3000 milli for 3000 asked: whatever the order, 3 of the 4 pods fit (p-a 600 and p-d 900 cannot share)
    assert sum(1 for n, _ in placed.values() if n is not None) == 3
    assert all((n is None) == (i is None) for n, i in placed.values())
