"""Reflectors: one thread per kind keeping a local replica of an API server's objects up to date.

A `Reflector` does what client-go's reflector does for an informer: list the kind (in pages of `PAGE_SIZE`),
then watch it from the list's resourceVersion with ``allowWatchBookmarks`` and a ``timeoutSeconds`` drawn
between `MIN_WATCH_TIMEOUT` and twice that. A watch the server ends (its timeout, a restart, a dropped
connection) is opened again from the last resourceVersion seen (an event's or a bookmark's); a ``410
Gone``/``Expired`` answer, or an ``ERROR`` event carrying one, makes it list again; any other failure is
retried after an exponential backoff (`INITIAL_BACKOFF` doubling to `MAX_BACKOFF`, client-go's reflector
backoff), from the last resourceVersion when there is one.

The thread does nothing but enqueue: each list becomes one `Listed` item, each watch event one `WatchEvent`,
handed to `sink` (a thread-safe queue's ``put``). Whoever drains the queue applies them, on its own thread.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from berth.api.errors import Gone, StatusError, error_from_status
from berth.api.kinds import KindInfo
from berth.api.watch import ResourceKey, WatchEvent
from berth.remote.client import KubeClient, LineStream, ServerUnreachable

__all__ = [
    "INITIAL_BACKOFF",
    "MAX_BACKOFF",
    "MIN_WATCH_TIMEOUT",
    "PAGE_SIZE",
    "Listed",
    "Reflector",
    "kind_path",
]

log = logging.getLogger(__name__)

PAGE_SIZE = 500
"""Objects per page of a list (client-go's pager default)."""
MIN_WATCH_TIMEOUT = 300.0
"""client-go's ``minWatchTimeout``: a watch asks the server to end it after 5 to 10 minutes."""
INITIAL_BACKOFF = 0.8
"""Seconds before the first retry after a failure (client-go's reflector: 800 ms)."""
MAX_BACKOFF = 30.0
"""The longest wait between two retries (client-go's reflector: 30 s)."""

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Listed:
    """A complete list of one kind: the replica of that kind becomes exactly `items` (as of `resource_version`)."""

    key: ResourceKey
    items: list[Obj]
    resource_version: int


def kind_path(info: KindInfo) -> str:
    """The REST path of every object of the kind, in all namespaces."""
    root = f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"
    return f"{root}/{info.plural}"


def _typed(info: KindInfo, obj: Obj) -> Obj:
    if obj.get("kind") and obj.get("apiVersion"):
        return obj
    return {"apiVersion": info.api_version, "kind": info.kind, **obj}


def _rv(obj: Obj) -> int:
    rv = (obj.get("metadata") or {}).get("resourceVersion")
    return int(rv) if isinstance(rv, str) and rv.isdigit() else 0


class Reflector:
    """Lists and watches one kind on a daemon thread, handing what it learns to `sink`."""

    def __init__(
        self,
        client: KubeClient,
        info: KindInfo,
        sink: Callable[[Listed | WatchEvent], None],
        *,
        rng: random.Random | None = None,
        min_watch_timeout: float = MIN_WATCH_TIMEOUT,
        initial_backoff: float = INITIAL_BACKOFF,
        max_backoff: float = MAX_BACKOFF,
    ) -> None:
        """Follow the kind `info` through `client`; `start()` begins."""
        self.client = client
        self.info = info
        self.key: ResourceKey = (info.group, info.kind)
        self.sink = sink
        self.rng = rng if rng is not None else random.Random()
        self.min_watch_timeout = min_watch_timeout
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.resource_version = 0
        """The last resourceVersion seen."""
        self.must_list = True
        """Whether the next round lists (at first, and after a 410)."""
        self.lists = 0
        """How many complete lists were made (the first, then one per relist)."""
        self.watches = 0
        """How many watches were opened."""
        self.last_error = ""
        """The last failure, for logs and health reports ("" when the last round succeeded)."""
        self._stopped = threading.Event()
        self._stream: LineStream | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"reflector {self.info.plural}", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Stop: the open watch is closed; the thread ends at once or at its next read."""
        self._stopped.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.close()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread to end (after `stop()`)."""
        if self._thread is not None:
            self._thread.join(timeout)

    # ----- the loop -----------------------------------------------------------------------------------
    def _run(self) -> None:
        backoff = self.initial_backoff
        while not self._stopped.is_set():
            try:
                if self.must_list:
                    self._list()
                self._watch()
                backoff = self.initial_backoff
                self.last_error = ""
            except Gone as e:
                log.info("%s: %s; listing again", self.info.plural, e)
                self.must_list = True
            except (ServerUnreachable, StatusError) as e:
                if self._stopped.is_set():
                    return
                self.last_error = str(e)
                log.warning("%s: %s; retrying in %.1fs", self.info.plural, e, backoff)
                self._stopped.wait(backoff * (1.0 + self.rng.random()) / 2 + backoff / 2)
                backoff = min(backoff * 2, self.max_backoff)

    def _list(self) -> None:
        """List the kind page by page; hand the whole list to the sink."""
        items: list[Obj] = []
        params: dict[str, str] = {"limit": str(PAGE_SIZE)}
        rv = 0
        path = kind_path(self.info)
        while True:
            doc = self.client.request("GET", path, params=params)
            meta = doc.get("metadata") or {}
            if rv == 0:
                rv = _rv(doc)
            items.extend(_typed(self.info, item) for item in doc.get("items") or ())
            token = meta.get("continue")
            if not token:
                break
            params = {"limit": str(PAGE_SIZE), "continue": str(token)}
        if self._stopped.is_set():
            return
        self.lists += 1
        self.must_list = False
        self.resource_version = rv or max((_rv(o) for o in items), default=0)
        self.sink(Listed(self.key, items, self.resource_version))

    def _watch(self) -> None:
        """Watch from the last resourceVersion until the server ends the stream or the reflector stops."""
        timeout = int(self.min_watch_timeout * (1.0 + self.rng.random()))
        params = {
            "watch": "1",
            "resourceVersion": str(self.resource_version),
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout),
        }
        stream = self.client.open_lines(kind_path(self.info), params)
        with self._lock:
            if self._stopped.is_set():
                return
            self._stream = stream
        self.watches += 1
        try:
            for event in stream:
                if self._stopped.is_set():
                    return
                type_ = str(event.get("type") or "")
                obj = event.get("object") or {}
                if type_ == "ERROR":
                    err = error_from_status(obj, int(obj.get("code") or 500))
                    raise err
                rv = _rv(obj)
                if type_ == "BOOKMARK":
                    self.resource_version = max(self.resource_version, rv)
                    continue
                if type_ not in ("ADDED", "MODIFIED", "DELETED"):
                    continue
                self.sink(WatchEvent(type_, _typed(self.info, obj), self.key, rv))
                self.resource_version = max(self.resource_version, rv)
        finally:
            with self._lock:
                self._stream = None
