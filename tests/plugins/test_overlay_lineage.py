"""Overlays patched from cycle to cycle (an ``OverlayLineage``, as the Reservation plugin's dense overlay):
the node table shows them through kept columns and the column caches keep their columns, recomputing only
the rows the table or the lineage changed; every value read equals what a fresh overlay (one that is added
row by row and names no lineage) gives."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plugin_helpers import plugin_outputs, resource_plugins

from berth.scheduler.framework import NodeTable, PodInfo, columncache
from berth.scheduler.framework.columncache import ColumnCache
from berth.scheduler.framework.cycle_state import Overlay, OverlayLineage
from builders import make_node, make_pod, make_table

NODES = 24
IntArray = np.ndarray[Any, np.dtype[np.int64]]


class Lineage:
    """A dense overlay patched in place (cpu, memory and pod deltas), as the Reservation plugin keeps one."""

    def __init__(self, n: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.lineage = OverlayLineage()
        self.cpu: IntArray = -rng.integers(0, 2000, n).astype(np.int64)
        self.memory: IntArray = -rng.integers(0, 4000, n).astype(np.int64)
        self.pods: IntArray = -rng.integers(0, 2, n).astype(np.int64)

    def patch(self, row: int, cpu: int, memory: int, pods: int) -> None:
        """Change one row's deltas (between cycles) and record it."""
        self.cpu[row], self.memory[row], self.pods[row] = -cpu, -memory, -pods
        self.lineage.record([row])

    def version(self) -> Overlay:
        """The overlay for this cycle: the same arrays, the lineage's serial."""
        return Overlay(
            None,
            {"cpu": self.cpu, "memory": self.memory},
            self.cpu,
            self.memory,
            self.pods,
            lineage=self.lineage,
        )

    def fresh(self) -> Overlay:
        """An overlay with the same deltas that knows nothing of the lineage."""
        cpu, memory = self.cpu.copy(), self.memory.copy()
        return Overlay(None, {"cpu": cpu, "memory": memory}, cpu, memory, self.pods.copy())


def _nodes() -> list[dict[str, Any]]:
    return [make_node(f"n{i}").capacity(cpu="4", memory=8000, pods=3 + i % 4).obj() for i in range(NODES)]


def _table() -> NodeTable:
    """The nodes, each holding a pod at least as large as any delta the lineages free (as a reservation's
    remainder is counted on its node): what a pod is shown is never below zero."""
    held = [make_pod(f"held{i}").req(cpu="2", memory=4000).node(f"n{i}").info() for i in range(NODES)]
    return make_table(_nodes(), held)


def _values(table: NodeTable) -> dict[str, list[int]]:
    """Every column an overlay changes, over the live rows, plus the host ports in use."""
    n = table.size
    out = {f"requested/{r}": col[:n].tolist() for r, col in sorted(table.requested.items())}
    out["nonzero_cpu"] = table.nonzero_cpu[:n].tolist()
    out["nonzero_memory"] = table.nonzero_memory[:n].tolist()
    out["pod_count"] = table.pod_count[:n].tolist()
    out["ports"] = [sorted(p.items()) for p in table.ports]
    return out


def _sparse(rows: list[int], cpu: int) -> Overlay:
    """A nominated pod's kind of overlay: a few rows taking cpu and a pod slot."""
    idx = np.asarray(rows, dtype=np.int64)
    delta = np.full(len(rows), cpu, dtype=np.int64)
    return Overlay(idx, {"cpu": delta}, delta, None, np.ones(len(rows), dtype=np.int64))


table_op = st.one_of(
    st.tuples(st.just("add"), st.integers(0, NODES - 1), st.integers(0, 3000)),
    st.tuples(st.just("remove"), st.integers(0, 50)),
    st.tuples(st.just("patch"), st.integers(0, NODES - 1), st.integers(0, 2000), st.integers(0, 1)),
    st.tuples(st.just("cycle"), st.booleans(), st.booleans(), st.booleans(), st.booleans()),
    st.tuples(st.just("node"), st.integers(0, NODES + 2), st.sampled_from(("2", "4"))),
    st.tuples(
        st.just("other-lineage"),
    ),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(table_op, max_size=25), seed=st.integers(0, 3))
def test_a_lineage_overlay_reads_as_a_fresh_one_and_leaves_the_table_as_it_was(
    ops: list[tuple[Any, ...]], seed: int
) -> None:
    table, ref = _table(), _table()
    lineages = [Lineage(NODES, seed), Lineage(NODES, seed + 1)]
    current = 0
    added: list[tuple[int, PodInfo]] = []
    for op in ops:
        if op[0] == "add":
            info = make_pod(f"a{len(added)}").req(cpu="100m", memory=op[2]).info()
            for t in (table, ref):
                t.add_pod(op[1], info)
            added.append((op[1], info))
        elif op[0] == "remove" and added:
            row, info = added.pop(op[1] % len(added))
            for t in (table, ref):
                t.remove_pod(row, info)
        elif op[0] == "patch":
            lineages[current].patch(op[1], op[2], op[2] // 2, op[3])
        elif op[0] == "node" and op[1] < table.size:  # resize a node (adding one would change the layout)
            node = make_node(f"n{op[1]}").capacity(cpu=op[2], memory=8000, pods=3 + op[1] % 4).obj()
            for t in (table, ref):
                t.set_node(node)
        elif op[0] == "other-lineage":
            current = 1 - current
        elif op[0] == "cycle":
            with_nominated, take_lineage_first, add_inside, withdraw = op[1:]
            before = _values(table)
            own = {r: col for r, col in table.requested.items()}
            lin = lineages[current]
            overlays = [lin.version()] + ([_sparse([0, 3, 5], 700)] if with_nominated else [])
            fresh = [lin.fresh(), *overlays[1:]]
            table.apply_overlay(overlays)
            ref.apply_overlay(fresh)
            assert _values(table) == _values(ref)
            if add_inside:  # a pod counted while the overlays are applied stays counted after
                info = make_pod(f"i{len(added)}").req(cpu="200m", memory=10).info()
                for t in (table, ref):
                    t.add_pod(1, info)
                added.append((1, info))
                assert _values(table) == _values(ref)
            if withdraw and with_nominated:  # the nominated pods' overlay comes off first (before Score)
                table.apply_overlay(overlays[1:], -1)
                ref.apply_overlay(fresh[1:], -1)
                overlays, fresh = overlays[:1], fresh[:1]
                assert _values(table) == _values(ref)
            if take_lineage_first and len(overlays) > 1:  # the lineage's overlay off, another still on
                table.apply_overlay(overlays[:1], -1)
                ref.apply_overlay(fresh[:1], -1)
                assert _values(table) == _values(ref)
                overlays, fresh = overlays[1:], fresh[1:]
            table.apply_overlay(overlays, -1)
            ref.apply_overlay(fresh, -1)
            assert table.applied_overlays == []
            if not add_inside:
                assert _values(table) == before
                # the table shows its own columns again
                assert all(table.requested[r] is col for r, col in own.items())
        assert _values(table) == _values(ref)


class Counting:
    """compute / compute_one for a ColumnCache, remembering which rows were computed."""

    def __init__(self) -> None:
        self.rows: list[int] = []
        self.full = 0

    def compute(self, table: NodeTable, rows: IntArray | None) -> tuple[IntArray, ...]:
        """Free cpu and pod slots of ``rows`` (None: every row)."""
        n = table.size
        idx = np.arange(n) if rows is None else rows
        if rows is None:
            self.full += 1
        else:
            self.rows.extend(rows.tolist())
        free = table.alloc("cpu")[idx] - table.req("cpu")[idx]
        slots = table.alloc("pods")[idx] - table.pod_count[:n][idx]
        return free, slots

    def compute_one(self, table: NodeTable, row: int) -> tuple[int, int]:
        """The same for one row."""
        self.rows.append(row)
        return (
            int(table.alloc("cpu")[row] - table.req("cpu")[row]),
            int(table.alloc("pods")[row] - table.pod_count[row]),
        )


@pytest.mark.parametrize("one_by_one", [16, 0])
def test_column_cache_recomputes_only_the_rows_the_table_or_the_lineage_changed(
    one_by_one: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(columncache, "ONE_BY_ONE", one_by_one)
    table = _table()
    lin = Lineage(NODES, 3)
    cache, counting = ColumnCache(), Counting()

    def columns() -> tuple[list[int], list[int]]:
        ov = lin.version()
        table.apply_overlay([ov])
        try:
            got = cache.columns(table, "k", counting.compute, counting.compute_one)
            fresh = Counting().compute(table, None)
            if got is not None:
                assert [c.tolist() for c in got] == [c.tolist() for c in fresh]
            return fresh[0].tolist(), fresh[1].tolist()
        finally:
            table.apply_overlay([ov], -1)

    columns()  # first use: not kept yet
    columns()  # second: computed over every row and kept
    assert counting.full == 1
    counting.rows.clear()
    columns()  # nothing changed: nothing recomputed
    assert counting.rows == [] and counting.full == 1
    table.add_pod(4, make_pod("p").req(cpu="300m").info())
    lin.patch(9, 500, 10, 1)
    lin.patch(9, 600, 10, 1)
    columns()
    assert sorted(set(counting.rows)) == [4, 9] and counting.full == 1
    counting.rows.clear()
    lin.patch(2, 100, 0, 0)
    columns()
    assert sorted(set(counting.rows)) == [2] and counting.full == 1


def test_column_cache_recomputes_everything_once_a_lineage_log_was_cleared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from berth.scheduler.framework import cycle_state

    table = _table()
    lin = Lineage(NODES, 4)
    cache, counting = ColumnCache(), Counting()
    for _ in range(2):
        ov = lin.version()
        table.apply_overlay([ov])
        cache.columns(table, "k", counting.compute, counting.compute_one)
        table.apply_overlay([ov], -1)
    monkeypatch.setattr(cycle_state, "LINEAGE_LOG_LIMIT", 1)
    lin.patch(1, 5, 5, 0)
    lin.patch(2, 5, 5, 0)  # the log is cleared here: the epoch moves on
    ov = lin.version()
    table.apply_overlay([ov])
    got = cache.columns(table, "k", counting.compute, counting.compute_one)
    fresh = Counting().compute(table, None)
    table.apply_overlay([ov], -1)
    assert got is not None and [c.tolist() for c in got] == [c.tolist() for c in fresh]
    assert counting.full == 2


plugin_op = st.one_of(
    st.tuples(st.just("add"), st.integers(0, NODES - 1), st.sampled_from(("200m", "1", "3"))),
    st.tuples(st.just("remove"), st.integers(0, 50)),
    st.tuples(st.just("patch"), st.lists(st.integers(0, NODES - 1), min_size=1, max_size=12, unique=True)),
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=st.lists(plugin_op, max_size=12))
def test_plugins_kept_columns_under_a_lineage_equal_fresh_computations(
    ops: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(columncache, "ONE_BY_ONE", 4)  # both ways of recomputing rows
    table = _table()
    lin = Lineage(NODES, 5)
    kept = resource_plugins()
    added: list[tuple[int, PodInfo]] = []
    pod = make_pod("p").req(cpu="500m", memory=300).info()

    def check() -> None:
        ov = lin.version()
        table.apply_overlay([ov])
        try:
            for plugin, fresh in zip(kept, resource_plugins(), strict=True):
                expected = plugin_outputs(fresh, pod, table)
                for _ in range(2):
                    assert plugin_outputs(plugin, pod, table) == expected, plugin.name
        finally:
            table.apply_overlay([ov], -1)

    check()
    for op in ops:
        if op[0] == "add":
            info = make_pod(f"a{len(added)}").req(cpu=op[2], memory=100).info()
            table.add_pod(op[1], info)
            added.append((op[1], info))
        elif op[0] == "remove" and added:
            row, info = added.pop(op[1] % len(added))
            table.remove_pod(row, info)
        elif op[0] == "patch":
            for row in op[1]:
                lin.patch(row, 250 * (row % 5), 40 * (row % 3), row % 2)
        check()
