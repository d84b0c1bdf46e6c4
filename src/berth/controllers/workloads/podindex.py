"""An informer-style pod cache for the workload controllers: pods by controlling owner, orphans by namespace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.controllers.workloads.common import controller_of

__all__ = ["PodIndex"]

Obj = Mapping[str, Any]


class PodIndex:
    """The latest version of every pod, indexed by controller uid (owned) or namespace (orphans)."""

    __slots__ = ("_orphans", "_owned", "_where")

    def __init__(self) -> None:
        """Create an empty index."""
        self._owned: dict[str, dict[str, Obj]] = {}
        self._orphans: dict[str, dict[str, Obj]] = {}
        self._where: dict[str, tuple[bool, str]] = {}

    def _bucket(self, where: tuple[bool, str]) -> dict[str, dict[str, Obj]]:
        return self._owned if where[0] else self._orphans

    def _drop(self, uid: str, where: tuple[bool, str]) -> None:
        """Take pod ``uid`` out of its group at ``where``, dropping the group once empty."""
        bucket = self._bucket(where)
        group = bucket.get(where[1])
        if group is not None:
            group.pop(uid, None)
            if not group:
                del bucket[where[1]]

    def upsert(self, pod: Obj) -> str | None:
        """Record a pod's latest version; returns the uid of its previous controller when that changed."""
        meta = pod["metadata"]
        uid = meta.get("uid", "")
        ref = controller_of(pod) if meta.get("ownerReferences") else None
        where = (True, ref["uid"]) if ref is not None else (False, meta.get("namespace", ""))
        old = self._where.get(uid)
        if old == where:  # the common case, a new version in the same group
            (self._owned if where[0] else self._orphans)[where[1]][uid] = pod
            return None
        previous: str | None = None
        if old is not None and old != where:
            self._drop(uid, old)
            if old[0]:
                previous = old[1]
        self._where[uid] = where
        self._bucket(where).setdefault(where[1], {})[uid] = pod
        return previous

    def remove(self, pod: Obj) -> None:
        """Forget a deleted pod."""
        uid = pod["metadata"].get("uid", "")
        old = self._where.pop(uid, None)
        if old is not None:
            self._drop(uid, old)

    def __len__(self) -> int:
        """Number of pods indexed."""
        return len(self._where)

    def owned_by(self, owner_uid: str) -> list[Obj]:
        """Pods whose controller is the object with `owner_uid`."""
        return list(self._owned.get(owner_uid, {}).values())

    def orphans(self, namespace: str) -> list[Obj]:
        """Pods of `namespace` without a controller."""
        return list(self._orphans.get(namespace, {}).values())
