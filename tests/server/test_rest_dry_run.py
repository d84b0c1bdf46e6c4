"""``dryRun=All`` on every write through RestAPI, and the write options kube refuses (dryRun, force, fieldManager,
fieldValidation): checked as the real write, nothing stored, no event, no generator state used."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path
from typing import Any

import httpx
import pytest

from berth.api.patches import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from berth.controlplane.plane import install_admission
from berth.remote.client import KubeClient
from berth.remote.store import RemoteStore
from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore

PODS = "/api/v1/namespaces/default/pods"
POD = f"{PODS}/a"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments/web"
DRY = {"dryRun": ["All"]}
UA = "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07"


def _pod(name: str = "a", image: str = "main:1", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "a"}, **meta},
        "spec": {"containers": [{"name": "main", "image": image}]},
    }


def _invalid(name: str) -> dict[str, Any]:
    pod = _pod(name)
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "500x"}}
    return pod


def _deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
            },
        },
    }


def _api(store: MemoryStore | None = None) -> RestAPI:
    store = store if store is not None else MemoryStore(seed=1)
    install_admission(store)
    api = RestAPI(store)
    assert _call(api, "POST", PODS, _pod(), {"fieldManager": ["kubectl-create"]})[0] == 201
    store.create(_deployment())
    return api


def _call(
    api: RestAPI,
    method: str,
    path: str,
    body: Any = None,
    query: dict[str, list[str]] | None = None,
    ct: str = "",
) -> tuple[int, dict[str, Any]]:
    raw = json.dumps(body).encode() if body is not None else b""
    return api.handle(Request(method, path, query or {}, raw, ct, UA))


def _snapshot(store: MemoryStore) -> tuple[int, list[dict[str, Any]]]:
    return store.revision, json.loads(json.dumps(store.all_objects()))


# ------------------------------------------------------------------------------------------ every verb


def test_dry_run_create_answers_as_kube_and_stores_nothing() -> None:
    api = _api()
    store = api.store
    assert isinstance(store, MemoryStore)
    before = _snapshot(store)
    watch = store.watch(None, resource_version=str(store.revision))
    code, obj = _call(api, "POST", PODS, _pod("b"), {**DRY, "fieldManager": ["kubectl-create"]})
    assert code == 201
    meta = obj["metadata"]
    assert "resourceVersion" not in meta
    assert meta["uid"] and meta["creationTimestamp"] == "2024-01-01T00:00:00Z"
    assert (meta["name"], meta["namespace"], meta["generation"]) == ("b", "default", 1)
    assert obj["status"] == {"phase": "Pending"}  # admission ran
    assert obj["spec"]["schedulerName"] == "default-scheduler"
    assert [e["manager"] for e in meta["managedFields"]] == ["kubectl-create"]
    code, gen = _call(api, "POST", PODS, {**_pod(""), "metadata": {"generateName": "web-"}}, DRY)
    assert code == 201 and gen["metadata"]["name"].startswith("web-") and len(gen["metadata"]["name"]) == 9
    assert _snapshot(store) == before
    assert watch.poll() == []
    assert _call(api, "GET", f"{PODS}/b")[0] == 404


def test_dry_runs_leave_later_uids_and_generated_names_unchanged() -> None:
    plain, dry = MemoryStore(seed=7), MemoryStore(seed=7)
    dry_api = RestAPI(dry)
    for n in range(3):
        assert _call(dry_api, "POST", PODS, {**_pod(""), "metadata": {"generateName": "p-"}}, DRY)[0] == 201
        assert _call(dry_api, "POST", PODS, _pod(f"x{n}"), DRY)[0] == 201
    assert dry.revision == 0
    for store in (plain, dry):
        store.create({**_pod(""), "metadata": {"generateName": "p-"}})
        store.create(_pod("real"))
    assert [(o["metadata"]["name"], o["metadata"]["uid"]) for o in plain.all_objects()] == [
        (o["metadata"]["name"], o["metadata"]["uid"]) for o in dry.all_objects()
    ]


def test_dry_run_create_refuses_as_the_real_create() -> None:
    api = _api()
    for body in (
        _pod(),  # exists
        _invalid("b"),
        {**_pod("c"), "spec": {"containers": [{"name": "m", "image": "i"}], "priorityClassName": "nope"}},
    ):
        real = _call(api, "POST", PODS, body)
        assert _call(api, "POST", PODS, body, DRY) == real
    assert [real[0], real[1]["reason"]] == [403, "Forbidden"]
    assert _call(api, "POST", PODS, _pod(), DRY)[1]["message"] == 'pods "a" already exists'


def test_dry_run_in_a_missing_namespace_provisions_nothing() -> None:
    api = _api()
    ghost = "/api/v1/namespaces/ghost/pods"
    code, obj = _call(api, "POST", ghost, _pod(), DRY)
    assert (code, obj["metadata"]["namespace"]) == (201, "ghost")
    assert _call(api, "GET", "/api/v1/namespaces/ghost")[0] == 404
    assert _call(api, "POST", ghost, _pod())[0] == 201  # the real create still provisions it
    assert _call(api, "GET", "/api/v1/namespaces/ghost")[0] == 200


def test_dry_run_put_patch_and_status_return_the_new_object_with_the_stored_resource_version() -> None:
    api = _api()
    store = api.store
    assert isinstance(store, MemoryStore)
    current = _call(api, "GET", POD)[1]
    rv = current["metadata"]["resourceVersion"]
    before = _snapshot(store)
    replaced = {**current, "metadata": {**current["metadata"], "labels": {"app": "b"}}}
    status = {**current, "status": {"phase": "Running"}}
    writes: list[tuple[str, str, Any, str, Any]] = [
        ("PUT", POD, replaced, "", lambda o: o["metadata"]["labels"] == {"app": "b"}),
        ("PUT", f"{POD}/status", status, "", lambda o: o["status"] == {"phase": "Running"}),
        (
            "PATCH",
            POD,
            {"metadata": {"labels": {"x": "1"}}},
            MERGE_PATCH,
            lambda o: o["metadata"]["labels"]["x"],
        ),
        ("PATCH", POD, {"metadata": {"labels": {"y": "1"}}}, "", lambda o: o["metadata"]["labels"]["y"]),
        (
            "PATCH",
            POD,
            {"spec": {"containers": [{"name": "main", "image": "main:2"}]}},
            STRATEGIC_MERGE_PATCH,
            lambda o: o["spec"]["containers"][0]["image"] == "main:2",
        ),
        (
            "PATCH",
            POD,
            [{"op": "add", "path": "/metadata/annotations", "value": {"a": "b"}}],
            JSON_PATCH,
            lambda o: o["metadata"]["annotations"] == {"a": "b"},
        ),
        (
            "PATCH",
            f"{POD}/status",
            {"status": {"phase": "Failed"}},
            MERGE_PATCH,
            lambda o: o["status"]["phase"],
        ),
        (
            "PATCH",
            f"{DEPLOY}/scale",
            {"spec": {"replicas": 5}},
            MERGE_PATCH,
            lambda o: o["spec"]["replicas"] == 5,
        ),
        ("PUT", f"{DEPLOY}/scale", {"spec": {"replicas": 6}}, "", lambda o: o["spec"]["replicas"] == 6),
    ]
    for method, path, body, ct, check in writes:
        code, obj = _call(api, method, path, body, DRY, ct)
        assert code == 200, (path, obj)
        assert check(obj), (path, obj)
        if obj["kind"] == "Pod":
            assert obj["metadata"]["resourceVersion"] == rv
    assert _snapshot(store) == before


def test_dry_run_on_a_missing_object_is_not_found() -> None:
    api = _api()
    missing = f"{PODS}/nope"
    expected = (404, 'pods "nope" not found')
    for method, body, ct in (
        ("PATCH", {"metadata": {"labels": {"x": "1"}}}, MERGE_PATCH),
        ("PATCH", {"metadata": {"labels": {"x": "1"}}}, STRATEGIC_MERGE_PATCH),
        ("PATCH", [{"op": "add", "path": "/metadata/labels/x", "value": "1"}], JSON_PATCH),
        ("PUT", _pod("nope"), ""),
        ("DELETE", None, ""),
    ):
        code, status = _call(api, method, missing, body, DRY, ct)
        assert (code, status["message"]) == expected, method


def test_dry_run_stale_put_is_a_conflict() -> None:
    api = _api()
    current = _call(api, "GET", POD)[1]
    stale = {**current, "metadata": {**current["metadata"], "resourceVersion": "1"}}
    code, status = _call(api, "PUT", POD, stale, DRY)
    assert (code, status["reason"]) == (409, "Conflict")
    assert status["message"] == (
        'Operation cannot be fulfilled on pods "a": the object has been modified; please apply your changes '
        "to the latest version and try again"
    )


def test_dry_run_apply_runs_admission_and_validation() -> None:
    api = _api()
    store = api.store
    assert isinstance(store, MemoryStore)
    before = _snapshot(store)
    bad = _invalid("b")
    code, status = _call(api, "PATCH", f"{PODS}/b", bad, {**DRY, "fieldManager": ["m"]}, APPLY_PATCH)
    assert code == 422 and status["message"] == _call(api, "POST", PODS, bad)[1]["message"]
    code, obj = _call(api, "PATCH", f"{PODS}/b", _pod("b"), {**DRY, "fieldManager": ["m"]}, APPLY_PATCH)
    assert code == 201 and obj["status"] == {"phase": "Pending"} and "resourceVersion" not in obj["metadata"]
    assert _snapshot(store) == before


def test_dry_run_delete_and_deletecollection_store_nothing() -> None:
    api = _api()
    store = api.store
    assert isinstance(store, MemoryStore)
    before = _snapshot(store)
    options = {"apiVersion": "v1", "kind": "DeleteOptions", "dryRun": ["All"]}
    assert _call(api, "DELETE", POD, options)[0] == 200
    assert _call(api, "DELETE", POD, None, DRY)[0] == 200
    code, listed = _call(api, "DELETE", PODS, options)
    assert (code, [o["metadata"]["name"] for o in listed["items"]]) == (200, ["a"])
    assert _snapshot(store) == before


# --------------------------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("method", "path", "ct", "options"),
    [
        ("POST", PODS, "", "CreateOptions"),
        ("PUT", POD, "", "UpdateOptions"),
        ("PATCH", POD, MERGE_PATCH, "PatchOptions"),
        ("PATCH", POD, APPLY_PATCH, "PatchOptions"),
    ],
)
def test_unsupported_dry_run_values_are_422(method: str, path: str, ct: str, options: str) -> None:
    api = _api()
    body = _call(api, "GET", POD)[1] if method == "PUT" else _pod()
    query = {"dryRun": ["x"], "fieldManager": ["m"]}
    code, status = _call(api, method, path, body, query, ct)
    message = 'Unsupported value: []string{"x"}: supported values: "All"'
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"] == f'{options}.meta.k8s.io "" is invalid: dryRun: {message}'
    assert status["details"] == {
        "group": "meta.k8s.io",
        "kind": options,
        "causes": [{"reason": "FieldValueInvalid", "message": message, "field": "dryRun"}],
    }


def test_unsupported_dry_run_values_on_delete_are_422() -> None:
    api = _api()
    code, status = _call(api, "DELETE", POD, None, {"dryRun": ["All", "Some"]})
    assert (code, status["message"]) == (
        422,
        'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"All", "Some"}: '
        'supported values: "All"',
    )
    code, status = _call(api, "DELETE", POD, {"dryRun": [""]})
    assert status["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{""}: supported values: "All"'
    )
    assert _call(api, "GET", POD)[0] == 200


@pytest.mark.parametrize("ct", [MERGE_PATCH, "", JSON_PATCH, STRATEGIC_MERGE_PATCH])
@pytest.mark.parametrize("force", ["true", "false"])
def test_force_on_a_non_apply_patch_is_422(ct: str, force: str) -> None:
    api = _api()
    body: Any = [] if ct == JSON_PATCH else {}
    code, status = _call(api, "PATCH", POD, body, {"force": [force]}, ct)
    assert (code, status["message"]) == (
        422,
        'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Forbidden: may not be specified for non-apply patch",
            "field": "force",
        }
    ]


def test_options_are_checked_after_the_media_type_and_before_the_body() -> None:
    api = _api()
    code, _ = _call(api, "PATCH", POD, {}, {"force": ["true"]}, "application/xml")
    assert code == 415
    raw = api.handle(Request("PATCH", POD, {"force": ["true"]}, b"{not json", MERGE_PATCH))
    assert raw[0] == 422


def test_field_manager_is_validated_on_every_write() -> None:
    api = _api()
    current = _call(api, "GET", POD)[1]
    long = {"fieldManager": ["m" * 129]}
    for method, path, body, ct, options in (
        ("POST", PODS, _pod("b"), "", "CreateOptions"),
        ("PUT", POD, current, "", "UpdateOptions"),
        ("PATCH", POD, {}, MERGE_PATCH, "PatchOptions"),
        ("PATCH", POD, _pod(), APPLY_PATCH, "PatchOptions"),
        ("PATCH", f"{DEPLOY}/scale", {"spec": {"replicas": 1}}, MERGE_PATCH, "PatchOptions"),
    ):
        code, status = _call(api, method, path, body, long, ct)
        assert (code, status["message"]) == (
            422,
            f'{options}.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
        ), path
    assert _call(api, "POST", PODS, _pod("b"), {"fieldManager": ["é" * 64]})[0] == 201  # 128 bytes
    code, status = _call(api, "POST", PODS, _pod("c"), {"fieldManager": ["é" * 64 + "x"]})
    assert code == 422
    code, status = _call(api, "POST", PODS, _pod("c"), {"fieldManager": ["a\tb\x01"]})
    assert status["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: [fieldManager: Invalid value: "a\\tb\\x01": invalid character '
        'U+0009 (at position 1), fieldManager: Invalid value: "a\\tb\\x01": invalid character U+0001 (at position 3)]'
    )


def test_apply_without_field_manager_and_bad_field_validation() -> None:
    api = _api()
    code, status = _call(api, "PATCH", POD, _pod(), {"dryRun": ["x"]}, APPLY_PATCH)
    assert status["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: [fieldManager: Required value: is required for apply patch, '
        'dryRun: Unsupported value: []string{"x"}: supported values: "All"]'
    )
    code, status = _call(api, "POST", PODS, _pod("b"), {"fieldValidation": ["Loud"]})
    assert (code, status["message"]) == (
        422,
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: '
        '"", "Ignore", "Strict", "Warn"',
    )


def test_apply_force_is_read_as_kube_reads_a_bool() -> None:
    api = _api()
    _call(api, "PATCH", POD, _pod(image="x:1"), {"fieldManager": ["first"]}, APPLY_PATCH)
    for value, code in (("false", 409), ("0", 409), ("1", 200), ("yes", 200)):
        query = {"fieldManager": [f"other-{value}"], "force": [value], **DRY}
        assert _call(api, "PATCH", POD, _pod(image=f"y:{value}"), query, APPLY_PATCH)[0] == code, value


# ------------------------------------------------------------------------------------------- the store


def test_store_dry_run_keyword_commits_nothing_and_hooks_see_it(tmp_path: Path) -> None:
    with MemoryStore.open(tmp_path) as store:
        seen: list[bool] = []

        def hook(op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
            seen.append(store.in_dry_run)
            if op == "CREATE" and new["kind"] == "Pod":
                store.create(
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"side-{len(seen)}"}}
                )
            return new

        store.add_admission(hook)
        store.create(_pod())
        revision = store.revision
        created = store.create(_pod("b"), dry_run=True)
        assert "resourceVersion" not in created["metadata"]
        current = store.get(("", "Pod"), "default", "a")
        changed = {**current, "metadata": {**current["metadata"], "labels": {"x": "y"}}}
        assert store.update(changed, dry_run=True)["metadata"]["labels"] == {"x": "y"}
        assert store.update_status({**current, "status": {"phase": "Running"}}, dry_run=True)["status"] == {
            "phase": "Running"
        }
        assert store.patch(("", "Pod"), "default", "a", {"metadata": {"labels": {"z": "1"}}}, dry_run=True)
        assert seen == [False, False, True, True, True, True, True]  # a hook's own write is dry too
        assert store.revision == revision
        assert [o["metadata"]["name"] for o in store.all_objects()] == ["side-1", "a"]
    with MemoryStore.open(tmp_path) as reopened:
        assert reopened.revision == revision
        assert [o["metadata"]["name"] for o in reopened.all_objects()] == ["side-1", "a"]


def test_remote_store_sends_dry_run_all() -> None:
    local = MemoryStore()
    api = RestAPI(local)
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        query = urllib.parse.parse_qs(request.url.query.decode())
        seen.append(f"{request.method} {request.url.path}?{request.url.query.decode()}")
        code, body = api.handle(Request(request.method, request.url.path, query, request.content))
        return httpx.Response(code, json=body)

    remote = RemoteStore(KubeClient("http://berth.test", transport=httpx.MockTransport(handle)))
    created = remote.create(_pod(), dry_run=True)
    assert "resourceVersion" not in created["metadata"] and local.revision == 0
    remote.create(_pod())
    pod = remote.get(("", "Pod"), "default", "a")
    remote.update({**pod, "metadata": {**pod["metadata"], "labels": {"b": "c"}}}, dry_run=True)
    remote.update_status({**pod, "status": {"phase": "Running"}}, dry_run=True)
    remote.patch(("", "Pod"), "default", "a", {"metadata": {"labels": {"d": "e"}}}, dry_run=True)
    assert local.get(("", "Pod"), "default", "a") == pod
    assert [s for s in seen if not s.startswith("GET")] == [
        "POST /api/v1/namespaces/default/pods?dryRun=All",
        "POST /api/v1/namespaces/default/pods?",
        "PUT /api/v1/namespaces/default/pods/a?dryRun=All",
        "PUT /api/v1/namespaces/default/pods/a/status?dryRun=All",
        "PATCH /api/v1/namespaces/default/pods/a?dryRun=All",
    ]
