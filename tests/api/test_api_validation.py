"""Tests for berth.api.validation: exact error strings."""

import copy
from typing import Any

import pytest

from berth.api.checks import Context
from berth.api.errors import InvalidObjectError
from berth.api.validation import KIND_VALIDATORS, register_validator, validate_object

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p1", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "containers": [{"name": "main", "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}}],
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
    },
}
NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
    "status": {"capacity": {"cpu": "4", "memory": "8Gi"}, "allocatable": {"cpu": "3", "pods": 110}},
}
PC: dict[str, Any] = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "high"},
    "value": 1000,
}


def edit(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """Deep-copy *base* and set the dotted *path* (list indices as numbers); value ... deletes."""
    obj = copy.deepcopy(base)
    parts = path.split(".")
    cur: Any = obj
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur.setdefault(p, {})
    last = parts[-1]
    if value is ...:
        del cur[last]
    elif isinstance(cur, list):
        cur[int(last)] = value
    else:
        cur[last] = value
    return obj


def test_valid_objects() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c"}]}},
        },
    }
    for obj in (POD, NODE, PC, deployment):
        before = copy.deepcopy(obj)
        validate_object(obj)
        assert obj == before  # accepted as written: validation neither rejects nor rewrites it


SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
TERM = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
AFF = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"


def aff(*exprs: dict[str, Any], fields: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    term: dict[str, Any] = {"matchExpressions": list(exprs)}
    if fields is not None:
        term = {"matchFields": fields}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            {"apiVersion": "v1", "kind": "Widget", "metadata": {"name": "w"}},
            'Widget "w": apiVersion/kind: Unsupported value: "v1, Kind=Widget"',
        ),
        ({"kind": "Pod", "metadata": {"name": "w"}}, 'Pod "w": apiVersion: Required value'),
        ({"apiVersion": "v1", "metadata": {"name": "w"}}, 'Object "w": kind: Required value'),
        (edit(POD, "metadata.name", ...), 'Pod "default/": metadata.name: Required value'),
        (
            edit(POD, "metadata.name", "Bad_Name"),
            f'Pod "default/Bad_Name": metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN}',
        ),
        (
            edit(POD, "metadata.name", "a" * 254),
            f'Pod "default/{"a" * 254}": metadata.name: Invalid value: "{"a" * 254}": must be no more than 253 characters',
        ),
        (edit(POD, "metadata.namespace", ...), None),
        (
            edit(POD, "metadata.labels", {"app": "x" * 64}),
            f'Pod "default/p1": metadata.labels: Invalid value: "{"x" * 64}": must be no more than 63 characters',
        ),
        (
            edit(POD, "metadata.labels", {"-bad": "v"}),
            'Pod "default/p1": metadata.labels: Invalid value: "-bad": name part must consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
            "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            edit(POD, "metadata.labels", {"a": 1}),
            'Pod "default/p1": metadata.labels[a]: Invalid value: 1: must be a string',
        ),
        (edit(POD, "spec.containers", []), 'Pod "default/p1": spec.containers: Required value'),
        (edit(POD, "spec", ...), 'Pod "default/p1": spec.containers: Required value'),
        (
            edit(POD, "spec.containers.0.name", ...),
            'Pod "default/p1": spec.containers[0].name: Required value',
        ),
        (
            edit(POD, "spec.containers.0.resources.requests.cpu", "500x"),
            'Pod "default/p1": spec.containers[0].resources.requests.cpu: invalid quantity "500x"',
        ),
        (
            edit(POD, "spec.containers.0.resources.limits.memory", "1KB"),
            'Pod "default/p1": spec.containers[0].resources.limits.memory: invalid quantity "1KB"',
        ),
        (  # not hashable: the quantity cache cannot even be asked
            edit(POD, "spec.containers.0.resources.requests.cpu", ["1"]),
            'Pod "default/p1": spec.containers[0].resources.requests.cpu: invalid quantity "[\'1\']"',
        ),
        (
            edit(POD, "spec.containers.0.name", 5),
            'Pod "default/p1": spec.containers[0].name: Invalid value: 5: must be a string',
        ),
        (
            edit(POD, "spec.schedulingGates", {}),
            'Pod "default/p1": spec.schedulingGates: Invalid value: {}: must be a list',
        ),
        (
            edit(POD, "spec.containers.0.resources.requests.cpu", "-1"),
            'Pod "default/p1": spec.containers[0].resources.requests.cpu: Invalid value: "-1": must be greater than or equal to 0',
        ),
        (
            edit(POD, "spec.containers.0.resources.requests.cpu", "2"),
            'Pod "default/p1": spec.containers[0].resources.requests.cpu: Invalid value: "2": must be less than or equal to cpu limit of 1',
        ),
        (
            edit(POD, "spec.initContainers", [{"name": "i", "resources": {"requests": {"memory": "1K"}}}]),
            'Pod "default/p1": spec.initContainers[0].resources.requests.memory: invalid quantity "1K"',
        ),
        (
            edit(POD, "spec.initContainers", [{"name": "main"}]),
            'Pod "default/p1": spec.initContainers[0].name: Duplicate value: "main"',
        ),
        (
            edit(POD, "spec.initContainers", [{"name": "s", "restartPolicy": "Never"}]),
            'Pod "default/p1": spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"',
        ),
        (
            edit(POD, "spec.overhead", {"cpu": "abc"}),
            'Pod "default/p1": spec.overhead.cpu: invalid quantity "abc"',
        ),
        (
            edit(POD, "spec.tolerations.0.operator", "Foo"),
            'Pod "default/p1": spec.tolerations[0].operator: Unsupported value: "Foo": supported values: "Equal", "Exists"',
        ),
        (
            edit(POD, "spec.tolerations.0.value", "v"),
            'Pod "default/p1": spec.tolerations[0].operator: Invalid value: "v": value must be empty when `operator` is \'Exists\'',
        ),
        (
            edit(POD, "spec.tolerations.0.effect", "NoWay"),
            'Pod "default/p1": spec.tolerations[0].effect: Unsupported value: "NoWay": supported values: '
            '"NoSchedule", "PreferNoSchedule", "NoExecute"',
        ),
        (
            edit(POD, "spec.tolerations", [{"operator": "Equal", "value": "x"}]),
            'Pod "default/p1": spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when '
            '`key` is empty, which means "match all values and all keys"',
        ),
        (
            edit(
                POD,
                "spec.tolerations",
                [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}],
            ),
            'Pod "default/p1": spec.tolerations[0].effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' when `tolerationSeconds` is set',
        ),
        (
            edit(POD, "spec.affinity", aff({"key": "a", "operator": "Gt", "values": ["x"]})),
            f'Pod "default/p1": {TERM}.matchExpressions[0].values[0]: Invalid value: "x": must be an integer',
        ),
        (
            edit(POD, "spec.affinity", aff({"key": "a", "operator": "Lt", "values": ["1", "2"]})),
            f"Pod \"default/p1\": {TERM}.matchExpressions[0].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
        ),
        (
            edit(POD, "spec.affinity", aff({"key": "a", "operator": "Near", "values": ["1"]})),
            f'Pod "default/p1": {TERM}.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator',
        ),
        (
            edit(POD, "spec.affinity", aff({"key": "a", "operator": "In"})),
            f"Pod \"default/p1\": {TERM}.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            edit(POD, "spec.affinity", aff({"key": "a", "operator": "Exists", "values": ["x"]})),
            f"Pod \"default/p1\": {TERM}.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        (
            edit(
                POD,
                "spec.affinity",
                aff(fields=[{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]),
            ),
            f"Pod \"default/p1\": {TERM}.matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        ),
        (
            edit(
                POD, "spec.affinity", aff(fields=[{"key": "metadata.uid", "operator": "In", "values": ["a"]}])
            ),
            f'Pod "default/p1": {TERM}.matchFields[0].key: Invalid value: "metadata.uid": not a valid field selector key',
        ),
        (
            edit(
                POD,
                "spec.affinity",
                {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                    }
                },
            ),
            f'Pod "default/p1": {AFF}.nodeSelectorTerms: Required value: must have at least one node selector term',
        ),
        (
            edit(
                POD,
                "spec.affinity",
                {
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]
                    }
                },
            ),
            'Pod "default/p1": spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: '
            "Invalid value: 0: must be in the range 1-100",
        ),
        (
            edit(POD, "spec.priorityClassName", 5),
            'Pod "default/p1": spec.priorityClassName: Invalid value: 5: must be a string',
        ),
        (
            edit(POD, "spec.priorityClassName", "High"),
            f'Pod "default/p1": spec.priorityClassName: Invalid value: "High": {SUBDOMAIN}',
        ),
        (
            edit(POD, "spec.nodeSelector", {"zone": ["a"]}),
            'Pod "default/p1": spec.nodeSelector[zone]: Invalid value: ["a"]: must be a string',
        ),
        (
            edit(NODE, "spec.taints.0.effect", ...),
            'Node "n1": spec.taints[0].effect: Required value',
        ),
        (
            edit(NODE, "spec.taints.0.effect", "Sometimes"),
            'Node "n1": spec.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        ),
        (edit(NODE, "spec.taints.0.key", ...), 'Node "n1": spec.taints[0].key: Required value'),
        (
            edit(
                NODE,
                "spec.taints",
                [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "value": "x", "effect": "NoSchedule"}],
            ),
            'Node "n1": spec.taints[1]: Duplicate value: "k:NoSchedule": taints must be unique by key and effect pair',
        ),
        (edit(NODE, "status.capacity.cpu", "1K"), 'Node "n1": status.capacity.cpu: invalid quantity "1K"'),
        (
            edit(NODE, "status.allocatable.memory", True),
            'Node "n1": status.allocatable.memory: invalid quantity "True"',
        ),
        (edit(PC, "value", ...), 'PriorityClass "high": value: Required value'),
        (edit(PC, "value", "10"), 'PriorityClass "high": value: Invalid value: "10": must be an integer'),
        (
            edit(PC, "value", 1_000_000_001),
            'PriorityClass "high": value: Forbidden: maximum allowed value of a user defined priority is 1000000000',
        ),
        (
            edit(PC, "preemptionPolicy", "Always"),
            'PriorityClass "high": preemptionPolicy: Unsupported value: "Always": supported values: "Never", "PreemptLowerPriority"',
        ),
        (
            edit(edit(PC, "metadata.name", "system-mine"), "value", 2_000_000_000),
            "PriorityClass \"system-mine\": metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only",
        ),
        (edit(edit(PC, "metadata.name", "system-node-critical"), "value", 2_000_001_000), None),
        (edit(PC, "value", -5), None),
        (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}},
            'Namespace "a.b": metadata.name: Invalid value: "a.b": a lowercase RFC 1123 label must consist of lower '
            "case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
            "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ),
        (
            {
                "apiVersion": "scheduling.koordinator.sh/v1alpha1",
                "kind": "Reservation",
                "metadata": {"name": "R1"},
            },
            f'Reservation "R1": metadata.name: Invalid value: "R1": {SUBDOMAIN}',
        ),
        (
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": "g", "namespace": "team-a"},
            },
            None,
        ),
    ],
)
def test_validation_messages(obj: dict[str, Any], message: str | None) -> None:
    if message is None:
        before = copy.deepcopy(obj)
        validate_object(obj)
        assert obj == before  # accepted as written
        return
    with pytest.raises(InvalidObjectError) as info:
        validate_object(obj)
    assert str(info.value) == message


def test_source_and_attributes() -> None:
    bad = edit(POD, "spec.containers.0.resources.requests.cpu", "500x")
    with pytest.raises(InvalidObjectError) as info:
        validate_object(bad, source="examples/x.yaml")
    err = info.value
    assert (
        str(err)
        == 'examples/x.yaml: Pod "default/p1": spec.containers[0].resources.requests.cpu: invalid quantity "500x"'
    )
    assert (err.kind, err.name, err.path, err.value, err.source) == (
        "Pod",
        "default/p1",
        "spec.containers[0].resources.requests.cpu",
        "500x",
        "examples/x.yaml",
    )
    assert isinstance(err, ValueError)


def test_register_validator() -> None:
    def no_foo(obj: Any, ctx: Context) -> None:
        if "foo" in obj:
            ctx.invalid("foo", obj["foo"], "must not be set")

    saved = KIND_VALIDATORS.get(("coordination.k8s.io", "Lease"))
    register_validator("coordination.k8s.io", "Lease", no_foo)
    try:
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "l", "namespace": "x"},
        }
        validate_object(lease)
        with pytest.raises(InvalidObjectError) as info:
            validate_object({**lease, "foo": 1})
        assert str(info.value) == 'Lease "x/l": foo: Invalid value: 1: must not be set'
    finally:
        if saved is None:
            del KIND_VALIDATORS[("coordination.k8s.io", "Lease")]
        else:
            KIND_VALIDATORS[("coordination.k8s.io", "Lease")] = saved
