"""Per-cycle scratch storage shared by the plugins of one scheduling attempt."""

from __future__ import annotations

from typing import Any


class CycleState:
    """Key/value data written by plugins during one scheduling cycle and discarded after it."""

    __slots__ = ("_data", "overlay", "skip_filter", "skip_score")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        # per-node request deltas for this cycle only: (row, {resource: delta}, nonzero cpu, nonzero mem, pods)
        self.overlay: list[tuple[int, dict[str, int], int, int, int]] = []

    def write(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``."""
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value stored under ``key``; KeyError when absent."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        """The value stored under ``key`` or ``default``."""
        return self._data.get(key, default)

    def delete(self, key: str) -> None:
        """Remove ``key`` if present."""
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        """A shallow copy (values are shared, as kube's Clone of immutable state data)."""
        out = CycleState()
        out._data = dict(self._data)
        out.skip_filter = set(self.skip_filter)
        out.skip_score = set(self.skip_score)
        out.overlay = list(self.overlay)
        return out
