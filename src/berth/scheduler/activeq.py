"""The activeQ's order: pods by sort key, pods of equal keys first in, first out.

Equal to a heap of ``(key, arrival number, pod)`` entries, as kube's activeQ orders pods by the QueueSort
plugin's Less and then by arrival, but made for the usual queue where many pods share few keys (a priority and
an enqueue instant): the distinct keys are kept in a heap and each key's pods in arrival order, so a push and a
pop cost O(1) for a key already present instead of O(log n) tuple comparisons.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import Any, Generic, TypeVar

__all__ = ["KeyedFifoQueue"]

T = TypeVar("T")
Key = tuple[Any, ...]


class KeyedFifoQueue(Generic[T]):
    """Items ordered by key (smaller first), items of equal keys in the order they came; keys must be hashable
    and mutually comparable. ``len`` counts every item pushed and not yet popped."""

    __slots__ = ("_buckets", "_keys", "_size")

    def __init__(self) -> None:
        self._keys: list[Key] = []  # heap of the keys that have items
        self._buckets: dict[Key, deque[T]] = {}
        self._size = 0

    def push(self, key: Key, item: T) -> None:
        """Add ``item`` under ``key``, after the items already there."""
        bucket = self._buckets.get(key)
        if bucket is None:
            self._buckets[key] = deque((item,))
            heapq.heappush(self._keys, key)
        else:
            bucket.append(item)
        self._size += 1

    def pop(self) -> tuple[Key, T]:
        """The first item of the smallest key, with its key, removed; IndexError when empty."""
        keys = self._keys
        key = keys[0]
        bucket = self._buckets[key]
        item = bucket.popleft()
        if not bucket:
            heapq.heappop(keys)
            del self._buckets[key]
        self._size -= 1
        return key, item

    def __len__(self) -> int:
        return self._size
