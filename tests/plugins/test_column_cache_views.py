"""The columns a ColumnCache hands out are read-only views that follow its in-place updates."""

from __future__ import annotations

import numpy as np
import pytest

from berth.scheduler.framework import NodeTable, PodInfo
from berth.scheduler.framework.columncache import ColumnCache
from builders import make_node, make_pod, make_table


def _pods_column(table: NodeTable, rows: np.ndarray | None) -> tuple[np.ndarray]:
    counts = table.pod_count[: table.size]
    return (counts.copy() if rows is None else counts[rows],)


def _pods_one(table: NodeTable, row: int) -> tuple[int]:
    return (int(table.pod_count[row]),)


def test_handed_out_columns_are_read_only_and_follow_updates() -> None:
    table = make_table([make_node(f"n{i}").capacity(cpu="4") for i in range(16)])
    cache = ColumnCache(min_uses=1)
    (first,) = cache.columns(table, "pods", _pods_column, _pods_one) or ()
    assert first.tolist() == [0] * 16
    with pytest.raises(ValueError, match="read-only"):
        first[0] = 7
    table.add_pod(3, PodInfo(make_pod("p").node("n3").obj()))
    (again,) = cache.columns(table, "pods", _pods_column, _pods_one) or ()
    assert again.tolist() == [0, 0, 0, 1] + [0] * 12
    assert first.tolist() == again.tolist()  # updated in place: the earlier view sees it
    assert not again.flags.writeable
