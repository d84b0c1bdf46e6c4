"""Per-cycle scratch storage shared by the plugins of one scheduling attempt."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

Rows = npt.NDArray[np.int64]

# Annotations PreBind plugins want written with the binding (the Binding object's metadata.annotations,
# which the API server copies onto the pod): a dict[str, str] in CycleState under this key.
BINDING_ANNOTATIONS_KEY = "framework/binding-annotations"

_serials = itertools.count(1)
# a lineage's change log is cleared (its epoch bumped) when it grows past this many rows
LINEAGE_LOG_LIMIT = 1_000_000


class OverlayLineage:
    """The successive versions of one overlay whose delta arrays are patched in place from cycle to cycle:
    one ``serial`` for all of them, and the rows each patch changed.

    Caches of values computed while a version is applied (see ColumnCache) remember how far they have read
    the log and recompute only the rows changed since, instead of everything for every new version.
    """

    __slots__ = ("epoch", "log", "serial")

    def __init__(self) -> None:
        self.serial = next(_serials)
        self.log: list[int] = []  # rows whose deltas changed, in order
        self.epoch = 0  # bumped when the log is cleared; readers of an older epoch recompute everything

    def record(self, rows: Iterable[int]) -> None:
        """Note that the deltas of ``rows`` changed (for the next version handed out)."""
        log = self.log
        if len(log) >= LINEAGE_LOG_LIMIT:
            log.clear()
            self.epoch += 1
        log.extend(rows)

    def rows_changed_since(self, epoch: int, position: int) -> list[int] | None:
        """Rows whose deltas changed after log ``position`` of ``epoch`` (None: too old, recompute all)."""
        if epoch != self.epoch:
            return None
        return self.log[position:]


class Overlay:
    """Request deltas for one cycle: per-resource delta arrays aligned with ``rows`` (unique row indices),
    or covering every row when ``rows`` is None; ``ports`` lists host ports freed (or, with ``ports_sign``
    -1, taken) on single rows.

    Used to show a pod the cluster as it sees it (e.g. a reservation's remainder freed for its owner)
    without copying the node table. An overlay's deltas never change once it is made, and ``serial`` names
    them for caches of values computed while the overlay is applied; except for a version of a ``lineage``,
    whose arrays are patched for the next version between cycles (never while applied): its serial is the
    lineage's, and the lineage records the rows each patch changed.
    """

    __slots__ = (
        "lineage",
        "nonzero_cpu",
        "nonzero_memory",
        "pods",
        "ports",
        "ports_sign",
        "requested",
        "rows",
        "serial",
    )

    def __init__(
        self,
        rows: Rows | None,
        requested: dict[str, Rows],
        nonzero_cpu: Rows | None = None,
        nonzero_memory: Rows | None = None,
        pods: Rows | None = None,
        ports: list[tuple[int, tuple[tuple[str, str, int], ...]]] | None = None,
        *,
        ports_sign: int = 1,
        lineage: OverlayLineage | None = None,
    ) -> None:
        self.rows = rows
        self.requested = requested
        self.nonzero_cpu = nonzero_cpu
        self.nonzero_memory = nonzero_memory
        self.pods = pods
        self.ports = ports or []
        self.ports_sign = ports_sign  # 1: the ports are freed; -1: they are taken
        self.lineage = lineage
        self.serial = next(_serials) if lineage is None else lineage.serial


class CycleState:
    """Key/value data written by plugins during one scheduling cycle and discarded after it."""

    __slots__ = ("_data", "overlay", "skip_filter", "skip_score")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        # request deltas for this cycle only, applied to the node table around Filter and Score
        self.overlay: list[Overlay] = []

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
