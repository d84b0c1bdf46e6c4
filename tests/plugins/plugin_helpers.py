"""For the plugin tests: a Handle recording bindings, a fresh CycleState, Score run over a whole table, and the
resource plugins' statuses and scores of every row."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from berth.scheduler.framework import CycleState, NodeTable, PodInfo
from berth.scheduler.plugins import default_registry


class FakeHandle:
    """A Handle stand-in recording bindings (raises ``fail`` when set)."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.bound: list[tuple[str, str]] = []
        self.fail = fail

    def bind_pod(self, pod: PodInfo, node_name: str, annotations: dict[str, str] | None = None) -> None:
        """Record the binding or raise."""
        if self.fail is not None:
            raise self.fail
        self.bound.append((pod.key, node_name))
        self.annotations = annotations

    def register_pseudo_kind(self, kind: str, source: object) -> None:
        """Accept pseudo-pod sources (the Reservation plugin registers one)."""
        self.pseudo = (kind, source)


def new_state() -> CycleState:
    """A fresh CycleState."""
    return CycleState()


def score_all(plugin: Any, pod: PodInfo, table: NodeTable) -> tuple[CycleState, npt.NDArray[np.int64]]:
    """PreScore (which must succeed), then the batched scores of every row of ``table``, checked against the
    per-node Score; with the cycle state, for NormalizeScore."""
    state = new_state()
    idx = np.arange(table.size, dtype=np.int64)
    assert plugin.pre_score(state, pod, table, idx).is_success()
    scores = plugin.score_nodes(state, pod, table, idx)
    assert [plugin.score(state, pod, table.info(i)) for i in range(table.size)] == scores.tolist()
    return state, scores


def resource_plugins() -> list[Any]:
    """New NodeResourcesFit plugins (LeastAllocated, MostAllocated) and a NodeResourcesBalancedAllocation."""
    registry = default_registry()
    fit, balanced = registry.get("NodeResourcesFit"), registry.get("NodeResourcesBalancedAllocation")
    assert fit is not None and balanced is not None
    return [
        fit({"scoringStrategy": {"type": "LeastAllocated"}}, None),  # type: ignore[arg-type]
        fit({"scoringStrategy": {"type": "MostAllocated"}}, None),  # type: ignore[arg-type]
        balanced({}, None),  # type: ignore[arg-type]
    ]


def plugin_outputs(plugin: Any, pod: PodInfo, table: NodeTable) -> tuple[list[Any], list[int]]:
    """The plugin's Filter statuses (when it filters) and scores of every row."""
    rows = np.arange(table.size, dtype=np.int64)
    state = new_state()
    statuses: list[Any] = []
    if hasattr(plugin, "filter_nodes"):
        plugin.pre_filter(state, pod, table)
        verdicts = plugin.filter_nodes(state, pod, table)
        statuses = [verdicts.status_of(i) for i in range(table.size)]
    if plugin.pre_score(state, pod, table, rows).is_skip():
        return statuses, []
    return statuses, plugin.score_nodes(state, pod, table, rows).tolist()
