"""The garbage collector (kube-controller-manager's ``garbagecollector``): cascading deletion by ownerReferences.

An object whose ``metadata.ownerReferences`` all point at owners that no longer exist is deleted; what a delete
asked for its dependents (`berth.api.deletion`) is carried out:

* **Background** (the default): the owner is gone at once; its dependents are then found dangling and deleted,
  each with the policy its own finalizers name (Background when none), so a Deployment's ReplicaSets go, then
  their pods, which terminate gracefully like any deleted pod.
* **Foreground**: the owner waits with the ``foregroundDeletion`` finalizer. Its dependents are deleted (those
  with dependents of their own in Foreground too); once no dependent with ``blockOwnerDeletion: true`` is left
  the finalizer is removed and the owner goes. A dependent with another owner that still exists is not deleted:
  its reference to the waiting owner is removed instead.
* **Orphan**: the owner waits with the ``orphan`` finalizer; the references to it are removed from its
  dependents, then the finalizer, and the owner goes.

As kube's, the collector keeps a graph of every object (Events aside) by uid, fed by store events; an owner it
has not seen is a "virtual" node, checked against the store and, when it does not exist there (or an object of
that name has another uid), removed so that its dependents are collected: an object whose owner is absent when
the collector starts is therefore collected too. Before acting, the collector reads the object and each owner
from the store (kube's ``attemptToDeleteItem``): an owner is dangling when it is not found or has another uid.
An ownerReference whose apiVersion/kind is not served cannot be verified, so nothing is done about its
dependent (kube retries such an item, to no effect, until the kind is served), and a cluster-scoped object
naming a namespaced owner is left alone. A dependent naming an owner seen in another namespace gets a Warning
``OwnerRefInvalidNamespace`` event.

Work is queued per uid and done on clock timers at the current time, after the events that caused it; a failed
write is retried with kube's per-item backoff (5 ms doubling to 1000 s). Writes carry the preconditions kube's
collector sends (uid and resourceVersion).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from berth.api.contracts import Recorder, Store
from berth.api.deletion import (
    BACKGROUND,
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
    FOREGROUND,
    ORPHAN,
)
from berth.api.errors import Conflict, NotFound, StatusError
from berth.api.kinds import KindInfo, all_kinds, lookup_kind
from berth.api.watch import ResourceKey
from berth.clock import Clock, Timer
from berth.store.events import EventRecorder

__all__ = ["COMPONENT", "GC_PRIORITY", "IGNORED_RESOURCES", "GarbageCollector"]

COMPONENT = "garbage-collector-controller"
"""The reporting component of the collector's events."""
GC_PRIORITY = 10
"""Timer priority of the collector's work (lower runs first among timers due at the same time)."""
IGNORED_RESOURCES: frozenset[ResourceKey] = frozenset({("", "Event"), ("events.k8s.io", "Event")})
"""Kinds the collector does not follow (kube-controller-manager's default ignored resources: events)."""

_BASE_DELAY = 0.005
_MAX_DELAY = 1000.0
_CONFLICT_RETRIES = 5  # retry.DefaultBackoff.Steps

Obj = Mapping[str, Any]
KindLookup = Callable[[str, str], KindInfo]


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


class _Node:
    """One object of the graph: its coordinates, owners (ownerReferences), dependents (uids) and state."""

    __slots__ = (
        "api_version",
        "being_deleted",
        "deleting_dependents",
        "dependents",
        "kind",
        "name",
        "namespace",
        "observed",
        "orphan_seen",
        "owners",
        "uid",
    )

    def __init__(
        self, uid: str, api_version: str, kind: str, namespace: str, name: str, observed: bool
    ) -> None:
        self.uid = uid
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.name = name
        self.observed = observed
        self.owners: Sequence[Obj] = ()  # the object's own (immutable) list
        self.dependents: set[str] | None = None  # made on the first dependent (most objects have none)
        self.being_deleted = False
        self.deleting_dependents = False  # kube's: once set, kept until the node goes
        self.orphan_seen = False  # last seen being deleted with the orphan finalizer

    def identity(self) -> str:
        """kube's objectReference.String(), as its events print an owner."""
        return f"[{self.api_version}/{self.kind}, namespace: {self.namespace}, name: {self.name}, uid: {self.uid}]"

    def matches(self, ref: Obj) -> bool:
        """ownerReferenceMatchesCoordinates: same uid, name, kind and API group."""
        if ref.get("uid") != self.uid or ref.get("name") != self.name or ref.get("kind") != self.kind:
            return False
        api_version = ref.get("apiVersion") or ""
        return api_version == self.api_version or _group(api_version) == _group(self.api_version)


class _CannotVerify(Exception):
    """An ownerReference (or an item) of a kind that is not served: the collector can decide nothing."""


class _Forget(Exception):
    """An item that can never be collected (a cluster-scoped object naming a namespaced owner)."""


class GarbageCollector:
    """Deletes dependents of deleted owners and carries out Foreground and Orphan deletion (module docstring)."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        recorder: Recorder | None = None,
        kinds: KindLookup = lookup_kind,
        priority: int = GC_PRIORITY,
    ) -> None:
        """Create the collector over `store`; `kinds` resolves an apiVersion/kind to what the store serves
        (KeyError when not served). Every object already in the store is put in the graph, and owners that do
        not exist are checked at once (their dependents are then collected)."""
        self.store = store
        self.clock = clock
        self.recorder: Recorder = recorder or EventRecorder(store, component=COMPONENT)
        self.kinds = kinds
        self.priority = priority
        self._nodes: dict[str, _Node] = {}
        self._delete_queue: dict[str, None] = {}
        self._orphan_queue: dict[str, None] = {}
        self._timer: Timer | None = None
        self._failures: dict[tuple[str, str], int] = {}
        self._retry: dict[tuple[str, str], Timer] = {}
        seen: set[ResourceKey] = set()
        for info in all_kinds():
            key = (info.group, info.kind)
            if key in seen or key in IGNORED_RESOURCES:
                continue
            seen.add(key)
            try:
                items = store.list(key)[0]
            except StatusError:  # a kind this store does not keep
                continue
            for obj in items:
                self.handle_event("ADDED", obj)

    # ----- the graph ----------------------------------------------------------------------------------------

    def handle_event(self, type_: str, obj: Obj) -> None:
        """Update the graph from an ADDED/MODIFIED/DELETED event of any kind (Events are ignored) and queue the
        work it calls for (kube's ``processGraphChanges``)."""
        kind = obj.get("kind") or ""
        api_version = obj.get("apiVersion") or ""
        if kind == "Event" and (_group(api_version), kind) in IGNORED_RESOURCES:
            return
        meta = obj.get("metadata") or {}
        uid = meta.get("uid")
        if not uid:
            return
        node = self._nodes.get(uid)
        if type_ == "DELETED":
            if node is not None:
                self._remove_node(node)
            return
        refs: Sequence[Obj] = meta.get("ownerReferences") or ()
        being_deleted = "deletionTimestamp" in meta and bool(meta["deletionTimestamp"])
        if node is not None and node.observed:
            # the common case: an update of a known object (a status write keeps the very same list)
            if refs is not node.owners and list(refs) != list(node.owners):
                self._owners_changed(node, refs)
            if node.api_version != api_version or node.kind != kind:
                node.api_version, node.kind = api_version, kind
            if being_deleted:
                node.being_deleted = True
                self._transitions(node, True, meta.get("finalizers") or ())
            elif node.orphan_seen:
                node.orphan_seen = False
            return
        namespace = meta.get("namespace") or ""
        if node is None:
            node = _Node(uid, api_version, kind, namespace, meta.get("name", ""), True)
            node.owners = refs
            node.being_deleted = being_deleted
            self._nodes[uid] = node
            if refs:
                self._add_dependent_to_owners(node, refs)
        else:
            self._observe(node, api_version, kind, namespace, meta.get("name", ""))
            if list(refs) != list(node.owners):
                self._owners_changed(node, refs)
            node.being_deleted = being_deleted
        if being_deleted:
            self._transitions(node, True, meta.get("finalizers") or ())

    def _observe(self, node: _Node, api_version: str, kind: str, namespace: str, name: str) -> None:
        """A virtual node is seen for real: its dependents that named it otherwise are checked."""
        node.observed = True
        node.api_version, node.kind, node.namespace, node.name = api_version, kind, namespace, name
        for dep_uid in sorted(node.dependents or ()):
            dep = self._nodes.get(dep_uid)
            if dep is None:
                continue
            if namespace and dep.namespace != namespace:
                self._invalid_namespace(dep, node.uid)
                self._enqueue_delete(dep_uid)
            elif not all(node.matches(r) for r in dep.owners if r.get("uid") == node.uid):
                self._enqueue_delete(dep_uid)

    def _owners_changed(self, node: _Node, new: Sequence[Obj]) -> None:
        """referencesDiffs: owners whose blocking reference went away are rechecked; the graph follows."""
        old_by_uid = {str(r.get("uid")): r for r in node.owners}
        new_by_uid = {str(r.get("uid")): r for r in new}
        added = [r for u, r in new_by_uid.items() if u not in old_by_uid]
        removed = [r for u, r in old_by_uid.items() if u not in new_by_uid]
        for ref in removed:
            if ref.get("blockOwnerDeletion") is True and str(ref.get("uid")) in self._nodes:
                self._enqueue_delete(str(ref.get("uid")))
        for u, ref in new_by_uid.items():
            was = old_by_uid.get(u)
            if (
                was is not None
                and was.get("blockOwnerDeletion") is True
                and ref.get("blockOwnerDeletion") is not True
                and u in self._nodes
            ):
                self._enqueue_delete(u)
        node.owners = new
        self._add_dependent_to_owners(node, added)
        self._remove_dependent_from_owners(node, removed)

    def _remove_dependent_from_owners(self, node: _Node, refs: Iterable[Obj]) -> None:
        """The node is no dependent of these owners any more; a virtual owner left without dependents goes."""
        for ref in refs:
            owner = self._nodes.get(str(ref.get("uid")))
            if owner is not None and owner.dependents:
                owner.dependents.discard(node.uid)
                if not owner.dependents and not owner.observed:
                    del self._nodes[owner.uid]

    def _add_dependent_to_owners(self, node: _Node, refs: Iterable[Obj]) -> None:
        """addDependentToOwners: an owner not in the graph becomes a virtual node, checked at once."""
        suspect = False
        for ref in refs:
            owner_uid = ref.get("uid")
            if not owner_uid:
                continue
            owner = self._nodes.get(owner_uid)
            if owner is None:
                owner = _Node(
                    owner_uid,
                    str(ref.get("apiVersion") or ""),
                    str(ref.get("kind") or ""),
                    node.namespace,
                    str(ref.get("name") or ""),
                    False,
                )
                self._nodes[owner_uid] = owner
                owner.dependents = {node.uid}
                self._enqueue_delete(owner_uid)
                continue
            if owner.dependents is None:
                owner.dependents = {node.uid}
            else:
                owner.dependents.add(node.uid)
            if owner.observed and owner.namespace and owner.namespace != node.namespace:
                self._invalid_namespace(node, owner_uid)
                suspect = True
            elif not owner.matches(ref):
                suspect = True
        if suspect:
            self._enqueue_delete(node.uid)

    def _transitions(self, node: _Node, being_deleted: bool, finalizers: Sequence[str]) -> None:
        """processTransitions: a deletion that starts with the orphan finalizer queues the orphaning, one that
        starts with foregroundDeletion queues every dependent and the owner."""
        orphan = being_deleted and FINALIZER_ORPHAN_DEPENDENTS in finalizers
        starts_orphan = orphan and not node.orphan_seen
        node.orphan_seen = orphan
        if starts_orphan:
            self._enqueue_orphan(node.uid)
            return
        foreground = being_deleted and FINALIZER_DELETE_DEPENDENTS in finalizers
        if foreground and not node.deleting_dependents:
            node.deleting_dependents = True
            for dep_uid in sorted(node.dependents or ()):
                self._enqueue_delete(dep_uid)
            self._enqueue_delete(node.uid)

    def _remove_node(self, node: _Node) -> None:
        """The object is gone: its dependents are checked, and owners waiting for their dependents rechecked."""
        self._nodes.pop(node.uid, None)
        self._remove_dependent_from_owners(node, node.owners)
        for dep_uid in sorted(node.dependents or ()):
            self._enqueue_delete(dep_uid)
        for ref in node.owners:
            owner = self._nodes.get(str(ref.get("uid")))
            if owner is not None and owner.deleting_dependents:
                self._enqueue_delete(owner.uid)

    def _invalid_namespace(self, dep: _Node, owner_uid: str) -> None:
        """reportInvalidNamespaceOwnerRef: a Warning event on the dependent."""
        for ref in dep.owners:
            if ref.get("uid") == owner_uid:
                shown = _Node(
                    owner_uid,
                    str(ref.get("apiVersion") or ""),
                    str(ref.get("kind") or ""),
                    dep.namespace,
                    str(ref.get("name") or ""),
                    False,
                )
                involved = {
                    "apiVersion": dep.api_version,
                    "kind": dep.kind,
                    "metadata": {"name": dep.name, "namespace": dep.namespace, "uid": dep.uid},
                }
                self.recorder.event(
                    involved,
                    "Warning",
                    "OwnerRefInvalidNamespace",
                    f'ownerRef {shown.identity()} does not exist in namespace "{dep.namespace}"',
                )
                return

    # ----- queues -------------------------------------------------------------------------------------------

    def _enqueue_delete(self, uid: str) -> None:
        self._delete_queue[uid] = None
        self._arm()

    def _enqueue_orphan(self, uid: str) -> None:
        self._orphan_queue[uid] = None
        self._arm()

    def _arm(self) -> None:
        if self._timer is None or not self._timer.active:
            self._timer = self.clock.call_at(self.clock.now(), self._work, self.priority)

    def pending(self) -> int:
        """Items waiting to be processed now (retries after a failure not counted)."""
        return len(self._delete_queue) + len(self._orphan_queue)

    def _work(self) -> None:
        """Process what is queued now: orphaning first, then attempts to delete; new work gets a new timer."""
        self._timer = None
        orphans, self._orphan_queue = self._orphan_queue, {}
        deletes, self._delete_queue = self._delete_queue, {}
        for uid in orphans:
            self._process("orphan", uid)
        for uid in deletes:
            self._process("delete", uid)

    def _process(self, queue: str, uid: str) -> None:
        item = (queue, uid)
        timer = self._retry.pop(item, None)
        if timer is not None:
            timer.cancel()
        try:
            ok = self._attempt_to_orphan(uid) if queue == "orphan" else self._attempt_to_delete(uid)
        except (_CannotVerify, _Forget):
            ok = True  # nothing can be decided about this item
        except StatusError:
            ok = False
        if ok:
            self._failures.pop(item, None)
            return
        failures = self._failures.get(item, 0)
        self._failures[item] = failures + 1
        delay = min(_BASE_DELAY * 2**failures, _MAX_DELAY)
        self._retry[item] = self.clock.call_at(
            self.clock.now() + delay, lambda: self._retry_item(item), self.priority
        )

    def _retry_item(self, item: tuple[str, str]) -> None:
        self._retry.pop(item, None)
        if item[0] == "orphan":
            self._enqueue_orphan(item[1])
        else:
            self._enqueue_delete(item[1])

    # ----- reading the store --------------------------------------------------------------------------------

    def _where(self, api_version: str, kind: str, namespace: str) -> tuple[ResourceKey, str, bool]:
        """The store key, the namespace to look in and whether the kind is namespaced; _CannotVerify when the
        kind is not served."""
        try:
            info = self.kinds(api_version, kind)
        except KeyError:
            raise _CannotVerify(f"{api_version}/{kind}") from None
        return (info.group, info.kind), (namespace if info.namespaced else ""), info.namespaced

    def _latest(self, node: _Node) -> Obj | None:
        """The stored object of the node, or None when it is gone (or another object has its name)."""
        key, ns, _ = self._where(node.api_version, node.kind, node.namespace)
        try:
            obj = self.store.get(key, ns, node.name)
        except NotFound:
            return None
        return obj if obj["metadata"].get("uid") == node.uid else None

    def _owner_state(self, ref: Obj, item: _Node) -> Obj | None:
        """isDangling: the owner `ref` names as stored, or None when it is dangling (absent, or another uid)."""
        key, ns, namespaced = self._where(
            str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""), item.namespace
        )
        if namespaced and not item.namespace:
            raise _Forget
        try:
            owner = self.store.get(key, ns, str(ref.get("name") or ""))
        except NotFound:
            return None
        return owner if owner["metadata"].get("uid") == ref.get("uid") else None

    # ----- attemptToDelete ----------------------------------------------------------------------------------

    def _attempt_to_delete(self, uid: str) -> bool:
        """One attempt on an item; False when it should be retried later."""
        node = self._nodes.get(uid)
        if node is None:
            return True
        if node.being_deleted and not node.deleting_dependents:
            return True  # a one-way trip: its dependents are handled when it is gone
        try:
            latest = self._latest(node)
        except _CannotVerify:
            return True
        if latest is None:
            self._remove_node(node)  # kube's virtual delete event
            return True
        if node.deleting_dependents:
            return self._process_deleting_dependents(node)
        refs: Sequence[Obj] = latest["metadata"].get("ownerReferences") or ()
        if not refs:
            return True
        solid: list[Obj] = []
        dangling: list[Obj] = []
        waiting: list[Obj] = []
        try:
            for ref in refs:
                owner = self._owner_state(ref, node)
                if owner is None:
                    dangling.append(ref)
                    continue
                ometa = owner["metadata"]
                if ometa.get("deletionTimestamp") and FINALIZER_DELETE_DEPENDENTS in (
                    ometa.get("finalizers") or ()
                ):
                    waiting.append(ref)
                else:
                    solid.append(ref)
        except (_CannotVerify, _Forget):
            return True
        if solid:
            if not dangling and not waiting:
                return True
            gone = {str(r.get("uid")) for r in (*dangling, *waiting)}
            return self._remove_owner_references(node, gone)
        if waiting and node.dependents:
            for dep_uid in sorted(node.dependents or ()):
                dep = self._nodes.get(dep_uid)
                if dep is not None and dep.deleting_dependents:
                    # a cycle is possible: unblock this item's owners before deleting it in Foreground
                    if not self._unblock_owner_references(node):
                        return False
                    break
            return self._delete_object(node, latest, FOREGROUND)
        finalizers = latest["metadata"].get("finalizers") or ()
        if FINALIZER_ORPHAN_DEPENDENTS in finalizers:
            policy = ORPHAN
        elif FINALIZER_DELETE_DEPENDENTS in finalizers:
            policy = FOREGROUND
        else:
            policy = BACKGROUND
        return self._delete_object(node, latest, policy)

    def _process_deleting_dependents(self, node: _Node) -> bool:
        """An owner waiting in Foreground: done when no blocking dependent is left, else its blocking
        dependents are (re)queued."""
        blocking = [d for d in sorted(node.dependents or ()) if self._blocks(d, node.uid)]
        if not blocking:
            return self._remove_finalizer(node, FINALIZER_DELETE_DEPENDENTS)
        for dep_uid in blocking:
            dep = self._nodes.get(dep_uid)
            if dep is not None and not dep.deleting_dependents:
                self._enqueue_delete(dep_uid)
        return True

    def _blocks(self, dep_uid: str, owner_uid: str) -> bool:
        dep = self._nodes.get(dep_uid)
        if dep is None:
            return False
        return any(r.get("uid") == owner_uid and r.get("blockOwnerDeletion") is True for r in dep.owners)

    # ----- writes -------------------------------------------------------------------------------------------

    def _delete_object(self, node: _Node, latest: Obj, policy: str) -> bool:
        """deleteObject: delete with uid and resourceVersion preconditions; after a Conflict, again with the uid
        alone if only something other than the ownerReferences changed."""
        key, ns, _ = self._where(node.api_version, node.kind, node.namespace)
        meta = latest["metadata"]
        rv = meta.get("resourceVersion")
        try:
            self.store.delete(key, ns, node.name, uid=node.uid, resource_version=rv, propagation=policy)
        except NotFound:
            self._remove_node(node)
            return True
        except Conflict:
            try:
                live = self.store.get(key, ns, node.name)
            except NotFound:
                return True
            lmeta = live["metadata"]
            if (
                lmeta.get("uid") != node.uid
                or lmeta.get("resourceVersion") == rv
                or lmeta.get("ownerReferences") != meta.get("ownerReferences")
            ):
                return False
            try:
                self.store.delete(key, ns, node.name, uid=node.uid, propagation=policy)
            except NotFound:
                return True
        return True

    def _patch_metadata(self, node: _Node, change: Callable[[Obj], dict[str, Any] | None]) -> bool:
        """Read the object, let `change` compute a metadata merge patch (None: nothing to do) and write it with the
        read resourceVersion as precondition, retrying on Conflict (retry.RetryOnConflict)."""
        for _ in range(_CONFLICT_RETRIES):
            try:
                latest = self._latest(node)
            except _CannotVerify:
                return True
            if latest is None:
                return True
            patch = change(latest["metadata"])
            if patch is None:
                return True
            patch["resourceVersion"] = latest["metadata"].get("resourceVersion")
            key, ns, _ = self._where(node.api_version, node.kind, node.namespace)
            try:
                self.store.patch(key, ns, node.name, {"metadata": patch})
            except NotFound:
                return True
            except Conflict:
                continue
            return True
        return False

    def _remove_owner_references(self, node: _Node, owner_uids: set[str]) -> bool:
        """Remove the ownerReferences to `owner_uids` from the object (none left: the field goes)."""

        def change(meta: Obj) -> dict[str, Any] | None:
            refs = meta.get("ownerReferences") or []
            kept = [r for r in refs if r.get("uid") not in owner_uids]
            if len(kept) == len(refs):
                return None
            return {"ownerReferences": kept or None}

        return self._patch_metadata(node, change)

    def _unblock_owner_references(self, node: _Node) -> bool:
        """Set ``blockOwnerDeletion: false`` on every blocking ownerReference of the object."""

        def change(meta: Obj) -> dict[str, Any] | None:
            refs = meta.get("ownerReferences") or []
            if not any(r.get("blockOwnerDeletion") is True for r in refs):
                return None
            return {
                "ownerReferences": [
                    {**r, "blockOwnerDeletion": False} if r.get("blockOwnerDeletion") is True else r
                    for r in refs
                ]
            }

        return self._patch_metadata(node, change)

    def _remove_finalizer(self, node: _Node, finalizer: str) -> bool:
        """removeFinalizer: the object without `finalizer` (none left: it is deleted, its deletion being due)."""

        def change(meta: Obj) -> dict[str, Any] | None:
            finalizers = meta.get("finalizers") or []
            if finalizer not in finalizers:
                return None
            return {"finalizers": [f for f in finalizers if f != finalizer] or None}

        return self._patch_metadata(node, change)

    # ----- attemptToOrphan ----------------------------------------------------------------------------------

    def _attempt_to_orphan(self, uid: str) -> bool:
        """Remove the owner's references from its dependents, then its orphan finalizer."""
        node = self._nodes.get(uid)
        if node is None:
            return True
        for dep_uid in sorted(node.dependents or ()):
            dep = self._nodes.get(dep_uid)
            if dep is not None and not self._remove_owner_references(dep, {uid}):
                return False
        return self._remove_finalizer(node, FINALIZER_ORPHAN_DEPENDENTS)

    # ----- introspection ------------------------------------------------------------------------------------

    def dependents(self, uid: str) -> list[str]:
        """The uids of the objects the graph knows as dependents of `uid` (sorted)."""
        node = self._nodes.get(uid)
        return sorted(node.dependents or ()) if node is not None else []

    def knows(self, uid: str) -> bool:
        """Whether `uid` is in the graph (kube's GraphHasUID)."""
        return uid in self._nodes
