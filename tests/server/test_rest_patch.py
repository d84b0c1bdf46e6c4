"""PATCH through RestAPI by Content-Type: strategic merge patch, JSON patch, merge patch, 415."""

from __future__ import annotations

import json
from typing import Any

from berth.api.patches import JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore

POD = "/api/v1/namespaces/default/pods/a"


def _api() -> RestAPI:
    store = MemoryStore(seed=1)
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    store.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "a", "namespace": "default", "labels": {"app": "a", "tier": "web"}},
            "spec": {
                "containers": [
                    {"name": "main", "image": "main:1"},
                    {"name": "side", "image": "side:1"},
                ]
            },
        }
    )
    return RestAPI(store)


def _patch(api: RestAPI, path: str, body: Any, content_type: str) -> tuple[int, dict[str, Any]]:
    return api.handle(Request("PATCH", path, {}, json.dumps(body).encode(), content_type))


def test_smp_label_keeps_other_labels() -> None:
    api = _api()
    code, pod = _patch(api, POD, {"metadata": {"labels": {"x": "1"}}}, STRATEGIC_MERGE_PATCH)
    assert code == 200
    assert pod["metadata"]["labels"] == {"app": "a", "tier": "web", "x": "1"}
    assert api.handle(Request("GET", POD, {}))[1]["metadata"]["labels"]["x"] == "1"


def test_smp_container_image_by_name_keeps_other_containers() -> None:
    api = _api()
    body = {"spec": {"containers": [{"name": "side", "image": "side:2"}]}}
    code, pod = _patch(api, POD, body, "application/strategic-merge-patch+json; charset=utf-8")
    assert code == 200
    assert [(c["name"], c["image"]) for c in pod["spec"]["containers"]] == [
        ("main", "main:1"),
        ("side", "side:2"),
    ]
    # the same body as a merge patch replaces the list
    code, pod = _patch(api, POD, body, MERGE_PATCH)
    assert [c["name"] for c in pod["spec"]["containers"]] == ["side"]


def test_smp_delete_directive_removes_a_container() -> None:
    api = _api()
    body = {"spec": {"containers": [{"name": "main", "$patch": "delete"}]}}
    code, pod = _patch(api, POD, body, STRATEGIC_MERGE_PATCH)
    assert code == 200
    assert pod["spec"]["containers"] == [{"name": "side", "image": "side:1"}]


def test_json_patch_add_replace_remove() -> None:
    api = _api()
    ops = [
        {"op": "add", "path": "/metadata/labels/new", "value": "v"},
        {"op": "replace", "path": "/spec/containers/0/image", "value": "main:2"},
        {"op": "remove", "path": "/metadata/labels/tier"},
        {"op": "test", "path": "/metadata/labels/app", "value": "a"},
    ]
    code, pod = _patch(api, POD, ops, JSON_PATCH)
    assert code == 200
    assert pod["metadata"]["labels"] == {"app": "a", "new": "v"}
    assert pod["spec"]["containers"][0]["image"] == "main:2"


def test_json_patch_failed_test_is_422_and_writes_nothing() -> None:
    api = _api()
    before = api.handle(Request("GET", POD, {}))[1]
    ops = [
        {"op": "add", "path": "/metadata/labels/new", "value": "v"},
        {"op": "test", "path": "/metadata/labels/app", "value": "b"},
    ]
    code, status = _patch(api, POD, ops, JSON_PATCH)
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"] == "the server rejected our request due to an error in our request"
    assert (
        status["details"]["causes"][0]["message"] == "testing value /metadata/labels/app failed: test failed"
    )
    assert api.handle(Request("GET", POD, {}))[1] == before


def test_json_patch_bad_body_and_renaming_are_400() -> None:
    api = _api()
    code, status = _patch(api, POD, {"op": "add"}, JSON_PATCH)
    assert (code, status["reason"]) == (400, "BadRequest")
    code, status = _patch(api, POD, [{"op": "replace", "path": "/metadata/name", "value": "b"}], JSON_PATCH)
    assert (code, status["message"]) == (
        400,
        "the name of the object (b) does not match the name on the URL (a)",
    )


def test_patch_resource_version_precondition() -> None:
    api = _api()
    code, status = _patch(api, POD, {"metadata": {"resourceVersion": "1"}}, STRATEGIC_MERGE_PATCH)
    assert (code, status["reason"]) == (409, "Conflict")
    rv = api.handle(Request("GET", POD, {}))[1]["metadata"]["resourceVersion"]
    code, _ = _patch(api, POD, [{"op": "test", "path": "/metadata/resourceVersion", "value": rv}], JSON_PATCH)
    assert code == 200


def test_smp_on_status_subresource() -> None:
    api = _api()
    body = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}, "spec": {"nodeName": "ignored"}}
    code, pod = _patch(api, POD + "/status", body, STRATEGIC_MERGE_PATCH)
    assert code == 200
    assert pod["status"]["conditions"] == [{"type": "Ready", "status": "True"}]
    assert "nodeName" not in pod["spec"]
    body = {"status": {"conditions": [{"type": "PodScheduled", "status": "True"}]}}
    code, pod = _patch(api, POD + "/status", body, STRATEGIC_MERGE_PATCH)
    assert [c["type"] for c in pod["status"]["conditions"]] == ["PodScheduled", "Ready"]


def test_smp_on_custom_resource_is_415() -> None:
    api = _api()
    path = "/apis/scheduling.koordinator.sh/v1alpha1/reservations/r1"
    code, status = _patch(api, path, {"metadata": {"labels": {"a": "b"}}}, STRATEGIC_MERGE_PATCH)
    assert (code, status["reason"]) == (415, "UnsupportedMediaType")
    assert status["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json"
    )


def test_unknown_patch_type_is_415() -> None:
    api = _api()
    code, status = _patch(api, POD, {}, "text/plain")
    assert (code, status["reason"]) == (415, "UnsupportedMediaType")
    assert status["message"].endswith(
        "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json"
    )
