"""A descheduler profile with ``plugins.evict: [MigrationController]``: its evictions become PodMigrationJobs
that reserve first, in a simulation of examples/descheduler (LowNodeUtilization over a scaled-out cluster)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from berth.api.conditions import is_pod_ready
from berth.api.manifest import load_manifests
from berth.api.watch import WatchEvent
from berth.descheduler.setup import read_policy
from berth.sim.engine import Simulation
from berth.sim.scenario import build_plan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "descheduler"
POD = ("", "Pod")
PMJ = ("scheduling.koordinator.sh", "PodMigrationJob")
RESERVATION = ("scheduling.koordinator.sh", "Reservation")


def run(policy: str) -> tuple[Simulation, list[int]]:
    """The example with `policy`; also the count of Ready web pods (not terminating) as each virtual instant
    ends (the writes of one instant are one step of the cluster)."""
    sim = Simulation(seed=0)
    sim.enable_descheduler(read_policy(str(EXAMPLE / policy)), 300.0)
    by_time: dict[float, int] = {}

    def watch(ev: WatchEvent) -> None:
        if ev.object.get("kind") == "Pod":
            pods, _ = sim.store.list(POD)
            ready = sum(1 for p in pods if is_pod_ready(p) and not p["metadata"].get("deletionTimestamp"))
            by_time[sim.clock.now()] = ready

    sim.store.subscribe(watch)
    plan = build_plan(load_manifests([str(EXAMPLE / "01-cluster.yaml"), str(EXAMPLE / "02-scale-out.yaml")]))
    sim.run(plan)
    return sim, [by_time[t] for t in sorted(by_time)]


def _placement(sim: Simulation) -> list[tuple[str, str]]:
    pods, _ = sim.store.list(POD)
    return sorted((p["metadata"]["name"], p["spec"]["nodeName"]) for p in pods)


def test_migration_moves_the_same_pods_as_plain_eviction_but_reserves_first() -> None:
    plain, _ = run("policy.yaml")
    migrated, ready = run("policy-migration.yaml")
    assert [(e.name, e.node, e.plugin, e.migrated) for _, e in migrated.descheduled] == [
        ("web-74886fcc66-9xvvz", "node-1", "LowNodeUtilization", True),
        ("web-74886fcc66-5wxqf", "node-2", "LowNodeUtilization", True),
    ]
    assert [(e.name, e.migrated) for _, e in plain.descheduled] == [
        ("web-74886fcc66-9xvvz", False),
        ("web-74886fcc66-5wxqf", False),
    ]
    jobs, _ = migrated.store.list(PMJ)
    assert [(j["spec"]["podRef"]["name"], j["status"]["phase"], j["status"].get("status")) for j in jobs] == [
        ("web-74886fcc66-9xvvz", "Succeeded", "Complete"),
        ("web-74886fcc66-5wxqf", "Succeeded", "Complete"),
    ]
    reservations, _ = migrated.store.list(RESERVATION)
    assert sorted((r["status"]["phase"], r["status"]["nodeName"]) for r in reservations) == [
        ("Succeeded", "node-3"),
        ("Succeeded", "node-4"),
    ]
    # the replacements took the reserved places: the same final spread as plain eviction
    assert [n for _, n in _placement(migrated)].count("node-3") == 1
    assert [n for _, n in _placement(migrated)].count("node-4") == 1
    assert sorted(n for _, n in _placement(migrated)) == sorted(n for _, n in _placement(plain))
    # ReservationFirst: once all 8 were Ready, never fewer
    assert min(ready[ready.index(8) :]) == 8


def test_a_pod_the_migration_controller_would_not_take_is_skipped() -> None:
    # the controller takes only pods labelled app=other: every web pod is refused, nothing is evicted
    text = (EXAMPLE / "policy-migration.yaml").read_text()
    policy_path = Path(__file__).parent / "_tmp_policy_blocked.yaml"
    policy_path.write_text(
        text.replace(
            "defaultJobTTL: 5m", "defaultJobTTL: 5m\n      labelSelector: {matchLabels: {app: other}}"
        )
    )
    try:
        sim = Simulation(seed=0)
        sim.enable_descheduler(read_policy(str(policy_path)), 300.0)
    finally:
        policy_path.unlink()
    plan = build_plan(load_manifests([str(EXAMPLE / "01-cluster.yaml"), str(EXAMPLE / "02-scale-out.yaml")]))
    sim.run(plan)
    assert sim.descheduled == []
    assert sim.store.list(PMJ)[0] == []
    events: list[dict[str, Any]] = sim.store.list(("", "Event"))[0]
    assert [
        e["reason"] for e in events if e.get("source", {}).get("component") == "sigs.k8s.io/descheduler"
    ] == []


def test_the_dry_run_of_a_migrating_policy_plans_the_same_moves() -> None:
    from datetime import UTC, datetime

    from berth.api.manifest import load_manifests as load
    from berth.sim.deschedule import plan_descheduling

    objects = [m.obj for m in load([str(EXAMPLE / "snapshot.yaml")])]
    now = datetime(2024, 1, 1, 0, 2, tzinfo=UTC)
    plain = plan_descheduling(objects, read_policy(str(EXAMPLE / "policy.yaml")), now=now).to_dict()
    migrated = plan_descheduling(
        objects, read_policy(str(EXAMPLE / "policy-migration.yaml")), now=now
    ).to_dict()
    assert [(e["pod"]["name"], e["node"], e["replacement"]["node"]) for e in migrated["evictions"]] == [
        ("web-74886fcc66-9xvvz", "node-1", "node-4"),
        ("web-74886fcc66-5wxqf", "node-2", "node-3"),
    ]
    assert migrated["nodes"] == plain["nodes"]
