"""The ElasticQuota status controller: status.used = requests of Running pods, for the names in min and max."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from capacity_helpers import EQ, GPU, POD, Obj, quota

from berth.clock import SimClock
from berth.controllers.elasticquota import ElasticQuotaController
from berth.store import MemoryStore
from builders import make_pod


def _run(q: Obj, pods: Sequence[Obj], *, after: Sequence[tuple[str, Obj]] = ()) -> dict[str, str]:
    clock = SimClock()
    store = MemoryStore(clock=clock)
    events: list[object] = []
    store.subscribe(events.append)
    ctrl = ElasticQuotaController(store, clock)

    def pump() -> None:
        while events:
            ev = events.pop(0)
            ctrl.handle_event(ev.type, ev.object)  # type: ignore[attr-defined]

    store.create(q)
    pump()
    for p in pods:
        created = store.create({k: v for k, v in p.items() if k != "status"})
        if p.get("status"):
            meta = created["metadata"]
            store.patch(POD, meta["namespace"], meta["name"], {"status": p["status"]}, subresource="status")
        pump()
    for action, p in after:
        meta = p["metadata"]
        if action == "delete":
            store.delete(POD, meta["namespace"], meta["name"], grace_period_seconds=0)
        else:
            store.patch(POD, meta["namespace"], meta["name"], {"status": p["status"]}, subresource="status")
        pump()
    group, kind = (
        EQ
        if q["apiVersion"].startswith("scheduling.x-k8s.io")
        else ("scheduling.sigs.k8s.io", "ElasticQuota")
    )
    return dict(store.get((group, kind), q["metadata"]["namespace"], q["metadata"]["name"])["status"]["used"])


Q = quota("a", {"cpu": "4", GPU: 2}, {"cpu": "8", "memory": "16Gi"})

CASES: list[tuple[str, Obj, list[Obj], list[tuple[str, Obj]], dict[str, str]]] = [
    ("no pods: every listed name is 0", Q, [], [], {"cpu": "0", "memory": "0", GPU: "0"}),
    (
        "running pods summed, cpu in milli",
        Q,
        [
            make_pod("p1").ns("a").req(cpu="1500m", memory="1Gi").node("n1").phase("Running").obj(),
            make_pod("p2").ns("a").req({"cpu": "1", GPU: "1"}).node("n1").phase("Running").obj(),
        ],
        [],
        {"cpu": "2500m", "memory": "1Gi", GPU: "1"},
    ),
    (
        "pending and finished pods are not counted",
        Q,
        [
            make_pod("p1").ns("a").req(cpu="1").node("n1").phase("Pending").obj(),
            make_pod("p2").ns("a").req(cpu="2").node("n1").phase("Succeeded").obj(),
            make_pod("p3").ns("a").req(cpu="3").node("n1").obj(),
        ],
        [],
        {"cpu": "0", "memory": "0", GPU: "0"},
    ),
    (
        "resources named in neither min nor max are left out",
        quota("a", {"cpu": "1"}, None),
        [
            make_pod("p1")
            .ns("a")
            .req({"cpu": "1", "memory": "1Gi", GPU: "1"})
            .node("n1")
            .phase("Running")
            .obj()
        ],
        [],
        {"cpu": "1"},
    ),
    (
        "pods of other namespaces are not counted",
        Q,
        [make_pod("p1").ns("b").req(cpu="1").node("n1").phase("Running").obj()],
        [],
        {"cpu": "0", "memory": "0", GPU: "0"},
    ),
    (
        "a pod that finishes leaves used",
        Q,
        [
            make_pod("p1").ns("a").req(cpu="1").node("n1").phase("Running").obj(),
            make_pod("p2").ns("a").req(cpu="2").node("n1").phase("Running").obj(),
        ],
        [("finish", make_pod("p1").ns("a").node("n1").phase("Succeeded").obj())],
        {"cpu": "2", "memory": "0", GPU: "0"},
    ),
    (
        "a deleted pod leaves used",
        Q,
        [
            make_pod("p1").ns("a").req(cpu="1").node("n1").phase("Running").obj(),
            make_pod("p2").ns("a").req(cpu="2").node("n1").phase("Running").obj(),
        ],
        [("delete", make_pod("p2").ns("a").node("n1").obj())],
        {"cpu": "1", "memory": "0", GPU: "0"},
    ),
    (
        "quota under scheduling.sigs.k8s.io",
        quota("a", {GPU: 1}, {GPU: 4}, group="scheduling.sigs.k8s.io"),
        [make_pod("p1").ns("a").req({GPU: "3"}).node("n1").phase("Running").obj()],
        [],
        {GPU: "3"},
    ),
]


@pytest.mark.parametrize(("q", "pods", "after", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_status_used(q: Obj, pods: list[Obj], after: list[tuple[str, Obj]], want: dict[str, str]) -> None:
    assert _run(q, pods, after=after) == want


def test_a_quota_created_after_its_pods_counts_those_still_running() -> None:
    """Pods of a namespace without a quota are only remembered; the first quota there sums the ones running,
    each as it was when it started running (a later change of its requests is not counted, as for counted pods)."""
    clock = SimClock()
    store = MemoryStore(clock=clock)
    events: list[Any] = []
    store.subscribe(events.append)
    ctrl = ElasticQuotaController(store, clock)

    def pump() -> None:
        while events:
            ev = events.pop(0)
            ctrl.handle_event(ev.type, ev.object)

    def start(name: str, cpu: str) -> None:
        store.create(make_pod(name).ns("a").req(cpu=cpu).node("n1").obj())
        store.patch(POD, "a", name, {"status": {"phase": "Running"}}, subresource="status")

    start("p1", "1")
    start("p2", "2")
    start("p3", "4")
    pump()
    store.patch(POD, "a", "p2", {"status": {"phase": "Succeeded"}}, subresource="status")
    store.delete(POD, "a", "p3", grace_period_seconds=0)
    pump()
    assert ctrl.used("b") == {}
    store.create(quota("a", {"cpu": "4"}, None))
    pump()
    assert store.get(EQ, "a", "a")["status"]["used"] == {"cpu": "1"}
    start("p4", "500m")
    pump()
    assert store.get(EQ, "a", "a")["status"]["used"] == {"cpu": "1500m"}
    assert ctrl.used("a") == {"cpu": 1500}
