"""Properties of preemption over random clusters: victims always rank below their preemptor."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from preemption_helpers import classes, events, get_pod, nominated, pdb, simulate

from berth.scheduler.plugins.defaultpreemption.memo import VictimMemo
from builders import make_node, make_pod

PRIORITIES = (1, 50, 100, 200, 1000)

cluster = st.lists(
    st.lists(st.tuples(st.sampled_from(PRIORITIES[:4]), st.integers(1, 2)), max_size=4),
    min_size=1,
    max_size=3,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster, st.sampled_from(PRIORITIES), st.integers(1, 4), st.integers(0, 3))
def test_victims_have_lower_priority_and_make_room(
    nodes: list[list[tuple[int, int]]], prio: int, cpu: int, seed: int
) -> None:
    objs = [*classes(*PRIORITIES)]
    for i, pods in enumerate(nodes):
        objs.append(make_node(f"n{i}").obj())
        objs += [
            make_pod(f"p{i}-{j}").req(cpu=str(c)).priority_class(f"p{p}").node(f"n{i}").obj()
            for j, (p, c) in enumerate(pods)
        ]
    sim = simulate(
        [(0.0, objs), (10.0, [make_pod("x").req(cpu=str(cpu)).priority_class(f"p{prio}").obj()])],
        until=10.0,
        seed=seed,
    )
    preemptor = get_pod(sim, "x")
    assert preemptor is not None
    gone = [name for name, _ in events(sim, "Preempted")]
    for name in gone:
        victim = get_pod(sim, name)
        assert victim is not None and victim["spec"]["priority"] < preemptor["spec"]["priority"]
    target = nominated(sim, "x")
    if preemptor["spec"].get("nodeName"):
        assert not gone  # it fitted without preemption
        return
    if not target:
        assert not gone
        return
    assert gone and all(n.startswith(f"{target.replace('n', 'p', 1)}-") for n in gone)
    row = int(target[1:])
    left = sum(c for j, (_, c) in enumerate(nodes[row]) if f"p{row}-{j}" not in gone)
    assert left + cpu <= 4


# nodes drawn from few shapes, so that look-alike nodes (the dry run's memo) are common
shapes = st.sampled_from(
    [((50, 1), (50, 1), (100, 1)), ((50, 2), (1, 1)), ((100, 2), (100, 1)), ((1, 1), (1, 1), (1, 1), (50, 1))]
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(shapes, min_size=2, max_size=6), st.integers(1, 4), st.integers(0, 5), st.booleans())
def test_victim_memo_changes_no_outcome(
    nodes: list[tuple[tuple[int, int], ...]], cpu: int, seed: int, budget: bool
) -> None:
    """The dry run's reuse of victim choices between look-alike nodes picks exactly what evaluating every
    node on its own picks: the same nominated node and the same victims."""
    objs = [*classes(*PRIORITIES)]
    for i, pods in enumerate(nodes):
        objs.append(make_node(f"n{i}").obj())
        objs += [
            make_pod(f"p{i}-{j}").req(cpu=str(c)).label(app="a").priority_class(f"p{p}").node(f"n{i}").obj()
            for j, (p, c) in enumerate(pods)
        ]
    if budget:
        objs.append(pdb("a", {"app": "a"}, healthy=sum(len(p) for p in nodes), allowed=1))
    timeline = [(0.0, objs), (10.0, [make_pod("x").req(cpu=str(cpu)).priority_class("p1000").obj()])]

    def outcome() -> tuple[str, list[str]]:
        sim = simulate(timeline, until=10.0, seed=seed)
        return nominated(sim, "x"), sorted(name for name, _ in events(sim, "Preempted"))

    with_memo = outcome()
    original = VictimMemo.get
    VictimMemo.get = lambda self, lookup: None  # type: ignore[method-assign]
    try:
        without_memo = outcome()
    finally:
        VictimMemo.get = original  # type: ignore[method-assign]
    assert with_memo == without_memo
