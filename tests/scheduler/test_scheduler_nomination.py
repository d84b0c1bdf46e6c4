"""Nominated pods (status.nominatedNodeName) are honoured as kube-scheduler honours them."""

from __future__ import annotations

from typing import Any

from berth.api.manifest import Manifest
from berth.sim.engine import Simulation
from builders import make_node, make_pod


def pc(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def nominee(priority_class: str) -> dict[str, Any]:
    """The pod "nominee" (1500m, of ``priority_class``) nominated to n1 and held there by a scheduling gate."""
    return (
        make_pod("nominee")
        .req(cpu="1500m")
        .priority_class(priority_class)
        .gate("example.com/hold")
        .nominated("n1")
        .obj()
    )


def run(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    sim = Simulation()
    sim.run_manifests([Manifest(d, "test") for d in docs], until=30.0)
    return {o["metadata"]["name"]: o for o in sim.objects() if o["kind"] == "Pod"}


def test_lower_priority_pod_respects_a_nomination() -> None:
    pods = run(
        [
            pc("high", 100),
            make_node("n1").capacity(cpu="2").obj(),
            nominee("high"),
            make_pod("low").req(cpu="1").obj(),
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
            make_node("n1").capacity(cpu="2").obj(),
            nominee("high"),
            make_pod("same").req(cpu="1").priority_class("high").obj(),
        ]
    )
    assert pods["same"]["spec"].get("nodeName") is None


def test_higher_priority_pod_ignores_a_lower_nomination() -> None:
    pods = run(
        [
            pc("low", 10),
            pc("top", 1000),
            make_node("n1").capacity(cpu="2").obj(),
            nominee("low"),
            make_pod("urgent").req(cpu="1").priority_class("top").obj(),
        ]
    )
    assert pods["urgent"]["spec"]["nodeName"] == "n1"


def test_nomination_elsewhere_does_not_block() -> None:
    pods = run(
        [
            pc("high", 100),
            make_node("n1").capacity(cpu="2").obj(),
            make_node("n2").capacity(cpu="2").obj(),
            nominee("high"),
            make_pod("low").req(cpu="1").obj(),
        ]
    )
    assert pods["low"]["spec"]["nodeName"] == "n2"


def test_nominated_node_is_tried_first() -> None:
    # n1 is emptier (LeastAllocated prefers it) but the pod is nominated to n2, where it fits
    pods = run(
        [
            make_node("n1").capacity(cpu="8").obj(),
            make_node("n2").capacity(cpu="2").obj(),
            make_pod("p").req(cpu="1").nominated("n2").obj(),
        ]
    )
    assert pods["p"]["spec"]["nodeName"] == "n2"


def test_binding_drops_the_nomination() -> None:
    sim = Simulation()
    sim.run_manifests(
        [
            Manifest(d, "t")
            for d in [
                make_node("n1").capacity(cpu="2").obj(),
                make_pod("p").req(cpu="1").nominated("n1").obj(),
            ]
        ],
        until=5.0,
    )
    assert (
        sim.scheduler.nominator.node_of(sim.store.get(("", "Pod"), "default", "p")["metadata"]["uid"]) == ""
    )


def test_deleting_a_nominated_pod_frees_its_room_at_once() -> None:
    sim = Simulation()
    docs = [
        pc("high", 100),
        make_node("n1").capacity(cpu="2").obj(),
        nominee("high"),
    ]
    sim.run_manifests([Manifest(d, "test") for d in docs], until=1.0)
    sim.run_manifests([Manifest(make_pod("low").req(cpu="1").obj(), "test")], until=2.0)
    assert sim.store.get(("", "Pod"), "default", "low")["spec"].get("nodeName") is None
    sim.store.delete(("", "Pod"), "default", "nominee")
    sim.run_until_idle()
    assert sim.store.get(("", "Pod"), "default", "low")["spec"].get("nodeName") == "n1"
