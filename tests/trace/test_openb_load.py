"""Reading and checking the openb trace files, and the paper's replay workload."""

from __future__ import annotations

from pathlib import Path

import pytest
from openb_helpers import NODE_HEADER, pod_row, write_trace

from berth.scheduler.plugins.gpushare.state import GpuPod
from berth.sim.traces.openb import (
    TraceError,
    TraceNode,
    load_nodes,
    load_pods,
    node_object,
    pod_object,
    replay_workload,
)

NODES = ["n-1,32000,131072,2,T4", "n-0,64000,262144,4,V100M16"]
PODS = [
    pod_row("p-1", 4000, 1, 500),
    pod_row("p-0", 8000, 2, 1000, "V100M16|V100M32"),
    pod_row("p-2", 2000, 0, 0),
]


def test_load(tmp_path: Path) -> None:
    d = write_trace(tmp_path, NODES, PODS)
    assert load_nodes(d) == [
        TraceNode("n-1", 32000, 131072, 2, "T4"),
        TraceNode("n-0", 64000, 262144, 4, "V100M16"),
    ]
    assert load_pods(d) == [
        GpuPod("p-1", 4000, 16384 << 20, 500, 1),
        GpuPod("p-0", 8000, 16384 << 20, 1000, 2, ("V100M16", "V100M32")),
        GpuPod("p-2", 2000, 16384 << 20, 0, 0),
    ]


def test_five_column_pod_lists(tmp_path: Path) -> None:
    d = write_trace(tmp_path, NODES, [])
    (d / "csv" / "openb_pod_list_multigpu20.csv").write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,8,1000\n"
    )
    assert load_pods(d, "multigpu20") == [GpuPod("p", 1, 2 << 20, 1000, 8)]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            pod_row("p", 4000, 1, 1200),
            "csv/openb_pod_list_default.csv: line 3, column gpu_milli: 1200 is not between 0 and 1000",
        ),
        (
            pod_row("p", 4000, 2, 500),
            "csv/openb_pod_list_default.csv: line 3, column gpu_milli: 500 is a GPU share but num_gpu is 2",
        ),
        (
            pod_row("p", "x", 1, 500),
            'csv/openb_pod_list_default.csv: line 3, column cpu_milli: invalid integer "x"',
        ),
        ("p,1,2", "csv/openb_pod_list_default.csv: line 3: 3 fields, the header has 11"),
        (
            pod_row("p-1", 1, 0, 0),
            'csv/openb_pod_list_default.csv: line 3, column name: duplicate pod name "p-1"',
        ),
    ],
)
def test_bad_pod_rows(tmp_path: Path, row: str, message: str) -> None:
    d = write_trace(tmp_path, NODES, [PODS[0], row])
    with pytest.raises(TraceError) as e:
        load_pods(d)
    assert str(e.value) == message


def test_bad_node_row(tmp_path: Path) -> None:
    d = write_trace(tmp_path, ["n,1000,1,9,T4"], PODS)
    with pytest.raises(TraceError) as e:
        load_nodes(d)
    assert str(e.value) == "csv/openb_node_list_gpu_node.csv: line 2, column gpu: 9 is not between 0 and 8"


def test_missing_file_and_column(tmp_path: Path) -> None:
    d = write_trace(tmp_path, NODES, PODS)
    with pytest.raises(TraceError, match=r"csv/openb_pod_list_cpu050\.csv: file not found in trace folder"):
        load_pods(d, "cpu050")
    (d / "csv" / "openb_node_list_gpu_node.csv").write_text(NODE_HEADER.replace(",model", "") + "\n")
    with pytest.raises(TraceError) as e:
        load_nodes(d)
    assert str(e.value) == "csv/openb_node_list_gpu_node.csv: line 1: missing column(s) model"


def test_replay_workload_inflates_to_the_target() -> None:
    pods = [GpuPod(f"p{i}", 1000, 0, 500, 1) for i in range(4)] + [GpuPod("c", 1000, 0)]
    out = replay_workload(pods, 4000, 1.3, seed=3)
    # 4 x 500 = 2000 of a 5200 target: shares are added (500 each) while the total stays <= 5200 -> 6 more
    # (CPU pods drawn on the way are added too); the base pods come first, shuffled
    assert sorted(p.name for p in out[:5]) == ["c", "p0", "p1", "p2", "p3"]
    tuned = out[5:]
    assert [p.name.split("-tuned-")[1] for p in tuned] == [str(i) for i in range(len(tuned))]
    assert sum(p.total_gpu_milli for p in out) == 5000
    assert out == replay_workload(list(reversed(pods)), 4000, 1.3, seed=3)


def test_replay_workload_deflates_above_the_target() -> None:
    pods = [GpuPod(f"p{i}", 1000, 0, 1000, 1) for i in range(10)]
    out = replay_workload(pods, 4000, 1.0, seed=1)
    assert len(out) == 4
    with pytest.raises(TraceError, match="inflation must be > 0, got 0"):
        replay_workload(pods, 4000, 0, seed=1)


def test_objects() -> None:
    node = node_object(TraceNode("n", 32000, 1024, 2, "T4"))
    assert node["status"]["allocatable"] == {
        "cpu": "32000m",
        "memory": "1024Mi",
        "pods": "1001",
        "alibabacloud.com/gpu-count": "2",
        "alibabacloud.com/gpu-milli": "2000",
    }
    assert node["metadata"]["labels"] == {
        "kubernetes.io/hostname": "n",
        "alibabacloud.com/gpu-card-model": "T4",
    }
    pod = pod_object(GpuPod("p", 4000, 16384 << 20, 500, 1, ("T4", "P100")))
    assert pod["metadata"]["annotations"] == {
        "alibabacloud.com/gpu-milli": "500",
        "alibabacloud.com/gpu-count": "1",
        "alibabacloud.com/gpu-card-model": "T4|P100",
    }
    assert pod["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "4000m", "memory": "16384Mi"},
        "limits": {"cpu": "4000m", "memory": "16384Mi"},
    }
