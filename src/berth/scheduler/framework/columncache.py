"""Per-row values derived from a NodeTable's numbers, kept current across scheduling cycles.

A plugin that computes the same function of each node's allocatable, requests and pod count for many pods
of one shape (a resource fit verdict, an allocation score) asks a ``ColumnCache`` for whole columns: they
are computed over every row once, then only the rows the table reports as changed since
(``NodeTable.rows_revalued_since``: pods added or removed, nodes updated) are recomputed; a few rows one
by one, many as arrays, rows that moved all of them. Values computed while a cycle's overlays are added
to the table are kept apart per set of overlays (their serials), so the table as seen with the nominated
pods of the moment and the table without them each have their own columns. An overlay patched from cycle
to cycle keeps its serial (its ``OverlayLineage``'s): its columns are kept too, and the rows whose deltas
a patch changed are recomputed with those the table changed.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import numpy.typing as npt

from berth.scheduler.framework.cycle_state import Overlay, OverlayLineage
from berth.scheduler.framework.nodetable import NodeTable

IntArray = npt.NDArray[np.int64]
Columns = tuple[npt.NDArray[Any], ...]
# the columns' values for the given rows (None: every row, 0..size-1), each aligned with them
ColumnsFn = Callable[[NodeTable, IntArray | None], Columns]
# the columns' values for one row (a few changed rows are cheaper one by one than as arrays)
ValuesFn = Callable[[NodeTable, int], tuple[Any, ...]]
# at most this many changed rows are recomputed one by one
ONE_BY_ONE = 16


# how far the log of an applied overlay's lineage had been read: (lineage, epoch, position)
LineageMark = tuple[OverlayLineage, int, int]


class _Entry:
    __slots__ = ("columns", "epoch", "layout", "lineages", "position", "table", "writable")

    def __init__(self, table: NodeTable, writable: Columns) -> None:
        self.table = table
        self.writable = writable  # the cache's own arrays, updated in place
        self.columns = _read_only_views(writable)  # what is handed out
        self.layout = table.layout
        self.epoch = table.value_epoch
        self.position = len(table.value_log)
        self.lineages = _lineage_marks(table.applied_overlays)


class ColumnCache:
    """Columns over all rows of a NodeTable per key and set of applied overlays, for those asked for at
    least ``min_uses`` times (at most ``capacity`` sets of columns; the least recently used is dropped).
    The arrays handed out are read-only and belong to the cache."""

    __slots__ = ("_capacity", "_entries", "_min_uses", "_uses")

    def __init__(self, capacity: int = 16, *, min_uses: int = 2) -> None:
        self._capacity = capacity
        self._min_uses = min_uses
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._uses: OrderedDict[Hashable, int] = OrderedDict()

    def columns(
        self, table: NodeTable, key: Hashable, compute: ColumnsFn, compute_one: ValuesFn
    ) -> Columns | None:
        """The columns of ``key`` over every row of ``table`` as it is now, up to date; None when they
        were not asked for often enough yet (compute the rows you need instead).

        ``compute`` and ``compute_one`` must agree: the first gives many rows, the second one row."""
        applied = table.applied_overlays
        full_key = (key, tuple([ov.serial for ov in applied])) if applied else key
        entry = self._entries.get(full_key)
        if entry is None:
            if not self._used_enough(full_key):
                return None
            entry = _Entry(table, tuple(_owned(c) for c in compute(table, None)))
            self._entries[full_key] = entry
            if len(self._entries) > self._capacity:
                self._entries.popitem(last=False)
            return entry.columns
        self._entries.move_to_end(full_key)
        changed: list[int] | None = None
        if entry.table is table and entry.layout == table.layout:
            changed = table.rows_revalued_since(entry.epoch, entry.position)
            if changed is not None and entry.lineages:
                changed = _with_lineage_changes(changed, entry.lineages)
        if changed is None or len(changed) > table.size // 8:
            entry.writable = tuple(_owned(c) for c in compute(table, None))
            entry.columns = _read_only_views(entry.writable)
        elif changed:
            _update(entry.writable, table, set(changed), compute, compute_one)
        entry.table = table
        entry.layout = table.layout
        entry.epoch = table.value_epoch
        entry.position = len(table.value_log)
        if applied:
            entry.lineages = _lineage_marks(applied)
        return entry.columns

    def values_at(
        self,
        table: NodeTable,
        key: Hashable,
        idx: IntArray,
        compute: Callable[[NodeTable, IntArray | None], IntArray],
        compute_one: Callable[[NodeTable, int], int],
    ) -> IntArray:
        """The one-column values of ``key`` at rows ``idx``: read from the kept column, or computed for
        ``idx`` alone while the key is not kept."""
        columns = self.columns(
            table, key, lambda t, rows: (compute(t, rows),), lambda t, row: (compute_one(t, row),)
        )
        if columns is None:
            return compute(table, idx)
        out: IntArray = columns[0][idx]
        return out

    def _used_enough(self, key: Hashable) -> bool:
        uses = self._uses.pop(key, 0) + 1
        if uses >= self._min_uses:
            return True
        self._uses[key] = uses
        if len(self._uses) > 4 * self._capacity:
            self._uses.popitem(last=False)
        return False


def _lineage_marks(applied: list[Overlay]) -> tuple[LineageMark, ...]:
    """How far the logs of the lineages among ``applied`` have been read: to their ends."""
    return tuple(
        [(ov.lineage, ov.lineage.epoch, len(ov.lineage.log)) for ov in applied if ov.lineage is not None]
    )


def _with_lineage_changes(changed: list[int], marks: tuple[LineageMark, ...]) -> list[int] | None:
    """``changed`` (rows the table changed) plus the rows the lineages changed since ``marks`` (None: a
    lineage's log was cleared since, recompute everything)."""
    for lineage, epoch, position in marks:
        more = lineage.rows_changed_since(epoch, position)
        if more is None:
            return None
        if more:
            changed = changed + more
    return changed


def _update(
    columns: Columns, table: NodeTable, rows: set[int], compute: ColumnsFn, compute_one: ValuesFn
) -> None:
    """Recompute ``rows`` of ``columns`` (writable arrays) in place."""
    if len(rows) <= ONE_BY_ONE:
        for row in rows:
            for col, value in zip(columns, compute_one(table, row), strict=True):
                col[row] = value
    else:
        idx = np.fromiter(rows, dtype=np.int64, count=len(rows))
        for col, fresh in zip(columns, compute(table, idx), strict=True):
            col[idx] = fresh


def _owned(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``a`` when it owns its data, else a copy that does (the cache writes into it)."""
    return a if a.flags.owndata and a.base is None and a.flags.writeable else a.copy()


def _read_only_views(columns: Columns) -> Columns:
    """Read-only views of ``columns``: they see every later in-place update of the arrays."""
    views = []
    for c in columns:
        v = c.view()
        v.flags.writeable = False
        views.append(v)
    return tuple(views)
