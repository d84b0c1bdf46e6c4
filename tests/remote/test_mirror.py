"""`ClusterMirror`: the replica's rules (newer versions win, relists, read-your-writes) and its Store surface,
against Berth's REST layer in the test's process (reflectors replaced by a hand-fed queue)."""

from __future__ import annotations

import urllib.parse
from typing import Any

import httpx
import pytest

from berth.api.errors import Conflict, NotFound
from berth.api.watch import WatchEvent
from berth.remote.client import KubeClient
from berth.remote.informer import Listed
from berth.remote.mirror import ClusterMirror, ServiceUnavailable
from berth.remote.store import RemoteStore
from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore
from builders import make_node, make_pod

POD = ("", "Pod")
NODE = ("", "Node")
Obj = dict[str, Any]


class _Idle:
    """A reflector that does nothing: the tests feed the mirror's queue themselves."""

    def __init__(self, client: KubeClient, info: Any, sink: Any) -> None:
        self.sink = sink

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


def _mirror(
    server: MemoryStore, kinds: tuple[tuple[str, str], ...] = (POD, NODE), bind_workers: int = 0
) -> ClusterMirror:
    api = RestAPI(server)

    def handle(request: httpx.Request) -> httpx.Response:
        query = urllib.parse.parse_qs(request.url.query.decode())
        code, body = api.handle(Request(request.method, request.url.path, query, request.content))
        return httpx.Response(code, json=body)

    remote = RemoteStore(KubeClient("http://berth.test", transport=httpx.MockTransport(handle)))
    return ClusterMirror(remote, kinds, reflector=_Idle, bind_workers=bind_workers)


def _feed(mirror: ClusterMirror, item: Listed | WatchEvent) -> None:
    mirror.reflectors[item.key].sink(item)  # type: ignore[attr-defined]


def _with_rv(obj: Obj, rv: int, **meta: Any) -> Obj:
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(rv), **meta}}


def _record(mirror: ClusterMirror) -> list[tuple[str, str, str]]:
    seen: list[tuple[str, str, str]] = []
    mirror.subscribe(lambda ev: seen.append((ev.type, ev.object["metadata"]["name"], str(ev.revision))))
    return seen


def test_lists_then_applies_only_newer_versions_and_deletions() -> None:
    mirror = _mirror(MemoryStore())
    seen = _record(mirror)
    a, b = make_pod("a").obj(), make_pod("b").obj()
    _feed(mirror, Listed(POD, [_with_rv(a, 5), _with_rv(b, 6)], 7))
    assert mirror.pump() == 1 and not mirror.synced  # nodes not listed yet
    _feed(mirror, Listed(NODE, [], 7))
    mirror.pump()
    assert mirror.synced
    _feed(mirror, WatchEvent("MODIFIED", _with_rv(a, 4, labels={"old": "1"}), POD, 4))  # older: ignored
    _feed(mirror, WatchEvent("MODIFIED", _with_rv(a, 8, labels={"new": "1"}), POD, 8))
    _feed(mirror, WatchEvent("MODIFIED", _with_rv(a, 8, labels={"dup": "1"}), POD, 8))  # same version: no-op
    _feed(mirror, WatchEvent("DELETED", _with_rv(b, 9), POD, 9))
    _feed(mirror, WatchEvent("ADDED", _with_rv(b, 6), POD, 6))  # stale add after the deletion: ignored
    assert mirror.pump() == 5
    assert seen == [("ADDED", "a", "5"), ("ADDED", "b", "6"), ("MODIFIED", "a", "8"), ("DELETED", "b", "9")]
    assert mirror.get(POD, "default", "a")["metadata"]["labels"] == {"new": "1"}
    with pytest.raises(NotFound, match=r'^pods "b" not found$'):
        mirror.get(POD, "default", "b")
    assert mirror.revision == 9


def test_a_relist_removes_what_the_list_no_longer_holds_unless_newer() -> None:
    mirror = _mirror(MemoryStore())
    a, b, c = make_pod("a").obj(), make_pod("b").obj(), make_pod("c").obj()
    _feed(mirror, Listed(POD, [_with_rv(a, 5), _with_rv(b, 6)], 7))
    _feed(mirror, WatchEvent("ADDED", _with_rv(c, 20), POD, 20))
    mirror.pump()
    seen = _record(mirror)
    _feed(mirror, Listed(POD, [_with_rv(a, 11, labels={"x": "y"})], 12))
    mirror.pump()
    assert seen == [("DELETED", "b", "12"), ("MODIFIED", "a", "11")]
    assert [o["metadata"]["name"] for o in mirror.list(POD)[0]] == ["a", "c"]


def test_list_filters_by_namespace_labels_and_fields() -> None:
    mirror = _mirror(MemoryStore())
    pods = [
        _with_rv(make_pod("a").ns("x").label(app="web").obj(), 1),
        _with_rv(make_pod("b").ns("y").label(app="web").node("n1").obj(), 2),
        _with_rv(make_pod("c").ns("y").obj(), 3),
    ]
    _feed(mirror, Listed(POD, pods, 3))
    mirror.pump()

    def names(items: list[Obj]) -> list[str]:
        return [o["metadata"]["name"] for o in items]

    assert names(mirror.list(POD, "y")[0]) == ["b", "c"]
    assert names(mirror.list(POD, label_selector="app=web")[0]) == ["a", "b"]
    assert names(mirror.list(POD, field_selector="spec.nodeName=n1")[0]) == ["b"]
    assert mirror.list(POD)[1] == "3"


def test_writes_go_to_the_server_and_their_answers_are_read_back_at_once() -> None:
    server = MemoryStore()
    server.create(make_node("n1").obj())
    mirror = _mirror(server)
    items, rv = server.list(POD)
    _feed(mirror, Listed(POD, items, int(rv)))
    _feed(mirror, Listed(NODE, server.list(NODE)[0], int(rv)))
    mirror.pump()
    seen = _record(mirror)
    created = mirror.create(make_pod("p").obj())
    assert server.get(POD, "default", "p")["metadata"]["uid"] == created["metadata"]["uid"]
    assert mirror.get(POD, "default", "p") == created  # read-your-writes, before any watch event
    patched = mirror.patch(POD, "default", "p", {"metadata": {"labels": {"k": "v"}}})
    assert mirror.get(POD, "default", "p")["metadata"]["labels"] == {"k": "v"}
    # the watch event of the same version changes nothing
    _feed(mirror, WatchEvent("MODIFIED", patched, POD, int(patched["metadata"]["resourceVersion"])))
    mirror.pump()
    assert [t for t, _, _ in seen] == ["ADDED", "MODIFIED"]
    with pytest.raises(Conflict):
        mirror.update(created)  # stale resourceVersion: the server refuses
    # a binding: the pod stays unbound in the replica until the watch brings it
    bound = mirror.bind("default", "p", "n1", uid=created["metadata"]["uid"])
    assert bound["spec"]["nodeName"] == "n1"
    assert server.get(POD, "default", "p")["spec"]["nodeName"] == "n1"
    assert "nodeName" not in mirror.get(POD, "default", "p")["spec"]
    # a dry run leaves the replica alone
    mirror.create(make_pod("q").obj(), dry_run=True)
    with pytest.raises(NotFound):
        mirror.get(POD, "default", "q")


def test_kinds_not_followed_are_read_from_the_server() -> None:
    server = MemoryStore()
    server.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    mirror = _mirror(server)
    assert mirror.get(("", "Namespace"), "", "team")["metadata"]["name"] == "team"
    assert [o["metadata"]["name"] for o in mirror.list(("", "Namespace"))[0]] == ["team"]


def test_an_unreachable_server_is_a_503() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    remote = RemoteStore(KubeClient("http://berth.test", transport=httpx.MockTransport(refuse)))
    mirror = ClusterMirror(remote, (POD,), reflector=_Idle)
    with pytest.raises(ServiceUnavailable) as e:
        mirror.create(make_pod("p").obj())
    assert (e.value.code, e.value.reason) == (503, "ServiceUnavailable")
    assert e.value.message == (
        "the server is currently unable to handle the request "
        "(POST /api/v1/namespaces/default/pods: connection refused)"
    )


def test_following_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match=r"cannot follow 'Widget' of group 'example\.com'"):
        _mirror(MemoryStore(), (("example.com", "Widget"),))


def test_finish_bindings_reports_every_binding_in_flight_and_leaves_the_rest_queued() -> None:
    server = MemoryStore()
    server.create(make_node("n1").obj())
    for name in ("a", "b", "c"):
        server.create(make_pod(name).obj())
    mirror = _mirror(server, bind_workers=2)
    bound: list[tuple[str, str]] = []
    failed: list[tuple[str, str]] = []
    mirror.on_bound = lambda ns, name, uid, node: bound.append((name, node))
    mirror.on_bind_failed = lambda ns, name, uid, message: failed.append((name, message))
    items, rv = server.list(POD)
    _feed(mirror, Listed(POD, items, int(rv)))
    for name in ("a", "b"):
        mirror.bind("default", name, "n1")
    mirror.bind("default", "c", "n1", uid="not-its-uid")
    mirror.finish_bindings()
    assert sorted(bound) == [("a", "n1"), ("b", "n1")]
    assert [name for name, _ in failed] == ["c"]
    assert mirror.pending()  # the pods' list waits for pump, as before
    assert mirror.pump() == 1
    assert sorted(o["metadata"]["name"] for o in mirror.list(POD)[0]) == ["a", "b", "c"]
    mirror.stop()
