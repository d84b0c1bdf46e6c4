"""Validation of spec.topologySpreadConstraints with kube's field paths and messages."""

from __future__ import annotations

from typing import Any

import pytest

from berth.api.errors import InvalidObjectError
from berth.api.validation import validate_object
from builders import make_pod

SEL = {"matchLabels": {"app": "web"}}


def _c(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": SEL,
    }
    base.update(kw)
    return {k: v for k, v in base.items() if v is not None}


P = 'Pod "default/p": spec.topologySpreadConstraints'


@pytest.mark.parametrize(
    ("constraints", "message"),
    [
        ((_c(),), None),
        ((_c(matchLabelKeys=["pod-template-hash"]), _c(whenUnsatisfiable="ScheduleAnyway")), None),
        (
            (_c(), _c()),
            f'{P}[1].{{topologyKey, whenUnsatisfiable}}: Duplicate value: "{{topology.kubernetes.io/zone, DoNotSchedule}}"',
        ),
        (
            (_c(nodeAffinityPolicy="Always"),),
            f'{P}[0].nodeAffinityPolicy: Unsupported value: "Always": supported values: "Honor", "Ignore"',
        ),
        (
            (_c(nodeTaintsPolicy="honor"),),
            f'{P}[0].nodeTaintsPolicy: Unsupported value: "honor": supported values: "Honor", "Ignore"',
        ),
        (
            (_c(labelSelector={"matchExpressions": [{"key": "app", "operator": "Near"}]}),),
            f'{P}[0].labelSelector.matchExpressions[0].operator: Invalid value: "Near": '
            '"Near" is not a valid label selector operator',
        ),
        (
            (_c(matchLabelKeys=["app"]),),
            f'{P}[0].matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector',
        ),
        (
            (_c(labelSelector=None, matchLabelKeys=["hash"]),),
            f"{P}[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
        ),
    ],
)
def test_spread_validation(constraints: tuple[dict[str, Any], ...], message: str | None) -> None:
    if message is None:
        pod = make_pod().spread(*constraints).obj()
        validate_object(pod)
        assert pod == make_pod().spread(*constraints).obj()  # accepted as written
        return
    with pytest.raises(InvalidObjectError) as e:
        validate_object(make_pod().spread(*constraints).obj())
    assert str(e.value) == message
