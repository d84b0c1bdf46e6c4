"""Property: the batched Filter/Score forms agree with the per-node forms on random clusters."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pts_helpers import plugin, run_filter, run_score, spread

from berth.scheduler.framework import CycleState
from builders import make_node, make_pod, make_table

KEYS = ("zone", "node", "rack", "kubernetes.io/hostname")
LABELS = st.fixed_dictionaries({}, optional={"foo": st.sampled_from(("", "1")), "bar": st.just("")})
SELECTORS = st.sampled_from(
    (
        {"matchExpressions": [{"key": "foo", "operator": "Exists"}]},
        {"matchLabels": {"foo": "1"}},
        {"matchExpressions": [{"key": "bar", "operator": "DoesNotExist"}]},
        None,
    )
)


@st.composite
def constraint(draw: st.DrawFn) -> dict[str, Any]:
    when = draw(st.sampled_from(("DoNotSchedule", "ScheduleAnyway")))
    extra: dict[str, Any] = {}
    if when == "DoNotSchedule" and draw(st.booleans()):
        extra["minDomains"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        extra["nodeAffinityPolicy"] = draw(st.sampled_from(("Honor", "Ignore")))
    if draw(st.booleans()):
        extra["nodeTaintsPolicy"] = draw(st.sampled_from(("Honor", "Ignore")))
    if draw(st.booleans()):
        extra["matchLabelKeys"] = ["bar"]
    return spread(draw(st.integers(1, 3)), draw(st.sampled_from(KEYS)), when, draw(SELECTORS), **extra)


@st.composite
def cluster(draw: st.DrawFn) -> tuple[Any, Any]:
    n = draw(st.integers(1, 8))
    nodes = []
    for i in range(n):
        node = make_node(f"n{i}")
        if draw(st.booleans()):
            node.label(rack=draw(st.sampled_from(("r1", "r2"))))
        if draw(st.booleans()):
            node.label(pool="x")
        node.label(zone=draw(st.sampled_from((None, "z1", "z2", "z3"))))
        if draw(st.booleans()):
            node.taints({"key": "t", "effect": "NoSchedule"})
        if draw(st.booleans()):
            node.label(node=f"n{i}")
        nodes.append(node.obj())
    existing = [
        make_pod(f"e{j}")
        .label(draw(LABELS))
        .ns(draw(st.sampled_from(("default", "default", "other"))))
        .node(f"n{draw(st.integers(0, n - 1))}")
        .info()
        for j in range(draw(st.integers(0, 12)))
    ]
    t = make_table(nodes, existing)
    p = (
        make_pod("cand")
        .label(draw(LABELS))
        .spread(*draw(st.lists(constraint(), min_size=1, max_size=3)))
        .node_selector({"pool": "x"} if draw(st.booleans()) else None)
        .tolerations(*([{"key": "t", "operator": "Exists"}] if draw(st.booleans()) else []))
        .info()
    )
    return t, p


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=cluster(), pick=st.data())
def test_batched_equals_per_node(data: tuple[Any, Any], pick: st.DataObject) -> None:
    t, p = data
    pl = plugin()
    run_filter(pl, p, t)  # asserts filter == filter_nodes row by row
    feasible = pick.draw(st.lists(st.sampled_from(t.names), unique=True))
    run_score(pl, p, t, feasible)  # asserts score == score_nodes
    # after removing a node's pods from a state copy, both forms still agree
    state = CycleState()
    _, s = pl.pre_filter(state, p, t)
    if not s.is_success():
        return
    row = pick.draw(st.integers(0, t.size - 1))
    info = t.info(row)
    for victim in list(info.pods.values()):
        pl.remove_pod(state, p, victim, info)
    v = pl.filter_nodes(state, p, t)
    assert [v.status_of(i) for i in range(t.size)] == [pl.filter(state, p, t.info(i)) for i in range(t.size)]
    assert np.array_equal(v.passed, [pl.filter(state, p, t.info(i)).is_success() for i in range(t.size)])
