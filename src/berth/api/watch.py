"""Watch events (metav1.WatchEvent) and the buffered `Watch` every store hands out."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["ADDED", "DELETED", "MODIFIED", "ResourceKey", "Watch", "WatchEvent"]

ResourceKey = tuple[str, str]
"""(group, kind), e.g. ("", "Pod") or ("scheduling.k8s.io", "PriorityClass")."""

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"


class WatchEvent(NamedTuple):
    """One change: `type` ADDED/MODIFIED/DELETED, the object after the change (for DELETED: the last state,
    stamped with the deletion's resourceVersion), its kind `key`, and the global `revision` of the change.
    `previous`: for MODIFIED and DELETED from the embedded store, the object as it was before the change (what
    lets the store read a list as of an older revision); None elsewhere.

    Immutable, and made for every write (a tuple: a third of a frozen dataclass's cost to make). The objects
    are the store's own immutable dicts: never mutate them.
    """

    type: str
    object: dict[str, Any]
    key: ResourceKey
    revision: int = 0
    previous: dict[str, Any] | None = None


class Watch:
    """A stream of events buffered by the store; drain it with `poll()`, end it with `stop()`.

    Set `on_ready` to a callable to be told (synchronously, from inside the store's write) whenever an event
    arrives in an empty buffer, so an event loop can schedule a `poll()` instead of polling.
    """

    __slots__ = ("_buffer", "_on_stop", "closed", "key", "namespace", "on_ready", "stopped")

    def __init__(
        self,
        key: ResourceKey | None,
        namespace: str | None,
        on_stop: Callable[[Watch], None] | None = None,
    ) -> None:
        """Create a watch for `key` (None: all kinds) in `namespace` (None/"": all); stores create these."""
        self.key = key
        self.namespace = namespace or None
        self.on_ready: Callable[[], None] | None = None
        self.stopped = False
        self.closed = False
        self._buffer: deque[WatchEvent] = deque()
        self._on_stop = on_stop

    def wants(self, event: WatchEvent) -> bool:
        """Whether this watch's filters select `event`."""
        if self.key is not None and event.key != self.key:
            return False
        if self.namespace is not None:
            return bool(event.object["metadata"].get("namespace") == self.namespace)
        return True

    def push(self, event: WatchEvent) -> None:
        """Buffer an event (store side); calls `on_ready` when the buffer was empty."""
        if self.stopped:
            return
        buf = self._buffer
        buf.append(event)  # deque appends and pops are atomic: a store may push from another thread
        if len(buf) == 1 and self.on_ready is not None:
            self.on_ready()

    def poll(self) -> list[WatchEvent]:
        """Drain and return every buffered event (oldest first); never blocks."""
        buf = self._buffer
        out: list[WatchEvent] = []
        while buf:
            out.append(buf.popleft())
        return out

    def pending(self) -> int:
        """Number of buffered events."""
        return len(self._buffer)

    def close(self) -> None:
        """The source ended the stream (store side): no event follows; those buffered stay to be polled."""
        self.closed = True

    def stop(self) -> None:
        """Stop receiving events and drop anything buffered."""
        if self.stopped:
            return
        self.stopped = True
        self._buffer.clear()
        if self._on_stop is not None:
            self._on_stop(self)
            self._on_stop = None
