"""MemoryStore watches and subscriptions: resume from RV, Gone, ordering, on_ready, re-entrancy."""

from __future__ import annotations

from typing import Any

import pytest

from berth.api.errors import BadRequest, ResourceExpired
from berth.api.watch import WatchEvent
from berth.store import KindSpec, MemoryStore, static_kinds
from builders import make_node, make_pod

POD = ("", "Pod")
NODE = ("", "Node")
KINDS = static_kinds([KindSpec("", "Pod", "pods", True, True), KindSpec("", "Node", "nodes", False, True)])


def make_store(**kw: Any) -> MemoryStore:
    return MemoryStore(kinds=KINDS, validate=None, **kw)


def summary(events: list[WatchEvent]) -> list[tuple[str, str, str, int]]:
    return [(e.type, e.key[1], e.object["metadata"]["name"], e.revision) for e in events]


def populate(store: MemoryStore) -> None:
    store.create(make_node("n1").obj())  # 1
    store.create(make_pod("a").obj())  # 2
    store.create(make_pod("b").ns("other").obj())  # 3
    store.patch(POD, "default", "a", {"spec": {"nodeName": "n1"}})  # 4
    store.delete(NODE, "", "n1")  # 5


def test_watch_from_zero_lists_current_then_live() -> None:
    store = make_store()
    populate(store)
    w = store.watch(None, resource_version="0")
    assert summary(w.poll()) == [("ADDED", "Pod", "b", 3), ("ADDED", "Pod", "a", 4)]
    assert w.poll() == []
    store.create(make_node("n2").obj())
    assert summary(w.poll()) == [("ADDED", "Node", "n2", 6)]


@pytest.mark.parametrize(
    ("key", "rv", "namespace", "expected"),
    [
        (
            None,
            "2",
            None,
            [("ADDED", "Pod", "b", 3), ("MODIFIED", "Pod", "a", 4), ("DELETED", "Node", "n1", 5)],
        ),
        (POD, "1", None, [("ADDED", "Pod", "a", 2), ("ADDED", "Pod", "b", 3), ("MODIFIED", "Pod", "a", 4)]),
        (POD, "1", "default", [("ADDED", "Pod", "a", 2), ("MODIFIED", "Pod", "a", 4)]),
        (NODE, "4", None, [("DELETED", "Node", "n1", 5)]),
        (NODE, "5", None, []),
        (None, None, None, [("ADDED", "Pod", "b", 3), ("ADDED", "Pod", "a", 4)]),
        (POD, None, "other", [("ADDED", "Pod", "b", 3)]),
    ],
)
def test_watch_from_resource_version(
    key: tuple[str, str] | None,
    rv: str | None,
    namespace: str | None,
    expected: list[tuple[str, str, str, int]],
) -> None:
    store = make_store()
    populate(store)
    w = store.watch(key, resource_version=rv, namespace=namespace)
    assert summary(w.poll()) == expected


def test_deleted_event_carries_deletion_rv() -> None:
    store = make_store()
    populate(store)
    ev = store.watch(NODE, resource_version="4").poll()[0]
    assert ev.object["metadata"]["resourceVersion"] == "5"


def test_too_old_resource_version_is_gone() -> None:
    store = make_store(history_size=3)
    populate(store)  # history keeps revisions 3..5
    assert summary(store.watch(None, resource_version="2").poll())[0][3] == 3
    with pytest.raises(ResourceExpired) as info:
        store.watch(None, resource_version="1")
    assert str(info.value) == "too old resource version: 1 (2)"
    assert (info.value.code, info.value.reason) == (410, "Expired")


def test_bad_resource_version() -> None:
    store = make_store()
    with pytest.raises(BadRequest):
        store.watch(POD, resource_version="abc")


def test_on_ready_fires_once_per_drain_and_stop() -> None:
    store = make_store()
    w = store.watch(POD)
    ready: list[int] = []
    w.on_ready = lambda: ready.append(w.pending())
    store.create(make_pod("a").obj())
    store.create(make_pod("b").obj())
    assert ready == [1]
    assert len(w.poll()) == 2
    store.create(make_pod("c").obj())
    assert ready == [1, 1]
    w.stop()
    store.create(make_pod("d").obj())
    assert w.poll() == []
    assert ready == [1, 1]


def test_events_in_revision_order_across_kinds() -> None:
    store = make_store()
    w = store.watch(None)
    populate(store)
    assert [e.revision for e in w.poll()] == [1, 2, 3, 4, 5]


def test_subscribe_sync_ordered_not_reentrant() -> None:
    store = make_store()
    seen: list[tuple[str, int]] = []
    depth = [0]

    def first(ev: WatchEvent) -> None:
        depth[0] += 1
        assert depth[0] == 1, "re-entered"
        seen.append(("first", ev.revision))
        if ev.object["metadata"]["name"] == "a":
            store.create(make_pod("from-callback").obj())
        depth[0] -= 1

    store.subscribe(first)
    unsub = store.subscribe(lambda ev: seen.append(("second", ev.revision)))
    store.create(make_pod("a").obj())
    assert seen == [("first", 1), ("second", 1), ("first", 2), ("second", 2)]
    unsub()
    store.create(make_pod("b").obj())
    assert seen[-1] == ("first", 3)


def test_subscribe_with_key_filter() -> None:
    store = make_store()
    seen: list[str] = []
    store.subscribe(lambda ev: seen.append(ev.object["metadata"]["name"]), key=NODE)
    populate(store)
    assert seen == ["n1", "n1"]
