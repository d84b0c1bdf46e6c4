"""Leaving out Score plugins that give every node the same score never changes where pods go."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.api.manifest import load_manifests
from berth.scheduler.trace import Tracer
from berth.sim.engine import Simulation
from berth.sim.scenario import Plan, Step, build_plan
from builders import make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]


def _placements(plan: Plan, traced: bool, seed: int) -> dict[str, str]:
    sim = Simulation(seed=seed)
    if traced:  # recording every attempt keeps every plugin's scores, uniform or not
        sim.scheduler.tracer = Tracer(lambda p: True)
    sim.run(plan, 60.0)
    return {o["metadata"]["name"]: o["spec"].get("nodeName", "") for o in sim.objects() if o["kind"] == "Pod"}


@pytest.mark.parametrize("example", ["quickstart", "spreading"])
def test_examples_place_pods_alike(example: str) -> None:
    manifests = load_manifests([str(ROOT / "examples" / example)])
    assert _placements(build_plan(manifests), False, 3) == _placements(build_plan(manifests), True, 3)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["2", "4", "8"]), st.booleans()), min_size=1, max_size=5),
    st.lists(st.sampled_from(["100m", "500m", "1", "3"]), min_size=1, max_size=12),
    st.integers(0, 5),
)
def test_random_clusters_place_pods_alike(nodes: list[tuple[str, bool]], pods: list[str], seed: int) -> None:
    taint = [{"key": "t", "value": "x", "effect": "PreferNoSchedule"}]
    docs = [
        make_node(f"n{i}").capacity(cpu=cpu).taints(*(taint if tainted else [])).obj()
        for i, (cpu, tainted) in enumerate(nodes)
    ]
    docs += [make_pod(f"p{j}").req(cpu=cpu, memory="1Gi").obj() for j, cpu in enumerate(pods)]
    plan = Plan([Step(0.0, docs)])
    assert _placements(plan, False, seed) == _placements(Plan([Step(0.0, docs)]), True, seed)
