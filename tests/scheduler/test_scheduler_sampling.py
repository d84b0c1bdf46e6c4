"""Adaptive node sampling walks kube's zone-interleaved node tree from a round-robin start."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from berth.scheduler.builtin import builtin_registry
from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.scheduler import Scheduler
from berth.sim.engine import Simulation
from builders import make_node


def test_zone_order_interleaves_zones_in_first_seen_order() -> None:
    t = NodeTable()
    for name, zone in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("c1", "c"), ("b2", "b")]:
        t.set_node(make_node(name).zone(zone).capacity(cpu="1", memory="1Gi", pods="10").obj())
    order = t.zone_order()
    assert order is not None
    assert [t.names[i] for i in order] == ["a1", "b1", "c1", "a2", "b2", "a3"]


def test_zone_order_without_zones_is_insertion_order() -> None:
    t = NodeTable()
    for i in range(5):
        t.set_node(make_node(f"n{i}").capacity(cpu="1", memory="1Gi", pods="10").obj())
    assert t.zone_order() is None


def scheduler_with(nodes: int) -> Scheduler:
    sim = Simulation(registry=builtin_registry())
    for i in range(nodes):
        sim.scheduler.cache.set_node(make_node(f"n{i}").capacity(cpu="1", memory="1Gi", pods="10").obj())
    return sim.scheduler


def test_sampling_stops_after_enough_feasible_nodes_and_rotates() -> None:
    s = scheduler_with(300)  # kube: 50 - 300/125 = 48 % → 144 nodes
    fw = SimpleNamespace(percentage_of_nodes_to_score=None)
    passed = np.ones(300, dtype=np.bool_)
    first = s.scheduling._sample(fw, passed, False)  # type: ignore[arg-type]
    assert first.tolist() == list(range(144))
    second = s.scheduling._sample(fw, passed, False)  # type: ignore[arg-type]
    assert second.tolist() == list(range(144, 288))
    third = s.scheduling._sample(fw, passed, False)  # type: ignore[arg-type]
    assert third.tolist() == list(range(0, 132)) + list(range(288, 300))


def test_sampling_counts_failed_nodes_as_processed() -> None:
    s = scheduler_with(300)
    fw = SimpleNamespace(percentage_of_nodes_to_score=50)  # 150 nodes
    passed = np.ones(300, dtype=np.bool_)
    passed[:100] = False
    got = s.scheduling._sample(fw, passed, False)  # type: ignore[arg-type]
    assert got.tolist() == list(range(100, 250))
    assert s.scheduling.next_start == 250


def test_percentage_100_evaluates_every_node() -> None:
    s = scheduler_with(300)
    fw = SimpleNamespace(percentage_of_nodes_to_score=100)
    passed = np.ones(300, dtype=np.bool_)
    assert s.scheduling._sample(fw, passed, False).size == 300  # type: ignore[arg-type]


def test_sampling_walks_zones_round_robin() -> None:
    sim = Simulation(registry=builtin_registry())
    for z in "abc":
        for i in range(100):
            sim.scheduler.cache.set_node(
                make_node(f"{z}{i}").zone(z).capacity(cpu="1", memory="1Gi", pods="10").obj()
            )
    s = sim.scheduler
    fw = SimpleNamespace(percentage_of_nodes_to_score=None)  # 300 nodes: 144 to find
    passed = np.ones(300, dtype=np.bool_)
    got = s.scheduling._sample(fw, passed, False)  # type: ignore[arg-type]
    assert got.tolist() == list(range(48)) + list(range(100, 148)) + list(range(200, 248))
    assert s.scheduling.next_start == 144
