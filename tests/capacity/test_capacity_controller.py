"""The ElasticQuota status controller: status.used = requests of Running pods, for the names in min and max."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from capacity_helpers import EQ, GPU, POD, Obj, pod, quota

from berth.clock import SimClock
from berth.controllers.elasticquota import ElasticQuotaController
from berth.store import MemoryStore


def _pod(name: str, requests: dict[str, str], phase: str | None, ns: str = "a") -> Obj:
    p = pod(name, ns, requests, on="n1", phase=phase)
    del p["metadata"]["uid"]
    return p


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
            _pod("p1", {"cpu": "1500m", "memory": "1Gi"}, "Running"),
            _pod("p2", {"cpu": "1", GPU: "1"}, "Running"),
        ],
        [],
        {"cpu": "2500m", "memory": "1Gi", GPU: "1"},
    ),
    (
        "pending and finished pods are not counted",
        Q,
        [
            _pod("p1", {"cpu": "1"}, "Pending"),
            _pod("p2", {"cpu": "2"}, "Succeeded"),
            _pod("p3", {"cpu": "3"}, None),
        ],
        [],
        {"cpu": "0", "memory": "0", GPU: "0"},
    ),
    (
        "resources named in neither min nor max are left out",
        quota("a", {"cpu": "1"}, None),
        [_pod("p1", {"cpu": "1", "memory": "1Gi", GPU: "1"}, "Running")],
        [],
        {"cpu": "1"},
    ),
    (
        "pods of other namespaces are not counted",
        Q,
        [_pod("p1", {"cpu": "1"}, "Running", ns="b")],
        [],
        {"cpu": "0", "memory": "0", GPU: "0"},
    ),
    (
        "a pod that finishes leaves used",
        Q,
        [_pod("p1", {"cpu": "1"}, "Running"), _pod("p2", {"cpu": "2"}, "Running")],
        [("finish", {**_pod("p1", {}, None), "status": {"phase": "Succeeded"}})],
        {"cpu": "2", "memory": "0", GPU: "0"},
    ),
    (
        "a deleted pod leaves used",
        Q,
        [_pod("p1", {"cpu": "1"}, "Running"), _pod("p2", {"cpu": "2"}, "Running")],
        [("delete", _pod("p2", {}, None))],
        {"cpu": "1", "memory": "0", GPU: "0"},
    ),
    (
        "quota under scheduling.sigs.k8s.io",
        quota("a", {GPU: 1}, {GPU: 4}, group="scheduling.sigs.k8s.io"),
        [_pod("p1", {GPU: "3"}, "Running")],
        [],
        {GPU: "3"},
    ),
]


@pytest.mark.parametrize(("q", "pods", "after", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_status_used(q: Obj, pods: list[Obj], after: list[tuple[str, Obj]], want: dict[str, str]) -> None:
    assert _run(q, pods, after=after) == want
