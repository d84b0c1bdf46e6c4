"""`MemoryStore`: the in-process cluster state with API-server semantics (the simulation's etcd + apiserver).

`MemoryStore(...)` lives in memory only (the simulator). `MemoryStore.open(data_dir, ...)` is the same store made
durable by a `berth.store.journal.Journal` (``data_dir/state.db``, SQLite in WAL mode): every committed write is
journaled before it returns, and opening an existing directory recovers every object and the revision.

Objects are wire-form dicts. Stored dicts are IMMUTABLE once committed: reads, writes and watch events hand out
the store's own dicts, and successive versions of an object may share unchanged sub-dicts. Never mutate them;
deep-copy (`copy_object`) to derive a modified version. Writes take a private deep copy of their input.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from berth.api.deletion import delete_option_causes, deletion_finalizers
from berth.api.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    InternalError,
    Invalid,
    NotFound,
    ResourceExpired,
    StatusError,
    qualified_resource,
)
from berth.api.labels import LabelSelectorError, Selector, parse_selector
from berth.api.watch import ADDED, DELETED, MODIFIED, ResourceKey, Watch, WatchEvent
from berth.clock import Clock, SimClock
from berth.store.eviction import evict as evict_pod
from berth.store.fieldselector import FieldSelector, compile_field_selector
from berth.store.journal import Journal, Row
from berth.store.keys import KindInfoLike, KindResolver, api_kinds_resolver, key_of
from berth.store.mergepatch import merge_patch
from berth.store.objcopy import copy_object

__all__ = ["DEFAULT_EPOCH", "LIST_TOO_OLD", "AdmissionFn", "MemoryStore", "Validator", "status_blind"]

LIST_TOO_OLD = "The resourceVersion for the provided list is too old."
"""kube-apiserver's message (410 Expired) for a list read at a revision etcd has compacted."""

Obj = dict[str, Any]
_Objects = list[Obj]
AdmissionFn = Callable[[str, Obj, Obj | None], Obj]
"""(operation "CREATE"/"UPDATE", new object (a private copy), old object or None) → object to write."""
_STATUS_BLIND = "berth_status_blind"
_KINDS = "berth_admission_kinds"


def _selectors(
    label_selector: str | Selector | None, field_selector: str | None
) -> tuple[Selector | None, FieldSelector | None]:
    """The parsed selectors of a list (BadRequest for bad ones)."""
    if isinstance(label_selector, str):
        try:
            label_selector = parse_selector(label_selector)
        except LabelSelectorError as e:
            raise BadRequest(f"unable to parse labelSelector: {e}") from None
    return label_selector, compile_field_selector(field_selector) if field_selector else None


# a random 128-bit number made a version-4 RFC 4122 uuid: the version nibble 4, the variant bits 10
_UUID4_KEEP = ~(0xF000 << 64) & ~(0xC000 << 48)
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)


def _matching(items: list[Obj], labels: Selector | None, fields: FieldSelector | None) -> list[Obj]:
    """The `items` both selectors select."""
    if labels is not None and not labels.is_everything():
        matches = labels.matches
        items = [o for o in items if matches(o["metadata"].get("labels") or {})]
    if fields is not None and not fields.is_everything():
        items = [o for o in items if fields.matches(o)]
    return items


def status_blind(fn: AdmissionFn) -> AdmissionFn:
    """Mark an admission hook that changes nothing on a status-subresource write (as kube's admission plugins
    that return at once for a subresource): the store does not run it there, nor copy the object for it."""
    setattr(fn, _STATUS_BLIND, True)
    return fn


def admits_kinds(*kinds: str) -> Callable[[AdmissionFn], AdmissionFn]:
    """Mark an admission hook that changes or refuses only objects of the given kinds (``kind`` values): the
    store runs it for those alone."""

    def mark(fn: AdmissionFn) -> AdmissionFn:
        setattr(fn, _KINDS, frozenset(kinds))
        return fn

    return mark


Validator = Callable[[Mapping[str, Any]], None]
"""Raises a ValueError (berth.api.errors.InvalidObjectError: .path, .message) for an invalid object."""

DEFAULT_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
_POD: ResourceKey = ("", "Pod")
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
_MAX_GENERATE_BASE = 58  # 63 - 5 random chars
_NO_RESOURCE = "the server could not find the requested resource"
_KEEP: Any = object()
"""`_update_status`: keep the stored managedFields."""
STATUS_VALIDATED_KINDS: frozenset[ResourceKey] = frozenset(
    {
        ("", "Node"),
        ("scheduling.x-k8s.io", "ElasticQuota"),
        ("scheduling.sigs.k8s.io", "ElasticQuota"),
        ("scheduling.x-k8s.io", "PodGroup"),
        ("scheduling.sigs.k8s.io", "PodGroup"),
        ("scheduling.koordinator.sh", "PodMigrationJob"),
    }
)
"""Kinds whose validation (`berth.api.validation`) reads ``status``. A status write of any other kind changes
nothing that validation reads (the rest of the object is kept as stored, and was validated when written), so,
as kube's status strategies validate only the status, the store does not validate such a write again."""


def _api_validator() -> Validator | None:
    """berth.api.validation.validate_object, or None when that module is unavailable."""
    try:
        from berth.api.validation import validate_object
    except ImportError:  # pragma: no cover - the api layer is always present in a full install
        return None

    def validate(obj: Mapping[str, Any]) -> None:
        validate_object(obj)

    return validate


def _copy_sharing(value: Any, stored: Any) -> Any:
    """A private deep copy of `value` (a status being written) except where it holds the very dicts and lists of
    `stored` (the stored version at the same place): those are immutable and shared as they are, as successive
    versions of an object share unchanged parts (a writer usually keeps most of the stored status)."""
    if value is stored:
        return value
    if type(value) is not dict or type(stored) is not dict:
        return copy_object({"v": value})["v"]
    out: dict[str, Any] = {}
    for k, v in value.items():
        s = stored.get(k)
        if v is s or type(v) is str or type(v) is int:
            out[k] = v
        elif type(v) is dict and type(s) is dict:
            out[k] = _copy_sharing(v, s)
        else:
            out[k] = copy_object({"v": v})["v"]
    return out


class MemoryStore:
    """In-memory `Store`: a global revision, per-kind object maps, a bounded watch history and hooks.

    Deterministic: with the same `seed`, `clock` readings and call sequence, uids, generated names,
    resourceVersions and timestamps are identical.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        clock: Clock | None = None,
        epoch: datetime = DEFAULT_EPOCH,
        kinds: KindResolver | None = None,
        validate: Validator | Literal["auto"] | None = "auto",
        history_size: int = 100_000,
    ) -> None:
        """Create an empty store.

        `clock.now()` (seconds since `epoch`) stamps timestamps (default: a SimClock at 0). `kinds` resolves
        (group, kind) to kind facts (default: berth.api.kinds). `validate` checks objects before they are
        written ("auto": berth.api.validation.validate_object; None: no validation). `history_size` bounds
        the events kept for resuming watches.
        """
        self._clock: Clock = clock if clock is not None else SimClock()
        self._epoch = epoch if epoch.tzinfo is not None else epoch.replace(tzinfo=UTC)
        self._epoch_seconds = self._epoch.timestamp()
        self._kinds: KindResolver = kinds if kinds is not None else api_kinds_resolver
        self._validate: Validator | None = _api_validator() if validate == "auto" else validate
        self._status_only_kinds: frozenset[ResourceKey] | None = (
            STATUS_VALIDATED_KINDS if validate == "auto" else None
        )  # None: a caller's validator may read anything, so every status write is validated
        self._seed = seed
        self._uid_rng = random.Random(f"berth-uid-{seed}")
        self._kept_uids: set[str] = set()
        self._name_rng = random.Random(f"berth-name-{seed}")
        self._dry_rng = random.Random(f"berth-dry-run-{seed}")
        self._dry_depth = 0
        self._journal: Journal | None = None
        self._recovered = False
        self._rev = 0
        self._objects: dict[ResourceKey, dict[tuple[str, str], Obj]] = {}
        self._sorted: dict[ResourceKey, list[tuple[str, str]]] = {}
        self._info_cache: dict[ResourceKey, KindInfoLike] = {}
        self._history: deque[WatchEvent] = deque(maxlen=max(0, history_size))
        self._watches: tuple[Watch, ...] = ()
        self._subs: tuple[tuple[ResourceKey | None, Callable[[WatchEvent], None]], ...] = ()
        self._queue: deque[WatchEvent] = deque()
        self._dispatching = False
        self._admission: tuple[AdmissionFn, ...] = ()
        self._status_admission: tuple[AdmissionFn, ...] = ()  # the hooks not marked `status_blind`
        self._admission_by_kind: dict[str, tuple[AdmissionFn, ...]] = {}  # the hooks each kind runs
        self._ts_sec = -(2**62)
        self._ts_str = ""
        self._last_nanos = 0

    # --- durability ---------------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        data_dir: Path | str,
        *,
        seed: int = 0,
        clock: Clock | None = None,
        epoch: datetime = DEFAULT_EPOCH,
        kinds: KindResolver | None = None,
        validate: Validator | Literal["auto"] | None = "auto",
        history_size: int = 100_000,
        fsync: bool = False,
        group_commit: bool = False,
    ) -> MemoryStore:
        """A durable store journaled to ``data_dir/state.db`` (created with the directory when missing).

        The other arguments are the constructor's. Every committed write (create, update, update_status,
        patch, delete, bind, evict: all pass through one commit path) is written to SQLite in one transaction
        before the method returns; see `berth.store.journal` for why ``synchronous=NORMAL`` (the default) keeps
        every acknowledged write across ``kill -9``, and ``fsync=True`` for power-loss durability. With
        `group_commit` the writes instead wait in one transaction until `flush()` (the owner flushes before it
        acknowledges anything: `berth.store.journal`).

        When the directory holds state, every object is restored as it was stored (resourceVersion, uid,
        timestamps), `revision` is the stored revision (the next write gets revision + 1) and `recovered` is
        True. Recovery writes directly into the maps: validation and admission hooks do not run (register hooks
        after `open`), no watch event is emitted, and the watch history starts empty, so a watch from an older
        resourceVersion raises ResourceExpired (410) and the client relists. After recovery the uid and name
        generators are reseeded from (`seed`, recovered revision): each revision is reached by exactly one
        committed write, so every start continues with a stream that no earlier start used, uids stay
        distinct from the recovered ones (128 random bits each), and generated names are in addition checked
        against the stored objects. A fresh directory uses the plain `seed` streams, like `MemoryStore(seed=)`.

        Raises `berth.store.journal.DataDirInUse` when another process has the directory open and
        `berth.store.journal.JournalError` when the file is not a usable journal. Call `close()` when done.
        """
        journal = Journal.open(Path(data_dir), fsync=fsync, group_commit=group_commit)
        try:
            store = cls(
                seed=seed, clock=clock, epoch=epoch, kinds=kinds, validate=validate, history_size=history_size
            )
            revision, rows = journal.load()
            store._recover(revision, rows)
        except BaseException:
            journal.close()
            raise
        store._journal = journal
        return store

    def _recover(self, revision: int, rows: list[Row]) -> None:
        """Install recovered objects and the revision (no validation, admission or events)."""
        objects = self._objects
        for key, ns, name, obj in rows:
            bucket = objects.get(key)
            if bucket is None:
                bucket = objects[key] = {}
            bucket[(ns, name)] = obj
        self._rev = revision
        self._recovered = revision > 0
        if revision > 0:
            self._uid_rng = random.Random(f"berth-uid-{self._seed}-rev-{revision}")
            self._name_rng = random.Random(f"berth-name-{self._seed}-rev-{revision}")

    @property
    def recovered(self) -> bool:
        """True when `open` found earlier state (revision > 0): skip one-time bootstrap such as creating the
        built-in PriorityClasses (create what is missing, tolerating AlreadyExists, to survive a crash in the
        middle of a bootstrap)."""
        return self._recovered

    @property
    def durable(self) -> bool:
        """Whether writes are journaled (an open store from `open` that is not closed)."""
        return self._journal is not None and not self._journal.closed

    def close(self) -> None:
        """Close the journal (checkpoint, release the data directory); later writes raise InternalError.

        Reads keep working. A no-op for a memory-only store and when already closed.
        """
        if self._journal is not None:
            self._journal.close()

    def flush(self) -> None:
        """Commit the journal's waiting writes (group commit, see `open`); a no-op otherwise. InternalError
        when the commit fails (the journal is closed then)."""
        if self._journal is not None and self._journal.pending:
            self._journal.flush()

    def __enter__(self) -> MemoryStore:
        """Context manager support: ``with MemoryStore.open(dir) as store: ...`` closes the journal on exit."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the journal."""
        self.close()

    # --- small helpers ------------------------------------------------------------------------------------

    @property
    def revision(self) -> int:
        """The resourceVersion of the latest write (0 before any write)."""
        return self._rev

    @property
    def clock(self) -> Clock:
        """The clock stamping timestamps."""
        return self._clock

    def _info(self, key: ResourceKey) -> KindInfoLike:
        info = self._info_cache.get(key)
        if info is None:
            try:
                info = self._kinds(key[0], key[1])
            except KeyError:
                raise NotFound(_NO_RESOURCE, group=key[0], kind=key[1]) from None
            self._info_cache[key] = info
        return info

    def _timestamp(self, offset: float = 0.0) -> str:
        """RFC 3339 (whole seconds, UTC) for now + `offset` seconds."""
        sec = math.floor(self._clock.now() + offset)
        if sec != self._ts_sec:
            self._ts_sec = sec
            self._ts_str = (self._epoch + timedelta(seconds=sec)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return self._ts_str

    def timestamp(self, at: float | None = None) -> str:
        """RFC 3339 (whole seconds, UTC) of clock time ``at`` (default: now), as objects carry it."""
        if at is None:
            return self._timestamp()
        return (self._epoch + timedelta(seconds=math.floor(at))).strftime("%Y-%m-%dT%H:%M:%SZ")

    def unix_time(self) -> float:
        """Seconds since the Unix epoch at the clock's current time."""
        return self._epoch_seconds + self._clock.now()

    def now_nanos(self) -> int:
        """Nanoseconds since the Unix epoch at the clock's current time, strictly increasing from call to call
        (names derived from it, such as Events', never collide, however many fall on one virtual instant)."""
        nanos = max(int((self._epoch_seconds + self._clock.now()) * 1_000_000_000), self._last_nanos + 1)
        self._last_nanos = nanos
        return nanos

    def _new_uid(self, dry_run: bool = False) -> str:
        """A random (seeded) version-4 uid that no object loaded with its own uid has: a snapshot that an
        earlier run with the same seed wrote holds the uids this generator is about to produce. A dry run
        draws from its own stream, so it changes nothing that later real writes generate."""
        rng = self._dry_rng if dry_run else self._uid_rng
        while True:
            h = ((rng.getrandbits(128) & _UUID4_KEEP) | _UUID4_SET).to_bytes(16, "big").hex()
            uid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
            if uid not in self._kept_uids:
                return uid

    def _generate_name(
        self, base: str, bucket: Mapping[tuple[str, str], Obj], ns: str, dry_run: bool = False
    ) -> str:
        base = base[:_MAX_GENERATE_BASE]
        choices = (self._dry_rng if dry_run else self._name_rng).choices
        while True:
            name = base + "".join(choices(_NAME_CHARS, k=5))
            if (ns, name) not in bucket:
                return name

    def _check_valid(self, info: KindInfoLike, obj: Obj) -> None:
        if self._validate is None:
            return
        try:
            self._validate(obj)
        except StatusError:
            raise
        except ValueError as e:
            path = getattr(e, "path", "")
            message = getattr(e, "message", None) or str(e)
            name = (obj.get("metadata") or {}).get("name") or ""
            raise Invalid.of(info.kind, info.group, name, [(path, message)]) from e

    def _status_validated(self, key: ResourceKey) -> bool:
        """Whether a status write of kind `key` is validated (see STATUS_VALIDATED_KINDS); never a pod's, whose
        status holds nothing validation checks."""
        if key == _POD:
            return False
        kinds = self._status_only_kinds
        return kinds is None or key in kinds

    def _admit(
        self,
        op: str,
        new: Obj,
        old: Obj | None,
        dry_run: bool = False,
        hooks: tuple[AdmissionFn, ...] | None = None,
    ) -> Obj:
        if hooks is None:
            kind = str(new.get("kind"))
            hooks = self._admission_by_kind.get(kind)
            if hooks is None:
                hooks = self._admission_by_kind[kind] = tuple(
                    [fn for fn in self._admission if kind in getattr(fn, _KINDS, (kind,))]
                )
        if dry_run:
            self._dry_depth += 1
        try:
            for fn in hooks:
                out = fn(op, new, old)
                if out is not None:
                    new = out
        finally:
            if dry_run:
                self._dry_depth -= 1
        return new

    @property
    def in_dry_run(self) -> bool:
        """True while a dry-run write runs its admission hooks: a hook with side effects skips them (as kube's
        admission plugins consult ``IsDryRun()``), and any write a hook makes meanwhile is a dry run too."""
        return self._dry_depth > 0

    def _locate(self, key: ResourceKey, namespace: str | None, name: str) -> tuple[KindInfoLike, str, Obj]:
        info = self._info(key)
        ns = (namespace or "") if info.namespaced else ""
        bucket = self._objects.get(key)
        obj = bucket.get((ns, name)) if bucket is not None else None
        if obj is None:
            raise NotFound.of(info.plural, info.group, name)
        return info, ns, obj

    @staticmethod
    def _identity(info: KindInfoLike, obj: Mapping[str, Any]) -> tuple[str, str]:
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping):
            raise BadRequest(f"{info.kind}: metadata must be an object")
        name = meta.get("name") or ""
        ns = (meta.get("namespace") or "default") if info.namespaced else ""
        return ns, name

    # --- commit & events ----------------------------------------------------------------------------------

    def _commit(self, etype: str, key: ResourceKey, ns: str, name: str, obj: Obj) -> Obj:
        """Stamp the next revision into `obj` (whose metadata dict is private) and store/remove it.

        With a journal the write is made durable first: when that fails (InternalError) nothing changes.
        Inside a dry run (a write an admission hook makes meanwhile) nothing is committed: `obj` is returned.
        """
        if self._dry_depth:
            return obj
        rev = self._rev + 1
        obj["metadata"]["resourceVersion"] = str(rev)
        if self._journal is not None:
            if etype == DELETED:
                self._journal.delete(key, ns, name, rev)
            else:
                self._journal.put(key, ns, name, obj, rev)
        self._rev = rev
        bucket = self._objects.get(key)
        if bucket is None:
            bucket = self._objects[key] = {}
        previous = None
        if etype == DELETED:
            previous = bucket.pop((ns, name))
            self._sorted.pop(key, None)
        else:
            if etype == ADDED:
                self._sorted.pop(key, None)
            else:
                previous = bucket.get((ns, name))
            bucket[(ns, name)] = obj
        self._emit(WatchEvent(etype, obj, key, rev, previous))
        return obj

    def _emit(self, ev: WatchEvent) -> None:
        self._history.append(ev)
        for w in self._watches:
            if w.wants(ev):
                w.push(ev)
        if not self._subs:
            return
        self._queue.append(ev)
        if self._dispatching:
            return  # a subscriber wrote from inside its callback: the outer loop delivers this event next
        self._dispatching = True
        try:
            queue = self._queue
            while queue:
                event = queue.popleft()
                for k, cb in self._subs:
                    if k is None or k == event.key:
                        cb(event)
        finally:
            self._dispatching = False

    # --- writes -------------------------------------------------------------------------------------------

    def add_admission(self, fn: AdmissionFn) -> Callable[[], None]:
        """Register an admission hook run on CREATE/UPDATE before validation; returns a remover.

        The hook gets (operation, new object (a private copy it may mutate), old object or None) and returns
        the object to write, or raises a StatusError (e.g. Forbidden/Invalid) to refuse: nothing is written.
        A hook marked `status_blind` is not run on status-subresource writes; one marked `admits_kinds` only on
        objects of those kinds.
        """
        self._admission = (*self._admission, fn)
        if not getattr(fn, _STATUS_BLIND, False):
            self._status_admission = (*self._status_admission, fn)
        self._admission_by_kind.clear()

        def remove() -> None:
            self._admission = tuple(f for f in self._admission if f is not fn)
            self._status_admission = tuple(f for f in self._status_admission if f is not fn)
            self._admission_by_kind.clear()

        return remove

    def create(
        self,
        obj: Obj,
        *,
        keep_identity: bool = False,
        dry_run: bool = False,
        validated: bool = False,
        owned: bool = False,
    ) -> Obj:
        """Create an object and return the stored (immutable) version.

        Defaults the namespace to "default" for namespaced kinds (cleared for cluster-scoped), fills
        metadata.name from generateName + 5 random chars, assigns uid, resourceVersion, creationTimestamp
        and generation 1 (when there is a spec). Raises AlreadyExists, Invalid, NotFound (unknown kind) or
        whatever an admission hook raises; on error nothing is written.

        `keep_identity` keeps a given ``metadata.uid``, ``creationTimestamp`` and deletion fields (objects loaded
        as the cluster was: a snapshot, a scenario's initial objects); a uid given twice is Invalid.

        `dry_run` (kube's ``dryRun=All``) runs admission (hooks see `in_dry_run`), validation and the
        AlreadyExists check as a real create and returns the object as it would be stored, with a uid and
        creationTimestamp but no resourceVersion, as kube-apiserver answers; nothing is committed, journaled or
        watched, and the uid and generated name come from a dry-run stream of their own, so later real writes
        get the same uids and names as without the dry run.

        `validated`: the caller has validated `obj` itself (a manifest loader): the store does not validate it
        again (admission, the AlreadyExists check and everything else run as usual).

        `owned`: the caller built `obj` for this write, shares none of its dicts and lists with anything, and
        hands it over (an event recorder's Event): the store keeps it instead of a private copy.
        """
        dry_run = dry_run or self._dry_depth > 0
        if not isinstance(obj, Mapping):
            raise BadRequest("the object to create must be a JSON object")
        key = key_of(obj)
        info = self._info(key)
        new = obj if owned and type(obj) is dict else copy_object(obj)
        meta = new.get("metadata")
        if meta is None:
            meta = new["metadata"] = {}
        elif not isinstance(meta, dict):
            raise BadRequest(f"{info.kind}: metadata must be an object")
        if info.namespaced:
            if not meta.get("namespace"):
                meta["namespace"] = "default"
        else:
            meta.pop("namespace", None)
        bucket = self._objects.get(key) or {}
        if not meta.get("name"):
            base = meta.get("generateName")
            if not base or not isinstance(base, str):
                raise Invalid.of(
                    info.kind,
                    info.group,
                    "",
                    [("metadata.name", "Required value: name or generateName is required")],
                )
            meta["name"] = self._generate_name(base, bucket, meta.get("namespace", ""), dry_run)
        given_uid = str(meta.get("uid") or "") if keep_identity else ""
        given_created = meta.get("creationTimestamp") if keep_identity else None
        given_deletion = (
            (meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds"))
            if keep_identity
            else (None, None)
        )
        for system in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"):
            meta.pop(system, None)
        meta.pop("deletionGracePeriodSeconds", None)
        if "spec" in new:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        # the uid is known to admission and validation, as kube-apiserver fills the system fields first (a
        # Job's generated selector names its uid)
        uid = given_uid or self._new_uid(dry_run)
        meta["uid"] = uid
        if self._admission:
            new = self._admit("CREATE", new, None, dry_run)
        if not validated:
            self._check_valid(info, new)
        ns, name = self._identity(info, new)
        if (ns, name) in bucket:
            raise AlreadyExists.of(info.plural, info.group, name)
        meta = new["metadata"]
        if given_uid:
            if given_uid in self._kept_uids:
                raise Invalid.of(
                    info.kind, info.group, name, [("metadata.uid", f'Duplicate value: "{given_uid}"')]
                )
            if not dry_run:
                self._kept_uids.add(given_uid)
        meta["uid"] = uid
        if isinstance(given_deletion[0], str) and given_deletion[0]:
            # a terminating object, as it was read: it stays terminating
            meta["deletionTimestamp"] = given_deletion[0]
            if given_deletion[1] is not None:
                meta["deletionGracePeriodSeconds"] = given_deletion[1]
        meta["creationTimestamp"] = (
            given_created if isinstance(given_created, str) and given_created else self._timestamp()
        )
        if dry_run:
            return new
        return self._commit(ADDED, key, ns, name, new)

    def load(self, objects: Iterable[Obj], *, validated: bool = False) -> None:
        """Create `objects` as a cluster had them (`create` with ``keep_identity``), in the order given;
        `validated` skips the validation their loader already did (manifests, an API server's objects)."""
        saved = self._validate
        if validated:
            self._validate = None
        try:
            for obj in objects:
                self.create(obj, keep_identity=True)
        finally:
            self._validate = saved

    def update(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        """Replace an object (metadata/spec; status only for kinds without a status subresource).

        A non-empty metadata.resourceVersion must equal the stored one (else Conflict); empty means
        unconditional. uid, creationTimestamp and deletion fields are kept from the stored object;
        generation increases when spec changes. A no-op update writes nothing and returns the stored object.
        When the last finalizer is removed from an object whose deletion is due, the object is deleted.
        `dry_run`: every check (admission, validation, Conflict) as a real update, and the object as it
        would be stored (with the stored resourceVersion) returned; nothing is committed.
        """
        key, info, ns, name, old = self._stored_for_write(obj)
        self._check_rv(info, name, obj["metadata"].get("resourceVersion"), old)
        return self._update(key, info, ns, old, copy_object(obj), dry_run or self._dry_depth > 0)

    def _stored_for_write(self, obj: Obj) -> tuple[ResourceKey, KindInfoLike, str, str, Obj]:
        """The kind, namespace, name and stored version of the object an update names."""
        if not isinstance(obj, Mapping):
            raise BadRequest("the object to update must be a JSON object")
        key = key_of(obj)
        info = self._info(key)
        ns, name = self._identity(info, obj)
        info, ns, old = self._locate(key, ns, name)
        return key, info, ns, name, old

    def _check_rv(self, info: KindInfoLike, name: str, rv: object, old: Obj) -> None:
        if rv and rv != old["metadata"].get("resourceVersion"):
            raise Conflict.of(info.plural, info.group, name)

    def _update(
        self, key: ResourceKey, info: KindInfoLike, ns: str, old: Obj, new: Obj, dry_run: bool = False
    ) -> Obj:
        """Finish an update of `old` to `new` (a private top-level dict and metadata dict); with `dry_run`
        return the object as it would be written instead of committing it."""
        if self._admission:
            new = self._admit("UPDATE", new, old, dry_run)
        meta = new.get("metadata")
        if not isinstance(meta, dict):
            raise BadRequest(f"{info.kind}: metadata must be an object")
        old_meta = old["metadata"]
        name = old_meta["name"]
        if meta.get("name") != name:
            raise BadRequest(
                f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})"
            )
        if info.namespaced:
            if not meta.get("namespace"):
                meta["namespace"] = ns
            elif meta["namespace"] != ns:
                raise BadRequest(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
        else:
            meta.pop("namespace", None)
        uid = meta.get("uid")
        if not uid:
            meta["uid"] = old_meta["uid"]
        elif uid != old_meta["uid"]:
            raise Invalid.of(
                info.kind,
                info.group,
                name,
                [("metadata.uid", f'Invalid value: "{uid}": field is immutable')],
            )
        for kept in ("creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
            if kept in old_meta:
                meta[kept] = old_meta[kept]
            else:
                meta.pop(kept, None)
        if info.has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        generation = old_meta.get("generation")
        if generation is None:
            meta.pop("generation", None)
        else:
            meta["generation"] = generation + 1 if new.get("spec") != old.get("spec") else generation
        self._check_valid(info, new)
        meta["resourceVersion"] = old_meta.get("resourceVersion")
        if new == old:
            return old
        if dry_run:
            return new
        if (
            old_meta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and old_meta.get("deletionGracePeriodSeconds") == 0
        ):
            return self._commit(DELETED, key, ns, name, new)
        return self._commit(MODIFIED, key, ns, name, new)

    def update_status(self, obj: Obj, *, dry_run: bool = False, owned: bool = False) -> Obj:
        """Replace only the status of an object (the status subresource); same concurrency rule as update.

        The rest of the object is kept as stored, except ``metadata.managedFields`` when `obj` carries that
        key (the API server's field manager records status writes there; an empty list or null removes it).
        `dry_run`: every check as a real write, the object as it would be stored returned, nothing committed.
        `owned`: the caller built ``obj["status"]`` for this write from new dicts and lists and parts of the
        stored object, and hands it over: the store keeps it instead of a private copy.
        """
        key, info, ns, name, old = self._stored_for_write(obj)
        if not info.has_status:
            raise NotFound(_NO_RESOURCE, name=name, group=info.group, kind=info.plural)
        self._check_rv(info, name, obj["metadata"].get("resourceVersion"), old)
        status = obj.get("status")
        managed = obj["metadata"].get("managedFields", _KEEP)
        if managed is old["metadata"].get("managedFields"):
            managed = _KEEP  # the stored list itself, as components pass it back
        elif managed is not _KEEP:
            managed = copy_object({"m": managed})["m"] or None
        return self._update_status(
            key,
            info,
            ns,
            old,
            status if owned and type(status) is dict else _copy_sharing(status, old.get("status")),
            "status" in obj,
            dry_run or self._dry_depth > 0,
            managed,
        )

    def bind(
        self,
        namespace: str,
        name: str,
        node_name: str,
        *,
        uid: str | None = None,
        annotations: Mapping[str, str] | None = None,
    ) -> Obj:
        """The pods/binding subresource: set spec.nodeName and condition PodScheduled=True in one write.

        ``annotations`` (the Binding's metadata.annotations) are copied onto the pod, as the API server does.

        Conflict when the pod is already assigned, is being deleted, or (with ``uid``) is another pod.
        """
        _, ns, old = self._locate(_POD, namespace, name)
        meta = old["metadata"]
        if uid and meta.get("uid") != uid:
            raise Conflict(
                f'Operation cannot be fulfilled on pods/binding "{name}": Precondition failed: UID in '
                f"precondition: {uid}, UID in object meta: {meta.get('uid')}",
                name=name,
                group="",
                kind="pods",
            )
        spec = old.get("spec") or {}
        if spec.get("nodeName"):
            raise Conflict(
                f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is already assigned to '
                f'node "{spec["nodeName"]}"',
                name=name,
                group="",
                kind="pods",
            )
        if meta.get("deletionTimestamp"):
            raise Conflict(
                f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is being deleted, '
                "cannot be assigned to a host",
                name=name,
                group="",
                kind="pods",
            )
        new = dict(old)
        new["metadata"] = dict(meta)
        if annotations:
            new["metadata"]["annotations"] = {**(meta.get("annotations") or {}), **annotations}
        new["spec"] = {**spec, "nodeName": node_name}
        status = dict(old.get("status") or {})
        now = self._timestamp()
        cond = {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        status["conditions"] = [*conditions, cond]
        new["status"] = status
        return self._commit(MODIFIED, _POD, ns, name, new)

    def evict(
        self,
        namespace: str,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
        avoid: bool = False,
    ) -> Obj:
        """The pods/eviction subresource (`berth.store.eviction.evict`): PDB-checked deletion of the pod."""
        return evict_pod(
            self, namespace, name, grace_period_seconds=grace_period_seconds, dry_run=dry_run, avoid=avoid
        )

    def all_objects(self) -> list[Obj]:
        """Every stored object sorted by kind, namespace and name (the order ``berth simulate -o json`` uses)."""
        out: list[Obj] = []
        for key in sorted(self._objects, key=lambda k: (k[1], k[0])):
            bucket = self._objects[key]
            out.extend(bucket[k] for k in sorted(bucket))
        return out

    def _update_status(
        self,
        key: ResourceKey,
        info: KindInfoLike,
        ns: str,
        old: Obj,
        status: Any,
        present: bool,
        dry_run: bool = False,
        managed: Any = _KEEP,
    ) -> Obj:
        """Write `old` with its status replaced by `status` (private) and, unless `managed` is _KEEP, its
        managedFields by `managed` (None removes them); everything else is kept. `dry_run`: return, not commit."""
        new = dict(old)
        meta = new["metadata"] = dict(old["metadata"])
        if managed is not _KEEP:
            if managed:
                meta["managedFields"] = managed
            else:
                meta.pop("managedFields", None)
        if present:
            new["status"] = status
        else:
            new.pop("status", None)
        if self._status_admission:
            admitted = self._admit("UPDATE", copy_object(new), old, dry_run, self._status_admission)
            if "status" in admitted:
                new["status"] = admitted["status"]
            else:
                new.pop("status", None)
        if new == old:
            return old
        if self._status_validated(key):
            self._check_valid(info, new)
        if dry_run:
            return new
        return self._commit(MODIFIED, key, ns, old["metadata"]["name"], new)

    def patch(
        self,
        key: ResourceKey,
        namespace: str,
        name: str,
        patch: dict[str, Any],
        *,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """Apply a JSON merge patch (RFC 7386: null deletes) to the object, or to its status with
        subresource="status". A metadata.resourceVersion in the patch is a precondition (Conflict).
        `dry_run`: every check as a real patch, the patched object returned, nothing committed."""
        dry_run = dry_run or self._dry_depth > 0
        info, ns, old = self._locate(key, namespace, name)
        if not isinstance(patch, Mapping):
            raise BadRequest("invalid JSON merge patch: the patch must be a JSON object")
        merged = merge_patch(old, dict(patch))
        merged_meta = merged.get("metadata")
        rv = merged_meta.get("resourceVersion") if isinstance(merged_meta, Mapping) else None
        self._check_rv(info, name, rv, old)
        if subresource is None:
            if self._admission:
                merged = copy_object(merged)
            elif isinstance(merged_meta, dict):
                merged["metadata"] = dict(merged_meta)
            return self._update(key, info, ns, old, merged, dry_run)
        if subresource != "status" or not info.has_status:
            raise NotFound(_NO_RESOURCE, name=name, group=info.group, kind=info.plural)
        return self._update_status(key, info, ns, old, merged.get("status"), "status" in merged, dry_run)

    def delete(
        self,
        key: ResourceKey,
        namespace: str,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        resource_version: str | None = None,
        uid: str | None = None,
        propagation: str | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """Delete an object, or start its graceful deletion; returns the object's final state.

        Pods are graceful: the period is `grace_period_seconds`, else spec.terminationGracePeriodSeconds,
        else 30 (negative → 1), and 0 for pods that are unscheduled or Succeeded/Failed. A period > 0 sets
        metadata.deletionTimestamp (now + period) and deletionGracePeriodSeconds (MODIFIED); a later delete may
        only shorten it, and a period of 0 removes the pod (DELETED). Objects with finalizers get
        deletionTimestamp (grace 0) and stay until an update removes the last finalizer. Other objects are
        removed at once. When the object is removed, the returned dict is the DELETED event's object.

        `propagation` (``Background``, ``Foreground``, ``Orphan`` or None) sets the garbage collector's
        finalizers as kube-apiserver does (`berth.api.deletion.deletion_finalizers`): ``Foreground`` adds
        ``foregroundDeletion``, ``Orphan`` adds ``orphan``, so the object stays (deletionTimestamp, grace 0)
        until the garbage collector has dealt with its dependents; an unsupported value is Invalid (422). While
        a pod's graceful deletion is pending its finalizers are not changed; an object already marked with
        grace 0 has them recomputed (a Background delete of an object waiting in Foreground removes it).
        `uid` and `resource_version` are preconditions (Conflict). `dry_run`: every check, the final state
        returned, nothing committed.
        """
        info, ns, old = self._locate(key, namespace, name)
        causes = delete_option_causes(propagation)
        if causes:
            raise Invalid.of("DeleteOptions", "meta.k8s.io", "", causes)
        old_meta = old["metadata"]
        self._check_delete_preconditions(info, name, old_meta, uid, resource_version)
        if dry_run or self._dry_depth:
            self._dry_depth += 1
            try:
                return self._delete(key, ns, name, old, grace_period_seconds, propagation)
            finally:
                self._dry_depth -= 1
        return self._delete(key, ns, name, old, grace_period_seconds, propagation)

    @staticmethod
    def _check_delete_preconditions(
        info: KindInfoLike, name: str, meta: Mapping[str, Any], uid: str | None, resource_version: str | None
    ) -> None:
        """rest.BeforeDelete's precondition checks (the resource named in the Conflict is the kind)."""
        cause = ""
        if uid and uid != meta.get("uid"):
            cause = (
                f"the UID in the precondition ({uid}) does not match the UID in record ({meta.get('uid')}). "
                "The object might have been deleted and then recreated"
            )
        elif resource_version and resource_version != meta.get("resourceVersion"):
            cause = (
                f"the ResourceVersion in the precondition ({resource_version}) does not match the "
                f"ResourceVersion in record ({meta.get('resourceVersion')}). The object might have been modified"
            )
        if cause:
            raise Conflict(
                f'Operation cannot be fulfilled on {qualified_resource(info.kind, info.group)} "{name}": {cause}',
                name=name,
                group=info.group,
                kind=info.kind,
            )

    def _delete(
        self, key: ResourceKey, ns: str, name: str, old: Obj, requested: int | None, propagation: str | None
    ) -> Obj:
        """kube's registry Store.Delete after the checks: graceful deletion (pods), then the finalizers."""
        old_meta = old["metadata"]
        deleting = old_meta.get("deletionTimestamp")
        current = old_meta.get("deletionGracePeriodSeconds")
        stamp: str | None = None  # the deletionTimestamp of a graceful deletion
        period = 0
        if key == _POD and deleting and current:
            # graceful deletion pending: only a shorter period changes anything, finalizers included
            if requested is None:
                return old
            period = requested if requested >= 0 else 1
            if period >= current:
                return old
            when = datetime.strptime(deleting, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            stamp = (when + timedelta(seconds=period - current)).strftime("%Y-%m-%dT%H:%M:%SZ")
        elif key == _POD and not deleting:
            period = self._pod_grace(old, requested)
            stamp = self._timestamp(period)
        finalizers = old_meta.get("finalizers") or []
        changed = deletion_finalizers(finalizers, propagation)
        pending = bool(changed if changed is not None else finalizers)
        if stamp is not None:
            if pending or period > 0:
                return self._mark(key, ns, name, old, stamp, period, changed, bump_generation=not deleting)
            return self._remove(key, ns, name, old, (stamp, 0))
        if pending:
            now = self._timestamp()
            keep = deleting if deleting and deleting <= now else now
            return self._mark(key, ns, name, old, keep, 0, changed, bump_generation=not deleting)
        return self._remove(key, ns, name, old, None)

    @staticmethod
    def _pod_grace(pod: Obj, requested: int | None) -> int:
        spec = pod.get("spec") or {}
        if requested is not None:
            period = requested
        else:
            configured = spec.get("terminationGracePeriodSeconds")
            period = 30 if configured is None else int(configured)
        if not spec.get("nodeName"):
            period = 0
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            period = 0
        return period if period >= 0 else 1

    def _mark(
        self,
        key: ResourceKey,
        ns: str,
        name: str,
        old: Obj,
        stamp: str,
        period: int,
        finalizers: list[str] | None = None,
        *,
        bump_generation: bool,
    ) -> Obj:
        """Write `old` with deletionTimestamp/deletionGracePeriodSeconds and, unless None, `finalizers` set
        (MODIFIED); `old` itself when that changes nothing."""
        new = dict(old)
        meta = new["metadata"] = dict(old["metadata"])
        meta["deletionTimestamp"] = stamp
        meta["deletionGracePeriodSeconds"] = period
        if finalizers is not None:
            if finalizers:
                meta["finalizers"] = finalizers
            else:
                meta.pop("finalizers", None)
        generation = meta.get("generation")
        if bump_generation and isinstance(generation, int) and generation > 0:
            meta["generation"] = generation + 1
        if new == old:
            return old
        return self._commit(MODIFIED, key, ns, name, new)

    def _remove(
        self, key: ResourceKey, ns: str, name: str, old: Obj, deletion: tuple[str, int] | None
    ) -> Obj:
        """Remove the object (DELETED); `deletion` stamps (deletionTimestamp, grace) on the final state."""
        final = dict(old)
        meta = final["metadata"] = dict(old["metadata"])
        if deletion is not None:
            meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"] = deletion
        return self._commit(DELETED, key, ns, name, final)

    # --- reads --------------------------------------------------------------------------------------------

    def get(self, key: ResourceKey, namespace: str, name: str) -> Obj:
        """The stored (immutable) object; namespace is ignored for cluster-scoped kinds. Raises NotFound."""
        return self._locate(key, namespace, name)[2]

    def list(
        self,
        key: ResourceKey,
        namespace: str | None = None,
        *,
        label_selector: str | Selector | None = None,
        field_selector: str | None = None,
    ) -> tuple[list[Obj], str]:
        """Matching (immutable) objects sorted by (namespace, name) and the list resourceVersion.

        `namespace` None or "" lists all namespaces. Bad selectors raise BadRequest.
        """
        info = self._info(key)
        label_selector, fsel = _selectors(label_selector, field_selector)
        bucket = self._objects.get(key)
        rv = str(self._rev)
        if not bucket:
            return [], rv
        order = self._sorted.get(key)
        if order is None:
            order = self._sorted[key] = sorted(bucket)
        if namespace and info.namespaced:
            items = [bucket[k] for k in order if k[0] == namespace]
        else:
            items = [bucket[k] for k in order]
        return _matching(items, label_selector, fsel), rv

    def list_at(
        self,
        key: ResourceKey,
        revision: int,
        namespace: str | None = None,
        *,
        label_selector: str | Selector | None = None,
        field_selector: str | None = None,
    ) -> tuple[_Objects, str]:
        """`list` as it read at `revision` (at most the current one), from the current objects and the watch
        history after `revision` taken back; ResourceExpired (kube's "The resourceVersion for the provided list
        is too old.") when the history no longer reaches back that far."""
        if revision >= self._rev:
            return self.list(key, namespace, label_selector=label_selector, field_selector=field_selector)
        info = self._info(key)
        label_selector, fsel = _selectors(label_selector, field_selector)
        history = self._history
        compacted = history[0].revision - 1 if history else self._rev
        if revision < compacted:
            raise ResourceExpired(LIST_TOO_OLD)
        state = dict(self._objects.get(key) or {})
        for ev in itertools.islice(reversed(history), self._rev - revision):
            if ev.key != key:
                continue
            meta = ev.object["metadata"]
            at = ((meta.get("namespace") or "") if info.namespaced else "", meta["name"])
            if ev.type == ADDED:
                state.pop(at, None)
            elif ev.previous is not None:
                state[at] = ev.previous
            else:  # pragma: no cover - every MODIFIED/DELETED this store emits carries its previous object
                raise InternalError.of(f"the history of {info.kind} {at[0]}/{at[1]} is incomplete")
        keys = sorted(k for k in state if not namespace or not info.namespaced or k[0] == namespace)
        return _matching([state[k] for k in keys], label_selector, fsel), str(revision)

    def __len__(self) -> int:
        """Total number of stored objects."""
        return sum(len(b) for b in self._objects.values())

    # --- watch & subscribe --------------------------------------------------------------------------------

    def watch(
        self,
        key: ResourceKey | None,
        *,
        resource_version: str | None = None,
        namespace: str | None = None,
    ) -> Watch:
        """A buffered stream of events for `key` (None: all kinds) in `namespace` (None/"": all).

        `resource_version` None/""/"0": first an ADDED event for every current object (in resourceVersion
        order), then live events. Otherwise the events after that revision (exclusive); a revision older than
        the kept history raises ResourceExpired (410). Initial events are buffered before `on_ready` can be
        set, so poll once after creating the watch.
        """
        if key is not None:
            self._info(key)
        w = Watch(key, namespace, self._drop_watch)
        buf: list[WatchEvent] = []
        if resource_version in (None, "", "0"):
            keys = [key] if key is not None else list(self._objects)
            current = [(k, o) for k in keys for o in self._objects.get(k, {}).values()]
            current.sort(key=lambda ko: int(ko[1]["metadata"]["resourceVersion"]))
            for k, o in current:
                ev = WatchEvent(ADDED, o, k, int(o["metadata"]["resourceVersion"]))
                if w.wants(ev):
                    buf.append(ev)
        else:
            try:
                since = int(resource_version)
            except ValueError:
                raise BadRequest(f'invalid resource version: "{resource_version}"') from None
            history = self._history
            compacted = history[0].revision - 1 if history else self._rev
            if since < compacted:
                raise ResourceExpired(f"too old resource version: {since} ({compacted})")
            for ev in itertools.islice(history, max(0, since - compacted), None):
                if w.wants(ev):
                    buf.append(ev)
        for ev in buf:
            w.push(ev)
        self._watches = (*self._watches, w)
        return w

    def _drop_watch(self, w: Watch) -> None:
        self._watches = tuple(x for x in self._watches if x is not w)

    def subscribe(
        self, callback: Callable[[WatchEvent], None], key: ResourceKey | None = None
    ) -> Callable[[], None]:
        """Call `callback(event)` synchronously after every committed write (of `key`, or all kinds).

        Events reach subscribers in revision order and a callback is never re-entered: a write made from
        inside a callback is delivered after the current event has reached every subscriber.
        Returns a function that unsubscribes.
        """
        entry = (key, callback)
        self._subs = (*self._subs, entry)

        def unsubscribe() -> None:
            self._subs = tuple(s for s in self._subs if s is not entry)

        return unsubscribe
