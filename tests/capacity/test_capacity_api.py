"""ElasticQuota API: validation under both groups, limits parsing, and the table."""

from __future__ import annotations

from typing import Any

import pytest
from capacity_helpers import GPU, quota

from berth.api.elasticquota import quota_limits
from berth.api.errors import InvalidObjectError
from berth.api.validation import validate_object
from berth.sim.output import to_tables


@pytest.mark.parametrize("group", ["scheduling.x-k8s.io", "scheduling.sigs.k8s.io"])
def test_valid_quota(group: str) -> None:
    q = quota("team", {"cpu": "10", "memory": "20Gi", GPU: 1}, {"cpu": 20}, group=group)
    validate_object(q)
    assert quota_limits(q) == ({"cpu": 10_000, "memory": 20 << 30, GPU: 1}, {"cpu": 20_000})


@pytest.mark.parametrize(
    ("spec", "status", "message"),
    [
        (
            {"min": {"cpu": "ten"}},
            None,
            'ElasticQuota "team/team": spec.min.cpu: invalid quantity "ten"',
        ),
        (
            {"max": {"cpu": "-1"}},
            None,
            'ElasticQuota "team/team": spec.max.cpu: Invalid value: "-1": must be greater than or equal to 0',
        ),
        (
            {"max": ["cpu"]},
            None,
            'ElasticQuota "team/team": spec.max: Invalid value: ["cpu"]: must be an object',
        ),
        (
            {"min": {"bad key!": "1"}},
            None,
            'ElasticQuota "team/team": spec.min: Invalid value: "bad key!": '
            "must be a standard resource name or a qualified name",
        ),
        (
            {},
            {"used": {"cpu": "x"}},
            'ElasticQuota "team/team": status.used.cpu: invalid quantity "x"',
        ),
    ],
)
def test_invalid_quota(spec: dict[str, Any], status: dict[str, Any] | None, message: str) -> None:
    obj = quota("team", None, None)
    obj["spec"] = spec
    if status is not None:
        obj["status"] = status
    with pytest.raises(InvalidObjectError) as e:
        validate_object(obj)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("min_", "max_", "want"),
    [
        ({"cpu": "1500m", GPU: 2}, {"memory": "1Gi"}, ({"cpu": 1500, GPU: 2}, {"memory": 1 << 30})),
        (None, None, ({}, None)),
        ({}, {}, ({}, {})),
    ],
)
def test_quota_limits(min_: Any, max_: Any, want: Any) -> None:
    assert quota_limits(quota("a", min_, max_)) == want


def test_table() -> None:
    q = quota("team", {"cpu": "1"}, {"cpu": "2", GPU: 4})
    q["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    q["status"] = {"used": {"cpu": "1500m", GPU: "0"}}
    empty = quota("idle", None, None)
    empty["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    out = to_tables([q, empty], "2026-01-01T00:05:00Z")
    lines = [line.split() for line in out.splitlines()]
    assert lines == [
        ["NAMESPACE", "NAME", "USED", "MAX", "AGE"],
        ["team", "team", '{"cpu":"1500m","nvidia.com/gpu":"0"}', '{"cpu":"2","nvidia.com/gpu":4}', "5m"],
        ["idle", "idle", "5m"],
    ]
