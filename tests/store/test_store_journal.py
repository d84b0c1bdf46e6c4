"""MemoryStore.open: the SQLite journal (round trips, deletions, watches and uids after a restart, kill -9)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from journal_crash import run_crashes

from berth.api.errors import InternalError, NotFound, ResourceExpired
from berth.clock import SimClock
from berth.store import DataDirInUse, KindSpec, MemoryStore, static_kinds
from berth.store.admission import create_system_priority_classes, namespace_autoprovision, pod_admission
from berth.store.journal import DB_FILE, JournalError
from builders import make_node, make_pod

POD = ("", "Pod")
NODE = ("", "Node")
CM = ("", "ConfigMap")
PC = ("scheduling.k8s.io", "PriorityClass")


def snapshot(store: MemoryStore) -> tuple[list[dict[str, Any]], int]:
    return json.loads(json.dumps(store.all_objects())), store.revision


def tick(clock: SimClock, seconds: float) -> None:
    clock.run(until=clock.now() + seconds)


def populate(store: MemoryStore, clock: SimClock) -> None:
    """One write of every kind the store has, with time moving so timestamps differ."""
    store.create(make_node("n1").obj())
    tick(clock, 3)
    store.create(make_pod("a").label(app="web").obj())
    store.create(make_pod("b").obj())
    store.create(make_pod("gone").obj())
    store.create({**make_pod("").obj(), "metadata": {"generateName": "gen-", "namespace": "default"}})
    store.create(make_pod("fin").meta(finalizers=["example.com/keep"]).obj())
    store.create(make_pod("evicted").obj())
    tick(clock, 5)
    a = store.get(POD, "default", "a")
    store.update({**a, "metadata": {**a["metadata"], "labels": {"app": "web", "tier": "1"}}})
    n1 = store.get(NODE, "", "n1")
    store.update_status({**n1, "status": {**n1.get("status", {}), "phase": "Running"}})
    store.patch(POD, "default", "a", {"metadata": {"annotations": {"note": "x"}}})
    store.patch(POD, "default", "a", {"status": {"phase": "Running"}}, subresource="status")
    tick(clock, 1)
    store.bind("default", "b", "n1")
    store.bind("default", "evicted", "n1")
    store.delete(POD, "default", "b", grace_period_seconds=30)  # graceful: marked, still there
    store.delete(POD, "default", "gone")  # unscheduled: removed
    store.delete(POD, "default", "fin")  # finalizer: marked
    store.evict("default", "evicted", grace_period_seconds=0)


@pytest.fixture
def clock() -> SimClock:
    return SimClock()


def test_open_creates_a_wal_database(tmp_path: Path) -> None:
    data = tmp_path / "data" / "dir"
    with MemoryStore.open(data) as store:
        assert store.durable and not store.recovered and store.revision == 0
        store.create(make_pod("a").obj())
        assert (data / DB_FILE).exists()
    assert not store.durable
    db = sqlite3.connect(data / DB_FILE)
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        rows = db.execute("SELECT grp, kind, namespace, name, rv, data FROM objects").fetchall()
    finally:
        db.close()
    assert len(rows) == 1
    grp, kind, ns, name, rv, data_json = rows[0]
    assert (grp, kind, ns, name, rv) == ("", "Pod", "default", "a", 1)
    assert json.loads(data_json)["metadata"]["resourceVersion"] == "1"


def test_round_trip_of_every_write_kind(tmp_path: Path, clock: SimClock) -> None:
    with MemoryStore.open(tmp_path, clock=clock) as store:
        populate(store, clock)
        before, revision = snapshot(store)
        names = {o["metadata"]["name"] for o in before}
    assert {"n1", "a", "b", "fin"} <= names and not {"gone", "evicted"} & names
    assert any(n.startswith("gen-") for n in names)
    with MemoryStore.open(tmp_path, clock=SimClock()) as again:
        assert again.recovered
        assert again.revision == revision
        after, _ = snapshot(again)
        assert after == before  # resourceVersion, uid, creationTimestamp, deletionTimestamp, status, ...
        assert again.get(POD, "default", "b")["metadata"]["deletionTimestamp"]
        created = again.create(make_pod("next").obj())
        assert created["metadata"]["resourceVersion"] == str(revision + 1)


def test_writes_after_recovery_round_trip_too(tmp_path: Path, clock: SimClock) -> None:
    with MemoryStore.open(tmp_path, clock=clock) as store:
        populate(store, clock)
    with MemoryStore.open(tmp_path) as store:
        fin = store.get(POD, "default", "fin")
        store.update({**fin, "metadata": {**fin["metadata"], "finalizers": []}})  # last finalizer: removed
        store.delete(POD, "default", "b", grace_period_seconds=0)
        store.patch(POD, "default", "a", {"metadata": {"labels": {"tier": None}}})
        before, revision = snapshot(store)
    with MemoryStore.open(tmp_path) as store:
        assert snapshot(store) == (before, revision)
        for gone in ("fin", "b"):
            with pytest.raises(NotFound):
                store.get(POD, "default", gone)


def test_deletion_is_gone_and_its_revision_kept(tmp_path: Path) -> None:
    with MemoryStore.open(tmp_path) as store:
        store.create(make_pod("a").obj())
        store.create(make_pod("b").obj())
        deleted = store.delete(POD, "default", "b")
        assert deleted["metadata"]["resourceVersion"] == "3"
    with MemoryStore.open(tmp_path) as store:
        assert store.revision == 3  # the latest write was the deletion
        with pytest.raises(NotFound):
            store.get(POD, "default", "b")
        assert [o["metadata"]["name"] for o in store.list(POD)[0]] == ["a"]
        assert store.create(make_pod("b").obj())["metadata"]["resourceVersion"] == "4"
        store.delete(POD, "default", "a")
        store.delete(POD, "default", "b")
    with MemoryStore.open(tmp_path) as store:
        assert len(store) == 0
        assert store.revision == 6 and store.recovered


def test_watch_after_reopen(tmp_path: Path) -> None:
    with MemoryStore.open(tmp_path) as store:
        store.create(make_node("n1").obj())  # 1
        store.create(make_pod("a").obj())  # 2
        store.create(make_pod("b").ns("other").obj())  # 3
        store.bind("default", "a", "n1")  # 4
        store.create(make_pod("c").obj())  # 5
        store.delete(POD, "default", "c")  # 6
    with MemoryStore.open(tmp_path) as store:
        with pytest.raises(ResourceExpired):
            store.watch(POD, resource_version="3")
        with pytest.raises(ResourceExpired):
            store.watch(None, resource_version="5")
        listed = store.watch(None, resource_version="0")
        assert [(e.type, e.object["metadata"]["name"], e.revision) for e in listed.poll()] == [
            ("ADDED", "n1", 1),
            ("ADDED", "b", 3),
            ("ADDED", "a", 4),
        ]
        assert [e.object["metadata"]["name"] for e in store.watch(POD).poll()] == ["b", "a"]
        current = store.watch(POD, resource_version=str(store.revision))
        assert current.poll() == []
        store.create(make_pod("d").obj())
        store.patch(POD, "other", "b", {"metadata": {"labels": {"x": "y"}}})
        store.delete(POD, "other", "b")
        assert [(e.type, e.object["metadata"]["name"], e.revision) for e in current.poll()] == [
            ("ADDED", "d", 7),
            ("MODIFIED", "b", 8),
            ("DELETED", "b", 9),
        ]
        assert [e.type for e in listed.poll()] == ["ADDED", "MODIFIED", "DELETED"]
        resumed = store.watch(POD, resource_version="7")
        assert [(e.type, e.revision) for e in resumed.poll()] == [("MODIFIED", 8), ("DELETED", 9)]
        with pytest.raises(ResourceExpired):
            store.watch(POD, resource_version="5")


def test_uids_and_generated_names_never_repeat(tmp_path: Path) -> None:
    uids: set[str] = set()
    names: set[str] = set()
    writes = 0
    for boot in range(6):
        with MemoryStore.open(tmp_path, seed=7) as store:
            assert store.recovered == (boot > 0)
            for i in range(15):
                pod = store.create({**make_pod("").obj(), "metadata": {"generateName": "p-"}})
                named = store.create(make_pod(f"b{boot}-{i}").obj())
                writes += 2
                for obj in (pod, named):
                    assert obj["metadata"]["uid"] not in uids
                    uids.add(obj["metadata"]["uid"])
                assert pod["metadata"]["name"] not in names
                names.add(pod["metadata"]["name"])
            if boot % 2:  # a start whose last write is a deletion
                store.delete(POD, "default", f"b{boot}-0")
                writes += 1
            assert store.revision == writes
    assert len(uids) == 6 * 30


def test_fresh_data_dir_behaves_like_memory_store(tmp_path: Path, clock: SimClock) -> None:
    plain_clock = SimClock()
    plain = MemoryStore(seed=3, clock=plain_clock)
    populate(plain, plain_clock)
    with MemoryStore.open(tmp_path, seed=3, clock=clock) as durable:
        populate(durable, clock)
        assert snapshot(durable) == snapshot(plain)


def test_recovery_runs_no_validation_or_admission(tmp_path: Path) -> None:
    with MemoryStore.open(tmp_path) as store:
        store.add_admission(namespace_autoprovision(store))
        store.add_admission(pod_admission(store))
        create_system_priority_classes(store)
        store.create(make_pod("a").ns("team").obj())
        before = snapshot(store)
    calls: list[str] = []

    def refuse(obj: Any) -> None:
        calls.append(obj["metadata"]["name"])
        raise ValueError("refused")

    with MemoryStore.open(tmp_path, validate=refuse) as store:
        assert calls == []
        assert snapshot(store) == before
        assert store.get(("", "Namespace"), "", "team")


def test_bootstrap_creates_only_what_is_missing(tmp_path: Path) -> None:
    with MemoryStore.open(tmp_path) as store:  # a first start killed after its first bootstrap write
        store.create(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "system-node-critical"},
                "value": 2000001000,
            }
        )
    for _ in range(3):
        with MemoryStore.open(tmp_path) as store:
            create_system_priority_classes(store)
            assert sorted(o["metadata"]["name"] for o in store.list(PC)[0]) == [
                "system-cluster-critical",
                "system-node-critical",
            ]
            assert store.revision == 2  # later starts write nothing


def test_second_open_of_a_data_dir_is_refused(tmp_path: Path) -> None:
    store = MemoryStore.open(tmp_path)
    try:
        store.create(make_pod("a").obj())
        with pytest.raises(DataDirInUse):
            MemoryStore.open(tmp_path)
        store.create(make_pod("b").obj())  # the refused open did not disturb the owner
    finally:
        store.close()
    with MemoryStore.open(tmp_path) as again:
        assert len(again) == 2


def test_a_failed_journal_write_changes_nothing(tmp_path: Path) -> None:
    kinds = static_kinds([KindSpec("", "ConfigMap", "configmaps", True, False)])
    with MemoryStore.open(tmp_path, kinds=kinds, validate=None) as store:
        store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ok"}})
        watch = store.watch(CM, resource_version="1")
        with pytest.raises(InternalError):
            store.create(
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bad"}, "x": object()}
            )
        assert store.revision == 1 and len(store) == 1 and watch.poll() == []
        store.close()
        with pytest.raises(InternalError):
            store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late"}})
        with pytest.raises(InternalError):
            store.delete(CM, "default", "ok")
        assert store.revision == 1 and len(store) == 1
        assert store.get(CM, "default", "ok")  # reads still work
    with MemoryStore.open(tmp_path, kinds=kinds) as again:
        assert [o["metadata"]["name"] for o in again.all_objects()] == ["ok"] and again.revision == 1


def test_corrupt_row_is_reported(tmp_path: Path) -> None:
    with MemoryStore.open(tmp_path) as store:
        store.create(make_pod("a").obj())
    db = sqlite3.connect(tmp_path / DB_FILE)
    try:
        db.execute("UPDATE objects SET data = '{not json'")
        db.commit()
    finally:
        db.close()
    with pytest.raises(JournalError):
        MemoryStore.open(tmp_path)
    with MemoryStore.open(tmp_path / "other"):  # the failed open released its lock and file
        pass
    db = sqlite3.connect(tmp_path / DB_FILE)
    db.close()


def test_memory_store_without_data_dir_is_unchanged() -> None:
    store = MemoryStore()
    assert not store.durable and not store.recovered
    store.create(make_pod("a").obj())
    store.close()  # nothing to close
    store.create(make_pod("b").obj())
    assert store.revision == 2


def test_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    """A writer child is SIGKILLed at 3 seeded random moments (BERTH_CRASH_KILLS=20 for the long run; see also
    benchmarks/crash_journal.py); after each kill every acknowledged write is recovered."""
    kills = int(os.environ.get("BERTH_CRASH_KILLS", "3"))
    report = run_crashes(tmp_path / "data", kills=kills, seed=13, max_delay=0.5, final_ops=20)
    assert report.problems == []
    assert report.kills == kills and report.boots == kills + 1
    assert report.acknowledged_writes > kills * 10
