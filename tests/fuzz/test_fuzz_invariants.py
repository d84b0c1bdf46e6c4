"""The invariant checks catch what they claim to: each test settles a small cluster (no violation), then breaks
one invariant behind the components' backs and expects exactly the violation that describes it."""

from __future__ import annotations

import json
from typing import Any

from fuzz_invariants import Violation
from fuzz_model import EQ, PDB, POD, POD_SHAPE, RESERVATION, SPACES, Action, Cluster

from berth.api.reservation import ANNOTATION_RESERVATION_ALLOCATED


def node(cpu: int = 2) -> Action:
    return (
        "add_node",
        {**{k: v[0] for k, v in SPACES["add_node"].items()}, "cpu": cpu, "mem": 4, "pods": 16},
    )


def pod(ns: int = 0, **shape: Any) -> Action:
    return (
        "create_pod",
        {"ns": ns, "count": 1, "gated": False, **{k: v[0] for k, v in POD_SHAPE.items()}, **shape},
    )


def reservation(cpu: int = 500, app: int = 0, *, allocate_once: bool | None = None) -> Action:
    params = {k: v[0] for k, v in SPACES["create_reservation"].items()}
    return (
        "create_reservation",
        {**params, "cpu": cpu, "mem": 256, "app": app, "ttl": "0", "allocate_once": allocate_once},
    )


def cluster(mode: str, *actions: Action) -> Cluster:
    c = Cluster(mode)
    for a in actions:
        c.apply(a)
    assert c.check() == []
    return c


def bare_pod(
    c: Cluster, name: str, cpu: str, *, ns: str = "default", labels: dict[str, str] | None = None
) -> None:
    """A pod no profile schedules (schedulerName "none"), to bind by hand."""
    c.store.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": {
                "schedulerName": "none",
                "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}],
            },
        }
    )


def test_overcommit_counts_reserved_remainders() -> None:
    c = cluster("default", node(cpu=2), pod(cpu=1000), reservation(cpu=500))
    bare_pod(c, "x", "600m")
    c.store.bind("default", "x", "n0")
    c.settle()
    assert c.check() == [
        Violation("overcommit", "node n0: cpu 2100 > allocatable 2000 (2 pods, reservations ['r0'])")
    ]


def test_cache_must_match_the_store() -> None:
    c = cluster("default", node(), pod(cpu=500))
    c.sim.scheduler.cache.table.requested["cpu"][0] += 7
    assert c.check() == [Violation("cache", "node n0: NodeTable requested cpu 507 != store's 500")]


def test_reservation_status_allocated_must_equal_owners() -> None:
    c = cluster("default", node(), reservation(cpu=500, allocate_once=False), pod(cpu=250, app=0))
    rsv = c.store.get(RESERVATION, "", "r0")
    assert (rsv["status"]["phase"], rsv["status"]["allocated"]) == ("Available", {"cpu": "250m"})
    c.store.update_status({**rsv, "status": {**rsv["status"], "allocated": {"cpu": "100m"}}})
    assert c.check() == [
        Violation(
            "reservation-allocated",
            "Reservation r0 (Available): status.allocated {'cpu': 100} != owners' requests {'cpu': 250} "
            "(owners ['p0'])",
        )
    ]


def test_only_owners_are_bound_into_a_reservation() -> None:
    c = cluster("default", node(), reservation(cpu=500, app=0))
    uid = c.store.get(RESERVATION, "", "r0")["metadata"]["uid"]
    bare_pod(c, "intruder", "100m", labels={"app": "b"})
    value = json.dumps({"name": "r0", "uid": uid})
    c.store.bind("default", "intruder", "n0", annotations={ANNOTATION_RESERVATION_ALLOCATED: value})
    c.settle()
    found = c.check()
    assert found[0] == Violation(
        "reservation-owner", "default/intruder (app=b) bound into Reservation r0 whose owners are app=a"
    )


def test_quota_used_and_max() -> None:
    quota = ("create_quota", {"ns": 0, "min_cpu": 1, "max_cpu": 1, "min_mem": 2, "max_mem": 2})
    c = cluster("capacity", node(cpu=4), quota, pod(ns=1, cpu=1000))
    eq = c.store.get(EQ, "q0", "quota")
    assert eq["status"]["used"] == {"cpu": "1", "memory": "0"}
    bare_pod(c, "extra", "500m", ns="q0")
    c.store.bind("q0", "extra", "n0")
    c.settle()
    c.store.patch(EQ, "q0", "quota", {"status": {"used": {"cpu": "2"}}}, subresource="status")
    assert c.check() == [
        Violation(
            "quota-used",
            "ElasticQuota q0/quota: status.used {'cpu': 2000, 'memory': 0} != {'cpu': 1500, 'memory': 0}",
        ),
        Violation("quota-max", "ElasticQuota q0/quota: placed pods request cpu 1500 > max 1000"),
    ]


def test_gang_members_are_bound_all_or_nothing() -> None:
    gang = (
        "create_gang",
        {"ns": 0, "size": 3, "min_member": 3, "cpu": 2000, "prio": None, "timeout": None, "missing": 0},
    )
    c = cluster("gang", node(cpu=1), gang)
    assert [p["spec"].get("nodeName") for p in c.store.list(POD)[0]] == [None, None, None]
    c.store.bind("default", "p0", "n0")
    c.settle()
    assert c.check()[0] == Violation(
        "gang",
        "default/p0 bound to n0 while only 1 of PodGroup default/g0's 3 members are placed (minMember 3)",
    )


def test_evictions_that_debit_a_budget_keep_it() -> None:
    workload = (
        "create_workload",
        {"kind": "ReplicaSet", "replicas": 2, "ns": 0, **{k: v[0] for k, v in POD_SHAPE.items()}, "app": 0},
    )
    budget = ("create_pdb", {"pick": 0, "bound": ("minAvailable", 2)})
    c = cluster("default", node(), workload, budget)
    pdb = c.store.get(PDB, "default", "pdb0")
    assert (pdb["status"]["currentHealthy"], pdb["status"]["disruptionsAllowed"]) == (2, 0)
    c.store.update_status({**pdb, "status": {**pdb["status"], "disruptionsAllowed": 1}})  # a wrong budget
    victim = c.store.list(POD)[0][0]["metadata"]["name"]
    c.store.evict("default", victim)
    assert c.monitor.take() == [
        Violation(
            "pdb-budget",
            f"PDB default/pdb0 evicting {victim}: leaves 1 healthy pods, desired 2 "
            "(status said currentHealthy 2, desiredHealthy 2, disruptionsAllowed 1)",
        )
    ]
    assert c.monitor.debits == 1


def test_budget_status_is_recomputed_independently() -> None:
    workload = (
        "create_workload",
        {"kind": "Deployment", "replicas": 3, "ns": 0, **{k: v[0] for k, v in POD_SHAPE.items()}, "app": 1},
    )
    budget = ("create_pdb", {"pick": 0, "bound": ("maxUnavailable", "34%")})
    c = cluster("default", node(), workload, budget)
    pdb = c.store.get(PDB, "default", "pdb0")
    assert (pdb["status"]["desiredHealthy"], pdb["status"]["disruptionsAllowed"]) == (1, 2)
    # not settled afterwards: the wrong status stays
    c.store.update_status({**pdb, "status": {**pdb["status"], "currentHealthy": 1}})
    assert c.check() == [
        Violation(
            "pdb-status",
            "PDB default/pdb0: status (currentHealthy, desiredHealthy, disruptionsAllowed) (1, 1, 2) != (3, 1, 2)",
        )
    ]


def test_every_pending_pod_says_why() -> None:
    c = cluster("default", node(cpu=1), pod(cpu=2000))
    conds = c.store.get(POD, "default", "p0")["status"]["conditions"]
    assert [(x["type"], x["status"], x["reason"]) for x in conds] == [
        ("PodScheduled", "False", "Unschedulable")
    ]
    p0 = c.store.get(POD, "default", "p0")
    c.store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fresh"}, "spec": p0["spec"]})
    # not settled: the scheduler has not tried the new pod yet
    assert c.check() == [
        Violation(
            "pod-state", "default/fresh is pending without a PodScheduled=False reason, nomination or gate"
        )
    ]
