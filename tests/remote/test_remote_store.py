"""`RemoteStore`: the Store contract over the REST API, against Berth's REST layer in the test's process."""

from __future__ import annotations

import json
import time
import urllib.parse
from datetime import datetime

import httpx
import pytest

from berth.api.errors import AlreadyExists, Conflict, NotFound, TooManyRequests
from berth.clock import SimClock
from berth.remote.client import KubeClient
from berth.remote.store import RemoteStore
from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore
from berth.store.eviction import ANNOTATION_PREFER_AVOID_PODS
from builders import make_node, make_pod

POD = ("", "Pod")
NODE = ("", "Node")


def _remote(store: MemoryStore, clock: SimClock | None = None) -> RemoteStore:
    api = RestAPI(store)

    def handle(request: httpx.Request) -> httpx.Response:
        query = urllib.parse.parse_qs(request.url.query.decode())
        code, body = api.handle(Request(request.method, request.url.path, query, request.content))
        return httpx.Response(code, json=body)

    return RemoteStore(KubeClient("http://berth.test", transport=httpx.MockTransport(handle)), clock)


def test_create_get_list_patch_update_delete() -> None:
    local = MemoryStore()
    remote = _remote(local)
    created = remote.create(make_pod("b").obj())
    remote.create(make_pod("a").obj())
    assert local.get(POD, "default", "b")["metadata"]["uid"] == created["metadata"]["uid"]
    assert remote.get(POD, "default", "b")["metadata"]["uid"] == created["metadata"]["uid"]
    items, rv = remote.list(POD, "default")
    assert [(o["kind"], o["apiVersion"], o["metadata"]["name"]) for o in items] == [
        ("Pod", "v1", "a"),
        ("Pod", "v1", "b"),
    ]
    assert rv == str(local.revision) and remote.revision == local.revision
    patched = remote.patch(POD, "default", "a", {"metadata": {"labels": {"tier": "web"}}})
    assert patched["metadata"]["labels"] == {"tier": "web"}
    assert [o["metadata"]["name"] for o in remote.list(POD, label_selector="tier=web")[0]] == ["a"]
    remote.patch(POD, "default", "b", {"metadata": {"labels": {"tier": "db"}}})
    with pytest.raises(Conflict, match='Operation cannot be fulfilled on pods "b"'):
        remote.update({**created, "metadata": {**created["metadata"], "labels": {"x": "y"}}})
    fresh = remote.get(POD, "default", "b")
    updated = remote.update({**fresh, "metadata": {**fresh["metadata"], "labels": {"x": "y"}}})
    assert local.get(POD, "default", "b")["metadata"]["labels"] == {"x": "y"} == updated["metadata"]["labels"]
    remote.delete(POD, "default", "a", grace_period_seconds=0)
    with pytest.raises(NotFound, match=r'^pods "a" not found$'):
        remote.get(POD, "default", "a")
    with pytest.raises(AlreadyExists, match=r'^pods "b" already exists$'):
        remote.create(make_pod("b").obj())


def test_bind_assigns_the_pod_and_refuses_a_second_binding() -> None:
    local = MemoryStore()
    local.create(make_node("n1").obj())
    remote = _remote(local)
    pod = remote.create(make_pod("p").obj())
    bound = remote.bind("default", "p", "n1", uid=pod["metadata"]["uid"], annotations={"k": "v"})
    assert bound["spec"]["nodeName"] == "n1"
    assert bound["metadata"]["annotations"] == {"k": "v"}
    assert [c["type"] for c in bound["status"]["conditions"]] == ["PodScheduled"]
    with pytest.raises(Conflict) as refused:
        remote.bind("default", "p", "n2")
    assert refused.value.message == (
        'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"'
    )


def test_evict_respects_the_budget_and_can_mark_the_node() -> None:
    local = MemoryStore()
    local.create(make_node("n1").obj())
    for name in ("p1", "p2"):
        local.create(
            make_pod(name).label(app="web").node("n1").owner("ReplicaSet", "rs", "rs-1").running().obj()
        )
    pdb = local.create(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "pdb", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1},
        }
    )
    status = {"observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1}
    local.update_status({**pdb, "status": {**status, "expectedPods": 2}})
    remote = _remote(local)
    remote.evict("default", "p1", grace_period_seconds=0, avoid=True)
    with pytest.raises(NotFound):
        local.get(POD, "default", "p1")
    with pytest.raises(TooManyRequests) as blocked:
        remote.evict("default", "p2")
    assert blocked.value.message == "Cannot evict pod as it would violate the pod's disruption budget."
    annotations = local.get(NODE, "", "n1")["metadata"]["annotations"]
    (entry,) = json.loads(annotations[ANNOTATION_PREFER_AVOID_PODS])["preferAvoidPods"]
    assert entry["podSignature"]["podController"]["uid"] == "rs-1"


def test_watch_streams_events_until_the_server_ends_the_stream() -> None:
    lines = [
        {
            "type": "ADDED",
            "object": {"metadata": {"name": "a", "namespace": "default", "resourceVersion": "7"}},
        },
        {
            "type": "DELETED",
            "object": {"metadata": {"name": "a", "namespace": "default", "resourceVersion": "9"}},
        },
    ]
    asked: list[dict[str, list[str]]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        asked.append(urllib.parse.parse_qs(request.url.query.decode()))
        return httpx.Response(200, content="".join(json.dumps(x) + "\n" for x in lines).encode())

    remote = RemoteStore(KubeClient("http://berth.test", transport=httpx.MockTransport(handle)))
    watch = remote.watch(POD, resource_version="5", namespace="default")
    deadline = time.monotonic() + 10.0
    while not watch.closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert watch.closed
    events = watch.poll()
    assert [(e.type, e.key, e.revision, e.object["kind"], e.object["metadata"]["name"]) for e in events] == [
        ("ADDED", POD, 7, "Pod", "a"),
        ("DELETED", POD, 9, "Pod", "a"),
    ]
    assert asked == [{"watch": ["1"], "resourceVersion": ["5"]}]
    assert remote.revision == 9


def test_timestamp_maps_clock_readings_to_wall_time() -> None:
    clock = SimClock(100.0)
    remote = _remote(MemoryStore(), clock)
    now = datetime.fromisoformat(remote.timestamp().replace("Z", "+00:00"))
    later = datetime.fromisoformat(remote.timestamp(160.0).replace("Z", "+00:00"))
    assert (later - now).total_seconds() in (60.0, 61.0)  # whole seconds: a tick may fall in between
    assert remote.timestamp().endswith("Z") and len(remote.timestamp()) == len("2024-01-01T00:00:00Z")


def test_unknown_kinds_are_not_found() -> None:
    remote = _remote(MemoryStore())
    with pytest.raises(NotFound, match='the server doesn\'t have a resource type "Gadget"'):
        remote.get(("example.com", "Gadget"), "default", "g")
