"""Store building blocks: field selectors, merge patch, errors, copying, kind keys."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.api.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    InternalError,
    Invalid,
    NotFound,
    ResourceExpired,
    StatusError,
    TooManyRequests,
)
from berth.store import compile_field_selector, copy_object, key_of, merge_patch


@pytest.mark.parametrize(
    ("text", "canonical", "obj", "expected"),
    [
        ("", "", {}, True),
        ("spec.nodeName=n1", "spec.nodeName=n1", {"spec": {"nodeName": "n1"}}, True),
        ("spec.nodeName==n1", "spec.nodeName=n1", {"spec": {"nodeName": "n2"}}, False),
        ("spec.nodeName=", "spec.nodeName=", {"spec": {}}, True),
        ("spec.nodeName=", "spec.nodeName=", {}, True),
        ("spec.nodeName!=", "spec.nodeName!=", {"spec": {"nodeName": "x"}}, True),
        (
            "status.phase!=Running,metadata.name=a",
            "metadata.name=a,status.phase!=Running",
            {"metadata": {"name": "a"}},
            True,
        ),
        ("metadata.name=a\\,b", "metadata.name=a\\,b", {"metadata": {"name": "a,b"}}, True),
        ("metadata.namespace=ns", "metadata.namespace=ns", {"metadata": {"namespace": "ns"}}, True),
        ("spec.schedulerName=s", "spec.schedulerName=s", {"spec": {"schedulerName": "t"}}, False),
    ],
)
def test_field_selector(text: str, canonical: str, obj: dict[str, Any], expected: bool) -> None:
    sel = compile_field_selector(text)
    assert str(sel) == canonical
    assert sel.matches(obj) is expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("spec.hostname=x", "field label not supported: spec.hostname"),
        ("spec.nodeName", "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'"),
        ("metadata.name=a\\x", "invalid field selector: invalid escape sequence: \\x"),
        ("metadata.name=a=b", "invalid field selector: unescaped character in value: ="),
    ],
)
def test_field_selector_errors(text: str, message: str) -> None:
    with pytest.raises(BadRequest) as info:
        compile_field_selector(text)
    assert str(info.value) == message


def test_field_selector_exact() -> None:
    sel = compile_field_selector("spec.nodeName=n1,status.phase!=Failed")
    assert sel.exact("spec.nodeName") == "n1"
    assert sel.exact("status.phase") is None


@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [
        # RFC 7386 appendix A examples
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ({"a": "foo"}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
        ({}, {}, {}),
    ],
)
def test_merge_patch(target: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy_object(target)
    assert merge_patch(target, patch) == expected
    assert target == before


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=3), _json, max_size=4))
def test_copy_object_is_deep_and_equal(obj: dict[str, Any]) -> None:
    dup = copy_object(obj)
    assert dup == obj
    for k, v in dup.items():
        if isinstance(v, (dict, list)):
            assert v is not obj[k]


@given(st.dictionaries(st.text(max_size=3), _json, max_size=4))
def test_merge_patch_with_itself_without_nulls_is_idempotent(obj: dict[str, Any]) -> None:
    once = merge_patch({}, obj)
    assert merge_patch(once, obj) == once


def test_copy_object_tuples_and_fallback() -> None:
    class Odd:
        pass

    odd = Odd()
    out = copy_object({"a": (1, 2), "b": {"c": odd}})
    assert out == {"a": [1, 2], "b": {"c": odd}}


@pytest.mark.parametrize(
    ("obj", "key"),
    [
        ({"apiVersion": "v1", "kind": "Pod"}, ("", "Pod")),
        (
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass"},
            ("scheduling.k8s.io", "PriorityClass"),
        ),
        ({}, ("", "")),
    ],
)
def test_key_of(obj: dict[str, Any], key: tuple[str, str]) -> None:
    assert key_of(obj) == key


@pytest.mark.parametrize(
    ("err", "cls", "code", "reason", "message"),
    [
        (NotFound.of("pods", "", "x"), NotFound, 404, "NotFound", 'pods "x" not found'),
        (
            AlreadyExists.of("reservations", "scheduling.koordinator.sh", "r"),
            AlreadyExists,
            409,
            "AlreadyExists",
            'reservations.scheduling.koordinator.sh "r" already exists',
        ),
        (
            Conflict.of("pods", "", "x"),
            Conflict,
            409,
            "Conflict",
            'Operation cannot be fulfilled on pods "x": the object has been modified; please apply your changes '
            "to the latest version and try again",
        ),
        (
            Invalid.of("Pod", "", "x", [("spec.a", "Required value"), ("spec.b", "Invalid value: 1: bad")]),
            Invalid,
            422,
            "Invalid",
            'Pod "x" is invalid: [spec.a: Required value, spec.b: Invalid value: 1: bad]',
        ),
        (
            Invalid.of("PriorityClass", "scheduling.k8s.io", "x", [("value", "Required value")]),
            Invalid,
            422,
            "Invalid",
            'PriorityClass.scheduling.k8s.io "x" is invalid: value: Required value',
        ),
        (
            TooManyRequests("Cannot evict pod as it would violate the pod's disruption budget."),
            TooManyRequests,
            429,
            "TooManyRequests",
            "Cannot evict pod as it would violate the pod's disruption budget.",
        ),
        (
            Forbidden.of("pods", "", "", "quota exceeded"),
            Forbidden,
            403,
            "Forbidden",
            "pods is forbidden: quota exceeded",
        ),
        (
            ResourceExpired("too old resource version: 1 (5)"),
            Gone,
            410,
            "Expired",
            "too old resource version: 1 (5)",
        ),
        (Gone("gone"), Gone, 410, "Gone", "gone"),
        (BadRequest("bad"), BadRequest, 400, "BadRequest", "bad"),
        (InternalError.of("boom"), InternalError, 500, "InternalError", "Internal error occurred: boom"),
    ],
)
def test_errors(err: StatusError, cls: type[StatusError], code: int, reason: str, message: str) -> None:
    assert isinstance(err, cls)
    assert isinstance(err, StatusError)
    assert (err.code, err.reason, str(err), err.message) == (code, reason, message, message)
    status = err.to_status()
    assert (status["kind"], status["status"], status["code"], status["reason"]) == (
        "Status",
        "Failure",
        code,
        reason,
    )


def test_status_details() -> None:
    assert NotFound.of("pods", "", "x").to_status()["details"] == {"name": "x", "kind": "pods"}
    inv = Invalid.of("Pod", "", "x", [("spec", "Required value")])
    assert inv.to_status()["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": "Required value", "field": "spec"}
    ]
    assert TooManyRequests("m", retry_after_seconds=10).to_status()["details"] == {"retryAfterSeconds": 10}
