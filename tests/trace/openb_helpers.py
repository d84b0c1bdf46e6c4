"""Builders for small generated openb traces and GPU clusters."""

from __future__ import annotations

from pathlib import Path

from berth.scheduler.plugins.gpushare.state import GpuCluster, GpuPod

POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model"


def write_trace(root: Path, nodes: list[str], pods: list[str], pod_list: str = "default") -> Path:
    """A trace folder with the GPU node list and one pod list (rows without their header)."""
    (root / "csv").mkdir(parents=True, exist_ok=True)
    (root / "csv" / "openb_node_list_gpu_node.csv").write_text("\n".join([NODE_HEADER, *nodes]) + "\n")
    (root / "csv" / f"openb_pod_list_{pod_list}.csv").write_text("\n".join([POD_HEADER, *pods]) + "\n")
    return root


def pod_row(name: str, cpu: int, gpus: int, milli: int, spec: str = "") -> str:
    """One pod CSV row (16 GiB memory)."""
    return f"{name},{cpu},16384,{gpus},{milli},{spec},LS,Running,0,100,0"


def three_nodes() -> GpuCluster:
    """n0: 2 idle T4; n1: 2 T4, a 500m share on GPU 0; n2: 4 V100, an 800m share on GPU 1 and a whole GPU 3."""
    c = GpuCluster.build(
        [
            ("n0", 32000, 1 << 40, 2, "T4"),
            ("n1", 32000, 1 << 40, 2, "T4"),
            ("n2", 64000, 1 << 40, 4, "V100"),
        ]
    )
    c.allocate(1, GpuPod("a", 0, 0, 500, 1), (0,))
    c.allocate(2, GpuPod("b", 0, 0, 800, 1), (1,))
    c.allocate(2, GpuPod("c", 0, 0, 1000, 1), (3,))
    return c
