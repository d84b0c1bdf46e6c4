"""Smoke test of benchmarks/scheduler_perf.py: every workload at a toy size, exact counts, result keys."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import perf_workloads  # noqa: E402
import report  # noqa: E402
import scheduler_perf  # noqa: E402

RESULT_KEYS = {
    "workload",
    "nodes",
    "initPods",
    "initPodsScheduled",
    "measuredPods",
    "measuredPodsScheduled",
    "attempts",
    "podCountsScaledWithNodes",
    "setupWallSeconds",
    "schedulingLoopSeconds",
    "podsPerSecondLoop",
    "microsecondsPerPod",
    "wallSecondsIncludingStoreAndKubelet",
    "podsPerSecondWall",
    "targetPodsPerSecond",
    "kubeCIFloorPodsPerSecond",
    "meetsTarget",
    "peakRSSMiB",
}

# at 20 of 5000 nodes every pod count scales by 1/250
TOY = {
    "SchedulingBasic": (4, 40),
    "SchedulingPodAntiAffinity": (4, 8),
    "SchedulingPodAffinity": (20, 20),
    "SchedulingPreferredPodAffinity": (20, 20),
    "SchedulingPreferredPodAntiAffinity": (20, 20),
    "SchedulingNodeAffinity": (20, 40),
    "TopologySpreading": (20, 20),
    "MixedSchedulingBasePod": (40, 20),
}


@pytest.fixture
def results_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Send result files to a temporary directory instead of benchmarks/results."""
    monkeypatch.setattr(report, "RESULTS", tmp_path)
    monkeypatch.setattr(report, "_run", {"slug": "", "results": None})  # no arguments parsed yet
    return tmp_path


def test_the_issue_workloads_at_their_sizes() -> None:
    sizes = {
        name: (w.nodes, w.init_pods, w.measured.count, w.target, w.kube_floor)
        for name, w in perf_workloads.WORKLOADS.items()
    }
    assert sizes == {
        "SchedulingBasic": (5000, 1000, 10000, 3000, 680),
        "SchedulingPodAntiAffinity": (5000, 1000, 2000, 600, 60),
        "SchedulingPodAffinity": (5000, 5000, 5000, 350, 35),
        "SchedulingPreferredPodAffinity": (5000, 5000, 5000, 900, 90),
        "SchedulingPreferredPodAntiAffinity": (5000, 5000, 5000, 900, 90),
        "SchedulingNodeAffinity": (5000, 5000, 10000, 2200, 220),
        "TopologySpreading": (5000, 5000, 5000, None, 460),
        "MixedSchedulingBasePod": (5000, 10000, 5000, 1400, 140),
    }


@pytest.mark.parametrize("name", list(TOY))
def test_workload_at_toy_size(name: str) -> None:
    res = scheduler_perf.run_workload(perf_workloads.WORKLOADS[name], nodes=20)
    init, measured = TOY[name]
    assert set(res) == RESULT_KEYS
    assert (res["workload"], res["nodes"], res["podCountsScaledWithNodes"]) == (name, 20, True)
    assert (res["initPods"], res["initPodsScheduled"]) == (init, init)
    assert (res["measuredPods"], res["measuredPodsScheduled"]) == (measured, measured)


def test_shapes_follow_the_templates() -> None:
    setup, measured = perf_workloads.build(perf_workloads.WORKLOADS["MixedSchedulingBasePod"], nodes=2)
    nodes = [o for o in setup if o["kind"] == "Node"]
    assert [n["metadata"]["labels"] for n in nodes[:2]] == [
        {"kubernetes.io/hostname": "scheduler-perf-0", "topology.kubernetes.io/zone": "zone1"},
        {"kubernetes.io/hostname": "scheduler-perf-1", "topology.kubernetes.io/zone": "zone1"},
    ]
    assert nodes[0]["status"]["allocatable"] == {"cpu": "4", "memory": "32Gi", "pods": "110"}
    init: list[dict[str, Any]] = [o for o in setup if o["kind"] == "Pod"]
    assert [(p["metadata"]["namespace"], p["metadata"].get("labels")) for p in init] == [
        ("sched-0", None),
        ("sched-0", {"color": "blue"}),
        ("sched-0", {"color": "green"}),
        ("sched-0", {"color": "red"}),
        ("sched-0", {"color": "yellow"}),
    ]
    anti = init[2]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti == [
        {
            "labelSelector": {"matchLabels": {"color": "green"}},
            "topologyKey": "kubernetes.io/hostname",
            "namespaces": ["sched-1", "sched-0"],
        }
    ]
    assert measured[0]["spec"]["containers"] == [
        {
            "image": "registry.k8s.io/pause:3.10.1",
            "name": "pause",
            "ports": [{"containerPort": 80}],
            "resources": {
                "limits": {"cpu": "100m", "memory": "500Mi"},
                "requests": {"cpu": "100m", "memory": "500Mi"},
            },
        }
    ]
    _, spread = perf_workloads.build(perf_workloads.WORKLOADS["TopologySpreading"], nodes=5)
    assert spread[0]["spec"]["topologySpreadConstraints"] == [
        {
            "maxSkew": 5,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"color": "blue"}},
        }
    ]


def test_cli_writes_the_result_json(results_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scheduler_perf.main(["schedulingbasic", "--nodes", "10"])
    # a non-default --nodes writes beside the recorded result, never over it
    assert not (results_dir / "scheduler_perf_SchedulingBasic.json").exists()
    data = json.loads((results_dir / "scheduler_perf_SchedulingBasic-nodes10.json").read_text())
    assert set(data) == RESULT_KEYS
    assert (data["measuredPods"], data["measuredPodsScheduled"], data["targetPodsPerSecond"]) == (
        20,
        20,
        3000,
    )
    assert "== SchedulingBasic:" in capsys.readouterr().out


def test_scale_series_in_process(results_dir: Path) -> None:
    out = scheduler_perf.scale_series(
        perf_workloads.WORKLOADS["SchedulingNodeAffinity"], (10, 20), isolate=False
    )
    assert [(s["nodes"], s["initPods"], s["measuredPods"]) for s in out["series"]] == [
        (10, 10, 20),
        (20, 20, 40),
    ]
    assert set(out["series"][0]) == {
        "nodes",
        "initPods",
        "measuredPods",
        "podsPerSecondLoop",
        "microsecondsPerPod",
        "microsecondsPerPodPer1000Nodes",
        "costGrowthVsFirst",
        "nodeGrowthVsFirst",
        "peakRSSMiB",
    }
    saved = json.loads((results_dir / "scheduler_perf_SchedulingNodeAffinity_scale.json").read_text())
    assert saved == out
