"""Invariants of whole simulations on random clusters (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from berth.api.manifest import Manifest
from berth.api.resources import node_allocatable, pod_requests
from berth.sim.engine import Simulation
from builders import expr, make_node, make_pod

CPUS = ["100m", "250m", "500m", "1", "2", "3"]
MEMS = ["128Mi", "512Mi", "1Gi", "2Gi", "3Gi"]
TAINT = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
TOLERATE = [{"key": "dedicated", "operator": "Exists"}]


@st.composite
def clusters(draw: Any) -> list[dict[str, Any]]:
    n_nodes = draw(st.integers(1, 6))
    docs: list[dict[str, Any]] = []
    for i in range(n_nodes):
        docs.append(
            make_node(f"n{i}")
            .capacity(
                cpu=draw(st.sampled_from(["1", "2", "4"])),
                memory=draw(st.sampled_from(["2Gi", "4Gi"])),
                pods=draw(st.sampled_from(["3", "110"])),
            )
            .label(zone=draw(st.sampled_from("ab")))
            .taints(*(TAINT if draw(st.booleans()) and i else []))
            .unschedulable(draw(st.integers(0, 9)) == 0)
            .obj()
        )
    for j in range(draw(st.integers(0, 14))):
        p = make_pod(f"p{j}")
        if draw(st.booleans()):
            p.tolerations(*TOLERATE)
        if draw(st.integers(0, 3)) == 0:
            p.node_selector(zone=draw(st.sampled_from("ab")))
        if draw(st.integers(0, 3)) == 0:
            p.preferred_node_affinity(
                (draw(st.integers(1, 100)), {"matchExpressions": [expr("zone", "In", "a")]})
            )
        docs.append(p.req(cpu=draw(st.sampled_from(CPUS)), memory=draw(st.sampled_from(MEMS))).obj())
    return docs


def run(docs: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    sim = Simulation(seed=seed)
    sim.run_manifests([Manifest(d, "generated") for d in docs], until=120.0)
    return sim.objects()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=clusters(), seed=st.integers(0, 5))
def test_no_node_is_overcommitted_and_rules_hold(docs: list[dict[str, Any]], seed: int) -> None:
    objects = run(docs, seed)
    nodes = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Node"}
    used: dict[str, dict[str, int]] = {n: {} for n in nodes}
    for p in (o for o in objects if o["kind"] == "Pod"):
        name = p["spec"].get("nodeName")
        if not name:
            continue
        n = nodes[name]
        assert not n["spec"].get("unschedulable")
        if n["spec"].get("taints"):
            assert p["spec"].get("tolerations") == TOLERATE
        sel = p["spec"].get("nodeSelector")
        if sel:
            assert n["metadata"]["labels"]["zone"] == sel["zone"]
        for r, v in pod_requests(p).items():
            used[name][r] = used[name].get(r, 0) + v
        used[name]["pods"] = used[name].get("pods", 0) + 1
    for name, n in nodes.items():
        alloc = node_allocatable(n)
        for r, v in used[name].items():
            assert v <= alloc.get(r, 0), (name, r, v, alloc)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=clusters(), seed=st.integers(0, 5))
def test_same_seed_same_final_state(docs: list[dict[str, Any]], seed: int) -> None:
    assert run(docs, seed) == run(docs, seed)
