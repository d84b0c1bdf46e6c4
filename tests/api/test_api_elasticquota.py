"""ElasticQuota validation: spec.min must not exceed spec.max, in the manifest loader and through the REST API."""

from __future__ import annotations

import json
from typing import Any

import pytest

from berth.api.errors import InvalidObjectError
from berth.api.patches import MERGE_PATCH
from berth.api.validation import validate_object
from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore

EQ = ("scheduling.x-k8s.io", "ElasticQuota")
QUOTAS = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/team/elasticquotas"


def _quota(
    min_: dict[str, Any] | None, max_: dict[str, Any] | None, group: str = "scheduling.x-k8s.io"
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if min_ is not None:
        spec["min"] = min_
    if max_ is not None:
        spec["max"] = max_
    return {
        "apiVersion": f"{group}/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "quota", "namespace": "team"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("min_", "max_"),
    [
        ({"cpu": "8", "memory": "1Gi"}, {"cpu": "8", "memory": "2Gi"}),
        ({"cpu": "8"}, {"cpu": "8000m"}),
        ({"cpu": "100", "memory": "1Ti"}, {"memory": "1Ti"}),  # cpu has no max: unbounded
        ({"cpu": "100"}, None),
        (None, {"cpu": "1"}),  # no min: 0
        ({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": "2"}),
    ],
)
def test_min_within_max_is_valid(min_: dict[str, Any] | None, max_: dict[str, Any] | None) -> None:
    validate_object(_quota(min_, max_))


@pytest.mark.parametrize(
    ("min_", "max_", "message"),
    [
        (
            {"cpu": "10"},
            {"cpu": "8"},
            'ElasticQuota "team/quota": spec.min.cpu: Invalid value: "10": '
            "must be less than or equal to spec.max.cpu",
        ),
        (
            {"cpu": "1", "memory": "2Gi"},
            {"cpu": "2", "memory": "2047Mi"},
            'ElasticQuota "team/quota": spec.min.memory: Invalid value: "2Gi": '
            "must be less than or equal to spec.max.memory",
        ),
        (
            {"nvidia.com/gpu": 3, "cpu": "9"},
            {"nvidia.com/gpu": 2, "cpu": "8"},
            'ElasticQuota "team/quota": spec.min.cpu: Invalid value: "9": '
            "must be less than or equal to spec.max.cpu",
        ),
        (
            {"nvidia.com/gpu": 3},
            {"nvidia.com/gpu": 2},
            'ElasticQuota "team/quota": spec.min.nvidia.com/gpu: Invalid value: "3": '
            "must be less than or equal to spec.max.nvidia.com/gpu",
        ),
        (
            {"cpu": "1001m"},
            {"cpu": "1"},
            'ElasticQuota "team/quota": spec.min.cpu: Invalid value: "1001m": '
            "must be less than or equal to spec.max.cpu",
        ),
    ],
)
def test_min_above_max_is_invalid(min_: dict[str, Any], max_: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidObjectError) as e:
        validate_object(_quota(min_, max_))
    assert str(e.value) == message


def test_the_older_group_is_checked_too() -> None:
    with pytest.raises(InvalidObjectError) as e:
        validate_object(_quota({"cpu": "2"}, {"cpu": "1"}, group="scheduling.sigs.k8s.io"), source="q.yaml")
    assert str(e.value) == (
        'q.yaml: ElasticQuota "team/quota": spec.min.cpu: Invalid value: "2": '
        "must be less than or equal to spec.max.cpu"
    )


def _api() -> RestAPI:
    store = MemoryStore(seed=1)
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    return RestAPI(store)


def _call(api: RestAPI, method: str, path: str, body: Any, ct: str = "") -> tuple[int, dict[str, Any]]:
    return api.handle(Request(method, path, {}, json.dumps(body).encode(), ct))


def _status_422(message: str, field: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'ElasticQuota.scheduling.x-k8s.io "quota" is invalid: {field}: {message}',
        "reason": "Invalid",
        "code": 422,
        "details": {
            "name": "quota",
            "group": "scheduling.x-k8s.io",
            "kind": "ElasticQuota",
            "causes": [{"reason": "FieldValueInvalid", "message": message, "field": field}],
        },
    }


def test_the_api_answers_422_to_a_create_with_min_above_max() -> None:
    api = _api()
    assert _call(api, "POST", QUOTAS, _quota({"cpu": "10"}, {"cpu": "8"})) == (
        422,
        _status_422('Invalid value: "10": must be less than or equal to spec.max.cpu', "spec.min.cpu"),
    )
    assert api.store.list(EQ)[0] == []


def test_the_api_answers_422_to_a_patch_lowering_max_below_min() -> None:
    api = _api()
    assert _call(api, "POST", QUOTAS, _quota({"memory": "4Gi"}, {"memory": "8Gi"}))[0] == 201
    patch = {"spec": {"max": {"memory": "2Gi"}}}
    assert _call(api, "PATCH", f"{QUOTAS}/quota", patch, MERGE_PATCH) == (
        422,
        _status_422('Invalid value: "4Gi": must be less than or equal to spec.max.memory', "spec.min.memory"),
    )
    stored = api.store.get(EQ, "team", "quota")
    assert stored["spec"]["max"] == {"memory": "8Gi"}
