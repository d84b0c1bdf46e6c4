"""The contracts every component is written against: the object `Store` and the event `Recorder`.

One `Store` serves the whole house: the embedded `berth.store.MemoryStore` and `berth.remote.store.RemoteStore`
(a real API server) satisfy it, and so will the storage of the HTTP server. Controllers, the scheduler (and, through the
framework handle, its plugins), admission, the event recorder and drain all take this one protocol.
The embedded store's synchronous `subscribe` is not part of it: only the simulation engine, which owns
that store, uses it; everyone else learns of changes through `watch`.
Refusals are the typed errors of `berth.api.errors`. Time comes from `berth.clock.Clock`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from berth.api.labels import Selector
from berth.api.watch import ResourceKey, Watch

__all__ = ["Recorder", "RevisionLister", "Store"]


class Store(Protocol):
    """Cluster state as wire-form dicts, with Kubernetes API-server semantics.

    Every dict a store returns (from reads, writes and watch events) is the store's own copy and is
    IMMUTABLE: never mutate it; take a deep copy (`berth.store.copy_object`) to build a modified version.
    Writes take ownership of a private deep copy of their input, so callers may keep mutating theirs.
    Refusals raise `berth.api.errors.StatusError` subclasses (NotFound, Conflict, Invalid, ...).
    """

    @property
    def revision(self) -> int:
        """The global revision: the resourceVersion of the latest write (0 before any write)."""
        ...

    def create(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        """Create an object; raises AlreadyExists, Invalid, Forbidden (admission) ... Returns the stored object.

        `dry_run` (kube's ``dryRun=All``, as every write here takes it): the same checks and the same errors as
        the real write, the object as it would be stored returned, nothing stored (no watch event either)."""
        ...

    def get(self, key: ResourceKey, namespace: str, name: str) -> dict[str, Any]:
        """The stored object (namespace "" for cluster-scoped kinds); raises NotFound."""
        ...

    def list(
        self,
        key: ResourceKey,
        namespace: str | None = None,
        *,
        label_selector: str | Selector | None = None,
        field_selector: str | None = None,
    ) -> tuple[list[dict[str, Any]], str]:
        """Matching objects sorted by (namespace, name), and the list's resourceVersion."""
        ...

    def update(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        """Replace metadata/spec (status too for kinds without a status subresource); raises Conflict."""
        ...

    def update_status(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        """Replace only the status (the status subresource); raises Conflict."""
        ...

    def patch(
        self,
        key: ResourceKey,
        namespace: str,
        name: str,
        patch: dict[str, Any],
        *,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Apply a JSON merge patch (RFC 7386) to the object or, with subresource "status", to its status."""
        ...

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
    ) -> dict[str, Any]:
        """Delete (or start gracefully deleting) an object; returns its final state.

        `resource_version` and `uid` are DeleteOptions' preconditions (Conflict when they do not match);
        `propagation` is its propagationPolicy (``Background``, ``Foreground``, ``Orphan``; None: the object's
        finalizers or its kind decide, see `berth.api.deletion`)."""
        ...

    def watch(
        self,
        key: ResourceKey | None,
        *,
        resource_version: str | None = None,
        namespace: str | None = None,
    ) -> Watch:
        """Events after `resource_version`; None/"0" starts with ADDED for every current object."""
        ...

    def bind(
        self,
        namespace: str,
        name: str,
        node_name: str,
        *,
        uid: str | None = None,
        annotations: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The pods/binding subresource: assign the pod to `node_name` (the Binding's `annotations` copied
        onto it); raises Conflict when it is assigned already, being deleted or (with `uid`) another pod."""
        ...

    def evict(
        self,
        namespace: str,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
        avoid: bool = False,
    ) -> dict[str, Any]:
        """The pods/eviction subresource: delete the pod if its PodDisruptionBudgets allow (else
        TooManyRequests); `avoid` also asks its node to avoid the pod's controller (PreferAvoidPods)."""
        ...

    def timestamp(self, at: float | None = None) -> str:
        """RFC 3339 (whole seconds, UTC) of store time `at` (default: now), as objects carry it."""
        ...

    def now_nanos(self) -> int:
        """Nanoseconds since the Unix epoch now, strictly increasing from call to call (client-derived names,
        e.g. Events', use it as client-go does, and so never collide)."""
        ...


@runtime_checkable
class RevisionLister(Protocol):
    """A store that can read a list as it was at an older revision (kube's ``resourceVersionMatch=Exact``)."""

    def list_at(
        self,
        key: ResourceKey,
        revision: int,
        namespace: str | None = None,
        *,
        label_selector: str | Selector | None = None,
        field_selector: str | None = None,
    ) -> tuple[list[dict[str, Any]], str]:
        """`Store.list` as of `revision`; ResourceExpired (410) when that revision is no longer kept."""
        ...


class Recorder(Protocol):
    """Where components record Kubernetes Events about objects."""

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
        """Record one Event (type Normal/Warning) about `obj`; `component` overrides the reporter's name."""
        ...
