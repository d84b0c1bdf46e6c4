"""Crash harness for `berth serve`: SIGKILL the server at seeded random moments of a pod run, restart it on
the same data directory, and check that nothing acknowledged is lost and no pod is ever bound twice.

The writer creates pods through the API one by one; after a seeded random number of creates it kills the
server with SIGKILL at once, while the scheduler, the kubelet and the controllers are still writing, and
starts it again. After every restart: every pod whose create was acknowledged is there with its uid, and a
pod once seen bound to a node is still bound to that node. At the end every pod is bound (the run completes).
Used by tests/serve/test_serve_crash.py (a few kills) and benchmarks/serve_crash.py (the long run).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from serve_helpers import Served, start, stop

PODS = "/api/v1/namespaces/default/pods"
SETTLE_SECONDS = 60.0


@dataclass
class CrashReport:
    """What a crash run saw: kills, acknowledged creates, checks made and every problem found."""

    kills: int = 0
    acknowledged: int = 0
    checks: int = 0
    recoveries_seconds: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "10m"}}}]
        },
    }


def _node(name: str) -> dict[str, Any]:
    res = {"cpu": "64", "memory": "256Gi", "pods": "1000"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": res, "allocatable": res},
    }


def _observe(http: httpx.Client, acked: dict[str, str], bound: dict[str, str], report: CrashReport) -> None:
    """Check every acknowledged pod and every binding seen so far against what the server holds now."""
    items = http.get(PODS).raise_for_status().json()["items"]
    now = {p["metadata"]["name"]: p for p in items}
    for name, uid in acked.items():
        report.checks += 1
        pod = now.get(name)
        if pod is None:
            report.problems.append(f"acknowledged pod {name} lost")
        elif pod["metadata"]["uid"] != uid:
            report.problems.append(f"pod {name}: uid {pod['metadata']['uid']} is not the acknowledged {uid}")
    for name, pod in now.items():
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            continue
        report.checks += 1
        if bound.setdefault(name, node) != node:
            report.problems.append(f"pod {name} bound to {bound[name]}, then to {node}")


def run_server_crashes(data_dir: Path, *, pods: int, kills: int, seed: int) -> CrashReport:
    """Create `pods` pods through the API with `kills` SIGKILLs of the server between them (see module doc)."""
    rng = random.Random(seed)
    kill_after = set(rng.sample(range(1, pods), kills))
    report = CrashReport()
    acked: dict[str, str] = {}
    bound: dict[str, str] = {}
    served: Served = start(data_dir)
    http = served.client()
    try:
        for n in range(4):
            http.post("/api/v1/nodes", json=_node(f"n{n}")).raise_for_status()
        for i in range(pods):
            answer = http.post(PODS, json=_pod(f"p{i:05d}"))
            answer.raise_for_status()
            acked[f"p{i:05d}"] = answer.json()["metadata"]["uid"]
            report.acknowledged += 1
            if i in kill_after:
                http.close()
                served.process.kill()
                stop(served.process)
                report.kills += 1
                began = time.monotonic()
                served = start(data_dir)
                report.recoveries_seconds.append(round(time.monotonic() - began, 3))
                http = served.client()
                _observe(http, acked, bound, report)
        deadline = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < deadline:
            items = http.get(PODS).raise_for_status().json()["items"]
            if sum(1 for p in items if (p.get("spec") or {}).get("nodeName")) == pods:
                break
            time.sleep(0.1)
        _observe(http, acked, bound, report)
        unbound = [n for n in acked if n not in bound]
        if unbound:
            report.problems.append(f"{len(unbound)} pods never bound, e.g. {unbound[:3]}")
    finally:
        http.close()
        stop(served.process)
    return report
