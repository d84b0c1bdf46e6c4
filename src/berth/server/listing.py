"""List pagination as kube-apiserver pages a list: ``limit`` / ``continue`` over one consistent snapshot.

A first page with a ``limit`` that leaves items behind keeps the whole (filtered, sorted) list it was cut from,
keyed by the resource, the namespace, the selectors and the list's resourceVersion; the ``continue`` token it
returns is kube's (base64url of ``{"v": "meta.k8s.io/v1", "rv": N, "start": "ns/name\\x00"}``), so every later
page is cut from the same snapshot and the whole list reads as of the first page's resourceVersion, as etcd
reads it. Stored objects are immutable, so a snapshot is one list of references.

Berth keeps a bounded number of snapshots for a bounded time (kube's etcd compaction interval, 5 minutes).
When the snapshot of a token is gone (evicted, or the client changed its selectors meanwhile) the page is read
at the token's resourceVersion from the store's history, as etcd reads it (`berth.api.contracts.RevisionLister`).
A token issued more than 5 minutes ago, or one the history no longer reaches (the server restarted, or more
changes happened since than the store keeps), is compacted: the answer is kube's 410 Expired with "The provided
continue parameter is too old ..." and, in the Status' metadata, a token with resourceVersion -1 that continues
from the same key at the current state.

A first page reads the current state, or the state at the request's ``resourceVersion`` when kube reads it
exactly (``resourceVersionMatch=Exact``, or a ``limit`` with a resourceVersion and no match: see `ListRead`).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.api.errors import BadRequest, Invalid, ResourceExpired, ResourceVersionTooLarge

__all__ = [
    "CONTINUE_EXPIRED",
    "INCONSISTENT_CONTINUE",
    "ContinueExpired",
    "ListPage",
    "ListRead",
    "ListSnapshots",
    "decode_continue",
    "encode_continue",
    "page_of",
]

Obj = dict[str, Any]
SnapshotKey = tuple[str, str, str, str, str, int]
"""(group, kind, namespace, labelSelector, fieldSelector, resourceVersion)."""

TOKEN_VERSION = "meta.k8s.io/v1"
INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list."
)
"""kube-apiserver's message for a continue token whose resourceVersion etcd has compacted."""
CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter."
)
"""kube-apiserver's message when it cannot offer an inconsistent continuation."""
SNAPSHOT_SECONDS = 300.0
"""How long a snapshot is kept: kube-apiserver compacts etcd every 5 minutes by default."""
SNAPSHOT_CAPACITY = 64
"""How many snapshots are kept at most (the least recently used goes first)."""
TOKENS_REMEMBERED = 4096
"""How many token resourceVersions the server remembers the issue time of (to expire them after 5 minutes)."""
Reader = Callable[[int | None], tuple[list[Obj], str]]
"""Reads the matching objects (sorted by namespace and name) and the list resourceVersion: the current state for
None, else the state at that revision (ResourceExpired when it is no longer kept)."""


class ContinueExpired(ResourceExpired):
    """410 Expired for a continue token that can no longer be read consistently; its Status carries the
    token (resourceVersion -1) that continues the list inconsistently from the same key."""

    def __init__(self, token: str) -> None:
        """`token`: the inconsistent continuation put in the Status' ``metadata.continue``."""
        super().__init__(INCONSISTENT_CONTINUE)
        self.token = token

    def to_status(self) -> dict[str, Any]:
        """The metav1.Status, with ``metadata.continue``."""
        status = super().to_status()
        status["metadata"] = {"continue": self.token}
        return status


def encode_continue(resource_version: int, start: str) -> str:
    """kube's continue token: base64url (no padding) of ``{"v", "rv", "start"}``; `start` is the key after
    the key prefix of the list (``ns/name`` or ``name``) followed by NUL: the next page starts after it."""
    doc = {"v": TOKEN_VERSION, "rv": resource_version, "start": start}
    raw = json.dumps(doc, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _invalid(detail: str) -> BadRequest:
    return BadRequest(f"invalid continue token: continue key is not valid{detail}")


def decode_continue(token: str) -> tuple[int, str]:
    """(resourceVersion, start key without its NUL) of a continue token; BadRequest (400) with kube's messages
    for a token this server cannot have made. A resourceVersion below 0 means "continue at the latest"."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        raise _invalid(": illegal base64 data") from None
    try:
        doc = json.loads(raw)
    except ValueError:
        raise _invalid(": the token is not JSON") from None
    if not isinstance(doc, dict):
        raise _invalid(": not a JSON object")
    version = doc.get("v")
    if version != TOKEN_VERSION:
        raise _invalid(f": server does not recognize this encoded version {version}")
    rv = doc.get("rv")
    if not isinstance(rv, int) or isinstance(rv, bool) or rv == 0:
        raise _invalid(f": incorrect encoded start resourceVersion (version {TOKEN_VERSION})")
    start = doc.get("start")
    if not isinstance(start, str) or not start:
        raise _invalid(f": encoded start key empty (version {TOKEN_VERSION})")
    key = start[:-1] if start.endswith("\x00") else start
    parts = key.split("/")
    if not key or any(p in ("", ".", "..") for p in parts) or len(parts) > 2:
        raise _invalid(f": {start}")
    return rv, key


@dataclass(frozen=True, slots=True)
class ListPage:
    """One page of a list: its items, the list resourceVersion and, when more follow, the continue token and
    (for a list without selectors) how many items remain."""

    items: list[Obj]
    resource_version: str
    token: str = ""
    remaining: int | None = None

    def metadata(self) -> Obj:
        """The list's ``metadata`` (ListMeta)."""
        meta: Obj = {"resourceVersion": self.resource_version}
        if self.token:
            meta["continue"] = self.token
            if self.remaining is not None:
                meta["remainingItemCount"] = self.remaining
        return meta


class _Snapshot:
    __slots__ = ("born", "items", "keys")

    def __init__(self, items: list[Obj], keys: list[tuple[str, str]], born: float) -> None:
        self.items = items
        self.keys = keys
        self.born = born


def _key_of(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


class ListSnapshots:
    """The lists that paginated reads started from, kept for their continue tokens (bounded in number and
    age; `now` is a monotonic clock in seconds)."""

    def __init__(
        self,
        *,
        capacity: int = SNAPSHOT_CAPACITY,
        seconds: float = SNAPSHOT_SECONDS,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        """Keep at most `capacity` snapshots, each for at most `seconds`."""
        self.capacity = capacity
        self.seconds = seconds
        self.now = now
        self._kept: OrderedDict[SnapshotKey, _Snapshot] = OrderedDict()
        self._issued: OrderedDict[int, float] = OrderedDict()  # token resourceVersion -> first issued

    def __len__(self) -> int:
        """How many snapshots are kept."""
        return len(self._kept)

    def _expire(self) -> None:
        oldest = self.now() - self.seconds
        while self._kept:
            key, snap = next(iter(self._kept.items()))
            if snap.born > oldest:
                break
            del self._kept[key]

    def keep(self, key: SnapshotKey, items: list[Obj]) -> _Snapshot:
        """Keep `items` (sorted by namespace and name) as the list `key` names."""
        self._expire()
        items = list(items)
        snap = _Snapshot(items, [_key_of(o) for o in items], self.now())
        self._kept[key] = snap
        self._kept.move_to_end(key)
        while len(self._kept) > self.capacity:
            self._kept.popitem(last=False)
        rv = key[-1]
        if rv not in self._issued:
            self._issued[rv] = snap.born
            while len(self._issued) > TOKENS_REMEMBERED:
                self._issued.popitem(last=False)
        return snap

    def compacted(self, rv: int) -> bool:
        """Whether tokens of resourceVersion `rv` were first issued more than `seconds` ago (etcd has compacted
        that revision by now); unknown revisions are left to the store's history."""
        born = self._issued.get(rv)
        return born is not None and born <= self.now() - self.seconds

    def find(self, key: SnapshotKey) -> _Snapshot | None:
        """The snapshot kept for `key`, or None when it is gone."""
        self._expire()
        snap = self._kept.get(key)
        if snap is not None:
            self._kept.move_to_end(key)
        return snap


def _start_key(start: str, namespace: str, namespaced: bool) -> tuple[str, str]:
    """The (namespace, name) a decoded start key names, for a list of `namespace` ("" for all)."""
    if namespaced and not namespace:
        ns, _, name = start.partition("/")
        return (ns, name)
    if "/" in start:
        raise _invalid(f": {start}")
    return (namespace if namespaced else "", start)


def _start_of(obj: Mapping[str, Any], namespace: str, namespaced: bool) -> str:
    ns, name = _key_of(obj)
    return (f"{ns}/{name}" if namespaced and not namespace else name) + "\x00"


@dataclass(frozen=True, slots=True)
class ListRead:
    """A list request's reading options: `limit` (0: all), the continue `token`, and the revision to read at:
    `exact` (kube's ``resourceVersionMatch=Exact``, or a ``limit`` with a resourceVersion and no match) or
    `not_older_than` (a resourceVersion otherwise); both None for the current state."""

    limit: int = 0
    token: str | None = None
    exact: int | None = None
    not_older_than: int | None = None

    def check(self, current: int) -> None:
        """ResourceVersionTooLarge (504, as kube's watch cache answers) for a revision the store has not reached
        (at `current`)."""
        asked = self.exact if self.exact is not None else self.not_older_than
        if asked is not None and asked > current:
            raise ResourceVersionTooLarge.of(asked, current)


def page_of(
    snapshots: ListSnapshots,
    *,
    resource: tuple[str, str],
    namespace: str,
    namespaced: bool,
    selectors: tuple[str, str],
    read: ListRead,
    reader: Reader,
) -> ListPage:
    """The page a list request asks for.

    `reader` lists the matching objects (see `Reader`). Without a token the page starts at the beginning of the
    list at `read.exact` (or the current list); with one it starts after the token's key, in the list of the
    token's resourceVersion (its snapshot, else read again at that revision) or, for a token of resourceVersion
    -1, in the current list; a compacted token is ContinueExpired (410).
    """
    rv: int
    snap: _Snapshot | None = None
    after: tuple[str, str] | None = None
    limit, token = read.limit, read.token
    if token:
        rv, start = decode_continue(token)
        after = _start_key(start, namespace, namespaced)
        if rv > 0:
            key = (*resource, namespace, *selectors, rv)
            snap = snapshots.find(key)
            if snap is None:
                if snapshots.compacted(rv):  # readable only if nothing changed since
                    items, text = reader(None)
                    if int(text) != rv:
                        raise ContinueExpired(encode_continue(-1, start + "\x00"))
                else:
                    try:
                        items, _ = reader(rv)
                    except ResourceExpired:
                        raise ContinueExpired(encode_continue(-1, start + "\x00")) from None
                snap = snapshots.keep(key, items)
    if snap is None:
        items, text = reader(None if token else read.exact)
        rv = int(text)
        if limit <= 0 or (len(items) <= limit and after is None):
            return _slice(items, None, rv, limit, namespace, namespaced, selectors, after)
        snap = snapshots.keep((*resource, namespace, *selectors, rv), items)
    return _slice(snap.items, snap.keys, rv, limit, namespace, namespaced, selectors, after)


def _slice(
    items: list[Obj],
    keys: Sequence[tuple[str, str]] | None,
    rv: int,
    limit: int,
    namespace: str,
    namespaced: bool,
    selectors: tuple[str, str],
    after: tuple[str, str] | None = None,
) -> ListPage:
    begin = 0
    if after is not None:
        if keys is None:
            keys = [_key_of(o) for o in items]
        begin = bisect.bisect_right(keys, after)
    if limit <= 0 or len(items) - begin <= limit:
        return ListPage(items[begin:] if begin else items, str(rv))
    end = begin + limit
    page = items[begin:end]
    remaining = None if any(selectors) else len(items) - end
    return ListPage(page, str(rv), encode_continue(rv, _start_of(page[-1], namespace, namespaced)), remaining)


def list_options(query: Mapping[str, Sequence[str]]) -> ListRead:
    """The `ListRead` of a list request, checked as kube checks ListOptions (``ValidateListOptions`` and the
    registry's continue rules): a bad limit or resourceVersion is a 400, a resourceVersion (other than "0") with a
    continue token a 400, a bad resourceVersionMatch a 422 naming every problem."""

    def first(name: str) -> str:
        values = query.get(name)
        return values[0] if values else ""

    limit_text = first("limit")
    try:
        limit = int(limit_text) if limit_text else 0
    except ValueError:
        raise BadRequest(f'invalid limit "{limit_text}"') from None
    token, rv_text, match = first("continue"), first("resourceVersion"), first("resourceVersionMatch")
    if match:
        problems: list[tuple[str, str]] = []
        if not rv_text:
            problems.append(
                (
                    "resourceVersionMatch",
                    "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
                )
            )
        if token:
            problems.append(
                (
                    "resourceVersionMatch",
                    "Forbidden: resourceVersionMatch is forbidden when continue is provided",
                )
            )
        if match not in ("Exact", "NotOlderThan"):
            problems.append(
                (
                    "resourceVersionMatch",
                    f'Unsupported value: {json.dumps(match)}: supported values: "Exact", "NotOlderThan", ""',
                )
            )
        if match == "Exact" and rv_text == "0":
            problems.append(
                (
                    "resourceVersionMatch",
                    'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
        if problems:
            raise Invalid.of("ListOptions", "meta.k8s.io", "", problems)
    if token and rv_text not in ("", "0"):
        raise BadRequest("specifying resource version is not allowed when using continue")
    limit = max(limit, 0)
    if rv_text in ("", "0"):
        return ListRead(limit, token or None)
    try:
        rv = int(rv_text)
        if rv < 0:
            raise ValueError(rv_text)
    except ValueError:
        raise BadRequest(f'invalid resource version: "{rv_text}"') from None
    if match == "Exact" or (not match and limit > 0):
        return ListRead(limit, None, exact=rv)
    return ListRead(limit, None, not_older_than=rv)
