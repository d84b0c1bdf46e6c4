"""Pod-side keys: reservation affinity, ignored label, exact match, the allocated annotation."""

import json
from typing import Any

import pytest

from berth.api.errors import InvalidObjectError
from berth.api.reservation import (
    ANNOTATION_EXACT_MATCH_RESERVATION,
    ANNOTATION_RESERVATION_AFFINITY,
    ANNOTATION_RESERVATION_ALLOCATED,
    LABEL_RESERVATION_IGNORED,
    allocated_annotation_value,
    exact_match,
    is_reservation_ignored,
    parse_allocated,
    parse_exact_match,
    parse_reservation_affinity,
)
from berth.api.taints import Taint
from builders import make_pod


def affinity_pod(value: Any) -> dict[str, Any]:
    text = value if isinstance(value, str) else json.dumps(value)
    return make_pod("p1").annotate({ANNOTATION_RESERVATION_AFFINITY: text}).obj()


def term(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]}


def test_no_annotation_means_no_affinity() -> None:
    assert parse_reservation_affinity(make_pod("p1").obj()) is None
    assert parse_reservation_affinity(make_pod("p1").annotate({"other": "x"}).obj()) is None


@pytest.mark.parametrize("text", ["", "{}", "null"])
def test_empty_annotation_is_an_empty_affinity(text: str) -> None:
    aff = parse_reservation_affinity(affinity_pod(text))
    assert aff is not None
    assert (aff.name, aff.selector, aff.required_terms, aff.tolerations) == (None, None, (), ())
    assert aff.matches("anything", {}) is True


@pytest.mark.parametrize(
    ("value", "name", "labels", "node_labels", "expected"),
    [
        ({"name": "r1"}, "r1", {}, None, True),
        ({"name": "r1"}, "r2", {}, None, False),
        # with a name, the other fields are not checked
        ({"name": "r1", "reservationSelector": {"a": "b"}}, "r1", {}, None, True),
        ({"reservationSelector": {"pool": "gpu"}}, "r1", {"pool": "gpu"}, None, True),
        ({"reservationSelector": {"pool": "gpu"}}, "r1", {"pool": "cpu"}, None, False),
        ({"reservationSelector": {"pool": "gpu"}}, "r1", {}, None, False),
        # node labels sit under the reservation's labels
        ({"reservationSelector": {"zone": "z1"}}, "r1", {}, {"zone": "z1"}, True),
        ({"reservationSelector": {"zone": "z1"}}, "r1", {"zone": "z2"}, {"zone": "z1"}, False),
        (
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "reservationSelectorTerms": [term("k", "In", "v")]
                }
            },
            "r1",
            {"k": "v"},
            None,
            True,
        ),
        (
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "reservationSelectorTerms": [term("k", "In", "x"), term("k", "Exists")]
                }
            },
            "r1",
            {"k": "v"},
            None,
            True,
        ),
        (
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "reservationSelectorTerms": [term("k", "NotIn", "v")]
                }
            },
            "r1",
            {"k": "v"},
            None,
            False,
        ),
        # matchFields metadata.name is the reservation's name
        (
            {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "reservationSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["r1"]}]}
                    ]
                }
            },
            "r1",
            {},
            None,
            True,
        ),
        # a required selector without terms matches nothing
        ({"requiredDuringSchedulingIgnoredDuringExecution": {}}, "r1", {}, None, False),
        # selector and terms are ANDed
        (
            {
                "reservationSelector": {"a": "1"},
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "reservationSelectorTerms": [term("b", "Exists")]
                },
            },
            "r1",
            {"a": "1"},
            None,
            False,
        ),
    ],
)
def test_affinity_matching(
    value: dict[str, Any],
    name: str,
    labels: dict[str, str],
    node_labels: dict[str, str] | None,
    expected: bool,
) -> None:
    aff = parse_reservation_affinity(affinity_pod(value))
    assert aff is not None
    assert aff.matches(name, labels, node_labels=node_labels) is expected


def test_affinity_tolerations() -> None:
    aff = parse_reservation_affinity(
        affinity_pod(
            {
                "tolerations": [
                    {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}
                ]
            }
        )
    )
    assert aff is not None
    ok = Taint("dedicated", "ml", "NoSchedule")
    other = Taint("dedicated", "web", "NoSchedule")
    soft = Taint("x", "", "PreferNoSchedule")
    assert aff.untolerated_taint([ok]) is None
    assert aff.untolerated_taint([ok, other]) == other
    assert aff.untolerated_taint([soft]) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{bad",
            'Pod "default/p1": metadata.annotations[scheduling.koordinator.sh/reservation-affinity]: '
            'Invalid value: "{bad": invalid JSON: Expecting property name enclosed in double quotes: '
            "line 1 column 2 (char 1)",
        ),
        (
            "[1]",
            'Pod "default/p1": metadata.annotations[scheduling.koordinator.sh/reservation-affinity]: '
            'Invalid value: "[1]": must be a JSON object',
        ),
        (
            '{"name": 3}',
            'Pod "default/p1": metadata.annotations[scheduling.koordinator.sh/reservation-affinity]: '
            'Invalid value: "{\\"name\\": 3}": name: must be a string',
        ),
        (
            '{"reservationSelector": {"a": 1}}',
            'Pod "default/p1": metadata.annotations[scheduling.koordinator.sh/reservation-affinity]: '
            'Invalid value: "{\\"reservationSelector\\": {\\"a\\": 1}}": reservationSelector: must be a map of strings',
        ),
    ],
)
def test_bad_affinity_annotation(text: str, message: str) -> None:
    with pytest.raises(InvalidObjectError) as info:
        parse_reservation_affinity(affinity_pod(text))
    assert str(info.value) == message
    assert info.value.path == "metadata.annotations[scheduling.koordinator.sh/reservation-affinity]"


def test_unparseable_term_is_refused() -> None:
    value = {
        "requiredDuringSchedulingIgnoredDuringExecution": {"reservationSelectorTerms": [term("k", "In")]}
    }
    with pytest.raises(InvalidObjectError) as info:
        parse_reservation_affinity(affinity_pod(value))
    assert info.value.message.endswith(
        'reservationSelectorTerms[0].matchExpressions: invalid requirement "k In []"'
    )


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (None, False),
        ({}, False),
        ({LABEL_RESERVATION_IGNORED: "true"}, True),
        ({LABEL_RESERVATION_IGNORED: "True"}, False),
        ({LABEL_RESERVATION_IGNORED: "false"}, False),
    ],
)
def test_reservation_ignored(labels: dict[str, str] | None, expected: bool) -> None:
    assert is_reservation_ignored(make_pod("p1").label(labels).obj()) is expected


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (None, None),
        ({ANNOTATION_EXACT_MATCH_RESERVATION: ""}, None),
        ({ANNOTATION_EXACT_MATCH_RESERVATION: "{}"}, ()),
        ({ANNOTATION_EXACT_MATCH_RESERVATION: '{"resourceNames":["cpu","memory"]}'}, ("cpu", "memory")),
    ],
)
def test_parse_exact_match(annotations: dict[str, str] | None, expected: tuple[str, ...] | None) -> None:
    assert parse_exact_match(make_pod("p1").annotate(annotations).obj()) == expected


def test_bad_exact_match_annotation() -> None:
    with pytest.raises(InvalidObjectError) as info:
        parse_exact_match(
            make_pod("p1").annotate({ANNOTATION_EXACT_MATCH_RESERVATION: '{"resourceNames":"cpu"}'}).obj()
        )
    assert (
        info.value.message
        == 'Invalid value: "{\\"resourceNames\\":\\"cpu\\"}": resourceNames: must be a list of strings'
    )


@pytest.mark.parametrize(
    ("requests", "allocatable", "names", "expected"),
    [
        ({"cpu": 1000}, {"cpu": 2000}, None, True),
        ({"cpu": 1000}, {"cpu": 2000}, (), True),
        ({"cpu": 2000}, {"cpu": 2000}, ("cpu",), True),
        ({"cpu": 1000}, {"cpu": 2000}, ("cpu",), False),
        ({"cpu": 1000}, {}, ("cpu",), False),
        ({}, {"cpu": 1000}, ("cpu",), False),
        # absent from both ends the check with a match, as upstream
        ({"cpu": 1}, {"cpu": 2}, ("nvidia.com/gpu", "cpu"), True),
        ({"cpu": 1, "memory": 5}, {"cpu": 1, "memory": 6}, ("cpu", "memory"), False),
    ],
)
def test_exact_match(
    requests: dict[str, int], allocatable: dict[str, int], names: tuple[str, ...] | None, expected: bool
) -> None:
    assert exact_match(requests, allocatable, names) is expected


@pytest.mark.parametrize(
    ("name", "uid", "text"),
    [
        ("r1", "0b4c-11", '{"name":"r1","uid":"0b4c-11"}'),
        ("r1", "", '{"name":"r1"}'),
        ("", "u", '{"uid":"u"}'),
        ("a<b", "u", '{"name":"a\\u003cb","uid":"u"}'),
    ],
)
def test_allocated_annotation_round_trip(name: str, uid: str, text: str) -> None:
    assert allocated_annotation_value(name, uid) == text
    assert parse_allocated(make_pod("p1").annotate({ANNOTATION_RESERVATION_ALLOCATED: text}).obj()) == (
        name,
        uid,
    )


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (None, None),
        ({ANNOTATION_RESERVATION_ALLOCATED: "nope"}, None),
        ({ANNOTATION_RESERVATION_ALLOCATED: "[]"}, None),
        ({ANNOTATION_RESERVATION_ALLOCATED: "null"}, ("", "")),
        ({ANNOTATION_RESERVATION_ALLOCATED: '{"name": "r", "uid": "u", "x": 1}'}, ("r", "u")),
    ],
)
def test_parse_allocated(annotations: dict[str, str] | None, expected: tuple[str, str] | None) -> None:
    assert parse_allocated(make_pod("p1").annotate(annotations).obj()) == expected
