"""Small inputs of ``berth compare`` written into a test's folder: scenarios, scheduler configurations and a
generated openb trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def node(name: str, cpu: str = "4", memory: str = "8Gi") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
    }


def pod(name: str, cpu: str, memory: str = "1Gi", priority: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
        ]
    }
    if priority:
        spec["priorityClassName"] = priority
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def scenario(
    name: str, steps: list[tuple[str, list[dict[str, Any]]]], until: str | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"steps": [{"at": at, "create": objs} for at, objs in steps]}
    if until:
        spec["until"] = until
    return {"apiVersion": "berth.dev/v1alpha1", "kind": "Scenario", "metadata": {"name": name}, "spec": spec}


def write(path: Path, docs: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def packing_scenario(root: Path) -> Path:
    """Three 4-CPU nodes, three 1-CPU pods, then (at 1s) a 4-CPU pod: it fits only when the first three were
    packed onto one node."""
    return write(
        root / "packing.yaml",
        [
            node("n-1"),
            node("n-2"),
            node("n-3"),
            pod("p-1", "1"),
            pod("p-2", "1"),
            pod("p-3", "1"),
            scenario("big", [("1s", [pod("big", "4")])], until="1m"),
        ],
    )


def fit_config(root: Path, strategy: str, gpu_plugin: str | None = None) -> Path:
    """NodeResourcesFit with ``strategy`` as the only score plugin (and ``gpu_plugin``, a GPU policy's score
    plugin such as FGDScore, which names the policy for trace workloads)."""
    enabled = [{"name": "NodeResourcesFit"}, *([{"name": gpu_plugin}] if gpu_plugin else [])]
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"score": {"disabled": [{"name": "*"}], "enabled": enabled}},
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}},
                ],
            }
        ],
    }
    return write(root / f"{strategy.lower()}.yaml", [doc])


POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model"


def trace(root: Path) -> Path:
    """A trace folder: three GPU nodes and eight pods (fractional and whole GPUs)."""
    nodes = ["n-0,16000,65536,2,T4", "n-1,16000,65536,1,P100", "n-2,32000,131072,4,V100M16"]
    shapes = [
        (4000, 1, 600),
        (2000, 1, 1000),
        (4000, 1, 500),
        (8000, 1, 900),
        (2000, 2, 1000),
        (1000, 1, 300),
        (6000, 1, 1000),
        (3000, 1, 450),
    ]
    pods = [f"p-{i},{cpu},8192,{n},{milli},,LS,Running,0,100,0" for i, (cpu, n, milli) in enumerate(shapes)]
    (root / "csv").mkdir(parents=True, exist_ok=True)
    (root / "csv" / "openb_node_list_gpu_node.csv").write_text("\n".join([NODE_HEADER, *nodes]) + "\n")
    (root / "csv" / "openb_pod_list_default.csv").write_text("\n".join([POD_HEADER, *pods]) + "\n")
    return root
