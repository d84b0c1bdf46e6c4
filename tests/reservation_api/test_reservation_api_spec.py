"""Reservation spec accessors: expiry math, ttl, requests, policies, order, RFC 3339 parsing."""

from datetime import UTC, datetime
from typing import Any

import pytest

from berth.api.errors import InvalidObjectError
from berth.api.reservation import (
    allocate_policy,
    expiry,
    is_active,
    is_allocate_once,
    is_available,
    is_unschedulable,
    parse_rfc3339,
    reservation_allocatable,
    reservation_order,
    reservation_requests,
    ttl_seconds,
)

CREATED = "2024-01-01T00:01:40Z"  # clock time 100 under the default epoch


def res(spec: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": "r1", "creationTimestamp": CREATED},
        "spec": spec if spec is not None else {},
    }
    obj.update(extra)
    return obj


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, 100.0 + 86400),
        ({"ttl": "1h"}, 3700.0),
        ({"ttl": "90s"}, 190.0),
        ({"ttl": "1h30m"}, 5500.0),
        ({"ttl": "0"}, None),
        ({"ttl": "0s"}, None),
        ({"expires": "2024-01-01T00:10:00Z"}, 600.0),
        # the earlier of expires and creation + ttl
        ({"ttl": "1h", "expires": "2024-01-01T00:10:00Z"}, 600.0),
        ({"ttl": "5m", "expires": "2024-01-01T00:10:00Z"}, 400.0),
        # ttl 0 disables expiry even with expires
        ({"ttl": "0", "expires": "2024-01-01T00:10:00Z"}, None),
        ({"expires": "2024-01-01T08:10:00+08:00"}, 600.0),
        ({"expires": "2024-01-01T00:00:00Z"}, 0.0),
    ],
)
def test_expiry(spec: dict[str, Any], expected: float | None) -> None:
    assert expiry(res(spec), 100.0) == expected


def test_expiry_with_an_explicit_epoch() -> None:
    r = res({"expires": "2024-06-01T00:00:00Z"})
    epoch = datetime(2024, 5, 31, tzinfo=UTC)
    assert expiry(r, 5.0, epoch=epoch) == 86400.0


def test_expiry_relative_to_fractional_creation() -> None:
    # creationTimestamp names the whole second created_at falls in
    assert expiry(res({"expires": "2024-01-01T00:02:00Z"}), 100.7) == 120.0
    assert expiry(res({"ttl": "10s"}), 100.5) == 110.5


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"ttl": "1x"}, 'Invalid value: "1x": time: unknown unit "x" in duration "1x"'),
        ({"ttl": "10"}, 'Invalid value: "10": time: missing unit in duration "10"'),
        ({"ttl": "abc"}, 'Invalid value: "abc": time: invalid duration "abc"'),
        ({"ttl": 0}, 'Invalid value: "integer": spec.ttl in body must be of type string: "integer"'),
        (
            {"expires": "tomorrow"},
            'Invalid value: "tomorrow": spec.expires in body must be of type date-time: "tomorrow"',
        ),
    ],
)
def test_expiry_refuses_bad_fields(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidObjectError) as info:
        expiry(res(spec), 0.0)
    assert info.value.message == message
    assert info.value.kind == "Reservation"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [({}, 86400.0), ({"ttl": "30m"}, 1800.0), ({"ttl": "0"}, None), ({"ttl": "1.5h"}, 5400.0)],
)
def test_ttl_seconds(spec: dict[str, Any], expected: float | None) -> None:
    assert ttl_seconds(res(spec)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-01T00:00:00Z", datetime(2024, 1, 1, tzinfo=UTC)),
        ("2024-01-01T00:00:00.5Z", datetime(2024, 1, 1, 0, 0, 0, 500000, tzinfo=UTC)),
        ("2024-01-01T01:30:00+01:30", datetime(2024, 1, 1, tzinfo=UTC)),
        ("2023-12-31T23:00:00-01:00", datetime(2024, 1, 1, tzinfo=UTC)),
    ],
)
def test_parse_rfc3339(text: str, expected: datetime) -> None:
    assert parse_rfc3339(text) == expected


@pytest.mark.parametrize(
    "text", ["2024-01-01", "2024-01-01 00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01T00:00:00", "x"]
)
def test_parse_rfc3339_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_rfc3339(text)


TEMPLATE = {
    "spec": {
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "800Mi"}}},
            {"name": "b", "resources": {"limits": {"cpu": "1", "nvidia.com/gpu": "1"}}},
        ],
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}],
    }
}


def test_reservation_requests() -> None:
    assert reservation_requests(res({"template": TEMPLATE})) == {
        "cpu": 2000,
        "memory": 800 * 1024 * 1024,
        "nvidia.com/gpu": 1,
    }
    assert reservation_requests(res({})) == {}


def test_reservation_requests_names_the_template_path() -> None:
    bad = {"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "500x"}}}]}}
    with pytest.raises(InvalidObjectError) as info:
        reservation_requests(res({"template": bad}))
    assert str(info.value) == (
        'Reservation "r1": spec.template.spec.containers[0].resources.requests.cpu: invalid quantity "500x"'
    )


def test_reservation_allocatable_prefers_status_once_available() -> None:
    spec = {"template": TEMPLATE}
    status = {"phase": "Available", "nodeName": "n1", "allocatable": {"cpu": "3", "memory": "1Gi"}}
    assert reservation_allocatable(res(spec, status=status)) == {"cpu": 3000, "memory": 1 << 30}
    pending = {"phase": "Pending", "allocatable": {"cpu": "3"}}
    assert reservation_allocatable(res(spec, status=pending))["cpu"] == 2000


@pytest.mark.parametrize(
    ("spec", "policy", "once"),
    [
        ({}, "", True),
        ({"allocatePolicy": "Aligned", "allocateOnce": False}, "Aligned", False),
        ({"allocatePolicy": "Restricted", "allocateOnce": True}, "Restricted", True),
    ],
)
def test_policy_and_allocate_once(spec: dict[str, Any], policy: str, once: bool) -> None:
    r = res(spec)
    assert allocate_policy(r) == policy
    assert is_allocate_once(r) is once


@pytest.mark.parametrize(
    ("status", "available", "active"),
    [
        ({}, False, False),
        ({"phase": "Available"}, False, False),
        ({"phase": "Available", "nodeName": "n1"}, True, True),
        ({"phase": "Waiting", "nodeName": "n1"}, False, True),
        ({"phase": "Succeeded", "nodeName": "n1"}, False, False),
    ],
)
def test_available_and_active(status: dict[str, Any], available: bool, active: bool) -> None:
    r = res({}, status=status)
    assert is_available(r) is available
    assert is_active(r) is active


def test_unschedulable() -> None:
    assert is_unschedulable(res({})) is False
    assert is_unschedulable(res({"unschedulable": True})) is True
    deleting = res({})
    deleting["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    assert is_unschedulable(deleting) is True


@pytest.mark.parametrize(("value", "expected"), [(None, 0), ("3", 3), ("-2", -2), ("x", 0), ("1.5", 0)])
def test_reservation_order(value: str | None, expected: int) -> None:
    r = res({})
    if value is not None:
        r["metadata"]["labels"] = {"scheduling.koordinator.sh/reservation-order": value}
    assert reservation_order(r) == expected
