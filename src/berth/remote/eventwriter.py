"""Events written to a real cluster as kube-scheduler writes them: ``events.k8s.io/v1`` where served.

Berth's components record ``v1``-shaped Events (`berth.store.events.EventRecorder`: ``involvedObject``,
``message``, ``count``/``lastTimestamp`` on a repeat). kube-scheduler writes through client-go's ``events/v1``
broadcaster instead; `EventWriter` turns each write into that form:

* a new Event: ``eventTime`` (MicroTime, now), ``reportingController`` (the component, e.g. the profile's
  scheduler name), ``reportingInstance`` (``<controller>-<hostname>``, as client-go's ``NewRecorder``),
  ``action``, ``reason``, ``regarding``, ``note``, ``type``; same name (``<object>.<nanoseconds hex>``);
* a repeat (the recorder's ``count`` patch): ``series`` ``{count, lastObservedTime}``, as the broadcaster's
  isomorphic-event series.

An Event without an action (events/v1 requires one) takes its reason as action; a note longer than the API's
limit (1024 bytes) is cut as kube-scheduler cuts its FailedScheduling messages (``truncateMessage``: the first
1020 bytes and `` ...``). Against a server that does not serve ``events.k8s.io/v1`` (`events_v1` False) the
``v1`` writes go unchanged.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from berth.remote.store import RemoteStore

__all__ = ["CORE_KEY", "EVENTS_V1_KEY", "NOTE_LENGTH_LIMIT", "EventWriter", "micro_time", "truncate_note"]

CORE_KEY = ("", "Event")
EVENTS_V1_KEY = ("events.k8s.io", "Event")

NOTE_LENGTH_LIMIT = 1024
"""kube's ``validation.NoteLengthLimit`` of an events.k8s.io/v1 Event's note."""

Obj = dict[str, Any]


def truncate_note(message: str) -> str:
    """kube-scheduler's ``truncateMessage``: `message` cut to `NOTE_LENGTH_LIMIT` bytes (UTF-8, as the API
    counts them; a character is never split) with a `` ...`` suffix."""
    data = message.encode()
    if len(data) <= NOTE_LENGTH_LIMIT:
        return message
    suffix = " ..."
    return data[: NOTE_LENGTH_LIMIT - len(suffix)].decode(errors="ignore") + suffix


def micro_time(at: datetime | None = None) -> str:
    """A metav1.MicroTime (RFC 3339 with microseconds, UTC) of `at` (default now)."""
    when = (at or datetime.now(UTC)).astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class EventWriter:
    """Writes the recorder's Events through `store` (a client of their own), as ``events.k8s.io/v1`` Events
    when `events_v1`."""

    def __init__(self, store: RemoteStore, *, events_v1: bool, hostname: str | None = None) -> None:
        """`hostname` (default this host's) makes each component's ``reportingInstance``."""
        self.store = store
        self.events_v1 = events_v1
        self.hostname = hostname if hostname is not None else socket.gethostname()

    def create(self, event: Mapping[str, Any]) -> Obj:
        """Create `event` (``v1``-shaped); the server's answer."""
        if not self.events_v1:
            return self.store.create(dict(event))
        return self.store.create(self.as_events_v1(event))

    def patch(self, namespace: str, name: str, patch: Mapping[str, Any]) -> Obj:
        """Apply the recorder's patch of a repeated Event (``count``, ``lastTimestamp``); the server's answer."""
        if not self.events_v1:
            return self.store.patch(CORE_KEY, namespace, name, dict(patch))
        series: Obj = {"lastObservedTime": micro_time()}
        if "count" in patch:
            series["count"] = patch["count"]
        return self.store.patch(EVENTS_V1_KEY, namespace, name, {"series": series})

    def as_events_v1(self, event: Mapping[str, Any]) -> Obj:
        """The ``events.k8s.io/v1`` Event kube-scheduler's broadcaster would write for a ``v1`` one."""
        controller = str(
            event.get("reportingComponent") or (event.get("source") or {}).get("component") or ""
        )
        reason = str(event.get("reason") or "")
        out: Obj = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": dict(event.get("metadata") or {}),
            "eventTime": micro_time(),
            "reportingController": controller,
            "reportingInstance": f"{controller}-{self.hostname}",
            "action": str(event.get("action") or reason),
            "reason": reason,
            "regarding": dict(event.get("involvedObject") or {}),
            "note": truncate_note(str(event.get("message") or "")),
            "type": str(event.get("type") or "Normal"),
        }
        if event.get("related"):
            out["related"] = event["related"]
        return out
