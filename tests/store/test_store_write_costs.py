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
from berth.store.memory import admits_kinds, status_blind
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


def test_a_kinds_hook_runs_for_its_kinds_only_and_removal_is_seen() -> None:
    store = _store()
    calls: list[tuple[str, str]] = []

    @admits_kinds("ConfigMap")
    def config_maps(op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        calls.append(("config_maps", new["kind"]))
        return new

    def every(op: str, new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        calls.append(("every", new["kind"]))
        return new

    store.add_admission(config_maps)
    store.create(make_pod("p1").obj())
    remove = store.add_admission(every)
    store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})
    store.create(make_pod("p2").obj())
    assert calls == [("config_maps", "ConfigMap"), ("every", "ConfigMap"), ("every", "Pod")]
    remove()
    store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d", "namespace": "default"}})
    store.create(make_pod("p3").obj())
    assert calls[3:] == [("config_maps", "ConfigMap")]


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


def test_an_owned_create_keeps_the_callers_dict_and_commits_it_as_a_copy_would_be() -> None:
    store, twin = _store(), _store()
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web-1.17", "namespace": "default"},
        "reason": "Scheduled",
        "message": "Successfully assigned default/web-1 to n1",
    }
    plain = twin.create(copy_object(event))
    owned = store.create(event, validated=True, owned=True)
    assert owned is event
    assert owned == plain
    assert store.get(("", "Event"), "default", "web-1.17") is event


def test_the_recorder_hands_its_events_over_and_a_name_too_long_for_kube_is_still_refused() -> None:
    from berth.store.events import EventRecorder

    store = _store()
    recorder = EventRecorder(store)
    pod = store.create(make_pod("web-1").obj())
    recorder.event(pod, "Normal", "Scheduled", "Successfully assigned default/web-1 to n1", action="Binding")
    (ev,) = store.list(("", "Event"))[0]
    assert ev["metadata"]["name"].startswith("web-1.") and int(ev["metadata"]["name"][6:], 16) > 0
    assert ev["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "web-1",
        "uid": pod["metadata"]["uid"],
        "namespace": "default",
    }
    assert (ev["count"], ev["type"], ev["reportingComponent"]) == (1, "Normal", "default-scheduler")
    long_pod = store.create(make_pod("p" * 253).obj())
    with pytest.raises(Invalid) as refused:
        recorder.event(long_pod, "Normal", "Scheduled", "x")
    assert "must be no more than 253 characters" in str(refused.value)
    assert len(store.list(("", "Event"))[0]) == 1


def test_an_owned_status_write_keeps_the_callers_status_and_stores_what_a_copy_would() -> None:
    store, twin = _store(), _store()
    for s in (store, twin):
        s.create(make_pod("web-1").obj())
    stored = store.get(POD, "default", "web-1")
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    plain = twin.update_status({**twin.get(POD, "default", "web-1"), "status": copy_object(status)})
    owned = store.update_status({**stored, "status": status}, owned=True)
    assert owned["status"] is status
    assert owned == plain
