"""DefaultPreemption remembers each node's potential victims in reprieve order until its pods change."""

from __future__ import annotations

from typing import Any

from preemption_helpers import node, pod

from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.plugins.defaultpreemption.args import parse_default_preemption_args
from berth.scheduler.plugins.defaultpreemption.plugin import DefaultPreemption
from berth.scheduler.plugins.defaultpreemption.victims import StartTimes


def _running(name: str, prio: int, started: str) -> PodInfo:
    obj: Any = pod(name, cpu="1", on="n")
    obj["metadata"]["uid"] = f"uid-{name}"
    obj["spec"]["priority"] = prio
    obj["status"] = {"phase": "Running", "startTime": started}
    return PodInfo(obj)


def test_order_follows_the_pods_of_the_node() -> None:
    table = NodeTable()
    row = table.set_node(node("n"))
    table.add_pod(row, _running("old", 1, "2024-01-01T00:00:00Z"))
    table.add_pod(row, _running("new", 1, "2024-01-01T00:01:00Z"))
    plugin = DefaultPreemption(parse_default_preemption_args({}), handle=None)  # type: ignore[arg-type]
    preemptor = PodInfo({**pod("p", cpu="1"), "spec": {**pod("p", cpu="1")["spec"], "priority": 10}})
    start = StartTimes(lambda: 1.8e9)
    assert [p.name for p in plugin._ordered(table, row, preemptor, start)[0]] == ["old", "new"]
    table.add_pod(row, _running("important", 5, "2024-01-01T00:02:00Z"))
    assert [p.name for p in plugin._ordered(table, row, preemptor, start)[0]] == ["important", "old", "new"]
    low = PodInfo({**pod("q", cpu="1"), "spec": {**pod("q", cpu="1")["spec"], "priority": 3}})
    assert [p.name for p in plugin._ordered(table, row, low, start)[0]] == ["old", "new"]
