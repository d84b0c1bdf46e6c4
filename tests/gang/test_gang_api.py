"""PodGroup validation, args validation and the PodGroup table."""

from __future__ import annotations

from typing import Any

import pytest
from gang_helpers import pod_group

from berth.api.errors import InvalidObjectError
from berth.api.podgroup import PodGroupSpec, compile_pod_group
from berth.api.validation import validate_object
from berth.scheduler.framework import ConfigError
from berth.scheduler.plugins.coscheduling import CoschedulingArgs, parse_coscheduling_args
from berth.sim.output import TABLES


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"minMember": 0},
            "spec.minMember: Invalid value: 0: spec.minMember in body should be greater than or equal to 1",
        ),
        (
            {"minMember": "2"},
            'spec.minMember: Invalid value: "2": spec.minMember in body must be of type integer: "string"',
        ),
        (
            {"minMember": 1, "scheduleTimeoutSeconds": 1 << 31},
            "spec.scheduleTimeoutSeconds: Invalid value: 2147483648: spec.scheduleTimeoutSeconds in body should be between -2147483648 and 2147483647",
        ),
        ({"minMember": 1, "minResources": {"cpu": "x"}}, 'spec.minResources.cpu: invalid quantity "x"'),
    ],
)
def test_pod_group_validation(spec: dict[str, Any], message: str) -> None:
    obj = pod_group("pg", 1)
    obj["spec"] = spec
    with pytest.raises(InvalidObjectError) as e:
        validate_object(obj)
    assert message in str(e.value)


def test_valid_pod_group_passes() -> None:
    pg = pod_group("pg", 3, timeout=10, min_resources={"cpu": "2", "memory": "1Gi"})
    validate_object(pg)
    assert compile_pod_group(pg) == PodGroupSpec("default", "pg", 3, {"cpu": 2000, "memory": 1 << 30}, 10, "")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, CoschedulingArgs(60, 0, 10)),
        (
            {"permitWaitingTimeSeconds": 5, "podGroupBackoffSeconds": 7, "podGroupRejectPercentage": 0},
            CoschedulingArgs(5, 7, 0),
        ),
    ],
)
def test_args(args: dict[str, Any], expected: CoschedulingArgs) -> None:
    assert parse_coscheduling_args(args) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"podGroupBackoffSeconds": -1},
            "Coscheduling: podGroupBackoffSeconds: Invalid value: -1: must be greater than 0",
        ),
        (
            {"podGroupRejectPercentage": 101},
            "Coscheduling: podGroupRejectPercentage: Invalid value: 101: not in valid range [0, 100]",
        ),
    ],
)
def test_bad_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_coscheduling_args(args)
    assert str(e.value) == message


def test_table_columns() -> None:
    head, row = TABLES["PodGroup"](False)
    obj = pod_group("pg", 3)
    obj["status"] = {"phase": "Running", "running": 3}
    from datetime import UTC, datetime

    obj["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    assert head == ["NAMESPACE", "NAME", "PHASE", "MINMEMBER", "RUNNING", "SUCCEEDED", "FAILED", "AGE"]
    assert row(obj, datetime(2024, 1, 1, 0, 5, tzinfo=UTC)) == [
        "default",
        "pg",
        "Running",
        "3",
        "3",
        "",
        "",
        "5m",
    ]
