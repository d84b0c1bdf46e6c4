"""Pods nominated to a node count for InterPodAffinity's Filter there, as kube's
RunFilterPluginsWithNominatedPods does: the node must pass with them and without them."""

from __future__ import annotations

from typing import Any

import numpy as np
from ipa_helpers import FakeHandle, plugin, term

from berth.scheduler.framework import CycleState, PodInfo
from berth.scheduler.framework.cycle_state import Overlay
from builders import make_node, make_pod, make_table

HOST = "kubernetes.io/hostname"


class NominatingHandle(FakeHandle):
    """A handle that also knows the pods nominated to each node."""

    def __init__(self, nominated: dict[str, list[PodInfo]]) -> None:
        super().__init__()
        self.nominated = nominated

    def nominated_pods(self, node_name: str) -> list[PodInfo]:
        """Pods nominated to ``node_name``."""
        return list(self.nominated.get(node_name, ()))


def _verdicts(incoming: PodInfo, nominated: dict[str, list[PodInfo]], placed: dict[str, Any]) -> list[str]:
    pl = plugin()
    pl.handle = NominatingHandle(nominated)  # type: ignore[assignment]
    tbl = make_table([make_node("n0").obj(), make_node("n1").obj()], placed)
    state = CycleState()
    pl.pre_filter(state, incoming, tbl)
    # the scheduler's overlay of nominated pods marks their rows
    rows = [tbl.index[n] for n in nominated]
    if rows:
        state.overlay.append(Overlay(np.asarray(rows), {}, pods=np.ones(len(rows), dtype=np.int64)))
    batched = pl.filter_nodes(state, incoming, tbl)
    out = []
    for i in range(tbl.size):
        per_node = pl.filter(state, incoming, tbl.info(i))
        assert per_node == batched.status_of(i)
        out.append("" if per_node.is_success() else per_node.message)
    return out


def test_nominated_pod_matching_anti_affinity_rejects_its_node() -> None:
    incoming = make_pod("x").label(app="x").pod_anti_affinity(term(HOST, {"app": "web"})).priority(10).info()
    nominee = make_pod("nom").label(app="web").priority(100).info()
    assert _verdicts(incoming, {"n1": [nominee]}, {}) == [
        "",
        "node(s) didn't match pod anti-affinity rules",
    ]
    # a lower-priority nominee does not count
    low = make_pod("low").label(app="web").priority(1).info()
    assert _verdicts(incoming, {"n1": [low]}, {}) == ["", ""]


def test_nominated_pod_does_not_satisfy_affinity_alone() -> None:
    # a placed pod on n0 makes the term satisfiable; a nominee on n1 alone does not make n1 pass
    incoming = make_pod("x").label(app="x").pod_affinity(term(HOST, {"app": "db"})).priority(10).info()
    placed_db = make_pod("db").label(app="db").info()
    nominee = make_pod("nom").label(app="db").priority(100).info()
    assert _verdicts(incoming, {"n1": [nominee]}, {"n0": [placed_db]}) == [
        "",
        "node(s) didn't match pod affinity rules",
    ]
