"""``berth compare`` on tiny scenarios: exact placed/pending/allocation/imbalance/preemptions/latency."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from compare_inputs import fit_config, node, pod, scenario, write
from compare_inputs import packing_scenario as packing
from typer.testing import CliRunner

from berth.cli import app
from berth.sim.compare.outcome import percentile

runner = CliRunner()


def compare(*args: str) -> dict[str, Any]:
    r = runner.invoke(app, ["compare", *args, "-o", "json", "--jobs", "1"])
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def runs(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for g in doc["results"]:
        out[g["config"]] = [{k: v for k, v in r.items() if k != "wallSeconds"} for r in g["runs"]]
    return out


def test_most_allocated_packs_and_least_allocated_spreads(tmp_path: Path) -> None:
    most, least = fit_config(tmp_path, "MostAllocated"), fit_config(tmp_path, "LeastAllocated")
    doc = compare(str(packing(tmp_path)), "--config", str(most), "--config", str(least), "--seeds", "1..3")
    by = runs(doc)
    # MostAllocated: p-1..p-3 on one node (3 of 4 CPUs), the 4-CPU pod on another, the third empty:
    # utilisation 0.75, 1, 0 -> population std-dev sqrt(((0.75-7/12)^2 + (1-7/12)^2 + (7/12)^2) / 3)
    imbalance = ((1 / 6) ** 2 + (5 / 12) ** 2 + (7 / 12) ** 2) ** 0.5 / 3**0.5
    packed = {
        "placed": 4,
        "pending": 0,
        "cpuAllocation": 7 / 12,
        "memoryAllocation": 4 / 24,
        "imbalance": pytest.approx(imbalance),
        "preemptions": 0,
        "latencyP50": 0.0,
        "latencyP99": 0.0,
    }
    # LeastAllocated: one 1-CPU pod per node; the 4-CPU pod fits nowhere
    spread = {
        "placed": 3,
        "pending": 1,
        "cpuAllocation": 3 / 12,
        "memoryAllocation": 3 / 24,
        "imbalance": 0.0,
        "preemptions": 0,
        "latencyP50": 0.0,
        "latencyP99": 0.0,
    }
    assert by[str(most)] == [{"seed": s, **packed} for s in (1, 2, 3)]
    assert by[str(least)] == [{"seed": s, **spread} for s in (1, 2, 3)]
    summary = doc["results"][0]["summary"]
    assert summary["placed"] == {"mean": 4.0, "stdev": 0.0, "min": 4.0, "max": 4.0}
    assert summary["cpuAllocation"]["mean"] == pytest.approx(7 / 12)
    assert doc["results"][1]["summary"]["pending"]["mean"] == 1.0


def test_latency_is_virtual_seconds_from_creation_to_binding(tmp_path: Path) -> None:
    # b waits for the node added at 30 s: latencies 0 (a) and 30 (b)
    path = write(
        tmp_path / "wait.yaml",
        [
            node("n-1", cpu="1"),
            pod("a", "1"),
            pod("b", "1"),
            scenario("grow", [("30s", [node("n-2", cpu="1")])]),
        ],
    )
    (run,) = runs(compare(str(path)))["default"]
    assert run == {
        "seed": 0,
        "placed": 2,
        "pending": 0,
        "cpuAllocation": 1.0,
        "memoryAllocation": 2 / 16,
        "imbalance": 0.0,
        "preemptions": 0,
        "latencyP50": 0.0,
        "latencyP99": 30.0,
    }


def test_preemption_victims_are_counted(tmp_path: Path) -> None:
    classes = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
        for n, v in (("low", 10), ("high", 1000))
    ]
    path = write(
        tmp_path / "preempt.yaml",
        [
            *classes,
            node("n-1", cpu="2"),
            pod("low-1", "1", priority="low"),
            pod("low-2", "1", priority="low"),
            scenario("urgent", [("10s", [pod("urgent", "2", priority="high")])], until="5m"),
        ],
    )
    (run,) = runs(compare(str(path)))["default"]
    # both low pods are victims; they leave after their 30 s grace period and the urgent pod binds at 40 s
    assert run["preemptions"] == 2
    assert (run["placed"], run["pending"]) == (1, 0)
    assert (run["latencyP50"], run["latencyP99"]) == (0.0, 30.0)


def test_until_ends_the_runs_early(tmp_path: Path) -> None:
    path = write(
        tmp_path / "wait.yaml",
        [
            node("n-1", cpu="1"),
            pod("a", "1"),
            pod("b", "1"),
            scenario("grow", [("30s", [node("n-2", cpu="1")])]),
        ],
    )
    (run,) = runs(compare(str(path), "--until", "10s"))["default"]
    assert (run["placed"], run["pending"], run["latencyP99"]) == (1, 1, 0.0)


@pytest.mark.parametrize(
    ("values", "p50", "p99"),
    [
        ([], None, None),
        ([5.0], 5.0, 5.0),
        ([0.0, 30.0], 0.0, 30.0),
        ([float(i) for i in range(1, 101)], 50.0, 99.0),
    ],
)
def test_nearest_rank_percentiles(values: list[float], p50: float | None, p99: float | None) -> None:
    assert (percentile(values, 50), percentile(values, 99)) == (p50, p99)
