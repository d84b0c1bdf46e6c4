"""The `Store` contract over a Kubernetes API server's REST API: what Berth's components use to act on a
real cluster (today `berth drain`, `cordon` and `uncordon`).

Every verb is one request through `KubeClient`, whose refusals are the typed `berth.api.errors`. A watch
streams on a background thread into the `Watch` buffer; everything else runs on the caller's thread.
Store time is the wall clock: `timestamp(at)` maps a reading `at` of the caller's `Clock` to UTC.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from berth.api.errors import NotFound
from berth.api.kinds import KindInfo, all_kinds
from berth.api.labels import Selector
from berth.api.timestamps import format_time
from berth.api.watch import ResourceKey, Watch, WatchEvent
from berth.clock import Clock, RealClock
from berth.remote.client import KubeClient, ServerUnreachable
from berth.store.eviction import add_prefer_avoid

__all__ = ["RemoteStore", "eviction_body"]

Obj = dict[str, Any]
_POD = ("", "Pod")
_KINDS: dict[ResourceKey, KindInfo] = {(k.group, k.kind): k for k in all_kinds()}


def _kind(key: ResourceKey) -> KindInfo:
    info = _KINDS.get(key)
    if info is None:
        raise NotFound(f'the server doesn\'t have a resource type "{key[1]}"', group=key[0], kind=key[1])
    return info


def _path(info: KindInfo, namespace: str | None, name: str = "", subresource: str = "") -> str:
    """The REST path of a collection (no name) or of one object (and its subresource)."""
    root = f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"
    if info.namespaced and namespace:
        root += f"/namespaces/{namespace}"
    path = f"{root}/{info.plural}"
    if name:
        path += f"/{name}"
    if subresource:
        path += f"/{subresource}"
    return path


def _dry(dry_run: bool) -> dict[str, str] | None:
    """The query of a write: ``dryRun=All`` for a dry run."""
    return {"dryRun": "All"} if dry_run else None


def eviction_body(namespace: str, name: str, *, grace_period_seconds: int | None, dry_run: bool) -> Obj:
    """The policy/v1 Eviction that asks the API server to evict pod `namespace`/`name`."""
    options: Obj = {}
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    if dry_run:
        options["dryRun"] = ["All"]
    body: Obj = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    }
    if options:
        body["deleteOptions"] = options
    return body


def _typed(info: KindInfo, obj: Obj) -> Obj:
    """The object with its apiVersion and kind (list items and watch objects may come without)."""
    if obj.get("kind") and obj.get("apiVersion"):
        return obj
    return {"apiVersion": info.api_version, "kind": info.kind, **obj}


class RemoteStore:
    """A `berth.api.contracts.Store` backed by an API server reached through `client`."""

    def __init__(self, client: KubeClient, clock: Clock | None = None) -> None:
        """Talk through `client`; `clock` (default a `RealClock`) is the time base of `timestamp(at)`."""
        self.client = client
        self.clock: Clock = clock if clock is not None else RealClock()
        self._revision = 0
        self._last_nanos = 0
        self._nanos_lock = threading.Lock()

    @property
    def revision(self) -> int:
        """The newest resourceVersion this store has seen in an answer (0 before any)."""
        return self._revision

    def _seen(self, obj: Mapping[str, Any]) -> None:
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if isinstance(rv, str) and rv.isdigit():
            self._revision = max(self._revision, int(rv))

    def _answer(self, info: KindInfo, obj: Obj) -> Obj:
        self._seen(obj)
        return _typed(info, obj)

    def _locate(self, obj: Mapping[str, Any]) -> tuple[KindInfo, str, str]:
        api_version = str(obj.get("apiVersion") or "")
        group = api_version.rpartition("/")[0]
        info = _kind((group, str(obj.get("kind") or "")))
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default") if info.namespaced else ""
        return info, namespace, str(meta.get("name") or "")

    # ----- the Store contract -------------------------------------------------------------------
    def get(self, key: ResourceKey, namespace: str, name: str) -> Obj:
        """GET one object; NotFound when it is not there."""
        info = _kind(key)
        return self._answer(info, self.client.request("GET", _path(info, namespace, name)))

    def list(
        self,
        key: ResourceKey,
        namespace: str | None = None,
        *,
        label_selector: str | Selector | None = None,
        field_selector: str | None = None,
    ) -> tuple[list[Obj], str]:
        """GET a collection (all namespaces when `namespace` is None), sorted by (namespace, name)."""
        info = _kind(key)
        params: dict[str, str] = {}
        if label_selector is not None and str(label_selector):
            params["labelSelector"] = str(label_selector)
        if field_selector:
            params["fieldSelector"] = field_selector
        doc = self.client.request("GET", _path(info, namespace), params=params)
        rv = str((doc.get("metadata") or {}).get("resourceVersion") or "")
        self._seen(doc)
        items = [_typed(info, item) for item in doc.get("items") or ()]
        items.sort(key=lambda o: (o["metadata"].get("namespace") or "", o["metadata"]["name"]))
        return items, rv

    def create(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        """POST the object to its collection (``?dryRun=All`` with `dry_run`)."""
        info, namespace, _ = self._locate(obj)
        doc = self.client.request("POST", _path(info, namespace), params=_dry(dry_run), body=obj)
        return self._answer(info, doc)

    def update(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        """PUT the object (Conflict when its resourceVersion is stale; ``?dryRun=All`` with `dry_run`)."""
        info, namespace, name = self._locate(obj)
        doc = self.client.request("PUT", _path(info, namespace, name), params=_dry(dry_run), body=obj)
        return self._answer(info, doc)

    def update_status(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        """PUT the object's status subresource (``?dryRun=All`` with `dry_run`)."""
        info, namespace, name = self._locate(obj)
        path = _path(info, namespace, name, "status")
        return self._answer(info, self.client.request("PUT", path, params=_dry(dry_run), body=obj))

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
        """PATCH with a JSON merge patch (RFC 7386), on the object or its `subresource` (``?dryRun=All`` with
        `dry_run`)."""
        info = _kind(key)
        path = _path(info, namespace, name, subresource or "")
        doc = self.client.request(
            "PATCH", path, params=_dry(dry_run), body=patch, content_type="application/merge-patch+json"
        )
        return self._answer(info, doc)

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
        """DELETE with DeleteOptions; the server's answer (the object as deleted, or a Status)."""
        info = _kind(key)
        options: Obj = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        preconditions = {"uid": uid, "resourceVersion": resource_version}
        if any(v is not None for v in preconditions.values()):
            options["preconditions"] = {k: v for k, v in preconditions.items() if v is not None}
        if dry_run:
            options["dryRun"] = ["All"]
        if propagation is not None:
            options["propagationPolicy"] = propagation
        return self.client.request("DELETE", _path(info, namespace, name), body=options)

    def watch(
        self,
        key: ResourceKey | None,
        *,
        resource_version: str | None = None,
        namespace: str | None = None,
    ) -> Watch:
        """A watch of one kind streamed on a background thread; `stop()` ends it; when the server ends the
        stream the watch is `closed` (its buffered events stay) and its owner relists."""
        if key is None:
            raise NotFound("a remote watch needs a kind: the API serves no watch over every kind")
        info = _kind(key)
        stopped = threading.Event()
        watch = Watch(key, namespace, on_stop=lambda _w: stopped.set())
        params = {"watch": "1"}
        if resource_version:
            params["resourceVersion"] = resource_version
        path = _path(info, namespace)
        thread = threading.Thread(
            target=self._stream, args=(info, path, params, watch, stopped), name=f"watch {path}", daemon=True
        )
        thread.start()
        return watch

    def _stream(
        self, info: KindInfo, path: str, params: dict[str, str], watch: Watch, stopped: threading.Event
    ) -> None:
        """Push each event of the stream into `watch` until it stops or the server closes the stream."""
        key = (info.group, info.kind)
        # an unreachable server ends the stream like a closed one: the watch's owner relists
        with contextlib.suppress(ServerUnreachable):
            for event in self.client.stream_lines(path, params):
                if stopped.is_set():
                    return
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    break
                self._seen(obj)
                rv = (obj.get("metadata") or {}).get("resourceVersion")
                revision = int(rv) if isinstance(rv, str) and rv.isdigit() else 0
                watch.push(WatchEvent(str(event.get("type")), _typed(info, obj), key, revision))
        watch.close()

    def bind(
        self,
        namespace: str,
        name: str,
        node_name: str,
        *,
        uid: str | None = None,
        annotations: Mapping[str, str] | None = None,
    ) -> Obj:
        """POST a Binding to the pod's binding subresource; the pod as bound."""
        meta: Obj = {"name": name, "namespace": namespace}
        if uid:
            meta["uid"] = uid
        if annotations:
            meta["annotations"] = dict(annotations)
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": meta,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        info = _kind(_POD)
        self.client.request("POST", _path(info, namespace, name, "binding"), body=binding)
        return self.get(_POD, namespace, name)

    def evict(
        self,
        namespace: str,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
        avoid: bool = False,
    ) -> Obj:
        """POST a policy/v1 Eviction; the pod as the eviction left it. With `avoid`, the pod's node is then
        asked (by a patch of its annotation, which the API server has no eviction option for) to avoid the
        pod's controller."""
        pod = self.get(_POD, namespace, name)
        body = eviction_body(namespace, name, grace_period_seconds=grace_period_seconds, dry_run=dry_run)
        self.client.request("POST", _path(_kind(_POD), namespace, name, "eviction"), body=body)
        if dry_run:
            return pod
        if avoid:
            add_prefer_avoid(self, pod, datetime.now(UTC).replace(microsecond=0))
        try:
            return self.get(_POD, namespace, name)
        except NotFound:
            return pod

    def timestamp(self, at: float | None = None) -> str:
        """RFC 3339 of wall time now, or at the caller's clock reading `at`."""
        now = datetime.now(UTC)
        if at is not None:
            now += timedelta(seconds=at - self.clock.now())
        return format_time(now)

    def now_nanos(self) -> int:
        """Wall-clock nanoseconds since the Unix epoch, strictly increasing from call to call."""
        with self._nanos_lock:
            self._last_nanos = max(time.time_ns(), self._last_nanos + 1)
            return self._last_nanos
