"""Tests for berth.api.taints (cases follow kube's toleration_test.go)."""

import pytest

from berth.api.taints import (
    Taint,
    Toleration,
    find_untolerated,
    parse_taints,
    parse_tolerations,
    tolerates_all,
)


def tol(key: str = "", op: str = "", value: str = "", effect: str = "") -> Toleration:
    return Toleration(key, op, value, effect, None)


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        # same key and effect, Exists, taint without value
        (tol("foo", "Exists", "", "NoSchedule"), Taint("foo", "", "NoSchedule"), True),
        # same key, value and effect, Equal
        (tol("foo", "Equal", "bar", "NoSchedule"), Taint("foo", "bar", "NoSchedule"), True),
        # empty operator means Equal
        (tol("foo", "", "bar", "NoSchedule"), Taint("foo", "bar", "NoSchedule"), True),
        # same key and effect, Equal, different values
        (tol("foo", "Equal", "value1", "NoSchedule"), Taint("foo", "value2", "NoSchedule"), False),
        # same key, different effects
        (tol("foo", "Equal", "bar", "NoExecute"), Taint("foo", "bar", "NoSchedule"), False),
        (tol("foo", "Exists", "", "NoSchedule"), Taint("foo", "bar", "PreferNoSchedule"), False),
        # empty effect matches all effects
        (tol("foo", "Exists", "", ""), Taint("foo", "bar", "NoExecute"), True),
        (tol("foo", "Equal", "bar", ""), Taint("foo", "bar", "PreferNoSchedule"), True),
        # empty key with Exists matches all keys and values
        (tol("", "Exists", "", ""), Taint("anything", "any", "NoSchedule"), True),
        (tol("", "Exists", "", "NoExecute"), Taint("anything", "any", "NoSchedule"), False),
        # Exists ignores the value
        (tol("foo", "Exists", "ignored", "NoSchedule"), Taint("foo", "bar", "NoSchedule"), True),
        # different keys
        (tol("foo", "Equal", "bar", "NoSchedule"), Taint("baz", "bar", "NoSchedule"), False),
        # unknown operator tolerates nothing
        (tol("foo", "Lt", "bar", "NoSchedule"), Taint("foo", "bar", "NoSchedule"), False),
        # empty key with Equal compares values only (validation rejects it, matching mirrors kube)
        (tol("", "Equal", "bar", ""), Taint("foo", "bar", "NoSchedule"), True),
    ],
)
def test_tolerates(toleration: Toleration, taint: Taint, expected: bool) -> None:
    assert toleration.tolerates(taint) is expected


def test_parse() -> None:
    taints = parse_taints(
        [{"key": "a", "value": "1", "effect": "NoSchedule"}, {"key": "b", "effect": "NoExecute"}]
    )
    assert taints == (Taint("a", "1", "NoSchedule"), Taint("b", "", "NoExecute"))
    assert str(taints[0]) == "a=1:NoSchedule" and str(taints[1]) == "b:NoExecute"
    tols = parse_tolerations(
        [{"key": "b", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]
    )
    assert tols == (Toleration("b", "Exists", "", "NoExecute", 30),)
    assert parse_taints(None) == () and parse_tolerations([]) == ()


def test_parse_tolerations_reuses_equal_lists_only() -> None:
    first = [{"key": "b", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]
    again = [{"key": "b", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]
    assert parse_tolerations(again) is parse_tolerations(first)
    # equal in Python (True == 1, 30.0 == 30) but not the same field values: each read as it is
    assert parse_tolerations([{"key": "a", "value": 1}]) == (Toleration("a", "", "1", "", None),)
    assert parse_tolerations([{"key": "a", "value": True}]) == (Toleration("a", "", "True", "", None),)
    assert parse_tolerations([{"key": "a", "value": "x", "tolerationSeconds": 30.0}]) == (
        Toleration("a", "", "x", "", 30),
    )
    assert parse_tolerations([{"key": "a", "value": "y", "effect": "NoSchedule"}]) == (
        Toleration("a", "", "y", "NoSchedule", None),
    )


def test_find_untolerated() -> None:
    taints = (Taint("a", "", "PreferNoSchedule"), Taint("b", "", "NoSchedule"), Taint("c", "", "NoExecute"))
    hard = frozenset({"NoSchedule", "NoExecute"})
    assert find_untolerated(taints, (), hard) == Taint("b", "", "NoSchedule")
    assert find_untolerated(taints, (tol("b", "Exists"),), hard) == Taint("c", "", "NoExecute")
    assert find_untolerated(taints, (tol("", "Exists"),), hard) is None
    assert find_untolerated(taints, (), frozenset({"PreferNoSchedule"})) == Taint("a", "", "PreferNoSchedule")
    assert tolerates_all((tol("x", "Exists"), tol("c", "Exists")), taints[2])
    assert not tolerates_all((), taints[2])
