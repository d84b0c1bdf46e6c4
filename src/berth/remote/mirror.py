"""`ClusterMirror`: the `Store` contract over an API server, with reads served from a local replica.

What client-go's shared informers are to kube-scheduler and kube-controller-manager: one `Reflector` per
followed kind lists and watches it on its own thread and only enqueues; `pump()`, called on the one thread that
runs the components, applies what was enqueued to the replica and tells every subscriber of each change (the
same synchronous `subscribe` the embedded `MemoryStore` offers, so `berth.controlplane.plane.ControlPlane`
runs unchanged over it).

* Reads (`get`, `list`) of a followed kind come from the replica; of any other kind, from the server.
* Writes go to the server through `RemoteStore` (bindings through ``pods/binding``, evictions through
  ``pods/eviction``, status through the ``status`` subresource). When the server answers with the object and
  its resourceVersion is newer than the replica's copy, the answer is applied at once (read-your-writes) and
  subscribers hear of it; the watch event of the same version later changes nothing. A binding answers only a
  Status: the pod stays unbound in the replica until the watch confirms it (the scheduler's cache holds it as
  assumed meanwhile, as kube-scheduler's does).
* A change is applied only when its resourceVersion is newer than the copy held (or, after a deletion, than the
  deletion's), so events and answers may arrive in any order. A relist replaces a kind's replica, removing what
  the list no longer holds (unless the replica's copy is newer than the list).
* An unreachable server makes a write raise a `StatusError` (503 ``ServiceUnavailable``), as any refusal.
* An update (or status update) of a followed kind refused with ``409 Conflict`` because the replica was behind
  is retried as client-go's ``RetryOnConflict`` does (`berth.remote.conflict`): the writer's change is applied
  again to the object read anew from the server.
"""

from __future__ import annotations

import copy
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from berth.api.errors import BadRequest, Conflict, NotFound
from berth.api.kinds import KindInfo, all_kinds
from berth.api.labels import LabelSelectorError, Selector, parse_selector
from berth.api.watch import ADDED, DELETED, MODIFIED, ResourceKey, Watch, WatchEvent
from berth.remote.binder import AsyncBinder, BindOutcome, BindRequest
from berth.remote.client import ServerUnreachable, ServiceUnavailable
from berth.remote.conflict import backoff_delays, merge_diff
from berth.remote.eventsink import EventSink
from berth.remote.eventwriter import EventWriter
from berth.remote.informer import Listed, Reflector
from berth.remote.store import RemoteStore, eviction_body
from berth.store.eviction import add_prefer_avoid
from berth.store.fieldselector import compile_field_selector
from berth.store.mergepatch import merge_patch

__all__ = ["ClusterMirror", "ServiceUnavailable"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]
_POD: ResourceKey = ("", "Pod")
_EVENT: ResourceKey = ("", "Event")
_KINDS: dict[ResourceKey, KindInfo] = {(k.group, k.kind): k for k in all_kinds()}
_Name = tuple[str, str]
MAX_TOMBSTONES = 10_000
"""Deletions remembered per kind (to refuse a copy older than the deletion); the oldest half goes beyond it."""


class Follower(Protocol):
    """What the mirror needs of a reflector: start and stop it."""

    def start(self) -> None:
        """Start following."""
        ...

    def stop(self) -> None:
        """Stop following."""
        ...


def _rv(obj: Mapping[str, Any]) -> int:
    rv = (obj.get("metadata") or {}).get("resourceVersion")
    return int(rv) if isinstance(rv, str) and rv.isdigit() else 0


def _name(obj: Mapping[str, Any]) -> _Name:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _key_of(obj: Mapping[str, Any]) -> ResourceKey:
    return (str(obj.get("apiVersion") or "").rpartition("/")[0], str(obj.get("kind") or ""))


class ClusterMirror:
    """A `berth.api.contracts.Store` over the API server `remote` talks to, replicating the kinds `kinds`.

    `start()` starts the reflectors; `pump()` applies what they found; `synced` turns true once every kind has
    been listed. `on_ready`, when set, is called (from a reflector's thread) whenever something is enqueued.
    """

    def __init__(
        self,
        remote: RemoteStore,
        kinds: Iterable[ResourceKey],
        *,
        absent: Iterable[ResourceKey] = (),
        reflector: Callable[..., Follower] = Reflector,
        events: tuple[RemoteStore, EventSink] | None = None,
        events_v1: bool = False,
        bind_workers: int = 0,
    ) -> None:
        """Follow `kinds` (each a kind the API serves) through `remote`'s client; `absent` are kinds the server
        does not serve, read as empty (an older group of a custom kind, say) rather than refused. `events`: a
        store over a client of its own and the sink that writes Events through it in the background (as
        kube-scheduler's event broadcaster), as ``events.k8s.io/v1`` Events with `events_v1`
        (`berth.remote.eventwriter`); without it Events are written like any object. `bind_workers` > 0
        sends bindings concurrently on that many threads (`berth.remote.binder`): `bind` returns at once and a
        failure reaches `on_bind_failed(namespace, name, uid, message)` from `pump()`."""
        self.remote = remote
        self.events = events
        self.event_writer = EventWriter(events[0], events_v1=events_v1) if events is not None else None
        self.on_bind_failed: Callable[[str, str, str | None, str], None] | None = None
        # told of each background binding the server accepted: (namespace, name, uid, node)
        self.on_bound: Callable[[str, str, str | None, str], None] | None = None
        self.binder = (
            AsyncBinder(remote.client, self._enqueue, workers=bind_workers) if bind_workers > 0 else None
        )
        self.clock = remote.clock
        self.sleep: Callable[[float], None] = time.sleep
        """How a conflict's retry waits (replaceable in tests)."""
        self.conflicts_retried = 0
        """Writes refused with 409 Conflict and written again."""
        self.on_ready: Callable[[], None] | None = None
        self._inbox: queue.SimpleQueue[Listed | WatchEvent | BindOutcome] = queue.SimpleQueue()
        self._ready = threading.Event()
        self._objects: dict[ResourceKey, dict[_Name, Obj]] = {}
        self._sorted: dict[ResourceKey, list[_Name]] = {}
        self._gone: dict[ResourceKey, dict[_Name, int]] = {}  # resourceVersion of each deletion seen
        self._listed: set[ResourceKey] = set()
        self._revision = 0
        self._subs: tuple[tuple[ResourceKey | None, Callable[[WatchEvent], None]], ...] = ()
        self._watches: tuple[Watch, ...] = ()
        self._emitting = False
        self._outbox: list[WatchEvent] = []
        self.reflectors: dict[ResourceKey, Follower] = {}
        for key in kinds:
            info = _KINDS.get(key)
            if info is None:
                raise ValueError(f"cannot follow {key[1]!r} of group {key[0]!r}: not a kind Berth knows")
            self._objects[key] = {}
            self._gone[key] = {}
            self.reflectors[key] = reflector(remote.client, info, self._enqueue)
        for key in absent:
            self._objects.setdefault(key, {})
            self._gone.setdefault(key, {})
            self._listed.add(key)

    # ----- following the server ------------------------------------------------------------------
    @property
    def kinds(self) -> tuple[ResourceKey, ...]:
        """The followed kinds."""
        return tuple(self._objects)

    def start(self) -> None:
        """Start every reflector."""
        for r in self.reflectors.values():
            r.start()

    def stop(self) -> None:
        """Stop every reflector and every watch handed out; let the bindings in flight finish."""
        if self.binder is not None:
            self.binder.close()
        for r in self.reflectors.values():
            r.stop()
        for w in self._watches:
            w.stop()

    def finish_bindings(self, timeout: float = 10.0) -> None:
        """Let the bindings in flight end (at most `timeout` seconds) and report their outcomes now; what else
        waits in the queue stays for `pump`."""
        if self.binder is None:
            return
        self.binder.wait_idle(timeout)
        rest: list[Listed | WatchEvent | BindOutcome] = []
        while True:
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, BindOutcome):
                self._bound(item)
            else:
                rest.append(item)
        for item in rest:
            self._inbox.put(item)

    @property
    def synced(self) -> bool:
        """True once every followed kind has been listed and applied (client-go's ``HasSynced``)."""
        return len(self._listed) == len(self._objects)

    def _enqueue(self, item: Listed | WatchEvent | BindOutcome) -> None:
        self._inbox.put(item)
        self._ready.set()
        if self.on_ready is not None:
            self.on_ready()

    def wait(self, timeout: float | None) -> bool:
        """Block until something is enqueued (or `timeout` seconds pass); True when something is."""
        if not self._inbox.empty():
            return True
        self._ready.clear()
        if not self._inbox.empty():
            return True
        return self._ready.wait(timeout)

    def wake(self) -> None:
        """End a `wait` now (from any thread)."""
        self._ready.set()

    def pending(self) -> bool:
        """Whether items wait to be applied."""
        return not self._inbox.empty()

    def pump(self, limit: int | None = None) -> int:
        """Apply what the reflectors enqueued (at most `limit` items); the number of items applied."""
        done = 0
        while limit is None or done < limit:
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                break
            done += 1
            if isinstance(item, Listed):
                self._apply_list(item)
            elif isinstance(item, BindOutcome):
                self._bound(item)
            else:
                self._apply(item.key, item.type, item.object)
        return done

    def _bound(self, outcome: BindOutcome) -> None:
        """A binding sent in the background ended (on the thread that pumps)."""
        req = outcome.request
        if outcome.error is None:
            if self.on_bound is not None:
                self.on_bound(req.namespace, req.name, req.uid, req.node)
            return
        log.warning("binding %s/%s to %s failed: %s", req.namespace, req.name, req.node, outcome.error)
        if self.on_bind_failed is not None:
            self.on_bind_failed(req.namespace, req.name, req.uid, outcome.error.message)

    def wait_for_sync(self, timeout: float, stopping: threading.Event | None = None) -> bool:
        """Pump until every kind is listed, at most `timeout` seconds; whether it got there."""
        deadline = time.monotonic() + timeout
        while not self.synced:
            left = deadline - time.monotonic()
            if left <= 0 or (stopping is not None and stopping.is_set()):
                return False
            self.wait(min(left, 0.5))
            self.pump()
        return True

    # ----- the replica -----------------------------------------------------------------------------
    def _apply_list(self, listed: Listed) -> None:
        key = listed.key
        bucket = self._objects[key]
        fresh = {_name(o): o for o in listed.items}
        for name, old in list(bucket.items()):
            if name not in fresh and _rv(old) <= listed.resource_version:
                del bucket[name]
                self._sorted.pop(key, None)
                self._emit(WatchEvent(DELETED, old, key, listed.resource_version))
        self._gone[key] = {n: rv for n, rv in self._gone[key].items() if rv > listed.resource_version}
        for obj in listed.items:
            self._apply(key, ADDED, obj)
        self._revision = max(self._revision, listed.resource_version)
        self._listed.add(key)

    def _apply(self, key: ResourceKey, type_: str, obj: Obj) -> bool:
        """Apply one change if it is newer than what the replica holds; True when it was applied."""
        bucket = self._objects.get(key)
        if bucket is None:
            return False
        name = _name(obj)
        rv = _rv(obj)
        old = bucket.get(name)
        newest = max(_rv(old) if old is not None else 0, self._gone[key].get(name, 0))
        if rv <= newest:
            return False
        self._revision = max(self._revision, rv)
        if type_ == DELETED:
            gone = self._gone[key]
            gone[name] = rv
            if len(gone) > MAX_TOMBSTONES:  # the oldest deletions: their events are long applied
                for old_name in list(gone)[: MAX_TOMBSTONES // 2]:
                    del gone[old_name]
            if old is None:
                return False
            del bucket[name]
            self._sorted.pop(key, None)
            self._emit(WatchEvent(DELETED, obj, key, rv))
            return True
        bucket[name] = obj
        if old is None:
            self._sorted.pop(key, None)
        self._emit(WatchEvent(ADDED if old is None else MODIFIED, obj, key, rv))
        return True

    def _answered(self, obj: Obj, dry_run: bool) -> Obj:
        """Read-your-writes: apply the server's answer to a write when it is newer than the replica's copy."""
        if not dry_run and obj.get("metadata"):
            self._apply(_key_of(obj), MODIFIED, obj)
        return obj

    def _emit(self, ev: WatchEvent) -> None:
        """Tell subscribers and watches of a change, in order, never re-entering a subscriber."""
        self._outbox.append(ev)
        if self._emitting:
            return
        self._emitting = True
        try:
            while self._outbox:
                batch, self._outbox = self._outbox, []
                for event in batch:
                    for key, callback in self._subs:
                        if key is None or key == event.key:
                            callback(event)
                    for w in self._watches:
                        if w.wants(event):
                            w.push(event)
        finally:
            self._emitting = False

    def subscribe(
        self, callback: Callable[[WatchEvent], None], key: ResourceKey | None = None
    ) -> Callable[[], None]:
        """Call `callback(event)` for every change of the replica (of `key`, or of every kind); returns a
        function that unsubscribes."""
        entry = (key, callback)
        self._subs = (*self._subs, entry)

        def unsubscribe() -> None:
            self._subs = tuple(s for s in self._subs if s is not entry)

        return unsubscribe

    def all_objects(self) -> list[Obj]:
        """Every replicated object, sorted by kind, namespace and name."""
        out: list[Obj] = []
        for key in sorted(self._objects, key=lambda k: (k[1], k[0])):
            bucket = self._objects[key]
            out.extend(bucket[n] for n in sorted(bucket))
        return out

    def count(self, key: ResourceKey) -> int:
        """How many objects of a followed kind the replica holds."""
        return len(self._objects.get(key, ()))

    # ----- the Store contract: reads -------------------------------------------------------------------
    @property
    def revision(self) -> int:
        """The newest resourceVersion applied or answered."""
        return max(self._revision, self.remote.revision)

    def get(self, key: ResourceKey, namespace: str, name: str) -> Obj:
        """The replica's copy (a followed kind), else the server's; NotFound when there is none."""
        bucket = self._objects.get(key)
        if bucket is None:
            found: Obj = self._call(self.remote.get, key, namespace, name)
            return found
        info = _KINDS[key]
        obj = bucket.get((namespace if info.namespaced else "", name))
        if obj is None:
            raise NotFound.of(info.plural, info.group, name)
        return obj

    def list(
        self,
        key: ResourceKey,
        namespace: str | None = None,
        *,
        label_selector: str | Selector | None = None,
        field_selector: str | None = None,
    ) -> tuple[list[Obj], str]:
        """Matching objects sorted by (namespace, name), from the replica for a followed kind."""
        bucket = self._objects.get(key)
        if bucket is None:
            listed: tuple[list[Obj], str] = self._call(
                self.remote.list, key, namespace, label_selector=label_selector, field_selector=field_selector
            )
            return listed
        if isinstance(label_selector, str):
            try:
                label_selector = parse_selector(label_selector)
            except LabelSelectorError as e:
                raise BadRequest(f"unable to parse labelSelector: {e}") from None
        fsel = compile_field_selector(field_selector) if field_selector else None
        order = self._sorted.get(key)
        if order is None:
            order = self._sorted[key] = sorted(bucket)
        if namespace and _KINDS[key].namespaced:
            items = [bucket[n] for n in order if n[0] == namespace]
        else:
            items = [bucket[n] for n in order]
        if label_selector is not None and not label_selector.is_everything():
            matches = label_selector.matches
            items = [o for o in items if matches(o["metadata"].get("labels") or {})]
        if fsel is not None and not fsel.is_everything():
            items = [o for o in items if fsel.matches(o)]
        return items, str(self.revision)

    def watch(
        self,
        key: ResourceKey | None,
        *,
        resource_version: str | None = None,
        namespace: str | None = None,
    ) -> Watch:
        """Changes of the replica: with `resource_version` None/""/"0", first an ADDED event for every object
        held; otherwise the changes from now on."""
        w = Watch(key, namespace, self._drop_watch)
        if resource_version in (None, "", "0"):
            for k, bucket in self._objects.items():
                if key is not None and k != key:
                    continue
                for obj in sorted(bucket.values(), key=_rv):
                    ev = WatchEvent(ADDED, obj, k, _rv(obj))
                    if w.wants(ev):
                        w.push(ev)
        self._watches = (*self._watches, w)
        return w

    def _drop_watch(self, w: Watch) -> None:
        self._watches = tuple(x for x in self._watches if x is not w)

    # ----- the Store contract: writes ------------------------------------------------------------------
    def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ServerUnreachable as e:
            raise ServiceUnavailable(f"the server is currently unable to handle the request ({e})") from None

    def create(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        """POST the object; the answer is applied to the replica. An Event, with an events sink, is queued
        for it and returned as sent."""
        if self.events is not None and not dry_run and _key_of(obj) == _EVENT:
            writer, sink = self.event_writer, self.events[1]
            assert writer is not None
            mine = copy.deepcopy(obj)
            sink.submit(lambda: writer.create(mine))
            return mine
        return self._answered(self._call(self.remote.create, obj, dry_run=dry_run), dry_run)

    def update(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        """PUT the object; the answer is applied. A Conflict because the replica's copy it was made from is
        stale is retried on the server's newest version (`berth.remote.conflict`)."""
        return self._answered(self._retrying(self.remote.update, obj, dry_run), dry_run)

    def update_status(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        """PUT the status subresource; the answer is applied. Conflicts are retried as `update`'s."""
        return self._answered(self._retrying(self.remote.update_status, obj, dry_run), dry_run)

    def _retrying(self, write: Callable[..., Obj], obj: Obj, dry_run: bool) -> Obj:
        """`write(obj)`; on a Conflict, when `obj` was made from the replica's copy of the same resourceVersion,
        the change it makes to that copy is applied to the object read anew from the server and written again
        (client-go's ``RetryOnConflict`` with ``DefaultRetry``). Other conflicts, and the last one, are raised."""
        key = _key_of(obj)
        base = self._objects.get(key, {}).get(_name(obj))
        meta = obj.get("metadata") or {}
        if base is None or (base.get("metadata") or {}).get("resourceVersion") != meta.get("resourceVersion"):
            base = None  # not made from the replica's copy: its change is unknown
        attempt = obj
        delays = backoff_delays()
        for step in range(len(delays) + 1):
            try:
                answer: Obj = self._call(write, attempt, dry_run=dry_run)
                if step:
                    self.conflicts_retried += 1
                return answer
            except Conflict:
                if base is None or step == len(delays):
                    raise
            self.sleep(delays[step])
            change = merge_diff(base, obj)
            namespace, name = _name(obj)
            fresh: Obj = self._call(self.remote.get, key, namespace, name)
            log.info(
                "%s %s/%s changed on the server meanwhile (resourceVersion %s): writing the change again",
                key[1],
                namespace,
                name,
                (fresh.get("metadata") or {}).get("resourceVersion"),
            )
            attempt = merge_patch(fresh, change)
        raise AssertionError("unreachable")

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
        """PATCH (JSON merge patch) the object or its subresource; the answer is applied. An Event's patch,
        with an events sink, is queued for it (the answer is then the patch)."""
        if self.events is not None and not dry_run and key == _EVENT and subresource is None:
            writer, sink = self.event_writer, self.events[1]
            assert writer is not None
            mine = copy.deepcopy(patch)
            sink.submit(lambda: writer.patch(namespace, name, mine))
            return mine
        doc = self._call(
            self.remote.patch, key, namespace, name, patch, subresource=subresource, dry_run=dry_run
        )
        return self._answered(doc, dry_run)

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
        """DELETE with DeleteOptions; the replica learns of the deletion from the watch."""
        doc: Obj = self._call(
            self.remote.delete,
            key,
            namespace,
            name,
            grace_period_seconds=grace_period_seconds,
            resource_version=resource_version,
            uid=uid,
            propagation=propagation,
            dry_run=dry_run,
        )
        return doc

    def bind(
        self,
        namespace: str,
        name: str,
        node_name: str,
        *,
        uid: str | None = None,
        annotations: Mapping[str, str] | None = None,
    ) -> Obj:
        """POST a Binding (queue it, with background binding); the pod as the replica holds it, with
        `node_name` (the watch brings the bound pod)."""
        if self.binder is not None:
            self.binder.submit(BindRequest(namespace, name, node_name, uid, dict(annotations or {})))
            return self._as_bound(namespace, name, node_name)
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
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/binding"
        self._call(self.remote.client.request, "POST", path, body=binding)
        return self._as_bound(namespace, name, node_name)

    @property
    def binds_in_background(self) -> bool:
        """Whether `bind` queues the binding for the background binder (its outcome comes from `pump()`)."""
        return self.binder is not None

    def _as_bound(self, namespace: str, name: str, node_name: str) -> Obj:
        pod = self._objects[_POD].get((namespace, name)) if _POD in self._objects else None
        if pod is None:
            meta = {"name": name, "namespace": namespace}
            return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"nodeName": node_name}}
        return {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": node_name}}

    def evict(
        self,
        namespace: str,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
        avoid: bool = False,
    ) -> Obj:
        """POST a policy/v1 Eviction (TooManyRequests when a budget refuses); the pod as the replica holds it
        (the watch brings its deletion). With `avoid`, its node is then asked to avoid the pod's controller."""
        pod = self.get(_POD, namespace, name)
        body = eviction_body(namespace, name, grace_period_seconds=grace_period_seconds, dry_run=dry_run)
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/eviction"
        self._call(self.remote.client.request, "POST", path, body=body)
        if avoid and not dry_run:
            add_prefer_avoid(self, pod, datetime.now(UTC).replace(microsecond=0))
        return pod

    def timestamp(self, at: float | None = None) -> str:
        """RFC 3339 of wall time now, or at the clock reading `at`."""
        return self.remote.timestamp(at)

    def now_nanos(self) -> int:
        """Wall-clock nanoseconds since the Unix epoch, strictly increasing from call to call."""
        return self.remote.now_nanos()

    def unix_time(self) -> float:
        """Seconds since the Unix epoch now."""
        return time.time()
