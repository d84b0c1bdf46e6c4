"""Event writes off the scheduling thread, through a client of their own (client-go's event broadcaster).

kube-scheduler records Events through a separate clientset (its own QPS budget) and a broadcaster that writes
them in the background, so recording never slows a binding down; a write that fails is logged and dropped.
`EventSink` does the same: `submit` queues a write and returns at once; one worker thread sends the writes in
order (an Event's later count patch follows its creation).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from berth.api.errors import StatusError
from berth.remote.client import ServerUnreachable

__all__ = ["MAX_QUEUED", "EventSink"]

log = logging.getLogger(__name__)

MAX_QUEUED = 10_000
"""Writes queued at most; more are dropped with a warning. client-go's broadcaster keeps 1 000, but there the
``Scheduled`` events come at the pace bindings complete; here they come when bindings are queued, so a backlog
of pods bound at QPS 50 queues that many at once."""

DROP_LOG_EVERY = 1000
"""One warning per this many dropped Events."""

_STOP = object()


class EventSink:
    """A worker thread sending queued Event writes."""

    def __init__(self, max_queued: int = MAX_QUEUED) -> None:
        """Start the worker (a daemon thread)."""
        self._queue: queue.Queue[Any] = queue.Queue(max_queued)
        self.sent = 0
        self.failed = 0
        self.dropped = 0
        self._thread = threading.Thread(target=self._work, name="event sink", daemon=True)
        self._thread.start()

    def submit(self, write: Callable[[], object]) -> None:
        """Queue `write` (a call of the events client); dropped, with a warning, when the queue is full."""
        try:
            self._queue.put_nowait(write)
        except queue.Full:
            self.dropped += 1
            if self.dropped % DROP_LOG_EVERY == 1:  # the first drop of a flood, then one line per thousand
                log.warning("event queue full: %d Event(s) dropped so far", self.dropped)

    def close(self, timeout: float = 5.0) -> None:
        """Send what is queued (for at most `timeout` seconds), then stop the worker."""
        try:
            self._queue.put(_STOP, timeout=timeout)
        except queue.Full:
            return
        self._thread.join(timeout)

    def _work(self) -> None:
        while True:
            write = self._queue.get()
            if write is _STOP:
                return
            try:
                write()
                self.sent += 1
            except (StatusError, ServerUnreachable) as e:
                self.failed += 1
                log.warning("unable to write event: %s", e)
