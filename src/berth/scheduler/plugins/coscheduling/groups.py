"""The scheduler-side view of gangs: PodGroup specs, their member pods and the members already placed.

It stands in for scheduler-plugins' PodGroup and pod informers plus the snapshot count of assigned pods:
members are the group's pods that are not Succeeded/Failed; assigned members are bound or assumed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.podgroup import POD_GROUP_LABEL, PodGroupSpec, compile_pod_group
from berth.api.timestamps import unix_seconds

_EMPTY: Mapping[str, Any] = {}
_TERMINAL = ("Succeeded", "Failed")


class GroupState:
    """One gang: its compiled spec (None until the PodGroup is seen), members and assigned members."""

    __slots__ = ("assigned", "created_at", "members", "spec")

    def __init__(self) -> None:
        self.spec: PodGroupSpec | None = None
        self.created_at: float | None = None  # creationTimestamp as clock seconds
        self.members: set[str] = set()  # uids of non-terminal pods carrying the label
        self.assigned: dict[str, str] = {}  # uid -> node of bound or assumed members

    def assigned_except(self, uid: str) -> int:
        """Assigned members other than ``uid`` (the snapshot of a cycle does not hold the pod in it)."""
        n = len(self.assigned)
        return n - 1 if uid in self.assigned else n


class GroupIndex:
    """Gangs by ``<namespace>/<name>``, fed with Pod and PodGroup watch events and Reserve/Unreserve."""

    __slots__ = ("_epoch", "_group_of", "groups")

    def __init__(self, epoch: float) -> None:
        self._epoch = epoch  # Unix seconds of clock time 0
        self.groups: dict[str, GroupState] = {}
        self._group_of: dict[str, str] = {}  # member uid -> full group name

    def get(self, full_name: str) -> GroupState | None:
        """The gang named ``full_name``, if any pod or PodGroup names it."""
        return self.groups.get(full_name)

    def _state(self, full_name: str) -> GroupState:
        g = self.groups.get(full_name)
        if g is None:
            g = self.groups[full_name] = GroupState()
        return g

    def _drop_if_empty(self, full_name: str, g: GroupState) -> None:
        if g.spec is None and not g.members and not g.assigned:
            del self.groups[full_name]

    def on_pod_group(self, type_: str, obj: Mapping[str, Any]) -> None:
        """A PodGroup was added, changed or deleted."""
        spec = compile_pod_group(obj)
        full = spec.full_name
        if type_ == "DELETED":
            g = self.groups.get(full)
            if g is not None:
                g.spec = None
                g.created_at = None
                self._drop_if_empty(full, g)
            return
        g = self._state(full)
        g.spec = spec
        created = unix_seconds(spec.created)
        g.created_at = None if created is None else created - self._epoch

    def on_pod(self, type_: str, obj: Mapping[str, Any]) -> None:
        """A pod was added, changed or deleted."""
        meta = obj.get("metadata") or _EMPTY
        uid = meta.get("uid") or ""
        name = (meta.get("labels") or _EMPTY).get(POD_GROUP_LABEL) or ""
        full = f"{meta.get('namespace') or 'default'}/{name}" if name else ""
        old = self._group_of.get(uid)
        gone = type_ == "DELETED" or (obj.get("status") or _EMPTY).get("phase") in _TERMINAL
        if old is not None and (gone or old != full):
            self._forget(uid, old)
        if gone or not full:
            return
        g = self._state(full)
        g.members.add(uid)
        self._group_of[uid] = full
        node = (obj.get("spec") or _EMPTY).get("nodeName")
        if node:
            g.assigned[uid] = node

    def _forget(self, uid: str, full: str) -> None:
        self._group_of.pop(uid, None)
        g = self.groups.get(full)
        if g is not None:
            g.members.discard(uid)
            g.assigned.pop(uid, None)
            self._drop_if_empty(full, g)

    def assume(self, full_name: str, uid: str, node: str) -> None:
        """A member was reserved on ``node`` (counted as assigned until unreserved or gone)."""
        self._state(full_name).assigned[uid] = node

    def unassume(self, full_name: str, uid: str) -> None:
        """A reserved member was released."""
        g = self.groups.get(full_name)
        if g is not None:
            g.assigned.pop(uid, None)
            self._drop_if_empty(full_name, g)


__all__ = ["GroupIndex", "GroupState"]
