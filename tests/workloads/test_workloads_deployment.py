"""Deployment and ReplicaSet controllers in the simulation: objects, pods, scaling, rollouts, status, events."""

from __future__ import annotations

from typing import Any

import pytest
from workloads_helpers import (
    DEPLOY,
    POD,
    RS,
    advance,
    deployment,
    events,
    names,
    replica_set,
    start,
    stored_pods,
    template,
)

from berth.controllers.workloads.hashing import compute_hash
from berth.sim.engine import Simulation
from builders import make_node, make_pod

HASH = compute_hash(template(), None)  # the pod-template-hash of the Deployment's template
NEW_HASH = "56f748d4ff"  # ... of template(image="nginx:2")


def _rs(sim: Any, name: str) -> dict[str, Any]:
    return dict(sim.store.get(RS, "default", name))


def _deploy(sim: Any, name: str = "web") -> dict[str, Any]:
    return dict(sim.store.get(DEPLOY, "default", name))


def _patch_deploy(sim: Any, patch: dict[str, Any], name: str = "web") -> None:
    sim.store.patch(DEPLOY, "default", name, patch)


def test_deployment_creates_replica_set_and_pods() -> None:
    sim = start(make_node("n1").obj(), make_node("n2").obj(), deployment(), until=1)
    d = _deploy(sim)
    rs = _rs(sim, f"web-{HASH}")
    owner = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "web",
        "uid": d["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert rs["metadata"]["ownerReferences"] == [owner]
    assert rs["metadata"]["labels"] == {"app": "web", "pod-template-hash": HASH}
    assert rs["metadata"]["annotations"] == {
        "deployment.kubernetes.io/desired-replicas": "3",
        "deployment.kubernetes.io/max-replicas": "4",
        "deployment.kubernetes.io/revision": "1",
    }
    assert rs["spec"]["replicas"] == 3
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": HASH}}
    assert rs["spec"]["template"]["metadata"]["labels"] == {"app": "web", "pod-template-hash": HASH}
    assert d["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": "1"}
    got = stored_pods(sim)
    assert names(got) == [f"web-{HASH}-bqdcf", f"web-{HASH}-cb76t", f"web-{HASH}-zv9ng"]
    rs_ref = {**owner, "kind": "ReplicaSet", "name": f"web-{HASH}", "uid": rs["metadata"]["uid"]}
    for p in got:
        assert p["metadata"]["generateName"] == f"web-{HASH}-"
        assert p["metadata"]["labels"] == {"app": "web", "pod-template-hash": HASH}
        assert p["metadata"]["ownerReferences"] == [rs_ref]
        assert p["spec"]["containers"] == template()["spec"]["containers"]
        assert p["status"]["phase"] == "Running"


def test_status_and_conditions_after_rollout() -> None:
    sim = start(make_node("n1").obj(), deployment(), until=1)
    assert _rs(sim, f"web-{HASH}")["status"] == {
        "replicas": 3,
        "fullyLabeledReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "observedGeneration": 1,
    }
    ts = "2024-01-01T00:00:00Z"
    assert _deploy(sim)["status"] == {
        "observedGeneration": 1,
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "lastUpdateTime": ts,
                "lastTransitionTime": ts,
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
            },
            {
                "type": "Progressing",
                "status": "True",
                "lastUpdateTime": ts,
                "lastTransitionTime": ts,
                "reason": "NewReplicaSetAvailable",
                "message": f'ReplicaSet "web-{HASH}" has successfully progressed.',
            },
        ],
    }


def test_creation_events() -> None:
    sim = start(make_node("n1").obj(), make_node("n2").obj(), deployment(), until=1)
    assert events(sim, "ScalingReplicaSet", "SuccessfulCreate") == [
        ("00:00:00", "web", "ScalingReplicaSet", f"Scaled up replica set web-{HASH} from 0 to 3"),
        ("00:00:00", f"web-{HASH}", "SuccessfulCreate", f"Created pod: web-{HASH}-cb76t"),
        ("00:00:00", f"web-{HASH}", "SuccessfulCreate", f"Created pod: web-{HASH}-bqdcf"),
        ("00:00:00", f"web-{HASH}", "SuccessfulCreate", f"Created pod: web-{HASH}-zv9ng"),
    ]
    sources = {
        e["reason"]: e["source"]["component"]
        for e in sim.store.list(("", "Event"))[0]
        if e["reason"] in ("ScalingReplicaSet", "SuccessfulCreate")
    }
    assert sources == {
        "ScalingReplicaSet": "deployment-controller",
        "SuccessfulCreate": "replicaset-controller",
    }


@pytest.mark.parametrize("grace", [0, 30])
def test_deleted_pod_is_replaced(grace: int) -> None:
    sim = start(make_node("n1").obj(), deployment(replicas=2), until=1)
    before = names(stored_pods(sim))
    victim = before[0]
    sim.store.delete(POD, "default", victim, grace_period_seconds=grace)
    advance(sim, 2)
    active = names(stored_pods(sim, active_only=True))
    (replacement,) = set(active) - set(before)
    assert victim not in active and len(active) == 2
    assert events(sim, "SuccessfulCreate")[-1] == (
        "00:00:01",
        f"web-{HASH}",
        "SuccessfulCreate",
        f"Created pod: {replacement}",
    )
    assert _rs(sim, f"web-{HASH}")["status"]["replicas"] == 2
    terminating = [p for p in stored_pods(sim) if p["metadata"].get("deletionTimestamp")]
    assert names(terminating) == ([victim] if grace else [])


def test_finished_pod_is_replaced() -> None:
    tmpl = template(annotations={"berth.dev/duration": "10s"})
    sim = start(make_node("n1").obj(), deployment(replicas=1, template=tmpl), until=15)
    phases = sorted(p["status"]["phase"] for p in stored_pods(sim))
    assert phases == ["Running", "Succeeded"]
    assert len(events(sim, "SuccessfulCreate")) == 2
    assert (
        _rs(sim, f"web-{sim.store.list(RS)[0][0]['metadata']['labels']['pod-template-hash']}")["status"][
            "replicas"
        ]
        == 1
    )


@pytest.mark.parametrize(
    ("new", "message", "active"),
    [
        (5, f"Scaled up replica set web-{HASH} from 3 to 5", 5),
        (1, f"Scaled down replica set web-{HASH} from 3 to 1", 1),
        (0, f"Scaled down replica set web-{HASH} from 3 to 0", 0),
    ],
)
def test_scaling(new: int, message: str, active: int) -> None:
    sim = start(make_node("n1").obj(), deployment(), until=1)
    _patch_deploy(sim, {"spec": {"replicas": new}})
    advance(sim, 2)
    assert events(sim, "ScalingReplicaSet")[-1] == ("00:00:01", "web", "ScalingReplicaSet", message)
    assert len(stored_pods(sim, active_only=True)) == active
    rs = _rs(sim, f"web-{HASH}")
    assert (rs["spec"]["replicas"], rs["status"]["replicas"]) == (new, new)
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == str(new)
    d = _deploy(sim)["status"]
    assert (d.get("replicas", 0), d.get("availableReplicas", 0), d["observedGeneration"]) == (new, new, 2)


def test_scale_down_deletes_unassigned_pods_first() -> None:
    # 2 pods fit on the node (pods: "2"), 2 stay Pending; scaling to 2 deletes the Pending ones.
    sim = start(make_node("n1").capacity(pods="2").obj(), deployment(replicas=4), until=1)
    pending = sorted(p["metadata"]["name"] for p in stored_pods(sim) if not p["spec"].get("nodeName"))
    assert len(pending) == 2
    _patch_deploy(sim, {"spec": {"replicas": 2}})
    advance(sim, 2)
    deleted = sorted(m.removeprefix("Deleted pod: ") for _, _, _, m in events(sim, "SuccessfulDelete"))
    assert deleted == pending
    assert all(p["spec"].get("nodeName") == "n1" for p in stored_pods(sim))


def test_rolling_update() -> None:
    tmpl = template(annotations={"berth.dev/startup": "5s"})
    sim = start(make_node("n1").obj(), make_node("n2").obj(), deployment(replicas=4, template=tmpl), until=20)
    old = f"web-{sim.store.list(RS)[0][0]['metadata']['labels']['pod-template-hash']}"
    _patch_deploy(
        sim, {"spec": {"template": template(image="nginx:2", annotations={"berth.dev/startup": "5s"})}}
    )
    advance(sim, 60)
    rss = {rs["metadata"]["name"]: rs for rs in sim.store.list(RS)[0]}
    new = next(n for n in rss if n != old)
    assert (rss[old]["spec"]["replicas"], rss[new]["spec"]["replicas"]) == (0, 4)
    assert rss[old]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert rss[new]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    d = _deploy(sim)
    assert d["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": "2"}
    assert {k: v for k, v in d["status"].items() if k != "conditions"} == {
        "observedGeneration": 2,
        "replicas": 4,
        "updatedReplicas": 4,
        "readyReplicas": 4,
        "availableReplicas": 4,
    }
    progressing = d["status"]["conditions"][-1]
    assert (progressing["reason"], progressing["message"]) == (
        "NewReplicaSetAvailable",
        f'ReplicaSet "{new}" has successfully progressed.',
    )
    assert {p["spec"]["containers"][0]["image"] for p in stored_pods(sim)} == {"nginx:2"}
    scaling = [(t, m) for t, _, _, m in events(sim, "ScalingReplicaSet")][1:]
    assert scaling == [
        ("00:00:20", f"Scaled up replica set {new} from 0 to 1"),
        ("00:00:20", f"Scaled down replica set {old} from 4 to 3"),
        ("00:00:20", f"Scaled up replica set {new} from 1 to 2"),
        ("00:00:25", f"Scaled down replica set {old} from 3 to 1"),
        ("00:00:25", f"Scaled up replica set {new} from 2 to 4"),
        ("00:00:30", f"Scaled down replica set {old} from 1 to 0"),
    ]


def test_rolling_update_respects_surge_and_unavailability() -> None:
    tmpl = template(annotations={"berth.dev/startup": "5s"})
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
    sim = start(make_node("n1").obj(), deployment(replicas=3, template=tmpl, strategy=strategy), until=20)
    _patch_deploy(
        sim, {"spec": {"template": template(image="nginx:2", annotations={"berth.dev/startup": "5s"})}}
    )
    seen_max = 0
    for t in range(20, 60):
        advance(sim, t)
        active = len(stored_pods(sim, active_only=True))
        seen_max = max(seen_max, active)
        ready = sum(
            1
            for p in stored_pods(sim, active_only=True)
            if any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))
        )
        assert ready >= 2
    assert seen_max == 3
    assert {p["spec"]["containers"][0]["image"] for p in stored_pods(sim, active_only=True)} == {"nginx:2"}


def test_recreate_waits_for_old_pods() -> None:
    sim = start(make_node("n1").obj(), deployment(replicas=2, strategy={"type": "Recreate"}), until=1)
    _patch_deploy(sim, {"spec": {"template": template(image="nginx:2")}})
    advance(sim, 60)
    scaling = [(t, m) for t, _, _, m in events(sim, "ScalingReplicaSet")]
    assert scaling == [
        ("00:00:00", f"Scaled up replica set web-{HASH} from 0 to 2"),
        ("00:00:01", f"Scaled down replica set web-{HASH} from 2 to 0"),
        ("00:00:31", f"Scaled up replica set web-{NEW_HASH} from 0 to 2"),
    ]
    assert {p["spec"]["containers"][0]["image"] for p in stored_pods(sim)} == {"nginx:2"}


def test_bare_replica_set_adopts_matching_orphan() -> None:
    orphan = make_pod("stray").label(app="web").image("nginx").req(cpu="100m").obj()
    sim = start(make_node("n1").obj(), orphan, replica_set(replicas=2), until=1)
    rs = _rs(sim, "rs")
    got = stored_pods(sim)
    assert len(got) == 2 and "stray" in names(got)
    stray = next(p for p in got if p["metadata"]["name"] == "stray")
    assert stray["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
    assert len(events(sim, "SuccessfulCreate")) == 1
    assert rs["status"]["replicas"] == 2


def test_deleting_the_deployment_collects_replica_sets_and_pods() -> None:
    sim = start(make_node("n1").obj(), deployment(), until=1)
    sim.store.delete(DEPLOY, "default", "web")
    advance(sim, 60)
    assert sim.store.list(RS)[0] == [] and stored_pods(sim) == []


def test_minimum_ready_seconds_delays_availability() -> None:
    sim = start(make_node("n1").obj(), deployment(replicas=2, minReadySeconds=10), until=5)
    assert _deploy(sim)["status"].get("availableReplicas", 0) == 0
    assert _rs(sim, f"web-{HASH}")["status"]["readyReplicas"] == 2
    advance(sim, 11)
    assert _deploy(sim)["status"]["availableReplicas"] == 2


def test_progress_deadline_exceeded() -> None:
    big = template(cpu="100")  # never fits
    sim = start(
        make_node("n1").obj(), deployment(replicas=1, template=big, progressDeadlineSeconds=30), until=40
    )
    rs_name = sim.store.list(RS)[0][0]["metadata"]["name"]
    cond = _deploy(sim)["status"]["conditions"][-1]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
        "Progressing",
        "False",
        "ProgressDeadlineExceeded",
        f'ReplicaSet "{rs_name}" has timed out progressing.',
    )
    available = _deploy(sim)["status"]["conditions"][0]
    assert (available["status"], available["reason"], available["message"]) == (
        "False",
        "MinimumReplicasUnavailable",
        "Deployment does not have minimum availability.",
    )


def test_controllers_coalesce_a_burst() -> None:
    sim = Simulation(seed=0)
    writes: list[str] = []
    sim.store.subscribe(lambda ev: writes.append(ev.type), key=RS)
    sim.store.create(make_node("n1").obj())
    sim.store.create(deployment(replicas=20))
    advance(sim, 1)
    # created, scaled into the status once the 20 pods exist, then once when they are all ready
    assert writes == ["ADDED", "MODIFIED", "MODIFIED"]
    assert _rs(sim, f"web-{HASH}")["status"]["readyReplicas"] == 20
    assert sim.workloads.pending() == 0


def test_an_orphan_created_after_its_replica_set_is_adopted_and_not_after_the_set_is_gone() -> None:
    sim = start(make_node("n1").obj(), replica_set(replicas=1), until=1)
    rs_uid = _rs(sim, "rs")["metadata"]["uid"]
    sim.store.create(make_pod("stray").label(app="web").image("nginx").req(cpu="100m").obj())
    advance(sim, 2)
    stray = sim.store.get(POD, "default", "stray")
    assert [r["uid"] for r in stray["metadata"].get("ownerReferences") or []] == [rs_uid]
    sim.store.delete(RS, "default", "rs", propagation="Orphan")
    advance(sim, 3)
    sim.store.create(make_pod("late").label(app="web").image("nginx").req(cpu="100m").obj())
    advance(sim, 4)
    assert sim.store.get(POD, "default", "late")["metadata"].get("ownerReferences") is None
