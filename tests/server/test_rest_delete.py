"""DELETE answered as kube-apiserver answers it (`handlers/delete.go`, the registry's ``finalizeDelete``), and
deletecollection with its DeleteOptions and list options."""

from __future__ import annotations

import json
from typing import Any

from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore
from builders import make_pod

RSS = "/apis/apps/v1/namespaces/default/replicasets"
POD_KEY = ("", "Pod")
RS_KEY = ("apps", "ReplicaSet")


def _rs(
    name: str, *, finalizers: tuple[str, ...] = (), labels: dict[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": labels or {"app": name}}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": meta,
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }


def _call(
    api: RestAPI, method: str, path: str, query: dict[str, str] | None = None, body: Any = None
) -> tuple[int, dict[str, Any]]:
    raw = b"" if body is None else json.dumps(body).encode()
    return api.handle(Request(method, path, {k: [v] for k, v in (query or {}).items()}, raw))


def _setup(*replica_sets: dict[str, Any]) -> tuple[MemoryStore, RestAPI]:
    store = MemoryStore(seed=3)
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    for rs in replica_sets:
        store.create(rs)
    return store, RestAPI(store)


def _exists(store: MemoryStore, key: tuple[str, str], name: str) -> bool:
    return any(o["metadata"]["name"] == name for o in store.list(key, "default")[0])


def test_a_kind_other_than_pods_answers_a_status_once_gone() -> None:
    store, api = _setup(_rs("web"))
    uid = store.get(RS_KEY, "default", "web")["metadata"]["uid"]
    code, doc = _call(api, "DELETE", f"{RSS}/web")
    assert (code, doc) == (
        200,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {"name": "web", "group": "apps", "kind": "replicasets", "uid": uid},
        },
    )
    assert not _exists(store, RS_KEY, "web")


def test_a_core_kind_status_has_no_group() -> None:
    store, api = _setup()
    store.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    uid = store.get(("", "Node"), "", "n1")["metadata"]["uid"]
    code, doc = _call(api, "DELETE", "/api/v1/nodes/n1")
    assert (code, doc["details"]) == (200, {"name": "n1", "kind": "nodes", "uid": uid})


def test_pods_and_namespaces_answer_the_object() -> None:
    store, api = _setup()
    store.create(make_pod("p").obj())
    code, pod = _call(api, "DELETE", "/api/v1/namespaces/default/pods/p")
    assert (code, pod["kind"], pod["metadata"]["name"]) == (200, "Pod", "p")
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}})
    code, ns = _call(api, "DELETE", "/api/v1/namespaces/gone")
    assert (code, ns["kind"], ns["metadata"]["name"]) == (200, "Namespace", "gone")


def test_an_object_its_finalizers_keep_is_answered_200_with_the_object() -> None:
    store, api = _setup(_rs("held", finalizers=("example.com/hold",)), _rs("fg"))
    code, doc = _call(api, "DELETE", f"{RSS}/held")
    assert (code, doc["kind"], doc["metadata"]["finalizers"]) == (200, "ReplicaSet", ["example.com/hold"])
    assert "deletionTimestamp" in doc["metadata"]
    code, doc = _call(api, "DELETE", f"{RSS}/fg", body={"propagationPolicy": "Foreground"})
    assert (code, doc["kind"], doc["metadata"]["finalizers"]) == (200, "ReplicaSet", ["foregroundDeletion"])
    assert _exists(store, RS_KEY, "held") and _exists(store, RS_KEY, "fg")


def test_orphan_dependents_false_that_keeps_the_object_is_202() -> None:
    _, api = _setup(_rs("held", finalizers=("example.com/hold",)), _rs("free"))
    code, doc = _call(api, "DELETE", f"{RSS}/held", body={"orphanDependents": False})
    assert (code, doc["kind"], doc["metadata"]["name"]) == (202, "ReplicaSet", "held")
    code, doc = _call(api, "DELETE", f"{RSS}/free", body={"orphanDependents": False})
    assert (code, doc["kind"]) == (200, "Status")


def test_a_dry_run_delete_answers_as_the_real_one_and_keeps_the_object() -> None:
    store, api = _setup(_rs("web"), _rs("held", finalizers=("example.com/hold",)))
    code, doc = _call(api, "DELETE", f"{RSS}/web", {"dryRun": "All"})
    assert (code, doc["kind"], doc["details"]["name"]) == (200, "Status", "web")
    code, doc = _call(api, "DELETE", f"{RSS}/held", {"dryRun": "All"})
    assert (code, doc["kind"]) == (200, "ReplicaSet")
    assert "deletionTimestamp" not in store.get(RS_KEY, "default", "held")["metadata"]
    assert _exists(store, RS_KEY, "web")


def test_deletecollection_deletes_what_the_selector_selects_and_answers_the_list_as_read() -> None:
    store, api = _setup(
        _rs("a", labels={"tier": "x"}), _rs("b", labels={"tier": "y"}), _rs("c", labels={"tier": "x"})
    )
    rv = str(store.revision)
    code, doc = _call(api, "DELETE", RSS, {"labelSelector": "tier=x"})
    assert (code, doc["kind"], doc["metadata"]) == (200, "ReplicaSetList", {"resourceVersion": rv})
    assert [(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in doc["items"]] == [
        ("a", "2"),
        ("c", "4"),
    ]
    assert [o["metadata"]["name"] for o in store.list(RS_KEY, "default")[0]] == ["b"]


def test_deletecollection_by_field_selector_and_limit() -> None:
    store, api = _setup(_rs("a"), _rs("b"), _rs("c"))
    code, doc = _call(api, "DELETE", RSS, {"fieldSelector": "metadata.name=b"})
    assert (code, [o["metadata"]["name"] for o in doc["items"]]) == (200, ["b"])
    code, doc = _call(api, "DELETE", RSS, {"limit": "1"})
    assert (code, [o["metadata"]["name"] for o in doc["items"]], doc["metadata"]["remainingItemCount"]) == (
        200,
        ["a"],
        1,
    )
    assert [o["metadata"]["name"] for o in store.list(RS_KEY, "default")[0]] == ["c"]


def test_deletecollection_dry_run_deletes_nothing() -> None:
    store, api = _setup(_rs("a"), _rs("b"))
    before = store.revision
    code, doc = _call(api, "DELETE", RSS, {"dryRun": "All"})
    assert (code, [o["metadata"]["name"] for o in doc["items"]], store.revision) == (200, ["a", "b"], before)


def test_deletecollection_propagation_policy_keeps_the_objects_with_its_finalizer() -> None:
    store, api = _setup(_rs("a"), _rs("b"))
    code, _ = _call(api, "DELETE", RSS, body={"propagationPolicy": "Orphan"})
    assert code == 200
    kept = store.list(RS_KEY, "default")[0]
    assert [(o["metadata"]["name"], o["metadata"]["finalizers"]) for o in kept] == [
        ("a", ["orphan"]),
        ("b", ["orphan"]),
    ]


def test_deletecollection_preconditions_apply_to_every_object() -> None:
    store, api = _setup(_rs("a"), _rs("b"))
    uid = store.get(RS_KEY, "default", "a")["metadata"]["uid"]
    other = store.get(RS_KEY, "default", "b")["metadata"]["uid"]
    code, doc = _call(api, "DELETE", RSS, body={"preconditions": {"uid": uid}})
    assert (code, doc["reason"], doc["message"]) == (
        409,
        "Conflict",
        f'Operation cannot be fulfilled on ReplicaSet.apps "b": the UID in the precondition ({uid}) does not '
        f"match the UID in record ({other}). The object might have been deleted and then recreated",
    )
    assert [o["metadata"]["name"] for o in store.list(RS_KEY, "default")[0]] == ["b"]
