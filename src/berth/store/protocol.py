"""The `Store` protocol: what every cluster-state backend offers (MemoryStore, KubeStore, ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from berth.api.labels import Selector
from berth.store.keys import ResourceKey
from berth.store.watch import Watch, WatchEvent

__all__ = ["Store"]


class Store(Protocol):
    """Cluster state as wire-form dicts, with Kubernetes API-server semantics.

    Every dict a store returns (from reads, writes and watch events) is the store's own copy and is
    IMMUTABLE: never mutate it; take a deep copy (`berth.store.copy_object`) to build a modified version.
    Writes take ownership of a private deep copy of their input, so callers may keep mutating theirs.
    """

    @property
    def revision(self) -> int:
        """The global revision: the resourceVersion of the latest write (0 before any write)."""
        ...

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create an object; raises AlreadyExists, Invalid, Forbidden (admission) ... Returns the stored object."""
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

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Replace metadata/spec (status too for kinds without a status subresource); raises Conflict."""
        ...

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
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
        propagation: str | None = None,
    ) -> dict[str, Any]:
        """Delete (or start gracefully deleting) an object; returns its final state."""
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

    def subscribe(
        self, callback: Callable[[WatchEvent], None], key: ResourceKey | None = None
    ) -> Callable[[], None]:
        """Call `callback` synchronously after each committed write; returns an unsubscribe function."""
        ...
