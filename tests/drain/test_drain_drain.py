"""Drain, cordon and uncordon: kubectl's filters and messages, PDB-respecting retries, timeouts."""

from __future__ import annotations

from typing import Any

import pytest
from drain_helpers import (
    NODE,
    PDB,
    POD,
    Bare,
    advance,
    budget,
    daemonset,
    deployment,
    healthy,
    pods_on,
    start,
    web_on_two_nodes,
)

from berth.api.errors import NotFound
from berth.api.watch import WatchEvent
from berth.descheduler import DrainError, DrainResult, cordon, drain, uncordon
from berth.descheduler.drain import pods_to_evict
from berth.sim.engine import Simulation
from builders import make_node, make_pod

VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget."


def _drain_at(sim: Simulation, at: float, node_name: str, **kw: Any) -> list[DrainResult]:
    done: list[DrainResult] = []
    sim.clock.call_at(
        at, lambda: drain(sim.store, sim.clock, node_name, on_done=done.append, **kw) and None, -1
    )
    return done


def test_drain_respects_the_budget_and_waits_for_replacements() -> None:
    """A Deployment of 3 with minAvailable 2 on two nodes: draining the node holding two of its pods evicts
    one, waits for its replacement to become Ready, then evicts the second; the budget is never broken."""
    sim = start(*web_on_two_nodes())
    busy = max(("node-a", "node-b"), key=lambda n: len(pods_on(sim, n)))
    other = "node-a" if busy == "node-b" else "node-b"
    victims = pods_on(sim, busy)
    assert len(victims) == 2
    assert healthy(sim, "web") == 3

    observed_healthy: list[int] = []
    status_healthy: list[int] = []

    def track(ev: WatchEvent) -> None:
        observed_healthy.append(healthy(sim, "web"))
        if ev.object.get("kind") == "PodDisruptionBudget":
            status_healthy.append(ev.object["status"]["currentHealthy"])

    sim.store.subscribe(track)
    done = _drain_at(sim, 10.0, busy)
    advance(sim, 44.0)
    assert done == []  # the second victim is still terminating
    advance(sim, 120.0)

    (result,) = done
    assert result.ok and result.error == ""
    assert result.evicted == [f"default/{v}" for v in victims]
    assert (result.started, result.finished) == (10.0, 45.0)  # second eviction at 15s + 30s grace
    assert result.log == [
        f"node/{busy} cordoned",
        f"evicting pod default/{victims[0]}",
        f"evicting pod default/{victims[1]}",
        f'error when evicting pods/"{victims[1]}" -n "default" (will retry after 5s): {VIOLATES}',
        f"evicting pod default/{victims[1]}",
        f"pod/{victims[0]} evicted",
        f"pod/{victims[1]} evicted",
        f"node/{busy} drained",
    ]
    assert min(observed_healthy) == 2
    assert min(status_healthy) == 2
    assert status_healthy[-1] == 3
    assert pods_on(sim, busy) == []
    assert len(pods_on(sim, other)) == 3
    assert sim.store.get(NODE, "", busy)["spec"]["unschedulable"] is True
    status = sim.store.get(PDB, "default", "web-pdb")["status"]
    assert (status["currentHealthy"], status["desiredHealthy"], status["disruptionsAllowed"]) == (3, 2, 1)


def test_drain_without_force_refuses_unmanaged_pods() -> None:
    sim = start(
        make_node("n1").obj(),
        make_pod("solo").label(app="solo").node("n1").obj(),
        make_pod("lone").label(app="lone").node("n1").obj(),
    )
    with pytest.raises(DrainError) as info:
        drain(sim.store, sim.clock, "n1")
    assert str(info.value) == (
        "cannot delete Pods that declare no controller (use --force to override): default/lone, default/solo"
    )
    assert sim.store.get(NODE, "", "n1")["spec"]["unschedulable"] is True  # kubectl cordons first
    assert sorted(pods_on(sim, "n1")) == ["lone", "solo"]


def test_drain_with_force_evicts_unmanaged_pods() -> None:
    sim = start(make_node("n1").obj(), make_pod("solo").label(app="solo").node("n1").obj())
    done: list[DrainResult] = []
    drain(sim.store, sim.clock, "n1", force=True, grace_period_seconds=0, on_done=done.append)
    (result,) = done
    assert result.ok
    assert result.log == [
        "node/n1 cordoned",
        "Warning: deleting Pods that declare no controller: default/solo",
        "evicting pod default/solo",
        "pod/solo evicted",
        "node/n1 drained",
    ]
    advance(sim, 60.0)
    assert pods_on(sim, "n1") == []


def test_drain_skips_mirror_and_daemonset_pods() -> None:
    sim = Bare(
        make_node("n1").obj(),
        make_pod("static")
        .label(app="static")
        .node("n1")
        .annotate({"kubernetes.io/config.mirror": "abc"})
        .obj(),
        daemonset("agent"),
        make_pod("agent-x").label(app="agent-x").node("n1").owner("DaemonSet", "agent", "ds-1").obj(),
    )
    result = sim.drain(ignore_daemonsets=True)
    assert result.ok and result.evicted == []
    assert result.log == [
        "node/n1 cordoned",
        "Warning: ignoring DaemonSet-managed Pods: default/agent-x",
        "node/n1 drained",
    ]
    assert sorted(p["metadata"]["name"] for p in sim.store.list(POD)[0]) == ["agent-x", "static"]


def test_drain_times_out_when_the_budget_never_allows() -> None:
    sim = start(
        make_node("n1").obj(),
        make_node("n2").obj(),
        deployment("web", 2),
        budget("web-pdb", "web", maxUnavailable=0),
    )
    (victim,) = pods_on(sim, "n1")
    done = _drain_at(sim, 10.0, "n1", timeout=30.0)
    advance(sim, 200.0)
    (result,) = done
    assert not result.ok
    assert result.error == f'error when evicting pods/"{victim}" -n "default": global timeout reached: 30s'
    assert result.finished == 40.0
    retry = f'error when evicting pods/"{victim}" -n "default" (will retry after 5s): {VIOLATES}'
    assert result.log == ["node/n1 cordoned"] + [f"evicting pod default/{victim}", retry] * 6  # 10, 15, ..35s
    assert result.pending == [f"default/{victim}"]
    assert result.blocked == {
        f"default/{victim}": ["The disruption budget web-pdb needs 2 healthy pods and has 2 currently"]
    }
    assert result.evicted == []
    assert healthy(sim, "web") == 2


def test_drain_unknown_node() -> None:
    sim = start()
    with pytest.raises(NotFound):
        drain(sim.store, sim.clock, "ghost")


def test_cordon_and_uncordon() -> None:
    sim = start(make_node("n1").obj())
    assert cordon(sim.store, "n1")["spec"] == {"unschedulable": True}
    assert cordon(sim.store, "n1")["spec"] == {"unschedulable": True}
    assert uncordon(sim.store, "n1")["spec"] == {}
    assert "unschedulable" not in uncordon(sim.store, "n1")["spec"]


def test_cordoned_node_gets_no_new_pods() -> None:
    sim = start(make_node("n1").obj(), make_node("n2").obj())
    cordon(sim.store, "n1")
    sim.store.create(deployment("web", 4))
    advance(sim, 10.0)
    assert pods_on(sim, "n1") == []
    assert len(pods_on(sim, "n2")) == 4


@pytest.mark.parametrize(
    ("pods", "force", "chosen", "errors", "warnings"),
    [
        ([make_pod("a").ns("ns").owner("ReplicaSet").phase("Running").obj()], False, ["a"], [], []),
        (
            [make_pod("a").ns("ns").owner("DaemonSet").phase("Running").obj()],
            False,
            [],
            ["cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): ns/a"],
            [],
        ),
        ([make_pod("a").ns("ns").owner("DaemonSet").phase("Succeeded").obj()], False, ["a"], [], []),
        (
            [make_pod("a").ns("ns").annotate({"kubernetes.io/config.mirror": "x"}).phase("Running").obj()],
            False,
            [],
            [],
            [],
        ),
        ([make_pod("a").ns("ns").phase("Failed").obj()], False, ["a"], [], []),
        (
            [make_pod("a").ns("ns").phase("Running").obj(), make_pod("b").ns("ns").phase("Running").obj()],
            False,
            [],
            ["cannot delete Pods that declare no controller (use --force to override): ns/a, ns/b"],
            [],
        ),
        (
            [make_pod("a").ns("ns").phase("Running").obj()],
            True,
            ["a"],
            [],
            ["deleting Pods that declare no controller: ns/a"],
        ),
    ],
)
def test_pods_to_evict(
    pods: list[dict[str, Any]], force: bool, chosen: list[str], errors: list[str], warnings: list[str]
) -> None:
    got, errs, warns = pods_to_evict(pods, force=force)
    assert [p["metadata"]["name"] for p in got] == chosen
    assert (errs, warns) == (errors, warnings)


def test_cancel_stops_retrying() -> None:
    sim = start(make_node("n1").obj(), deployment("web", 1), budget("web-pdb", "web", maxUnavailable=0))
    done: list[DrainResult] = []
    op = drain(sim.store, sim.clock, "n1", on_done=done.append)
    advance(sim, 12.0)
    assert not op.done
    op.cancel()
    log_length = len(done[0].log)
    advance(sim, 60.0)
    assert done[0].error == "drain cancelled" and not done[0].ok
    assert op.result is done[0] and len(done[0].log) == log_length
    assert len(pods_on(sim, "n1")) == 1
