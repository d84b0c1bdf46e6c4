"""Properties of reservation scheduling over random small clusters."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rsv_helpers import ALLOCATED, KOORD, reservation, simulate

from berth.api.quantity import resource_amount
from berth.api.resources import pod_requests
from builders import make_node, make_pod

APPS = ("a", "b")
RESOURCES = ("cpu", "memory")


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    n_nodes = draw(st.integers(1, 3))
    nodes = [
        make_node(f"node-{i}")
        .capacity(cpu=str(draw(st.integers(2, 6))), memory=f"{draw(st.integers(2, 8))}Gi")
        .obj()
        for i in range(n_nodes)
    ]
    rs = []
    for i in range(draw(st.integers(0, 4))):
        pinned = draw(st.one_of(st.none(), st.integers(0, n_nodes - 1)))
        rs.append(
            reservation(
                f"r-{i}",
                f"{draw(st.integers(1, 4)) * 500}m",
                f"{draw(st.integers(1, 4)) * 512}Mi",
                owners=[{"labelSelector": {"matchLabels": {"app": draw(st.sampled_from(APPS))}}}],
                node_name=None if pinned is None else f"node-{pinned}",
                allocate_once=draw(st.booleans()),
                policy=draw(st.sampled_from([None, "Aligned", "Restricted"])),
            )
        )
    pods = []
    for i in range(draw(st.integers(0, 6))):
        app = draw(st.sampled_from([*APPS, None]))
        pods.append(
            make_pod(f"p-{i}")
            .scheduler(KOORD)
            .req(cpu=f"{draw(st.integers(1, 6)) * 250}m", memory=f"{draw(st.integers(1, 6)) * 256}Mi")
            .label({"app": app} if app else None)
            .obj()
        )
    return nodes, rs, pods


def _amounts(rl: dict[str, Any] | None) -> dict[str, int]:
    return {k: resource_amount(k, v) for k, v in (rl or {}).items() if k in RESOURCES}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.integers(0, 3))
def test_no_overcommit_and_only_owners_allocate(
    cluster: tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]], seed: int
) -> None:
    nodes, rs, pods = cluster
    half = len(pods) // 2
    sim = simulate([*nodes, *rs], pods[:half], pods[half:], seed=seed)
    objs = sim.objects()
    by_uid = {o["metadata"]["uid"]: o for o in objs if o["kind"] == "Reservation"}
    used: dict[str, dict[str, int]] = {n["metadata"]["name"]: dict.fromkeys(RESOURCES, 0) for n in nodes}
    owner_sum: dict[str, dict[str, int]] = {uid: dict.fromkeys(RESOURCES, 0) for uid in by_uid}
    for p in (o for o in objs if o["kind"] == "Pod"):
        node_name = p["spec"].get("nodeName")
        raw = (p["metadata"].get("annotations") or {}).get(ALLOCATED)
        if not node_name:
            assert raw is None
            continue
        if p.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        req = pod_requests(p)
        for r in RESOURCES:
            used[node_name][r] += req.get(r, 0)
        if raw is None:
            continue
        ref = json.loads(raw)
        res = by_uid[ref["uid"]]
        assert ref["name"] == res["metadata"]["name"]
        # only owners carry the annotation, and only on the reservation's node
        owner_app = res["spec"]["owners"][0]["labelSelector"]["matchLabels"]["app"]
        assert (p["metadata"].get("labels") or {}).get("app") == owner_app
        assert node_name == res["status"]["nodeName"]
        for r in RESOURCES:
            owner_sum[ref["uid"]][r] += req.get(r, 0)
    for uid, res in by_uid.items():
        status = res.get("status") or {}
        alloc = _amounts(status.get("allocatable"))
        allocated = _amounts(status.get("allocated"))
        for r in RESOURCES:
            assert owner_sum[uid][r] <= max(alloc.get(r, 0), allocated.get(r, 0))
        if status.get("phase") in ("Available", "Succeeded"):
            # status.allocated is exactly the owners' requests for the reserved resources
            expected = {r: v for r, v in owner_sum[uid].items() if v and r in alloc}
            assert {r: v for r, v in allocated.items() if v} == expected
        if status.get("phase") == "Available":
            for r in RESOURCES:
                used[status["nodeName"]][r] += max(0, alloc.get(r, 0) - owner_sum[uid][r])
    for n in nodes:
        name = n["metadata"]["name"]
        cap = _amounts(n["status"]["allocatable"])
        for r in RESOURCES:
            assert used[name][r] <= cap[r], (name, r, used[name], cap)
