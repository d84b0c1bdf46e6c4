"""DefaultPreemption remembers each node's potential victims in reprieve order until its pods change."""

from __future__ import annotations

from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.plugins.defaultpreemption.args import parse_default_preemption_args
from berth.scheduler.plugins.defaultpreemption.plugin import DefaultPreemption
from berth.scheduler.plugins.defaultpreemption.victims import StartTimes
from builders import make_node, make_pod


def _running(name: str, prio: int, started: str) -> PodInfo:
    return (
        make_pod(name)
        .uid(f"uid-{name}")
        .req(cpu="1")
        .node("n")
        .priority(prio)
        .phase("Running")
        .start_time(started)
        .info()
    )


def test_order_follows_the_pods_of_the_node() -> None:
    table = NodeTable()
    row = table.set_node(make_node("n").obj())
    table.add_pod(row, _running("old", 1, "2024-01-01T00:00:00Z"))
    table.add_pod(row, _running("new", 1, "2024-01-01T00:01:00Z"))
    plugin = DefaultPreemption(parse_default_preemption_args({}), handle=None)  # type: ignore[arg-type]
    preemptor = make_pod("p").req(cpu="1").priority(10).info()
    start = StartTimes(lambda: 1.8e9)
    assert [p.name for p in plugin._ordered(table, row, preemptor, start)[0]] == ["old", "new"]
    table.add_pod(row, _running("important", 5, "2024-01-01T00:02:00Z"))
    assert [p.name for p in plugin._ordered(table, row, preemptor, start)[0]] == ["important", "old", "new"]
    low = make_pod("q").req(cpu="1").priority(3).info()
    assert [p.name for p in plugin._ordered(table, row, low, start)[0]] == ["old", "new"]
