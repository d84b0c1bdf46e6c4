"""The store's cheaper write paths behave as the plain ones: copies share nothing mutable, status-blind admission
hooks are skipped only on status writes, a loader-validated create is not validated twice."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.api.errors import Invalid
from berth.clock import SimClock
from berth.store import MemoryStore, copy_object
from berth.store.memory import status_blind
from builders import make_pod

POD = ("", "Pod")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=25,
)


@given(st.dictionaries(st.text(max_size=4), json_values, max_size=5))
def test_copy_equals_and_shares_no_container(obj: dict[str, Any]) -> None:
    out = copy_object(obj)
    assert out == obj

    def containers(v: Any) -> list[int]:
        if isinstance(v, dict):
            return [id(v), *(i for x in v.values() for i in containers(x))]
        if isinstance(v, list):
            return [id(v), *(i for x in v for i in containers(x))]
        return []

    assert not set(containers(out)) & set(containers(obj))


def test_copy_turns_tuples_and_mapping_subclasses_into_lists_and_dicts() -> None:
    obj = {"a": (1, {"b": (2, 3)}), "c": OrderedDict(d=[4, (5,)])}
    out = copy_object(obj)
    assert out == {"a": [1, {"b": [2, 3]}], "c": {"d": [4, [5]]}}
    assert type(out["c"]) is dict
    assert type(out["a"]) is list


def test_copy_shares_the_immutable_strings() -> None:
    name = "".join(["web-", "1"])  # a string object of its own
    out = copy_object({"metadata": {"name": name}})
    assert out["metadata"]["name"] is name


def _store() -> MemoryStore:
    return MemoryStore(clock=SimClock())


def test_status_blind_hook_is_skipped_on_status_writes_only() -> None:
    store = _store()
    calls: list[tuple[str, str]] = []

    @status_blind
    def blind(op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        calls.append(("blind", op))
        return new

    def seeing(op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        calls.append(("seeing", op))
        return new

    store.add_admission(blind)
    remove = store.add_admission(seeing)
    pod = store.create(make_pod("p1").obj())
    store.update_status({**pod, "status": {"phase": "Running"}})
    assert calls == [("blind", "CREATE"), ("seeing", "CREATE"), ("seeing", "UPDATE")]
    pod = store.get(POD, "default", "p1")
    store.update({**pod, "metadata": {**pod["metadata"], "labels": {"a": "b"}}})
    assert calls[3:] == [("blind", "UPDATE"), ("seeing", "UPDATE")]
    remove()
    store.patch(POD, "default", "p1", {"status": {"phase": "Succeeded"}}, subresource="status")
    assert len(calls) == 5
    assert store.get(POD, "default", "p1")["status"] == {"phase": "Succeeded"}


def test_a_status_hook_still_changes_the_status() -> None:
    store = _store()

    def stamp(op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        if old is not None:
            new.setdefault("status", {})["reason"] = "Stamped"
        return new

    store.add_admission(stamp)
    pod = store.create(make_pod("p1").obj())
    out = store.update_status({**pod, "status": {"phase": "Running"}})
    assert out["status"] == {"phase": "Running", "reason": "Stamped"}


def test_validated_create_skips_only_the_validation() -> None:
    seen: list[str] = []

    def validate(obj: Any) -> None:
        seen.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "bad":
            raise ValueError("no")

    store = MemoryStore(clock=SimClock(), validate=validate)
    store.create(make_pod("p1").obj())
    store.create(make_pod("p2").obj(), keep_identity=True, validated=True)
    assert seen == ["p1"]
    with pytest.raises(Invalid):
        store.create(make_pod("bad").obj())
    assert [o["metadata"]["name"] for o in store.list(POD)[0]] == ["p1", "p2"]
