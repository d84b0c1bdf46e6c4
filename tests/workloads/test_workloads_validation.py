"""Validation of apps/v1 ReplicaSets and Deployments (kube's field.Error messages)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from workloads_helpers import deployment, replica_set

from berth.api.errors import InvalidObjectError
from berth.api.validation import validate_object

Mutation = Callable[[dict[str, Any]], object]


def _spec(o: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = o["spec"]
    return spec


CASES: list[tuple[str, Mutation, str]] = [
    ("no selector", lambda o: _spec(o).pop("selector"), "spec.selector: Required value"),
    (
        "empty selector",
        lambda o: _spec(o).update(selector={}),
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment",
    ),
    (
        "selector mismatch",
        lambda o: _spec(o)["selector"].update(matchLabels={"app": "x"}),
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: '
        "`selector` does not match template `labels`",
    ),
    (
        "several labels sorted",
        lambda o: _spec(o)["template"]["metadata"].update(labels={"tier": "fe", "app": "x"}),
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"x", "tier":"fe"}: '
        "`selector` does not match template `labels`",
    ),
    (
        "no template labels",
        lambda o: _spec(o)["template"]["metadata"].pop("labels"),
        "spec.template.metadata.labels: Invalid value: map[string]string(nil): "
        "`selector` does not match template `labels`",
    ),
    (
        "negative replicas",
        lambda o: _spec(o).update(replicas=-1),
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
    ),
    (
        "no containers",
        lambda o: _spec(o)["template"]["spec"].update(containers=[]),
        "spec.template.spec.containers: Required value",
    ),
    (
        "restart policy",
        lambda o: _spec(o)["template"]["spec"].update(restartPolicy="Never"),
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ),
    (
        "bad operator",
        lambda o: _spec(o)["selector"].update(matchExpressions=[{"key": "a", "operator": "Foo"}]),
        'spec.selector.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator',
    ),
]

DEPLOYMENT_CASES: list[tuple[str, Mutation, str]] = [
    (
        "strategy type",
        lambda o: _spec(o).update(strategy={"type": "Blue"}),
        'spec.strategy: Unsupported value: "Blue": supported values: "Recreate", "RollingUpdate"',
    ),
    (
        "recreate with rollingUpdate",
        lambda o: _spec(o).update(strategy={"type": "Recreate", "rollingUpdate": {}}),
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
    ),
    (
        "zero surge and unavailable",
        lambda o: _spec(o).update(strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}),
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0",
    ),
    (
        "bad percent",
        lambda o: _spec(o).update(strategy={"rollingUpdate": {"maxSurge": "abc"}}),
        'spec.strategy.rollingUpdate.maxSurge: Invalid value: "abc": a valid percent string must be a numeric '
        "string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    ),
    (
        "over 100%",
        lambda o: _spec(o).update(strategy={"rollingUpdate": {"maxUnavailable": "150%"}}),
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater than 100%',
    ),
    (
        "deadline vs minReadySeconds",
        lambda o: _spec(o).update(progressDeadlineSeconds=5, minReadySeconds=10),
        "spec.progressDeadlineSeconds: Invalid value: 5: must be greater than minReadySeconds",
    ),
]


@pytest.mark.parametrize(("kind", "build"), [("Deployment", deployment), ("ReplicaSet", replica_set)])
@pytest.mark.parametrize(("case", "mutate", "message"), CASES, ids=[c[0] for c in CASES])
def test_workload_errors(
    kind: str, build: Callable[[], dict[str, Any]], case: str, mutate: Mutation, message: str
) -> None:
    obj = copy.deepcopy(build())
    mutate(obj)
    with pytest.raises(InvalidObjectError) as err:
        validate_object(obj)
    name = obj["metadata"]["name"]
    assert str(err.value) == f'{kind} "default/{name}": {message}'


@pytest.mark.parametrize(
    ("case", "mutate", "message"), DEPLOYMENT_CASES, ids=[c[0] for c in DEPLOYMENT_CASES]
)
def test_deployment_errors(case: str, mutate: Mutation, message: str) -> None:
    obj = copy.deepcopy(deployment())
    mutate(obj)
    with pytest.raises(InvalidObjectError) as err:
        validate_object(obj)
    assert str(err.value) == f'Deployment "default/web": {message}'


@pytest.mark.parametrize(
    "strategy",
    [
        None,
        {"type": "Recreate"},
        {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "0%"}},
        {"rollingUpdate": {"maxSurge": "100%"}},
    ],
)
def test_valid_deployments(strategy: dict[str, Any] | None) -> None:
    for obj in (deployment() if strategy is None else deployment(strategy=strategy), replica_set()):
        before = copy.deepcopy(obj)
        validate_object(obj)
        assert obj == before  # accepted as written
