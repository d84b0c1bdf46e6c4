"""Tests for berth.api.nodeselector (node selectors and node affinity)."""

from typing import Any

import pytest

from berth.api.nodeselector import (
    NodeSelectorRequirement,
    compile_node_selector,
    compile_preferred_terms,
    preferred_score,
    required_node_affinity,
)
from builders import make_pod

LABELS = {"zone": "a", "cores": "16", "gpu": "true", "neg": "-5", "big": "9223372036854775808"}


def req(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key, op, values)


@pytest.mark.parametrize(
    ("requirement", "expected"),
    [
        (req("zone", "In", "a", "b"), True),
        (req("zone", "In", "b"), False),
        (req("missing", "In", "a"), False),
        (req("zone", "NotIn", "b"), True),
        (req("zone", "NotIn", "a"), False),
        (req("missing", "NotIn", "a"), True),
        (req("gpu", "Exists"), True),
        (req("missing", "Exists"), False),
        (req("gpu", "DoesNotExist"), False),
        (req("missing", "DoesNotExist"), True),
        (req("cores", "Gt", "8"), True),
        (req("cores", "Gt", "16"), False),
        (req("cores", "Lt", "32"), True),
        (req("cores", "Lt", "16"), False),
        (req("neg", "Lt", "0"), True),
        (req("neg", "Gt", "-6"), True),
        (req("cores", "Gt", "+8"), True),
        (req("zone", "Gt", "1"), False),  # non-integer label value
        (req("big", "Gt", "1"), False),  # label value overflows int64
        (req("missing", "Gt", "1"), False),
        (req("cores", "Gt", "abc"), False),  # invalid requirement value
        (req("cores", "Gt", "1", "2"), False),  # Gt needs exactly one value
        (req("cores", "Gt", " 8"), False),
        (req("zone", "In"), False),  # In needs values
        (req("gpu", "Exists", "true"), False),  # Exists takes no values
        (req("zone", "Bogus", "a"), False),
        (req("bad key!", "Exists"), False),
    ],
)
def test_requirement(requirement: NodeSelectorRequirement, expected: bool) -> None:
    assert requirement.matches_labels(LABELS) is expected


def selector(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeSelectorTerms": list(terms)}


@pytest.mark.parametrize(
    ("sel", "labels", "node", "expected"),
    [
        (
            selector({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}),
            {"zone": "a"},
            "n1",
            True,
        ),
        (
            selector({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}),
            {},
            "n1",
            True,
        ),
        (
            selector({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}),
            {},
            "n2",
            False,
        ),
        (
            selector({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}),
            {},
            "n2",
            True,
        ),
        (
            selector({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}),
            {},
            "n1",
            False,
        ),
        # two values for a field requirement: kube cannot parse it, term matches nothing
        (
            selector({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]}),
            {},
            "n1",
            False,
        ),
        (selector({"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}), {}, "n1", False),
        # other field keys read as ""
        (
            selector({"matchFields": [{"key": "spec.x", "operator": "NotIn", "values": ["v"]}]}),
            {},
            "n1",
            True,
        ),
        # expressions AND fields
        (
            selector(
                {
                    "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
                    "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
                }
            ),
            {"zone": "a"},
            "n2",
            False,
        ),
        # an empty term matches nothing; terms are ORed
        (selector({}), {"zone": "a"}, "n1", False),
        (
            selector({}, {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}),
            {"zone": "a"},
            "n1",
            True,
        ),
        # an invalid term does not poison the others
        (
            selector(
                {"matchExpressions": [{"key": "zone", "operator": "Gt", "values": ["x"]}]},
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
            ),
            {"zone": "a"},
            "n1",
            True,
        ),
        (selector(), {"zone": "a"}, "n1", False),
        ({}, {"zone": "a"}, "n1", False),
    ],
)
def test_node_selector(sel: dict[str, Any], labels: dict[str, str], node: str, expected: bool) -> None:
    compiled = compile_node_selector(sel)
    assert compiled is not None
    assert compiled.matches(labels, node) is expected


def test_compile_none() -> None:
    assert compile_node_selector(None) is None


@pytest.mark.parametrize(
    ("spec", "labels", "expected"),
    [
        ({}, {}, True),
        ({"nodeSelector": {"zone": "a"}}, {"zone": "a", "x": "y"}, True),
        ({"nodeSelector": {"zone": "a"}}, {"zone": "b"}, False),
        ({"nodeSelector": {"zone": "a", "gpu": "true"}}, {"zone": "a"}, False),
        (
            {
                "nodeSelector": {"zone": "a"},
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": selector(
                            {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}
                        )
                    }
                },
            },
            {"zone": "a"},
            False,
        ),
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                    }
                }
            },
            {"zone": "a"},
            False,
        ),
        ({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}}, {}, True),
    ],
)
def test_required_node_affinity(spec: dict[str, Any], labels: dict[str, str], expected: bool) -> None:
    assert required_node_affinity(make_pod().spec(**spec).obj()).matches(labels, "n1") is expected


def test_preferred_terms() -> None:
    terms = compile_preferred_terms(
        [
            {
                "weight": 10,
                "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
            },
            {"weight": 5, "preference": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}},
            {"weight": 0, "preference": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}},
            {"weight": 7, "preference": {}},
        ]
    )
    assert [t.weight for t in terms] == [10, 5]
    assert preferred_score(terms, {"zone": "a", "gpu": "1"}, "n") == 15
    assert preferred_score(terms, {"zone": "b"}, "n") == 0
    assert compile_preferred_terms(None) == ()
