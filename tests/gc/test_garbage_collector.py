"""The garbage collector and the apiserver's delete options: Background, Foreground and Orphan propagation,
dangling and unverifiable owner references, blockOwnerDeletion, and the finalizers a delete sets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from berth.api.errors import BadRequest, Conflict, Invalid, NotFound
from berth.clock import SimClock
from berth.controllers.garbagecollector import GarbageCollector
from berth.controlplane.plane import ControlPlane
from berth.server.deleteoptions import delete_options
from berth.server.rest import Request, RestAPI
from berth.sim.engine import Simulation
from berth.sim.scenario import ObjectRef, Step
from berth.store import MemoryStore
from builders import make_node, make_pod

POD = ("", "Pod")
RS = ("apps", "ReplicaSet")
DEPLOY = ("apps", "Deployment")
Obj = dict[str, Any]


def _template(grace: int | None = None) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"metadata": {"labels": {"app": "web"}}, "spec": spec}


def _workload(kind: str, name: str, replicas: int, grace: int | None = None) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": _template(grace),
        },
    }


def _ref(owner: Obj, *, block: bool | None = True, controller: bool = True) -> Obj:
    ref: Obj = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": controller,
    }
    if block is not None:
        ref["blockOwnerDeletion"] = block
    return ref


class Harness:
    """A store, a clock and only the garbage collector (no other controller, no kubelet): exact effects."""

    def __init__(self, *loaded: Obj) -> None:
        self.clock = SimClock()
        self.store = MemoryStore(clock=self.clock)
        self.store.load(loaded)
        self.log: list[tuple[float, str, str, str]] = []
        self.gc = GarbageCollector(self.store, self.clock)
        self.store.subscribe(self._seen)

    def _seen(self, ev: Any) -> None:
        obj = ev.object
        what = ev.type
        if what == "MODIFIED" and obj["metadata"].get("deletionTimestamp"):
            what = "TERMINATING"
        self.log.append((self.clock.now(), what, obj["kind"], obj["metadata"]["name"]))
        self.gc.handle_event(ev.type, obj)

    def create(self, obj: Obj) -> Obj:
        return self.store.create(obj)

    def run(self, until: float | None = None) -> None:
        self.clock.run(until=until)

    def exists(self, key: tuple[str, str], name: str) -> bool:
        try:
            self.store.get(key, "default", name)
        except NotFound:
            return False
        return True

    def get(self, key: tuple[str, str], name: str) -> Obj:
        return self.store.get(key, "default", name)


def _bound_pod(name: str, *owners: Obj, grace: int | None = None) -> Obj:
    builder = make_pod(name).node("n1").meta(ownerReferences=list(owners))
    if grace is not None:
        builder = builder.grace(grace)
    return builder.obj()


# ------------------------------------------------------------------------------------------ delete options


def test_delete_sets_the_finalizers_of_the_policy() -> None:
    h = Harness()
    for name in ("fg", "orph", "bg"):
        h.create(_workload("ReplicaSet", name, 0))
    fg = h.store.delete(RS, "default", "fg", propagation="Foreground")
    assert (fg["metadata"]["finalizers"], fg["metadata"]["deletionGracePeriodSeconds"]) == (
        ["foregroundDeletion"],
        0,
    )
    assert fg["metadata"]["deletionTimestamp"] == "2024-01-01T00:00:00Z"
    assert fg["metadata"]["generation"] == 2
    orphan = h.store.delete(RS, "default", "orph", propagation="Orphan")
    assert orphan["metadata"]["finalizers"] == ["orphan"]
    gone = h.store.delete(RS, "default", "bg", propagation="Background")
    assert "finalizers" not in gone["metadata"] and not h.exists(RS, "bg")


def test_a_finalizer_already_there_decides_when_no_policy_is_given() -> None:
    store = MemoryStore()
    rs = _workload("ReplicaSet", "a", 0)
    rs["metadata"]["finalizers"] = ["example.com/keep", "orphan"]
    store.create(rs)
    marked = store.delete(RS, "default", "a")
    assert marked["metadata"]["finalizers"] == ["example.com/keep", "orphan"]
    # a Foreground delete of an object already marked replaces the GC finalizer, keeping the others in order
    again = store.delete(RS, "default", "a", propagation="Foreground")
    assert again["metadata"]["finalizers"] == ["example.com/keep", "foregroundDeletion"]
    assert again["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]
    assert again["metadata"]["generation"] == marked["metadata"]["generation"] == 2
    # the same policy again changes nothing: no write
    assert store.delete(RS, "default", "a", propagation="Foreground") is again


def test_background_delete_of_an_object_waiting_in_foreground_removes_it() -> None:
    store = MemoryStore()
    store.create(_workload("ReplicaSet", "a", 0))
    store.delete(RS, "default", "a", propagation="Foreground")
    final = store.delete(RS, "default", "a", propagation="Background")
    assert final["metadata"]["finalizers"] == ["foregroundDeletion"]  # the state it was removed in
    with pytest.raises(NotFound):
        store.get(RS, "default", "a")


def test_a_pod_deleted_in_foreground_is_graceful_and_keeps_the_finalizer() -> None:
    store = MemoryStore()
    store.create(make_pod("p").node("n1").obj())
    marked = store.delete(POD, "default", "p", propagation="Foreground")
    meta = marked["metadata"]
    assert (meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"], meta["finalizers"]) == (
        "2024-01-01T00:00:30Z",
        30,
        ["foregroundDeletion"],
    )
    # while its grace period runs its finalizers are as they are: Orphan changes nothing
    assert store.delete(POD, "default", "p", propagation="Orphan") is marked
    # the kubelet's final delete leaves it waiting for the finalizer
    final = store.delete(POD, "default", "p", grace_period_seconds=0)
    assert final["metadata"]["deletionGracePeriodSeconds"] == 0
    assert store.get(POD, "default", "p") is final


def test_delete_preconditions_name_the_kind() -> None:
    store = MemoryStore()
    rs = store.create(_workload("ReplicaSet", "a", 0))
    with pytest.raises(Conflict) as info:
        store.delete(RS, "default", "a", uid="other")
    assert str(info.value) == (
        'Operation cannot be fulfilled on ReplicaSet.apps "a": the UID in the precondition (other) does not match '
        f"the UID in record ({rs['metadata']['uid']}). The object might have been deleted and then recreated"
    )
    assert info.value.to_status()["details"] == {"name": "a", "group": "apps", "kind": "ReplicaSet"}
    with pytest.raises(Conflict, match=r"the ResourceVersion in the precondition \(9\) does not match"):
        store.delete(RS, "default", "a", uid=rs["metadata"]["uid"], resource_version="9")
    store.delete(
        RS, "default", "a", uid=rs["metadata"]["uid"], resource_version=rs["metadata"]["resourceVersion"]
    )
    assert store.list(RS)[0] == []


def test_unsupported_propagation_policy_is_invalid() -> None:
    store = MemoryStore()
    store.create(_workload("ReplicaSet", "a", 0))
    with pytest.raises(Invalid) as info:
        store.delete(RS, "default", "a", propagation="Cascade")
    assert info.value.code == 422
    assert str(info.value) == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Cascade": supported '
        'values: "Foreground", "Background", "Orphan", "nil"'
    )


def test_dry_run_delete_answers_the_final_state_and_writes_nothing() -> None:
    store = MemoryStore()
    store.create(make_pod("p").node("n1").obj())
    rev = store.revision
    out = store.delete(POD, "default", "p", propagation="Foreground", dry_run=True)
    assert out["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert store.revision == rev and "deletionTimestamp" not in store.get(POD, "default", "p")["metadata"]


@pytest.mark.parametrize(
    ("query", "body", "has_body", "expected"),
    [
        ({}, {"propagationPolicy": "Foreground"}, True, "Foreground"),
        ({}, {"orphanDependents": True}, True, "Orphan"),
        ({}, {"orphanDependents": False}, True, "Background"),
        ({"propagationPolicy": ["Orphan"]}, {}, False, "Orphan"),
        ({"orphanDependents": ["false"]}, {}, False, "Background"),
        ({"orphanDependents": ["yes"]}, {}, False, "Orphan"),
        (
            {"propagationPolicy": ["Orphan"]},
            {"kind": "DeleteOptions"},
            True,
            None,
        ),  # a body: the query is not read
    ],
)
def test_delete_options(query: Any, body: Obj, has_body: bool, expected: str | None) -> None:
    assert delete_options(query, body, has_body).propagation == expected


def test_delete_options_refused() -> None:
    with pytest.raises(Invalid) as info:
        delete_options({}, {"propagationPolicy": "Orphan", "orphanDependents": True}, True)
    assert str(info.value) == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and '
        "deletionPropagation cannot be both set"
    )
    with pytest.raises(Invalid) as info:
        delete_options({"propagationPolicy": ["x"], "orphanDependents": ["true"]}, {}, False)
    assert len(info.value.causes) == 2
    with pytest.raises(BadRequest) as bad:
        delete_options({}, {"propagationPolicy": 3}, True)
    assert str(bad.value) == (
        "json: cannot unmarshal number into Go struct field DeleteOptions.propagationPolicy of type "
        "v1.DeletionPropagation"
    )
    assert delete_options({}, {"preconditions": {"uid": "u", "resourceVersion": "3"}}, True).uid == "u"


def test_rest_delete_carries_policy_and_preconditions() -> None:
    store = MemoryStore()
    rs = store.create(_workload("ReplicaSet", "a", 0))
    api = RestAPI(store)
    path = "/apis/apps/v1/namespaces/default/replicasets/a"

    def delete(body: Obj) -> tuple[int, Obj]:
        return api.handle(Request("DELETE", path, {}, json.dumps(body).encode()))

    code, status = delete({"preconditions": {"uid": "nope"}})
    assert (code, status["reason"]) == (409, "Conflict")
    code, status = delete({"propagationPolicy": "Sideways"})
    assert (code, status["reason"], status["details"]["kind"]) == (422, "Invalid", "DeleteOptions")
    code, out = delete({"propagationPolicy": "Orphan", "preconditions": {"uid": rs["metadata"]["uid"]}})
    assert (code, out["metadata"]["finalizers"]) == (200, ["orphan"])


# ------------------------------------------------------------------------------------------------ Background


def test_background_deletes_deployment_then_replica_set_then_pods() -> None:
    sim = Simulation()
    sim.store.create(make_node("n1").obj())
    sim.store.create(_workload("Deployment", "web", 2))
    sim.advance(5)
    rs_name = sim.store.list(RS)[0][0]["metadata"]["name"]
    pods = sorted(p["metadata"]["name"] for p in sim.store.list(POD)[0])
    log: list[tuple[float, str, str, str]] = []

    def seen(ev: Any) -> None:
        if ev.object["kind"] in ("Deployment", "ReplicaSet", "Pod"):
            what = "TERMINATING" if ev.object["metadata"].get("deletionTimestamp") else ev.type
            log.append(
                (
                    sim.clock.now(),
                    ev.type if ev.type == "DELETED" else what,
                    ev.object["kind"],
                    ev.object["metadata"]["name"],
                )
            )

    sim.store.subscribe(seen)
    sim.store.delete(DEPLOY, "default", "web", propagation="Background")
    sim.advance(60)
    gone = [e for e in log if e[1] in ("DELETED", "TERMINATING")]
    assert gone == [
        (5.0, "DELETED", "Deployment", "web"),
        (5.0, "DELETED", "ReplicaSet", rs_name),
        *[(5.0, "TERMINATING", "Pod", p) for p in pods],
        *[(35.0, "DELETED", "Pod", p) for p in pods],
    ]
    assert sim.store.list(RS)[0] == [] and sim.store.list(POD)[0] == []


def test_pods_deleted_by_the_collector_terminate_gracefully() -> None:
    h = Harness()
    rs = h.create(_workload("ReplicaSet", "rs", 0))
    h.create(_bound_pod("p", _ref(rs), grace=12))
    h.store.delete(RS, "default", "rs")
    h.run(until=0)
    pod = h.get(POD, "p")["metadata"]
    assert (pod["deletionTimestamp"], pod["deletionGracePeriodSeconds"]) == ("2024-01-01T00:00:12Z", 12)


# ------------------------------------------------------------------------------------------------ Foreground


def test_foreground_deployment_waits_for_its_replica_set_and_pods() -> None:
    sim = Simulation()
    sim.store.create(make_node("n1").obj())
    sim.store.create(_workload("Deployment", "web", 2, grace=10))
    sim.advance(5)
    rs_name = sim.store.list(RS)[0][0]["metadata"]["name"]
    sim.store.delete(DEPLOY, "default", "web", propagation="Foreground")
    sim.advance(6)
    deploy = sim.store.get(DEPLOY, "default", "web")["metadata"]
    assert (deploy["deletionTimestamp"], deploy["finalizers"]) == (
        "2024-01-01T00:00:05Z",
        ["foregroundDeletion"],
    )
    rs = sim.store.get(RS, "default", rs_name)["metadata"]
    assert (rs["deletionTimestamp"], rs["finalizers"]) == ("2024-01-01T00:00:05Z", ["foregroundDeletion"])
    pods = sim.store.list(POD)[0]
    assert len(pods) == 2
    assert {p["metadata"]["deletionTimestamp"] for p in pods} == {"2024-01-01T00:00:15Z"}
    sim.advance(14.5)
    assert sim.store.get(DEPLOY, "default", "web")["metadata"]["deletionTimestamp"]
    sim.advance(15)
    assert sim.store.list(POD)[0] == [] and sim.store.list(RS)[0] == [] and sim.store.list(DEPLOY)[0] == []


def test_foreground_order_pods_then_replica_set_then_owner() -> None:
    h = Harness()
    owner = h.create(_workload("Deployment", "d", 0))
    rs = h.create(
        {**_workload("ReplicaSet", "rs", 0), "metadata": {"name": "rs", "ownerReferences": [_ref(owner)]}}
    )
    h.create(_bound_pod("p1", _ref(rs)))
    h.create(_bound_pod("p2", _ref(rs)))
    h.log.clear()
    h.store.delete(DEPLOY, "default", "d", propagation="Foreground")
    h.run(until=1)
    assert h.log[:2] == [
        (0.0, "TERMINATING", "Deployment", "d"),
        (0.0, "TERMINATING", "ReplicaSet", "rs"),  # deleted by the collector in Foreground: it has dependents
    ]
    assert sorted(h.log[2:]) == [(0.0, "TERMINATING", "Pod", "p1"), (0.0, "TERMINATING", "Pod", "p2")]
    assert h.get(RS, "rs")["metadata"]["finalizers"] == ["foregroundDeletion"]
    h.log.clear()
    h.store.delete(POD, "default", "p1", grace_period_seconds=0)
    h.run(until=2)
    assert h.exists(RS, "rs") and h.exists(DEPLOY, "d")
    h.store.delete(POD, "default", "p2", grace_period_seconds=0)
    h.run(until=3)
    assert [e[1:] for e in h.log] == [
        ("DELETED", "Pod", "p1"),
        ("DELETED", "Pod", "p2"),
        ("DELETED", "ReplicaSet", "rs"),  # the collector removed its finalizer
        ("DELETED", "Deployment", "d"),
    ]


def test_only_blocking_dependents_hold_the_owner() -> None:
    h = Harness()
    owner = h.create(_workload("ReplicaSet", "o", 0))
    h.create(_bound_pod("blocking", _ref(owner, block=True)))
    h.create(_bound_pod("free", _ref(owner, block=False)))
    h.create(_bound_pod("unset", _ref(owner, block=None)))
    h.store.delete(RS, "default", "o", propagation="Foreground")
    h.run(until=1)
    # every dependent is deleted (gracefully), but only the blocking one keeps the owner
    assert all(p["metadata"].get("deletionTimestamp") for p in h.store.list(POD)[0])
    assert h.exists(RS, "o")
    h.store.delete(POD, "default", "blocking", grace_period_seconds=0)
    h.run(until=2)
    assert not h.exists(RS, "o")
    assert {p["metadata"]["name"] for p in h.store.list(POD)[0]} == {"free", "unset"}


def test_unblocking_a_reference_releases_the_owner() -> None:
    h = Harness()
    owner = h.create(_workload("ReplicaSet", "o", 0))
    other = h.create(_workload("ReplicaSet", "other", 0))
    h.create(_bound_pod("p", _ref(owner), _ref(other, controller=False)))
    h.store.delete(RS, "default", "o", propagation="Foreground")
    h.run(until=1)
    # the pod has an owner that still exists: it stays, and its reference to the waiting owner is removed
    pod = h.get(POD, "p")["metadata"]
    assert "deletionTimestamp" not in pod
    assert [r["name"] for r in pod["ownerReferences"]] == ["other"]
    assert not h.exists(RS, "o")


# ---------------------------------------------------------------------------------------------------- Orphan


def test_orphan_leaves_the_pods_without_owner_references() -> None:
    sim = Simulation()
    sim.store.create(make_node("n1").obj())
    sim.store.create(_workload("ReplicaSet", "rs", 2))
    sim.advance(5)
    marked = sim.store.delete(RS, "default", "rs", propagation="Orphan")
    assert marked["metadata"]["finalizers"] == ["orphan"]
    sim.advance(60)
    assert sim.store.list(RS)[0] == []
    pods = sim.store.list(POD)[0]
    assert len(pods) == 2
    for pod in pods:
        assert "ownerReferences" not in pod["metadata"]
        assert "deletionTimestamp" not in pod["metadata"]
        assert pod["status"]["phase"] == "Running"


def test_orphan_keeps_other_owners() -> None:
    h = Harness()
    owner = h.create(_workload("ReplicaSet", "o", 0))
    other = h.create(_workload("ReplicaSet", "other", 0))
    h.create(_bound_pod("p", _ref(owner), _ref(other, controller=False)))
    h.store.delete(RS, "default", "o", propagation="Orphan")
    h.run(until=1)
    assert not h.exists(RS, "o")
    assert [r["name"] for r in h.get(POD, "p")["metadata"]["ownerReferences"]] == ["other"]


# ------------------------------------------------------------------------------- dangling and unverifiable


def test_dangling_owners_at_startup_are_collected() -> None:
    rs = {**_workload("ReplicaSet", "rs", 0), "metadata": {"name": "rs", "uid": "rs-uid"}}
    stale = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "rs",
        "uid": "old-rs-uid",
        "controller": True,
    }
    missing = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "gone",
        "uid": "gone-uid",
        "controller": True,
    }
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "name": "j",
        "uid": "job-uid",
        "controller": True,
    }
    beta = {"apiVersion": "apps/v1beta2", "kind": "ReplicaSet", "name": "gone", "uid": "x-uid"}
    h = Harness(
        rs,
        _bound_pod("owned", {**stale, "uid": "rs-uid"}),
        _bound_pod("stale", stale),  # the ReplicaSet of that name is another object
        _bound_pod("orphaned", missing),
        _bound_pod("job", job),  # a kind not served: cannot be verified, nothing done
        _bound_pod("mixed", missing, job),
        _bound_pod("beta", beta),  # a version not served either
    )
    h.run(until=1)
    terminating = sorted(
        p["metadata"]["name"] for p in h.store.list(POD)[0] if p["metadata"].get("deletionTimestamp")
    )
    assert terminating == ["orphaned", "stale"]
    assert not h.gc.knows("gone-uid") and h.gc.knows("job-uid")
    assert h.gc.dependents("rs-uid") == [h.get(POD, "owned")["metadata"]["uid"]]
    for name in ("job", "mixed"):
        h.store.delete(POD, "default", name, grace_period_seconds=0)
    h.run(until=2)
    assert not h.gc.knows("job-uid")  # an owner never seen is forgotten with its last dependent


def test_a_dependent_with_a_solid_owner_loses_only_the_dangling_reference() -> None:
    h = Harness()
    a = h.create(_workload("ReplicaSet", "a", 0))
    b = h.create(_workload("ReplicaSet", "b", 0))
    h.create(_bound_pod("p", _ref(a), _ref(b, controller=False)))
    h.store.delete(RS, "default", "a")
    h.run(until=1)
    pod = h.get(POD, "p")["metadata"]
    assert "deletionTimestamp" not in pod and [r["name"] for r in pod["ownerReferences"]] == ["b"]


def test_an_owner_in_another_namespace_is_dangling_and_reported() -> None:
    h = Harness()
    owner = h.create({**_workload("ReplicaSet", "o", 0), "metadata": {"name": "o", "namespace": "a"}})
    h.create(make_pod("p").ns("b").node("n1").meta(ownerReferences=[_ref(owner)]).obj())
    h.run(until=1)
    assert h.store.get(POD, "b", "p")["metadata"].get("deletionTimestamp")
    events = [e for e in h.store.list(("", "Event"))[0] if e["reason"] == "OwnerRefInvalidNamespace"]
    assert [(e["type"], e["message"], e["source"]["component"]) for e in events] == [
        (
            "Warning",
            f"ownerRef [apps/v1/ReplicaSet, namespace: b, name: o, uid: {owner['metadata']['uid']}] does not exist "
            'in namespace "b"',
            "garbage-collector-controller",
        )
    ]


def test_a_cluster_scoped_object_naming_a_namespaced_owner_is_left_alone() -> None:
    node = make_node("n9").obj()
    node["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "gone", "uid": "gone-uid"}
    ]
    h = Harness(node)
    h.run(until=1)
    assert h.store.get(("", "Node"), "", "n9")


def test_an_owner_created_after_its_dependent_is_not_a_reason_to_collect() -> None:
    h = Harness()
    rs = h.create(_workload("ReplicaSet", "rs", 0))
    h.create(_bound_pod("p", _ref(rs)))
    h.run(until=1)
    assert "deletionTimestamp" not in h.get(POD, "p")["metadata"]
    h.store.delete(RS, "default", "rs")
    h.run(until=2)
    assert h.get(POD, "p")["metadata"]["deletionTimestamp"]


def test_scenario_delete_of_a_deployment_removes_its_replica_sets_and_pods() -> None:
    sim = Simulation()
    sim.store.create(make_node("n1").obj())
    sim.store.create(_workload("Deployment", "web", 3))
    sim.advance(5)
    sim.apply_step(Step(at=5.0, delete=[ObjectRef("apps/v1", "Deployment", "default", "web")]))
    sim.advance(40)
    assert sim.store.list(DEPLOY)[0] == [] and sim.store.list(RS)[0] == [] and sim.store.list(POD)[0] == []


def test_owners_already_waiting_at_startup_are_finished() -> None:
    def waiting(name: str, finalizer: str) -> Obj:
        rs = _workload("ReplicaSet", name, 0)
        rs["metadata"].update(
            uid=f"{name}-uid",
            finalizers=[finalizer],
            deletionTimestamp="2024-01-01T00:00:00Z",
            deletionGracePeriodSeconds=0,
        )
        return rs

    fg, orphan, done = (
        waiting("fg", "foregroundDeletion"),
        waiting("orph", "orphan"),
        waiting("done", "foregroundDeletion"),
    )
    h = Harness(fg, orphan, done, _bound_pod("doomed", _ref(fg)), _bound_pod("kept", _ref(orphan)))
    h.run(until=1)
    assert h.get(POD, "doomed")["metadata"]["deletionTimestamp"] and h.exists(RS, "fg")
    assert "ownerReferences" not in h.get(POD, "kept")["metadata"] and not h.exists(RS, "orph")
    assert not h.exists(RS, "done")  # nothing blocks it
    h.store.delete(POD, "default", "doomed", grace_period_seconds=0)
    h.run(until=2)
    assert not h.exists(RS, "fg")


@pytest.mark.parametrize("collect", [True, False])
def test_the_control_plane_can_leave_the_collector_out(collect: bool) -> None:
    clock = SimClock()
    store = MemoryStore(clock=clock)
    missing = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "gone", "uid": "gone-uid"}
    store.load([make_node("n1").obj(), _bound_pod("p", missing)])
    plane = ControlPlane(store, clock, garbage_collection=collect)
    plane.replay()
    plane.run_until_idle()
    clock.run(until=1)
    plane.run_until_idle()
    assert bool(store.get(POD, "default", "p")["metadata"].get("deletionTimestamp")) is collect


def test_deletecollection_carries_the_policy() -> None:
    store = MemoryStore()
    store.create(_workload("ReplicaSet", "a", 0))
    store.create(_workload("ReplicaSet", "b", 0))
    api = RestAPI(store)
    body = json.dumps({"propagationPolicy": "Orphan"}).encode()
    code, listed = api.handle(Request("DELETE", "/apis/apps/v1/namespaces/default/replicasets", {}, body))
    assert code == 200
    # the answer is the list as read (kube's registry); the objects wait with the policy's finalizer
    assert [o["metadata"]["name"] for o in listed["items"]] == ["a", "b"]
    kept = store.list(("apps", "ReplicaSet"), "default")[0]
    assert [o["metadata"]["finalizers"] for o in kept] == [["orphan"], ["orphan"]]
