"""Which nodes report which container image (node.status.images), kept per NodeTable.

kube-scheduler's cache keeps, per image name, the nodes that report it and the image size first seen
for that name (``ImageStateSummary``). This index holds the same facts as rows of a NodeTable, rebuilt
whenever a node object changes (``node_version``) or rows move (``layout``).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from berth.scheduler.framework import NodeTable

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


def node_image_sizes(node: Mapping[str, Any]) -> Iterator[tuple[str, int]]:
    """``(name, sizeBytes)`` for every name of every image in the node's status, in listed order."""
    for image in (node.get("status") or {}).get("images") or ():
        size = int(image.get("sizeBytes") or 0)
        for name in image.get("names") or ():
            yield name, size


def node_image_names(node: Mapping[str, Any]) -> frozenset[str]:
    """The distinct image names the node reports."""
    return frozenset(name for name, _ in node_image_sizes(node))


class ImageIndex:
    """Image name -> (size in bytes, rows reporting it) over one NodeTable at one node version.

    The size of a name is the one reported by the first row that lists it (kube keeps the size of the
    node that registered the name first). A row listing a name twice counts once.
    """

    __slots__ = ("_masks", "_scaled", "layout", "node_version", "rows", "sizes", "total")

    def __init__(self, table: NodeTable) -> None:
        self.node_version = table.node_version
        self.layout = table.layout
        self.total = table.size
        sizes: dict[str, int] = {}
        rows: dict[str, list[int]] = {}
        for i in range(table.size):
            seen: set[str] = set()
            for name, size in node_image_sizes(table.nodes[i]):
                if name in seen:
                    continue
                seen.add(name)
                lst = rows.get(name)
                if lst is None:
                    sizes[name] = size
                    rows[name] = [i]
                else:
                    lst.append(i)
        self.sizes = sizes
        self.rows: dict[str, IntArray] = {k: np.asarray(v, dtype=np.int64) for k, v in rows.items()}
        self._masks: dict[str, BoolArray] = {}
        self._scaled: dict[str, int] = {}

    def num_nodes(self, name: str) -> int:
        """How many rows report ``name``."""
        r = self.rows.get(name)
        return 0 if r is None else len(r)

    def scaled_score(self, name: str) -> int:
        """The image's size scaled by its spread (nodes having it / all nodes), kube's scaledImageScore."""
        s = self._scaled.get(name)
        if s is None:
            spread = float(self.num_nodes(name)) / float(self.total) if self.total else 0.0
            s = self._scaled[name] = int(float(self.sizes.get(name, 0)) * spread)
        return s

    def mask(self, name: str) -> BoolArray:
        """Rows reporting ``name`` as a boolean column over the table."""
        m = self._masks.get(name)
        if m is None:
            m = np.zeros(self.total, dtype=np.bool_)
            r = self.rows.get(name)
            if r is not None:
                m[r] = True
            self._masks[name] = m
        return m


class ImageIndexCache:
    """The ImageIndex of the last table seen, rebuilt only when a node object changed or rows moved."""

    __slots__ = ("_index", "_table")

    def __init__(self) -> None:
        self._table: weakref.ref[NodeTable] | None = None
        self._index: ImageIndex | None = None

    def get(self, table: NodeTable) -> ImageIndex:
        """The index of ``table`` as it is now."""
        ix = self._index
        if (
            ix is not None
            and self._table is not None
            and self._table() is table
            and ix.node_version == table.node_version
            and ix.layout == table.layout
            and ix.total == table.size
        ):
            return ix
        ix = self._index = ImageIndex(table)
        self._table = weakref.ref(table)
        return ix
