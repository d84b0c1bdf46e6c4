"""``berth compare`` on a small generated openb trace: two policies, two seeds; the figures are those of
``berth trace openb``; the table and JSON output shapes."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from compare_inputs import fit_config, packing_scenario, trace
from typer.testing import CliRunner

from berth.cli import app
from berth.sim.traces.command import OpenbOptions, run_openb

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, ["compare", *args, "--jobs", "1"])
    return r.exit_code, r.stdout, r.stderr


def test_two_policies_two_seeds_match_trace_openb(tmp_path: Path) -> None:
    folder = trace(tmp_path / "t")
    spec = f"openb:{folder}?inflation=1.0"
    code, out, err = invoke(
        spec, "--config", "policy:BestFit", "--config", "policy:fgd", "--seeds", "3,4", "-o", "json"
    )
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert [(g["workload"], g["kind"], g["config"], g["seeds"]) for g in doc["results"]] == [
        (spec, "trace", "BestFit", [3, 4]),
        (spec, "trace", "FGD", [3, 4]),
    ]
    for g in doc["results"]:
        gpu = []
        for r in g["runs"]:
            report = run_openb(
                OpenbOptions(folder, inflation=1.0, seed=r["seed"], policy=g["config"])
            ).report(series=False)
            assert r["placed"] == report["podsScheduled"]
            assert r["pending"] == report["podsFailed"]
            assert r["gpuAllocation"] == report["gpuAllocationRatio"]
            assert r["fragmentation"] == report["fragmentationRatio"]
            assert 0 < r["cpuAllocation"] < 1 and 0 < r["memoryAllocation"] < 1
            gpu.append(r["gpuAllocation"])
        assert g["summary"]["gpuAllocation"] == {
            "mean": pytest.approx(statistics.fmean(gpu)),
            "stdev": pytest.approx(statistics.stdev(gpu)),
            "min": min(gpu),
            "max": max(gpu),
        }
        assert set(g["summary"]) == {
            "placed",
            "pending",
            "gpuAllocation",
            "cpuAllocation",
            "memoryAllocation",
            "fragmentation",
            "imbalance",
            "wallSeconds",
        }


def test_trace_cpu_and_memory_allocation_are_exact(tmp_path: Path) -> None:
    # one node, two pods that both fit: 4000 + 2000 of 16000 milli CPU, 2 x 8 GiB of 64 GiB
    folder = trace(tmp_path / "t")
    (folder / "csv" / "openb_node_list_gpu_node.csv").write_text(
        "sn,cpu_milli,memory_mib,gpu,model\nn-0,16000,65536,2,T4\n"
    )
    pods = (folder / "csv" / "openb_pod_list_default.csv").read_text().splitlines()[:3]
    (folder / "csv" / "openb_pod_list_default.csv").write_text("\n".join(pods) + "\n")
    code, out, _ = invoke(f"openb:{folder}?inflation=0.8", "--config", "policy:BestFit", "-o", "json")
    assert code == 0
    (run,) = json.loads(out)["results"][0]["runs"]
    assert (run["placed"], run["pending"]) == (2, 0)
    assert (run["cpuAllocation"], run["memoryAllocation"], run["imbalance"]) == (
        6000 / 16000,
        16384 / 65536,
        0.0,
    )
    assert run["gpuAllocation"] == 1600 / 2000


def test_table_one_block_per_workload_one_row_per_config(tmp_path: Path) -> None:
    folder = trace(tmp_path / "t")
    scen = packing_scenario(tmp_path)
    most = fit_config(tmp_path, "MostAllocated")
    code, out, err = invoke(str(scen), "--config", str(most), "--seeds", "1..2")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"WORKLOAD {scen} (scenario, 2 seeds, mean ± sample standard deviation over seeds)"
    assert lines[1].split() == [
        "CONFIG",
        "PLACED",
        "PENDING",
        "CPU",
        "ALLOC",
        "MEM",
        "ALLOC",
        "IMBALANCE",
        "PREEMPTED",
        "LATENCY",
        "P50",
        "LATENCY",
        "P99",
        "WALL",
    ]
    assert lines[2].startswith(
        f"{most}   4 ± 0.0   0 ± 0.0   58.33% ± 0.00   16.67% ± 0.00   0.4249 ± 0.0000"
    )
    assert len(lines) == 3
    code, out, _ = invoke(f"openb:{folder}", "--config", "policy:FGD", "--config", "policy:Random")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"WORKLOAD openb:{folder} (trace, seed 42)"
    assert "GPU ALLOC" in lines[1] and "GPU FRAG" in lines[1] and "LATENCY" not in lines[1]
    assert [line.split()[0] for line in lines[2:]] == ["FGD", "Random"]
    assert "±" not in out  # one seed: no spread


def test_json_document_shape(tmp_path: Path) -> None:
    code, out, _ = invoke(str(packing_scenario(tmp_path)), "-o", "json")
    assert code == 0
    doc: dict[str, Any] = json.loads(out)
    assert set(doc) == {"spread", "latency", "results"}
    assert "sample standard deviation" in doc["spread"]
    (g,) = doc["results"]
    assert set(g) == {"workload", "kind", "config", "seeds", "summary", "runs"}
    assert (g["config"], g["seeds"]) == ("default", [0])
    assert g["summary"]["placed"] == {"mean": 3.0, "stdev": None, "min": 3.0, "max": 3.0}
    assert list(g["runs"][0]) == [
        "seed",
        "placed",
        "pending",
        "cpuAllocation",
        "memoryAllocation",
        "imbalance",
        "preemptions",
        "latencyP50",
        "latencyP99",
        "wallSeconds",
    ]
