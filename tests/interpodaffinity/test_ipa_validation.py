"""Validation of spec.affinity.podAffinity / podAntiAffinity: field path and value in the message."""

from __future__ import annotations

from typing import Any

import pytest

from berth.api.errors import InvalidObjectError
from berth.api.validation import validate_object
from builders import make_pod

REQ = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
PREF = "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"


def _anti(term: dict[str, Any]) -> dict[str, Any]:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _pref(weight: Any, term: dict[str, Any]) -> dict[str, Any]:
    return {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": weight, "podAffinityTerm": term}]
        }
    }


GOOD = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}


@pytest.mark.parametrize(
    ("affinity", "message"),
    [
        (_anti(GOOD), None),
        (_pref(100, dict(GOOD, namespaces=["a"], namespaceSelector={})), None),
        (
            _anti({"labelSelector": {}}),
            f'Pod "default/p1": {REQ}.topologyKey: Required value: can not be empty',
        ),
        (
            _anti(dict(GOOD, topologyKey="bad key!")),
            f'Pod "default/p1": {REQ}.topologyKey: Invalid value: "bad key!": name part must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            _anti(dict(GOOD, labelSelector={"matchExpressions": [{"key": "app", "operator": "In"}]})),
            f'Pod "default/p1": {REQ}.labelSelector.matchExpressions[0].values: Invalid value: []: '
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            _pref(0, GOOD),
            f'Pod "default/p1": {PREF}.weight: Invalid value: 0: must be in the range 1-100',
        ),
        (
            _anti(dict(GOOD, namespaces=["Bad_NS"])),
            f'Pod "default/p1": {REQ}.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label must '
            "consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric "
            "character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ),
    ],
)
def test_pod_affinity_validation(affinity: dict[str, Any], message: str | None) -> None:
    if message is None:
        pod = make_pod("p1").affinity(affinity).obj()
        validate_object(pod)
        assert pod["spec"]["affinity"] == affinity  # accepted as written
        return
    with pytest.raises(InvalidObjectError) as info:
        validate_object(make_pod("p1").affinity(affinity).obj())
    assert str(info.value) == message
