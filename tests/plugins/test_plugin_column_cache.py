"""Property: resource fit verdicts and allocation scores kept across cycles (ColumnCache) always equal a
fresh computation, whatever pods come and go, nodes change and overlays are added and taken back."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plugin_helpers import new_state, plugin_outputs, resource_plugins

from berth.scheduler.framework import NodeTable, PodInfo, columncache
from berth.scheduler.framework.cycle_state import Overlay
from builders import make_node, make_pod, make_table

NODES = 40
SHAPES = (("100m", 100), ("1", 0), ("2500m", 3000))

op_st = st.one_of(
    st.tuples(
        st.just("add"), st.integers(0, NODES - 1), st.sampled_from(("200m", "1", "3")), st.integers(0, 4000)
    ),
    st.tuples(st.just("remove"), st.integers(0, 50)),
    st.tuples(st.just("node"), st.integers(0, NODES - 1), st.sampled_from(("2", "4", "8"))),
    st.tuples(
        st.just("overlay"),
        st.lists(st.integers(0, NODES - 1), min_size=1, max_size=30, unique=True),
        st.integers(0, 3000),
    ),
    st.tuples(st.just("burst"), st.integers(0, NODES - 1)),
)


def _check(kept: list[Any], table: NodeTable) -> None:
    """The long-lived plugins answer as new ones (which compute everything afresh)."""
    for cpu, memory in SHAPES:
        pod = make_pod("p").req(cpu=cpu, memory=memory).info()
        for plugin, fresh in zip(kept, resource_plugins(), strict=True):
            expected = plugin_outputs(fresh, pod, table)
            for _ in range(2):  # a shape's second use is when its columns are kept
                assert plugin_outputs(plugin, pod, table) == expected, plugin.name


@pytest.mark.parametrize("one_by_one", [16, 0])
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=st.lists(op_st, max_size=14))
def test_kept_columns_equal_fresh_computations(
    one_by_one: int, ops: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(columncache, "ONE_BY_ONE", one_by_one)
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory=8000, pods=3 + i % 4).obj() for i in range(NODES)]
    table = make_table(nodes)
    plugins = resource_plugins()
    added: list[tuple[int, PodInfo]] = []
    _check(plugins, table)
    for op in ops:
        if op[0] == "add":
            info = make_pod(f"a{len(added)}").req(cpu=op[2], memory=op[3]).info()
            table.add_pod(op[1], info)
            added.append((op[1], info))
        elif op[0] == "remove" and added:
            row, info = added.pop(op[1] % len(added))
            table.remove_pod(row, info)
        elif op[0] == "node":
            table.set_node(make_node(f"n{op[1]}").capacity(cpu=op[2], memory=8000, pods=3 + op[1] % 4).obj())
        elif op[0] == "burst":  # more changed rows than are recomputed one by one
            for k in range(20):
                row = (op[1] + k) % NODES
                info = make_pod(f"b{len(added)}").req(cpu="100m", memory=10).info()
                table.add_pod(row, info)
                added.append((row, info))
        elif op[0] == "overlay":
            rows = np.asarray(op[1], dtype=np.int64)
            delta = np.full(len(rows), op[2], dtype=np.int64)
            overlay = Overlay(rows, {"cpu": delta}, delta, None, np.ones(len(rows), dtype=np.int64))
            table.apply_overlay([overlay])
            _check(plugins, table)
            table.apply_overlay([overlay], -1)
            assert table.applied_overlays == []
        _check(plugins, table)


def test_handed_out_columns_are_read_only() -> None:
    fit = resource_plugins()[0]
    table = make_table([make_node(f"n{i}").obj() for i in range(3)])
    pod = make_pod("p").req(cpu="1").info()
    for _ in range(2):
        state = new_state()
        fit.pre_filter(state, pod, table)
        verdicts = fit.filter_nodes(state, pod, table)
    with pytest.raises(ValueError, match="read-only"):
        verdicts.passed[0] = False
