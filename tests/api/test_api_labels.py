"""Tests for berth.api.labels: requirements, metav1 selectors, the string form."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.api.labels import (
    LabelSelectorError,
    Requirement,
    Selector,
    compile_label_selector,
    everything,
    label_value_errors,
    nothing,
    parse_selector,
    qualified_name_errors,
    selector_from_set,
)

LABELS = {"app": "web", "tier": "front", "n": "5", "bad": "x5"}


@pytest.mark.parametrize(
    ("op", "values", "labels", "expected"),
    [
        ("In", ("web", "db"), LABELS, True),
        ("In", ("db",), LABELS, False),
        ("In", ("web",), {}, False),
        ("in", ("web",), LABELS, True),
        ("=", ("web",), LABELS, True),
        ("==", ("web",), LABELS, True),
        ("=", ("db",), LABELS, False),
        ("NotIn", ("db",), LABELS, True),
        ("NotIn", ("web", "db"), LABELS, False),
        ("NotIn", ("web",), {}, True),
        ("notin", ("db", "x"), {}, True),
        ("!=", ("web",), LABELS, False),
        ("!=", ("db",), LABELS, True),
        ("!=", ("db",), {}, True),
        ("Exists", (), LABELS, True),
        ("Exists", (), {}, False),
        ("exists", (), LABELS, True),
        ("DoesNotExist", (), LABELS, False),
        ("DoesNotExist", (), {}, True),
        ("!", (), {}, True),
    ],
)
def test_requirement_operators_on_app(
    op: str, values: tuple[str, ...], labels: dict[str, str], expected: bool
) -> None:
    assert Requirement("app", op, values).matches(labels) is expected


@pytest.mark.parametrize(
    ("key", "op", "value", "expected"),
    [
        ("n", "gt", "4", True),
        ("n", "gt", "5", False),
        ("n", ">", "-1", True),
        ("n", "Gt", "4", True),
        ("n", "lt", "6", True),
        ("n", "lt", "5", False),
        ("n", "<", "10", True),
        ("n", "Lt", "6", True),
        ("bad", "gt", "1", False),  # label value not an integer
        ("missing", "gt", "1", False),  # absent key
        ("missing", "lt", "1", False),
        ("n", "gt", "x", False),  # unvalidated bad bound never matches
    ],
)
def test_requirement_gt_lt(key: str, op: str, value: str, expected: bool) -> None:
    assert Requirement(key, op, (value,)).matches(LABELS) is expected


def test_requirement_int64_overflow_never_matches() -> None:
    assert Requirement("n", "gt", ("1",)).matches({"n": str(2**63)}) is False
    assert Requirement("n", "lt", ("1",)).matches({"n": str(-(2**63))}) is True


def test_requirement_unknown_operator() -> None:
    with pytest.raises(LabelSelectorError, match="operator 'Like' is not recognized"):
        Requirement("a", "Like", ("b",))


@pytest.mark.parametrize(
    ("req", "text"),
    [
        (Requirement("a", "In", ("y", "x")), "a in (x,y)"),
        (Requirement("a", "NotIn", ("x",)), "a notin (x)"),
        (Requirement("a", "Exists", ()), "a"),
        (Requirement("a", "DoesNotExist", ()), "!a"),
        (Requirement("a", "=", ("b",)), "a=b"),
        (Requirement("a", "==", ("b",)), "a==b"),
        (Requirement("a", "!=", ("b",)), "a!=b"),
        (Requirement("a", "gt", ("1",)), "a>1"),
        (Requirement("a", "Lt", ("1",)), "a<1"),
    ],
)
def test_requirement_str(req: Requirement, text: str) -> None:
    assert str(req) == text


# --- metav1.LabelSelector ---------------------------------------------------------------------------------


def test_nil_selector_matches_nothing() -> None:
    sel = compile_label_selector(None)
    assert sel.is_nothing() is True
    assert sel.is_everything() is False
    assert sel.matches({}) is False
    assert sel.matches(LABELS) is False
    assert sel == nothing()
    assert repr(sel) == "Selector(<nothing>)"


@pytest.mark.parametrize("raw", [{}, {"matchLabels": {}}, {"matchExpressions": []}, {"matchLabels": None}])
def test_empty_selector_matches_everything(raw: dict[str, Any]) -> None:
    sel = compile_label_selector(raw)
    assert sel.is_everything() is True
    assert sel.is_nothing() is False
    assert sel.matches({}) is True
    assert sel.matches(LABELS) is True
    assert str(sel) == ""
    assert sel == everything()


@pytest.mark.parametrize(
    ("raw", "text", "labels", "expected"),
    [
        ({"matchLabels": {"app": "web"}}, "app=web", LABELS, True),
        ({"matchLabels": {"app": "web", "tier": "back"}}, "app=web,tier=back", LABELS, False),
        (
            {
                "matchLabels": {"tier": "front"},
                "matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}],
            },
            "app in (api,web),tier=front",
            LABELS,
            True,
        ),
        (
            {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]},
            "app notin (web)",
            LABELS,
            False,
        ),
        (
            {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]},
            "zone notin (a)",
            LABELS,
            True,
        ),
        ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, "app", LABELS, True),
        ({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, "!app", LABELS, False),
        (
            {"matchExpressions": [{"key": "zone", "operator": "DoesNotExist", "values": []}]},
            "!zone",
            LABELS,
            True,
        ),
        ({"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}, "!zone", {}, True),
        ({"matchLabels": {"app": "web"}}, "app=web", {}, False),
    ],
)
def test_compile_label_selector(
    raw: dict[str, Any], text: str, labels: dict[str, str], expected: bool
) -> None:
    sel = compile_label_selector(raw)
    assert str(sel) == text
    assert sel.matches(labels) is expected
    assert all(r.matches(labels) for r in sel.requirements) is expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
            "matchExpressions[0].values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "NotIn"}]},
            "matchExpressions[0].values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            'matchExpressions[0].values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
        ),
        (
            {
                "matchExpressions": [
                    {"key": "a", "operator": "In", "values": ["x"]},
                    {"key": "b", "operator": "DoesNotExist", "values": ["y"]},
                ]
            },
            'matchExpressions[1].values: Invalid value: ["y"]: values set must be empty for exists and does not exist',
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
            'matchExpressions[0].operator: Invalid value: "Gt": "Gt" is not a valid label selector operator',
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "in", "values": ["1"]}]},
            'matchExpressions[0].operator: Invalid value: "in": "in" is not a valid label selector operator',
        ),
        (
            {"matchExpressions": [{"key": "a"}]},
            "matchExpressions[0].operator: Invalid value: null: null is not a valid label selector operator",
        ),
        (
            {"matchExpressions": [{"key": "a b", "operator": "Exists"}]},
            'matchExpressions[0].key: Invalid value: "a b": name part must consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',"
            "  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            {"matchLabels": {"app": "-web"}},
            'matchLabels[app]: Invalid value: "-web": a valid label must be an empty string or consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        ({"matchLabels": {"app": 1}}, "matchLabels[app]: Invalid value: 1: must be a string"),
        ({"matchLabels": {"/app": "x"}}, 'matchLabels: Invalid value: "/app": prefix part must be non-empty'),
    ],
)
def test_compile_label_selector_errors(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(LabelSelectorError) as info:
        compile_label_selector(raw)
    assert str(info.value) == message


def test_compile_error_attributes() -> None:
    with pytest.raises(LabelSelectorError) as info:
        compile_label_selector({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})
    assert (info.value.path, info.value.value) == ("matchExpressions[0].values", [])
    assert isinstance(info.value, ValueError)


# --- string form ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("a=b,c!=d,e in (x,y),!f,g", "a=b,c!=d,e in (x,y),!f,g"),
        ("g,!f,e in (y,x),c!=d,a=b", "a=b,c!=d,e in (x,y),!f,g"),
        (" a = b , c ", "a=b,c"),
        ("a==b", "a==b"),
        ("a=", "a="),
        ("a!=", "a!="),
        ("x in ()", "x in ()"),
        ("x in (,a,)", "x in (,a)"),
        ("x in (a,a,b)", "x in (a,b)"),
        ("x notin (b, a)", "x notin (a,b)"),
        ("in=notin", "in=notin"),
        ("n>3,n<10", "n>3,n<10"),
        ("example.com/app=web", "example.com/app=web"),
        ("!a,!b", "!a,!b"),
    ],
)
def test_parse_selector_canonical(text: str, canonical: str) -> None:
    assert str(parse_selector(text)) == canonical


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("", {}, True),
        ("app=web", LABELS, True),
        ("app=web,tier!=front", LABELS, False),
        ("app in (web,db),!zone", LABELS, True),
        ("app notin (web)", LABELS, False),
        ("zone notin (a)", LABELS, True),
        ("app", LABELS, True),
        ("zone", LABELS, False),
        ("n>4,n<6", LABELS, True),
        ("n>5", LABELS, False),
        ("x in ()", {"x": ""}, True),
        ("a=", {"a": ""}, True),
        ("a=", {}, False),
    ],
)
def test_parse_selector_matches(text: str, labels: dict[str, str], expected: bool) -> None:
    assert parse_selector(text).matches(labels) is expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a=b,", "found '', expected: identifier after ','"),
        (",", "found ',', expected: !, identifier, or 'end of string'"),
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        ("a in x", "unable to parse requirement: found 'x' expected: '('"),
        ("a in (x", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (x y)", "unable to parse requirement: found 'y', expected: ',' or ')'"),
        ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ("a=(", "unable to parse requirement: found '(', expected: identifier"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        (
            "a>x",
            'unable to parse requirement: values[0]: Invalid value: "x": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        ("/a=b", 'unable to parse requirement: key: Invalid value: "/a": prefix part must be non-empty'),
        (
            "a=" + "v" * 64,
            'unable to parse requirement: values[0]: Invalid value: "'
            + "v" * 64
            + '": must be no more than 63 characters',
        ),
    ],
)
def test_parse_selector_errors(text: str, message: str) -> None:
    with pytest.raises(LabelSelectorError) as info:
        parse_selector(text)
    assert str(info.value) == message
    assert info.value.value == text


def test_parse_negative_bound_is_invalid_label_value() -> None:
    # upstream validates every value as a label value, so "-3" is rejected even for Gt/Lt
    with pytest.raises(LabelSelectorError, match='Invalid value: "-3"'):
        parse_selector("a<-3")


# --- misc -------------------------------------------------------------------------------------------------


def test_everything_and_nothing_distinct() -> None:
    assert everything() != nothing()
    assert str(nothing()) == ""
    assert everything().matches({"a": "b"}) is True
    assert nothing().matches({}) is False
    assert everything().requirements == ()


def test_selector_from_set() -> None:
    sel = selector_from_set({"b": "2", "a": "1"})
    assert str(sel) == "a=1,b=2"
    assert sel.matches({"a": "1", "b": "2", "c": "3"}) is True
    assert sel.matches({"a": "1"}) is False
    assert selector_from_set({}).is_everything() is True


def test_selector_equality_and_hash() -> None:
    a = parse_selector("a=b,c in (x,y)")
    b = compile_label_selector(
        {
            "matchLabels": {"a": "b"},
            "matchExpressions": [{"key": "c", "operator": "In", "values": ["x", "y"]}],
        }
    )
    assert str(a) == str(b)
    c = Selector([Requirement("c", "in", ("x", "y")), Requirement("a", "=", ("b",))])
    assert a == c
    assert hash(a) == hash(c)


@pytest.mark.parametrize(
    ("key", "errors"),
    [
        ("app", ()),
        ("example.com/app", ()),
        ("a" * 63, ()),
        ("a" * 64, ("name part must be no more than 63 characters",)),
        ("", ("name part must be non-empty",)),
        (
            "Example.com/app",
            ("prefix part " + qualified_name_errors("Example.com/app")[0][len("prefix part ") :],),
        ),
    ],
)
def test_qualified_name_errors(key: str, errors: tuple[str, ...]) -> None:
    assert qualified_name_errors(key) == errors


@pytest.mark.parametrize(("value", "ok"), [("", True), ("a.b-c_d", True), ("-a", False), ("a" * 64, False)])
def test_label_value_errors(value: str, ok: bool) -> None:
    assert (label_value_errors(value) == ()) is ok


_names = st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True)


@given(st.dictionaries(_names, _names, max_size=4), st.dictionaries(_names, _names, max_size=6))
def test_set_selector_roundtrip_property(want: dict[str, str], labels: dict[str, str]) -> None:
    sel = selector_from_set(want)
    expected = all(labels.get(k) == v for k, v in want.items())
    assert sel.matches(labels) is expected
    assert parse_selector(str(sel)).matches(labels) is expected
    assert compile_label_selector({"matchLabels": want}).matches(labels) is expected
