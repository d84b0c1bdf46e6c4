"""The batched node keys of a preemption dry run equal the per-node ones (equal keys, equal statuses)."""

from __future__ import annotations

from preemption_helpers import classes, simulate

from berth.scheduler.framework.cycle_state import CycleState
from builders import make_node, make_pod


def test_batched_and_per_node_keys_agree() -> None:
    taint = {"key": "gpu", "value": "yes", "effect": "NoSchedule"}
    objs = [*classes(1, 1000)]
    objs += [
        make_node("a").obj(),
        make_node("b").obj(),
        make_node("c").taints(taint).obj(),
        make_node("d").capacity(cpu="8").obj(),
        make_node("e").obj(),
    ]
    objs += [
        make_pod("pa").req(cpu="2").priority_class("p1").node("a").obj(),
        make_pod("pb").req(cpu="2").priority_class("p1").node("b").obj(),
        make_pod("pd").req(cpu="1").priority_class("p1").node("d").obj(),
        make_pod("pe").req(cpu="3").priority_class("p1").node("e").obj(),
    ]
    sim = simulate([(0.0, objs)], until=1.0)
    sched = sim.scheduler
    fw = sched.frameworks["default-scheduler"]
    preemptor = make_pod("x").req(cpu="3").priority_class("p1000").uid("u-x").info()
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
