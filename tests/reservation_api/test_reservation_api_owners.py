"""Owner matching of spec.owners: object wildcards, controller references, label selectors, ORed owners."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.api.labels import LabelSelectorError
from berth.api.reservation import compile_owners
from builders import make_pod

RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs1", "uid": "rs-uid", "controller": True}


@pytest.mark.parametrize(
    ("owners", "target", "expected"),
    [
        # object: empty parts are wildcards
        ([{"object": {"name": "p1"}}], make_pod("p1").uid("u1").obj(), True),
        ([{"object": {"name": "p1"}}], make_pod("p2").uid("u1").obj(), False),
        ([{"object": {"name": "p1", "namespace": "default"}}], make_pod("p1").uid("u1").obj(), True),
        ([{"object": {"name": "p1", "namespace": "other"}}], make_pod("p1").uid("u1").obj(), False),
        ([{"object": {"namespace": "default"}}], make_pod("anything").uid("u1").obj(), True),
        ([{"object": {"uid": "u1"}}], make_pod("x").uid("u1").obj(), True),
        ([{"object": {"uid": "u2"}}], make_pod("p1").uid("u1").obj(), False),
        ([{"object": {"name": "p1", "namespace": "default"}}], make_pod("p1").ns(None).uid("u1").obj(), True),
        ([{"object": {"apiVersion": "v1", "name": "p1"}}], make_pod("p1").uid("u1").obj(), True),
        ([{"object": {"apiVersion": "v2", "name": "p1"}}], make_pod("p1").uid("u1").obj(), False),
        (
            [{"object": {"kind": "Deployment", "name": "p1"}}],
            make_pod("p1").uid("u1").obj(),
            True,
        ),  # kind is ignored
        ([{"object": {}}], make_pod("zzz").uid("u1").obj(), True),
        # controller: any ownerReference matching every non-empty part
        (
            [{"controller": dict(RS)}],
            make_pod("p1").uid("u1").owner("ReplicaSet", "rs1", "rs-uid").obj(),
            True,
        ),
        (
            [{"controller": {**RS, "name": "rs2"}}],
            make_pod("p1").uid("u1").owner("ReplicaSet", "rs1", "rs-uid").obj(),
            False,
        ),
        (
            [{"controller": {**RS, "uid": ""}}],
            make_pod("p1").uid("u1").owner("ReplicaSet", "rs1", "rs-uid").obj(),
            True,
        ),
        (
            [{"controller": {**RS, "kind": "StatefulSet"}}],
            make_pod("p1").uid("u1").owner("ReplicaSet", "rs1", "rs-uid").obj(),
            False,
        ),
        (
            [{"controller": {**RS, "apiVersion": "apps/v2"}}],
            make_pod("p1").uid("u1").owner("ReplicaSet", "rs1", "rs-uid").obj(),
            False,
        ),
        ([{"controller": dict(RS)}], make_pod("p1").uid("u1").obj(), False),  # no ownerReferences
        (
            [{"controller": dict(RS)}],
            make_pod("p1")
            .uid("u1")
            .owner("ReplicaSet", "x", "rs-uid")
            .owner("ReplicaSet", "rs1", "rs-uid")
            .obj(),
            True,
        ),
        (
            [{"controller": {**RS, "controller": False}}],
            make_pod("p1").uid("u1").owner("ReplicaSet", "rs1", "rs-uid").obj(),
            False,
        ),
        (
            [{"controller": {k: v for k, v in RS.items() if k != "controller"}}],
            make_pod("p1").uid("u1").owner("ReplicaSet", "rs1", "rs-uid").obj(),
            True,
        ),
        (
            [{"controller": {**RS, "controller": True}}],
            make_pod("p1").uid("u1").owner("ReplicaSet", "rs1", "rs-uid", controller=None).obj(),
            False,
        ),
        (
            [{"controller": {**RS, "namespace": "default"}}],
            make_pod("p1").uid("u1").owner("ReplicaSet", "rs1", "rs-uid").obj(),
            True,
        ),
        (
            [{"controller": {**RS, "namespace": "prod"}}],
            make_pod("p1").uid("u1").owner("ReplicaSet", "rs1", "rs-uid").obj(),
            False,
        ),
        # labelSelector
        (
            [{"labelSelector": {"matchLabels": {"app": "web"}}}],
            make_pod("p1").uid("u1").label(app="web").obj(),
            True,
        ),
        (
            [{"labelSelector": {"matchLabels": {"app": "web"}}}],
            make_pod("p1").uid("u1").label(app="db").obj(),
            False,
        ),
        ([{"labelSelector": {"matchLabels": {"app": "web"}}}], make_pod("p1").uid("u1").obj(), False),
        (
            [
                {
                    "labelSelector": {
                        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]
                    }
                }
            ],
            make_pod("p1").uid("u1").label(tier="b").obj(),
            True,
        ),
        ([{"labelSelector": {}}], make_pod("p1").uid("u1").obj(), True),
        # fields of one owner are ANDed
        (
            [{"object": {"namespace": "default"}, "labelSelector": {"matchLabels": {"app": "web"}}}],
            make_pod("p1").uid("u1").label(app="web").obj(),
            True,
        ),
        (
            [{"object": {"namespace": "prod"}, "labelSelector": {"matchLabels": {"app": "web"}}}],
            make_pod("p1").uid("u1").label(app="web").obj(),
            False,
        ),
        (
            [{"controller": dict(RS), "labelSelector": {"matchLabels": {"app": "web"}}}],
            make_pod("p1").uid("u1").owner("ReplicaSet", "rs1", "rs-uid").obj(),
            False,
        ),
        # owners are ORed
        (
            [{"object": {"name": "other"}}, {"labelSelector": {"matchLabels": {"app": "web"}}}],
            make_pod("p1").uid("u1").label(app="web").obj(),
            True,
        ),
        ([{"object": {"name": "a"}}, {"object": {"name": "b"}}], make_pod("c").uid("u1").obj(), False),
        # no owners match nothing, an empty owner matches everything
        (None, make_pod("p1").uid("u1").obj(), False),
        ([], make_pod("p1").uid("u1").obj(), False),
        ([{}], make_pod("p1").uid("u1").obj(), True),
    ],
)
def test_owner_matching(owners: Any, target: dict[str, Any], expected: bool) -> None:
    assert compile_owners(owners).matches(target) is expected


def test_identical_owner_specs_share_one_matcher() -> None:
    a = compile_owners([{"object": {"name": "p1", "namespace": "default"}}])
    b = compile_owners([{"object": {"namespace": "default", "name": "p1"}}])
    c = compile_owners([{"object": {"name": "p2"}}])
    assert a is b
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert a.signature == '[{"object":{"name":"p1","namespace":"default"}}]'


def test_owner_specs_equal_in_python_but_not_in_json_get_their_own_matchers() -> None:
    by_int = compile_owners([{"object": {"name": "p1", "uid": 1}}])
    by_bool = compile_owners([{"object": {"name": "p1", "uid": True}}])
    assert by_int.signature == '[{"object":{"name":"p1","uid":1}}]'
    assert by_bool.signature == '[{"object":{"name":"p1","uid":true}}]'
    assert compile_owners([{"object": {"uid": 1, "name": "p1"}}]) is by_int


def test_a_bad_selector_is_refused_every_time() -> None:
    bad = [{"labelSelector": {"matchLabels": {"app": "-bad-"}}}]
    for _ in range(2):
        with pytest.raises(LabelSelectorError):
            compile_owners(bad)


def test_matches_everything_flag() -> None:
    assert compile_owners([{}]).matches_everything is True
    assert compile_owners([{"object": {"name": "x"}}]).matches_everything is False


def test_bad_label_selector_names_the_owner() -> None:
    with pytest.raises(LabelSelectorError) as info:
        compile_owners([{"object": {"name": "x"}}, {"labelSelector": {"matchLabels": {"app": "-bad-"}}}])
    assert info.value.path == "owners[1].labelSelector.matchLabels[app]"


@given(
    st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
    st.sampled_from(["a", "b", "c", "d"]),
)
def test_object_owners_are_ored(names: list[str], target: str) -> None:
    matcher = compile_owners([{"object": {"name": n}} for n in names])
    assert matcher.matches(make_pod(target).uid("u1").obj()) is (target in names)


def test_malformed_owner_entries_match_nothing() -> None:
    assert compile_owners(["not-an-object"]).matches(make_pod("p1").uid("u1").obj()) is False  # type: ignore[list-item]
