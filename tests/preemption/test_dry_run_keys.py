"""The batched node keys of a preemption dry run equal the per-node ones (equal keys, equal statuses)."""

from __future__ import annotations

from preemption_helpers import classes, node, pod, simulate

from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.podinfo import PodInfo


def test_batched_and_per_node_keys_agree() -> None:
    taint = {"key": "gpu", "value": "yes", "effect": "NoSchedule"}
    objs = [*classes(1, 1000)]
    objs += [node("a"), node("b"), node("c", taints=[taint]), node("d", cpu="8"), node("e")]
    objs += [
        pod("pa", "2", prio=1, on="a"),
        pod("pb", "2", prio=1, on="b"),
        pod("pd", "1", prio=1, on="d"),
        pod("pe", "3", prio=1, on="e"),
    ]
    sim = simulate([(0.0, objs)], until=1.0)
    sched = sim.scheduler
    fw = sched.frameworks["default-scheduler"]
    preemptor = PodInfo(
        pod("x", "3", prio=1000) | {"metadata": {"name": "x", "namespace": "default", "uid": "u-x"}}
    )
    preemptor.priority = 1000
    state = CycleState()
    table = sched.cache.table
    fw.run_pre_filter(state, preemptor, table)
    rows = list(range(table.size))
    batched = sched.dry_run_keys("default-scheduler", state, preemptor, rows)
    single = [sched.dry_run_key("default-scheduler", state, preemptor, table.names[r]) for r in rows]
    assert batched == single
    by_name = dict(zip(table.names, batched, strict=True))
    # a and b hold the same load: same key; the tainted node's key carries its TaintToleration status
    assert by_name["a"] == by_name["b"]
    assert by_name["c"] is not None and by_name["c"][0].plugin == "TaintToleration"
    assert len({by_name["a"], by_name["d"], by_name["e"]}) == 3
