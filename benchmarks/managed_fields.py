"""The cost of ``metadata.managedFields`` for non-apply writes (`berth.server.fieldmanager.record_update`).

* Through the API: ``--pods`` pod creates (scheduler_perf's pod shape) through ``RestAPI.handle`` with a
  kubectl User-Agent, in a fresh memory store; µs per create with the field manager and with
  ``record_update`` replaced by a no-op (the rest of the create path), and the field manager's share.
* ``record_update`` alone: µs per call for a create of that pod and of a richer pod (labels, ports, env,
  volumes, tolerations), a label update by another manager, and a status write (``subresource: status``).

Process CPU time (the machine may be busy), best of ``--repeat`` runs. Writes benchmarks/results/managed_fields.json. Not a timed test: ``make bench``
material.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from report import parse_args, publish  # noqa: E402

from berth.api.apply import apply_schema  # noqa: E402
from berth.clock import SimClock  # noqa: E402
from berth.server import rest  # noqa: E402
from berth.server.fieldmanager import record_update  # noqa: E402
from berth.server.rest import Request, RestAPI  # noqa: E402
from berth.store import MemoryStore  # noqa: E402
from workloads import make_pod  # noqa: E402

Obj = dict[str, Any]
UA = "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07"
PODS = "/api/v1/namespaces/default/pods"
T0, T1 = "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z"
POD_SCHEMA = apply_schema("", "Pod")


def rich_pod(name: str) -> Obj:
    """A pod as a Deployment's template would give it: labels, annotations, two containers with ports,
    env, resources, probes and volume mounts, volumes, tolerations and an owner reference."""
    container = {
        "name": "app",
        "image": "registry.example/app:1.2.3",
        "ports": [{"containerPort": 8080, "name": "http"}, {"containerPort": 9090, "protocol": "UDP"}],
        "env": [{"name": "MODE", "value": "prod"}, {"name": "LEVEL", "value": "info"}],
        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 5},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
    }
    sidecar = {"name": "proxy", "image": "registry.example/proxy:4", "args": ["--port", "15001"]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": "web", "tier": "frontend", "pod-template-hash": "5d8f7c9b6"},
            "annotations": {"example.com/revision": "7"},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f7c9b6", "uid": "u-1"}
            ],
        },
        "spec": {
            "containers": [container, sidecar],
            "volumes": [{"name": "config", "configMap": {"name": "app-config"}}],
            "tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}
            ],
            "nodeSelector": {"disk": "ssd"},
            "priorityClassName": "normal",
        },
    }


def best(runs: int, fn: Callable[[], float]) -> float:
    """The smallest of `runs` results of `fn` (µs per operation)."""
    out = []
    for _ in range(runs):
        gc.collect()
        out.append(fn())
    return round(min(out), 1)


def api_creates(n: int, *, track: bool) -> float:
    """µs per pod create through RestAPI.handle (kubectl User-Agent); `track` False: no field manager."""
    bodies = [json.dumps(make_pod(f"pod-{i}")).encode() for i in range(n)]
    api = RestAPI(MemoryStore(seed=1, clock=SimClock()))
    ctx = mock.patch.object(rest, "record_update", lambda live, new, **_: new) if not track else None
    if ctx is not None:
        ctx.start()
    try:
        t0 = time.process_time()
        for body in bodies:
            code, _ = api.handle(Request("POST", PODS, {}, body, "application/json", UA))
            assert code == 201, code
        return (time.process_time() - t0) / n * 1e6
    finally:
        if ctx is not None:
            ctx.stop()


def calls(cases: list[tuple[Obj | None, Obj, dict[str, Any]]]) -> float:
    """µs per record_update call over `cases` (each `new` copied beforehand: the call changes it)."""
    work = [(live, copy.deepcopy(new), kw) for live, new, kw in cases]
    t0 = time.process_time()
    for live, new, kw in work:
        record_update(live, new, **kw)
    return (time.process_time() - t0) / len(work) * 1e6


def _kw(manager: str, now: str, subresource: str = "") -> dict[str, Any]:
    return {
        "manager": manager,
        "schema": POD_SCHEMA,
        "has_status": True,
        "now": now,
        "subresource": subresource,
    }


def _created(pod: Obj) -> Obj:
    return record_update(None, copy.deepcopy(pod), **_kw("kubectl-create", T0))


def _relabelled(pod: Obj) -> Obj:
    new = copy.deepcopy(pod)
    new["metadata"]["labels"] = {**new["metadata"].get("labels", {}), "canary": "true"}
    return new


def _with_status(pod: Obj) -> Obj:
    new = copy.deepcopy(pod)
    new["status"] = {
        "phase": "Running",
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": T1},
            {"type": "Ready", "status": "True", "lastTransitionTime": T1},
        ],
        "hostIP": "10.0.0.1",
        "podIP": "10.1.0.7",
        "podIPs": [{"ip": "10.1.0.7"}],
        "startTime": T1,
        "containerStatuses": [
            {"name": "pause", "ready": True, "restartCount": 0, "image": "registry.k8s.io/pause:3.10"}
        ],
    }
    return new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parse_args(parser)
    n, runs = args.pods, args.repeat

    with_fm = best(runs, lambda: api_creates(n, track=True))
    without = best(runs, lambda: api_creates(n, track=False))

    simple = [make_pod(f"pod-{i}") for i in range(n)]
    rich = [rich_pod(f"pod-{i}") for i in range(n)]
    simple_live = [_created(p) for p in simple]
    rich_live = [_created(p) for p in rich]
    figures: dict[str, Any] = {
        "pods": n,
        "api_create_us": round(with_fm, 1),
        "api_create_without_field_manager_us": round(without, 1),
        "field_manager_share_of_create": round((with_fm - without) / with_fm, 3),
        "api_creates_per_s": round(1e6 / with_fm),
        "record_update_create_us": best(
            runs, lambda: calls([(None, p, _kw("kubectl-create", T0)) for p in simple])
        ),
        "record_update_create_rich_us": best(
            runs, lambda: calls([(None, p, _kw("kubectl-create", T0)) for p in rich])
        ),
        "record_update_label_update_us": best(
            runs, lambda: calls([(p, _relabelled(p), _kw("kubectl-label", T1)) for p in simple_live])
        ),
        "record_update_label_update_rich_us": best(
            runs, lambda: calls([(p, _relabelled(p), _kw("kubectl-label", T1)) for p in rich_live])
        ),
        "record_update_status_write_us": best(
            runs, lambda: calls([(p, _with_status(p), _kw("kubelet", T1, "status")) for p in simple_live])
        ),
    }
    publish("managed_fields", figures)


if __name__ == "__main__":
    main()
