"""``fieldValidation`` of the REST layer (`berth.server.rest` with `berth.server.fieldvalidation`), in process."""

from __future__ import annotations

import json
from typing import Any

import pytest

from berth.api.patches import JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from berth.server.fieldvalidation import go_value, warning_header
from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore
from builders import make_pod

PODS = "/api/v1/namespaces/default/pods"
WEB = f"{PODS}/web"
KEY = ("", "Pod")


def _typo_pod() -> dict[str, Any]:
    pod = make_pod("web").req(cpu="100m").obj()
    pod["spec"]["nodeSelecter"] = {"zone": "a"}
    pod["spec"]["containers"][0]["resource"] = {}
    return pod


def _send(
    api: RestAPI, method: str, path: str, body: Any, validation: str | None, content_type: str = ""
) -> tuple[int, dict[str, Any], list[str]]:
    query = {"fieldManager": ["me"]} if "apply-patch" in content_type else {}
    if validation is not None:
        query["fieldValidation"] = [validation]
    return api.handle_with_warnings(Request(method, path, query, json.dumps(body).encode(), content_type))


STRICT = (
    'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
    'unknown field "spec.containers[0].resource", unknown field "spec.nodeSelecter"'
)


@pytest.mark.parametrize("method", ["POST", "PUT"])
def test_strict_refuses_a_create_or_update_with_kubes_message(method: str) -> None:
    store = MemoryStore()
    api = RestAPI(store)
    if method == "PUT":
        api.handle(Request("POST", PODS, {}, json.dumps(make_pod("web").obj()).encode()))
    before = store.revision
    code, status, warnings = _send(api, method, PODS if method == "POST" else WEB, _typo_pod(), "Strict")
    assert (code, status["reason"], status["message"], warnings) == (400, "BadRequest", STRICT, [])
    assert store.revision == before  # nothing written


@pytest.mark.parametrize(
    ("validation", "warned"), [(None, True), ("", True), ("Warn", True), ("Ignore", False)]
)
def test_warn_and_ignore_store_the_object_without_the_unknown_fields(
    validation: str | None, warned: bool
) -> None:
    store = MemoryStore()
    code, created, warnings = _send(RestAPI(store), "POST", PODS, _typo_pod(), validation)
    assert code == 201
    expected = ['unknown field "spec.containers[0].resource"', 'unknown field "spec.nodeSelecter"']
    assert warnings == (expected if warned else [])
    stored = store.get(KEY, "default", "web")
    assert "nodeSelecter" not in stored["spec"] and "nodeSelecter" not in created["spec"]
    assert "resource" not in stored["spec"]["containers"][0]


def _with_web() -> tuple[MemoryStore, RestAPI]:
    store = MemoryStore()
    api = RestAPI(store)
    code, _, _ = _send(api, "POST", PODS, make_pod("web").req(cpu="100m").obj(), None)
    assert code == 201
    return store, api


def test_a_strict_strategic_merge_patch_shows_the_patch_as_go_prints_it() -> None:
    store, api = _with_web()
    before = store.get(KEY, "default", "web")
    patch = {"spec": {"nodeSelecter": {"zone": "a"}, "priority": 5}}
    code, status, _ = _send(api, "PATCH", WEB, patch, "Strict", STRATEGIC_MERGE_PATCH)
    message = (
        'patch: Invalid value: "map[spec:map[nodeSelecter:map[zone:a] priority:5]]": '
        'strict decoding error: unknown field "spec.nodeSelecter"'
    )
    assert (code, status["reason"], status["message"]) == (422, "Invalid", f' "" is invalid: {message}')
    assert status["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": message.removeprefix("patch: "), "field": "patch"}
    ]
    assert store.get(KEY, "default", "web") == before


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        (MERGE_PATCH, {"spec": {"nodeSelecter": {"zone": "a"}}}),
        (JSON_PATCH, [{"op": "add", "path": "/spec/nodeSelecter", "value": {"zone": "a"}}]),
    ],
)
def test_a_strict_merge_or_json_patch_shows_the_patched_object(content_type: str, body: Any) -> None:
    store, api = _with_web()
    before = store.get(KEY, "default", "web")
    code, status, _ = _send(api, "PATCH", WEB, body, "Strict", content_type)
    assert (code, status["reason"]) == (422, "Invalid")
    cause = status["details"]["causes"][0]
    assert cause["field"] == "patch"
    assert cause["message"].startswith('Invalid value: "{\\"apiVersion\\":\\"v1\\",\\"kind\\":\\"Pod\\"')
    assert cause["message"].endswith('": strict decoding error: unknown field "spec.nodeSelecter"')
    assert store.get(KEY, "default", "web") == before


def test_a_warned_patch_is_applied_without_the_unknown_fields() -> None:
    store, api = _with_web()
    patch = {"metadata": {"labels": {"a": "b"}}, "spec": {"nodeSelecter": {"zone": "a"}}}
    code, patched, warnings = _send(api, "PATCH", WEB, patch, None, STRATEGIC_MERGE_PATCH)
    assert "nodeSelecter" not in patched["spec"]
    assert (code, warnings) == (200, ['unknown field "spec.nodeSelecter"'])
    stored = store.get(KEY, "default", "web")
    assert stored["metadata"]["labels"] == {"a": "b"} and "nodeSelecter" not in stored["spec"]


@pytest.mark.parametrize("validation", ["Strict", "Warn", "Ignore"])
def test_server_side_apply_refuses_unknown_fields_whatever_the_validation(validation: str) -> None:
    store = MemoryStore()
    code, status, _ = _send(
        RestAPI(store),
        "PATCH",
        WEB,
        _typo_pod(),
        validation,
        "application/apply-patch+yaml",
    )
    assert (code, status["reason"], status["message"]) == (
        400,
        "BadRequest",
        "failed to create typed patch object (default/web; /v1, Kind=Pod): errors:\n"
        '  .spec.containers[name="c"].resource: field not declared in schema\n'
        "  .spec.nodeSelecter: field not declared in schema",
    )
    assert store.revision == 0


def test_custom_kinds_are_checked_with_their_crd_schema() -> None:
    store = MemoryStore()
    quota = {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "q"},
        "spec": {"mix": {"cpu": "1"}},
    }
    path = "/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/team/elasticquotas"
    code, status, _ = _send(RestAPI(store), "POST", path, quota, "Strict")
    assert (code, status["message"]) == (
        400,
        'ElasticQuota in version "v1alpha1" cannot be handled as a ElasticQuota: '
        'strict decoding error: unknown field "spec.mix"',
    )


def test_go_values_and_warning_headers() -> None:
    assert (
        go_value({"b": [1, "x", None, True], "a": {"z": 1.5, "y": 2.0}})
        == "map[a:map[y:2 z:1.5] b:[1 x <nil> true]]"
    )
    assert warning_header('unknown field "spec.x"') == '299 - "unknown field \\"spec.x\\""'
