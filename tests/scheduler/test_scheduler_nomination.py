"""Nominated pods (status.nominatedNodeName) are honoured as kube-scheduler honours them."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from berth.api.manifest import Manifest
from berth.scheduler.framework.config import parse_config
from berth.scheduler.framework.cycle_state import CycleState, Overlay
from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.nominator import OVERLAY_APPLIED_KEY, Nominator, add_nominated, withdraw_nominated
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


RESULTS = "kube-scheduler-simulator.sigs.k8s.io/"


def recorded(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``run`` with the SchedulingResults plugin, so that each pod carries its filter and score results."""
    config = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {"multiPoint": {"enabled": [{"name": "SchedulingResults"}]}},
                }
            ],
        }
    )
    sim = Simulation(config=config)
    sim.run_manifests([Manifest(d, "test") for d in docs], until=30.0)
    return {o["metadata"]["name"]: o for o in sim.objects() if o["kind"] == "Pod"}


def annotation(pod: dict[str, Any], which: str) -> Any:
    return json.loads(pod["metadata"]["annotations"][RESULTS + which])


def nominated_scene(incoming: dict[str, Any]) -> list[dict[str, Any]]:
    """n1 and n2 of 4 CPU / 8Gi; n2 runs "busy" (1 CPU, 1Gi); "nominee" (2 CPU, 2Gi, priority 100) is
    nominated to n1 and held by a gate; then ``incoming``."""
    return [
        pc("high", 100),
        make_node("n1").obj(),
        make_node("n2").obj(),
        make_pod("busy").req(cpu="1", memory="1Gi").node("n2").obj(),
        make_pod("nominee")
        .req(cpu="2", memory="2Gi")
        .priority_class("high")
        .gate("example.com/hold")
        .nominated("n1")
        .obj(),
        incoming,
    ]


def test_nominated_pods_count_in_filter_but_not_in_score() -> None:
    # kube's RunFilterPluginsWithNominatedPods adds the nominee to n1 for Filter only. Score sees n1 idle:
    # LeastAllocated with "low" (1 CPU, 1Gi) cpu (4-1)/4 = 75, memory (8-1)/8 = 87 -> 81 (with the nominee
    # counted it would be 25 and 62 -> 43); n2 with busy: cpu 50, memory 75 -> 62
    pods = recorded(nominated_scene(make_pod("low").req(cpu="1", memory="1Gi").obj()))
    low = pods["low"]
    assert {n: s["NodeResourcesFit"] for n, s in annotation(low, "score-result").items()} == {
        "n1": "81",
        "n2": "62",
    }
    # BalancedAllocation: n1 cpu 1/4 = 0.25 vs memory 1/8 = 0.125 -> 93; n2 cpu 2/4 vs memory 2/8 -> 87
    assert {n: s["NodeResourcesBalancedAllocation"] for n, s in annotation(low, "score-result").items()} == {
        "n1": "93",
        "n2": "87",
    }
    assert low["spec"]["nodeName"] == "n1"


def test_nominated_pods_count_in_filter() -> None:
    # "wide" (3 CPU) fits the idle n1 by its capacity, but not beside the nominee (2 + 3 > 4): Filter
    # counts the nominee, and only n2 (1 + 3 <= 4) is feasible
    pods = recorded(nominated_scene(make_pod("wide").req(cpu="3", memory="1Gi").obj()))
    wide = pods["wide"]
    assert annotation(wide, "filter-result")["n1"]["NodeResourcesFit"] == "Insufficient cpu"
    assert annotation(wide, "filter-result")["n2"]["NodeResourcesFit"] == "passed"
    assert wide["spec"]["nodeName"] == "n2"


def test_withdraw_nominated_keeps_the_other_overlays() -> None:
    # n1: 4 CPU; a reservation-like overlay frees 500m on it, the nominee (1500m, priority 100) takes 1500m
    table = NodeTable()
    row = table.set_node(make_node("n1").obj())
    table.add_pod(row, make_pod("busy").req(cpu="1").node("n1").info())
    nominator = Nominator()
    nominator.set(make_pod("nominee").uid("u-nominee").req(cpu="1500m").priority(100).info(), "n1")
    state = CycleState()
    freed = Overlay(np.asarray([row], dtype=np.int64), {"cpu": np.asarray([-500], dtype=np.int64)})
    state.overlay.append(freed)
    add_nominated(state, nominator.overlay_for(make_pod("p").req(cpu="1").info(), table))
    table.apply_overlay(state.overlay)
    state.write(OVERLAY_APPLIED_KEY, True)
    assert int(table.requested["cpu"][row]) == 1000 - 500 + 1500  # Filter's view
    withdraw_nominated(state, table)
    assert int(table.requested["cpu"][row]) == 1000 - 500  # Score's view: the nominee is gone
    assert state.overlay == [freed]
    assert state.get(OVERLAY_APPLIED_KEY) is False
    withdraw_nominated(state, table)  # a second call changes nothing
    assert int(table.requested["cpu"][row]) == 500
    table.apply_overlay(state.overlay, -1)
    assert int(table.requested["cpu"][row]) == 1000
