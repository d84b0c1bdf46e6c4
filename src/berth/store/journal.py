"""`Journal`: the SQLite file that makes a `MemoryStore` durable (``berth serve --data-dir DIR``).

The memory store stays the source of truth for reads; the journal only mirrors the latest state of every
object so that a restarted process can rebuild it. Layout of ``DIR/state.db`` (standard library `sqlite3`):

* ``objects(grp, kind, namespace, name, rv, data)``: one row per live object, keyed by (group, kind,
  namespace, name) as the store keys it (namespace "" for cluster-scoped kinds); ``data`` is the object's
  wire JSON (text), ``rv`` its resourceVersion. A deletion removes the row.
* ``meta(key, value)``: ``revision`` is the revision of the latest *deletion*; ``schema`` the layout version.

The store's global revision is the resourceVersion of its latest write, so it is recovered as
max(``meta.revision``, max ``objects.rv``): a create/update stamps the revision into the row it writes and a
deletion, which leaves no row, records it in ``meta``. Every committed write is ONE SQLite transaction and
returns only after COMMIT, so acknowledged means durable: a put is a single upsert (one statement in
autocommit mode is its own transaction), a deletion
is ``BEGIN; DELETE; UPDATE meta; COMMIT``. Nothing is batched across writes, unless group commit is on
(below).

Why ``synchronous=NORMAL`` is enough in WAL mode: COMMIT appends the transaction's frames to the ``-wal``
file with write() before it returns, so once a write is acknowledged its bytes are in the operating system's
page cache. Killing the process (``kill -9``, a crash, an OOM kill) does not discard the page cache, and the
next open replays every committed frame from the WAL. NORMAL only skips the fsync at each commit (WAL is
fsynced at checkpoints), so what it can lose is the last transactions before a *power failure or kernel
crash*, never a committed transaction on a process crash, and never consistency. ``fsync=True`` selects
``synchronous=FULL`` (an fsync per commit) for durability against power loss as well, at a large cost.

The connection runs with ``locking_mode=EXCLUSIVE``: the first process to open a data directory holds the
database lock until it closes or dies (the kernel releases it on ``kill -9``), so a second ``berth serve`` on
the same directory fails at once with `DataDirInUse` instead of interleaving writes. The WAL index then lives
in process memory (no ``-shm`` file).

SQLite checkpoints the WAL into ``state.db`` automatically once it holds `_CHECKPOINT_PAGES` pages (4000 x 4 KiB,
about 16 MiB; SQLite's default is 1000): a checkpoint fsyncs twice, which dominates the journal's cost on this kind
of disk, so fewer, larger checkpoints raise throughput; the write that triggers one takes a few milliseconds longer.
`close()` checkpoints and removes the WAL.

Group commit (``Journal.open(..., group_commit=True)``, what ``berth serve`` uses): writes wait in memory, the
last version of each row only, and `flush()` writes them all in one transaction. The owner must flush before
anything outside the process can learn of a write (an HTTP answer, a watch event): then "acknowledged means
durable" holds as before, and a ``kill -9`` before the flush loses only writes nobody was told about, all of
them together. One commit for many writes also writes each touched page once instead of once per write, and an
object written twice before a flush (a pod created, then bound) is written once, so the WAL, its checkpoints
and the CPU per write shrink. An object that cannot be encoded is refused by `put` itself; a failed flush
closes the journal: every later write raises InternalError.

Statements are prepared once: `sqlite3` caches compiled statements per connection keyed by their SQL text,
and the journal reuses one cursor and the same constant SQL strings on every write.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from berth.api.errors import InternalError
from berth.api.watch import ResourceKey

__all__ = ["DB_FILE", "DataDirInUse", "Journal", "JournalError"]

DB_FILE = "state.db"
"""The journal's file name inside the data directory."""

_SCHEMA_VERSION = 2
"""2: ``objects`` is a rowid table with a unique key (a row holds a whole object, a kilobyte or more: SQLite's
WITHOUT ROWID layout, schema 1, moves such rows around its B-tree on every write and cost about 35 % more CPU
per write). A schema 1 file is converted when it is opened."""

_OBJECTS = (
    "CREATE TABLE IF NOT EXISTS objects ("
    " grp TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,"
    " rv INTEGER NOT NULL, data TEXT NOT NULL,"
    " UNIQUE (grp, kind, namespace, name))"
)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
    "INSERT OR IGNORE INTO meta (key, value) VALUES ('revision', 0)",
    f"INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', {_SCHEMA_VERSION})",
)
_UPGRADE_FROM_1 = (
    "ALTER TABLE objects RENAME TO objects_1",
    _OBJECTS,
    "INSERT INTO objects (grp, kind, namespace, name, rv, data)"
    " SELECT grp, kind, namespace, name, rv, data FROM objects_1",
    "DROP TABLE objects_1",
    "UPDATE meta SET value = 2 WHERE key = 'schema'",
)
_PUT = (
    "INSERT INTO objects (grp, kind, namespace, name, rv, data) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (grp, kind, namespace, name) DO UPDATE SET rv = excluded.rv, data = excluded.data"
)
_DELETE = "DELETE FROM objects WHERE grp = ? AND kind = ? AND namespace = ? AND name = ?"
_SET_REVISION = "UPDATE meta SET value = ? WHERE key = 'revision'"
_CHECKPOINT_PAGES = 4000  # WAL pages between automatic checkpoints (see the module docstring)

Row = tuple[ResourceKey, str, str, dict[str, Any]]
"""A recovered object: ((group, kind), namespace, name, wire-form object)."""
_RowKey = tuple[str, str, str, str]
"""(group, kind, namespace, name) of a row."""


class JournalError(Exception):
    """The data directory cannot be opened as a journal (unreadable, corrupt, newer schema, ...)."""


class DataDirInUse(JournalError):
    """Another process holds the data directory's journal open."""


class Journal:
    """An open ``DIR/state.db``: `load()` the stored state once, then `put`/`delete` every committed write.

    Not thread-safe: the owning store serializes writes (the core is single-threaded); the connection may be
    used from a thread other than the one that opened it.
    """

    __slots__ = ("_conn", "_cur", "_deleted_at", "_encode", "_group", "_pending", "_rows", "path")

    def __init__(self, conn: sqlite3.Connection, path: Path, *, group_commit: bool = False) -> None:
        """Wrap an open, configured connection (use `Journal.open`)."""
        self._conn: sqlite3.Connection | None = conn
        self._cur = conn.cursor()
        self._encode = msgspec.json.Encoder().encode
        self._group = group_commit
        self._pending = 0
        # group commit: the last write of each row since the flush, (rv, JSON) or None for a deletion
        self._rows: dict[_RowKey, tuple[int, str] | None] = {}
        self._deleted_at = 0  # the revision of the last deletion waiting, 0 when none
        self.path = path

    @classmethod
    def open(cls, data_dir: Path, *, fsync: bool = False, group_commit: bool = False) -> Journal:
        """Open or create ``data_dir/state.db`` (creating the directory), in WAL mode, locked for this process;
        with `group_commit` writes wait in one transaction for `flush()` (see the module docstring).

        Raises `DataDirInUse` when another process has it open, `JournalError` when it is not a journal.
        """
        data_dir = Path(data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / DB_FILE
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=0.0)
        except sqlite3.Error as e:
            raise JournalError(f"cannot open {path}: {e}") from e
        try:
            conn.execute("PRAGMA locking_mode=EXCLUSIVE")
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise JournalError(f"{path}: cannot switch to WAL mode (journal_mode={mode})")
            conn.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
            conn.execute(f"PRAGMA wal_autocheckpoint={_CHECKPOINT_PAGES}")
            conn.execute("BEGIN IMMEDIATE")  # takes (and, in EXCLUSIVE mode, keeps) the write lock
            fresh = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone() is None
            for stmt in (_OBJECTS, *_SCHEMA) if fresh else _SCHEMA:
                conn.execute(stmt)
            schema = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0]
            if schema == 1:
                for stmt in _UPGRADE_FROM_1:
                    conn.execute(stmt)
                schema = _SCHEMA_VERSION
            conn.execute("COMMIT")
            if schema != _SCHEMA_VERSION:
                raise JournalError(
                    f"{path}: unsupported journal schema {schema} (expected {_SCHEMA_VERSION})"
                )
        except sqlite3.OperationalError as e:
            conn.close()
            if "locked" in str(e) or "busy" in str(e):
                raise DataDirInUse(f"{data_dir} is in use by another process ({e})") from e
            raise JournalError(f"cannot open {path}: {e}") from e
        except sqlite3.Error as e:
            conn.close()
            raise JournalError(f"cannot open {path}: {e}") from e
        except BaseException:
            conn.close()
            raise
        return cls(conn, path, group_commit=group_commit)

    def _connection(self) -> sqlite3.Connection:
        conn = self._conn
        if conn is None:
            raise InternalError.of(f"the journal {self.path} is closed")
        return conn

    def load(self) -> tuple[int, list[Row]]:
        """The stored revision and every stored object (decoded wire JSON, in key order).

        Raises `JournalError` when an object's JSON does not decode or does not carry its row's
        resourceVersion (it means the file was edited by something else).
        """
        conn = self._connection()
        decode = msgspec.json.Decoder().decode
        revision = int(conn.execute("SELECT value FROM meta WHERE key = 'revision'").fetchone()[0])
        rows: list[Row] = []
        for grp, kind, ns, name, rv, data in conn.execute(
            "SELECT grp, kind, namespace, name, rv, data FROM objects ORDER BY grp, kind, namespace, name"
        ):
            revision = max(revision, rv)
            try:
                obj = decode(data)
            except msgspec.DecodeError as e:
                raise JournalError(f"{self.path}: {kind} {ns}/{name}: bad JSON: {e}") from e
            meta = obj.get("metadata") if isinstance(obj, dict) else None
            if not isinstance(meta, dict) or meta.get("resourceVersion") != str(rv):
                raise JournalError(
                    f"{self.path}: {kind} {ns}/{name}: not an object with resourceVersion {rv}"
                )
            rows.append(((grp, kind), ns, name, obj))
        return revision, rows

    def put(self, key: ResourceKey, ns: str, name: str, obj: dict[str, Any], rev: int) -> None:
        """Store `obj` (its resourceVersion already `rev`) and revision `rev` in one committed transaction.

        Raises InternalError (500) when the object cannot be encoded or SQLite fails; nothing is stored then.
        """
        try:
            data = self._encode(obj).decode()
        except (TypeError, ValueError, OverflowError) as e:
            raise InternalError.of(f"cannot store {key[1]} {ns}/{name}: {e}") from e
        if self._conn is None:
            raise InternalError.of(f"the journal {self.path} is closed")
        if self._group:  # written at the flush: only the row's last version reaches SQLite
            self._rows[(key[0], key[1], ns, name)] = (rev, data)
            self._pending += 1
            return
        try:
            self._cur.execute(_PUT, (key[0], key[1], ns, name, rev, data))  # autocommit: one transaction
        except sqlite3.Error as e:
            raise InternalError.of(f"cannot write the journal {self.path}: {e}") from e

    def delete(self, key: ResourceKey, ns: str, name: str, rev: int) -> None:
        """Remove the object's row and store revision `rev` in one committed transaction (InternalError on
        failure; nothing is changed then)."""
        cur = self._cur
        if self._conn is None:
            raise InternalError.of(f"the journal {self.path} is closed")
        if self._group:
            self._rows[(key[0], key[1], ns, name)] = None
            self._deleted_at = rev
            self._pending += 1
            return
        try:
            cur.execute("BEGIN")
            cur.execute(_DELETE, (key[0], key[1], ns, name))
            cur.execute(_SET_REVISION, (rev,))
            cur.execute("COMMIT")
        except sqlite3.Error as e:
            try:
                if self._conn.in_transaction:
                    cur.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise InternalError.of(f"cannot write the journal {self.path}: {e}") from e

    @property
    def pending(self) -> int:
        """How many writes wait for `flush()` (always 0 without group commit)."""
        return self._pending

    def flush(self) -> None:
        """Commit the writes that wait (group commit); a no-op when none wait. A failed COMMIT closes the
        journal and raises InternalError: what was not committed is lost, and every later write fails."""
        if not self._pending:
            return
        conn = self._connection()
        rows, deleted_at = self._rows, self._deleted_at
        self._rows, self._deleted_at, self._pending = {}, 0, 0
        cur = self._cur
        try:
            cur.execute("BEGIN")
            cur.executemany(_PUT, [(*k, *row) for k, row in rows.items() if row is not None])
            gone = [k for k, row in rows.items() if row is None]
            if gone:
                cur.executemany(_DELETE, gone)
            if deleted_at:
                cur.execute(_SET_REVISION, (deleted_at,))
            cur.execute("COMMIT")
        except sqlite3.Error as e:
            self._abandon(conn)
            raise InternalError.of(f"cannot commit the journal {self.path}: {e}") from e

    def _abandon(self, conn: sqlite3.Connection) -> None:
        self._conn = None
        try:
            if conn.in_transaction:
                self._cur.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        finally:
            conn.close()

    def iter_rows(self) -> Iterator[tuple[str, str, str, str, int]]:
        """(group, kind, namespace, name, resourceVersion) of every stored row, for inspection and tests."""
        yield from self._connection().execute("SELECT grp, kind, namespace, name, rv FROM objects")

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return self._conn is None

    def close(self) -> None:
        """Commit what waits, checkpoint the WAL into the database file and release the lock; idempotent."""
        if self._conn is None:
            return
        try:
            self.flush()
        finally:
            conn, self._conn = self._conn, None
            if conn is not None:
                try:
                    self._cur.close()
                finally:
                    conn.close()
