"""Node rows grouped by identical taint lists, cached per NodeTable so per-pod work is per distinct list."""

from __future__ import annotations

import weakref

import numpy as np
import numpy.typing as npt

from berth.api.taints import Taint
from berth.scheduler.framework import NodeTable


class TaintGroups:
    """``group[i]`` is the index in ``taints`` of row i's taint list; group 0 is the empty list."""

    __slots__ = ("group", "snapshot", "taints")

    def __init__(self, table: NodeTable) -> None:
        self.snapshot: list[tuple[Taint, ...]] = list(table.taints)
        ids: dict[tuple[Taint, ...], int] = {(): 0}
        self.group: npt.NDArray[np.intp] = np.fromiter(
            (ids.setdefault(t, len(ids)) for t in self.snapshot), dtype=np.intp, count=len(self.snapshot)
        )
        self.taints: list[tuple[Taint, ...]] = list(ids)


class TaintGroupCache:
    """Keeps the TaintGroups of the last table seen, rebuilt only when its taint lists changed."""

    __slots__ = ("_generation", "_groups", "_table")

    def __init__(self) -> None:
        self._table: weakref.ref[NodeTable] | None = None
        self._generation = -1
        self._groups: TaintGroups | None = None

    def get(self, table: NodeTable) -> TaintGroups:
        """The groups of ``table`` (cheap when nothing about taints changed since the last call)."""
        g = self._groups
        if g is not None and self._table is not None and self._table() is table:
            if self._generation == table.generation:
                return g
            if g.snapshot == table.taints:  # pod churn bumps the generation but leaves taints alone
                self._generation = table.generation
                return g
        g = TaintGroups(table)
        self._groups = g
        self._table = weakref.ref(table)
        self._generation = table.generation
        return g
