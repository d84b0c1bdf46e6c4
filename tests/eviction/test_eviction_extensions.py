"""Berth's eviction extensions: the disruption rate limit and PreferAvoidPods (annotation, expiry, scoring)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from eviction_helpers import NODE, POD, get_pdb, new_store, pdb, replica_set

from berth.scheduler.framework import CycleState, NodeTable, PodInfo
from berth.scheduler.framework.config import parse_config
from berth.scheduler.plugins.nodepreferavoidpods import NodePreferAvoidPods, parse_avoid_pods
from berth.sim.engine import Simulation
from berth.store.eviction import (
    ANNOTATION_DISRUPTION_HISTORY,
    ANNOTATION_PREFER_AVOID_PODS,
    EvictionBlocked,
    evict,
)
from builders import create, make_node, make_pod, make_table

T0 = datetime(2024, 1, 1, tzinfo=UTC).timestamp()


# ----- rate limit ---------------------------------------------------------------------------------------


def test_rate_limit_one_per_hour() -> None:
    store, clock = new_store()
    for i in range(3):
        create(store, make_pod(f"web-{i}").label(app="web").node("n1").running())
    pdb(store, allowed=3, annotations={"berth.dev/max-disruptions": "1/1h"})
    evict(store, "default", "web-0")
    history = get_pdb(store)["metadata"]["annotations"][ANNOTATION_DISRUPTION_HISTORY]
    assert history == '[{"pod":"web-0","time":"2024-01-01T00:00:00Z"}]'
    clock.run(until=10.0)
    with pytest.raises(EvictionBlocked) as info:
        evict(store, "default", "web-1")
    assert info.value.message == "Cannot evict pod as it would violate the pod's disruption budget."
    assert info.value.causes == [
        ("DisruptionBudget", "The disruption budget web-pdb allows 1 disruptions per 1h")
    ]
    assert info.value.retry_after_seconds == 3590
    assert get_pdb(store)["status"]["disruptionsAllowed"] == 2  # refused: no debit
    clock.run(until=3600.0)
    evict(store, "default", "web-1")
    assert get_pdb(store)["metadata"]["annotations"][ANNOTATION_DISRUPTION_HISTORY] == (
        '[{"pod":"web-1","time":"2024-01-01T01:00:00Z"}]'
    )
    assert get_pdb(store)["metadata"]["generation"] == 1  # annotations do not bump the generation


@pytest.mark.parametrize(
    ("times", "blocked_at", "retry"),
    [
        ((0.0, 60.0), 120.0, 480),
        ((0.0, 599.0), 599.0, 1),
    ],
)
def test_rate_limit_two_per_ten_minutes(times: tuple[float, ...], blocked_at: float, retry: int) -> None:
    store, clock = new_store()
    for i in range(3):
        create(store, make_pod(f"web-{i}").label(app="web").node("n1").running())
    pdb(store, allowed=3, annotations={"berth.dev/max-disruptions": "2/10m"})
    for i, t in enumerate(times):
        clock.run(until=t)
        evict(store, "default", f"web-{i}")
    clock.run(until=blocked_at)
    with pytest.raises(EvictionBlocked) as info:
        evict(store, "default", "web-2")
    assert info.value.causes[0][1] == "The disruption budget web-pdb allows 2 disruptions per 10m"
    assert info.value.retry_after_seconds == retry
    clock.run(until=blocked_at + retry)
    evict(store, "default", "web-2")


def test_rate_limit_dry_run_and_non_debit_evictions() -> None:
    store, _ = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running())
    create(store, make_pod("done").label(app="web").node("n1").phase("Succeeded").ready())
    pdb(store, allowed=3, annotations={"berth.dev/max-disruptions": "0/1h"})
    with pytest.raises(EvictionBlocked):
        evict(store, "default", "web-0", dry_run=True)
    evict(store, "default", "done")  # finished pods bypass budgets and the limit
    assert ANNOTATION_DISRUPTION_HISTORY not in get_pdb(store)["metadata"]["annotations"]


# ----- PreferAvoidPods annotation -----------------------------------------------------------------------


def _avoid_doc(store: Any, name: str = "n1") -> dict[str, Any] | None:
    raw = (store.get(NODE, "", name)["metadata"].get("annotations") or {}).get(ANNOTATION_PREFER_AVOID_PODS)
    return None if raw is None else dict(json.loads(raw))


def test_avoid_writes_kube_avoid_pods_json() -> None:
    store, _ = new_store()
    create(store, make_node())
    rs = replica_set(store)
    create(store, make_pod("web-0").label(app="web").node("n1").owned_by(rs).running())
    evict(store, "default", "web-0", avoid=True)
    raw = store.get(NODE, "", "n1")["metadata"]["annotations"][ANNOTATION_PREFER_AVOID_PODS]
    uid = rs["metadata"]["uid"]
    assert raw == (
        '{"preferAvoidPods":[{"podSignature":{"podController":{"apiVersion":"apps/v1","kind":"ReplicaSet",'
        f'"name":"web","uid":"{uid}","controller":true}}}},"evictionTime":"2024-01-01T00:00:00Z",'
        '"reason":"Evicted","message":"pod default/web-0 was evicted from this node"}]}'
    )


def test_avoid_refreshes_entry_and_prunes_expired() -> None:
    store, clock = new_store()
    create(store, make_node())
    stale = {
        "podSignature": {"podController": {"kind": "ReplicaSet", "uid": "old", "name": "old"}},
        "evictionTime": "2023-12-31T22:00:00Z",
    }
    forever = {"podSignature": {"podController": {"kind": "ReplicaSet", "uid": "static", "name": "s"}}}
    store.patch(
        NODE,
        "",
        "n1",
        {
            "metadata": {
                "annotations": {
                    ANNOTATION_PREFER_AVOID_PODS: json.dumps({"preferAvoidPods": [stale, forever]})
                }
            }
        },
    )
    rs = replica_set(store)
    create(store, make_pod("web-0").label(app="web").node("n1").owned_by(rs).running())
    create(store, make_pod("web-1").label(app="web").node("n1").owned_by(rs).running())
    evict(store, "default", "web-0", avoid=True)
    clock.run(until=100.0)
    evict(store, "default", "web-1", avoid=True)
    doc = _avoid_doc(store)
    assert doc is not None
    entries = doc["preferAvoidPods"]
    assert [e["podSignature"]["podController"]["uid"] for e in entries] == ["static", rs["metadata"]["uid"]]
    assert entries[1]["evictionTime"] == "2024-01-01T00:01:40Z"
    assert entries[1]["message"] == "pod default/web-1 was evicted from this node"


@pytest.mark.parametrize(
    ("owned", "avoid"),
    [(False, True), (True, False)],
    ids=["no-controller", "avoid-off"],
)
def test_avoid_not_written(owned: bool, avoid: bool) -> None:
    store, _ = new_store()
    create(store, make_node())
    rs = replica_set(store)
    web = make_pod("web-0").label(app="web").node("n1").running()
    create(store, web.owned_by(rs) if owned else web)
    evict(store, "default", "web-0", avoid=avoid)
    assert _avoid_doc(store) is None


# ----- NodePreferAvoidPods scoring ----------------------------------------------------------------------


def _avoid(*entries: dict[str, Any]) -> dict[str, str]:
    """The PreferAvoidPods annotation listing ``entries``."""
    return {ANNOTATION_PREFER_AVOID_PODS: json.dumps({"preferAvoidPods": list(entries)})}


def _entry(kind: str, uid: str, when: str | None) -> dict[str, Any]:
    e: dict[str, Any] = {
        "podSignature": {"podController": {"kind": kind, "uid": uid, "name": "x", "controller": True}}
    }
    if when is not None:
        e["evictionTime"] = when
    return e


def _table() -> NodeTable:
    return make_table(
        [
            make_node("fresh").annotate(_avoid(_entry("ReplicaSet", "rs-1", "2024-01-01T00:30:00Z"))),
            make_node("plain"),
            make_node("expired").annotate(_avoid(_entry("ReplicaSet", "rs-1", "2023-12-31T23:59:59Z"))),
            make_node("malformed").annotate({ANNOTATION_PREFER_AVOID_PODS: "{not json"}),
            make_node("static").annotate(
                _avoid(_entry("ReplicationController", "rc-1", None), _entry("ReplicaSet", "rs-2", None))
            ),
            make_node("other-kind").annotate(_avoid(_entry("Deployment", "rs-1", "2024-01-01T00:30:00Z"))),
        ]
    )


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        (make_pod().owner("ReplicaSet", "x", "rs-1").info(), [0, 100, 100, 100, 100, 100]),
        (make_pod().owner("ReplicaSet", "x", "rs-2").info(), [100, 100, 100, 100, 0, 100]),
        (
            make_pod().owner("ReplicationController", "x", "rc-1").info(),
            [100, 100, 100, 100, 0, 100],
        ),
        (make_pod().owner("Deployment", "x", "rs-1").info(), [100] * 6),
        (make_pod().owner("StatefulSet", "x", "rs-1").info(), [100] * 6),
        (make_pod().info(), [100] * 6),
    ],
    ids=["rs", "rs-static", "rc", "deployment-kind", "statefulset", "no-controller"],
)
def test_scores_per_node_and_batched(pod: PodInfo, expected: list[int]) -> None:
    plugin = NodePreferAvoidPods(lambda: T0 + 3600.0)  # 01:00: the 00:30 entry is live, 23:59:59 expired
    table = _table()
    state = CycleState()
    assert [plugin.score(state, pod, table.info(i)) for i in range(table.size)] == expected
    idx = np.arange(table.size, dtype=np.int64)
    assert plugin.score_nodes(state, pod, table, idx).tolist() == expected
    sub = np.asarray([4, 0], dtype=np.int64)
    assert plugin.score_nodes(state, pod, table, sub).tolist() == [expected[4], expected[0]]


def test_entries_expire_after_an_hour() -> None:
    table = _table()
    pod = make_pod().owner("ReplicaSet", "x", "rs-1").info()
    live = NodePreferAvoidPods(lambda: T0 + 1800.0 + 3599.0)
    gone = NodePreferAvoidPods(lambda: T0 + 1800.0 + 3600.0)
    idx = np.arange(1, dtype=np.int64)
    assert live.score_nodes(CycleState(), pod, table, idx).tolist() == [0]
    assert gone.score_nodes(CycleState(), pod, table, idx).tolist() == [100]


def test_parse_avoid_pods() -> None:
    assert parse_avoid_pods(make_node("n").annotate({ANNOTATION_PREFER_AVOID_PODS: "[]"}).obj()) == ()
    avoided = make_node("n").annotate(_avoid(_entry("ReplicaSet", "u", "2024-01-01T00:00:00Z"))).obj()
    assert parse_avoid_pods(avoided) == (("ReplicaSet", "u", T0),)


@pytest.mark.parametrize("seed", range(8))
def test_replacement_avoids_the_node_it_was_evicted_from(seed: int) -> None:
    # NodePreferAvoidPods is no default plugin (kube removed it in 1.24): the profile enables it
    avoiding = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {"score": {"enabled": [{"name": "NodePreferAvoidPods", "weight": 10000}]}},
                }
            ],
        }
    )
    sim = Simulation(config=avoiding, seed=seed)
    for name in ("node-a", "node-b"):
        sim.store.create(make_node(name).obj())
    sim.store.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "x"}]},
                },
            },
        }
    )
    sim.advance(1.0)
    (first,) = sim.store.list(POD)[0]
    evict(sim.store, "default", first["metadata"]["name"], grace_period_seconds=0, avoid=True)
    sim.advance(2.0)
    (second,) = sim.store.list(POD)[0]
    assert second["metadata"]["name"] != first["metadata"]["name"]
    assert second["spec"]["nodeName"] != first["spec"]["nodeName"]
