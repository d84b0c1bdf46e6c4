"""Properties: a quota's used never exceeds its max; the quota'd namespaces together never use more than
the total of their min (PreFilter + Reserve, with pods coming and going, and in whole simulations)."""

from __future__ import annotations

from capacity_helpers import EQ, GPU, priority_class, quota, quota_pod, simulate
from hypothesis import given, settings
from hypothesis import strategies as st

from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.plugins.capacityscheduling import CapacityScheduling
from builders import make_node, make_pod

NAMESPACES = ("a", "b", "c", "free")
quotas_st = st.lists(
    st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=3, max_size=3
)  # (min, extra) per quota'd namespace: max = min + extra
ops_st = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from(NAMESPACES), st.integers(0, 4), st.integers(0, 3)),
        st.tuples(st.just("del"), st.integers(0, 50), st.just(0), st.just(0)),
    ),
    max_size=40,
)


def _check(plugin: CapacityScheduling) -> None:
    book = plugin.book
    total_used = 0
    total_min = 0
    for q in book.infos.values():
        used = q.used.get(GPU, 0)
        assert used >= 0
        assert q.max is None or used <= q.max.get(GPU, used)
        total_used += used
        total_min += q.min.get(GPU, 0)
    assert total_used == book.total_used.get(GPU, 0)
    assert total_used <= total_min


@settings(max_examples=150, deadline=None)
@given(quotas_st, ops_st)
def test_prefilter_and_reserve_keep_quotas_within_bounds(
    limits: list[tuple[int, int]], ops: list[tuple[str, str | int, int, int]]
) -> None:
    plugin = CapacityScheduling(handle=None)  # type: ignore[arg-type]
    for ns, (lo, extra) in zip(NAMESPACES, limits, strict=False):
        plugin.on_object_event("ADDED", quota(ns, {GPU: lo}, {GPU: lo + extra}))
    placed: list[dict[str, object]] = []
    for i, (op, arg, gpu, prio) in enumerate(ops):
        if op == "add":
            p = quota_pod(str(arg), f"p{i}", gpu, prio=prio).req(cpu="100m").obj()
            pi = PodInfo(p)
            _, s = plugin.pre_filter(CycleState(), pi, None)  # type: ignore[arg-type]
            if s.is_success():
                plugin.reserve(CycleState(), pi, "n1")
                p["spec"]["nodeName"] = "n1"
                plugin.on_object_event("MODIFIED", p)
                placed.append(p)
        elif placed:
            victim = placed.pop(int(arg) % len(placed))
            plugin.on_object_event("DELETED", victim)
        _check(plugin)


@settings(max_examples=8, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(("a", "b", "c")), st.integers(1, 3), st.integers(0, 2)), max_size=14),
    st.integers(0, 3),
)
def test_simulation_status_used_within_bounds(pods: list[tuple[str, int, int]], seed: int) -> None:
    limits = {"a": (3, 6), "b": (4, 5), "c": (1, 2)}
    objs = [
        make_pod(f"p{i}").ns(ns).req({GPU: str(gpu)}).priority_class(f"p{prio * 100}" if prio else None).obj()
        for i, (ns, gpu, prio) in enumerate(pods)
    ]
    sim = simulate(
        [
            (
                0.0,
                [
                    make_node("n1").capacity(cpu="32", memory="64Gi").gpu(6).obj(),
                    make_node("n2").capacity(cpu="32", memory="64Gi").gpu(6).obj(),
                    priority_class(100),
                    priority_class(200),
                ],
            ),
            (0.0, [quota(ns, {GPU: lo}, {GPU: hi}) for ns, (lo, hi) in limits.items()]),
            (1.0, objs),
        ],
        until=300.0,
        seed=seed,
    )
    total = 0
    for ns, (_, hi) in limits.items():
        used = int(sim.store.get(EQ, ns, ns)["status"]["used"][GPU])
        assert used <= hi
        total += used
    assert total <= sum(lo for lo, _ in limits.values())
