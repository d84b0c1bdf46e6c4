"""MemoryStore deletion: graceful pods, preconditions, finalizers."""

from __future__ import annotations

from typing import Any

import pytest

from berth.api.errors import Conflict, Invalid, NotFound
from berth.clock import SimClock
from berth.store import KindSpec, MemoryStore, copy_object, static_kinds
from builders import make_pod

POD = ("", "Pod")
CM = ("", "ConfigMap")
KINDS = static_kinds(
    [KindSpec("", "Pod", "pods", True, True), KindSpec("", "ConfigMap", "configmaps", True, False)]
)


def make_store(clock: SimClock | None = None) -> tuple[MemoryStore, list[tuple[str, str, str]]]:
    store = MemoryStore(kinds=KINDS, validate=None, clock=clock or SimClock(start=100.0))
    events: list[tuple[str, str, str]] = []
    store.subscribe(lambda ev: events.append((ev.type, ev.object["metadata"]["name"], str(ev.revision))))
    return store, events


@pytest.mark.parametrize(
    ("obj", "grace"),
    [
        (make_pod("p").obj(), None),
        (make_pod("p").obj(), 30),
        (make_pod("p").node("n1").phase("Succeeded").obj(), None),
        (make_pod("p").node("n1").phase("Failed").obj(), 10),
        (make_pod("p").node("n1").obj(), 0),
    ],
)
def test_pod_deleted_immediately(obj: dict[str, Any], grace: int | None) -> None:
    store, events = make_store()
    store.create(obj)
    out = store.delete(POD, "default", "p", grace_period_seconds=grace)
    assert out["metadata"]["resourceVersion"] == "2"
    assert out["metadata"]["deletionTimestamp"] == "2024-01-01T00:01:40Z"
    assert out["metadata"]["deletionGracePeriodSeconds"] == 0
    assert events == [("ADDED", "p", "1"), ("DELETED", "p", "2")]
    with pytest.raises(NotFound):
        store.get(POD, "default", "p")


@pytest.mark.parametrize(
    ("term", "grace", "expected_ts", "expected_grace"),
    [
        (None, None, "2024-01-01T00:02:10Z", 30),  # default 30 s
        (45, None, "2024-01-01T00:02:25Z", 45),  # spec.terminationGracePeriodSeconds
        (45, 5, "2024-01-01T00:01:45Z", 5),  # explicit argument wins
        (None, -3, "2024-01-01T00:01:41Z", 1),  # negative → 1
    ],
)
def test_pod_graceful_delete(
    term: int | None, grace: int | None, expected_ts: str, expected_grace: int
) -> None:
    store, events = make_store()
    obj = make_pod("p").node("n1").obj()
    if term is not None:
        obj["spec"]["terminationGracePeriodSeconds"] = term
    store.create(obj)
    out = store.delete(POD, "default", "p", grace_period_seconds=grace)
    assert out["metadata"]["deletionTimestamp"] == expected_ts
    assert out["metadata"]["deletionGracePeriodSeconds"] == expected_grace
    assert out["metadata"]["generation"] == 2
    assert store.get(POD, "default", "p") is out
    assert events == [("ADDED", "p", "1"), ("MODIFIED", "p", "2")]


def test_graceful_then_shorten_then_zero() -> None:
    clock = SimClock(start=100.0)
    store, events = make_store(clock)
    store.create(make_pod("p").node("n1").obj())
    store.delete(POD, "default", "p")  # ts = 130, grace 30
    assert store.delete(POD, "default", "p") is store.get(POD, "default", "p")  # pending: no-op
    assert (
        store.delete(POD, "default", "p", grace_period_seconds=60)["metadata"]["deletionGracePeriodSeconds"]
        == 30
    )
    out = store.delete(POD, "default", "p", grace_period_seconds=10)
    assert out["metadata"]["deletionTimestamp"] == "2024-01-01T00:01:50Z"  # 130 - 30 + 10
    assert out["metadata"]["deletionGracePeriodSeconds"] == 10
    clock.run(until=105.0)
    final = store.delete(POD, "default", "p", grace_period_seconds=0)
    assert final["metadata"]["deletionGracePeriodSeconds"] == 0
    assert final["metadata"]["deletionTimestamp"] == "2024-01-01T00:01:40Z"  # 130 - 30 + 0
    assert events == [
        ("ADDED", "p", "1"),
        ("MODIFIED", "p", "2"),
        ("MODIFIED", "p", "3"),
        ("DELETED", "p", "4"),
    ]
    assert store.list(POD) == ([], "4")


def test_update_cannot_change_deletion_fields() -> None:
    store, _ = make_store()
    store.create(make_pod("p").node("n1").obj())
    marked = store.delete(POD, "default", "p")
    obj = copy_object(marked)
    del obj["metadata"]["deletionTimestamp"]
    obj["metadata"]["deletionGracePeriodSeconds"] = 0
    obj["metadata"]["labels"] = {"x": "y"}
    out = store.update(obj)
    assert out["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]
    assert out["metadata"]["deletionGracePeriodSeconds"] == 30


def test_non_pod_deleted_immediately() -> None:
    store, events = make_store()
    store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    out = store.delete(CM, "default", "c", grace_period_seconds=30)
    assert out["metadata"]["resourceVersion"] == "2"
    assert "deletionTimestamp" not in out["metadata"]
    assert events == [("ADDED", "c", "1"), ("DELETED", "c", "2")]


def test_finalizers_keep_object_until_removed() -> None:
    store, events = make_store()
    store.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "finalizers": ["x/y", "x/z"]}}
    )
    marked = store.delete(CM, "default", "c")
    assert marked["metadata"]["deletionTimestamp"] == "2024-01-01T00:01:40Z"
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 0
    assert store.delete(CM, "default", "c") is marked  # still waiting for finalizers
    obj = copy_object(marked)
    obj["metadata"]["finalizers"] = ["x/z"]
    kept = store.update(obj)
    assert store.get(CM, "default", "c") is kept
    gone = store.patch(CM, "default", "c", {"metadata": {"finalizers": None}})
    assert gone["metadata"]["resourceVersion"] == "4"
    with pytest.raises(NotFound):
        store.get(CM, "default", "c")
    assert [e[0] for e in events] == ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]


def test_pod_with_finalizer_waits_for_grace_zero() -> None:
    store, events = make_store()
    store.create(make_pod("p").node("n1").meta(finalizers=["keep"]).obj())
    store.delete(POD, "default", "p")  # graceful, 30 s
    # removing the finalizer while grace is pending does not delete
    store.patch(POD, "default", "p", {"metadata": {"finalizers": None}})
    assert store.get(POD, "default", "p")["metadata"]["deletionGracePeriodSeconds"] == 30
    store.patch(POD, "default", "p", {"metadata": {"finalizers": ["keep"]}})
    marked = store.delete(POD, "default", "p", grace_period_seconds=0)
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 0
    assert store.get(POD, "default", "p") is marked
    store.patch(POD, "default", "p", {"metadata": {"finalizers": []}})
    with pytest.raises(NotFound):
        store.get(POD, "default", "p")
    assert events[-1][0] == "DELETED"


def test_unscheduled_pod_with_finalizer_is_marked() -> None:
    store, _ = make_store()
    store.create(make_pod("p").meta(finalizers=["f"]).obj())
    out = store.delete(POD, "default", "p")
    assert out["metadata"]["deletionGracePeriodSeconds"] == 0
    assert store.get(POD, "default", "p") is out


def test_delete_preconditions_and_errors() -> None:
    store, _ = make_store()
    store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    with pytest.raises(Conflict) as info:
        store.delete(CM, "default", "c", resource_version="7")
    assert str(info.value) == (
        'Operation cannot be fulfilled on ConfigMap "c": the ResourceVersion in the precondition (7) does not '
        "match the ResourceVersion in record (1). The object might have been modified"
    )
    with pytest.raises(Invalid) as invalid:
        store.delete(CM, "default", "c", propagation="Sideways")
    assert str(invalid.value) == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported '
        'values: "Foreground", "Background", "Orphan", "nil"'
    )
    with pytest.raises(NotFound, match='configmaps "nope" not found'):
        store.delete(CM, "default", "nope")
    store.delete(CM, "default", "c", resource_version="1", propagation="Background")
    assert store.list(CM)[0] == []
