"""A drain that asks the node to avoid each evicted pod's controller (seed 001's PreferAvoidPods)."""

from __future__ import annotations

import json
from typing import Any

import yaml
from drain_helpers import NODE, deployment, pods_on, start

from berth.api.manifest import parse_manifest_text
from berth.sim.engine import Simulation
from berth.sim.scenario import build_plan
from berth.store.eviction import ANNOTATION_PREFER_AVOID_PODS
from builders import make_node

RS = ("apps", "ReplicaSet")


def _drain_step(sim: Simulation, node: str, **fields: Any) -> None:
    doc = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"steps": [{"at": "10s", "drain": {"node": node, **fields}}]},
    }
    (step,) = build_plan(parse_manifest_text(yaml.safe_dump(doc), "s.yaml")).steps
    sim.clock.call_at(10.0, lambda: sim.apply_step(step), -1)
    sim.advance(60.0)


def _avoided(sim: Simulation, node: str) -> list[tuple[str, str]]:
    annotations = sim.store.get(NODE, "", node)["metadata"].get("annotations") or {}
    if ANNOTATION_PREFER_AVOID_PODS not in annotations:
        return []
    entries = json.loads(annotations[ANNOTATION_PREFER_AVOID_PODS])["preferAvoidPods"]
    return [(e["podSignature"]["podController"]["kind"], e["reason"]) for e in entries]


def test_drain_step_with_prefer_avoid_pods_marks_the_node() -> None:
    sim = start(make_node("n1").obj(), make_node("n2").obj(), deployment("web", 2))
    busy = max(("n1", "n2"), key=lambda n: len(pods_on(sim, n)))
    _drain_step(sim, busy, preferAvoidPods=True, gracePeriodSeconds=0)
    (rs,) = sim.store.list(RS)[0]
    assert pods_on(sim, busy) == []
    entries = _avoided(sim, busy)
    assert [kind for kind, _ in entries] == ["ReplicaSet"]
    annotations = sim.store.get(NODE, "", busy)["metadata"]["annotations"]
    signature = json.loads(annotations[ANNOTATION_PREFER_AVOID_PODS])["preferAvoidPods"][0]["podSignature"]
    assert signature["podController"]["uid"] == rs["metadata"]["uid"]


def test_drain_step_without_prefer_avoid_pods_leaves_the_node_alone() -> None:
    sim = start(make_node("n1").obj(), make_node("n2").obj(), deployment("web", 2))
    busy = max(("n1", "n2"), key=lambda n: len(pods_on(sim, n)))
    _drain_step(sim, busy, gracePeriodSeconds=0)
    assert pods_on(sim, busy) == []
    assert _avoided(sim, busy) == []
