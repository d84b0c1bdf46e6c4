"""The user guide's Reservation examples (Koordinator v1.8), run end to end through Simulation and the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from rsv_helpers import ALLOCATED, KOORD, RESERVATION_API, events, get, ref, simulate
from typer.testing import CliRunner

from berth.api.resources import pod_requests
from berth.cli import app
from berth.sim.engine import Simulation

# The quick start, re-indented from the guide.
QUICKSTART_RESERVATION = """
apiVersion: scheduling.koordinator.sh/v1alpha1
kind: Reservation
metadata:
  name: reservation-demo
spec:
  template: # set resource requirements
    metadata:
      namespace: default
    spec:
      containers:
      - args:
        - '-c'
        - '1'
        command:
        - stress
        image: polinux/stress
        imagePullPolicy: Always
        name: stress
        resources: # reserve 500m cpu and 800Mi memory
          requests:
            cpu: 500m
            memory: 800Mi
      schedulerName: koord-scheduler # use koord-scheduler
  owners: # set the owner specifications
  - object: # owner pods whose name is `default/pod-demo-0`
      name: pod-demo-0
      namespace: default
  ttl: 1h # set the TTL, the reservation will get expired 1 hour later
"""

QUICKSTART_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: pod-demo-0 # match the owner spec of `reservation-demo`
spec:
  containers:
  - args:
    - '-c'
    - '1'
    command:
    - stress
    image: polinux/stress
    imagePullPolicy: Always
    name: stress
    resources:
      limits:
        cpu: '1'
        memory: 1Gi
      requests:
        cpu: 200m
        memory: 400Mi
  restartPolicy: Always
  schedulerName: koord-scheduler # use koord-scheduler
"""

BIG_RESERVATION = """
apiVersion: scheduling.koordinator.sh/v1alpha1
kind: Reservation
metadata:
  name: reservation-demo-big
spec:
  allocateOnce: false # allow the reservation to be allocated by multiple owners
  template:
    metadata:
      namespace: default
    spec:
      containers:
      - args:
        - '-c'
        - '1'
        command:
        - stress
        image: polinux/stress
        imagePullPolicy: Always
        name: stress
        resources: # reserve 6 cpu and 20Gi memory
          requests:
            cpu: 6
            memory: 20Gi
      nodeName: node-1 # set the expected node name to schedule at
      schedulerName: koord-scheduler
  owners: # set multiple owners
  - object: # owner pods whose name is `default/pod-demo-0`
      name: pod-demo-1
      namespace: default
  - labelSelector: # owner pods who have label `app=app-demo` can allocate the reserved resources
      matchLabels:
        app: app-demo
  ttl: 1h
"""

# The guide's app-demo Deployment (run by Berth's Deployment and ReplicaSet controllers).
APP_DEMO = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-demo
spec:
  replicas: 2
  selector:
    matchLabels:
      app: app-demo
  template:
    metadata:
      name: stress
      labels:
        app: app-demo # match the owner spec of `reservation-demo-big`
    spec:
      schedulerName: koord-scheduler # use koord-scheduler
      containers:
      - name: stress
        image: polinux/stress
        args:
        - '-c'
        - '1'
        command:
        - stress
        resources:
          requests:
            cpu: 2
            memory: 10Gi
          limits:
            cpu: 4
            memory: 20Gi
"""


def guide_nodes() -> list[dict[str, Any]]:
    """node-0 and node-1 as `kubectl get node` shows them in the guide."""
    out = []
    for name, mem in (("node-0", "28625036Ki"), ("node-1", "28629692Ki")):
        res = {"cpu": "7800m", "memory": mem, "pods": "110"}
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"capacity": dict(res), "allocatable": dict(res)},
            }
        )
    return out


def quickstart_objects() -> tuple[dict[str, Any], dict[str, Any]]:
    r = yaml.safe_load(QUICKSTART_RESERVATION)
    p = yaml.safe_load(QUICKSTART_POD)
    p["metadata"]["namespace"] = "default"
    return r, p


def allocated_annotation(name: str, uid: str) -> str:
    return json.dumps({"name": name, "uid": uid}, separators=(",", ":"))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_quickstart_pod_lands_on_the_reservation_node(seed: int) -> None:
    r, p = quickstart_objects()
    sim = simulate([*guide_nodes(), r], [], [p], seed=seed)
    res = get(sim, "Reservation", "reservation-demo")
    node = res["status"]["nodeName"]
    assert node in ("node-0", "node-1")
    pod = get(sim, "Pod", "pod-demo-0")
    assert pod["spec"]["nodeName"] == node
    assert pod["metadata"]["annotations"][ALLOCATED] == allocated_annotation(
        "reservation-demo", res["metadata"]["uid"]
    )
    assert ("Normal", "Scheduled", f"Successfully assigned reservation-demo to {node}") in events(
        sim, "reservation-demo"
    )


def test_quickstart_reservation_becomes_available() -> None:
    r, _ = quickstart_objects()
    sim = simulate([*guide_nodes(), r])
    res = get(sim, "Reservation", "reservation-demo")
    status = res["status"]
    node = status["nodeName"]
    assert status["phase"] == "Available"
    assert status["allocatable"] == {"cpu": "500m", "memory": "800Mi"}
    ts = "2024-01-01T00:00:00Z"
    assert status["conditions"] == [
        {
            "type": "Scheduled",
            "status": "True",
            "reason": "Scheduled",
            "lastProbeTime": ts,
            "lastTransitionTime": ts,
        },
        {
            "type": "Ready",
            "status": "True",
            "reason": "Available",
            "lastProbeTime": ts,
            "lastTransitionTime": ts,
        },
    ]
    assert "allocated" not in status or not status["allocated"]
    assert res["spec"]["allocateOnce"] is True
    assert events(sim, "reservation-demo") == [
        ("Normal", "Scheduled", f"Successfully assigned reservation-demo to {node}")
    ]


def test_quickstart_controller_status_after_the_owner_allocates() -> None:
    """allocateOnce (default true): the first owner uses it up, the controller records it and ends it."""
    r, p = quickstart_objects()
    sim = simulate([*guide_nodes(), r], [], [p])
    res = get(sim, "Reservation", "reservation-demo")
    pod = get(sim, "Pod", "pod-demo-0")
    status = res["status"]
    assert status["allocatable"] == {"cpu": "500m", "memory": "800Mi"}
    assert status["allocated"] == {"cpu": "200m", "memory": "400Mi"}
    assert status["currentOwners"] == [
        {"namespace": "default", "name": "pod-demo-0", "uid": pod["metadata"]["uid"]}
    ]
    assert status["phase"] == "Succeeded"
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "Succeeded")


def test_quickstart_cleanup_keeps_the_pod_running() -> None:
    r, p = quickstart_objects()
    sim = simulate(
        [*guide_nodes(), r], [], [p], steps=[{"at": "5s", "delete": [ref("Reservation", "reservation-demo")]}]
    )
    pod = get(sim, "Pod", "pod-demo-0")
    assert pod["status"]["phase"] == "Running"
    assert pod["spec"]["nodeName"] in ("node-0", "node-1")
    assert [o for o in sim.objects() if o["kind"] == "Reservation"] == []


def test_quickstart_through_the_cli(tmp_path: Path) -> None:
    r, p = quickstart_objects()
    docs: list[dict[str, Any]] = [
        *guide_nodes(),
        r,
        {
            "apiVersion": "berth.dev/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": "quickstart"},
            "spec": {"steps": [{"at": "30s", "create": [p]}]},
        },
    ]
    f = tmp_path / "quickstart.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(app, ["simulate", str(f), "-o", "json"])
    assert result.exit_code == 0, result.output
    items = json.loads(result.stdout)["items"]
    res = next(o for o in items if o["kind"] == "Reservation")
    pod = next(o for o in items if o["kind"] == "Pod")
    assert res["apiVersion"] == RESERVATION_API
    assert pod["spec"]["nodeName"] == res["status"]["nodeName"]
    assert pod["spec"]["schedulerName"] == KOORD
    assert pod["metadata"]["annotations"][ALLOCATED] == allocated_annotation(
        "reservation-demo", res["metadata"]["uid"]
    )
    assert res["status"]["allocated"] == {"cpu": "200m", "memory": "400Mi"}
    assert res["status"]["allocatable"] == {"cpu": "500m", "memory": "800Mi"}


def multiple_owners_objects() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The cluster (with node-1's existing 780m/1216Mi load), the big reservation and the app-demo Deployment."""
    existing = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "system-load", "namespace": "kube-system"},
        "spec": {
            "nodeName": "node-1",
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "780m", "memory": "1216Mi"}},
                }
            ],
        },
    }
    deployment = yaml.safe_load(APP_DEMO)
    deployment["metadata"]["namespace"] = "default"
    return [*guide_nodes(), existing, yaml.safe_load(BIG_RESERVATION)], deployment


def app_demo_pods(sim: Simulation) -> list[dict[str, Any]]:
    """The pods of the app-demo Deployment, by name."""
    pods = [
        o
        for o in sim.objects()
        if o["kind"] == "Pod" and o["metadata"].get("labels", {}).get("app") == "app-demo"
    ]
    return sorted(pods, key=lambda o: o["metadata"]["name"])


def test_multiple_owners_land_on_the_pinned_node_within_allocatable() -> None:
    cluster, deployment = multiple_owners_objects()
    sim = simulate(cluster, [], [deployment])
    res = get(sim, "Reservation", "reservation-demo-big")
    status = res["status"]
    assert (status["phase"], status["nodeName"]) == ("Available", "node-1")
    assert status["allocatable"] == {"cpu": "6", "memory": "20Gi"}
    rs = next(o for o in sim.objects() if o["kind"] == "ReplicaSet")
    pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"app-demo-{pod_hash}"
    pods = app_demo_pods(sim)
    assert len(pods) == 2
    value = allocated_annotation("reservation-demo-big", res["metadata"]["uid"])
    for got in pods:
        assert re.fullmatch(rf"app-demo-{pod_hash}-[a-z0-9]{{5}}", got["metadata"]["name"])
        assert got["spec"]["nodeName"] == "node-1"
        assert got["metadata"]["annotations"][ALLOCATED] == value
    assert status["allocated"] == {"cpu": "4", "memory": "20Gi"}
    assert status["currentOwners"] == sorted(
        ({"namespace": "default", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]} for p in pods),
        key=lambda o: o["uid"],
    )
    # node-1: 780m + 2*2 cpu of pods + the 2 cpu still reserved = 6780m <= 7800m;
    # memory: 1216Mi + 20Gi of pods + 0 left in the reservation <= 28629692Ki
    on_node = [o for o in sim.objects() if o["kind"] == "Pod" and o["spec"].get("nodeName") == "node-1"]
    cpu = sum(pod_requests(o).get("cpu", 0) for o in on_node) + 6000 - 4000
    memory = sum(pod_requests(o).get("memory", 0) for o in on_node) + 20 * 2**30 - 20 * 2**30
    assert (cpu, memory) == (6780, 1216 * 2**20 + 20 * 2**30)
    assert cpu <= 7800 and memory <= 28629692 * 1024


def test_multiple_owners_a_third_owner_no_longer_fits_node_1() -> None:
    """Once the reserved memory is used up, a third 10Gi replica must go to node-0 (node-1 has ~6.1Gi left)."""
    cluster, deployment = multiple_owners_objects()
    scale = {
        "at": "5s",
        "patch": [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "namespace": "default",
                "name": "app-demo",
                "patch": {"spec": {"replicas": 3}},
            }
        ],
    }
    sim = simulate(cluster, [], [deployment], steps=[scale])
    placed = sorted(
        (p["spec"].get("nodeName"), ALLOCATED in (p["metadata"].get("annotations") or {}))
        for p in app_demo_pods(sim)
    )
    assert placed == [("node-0", False), ("node-1", True), ("node-1", True)]
