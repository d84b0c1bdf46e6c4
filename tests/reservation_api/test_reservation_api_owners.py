"""Owner matching of spec.owners: object wildcards, controller references, label selectors, ORed owners."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.api.labels import LabelSelectorError
from berth.api.reservation import compile_owners


def pod(
    name: str = "p1",
    namespace: str | None = "default",
    uid: str = "u1",
    labels: dict[str, str] | None = None,
    owners: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": uid}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    if owners:
        meta["ownerReferences"] = owners
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "c"}]}}


RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs1", "uid": "rs-uid", "controller": True}


@pytest.mark.parametrize(
    ("owners", "target", "expected"),
    [
        # object: empty parts are wildcards
        ([{"object": {"name": "p1"}}], pod(), True),
        ([{"object": {"name": "p1"}}], pod(name="p2"), False),
        ([{"object": {"name": "p1", "namespace": "default"}}], pod(), True),
        ([{"object": {"name": "p1", "namespace": "other"}}], pod(), False),
        ([{"object": {"namespace": "default"}}], pod(name="anything"), True),
        ([{"object": {"uid": "u1"}}], pod(name="x"), True),
        ([{"object": {"uid": "u2"}}], pod(), False),
        ([{"object": {"name": "p1", "namespace": "default"}}], pod(namespace=None), True),
        ([{"object": {"apiVersion": "v1", "name": "p1"}}], pod(), True),
        ([{"object": {"apiVersion": "v2", "name": "p1"}}], pod(), False),
        ([{"object": {"kind": "Deployment", "name": "p1"}}], pod(), True),  # kind is ignored
        ([{"object": {}}], pod(name="zzz"), True),
        # controller: any ownerReference matching every non-empty part
        ([{"controller": dict(RS)}], pod(owners=[dict(RS)]), True),
        ([{"controller": {**RS, "name": "rs2"}}], pod(owners=[dict(RS)]), False),
        ([{"controller": {**RS, "uid": ""}}], pod(owners=[dict(RS)]), True),
        ([{"controller": {**RS, "kind": "StatefulSet"}}], pod(owners=[dict(RS)]), False),
        ([{"controller": {**RS, "apiVersion": "apps/v2"}}], pod(owners=[dict(RS)]), False),
        ([{"controller": dict(RS)}], pod(), False),  # no ownerReferences
        ([{"controller": dict(RS)}], pod(owners=[{**RS, "name": "x"}, dict(RS)]), True),
        ([{"controller": {**RS, "controller": False}}], pod(owners=[dict(RS)]), False),
        ([{"controller": {k: v for k, v in RS.items() if k != "controller"}}], pod(owners=[dict(RS)]), True),
        (
            [{"controller": {**RS, "controller": True}}],
            pod(owners=[{k: v for k, v in RS.items() if k != "controller"}]),
            False,
        ),
        ([{"controller": {**RS, "namespace": "default"}}], pod(owners=[dict(RS)]), True),
        ([{"controller": {**RS, "namespace": "prod"}}], pod(owners=[dict(RS)]), False),
        # labelSelector
        ([{"labelSelector": {"matchLabels": {"app": "web"}}}], pod(labels={"app": "web"}), True),
        ([{"labelSelector": {"matchLabels": {"app": "web"}}}], pod(labels={"app": "db"}), False),
        ([{"labelSelector": {"matchLabels": {"app": "web"}}}], pod(), False),
        (
            [
                {
                    "labelSelector": {
                        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]
                    }
                }
            ],
            pod(labels={"tier": "b"}),
            True,
        ),
        ([{"labelSelector": {}}], pod(), True),
        # fields of one owner are ANDed
        (
            [{"object": {"namespace": "default"}, "labelSelector": {"matchLabels": {"app": "web"}}}],
            pod(labels={"app": "web"}),
            True,
        ),
        (
            [{"object": {"namespace": "prod"}, "labelSelector": {"matchLabels": {"app": "web"}}}],
            pod(labels={"app": "web"}),
            False,
        ),
        (
            [{"controller": dict(RS), "labelSelector": {"matchLabels": {"app": "web"}}}],
            pod(owners=[dict(RS)]),
            False,
        ),
        # owners are ORed
        (
            [{"object": {"name": "other"}}, {"labelSelector": {"matchLabels": {"app": "web"}}}],
            pod(labels={"app": "web"}),
            True,
        ),
        ([{"object": {"name": "a"}}, {"object": {"name": "b"}}], pod(name="c"), False),
        # no owners match nothing, an empty owner matches everything
        (None, pod(), False),
        ([], pod(), False),
        ([{}], pod(), True),
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
    assert matcher.matches(pod(name=target)) is (target in names)


def test_malformed_owner_entries_match_nothing() -> None:
    assert compile_owners(["not-an-object"]).matches(pod()) is False  # type: ignore[list-item]
