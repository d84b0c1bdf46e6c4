"""The journal's group commit (what `berth serve` runs with): writes wait in one transaction until
`flush()`; a process killed before the flush loses exactly the writes that waited, all of them together."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from berth.api.errors import InternalError
from berth.store import MemoryStore
from berth.store.journal import DB_FILE, Journal
from builders import make_pod

POD = ("", "Pod")


def _names(data: Path) -> tuple[int, list[str]]:
    with MemoryStore.open(data) as store:
        return store.revision, [o["metadata"]["name"] for o in store.list(POD)[0]]


def test_flush_commits_every_waiting_write_in_order(tmp_path: Path) -> None:
    with MemoryStore.open(tmp_path, group_commit=True) as store:
        for name in ("a", "b", "c"):
            store.create(make_pod(name).obj())
        store.delete(POD, "default", "b")
        journal = store._journal
        assert journal is not None and journal.pending == 4  # three pods, one deletion
        store.flush()
        assert journal.pending == 0
    assert _names(tmp_path) == (4, ["a", "c"])


def test_close_commits_what_waits(tmp_path: Path) -> None:
    with MemoryStore.open(tmp_path, group_commit=True) as store:
        store.create(make_pod("a").obj())
    assert _names(tmp_path) == (1, ["a"])


def test_a_kill_before_the_flush_loses_only_the_waiting_writes(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(Path(__file__).parents[1])!r})
        from berth.store import MemoryStore
        from builders import make_pod
        store = MemoryStore.open({str(tmp_path)!r}, group_commit=True)
        store.create(make_pod("kept").obj())
        store.flush()
        store.create(make_pod("lost-1").obj())
        store.create(make_pod("lost-2").obj())
        store.delete(("", "Pod"), "default", "kept")
        os._exit(0)  # like kill -9: no flush, no close
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert _names(tmp_path) == (1, ["kept"])


def test_without_group_commit_every_write_is_committed_at_once(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path)
    journal.load()
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "resourceVersion": "1"}}
    journal.put(("", "Namespace"), "", "x", obj, 1)
    assert journal.pending == 0
    journal.flush()  # a no-op
    journal.close()
    assert Journal.open(tmp_path).load()[0] == 1


def test_a_failed_commit_closes_the_journal(tmp_path: Path) -> None:
    journal = Journal.open(tmp_path, group_commit=True)
    journal.load()
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "resourceVersion": "1"}}
    journal.put(("", "Namespace"), "", "x", obj, 1)
    journal._cur.execute("DROP TABLE objects")  # the table is gone behind the journal's back: the flush fails
    with pytest.raises(InternalError, match="cannot commit the journal"):
        journal.flush()
    assert journal.closed
    with pytest.raises(InternalError, match="is closed"):
        journal.put(("", "Namespace"), "", "x", obj, 2)


def test_a_row_written_twice_before_a_flush_keeps_its_last_version(tmp_path: Path) -> None:
    with MemoryStore.open(tmp_path, group_commit=True) as store:
        store.create(make_pod("a").obj())
        store.patch(POD, "default", "a", {"metadata": {"labels": {"k": "v"}}})
        store.create(make_pod("b").obj())
        store.delete(POD, "default", "b")
        store.create(make_pod("b").obj())
        journal = store._journal
        assert journal is not None and journal.pending == 5
        store.flush()
        rows = sorted((name, rv) for _, _, _, name, rv in journal.iter_rows())
    assert rows == [("a", 2), ("b", 5)]
    with MemoryStore.open(tmp_path) as again:
        assert again.revision == 5
        assert again.get(POD, "default", "a")["metadata"]["labels"] == {"k": "v"}


def test_a_schema_1_journal_is_converted_when_opened(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / DB_FILE)
    db.executescript(
        "CREATE TABLE objects (grp TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,"
        " rv INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (grp, kind, namespace, name)) WITHOUT ROWID;"
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;"
        "INSERT INTO meta VALUES ('revision', 7), ('schema', 1);"
    )
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "old", "namespace": "default"}}
    db.execute(
        "INSERT INTO objects VALUES ('', 'Pod', 'default', 'old', 3, ?)",
        (json.dumps({**pod, "metadata": {**pod["metadata"], "resourceVersion": "3"}}),),
    )
    db.commit()
    db.close()
    with MemoryStore.open(tmp_path, group_commit=True) as store:
        assert store.revision == 7 and store.get(POD, "default", "old")["metadata"]["resourceVersion"] == "3"
        store.create(make_pod("new").obj())
    db = sqlite3.connect(tmp_path / DB_FILE)
    try:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (2,)
        assert (
            "WITHOUT ROWID"
            not in db.execute("SELECT sql FROM sqlite_master WHERE name = 'objects'").fetchone()[0]
        )
        assert sorted(r[0] for r in db.execute("SELECT name FROM objects")) == ["new", "old"]
    finally:
        db.close()
