"""Validation of Reservation objects (registered with berth.api.validation): exact messages."""

import copy
from collections.abc import Callable
from typing import Any

import pytest

from berth.api.errors import InvalidObjectError
from berth.api.validation import validate_object

BASE: dict[str, Any] = {
    "apiVersion": "scheduling.koordinator.sh/v1alpha1",
    "kind": "Reservation",
    "metadata": {"name": "r1"},
    "spec": {
        "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
        "owners": [{"object": {"name": "p"}}],
    },
}
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u"}


def spec_set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(obj: dict[str, Any]) -> None:
        obj["spec"][key] = value

    return edit


def spec_del(key: str) -> Callable[[dict[str, Any]], None]:
    def edit(obj: dict[str, Any]) -> None:
        del obj["spec"][key]

    return edit


def container_cpu(value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(obj: dict[str, Any]) -> None:
        obj["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda o: o.pop("spec"), "spec.template: Required value"),
        (spec_del("template"), "spec.template: Required value"),
        (
            spec_set("template", []),
            'spec.template: Invalid value: "array": spec.template in body must be of type object: "array"',
        ),
        (spec_del("owners"), "spec.owners: Required value"),
        (spec_set("owners", []), "spec.owners: Required value"),
        (
            spec_set("owners", {}),
            'spec.owners: Invalid value: "object": spec.owners in body must be of type array: "object"',
        ),
        (
            spec_set("owners", [{"object": {"name": "p"}}, {}]),
            "spec.owners[1]: Invalid value: 0: spec.owners[1] in body should have at least 1 properties",
        ),
        (
            spec_set("owners", ["p"]),
            'spec.owners[0]: Invalid value: "string": spec.owners[0] in body must be of type object: "string"',
        ),
        (
            spec_set("owners", [{"controller": {k: v for k, v in RS.items() if k != "uid"}}]),
            "spec.owners[0].controller.uid: Required value",
        ),
        (
            spec_set("owners", [{"labelSelector": {"matchLabels": {"app": "-x"}}}]),
            f'spec.owners[0].labelSelector.matchLabels[app]: Invalid value: "-x": {LABEL_VALUE_MSG}',
        ),
        (
            spec_set("owners", [{"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Foo"}]}}]),
            'spec.owners[0].labelSelector.matchExpressions[0].operator: Invalid value: "Foo": '
            '"Foo" is not a valid label selector operator',
        ),
        (
            lambda o: o["spec"]["template"].__setitem__("spec", {}),
            "spec.template.spec.containers: Required value",
        ),
        (
            container_cpu("500x"),
            'spec.template.spec.containers[0].resources.requests.cpu: invalid quantity "500x"',
        ),
        (
            lambda o: o["spec"]["template"].__setitem__("metadata", {"labels": {"a": "-"}}),
            f'spec.template.metadata.labels: Invalid value: "-": {LABEL_VALUE_MSG}',
        ),
        (spec_set("ttl", "1x"), 'spec.ttl: Invalid value: "1x": time: unknown unit "x" in duration "1x"'),
        (spec_set("ttl", "5"), 'spec.ttl: Invalid value: "5": time: missing unit in duration "5"'),
        (spec_set("ttl", ""), 'spec.ttl: Invalid value: "": time: invalid duration ""'),
        (
            spec_set("ttl", 0),
            'spec.ttl: Invalid value: "integer": spec.ttl in body must be of type string: "integer"',
        ),
        (
            spec_set("expires", "soon"),
            'spec.expires: Invalid value: "soon": spec.expires in body must be of type date-time: "soon"',
        ),
        (
            spec_set("allocatePolicy", "Default"),
            'spec.allocatePolicy: Unsupported value: "Default": supported values: "Aligned", "Restricted"',
        ),
        (
            spec_set("preAllocationPolicy", {"mode": "All"}),
            'spec.preAllocationPolicy.mode: Unsupported value: "All": supported values: "Default", "Cluster"',
        ),
        (
            spec_set("allocateOnce", "yes"),
            'spec.allocateOnce: Invalid value: "string": spec.allocateOnce in body must be of type boolean: "string"',
        ),
        (
            spec_set("taints", [{"key": "k", "effect": "Never"}]),
            'spec.taints[0].effect: Unsupported value: "Never": supported values: "NoSchedule", '
            '"PreferNoSchedule", "NoExecute"',
        ),
        (
            spec_set(
                "taints",
                [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "value": "v", "effect": "NoSchedule"}],
            ),
            'spec.taints[1]: Duplicate value: "k:NoSchedule": taints must be unique by key and effect pair',
        ),
        (spec_set("taints", [{"effect": "NoSchedule"}]), "spec.taints[0].key: Required value"),
        (spec_set("taints", [{"key": "k"}]), "spec.taints[0].effect: Required value"),
    ],
)
def test_invalid_reservations(edit: Callable[[dict[str, Any]], Any], message: str) -> None:
    obj = copy.deepcopy(BASE)
    edit(obj)
    with pytest.raises(InvalidObjectError) as info:
        validate_object(obj)
    assert str(info.value) == f'Reservation "r1": {message}'


@pytest.mark.parametrize(
    "edit",
    [
        lambda o: None,
        spec_set("ttl", "0"),
        spec_set("ttl", "1h30m"),
        spec_set("expires", "2024-01-02T00:00:00Z"),
        spec_set("allocatePolicy", ""),
        spec_set("allocatePolicy", "Restricted"),
        spec_set("allocateOnce", False),
        spec_set("preAllocation", True),
        spec_set("preAllocationPolicy", {"mode": "Cluster", "enableMultiple": True}),
        spec_set("unschedulable", True),
        spec_set("taints", [{"key": "k", "value": "v", "effect": "NoExecute"}]),
        spec_set(
            "owners",
            [
                {"object": {"name": "p", "namespace": "default", "uid": "u"}},
                {"controller": {**RS, "controller": True, "namespace": "default"}},
                {"labelSelector": {"matchLabels": {"app": "web"}}},
            ],
        ),
    ],
)
def test_valid_reservations(edit: Callable[[dict[str, Any]], Any]) -> None:
    obj, expected = copy.deepcopy(BASE), copy.deepcopy(BASE)
    edit(obj)
    edit(expected)
    validate_object(obj)
    assert obj == expected  # accepted as written
