"""Twins: pods that schedule alike are not popped early from backoffQ once one of them failed, without
changing anything, in the same cluster state; any change lets them all try again."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "preemption"))

from preemption_helpers import node, pod, simulate

from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.scheduler import twin_key
from berth.sim.engine import Simulation


def _label_node(sim: Simulation, name: str, value: str) -> None:
    n: Any = copy.deepcopy(sim.store.get(("", "Node"), "", name))
    n["metadata"].setdefault("labels", {})["touched"] = value
    sim.store.update(n)
    sim.run_until_idle()


def _attempts_after_node_event(pods: list[dict[str, Any]]) -> int:
    sim = simulate([(0, [node("n", cpu="1")]), (1, pods)], until=2)
    before = sim.scheduler.stats.attempts
    _label_node(sim, "n", "yes")  # a Node event moves every pod to backoffQ; the idle queue pops them early
    assert sim.scheduler.stats.early_attempts == sim.scheduler.stats.attempts - before
    return sim.scheduler.stats.attempts - before


def test_twins_fail_once_per_state() -> None:
    assert _attempts_after_node_event([pod(f"p{i}", cpu="2") for i in range(5)]) == 1


def test_pods_that_differ_each_try() -> None:
    assert _attempts_after_node_event([pod(f"p{i}", cpu="2", labels={"i": str(i)}) for i in range(5)]) == 5


def test_a_change_lets_twins_try_again() -> None:
    sim = simulate([(0, [node("n", cpu="1")]), (1, [pod(f"p{i}", cpu="2") for i in range(3)])], until=2)
    before = sim.scheduler.stats.attempts
    _label_node(sim, "n", "a")
    sim.clock.run(until=2.5)
    _label_node(sim, "n", "b")
    assert sim.scheduler.stats.attempts - before == 2


def test_twin_key_ignores_identity_and_status() -> None:
    a = PodInfo({**pod("a", cpu="1"), "status": {"phase": "Pending"}})
    b = PodInfo(pod("b", cpu="1"))
    c = PodInfo(pod("c", cpu="2"))
    assert twin_key(a) == twin_key(b)
    assert twin_key(a) != twin_key(c)
