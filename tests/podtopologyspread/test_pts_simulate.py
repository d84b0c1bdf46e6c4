"""PodTopologySpread through ``berth simulate``: even spreading of a Deployment and kube's messages."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from berth.cli import app
from builders import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
SPREAD = [
    {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
]


def simulate(tmp_path: Path, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(app, ["simulate", str(f), "-o", "json"])
    assert result.exit_code == 0, result.output
    return list(json.loads(result.stdout)["items"])


def test_deployment_spreads_evenly_over_zones(tmp_path: Path) -> None:
    # zone a has the roomiest nodes, so resource scoring alone would pile the replicas up there
    nodes = [
        make_node("a1").zone("a").capacity(cpu="32", memory="16Gi").obj(),
        make_node("a2").zone("a").capacity(cpu="32", memory="16Gi").obj(),
        make_node("b1").zone("b").capacity(memory="16Gi").obj(),
        make_node("b2").zone("b").capacity(cpu="4", memory="16Gi").obj(),
        make_node("c1").zone("c").capacity(cpu="4", memory="16Gi").obj(),
    ]
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 6,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "topologySpreadConstraints": SPREAD,
                    "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "500m"}}}],
                },
            },
        },
    }
    items = simulate(tmp_path, [*nodes, deploy])
    zone_of = {n["metadata"]["name"]: n["metadata"]["labels"][ZONE] for n in nodes}
    placed = [o["spec"].get("nodeName") for o in items if o["kind"] == "Pod"]
    assert len(placed) == 6
    assert Counter(zone_of[n] for n in placed) == {"a": 2, "b": 2, "c": 2}


def test_unschedulable_pod_gets_kubes_message(tmp_path: Path) -> None:
    docs = [
        make_node("n1").zone("a").capacity(memory="16Gi").obj(),
        make_node("n2").zone("b").capacity(cpu="1", memory="16Gi").obj(),
        make_node("n3").capacity(memory="16Gi").obj(),
        make_pod("w1").req(cpu="1", memory="1Gi").label(app="web").node("n1").obj(),
        make_pod("w2").req(cpu="1", memory="1Gi").label(app="web").node("n1").obj(),
        make_pod("filler").req(cpu="1", memory="1Gi").node("n2").obj(),
        make_pod("new").req(cpu="1", memory="1Gi").label(app="web").spread(*SPREAD).obj(),
    ]
    items = simulate(tmp_path, docs)
    new = next(o for o in items if o["kind"] == "Pod" and o["metadata"]["name"] == "new")
    assert new["spec"].get("nodeName") is None
    expected = (
        "0/3 nodes are available: 1 Insufficient cpu, "
        "1 node(s) didn't match pod topology spread constraints, "
        "1 node(s) didn't match pod topology spread constraints (missing required label). "
        "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod."
    )
    cond = next(c for c in new["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (cond["reason"], cond["message"]) == ("Unschedulable", expected)
    events = [
        o["message"]
        for o in items
        if o["kind"] == "Event" and o["involvedObject"]["name"] == "new" and o["reason"] == "FailedScheduling"
    ]
    assert events == [expected]


def test_preemption_frees_the_crowded_zone(tmp_path: Path) -> None:
    # zone a holds two low-priority web pods, zone b none, but zone b's only node is full of high-priority
    # work; the preemption dry run removes web pods from the spread counts (RemovePod): with zone b at 0,
    # zone a must hold no web pod at all, so neither victim can be reprieved
    pcs = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
        for n, v in (("low", 1), ("high", 1000))
    ]
    docs = [
        *pcs,
        make_node("n1").zone("a").capacity(cpu="2", memory="16Gi").obj(),
        make_node("n2").zone("b").capacity(cpu="1", memory="16Gi").obj(),
        make_pod("w1").req(cpu="1", memory="1Gi").label(app="web").node("n1").priority_class("low").obj(),
        make_pod("w2").req(cpu="1", memory="1Gi").label(app="web").node("n1").priority_class("low").obj(),
        make_pod("busy").req(cpu="1", memory="1Gi").node("n2").priority_class("high").obj(),
        make_pod("new")
        .req(cpu="1", memory="1Gi")
        .label(app="web")
        .priority_class("high")
        .spread(*SPREAD)
        .obj(),
    ]
    items = simulate(tmp_path, docs)
    pods = {o["metadata"]["name"]: o for o in items if o["kind"] == "Pod"}
    assert pods["new"]["spec"].get("nodeName") == "n1"
    assert "w1" not in pods and "w2" not in pods
    preempted = [o for o in items if o["kind"] == "Event" and o["reason"] == "Preempted"]
    assert sorted(o["involvedObject"]["name"] for o in preempted) == ["w1", "w2"]
