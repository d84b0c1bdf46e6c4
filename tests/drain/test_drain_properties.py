"""Property: on random clusters with random budgets, no eviction (direct or by a drain) ever takes a healthy pod
away when that leaves a PodDisruptionBudget below its desired healthy count."""

from __future__ import annotations

import contextlib
import math
from typing import Any

from drain_helpers import PDB, POD, advance, budget, deployment, is_ready
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from berth.api.errors import StatusError
from berth.api.labels import compile_label_selector
from berth.api.watch import WatchEvent
from berth.descheduler import DrainError, drain, uncordon
from berth.sim.engine import Simulation
from berth.store.eviction import evict
from builders import make_node

Bound = tuple[str, int | str]  # ("minAvailable" | "maxUnavailable", value)

bounds = st.one_of(
    st.tuples(st.just("minAvailable"), st.integers(0, 5)),
    st.tuples(st.just("maxUnavailable"), st.integers(0, 3)),
    st.tuples(
        st.sampled_from(["minAvailable", "maxUnavailable"]), st.integers(0, 100).map(lambda p: f"{p}%")
    ),
)
apps = st.lists(st.tuples(st.integers(1, 4), st.none() | bounds), min_size=1, max_size=3)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("evict"), st.integers(0, 20)),
        st.tuples(st.just("drain"), st.integers(0, 2)),
        st.tuples(st.just("advance"), st.integers(1, 40)),
        st.tuples(st.just("uncordon"), st.integers(0, 2)),
    ),
    min_size=1,
    max_size=8,
)


def _desired(spec: dict[str, Any], expected: int) -> int:
    """An independent reading of the budget: the healthy pods it demands."""
    if "maxUnavailable" in spec:
        value = spec["maxUnavailable"]
        unavailable = math.ceil(int(value[:-1]) * expected / 100) if isinstance(value, str) else value
        return max(0, expected - unavailable)
    value = spec["minAvailable"]
    return math.ceil(int(value[:-1]) * expected / 100) if isinstance(value, str) else int(value)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(apps=apps, ops=ops, overlap=st.booleans(), nodes=st.integers(2, 3), policy=st.booleans())
def test_no_eviction_breaks_a_budget(
    apps: list[tuple[int, Bound | None]], ops: list[tuple[str, int]], overlap: bool, nodes: int, policy: bool
) -> None:
    sim = Simulation()
    replicas: dict[str, int] = {}
    for i in range(nodes):
        sim.store.create(make_node(f"n{i}").obj())
    for i, (count, bound) in enumerate(apps):
        app = f"a{i}"
        replicas[app] = count
        sim.store.create(deployment(app, count))
        if bound is not None:
            pdb = budget(f"{app}-pdb", app, **{bound[0]: bound[1]})
            if policy:
                pdb["spec"]["unhealthyPodEvictionPolicy"] = "AlwaysAllow"
            sim.store.create(pdb)
    if overlap:
        sim.store.create(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "wide"},
                "spec": {
                    "minAvailable": 1,
                    "selector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
                },
            }
        )
    advance(sim, 5.0)

    was_healthy: dict[str, bool] = {p["metadata"]["uid"]: is_ready(p) for p in sim.store.list(POD)[0]}
    violations: list[str] = []

    def check(ev: WatchEvent) -> None:
        obj = ev.object
        if obj.get("kind") != "Pod":
            return
        uid = obj["metadata"]["uid"]
        before = was_healthy.get(uid, False)
        was_healthy[uid] = ev.type != "DELETED" and is_ready(obj)
        if not before or was_healthy[uid]:
            return
        labels = obj["metadata"].get("labels") or {}
        pods = sim.store.list(POD)[0]
        for pdb in sim.store.list(PDB)[0]:
            selector = compile_label_selector(pdb["spec"]["selector"])
            if not selector.matches(labels):
                continue
            expected = sum(n for app, n in replicas.items() if selector.matches({"app": app}))
            desired = _desired(pdb["spec"], expected)
            healthy = sum(
                1 for p in pods if is_ready(p) and selector.matches(p["metadata"].get("labels") or {})
            )
            if healthy < desired:
                violations.append(
                    f"{obj['metadata']['name']} left {pdb['metadata']['name']} at {healthy}/{desired}"
                )

    sim.store.subscribe(check)
    for op, arg in ops:
        now = sim.clock.now()
        if op == "evict":
            pods = sim.store.list(POD)[0]
            if pods:
                victim = pods[arg % len(pods)]["metadata"]
                with contextlib.suppress(StatusError):
                    evict(sim.store, "default", victim["name"])
        elif op == "drain":
            with contextlib.suppress(DrainError, StatusError):
                drain(sim.store, sim.clock, f"n{arg % nodes}", timeout=60.0)
        elif op == "uncordon":
            uncordon(sim.store, f"n{arg % nodes}")
        advance(sim, now + (arg if op == "advance" else 1.0))
    advance(sim, sim.clock.now() + 120.0)
    assert violations == []
