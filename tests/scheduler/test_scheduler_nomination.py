"""Nominated pods (status.nominatedNodeName) are honoured as kube-scheduler honours them."""

from __future__ import annotations

from typing import Any

from berth.api.manifest import Manifest
from berth.sim.engine import Simulation


def node(name: str, cpu: str = "2") -> dict[str, Any]:
    res = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"allocatable": res}}


def pc(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def pod(
    name: str, cpu: str, *, cls: str | None = None, nominated: str | None = None, gated: bool = False
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if cls:
        spec["priorityClassName"] = cls
    if gated:
        spec["schedulingGates"] = [{"name": "example.com/hold"}]
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
    if nominated:
        obj["status"] = {"nominatedNodeName": nominated}
    return obj


def run(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    sim = Simulation()
    sim.run_manifests([Manifest(d, "test") for d in docs], until=30.0)
    return {o["metadata"]["name"]: o for o in sim.objects() if o["kind"] == "Pod"}


def test_lower_priority_pod_respects_a_nomination() -> None:
    pods = run(
        [
            pc("high", 100),
            node("n1"),
            pod("nominee", "1500m", cls="high", nominated="n1", gated=True),
            pod("low", "1"),
        ]
    )
    assert pods["low"]["spec"].get("nodeName") is None
    cond = next(c for c in pods["low"]["status"]["conditions"] if c["type"] == "PodScheduled")
    assert cond["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod."
    )


def test_equal_priority_pod_respects_a_nomination() -> None:
    pods = run(
        [
            pc("high", 100),
            node("n1"),
            pod("nominee", "1500m", cls="high", nominated="n1", gated=True),
            pod("same", "1", cls="high"),
        ]
    )
    assert pods["same"]["spec"].get("nodeName") is None


def test_higher_priority_pod_ignores_a_lower_nomination() -> None:
    pods = run(
        [
            pc("low", 10),
            pc("top", 1000),
            node("n1"),
            pod("nominee", "1500m", cls="low", nominated="n1", gated=True),
            pod("urgent", "1", cls="top"),
        ]
    )
    assert pods["urgent"]["spec"]["nodeName"] == "n1"


def test_nomination_elsewhere_does_not_block() -> None:
    pods = run(
        [
            pc("high", 100),
            node("n1"),
            node("n2"),
            pod("nominee", "1500m", cls="high", nominated="n1", gated=True),
            pod("low", "1"),
        ]
    )
    assert pods["low"]["spec"]["nodeName"] == "n2"


def test_nominated_node_is_tried_first() -> None:
    # n1 is emptier (LeastAllocated prefers it) but the pod is nominated to n2, where it fits
    pods = run([node("n1", cpu="8"), node("n2"), pod("p", "1", nominated="n2")])
    assert pods["p"]["spec"]["nodeName"] == "n2"


def test_binding_drops_the_nomination() -> None:
    sim = Simulation()
    sim.run_manifests([Manifest(d, "t") for d in [node("n1"), pod("p", "1", nominated="n1")]], until=5.0)
    assert (
        sim.scheduler.nominator.node_of(sim.store.get(("", "Pod"), "default", "p")["metadata"]["uid"]) == ""
    )


def test_deleting_a_nominated_pod_frees_its_room_at_once() -> None:
    sim = Simulation()
    docs = [pc("high", 100), node("n1"), pod("nominee", "1500m", cls="high", nominated="n1", gated=True)]
    sim.run_manifests([Manifest(d, "test") for d in docs], until=1.0)
    sim.run_manifests([Manifest(pod("low", "1"), "test")], until=2.0)
    assert sim.store.get(("", "Pod"), "default", "low")["spec"].get("nodeName") is None
    sim.store.delete(("", "Pod"), "default", "nominee")
    sim.run_until_idle()
    assert sim.store.get(("", "Pod"), "default", "low")["spec"].get("nodeName") == "n1"
