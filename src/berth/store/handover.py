"""Writes of objects their writer built for the write and hands over (an Event, a kubelet's pod status).

A `MemoryStore` keeps such an object as it is instead of taking a private copy (`MemoryStore.create` and
`update_status` with ``owned``); any other `Store` (a remote API server) writes it as usual.
"""

from __future__ import annotations

from typing import Any

from berth.api.contracts import Store
from berth.store.memory import MemoryStore

__all__ = ["create_handed_over", "update_status_handed_over"]


def create_handed_over(store: Store, obj: dict[str, Any], *, validated: bool = False) -> dict[str, Any]:
    """``store.create(obj)`` of an object that shares no dict or list with anything and is not used after;
    `validated`: the writer vouches for it (a MemoryStore then does not validate it again)."""
    if type(store) is MemoryStore:
        return store.create(obj, validated=validated, owned=True)
    return store.create(obj)


def update_status_handed_over(store: Store, obj: dict[str, Any]) -> dict[str, Any]:
    """``store.update_status(obj)`` of an object whose status is made of new dicts and lists and of parts of the
    stored object, not used after."""
    if type(store) is MemoryStore:
        return store.update_status(obj, owned=True)
    return store.update_status(obj)
