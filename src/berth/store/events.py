"""Recording Kubernetes Events (core/v1) in the store, aggregated like kubectl shows them.

Repeated events of one object with the same type, reason and message update the existing Event
(``count`` and ``lastTimestamp``) instead of creating a new one, as client-go's correlator does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.contracts import Store
from berth.api.names import dns1123_subdomain_errors
from berth.store.handover import create_handed_over

EVENT_KEY = ("", "Event")


class EventRecorder:
    """Writes Events about objects on behalf of one component.

    Like client-go's broadcaster, recording is asynchronous: ``event`` only notes the event (with its
    time) and ``flush`` writes what was noted; the simulation engine flushes whenever the scheduler
    pauses, so recording stays off the scheduling loop.
    """

    def __init__(self, store: Store, component: str = "default-scheduler", *, buffered: bool = False) -> None:
        self.store = store
        self.component = component
        self.buffered = buffered
        self._seen: dict[tuple[str, str, str, str], tuple[str, str, int]] = {}
        self._buffer: list[tuple[Mapping[str, Any], str, str, str, str, str, int, str]] = []

    def event(
        self,
        obj: Mapping[str, Any],
        type_: str,
        reason: str,
        message: str,
        *,
        action: str = "",
        component: str | None = None,
    ) -> None:
        """Record that ``reason``/``message`` happened to ``obj`` (reported by ``component``, default the
        recorder's own, e.g. a scheduler profile's name)."""
        item = (
            obj,
            type_,
            reason,
            message,
            action,
            self.store.timestamp(),
            self.store.now_nanos(),
            component or self.component,
        )
        if self.buffered:
            self._buffer.append(item)
            return
        self._write(*item)

    def flush(self) -> int:
        """Write every noted event; returns how many were written."""
        buf, self._buffer = self._buffer, []
        for item in buf:
            self._write(*item)
        return len(buf)

    def _write(
        self,
        obj: Mapping[str, Any],
        type_: str,
        reason: str,
        message: str,
        action: str,
        now: str,
        nanos: int,
        component: str,
    ) -> None:
        meta = obj.get("metadata") or {}
        uid = meta.get("uid", "")
        key = (uid, type_, reason, message)
        seen = self._seen.get(key)
        if seen is not None:
            ns, name, count = seen
            count += 1
            self._seen[key] = (ns, name, count)
            self.store.patch(EVENT_KEY, ns, name, {"count": count, "lastTimestamp": now})
            return
        ns = meta.get("namespace") or "default"
        name = f"{meta.get('name', '')}.{nanos:x}"
        involved = {
            "apiVersion": obj.get("apiVersion", "v1"),
            "kind": obj.get("kind", ""),
            "name": meta.get("name", ""),
            "uid": uid,
        }
        if meta.get("namespace"):
            involved["namespace"] = meta["namespace"]
        ev = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": ns},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": component},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "action": action,
            "reportingComponent": component,
            "reportingInstance": component,
        }
        # built here, and valid when its name is: handed over, neither copied nor validated again
        create_handed_over(self.store, ev, validated=not dns1123_subdomain_errors(name))
        self._seen[key] = (ns, name, 1)
