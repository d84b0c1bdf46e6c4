"""Topology columns of a NodeTable shaped for np.bincount, cached until node labels or rows change.

``shifted(key)`` is the label column's codes plus one (0 for nodes without the key), so that domain
counts are one weighted bincount; ``has_all(keys)`` marks the nodes carrying every key.
"""

from __future__ import annotations

import weakref

import numpy as np
import numpy.typing as npt

from berth.scheduler.framework import NodeTable
from berth.scheduler.framework.nodetable import BoolArray

IntpArray = npt.NDArray[np.intp]


class _Columns:
    __slots__ = ("has_all", "layout", "node_version", "present", "shifted", "size")

    def __init__(self, table: NodeTable) -> None:
        self.layout = table.layout
        self.node_version = table.node_version
        self.size = table.size
        self.shifted: dict[str, tuple[IntpArray, dict[str, int]]] = {}
        self.has_all: dict[tuple[str, ...], BoolArray] = {}
        self.present: dict[tuple[str, tuple[str, ...]], BoolArray] = {}


class TopologyColumns:
    """Per-table caches of shifted codes and key-presence masks (read-only arrays)."""

    __slots__ = ("_by_table",)

    def __init__(self) -> None:
        self._by_table: weakref.WeakKeyDictionary[NodeTable, _Columns] = weakref.WeakKeyDictionary()

    def _get(self, table: NodeTable) -> _Columns:
        c = self._by_table.get(table)
        if (
            c is None
            or c.layout != table.layout
            or c.node_version != table.node_version
            or c.size != table.size
        ):
            c = self._by_table[table] = _Columns(table)
        return c

    def shifted(self, table: NodeTable, key: str) -> tuple[IntpArray, dict[str, int]]:
        """(codes + 1 per row, the value -> code vocabulary) of label ``key``."""
        c = self._get(table)
        out = c.shifted.get(key)
        if out is None:
            col = table.label_column(key)
            arr = col.codes.astype(np.intp) + 1
            arr.flags.writeable = False
            out = c.shifted[key] = (arr, col.vocab)
        return out

    def has_all(self, table: NodeTable, keys: tuple[str, ...]) -> BoolArray:
        """Rows carrying every key of ``keys``."""
        c = self._get(table)
        out = c.has_all.get(keys)
        if out is None:
            out = np.ones(table.size, dtype=np.bool_)
            for k in keys:
                out &= self.shifted(table, k)[0] > 0
            out.flags.writeable = False
            c.has_all[keys] = out
        return out

    def present(self, table: NodeTable, key: str, keys: tuple[str, ...]) -> BoolArray:
        """Per slot of ``key`` (code + 1): whether a row carrying every key of ``keys`` is in it."""
        c = self._get(table)
        out = c.present.get((key, keys))
        if out is None:
            shifted, vocab = self.shifted(table, key)
            slots = shifted if len(set(keys)) <= 1 else np.where(self.has_all(table, keys), shifted, 0)
            out = np.bincount(slots, minlength=len(vocab) + 1) > 0
            out[0] = False
            out.flags.writeable = False
            c.present[(key, keys)] = out
        return out
