"""Server-side apply through RestAPI: ``application/apply-patch+yaml`` with fieldManager and force."""

from __future__ import annotations

import json
from typing import Any

from berth.api.patches import APPLY_PATCH, MERGE_PATCH
from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore

DEPLOY = "/apis/apps/v1/namespaces/default/deployments/web"
POD = "/api/v1/namespaces/default/pods/a"


def _api() -> RestAPI:
    store = MemoryStore(seed=1)
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    return RestAPI(store)


def _deployment(replicas: int = 2, image: str = "nginx:1", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", **labels}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": image}]},
            },
        },
    }


def _apply(
    api: RestAPI, body: Any, manager: str | None = "kubectl", *, force: bool = False, path: str = DEPLOY
) -> tuple[int, dict[str, Any]]:
    query: dict[str, list[str]] = {}
    if manager is not None:
        query["fieldManager"] = [manager]
    if force:
        query["force"] = ["true"]
    return api.handle(Request("PATCH", path, query, json.dumps(body).encode(), APPLY_PATCH))


def _get(api: RestAPI, path: str = DEPLOY) -> dict[str, Any]:
    return api.handle(Request("GET", path, {}))[1]


def test_apply_creates_with_managed_fields() -> None:
    api = _api()
    code, obj = _apply(api, _deployment())
    assert code == 201
    assert obj["spec"]["replicas"] == 2
    assert obj["metadata"]["namespace"] == "default"
    assert obj["metadata"]["managedFields"] == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "apps/v1",
            "time": obj["metadata"]["creationTimestamp"],
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:selector": {},
                    "f:template": {
                        "f:metadata": {"f:labels": {"f:app": {}}},
                        "f:spec": {
                            "f:containers": {
                                'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}},
                            }
                        },
                    },
                },
            },
        }
    ]
    assert _get(api) == obj


def test_reapply_changes_a_value_and_same_config_is_a_noop() -> None:
    api = _api()
    _apply(api, _deployment())
    code, obj = _apply(api, _deployment(replicas=3, image="nginx:2"))
    assert code == 200
    assert obj["spec"]["replicas"] == 3
    assert obj["spec"]["template"]["spec"]["containers"] == [{"name": "c", "image": "nginx:2"}]
    assert len(obj["metadata"]["managedFields"]) == 1
    rv = obj["metadata"]["resourceVersion"]
    code, again = _apply(api, _deployment(replicas=3, image="nginx:2"))
    assert (code, again["metadata"]["resourceVersion"]) == (200, rv)


def test_removing_a_field_from_the_config_removes_it() -> None:
    api = _api()
    _apply(api, _deployment(tier="front"))
    assert _get(api)["metadata"]["labels"] == {"app": "web", "tier": "front"}
    config = _deployment()
    config["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "side:1"})
    code, obj = _apply(api, config)
    assert code == 200
    assert obj["metadata"]["labels"] == {"app": "web"}
    assert [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]] == ["c", "side"]
    code, obj = _apply(api, _deployment())
    assert [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]] == ["c"]
    fields = obj["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields["f:metadata"] == {"f:labels": {"f:app": {}}}


def test_fields_other_writers_set_are_kept() -> None:
    api = _api()
    _apply(api, _deployment())
    code, _ = api.handle(
        Request("PATCH", DEPLOY, {}, json.dumps({"metadata": {"labels": {"x": "1"}}}).encode(), MERGE_PATCH)
    )
    assert code == 200
    code, obj = _apply(api, _deployment(replicas=4))
    assert code == 200
    assert obj["metadata"]["labels"] == {"app": "web", "x": "1"}


def test_second_manager_conflict_is_409_and_force_takes_ownership() -> None:
    api = _api()
    _apply(api, _deployment())
    mini = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 5},
    }
    code, status = _apply(api, mini, "hpa")
    assert (code, status["reason"]) == (409, "Conflict")
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas'
    assert status["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "kubectl"', "field": ".spec.replicas"}
    ]
    assert _get(api)["spec"]["replicas"] == 2
    # the same value is shared ownership, not a conflict
    code, _ = _apply(api, {**mini, "spec": {"replicas": 2}}, "hpa")
    assert code == 200
    code, obj = _apply(api, mini, "hpa", force=True)
    assert code == 200
    assert obj["spec"]["replicas"] == 5
    owners = {e["manager"]: e["fieldsV1"] for e in obj["metadata"]["managedFields"]}
    assert owners["hpa"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in owners["kubectl"]["f:spec"]
    # kubectl dropping replicas from its config no longer removes them: hpa owns the field
    config = _deployment()
    del config["spec"]["replicas"]
    code, obj = _apply(api, config)
    assert (code, obj["spec"]["replicas"]) == (200, 5)


def test_multiple_conflicts_message() -> None:
    api = _api()
    _apply(api, _deployment())
    code, status = _apply(api, _deployment(replicas=9, image="other:1"), "other")
    assert code == 409
    assert status["message"] == (
        'Apply failed with 2 conflicts: conflicts with "kubectl":\n- .spec.replicas\n'
        '- .spec.template.spec.containers[name="c"].image'
    )


def test_apply_over_object_without_managed_fields() -> None:
    api = _api()
    created = _deployment()
    created["metadata"]["namespace"] = "default"
    api.store.create(created)  # a component's write: no managedFields (a REST create records its manager)
    code, obj = _apply(api, _deployment(tier="front"))
    assert code == 200
    assert obj["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert [e["manager"] for e in obj["metadata"]["managedFields"]] == ["kubectl", "before-first-apply"]
    code, status = _apply(api, _deployment(replicas=7))
    assert status["message"] == (
        'Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.replicas'
    )


def test_missing_field_manager_is_422() -> None:
    api = _api()
    code, status = _apply(api, _deployment(), None)
    assert (code, status["reason"]) == (422, "Invalid")
    assert status["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )


def test_apply_rejects_managed_fields_and_wrong_name() -> None:
    api = _api()
    body = _deployment()
    body["metadata"]["managedFields"] = [{"manager": "x"}]
    code, status = _apply(api, body)
    assert (code, status["message"]) == (400, "metadata.managedFields must be nil")
    body = _deployment()
    body["metadata"]["name"] = "other"
    assert _apply(api, body)[0] == 400


def test_apply_on_custom_resource_lists_are_atomic() -> None:
    api = _api()
    path = "/apis/scheduling.koordinator.sh/v1alpha1/reservations/r1"
    cr: dict[str, Any] = {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": "r1", "labels": {"a": "1"}},
        "spec": {
            "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
            "owners": [{"object": {"name": "p"}}],
            "ttl": "1h",
        },
    }
    code, obj = _apply(api, cr, path=path)
    assert code == 201, obj
    fields = obj["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields == {
        "f:metadata": {"f:labels": {"f:a": {}}},
        "f:spec": {"f:owners": {}, "f:template": {"f:spec": {"f:containers": {}}}, "f:ttl": {}},
    }
    cr["spec"]["owners"] = [{"object": {"name": "q"}}]
    code, obj = _apply(api, cr, "other", path=path)
    assert (code, obj.get("message")) == (
        409,
        'Apply failed with 1 conflict: conflict with "kubectl": .spec.owners',
    )


def test_pod_containers_merge_by_name_across_managers() -> None:
    api = _api()
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a"},
        "spec": {"containers": [{"name": "main", "image": "main:1"}]},
    }
    assert _apply(api, pod, "one", path=POD)[0] == 201
    side = {**pod, "spec": {"containers": [{"name": "side", "image": "side:1"}]}}
    code, obj = _apply(api, side, "two", path=POD)
    assert code == 200
    assert [c["name"] for c in obj["spec"]["containers"]] == ["main", "side"]


def test_dry_run_apply_writes_nothing() -> None:
    api = _api()
    query = {"fieldManager": ["kubectl"], "dryRun": ["All"]}
    body = json.dumps(_deployment()).encode()
    code, obj = api.handle(Request("PATCH", DEPLOY, query, body, APPLY_PATCH))
    assert (code, obj["spec"]["replicas"]) == (201, 2)
    assert api.handle(Request("GET", DEPLOY, {}))[0] == 404
