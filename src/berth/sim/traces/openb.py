"""The Alibaba "openb" GPU-cluster trace (cluster-trace-gpu-v2023): reading and checking its CSV files, and
building the FGD paper's replay workload (sort by name, shuffle with the seed, resample ``-tuned-<i>`` pods until
the GPU demand reaches the inflation x the cluster's GPU capacity).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from berth.scheduler.plugins.gpushare.state import MAX_DEVICES, MILLI, GpuPod

GPU_MILLI = "alibabacloud.com/gpu-milli"
GPU_COUNT = "alibabacloud.com/gpu-count"
GPU_CARD_MODEL = "alibabacloud.com/gpu-card-model"
GPU_INDEX = "alibabacloud.com/gpu-index"
MIB = 1024 * 1024

NODE_FILES = {"gpu": "csv/openb_node_list_gpu_node.csv", "all": "csv/openb_node_list_all_node.csv"}
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")


class TraceError(ValueError):
    """The trace folder or one of its files is missing or malformed."""


@dataclass(frozen=True, slots=True)
class TraceNode:
    """One node row: name, CPU milli, memory in MiB, whole GPUs and GPU model ('' for CPU-only)."""

    name: str
    cpu_milli: int
    memory_mib: int
    gpu: int
    model: str


def _read(path: Path, rel: str, required: Sequence[str]) -> tuple[list[str], list[tuple[int, list[str]]]]:
    if not path.is_file():
        raise TraceError(f"{rel}: file not found in trace folder {path.parent.parent}")
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise TraceError(f"{rel}: empty file (no header)")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in required if c not in header]
    if missing:
        raise TraceError(f"{rel}: line 1: missing column(s) {', '.join(missing)}")
    body = []
    for n, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise TraceError(f"{rel}: line {n}: {len(row)} fields, the header has {len(header)}")
        body.append((n, row))
    return header, body


def _int(rel: str, line: int, column: str, value: str, lo: int, hi: int | None = None) -> int:
    try:
        v = int(value)
    except ValueError:
        raise TraceError(f'{rel}: line {line}, column {column}: invalid integer "{value}"') from None
    if v < lo or (hi is not None and v > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
        raise TraceError(f"{rel}: line {line}, column {column}: {v} is not {bound}")
    return v


def load_nodes(folder: Path, nodes: str = "gpu") -> list[TraceNode]:
    """The node list (``gpu``: GPU nodes only, as the paper; ``all``: with the CPU-only nodes)."""
    if nodes not in NODE_FILES:
        raise TraceError(f'unknown node list "{nodes}" (known: gpu, all)')
    rel = NODE_FILES[nodes]
    header, body = _read(folder / rel, rel, NODE_COLUMNS)
    col = {c: header.index(c) for c in NODE_COLUMNS}
    out: list[TraceNode] = []
    seen: set[str] = set()
    for line, row in body:
        name = row[col["sn"]].strip()
        if not name:
            raise TraceError(f"{rel}: line {line}, column sn: empty node name")
        if name in seen:
            raise TraceError(f'{rel}: line {line}, column sn: duplicate node name "{name}"')
        seen.add(name)
        gpu = _int(rel, line, "gpu", row[col["gpu"]], 0, MAX_DEVICES)
        model = row[col["model"]].strip()
        if gpu > 0 and not model:
            raise TraceError(f"{rel}: line {line}, column model: empty GPU model on a node with {gpu} GPUs")
        out.append(
            TraceNode(
                name,
                _int(rel, line, "cpu_milli", row[col["cpu_milli"]], 0),
                _int(rel, line, "memory_mib", row[col["memory_mib"]], 0),
                gpu,
                model if gpu > 0 else "",
            )
        )
    if not out:
        raise TraceError(f"{rel}: no nodes")
    return out


def pod_list_file(pod_list: str) -> str:
    """The CSV path (inside the trace folder) of the pod list called ``pod_list`` (``default``, ``cpu050`` …)."""
    if not pod_list or "/" in pod_list or "." in pod_list:
        raise TraceError(f'invalid pod list name "{pod_list}"')
    return f"csv/openb_pod_list_{pod_list}.csv"


def load_pods(folder: Path, pod_list: str = "default") -> list[GpuPod]:
    """The pod list's rows as pods (memory in bytes); checks every row."""
    rel = pod_list_file(pod_list)
    header, body = _read(folder / rel, rel, POD_COLUMNS)
    col = {c: header.index(c) for c in POD_COLUMNS}
    spec_col = header.index("gpu_spec") if "gpu_spec" in header else -1
    out: list[GpuPod] = []
    seen: set[str] = set()
    for line, row in body:
        name = row[col["name"]].strip()
        if not name:
            raise TraceError(f"{rel}: line {line}, column name: empty pod name")
        if name in seen:
            raise TraceError(f'{rel}: line {line}, column name: duplicate pod name "{name}"')
        seen.add(name)
        count = _int(rel, line, "num_gpu", row[col["num_gpu"]], 0, MAX_DEVICES)
        milli = _int(rel, line, "gpu_milli", row[col["gpu_milli"]], 0, MILLI)
        if milli < MILLI and count > 1:
            raise TraceError(
                f"{rel}: line {line}, column gpu_milli: {milli} is a GPU share but num_gpu is {count}"
            )
        if count == 0 and milli > 0:
            raise TraceError(f"{rel}: line {line}, column gpu_milli: {milli} with num_gpu 0")
        if count > 0 and milli == 0:
            raise TraceError(f"{rel}: line {line}, column gpu_milli: 0 with num_gpu {count}")
        spec = row[spec_col].strip() if spec_col >= 0 else ""
        out.append(
            GpuPod(
                name=name,
                cpu_milli=_int(rel, line, "cpu_milli", row[col["cpu_milli"]], 0),
                memory=_int(rel, line, "memory_mib", row[col["memory_mib"]], 0) * MIB,
                gpu_milli=milli,
                gpu_count=count,
                gpu_models=tuple(m for m in spec.split("|") if m),
            )
        )
    if not out:
        raise TraceError(f"{rel}: no pods")
    return out


@dataclass(frozen=True, slots=True)
class PodTimes:
    """When a pod of the trace was created and deleted, in seconds from the trace's start (None: never)."""

    creation: int
    deletion: int | None


TIME_COLUMNS = ("creation_time", "deletion_time")


def load_pod_times(folder: Path, pod_list: str = "default") -> dict[str, PodTimes]:
    """The creation and deletion times of every pod of the list (``--timed``); checks every row."""
    rel = pod_list_file(pod_list)
    header, body = _read(folder / rel, rel, POD_COLUMNS)
    missing = [c for c in TIME_COLUMNS if c not in header]
    if missing:
        raise TraceError(
            f"{rel}: line 1: missing column(s) {', '.join(missing)} (--timed replays the recorded times; "
            "this pod list has none)"
        )
    name_col, created_col, deleted_col = (header.index(c) for c in ("name", *TIME_COLUMNS))
    out: dict[str, PodTimes] = {}
    for line, row in body:
        created = _int(rel, line, "creation_time", row[created_col].strip(), 0)
        raw = row[deleted_col].strip()
        deleted = _int(rel, line, "deletion_time", raw, 0) if raw else None
        if deleted is not None and deleted < created:
            raise TraceError(
                f"{rel}: line {line}, column deletion_time: {deleted} is before creation_time {created}"
            )
        out[row[name_col].strip()] = PodTimes(created, deleted)
    return out


def replay_workload(
    pods: Sequence[GpuPod], gpu_capacity_milli: int, inflation: float, seed: int
) -> list[GpuPod]:
    """The paper's arrival order: sorted by name, shuffled with ``seed``, then pods drawn at random (renamed
    ``<name>-tuned-<i>``) appended while the total GPU demand stays within ``inflation x capacity`` (the upstream
    rule: stop at the first draw whose per-GPU milli would pass the target), or random pods dropped while the
    demand is above it."""
    if inflation <= 0:
        raise TraceError(f"inflation must be > 0, got {inflation}")
    rng = np.random.default_rng(seed)
    base = sorted(pods, key=lambda p: p.name)
    order = list(base)
    perm = rng.permutation(len(order))
    order = [order[i] for i in perm]
    target = inflation * gpu_capacity_milli
    demand = sum(p.total_gpu_milli for p in order)
    if demand > target:
        while demand > target and order:
            p = order.pop(int(rng.integers(len(order))))
            demand -= p.total_gpu_milli
        return order
    i = 0
    while True:
        src = base[int(rng.integers(len(base)))]
        if demand + (src.gpu_milli if src.wants_gpu else 0) > target:
            break
        order.append(
            GpuPod(
                f"{src.name}-tuned-{i}",
                src.cpu_milli,
                src.memory,
                src.gpu_milli,
                src.gpu_count,
                src.gpu_models,
            )
        )
        demand += src.total_gpu_milli
        i += 1
    return order


def node_object(node: TraceNode) -> dict[str, Any]:
    """The Node the upstream converter makes of a row."""
    res = {
        "cpu": f"{node.cpu_milli}m",
        "memory": f"{node.memory_mib}Mi",
        "pods": "1001",
        GPU_COUNT: str(node.gpu),
        GPU_MILLI: str(node.gpu * MILLI),
    }
    labels = {"kubernetes.io/hostname": node.name}
    if node.model:
        labels[GPU_CARD_MODEL] = node.model
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": labels},
        "status": {"capacity": dict(res), "allocatable": dict(res)},
    }


def pod_object(pod: GpuPod, scheduler_name: str = "default-scheduler") -> dict[str, Any]:
    """The Pod the upstream converter makes of a row: CPU/memory requests = limits, GPU as annotations."""
    res = {"cpu": f"{pod.cpu_milli}m", "memory": f"{pod.memory // MIB}Mi"}
    annotations: dict[str, str] = {}
    if pod.wants_gpu:
        annotations[GPU_MILLI] = str(pod.gpu_milli)
        annotations[GPU_COUNT] = str(pod.gpu_count)
        if pod.gpu_models:
            annotations[GPU_CARD_MODEL] = "|".join(pod.gpu_models)
    meta: dict[str, Any] = {"name": pod.name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "schedulerName": scheduler_name,
            "containers": [
                {
                    "name": "main",
                    "image": "openb-workload",
                    "resources": {"requests": res, "limits": dict(res)},
                }
            ],
        },
    }


__all__ = [
    "GPU_CARD_MODEL",
    "GPU_COUNT",
    "GPU_INDEX",
    "GPU_MILLI",
    "PodTimes",
    "TraceError",
    "TraceNode",
    "load_nodes",
    "load_pod_times",
    "load_pods",
    "node_object",
    "pod_list_file",
    "pod_object",
    "replay_workload",
]
