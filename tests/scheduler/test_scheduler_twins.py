"""Twins: pods that schedule alike are not popped early from backoffQ once one of them failed, without
changing anything, in the same cluster state; any change lets them all try again."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "preemption"))

from preemption_helpers import simulate

from berth.scheduler.scheduler import twin_key
from berth.sim.engine import Simulation
from builders import make_node, make_pod


def _label_node(sim: Simulation, name: str, value: str) -> None:
    n: Any = copy.deepcopy(sim.store.get(("", "Node"), "", name))
    n["metadata"].setdefault("labels", {})["touched"] = value
    sim.store.update(n)
    sim.run_until_idle()


def _attempts_after_node_event(pods: list[dict[str, Any]]) -> int:
    sim = simulate([(0, [make_node("n").capacity(cpu="1").obj()]), (1, pods)], until=2)
    before = sim.scheduler.stats.attempts
    _label_node(sim, "n", "yes")  # a Node event moves every pod to backoffQ; the idle queue pops them early
    assert sim.scheduler.stats.early_attempts == sim.scheduler.stats.attempts - before
    return sim.scheduler.stats.attempts - before


def test_twins_fail_once_per_state() -> None:
    assert _attempts_after_node_event([make_pod(f"p{i}").req(cpu="2").obj() for i in range(5)]) == 1


def test_pods_that_differ_each_try() -> None:
    assert (
        _attempts_after_node_event([make_pod(f"p{i}").req(cpu="2").label(i=str(i)).obj() for i in range(5)])
        == 5
    )


def test_a_change_lets_twins_try_again() -> None:
    sim = simulate(
        [
            (0, [make_node("n").capacity(cpu="1").obj()]),
            (1, [make_pod(f"p{i}").req(cpu="2").obj() for i in range(3)]),
        ],
        until=2,
    )
    before = sim.scheduler.stats.attempts
    _label_node(sim, "n", "a")
    sim.clock.run(until=2.5)
    _label_node(sim, "n", "b")
    assert sim.scheduler.stats.attempts - before == 2


def test_twin_key_ignores_identity_and_status() -> None:
    a = make_pod("a").req(cpu="1").phase("Pending").info()
    b = make_pod("b").req(cpu="1").info()
    c = make_pod("c").req(cpu="2").info()
    assert twin_key(a) == twin_key(b)
    assert twin_key(a) != twin_key(c)
