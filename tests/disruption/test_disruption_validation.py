"""PodDisruptionBudget validation (kube's ValidatePodDisruptionBudgetSpec plus Berth's rate-limit annotation)
and the kubectl-style PDB table."""

from __future__ import annotations

from typing import Any

import pytest

from berth.api.errors import InvalidObjectError
from berth.api.validation import validate_object
from berth.sim.output import to_tables


def _pdb(spec: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "web-pdb", "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta, "spec": spec}


SEL = {"matchLabels": {"app": "web"}}
PERCENT = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)


@pytest.mark.parametrize(
    "spec",
    [
        {"selector": SEL, "minAvailable": 2},
        {"selector": SEL, "minAvailable": "100%"},
        {"selector": SEL, "maxUnavailable": 0},
        {"selector": SEL, "maxUnavailable": "25%", "unhealthyPodEvictionPolicy": "AlwaysAllow"},
        {"selector": SEL, "minAvailable": 1, "unhealthyPodEvictionPolicy": "IfHealthyBudget"},
        {"selector": {}, "minAvailable": 1},
        {"minAvailable": 1},
    ],
)
def test_valid(spec: dict[str, Any]) -> None:
    pdb = _pdb(spec)
    validate_object(pdb)
    assert pdb == _pdb(spec)  # accepted as written


@pytest.mark.parametrize(
    ("spec", "annotations", "path", "message"),
    [
        (
            {"selector": SEL, "minAvailable": 1, "maxUnavailable": 1},
            None,
            "spec",
            'Invalid value: {"maxUnavailable": 1, "minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}: '
            "minAvailable and maxUnavailable cannot be both set",
        ),
        (
            {"selector": SEL, "minAvailable": -1},
            None,
            "spec.minAvailable",
            "Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"selector": SEL, "minAvailable": "50"},
            None,
            "spec.minAvailable",
            f'Invalid value: "50": {PERCENT}',
        ),
        (
            {"selector": SEL, "maxUnavailable": "101%"},
            None,
            "spec.maxUnavailable",
            'Invalid value: "101%": must not be greater than 100%',
        ),
        (
            {"selector": SEL, "maxUnavailable": 1.5},
            None,
            "spec.maxUnavailable",
            "Invalid value: 1.5: must be an integer or percentage (e.g '5%')",
        ),
        (
            {"selector": SEL, "minAvailable": 1, "unhealthyPodEvictionPolicy": "Never"},
            None,
            "spec.unhealthyPodEvictionPolicy",
            'Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
        ),
        (
            {"selector": {"matchExpressions": [{"key": "a", "operator": "Has"}]}, "minAvailable": 1},
            None,
            "spec.selector.matchExpressions[0].operator",
            'Invalid value: "Has": not a valid selector operator',
        ),
        (
            {"selector": SEL, "minAvailable": 1},
            {"berth.dev/max-disruptions": "1/never"},
            "metadata.annotations[berth.dev/max-disruptions]",
            'Invalid value: "1/never": must be N/DURATION with a positive Go duration (e.g. "1/1h")',
        ),
        (
            {"selector": SEL, "minAvailable": 1},
            {"berth.dev/max-disruptions": "x/1h"},
            "metadata.annotations[berth.dev/max-disruptions]",
            'Invalid value: "x/1h": must be N/DURATION with a positive Go duration (e.g. "1/1h")',
        ),
    ],
)
def test_invalid(spec: dict[str, Any], annotations: dict[str, str] | None, path: str, message: str) -> None:
    with pytest.raises(InvalidObjectError) as info:
        validate_object(_pdb(spec, annotations))
    assert info.value.path == path
    assert info.value.message == message


def test_pdb_table() -> None:
    a = _pdb({"selector": SEL, "minAvailable": 2})
    a["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    a["status"] = {"disruptionsAllowed": 1}
    b = _pdb({"selector": SEL, "maxUnavailable": "50%"})
    b["metadata"].update(name="db", creationTimestamp="2024-01-01T00:04:00Z")
    assert to_tables([a, b], "2024-01-01T00:05:00Z") == (
        "NAMESPACE   NAME      MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE\n"
        "default     web-pdb   2               N/A               1                     5m\n"
        "default     db        N/A             50%               0                     60s\n"
    )
