"""TaintToleration: filter on NoSchedule/NoExecute taints, score PreferNoSchedule taints (kube's test tables)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from plugin_helpers import new_state, score_all

from berth.scheduler.framework import Code
from berth.scheduler.plugins.tainttoleration import TaintToleration
from builders import make_node, make_pod, make_table, taint, toleration

PNS = "PreferNoSchedule"


def _filter(taints: list[dict[str, str]], tolerations: list[dict[str, str]]) -> tuple[Code, tuple[str, ...]]:
    plugin = TaintToleration()
    table = make_table([make_node("n").taints(*taints).obj()])
    pod = make_pod("p").tolerations(*tolerations).info()
    state = new_state()
    status = plugin.filter(state, pod, table.info(0))
    assert plugin.filter_nodes(state, pod, table).status_of(0) == status
    return status.code, status.reasons


@pytest.mark.parametrize(
    ("taints", "tolerations", "reason"),
    [
        pytest.param(
            [taint("dedicated", "user1")], [], "{dedicated: user1}", id="no tolerations, tainted node"
        ),
        pytest.param(
            [taint("dedicated", "user1")],
            [toleration("dedicated", "Equal", "user1", "NoSchedule")],
            None,
            id="tolerated dedicated node",
        ),
        pytest.param(
            [taint("dedicated", "user1")],
            [toleration("dedicated", "Equal", "user2", "NoSchedule")],
            "{dedicated: user1}",
            id="other user's dedicated node",
        ),
        pytest.param(
            [taint("foo", "bar")],
            [toleration("foo", "Exists", effect="NoSchedule")],
            None,
            id="Exists tolerates",
        ),
        pytest.param(
            [taint("dedicated", "user2"), taint("foo")],
            [
                toleration("dedicated", "Equal", "user2", "NoSchedule"),
                toleration("foo", "Exists", effect="NoSchedule"),
            ],
            None,
            id="all taints tolerated",
        ),
        pytest.param(
            [taint("foo", "bar")],
            [toleration("foo", "Equal", "bar", PNS)],
            "{foo: bar}",
            id="effect mismatch",
        ),
        pytest.param(
            [taint("foo", "bar")], [toleration("foo", "Equal", "bar")], None, id="empty effect matches all"
        ),
        pytest.param(
            [taint("dedicated", "user1", PNS)],
            [toleration("dedicated", "Equal", "user2", "NoSchedule")],
            None,
            id="PreferNoSchedule taint ignored by filter",
        ),
        pytest.param(
            [taint("dedicated", "user1", PNS)], [], None, id="no toleration, PreferNoSchedule taint"
        ),
        pytest.param([taint("k", "v", "NoExecute")], [], "{k: v}", id="NoExecute untolerated"),
        pytest.param(
            [taint("a"), taint("b", "x", "NoExecute"), taint("c", "y")],
            [toleration("a", "Exists")],
            "{b: x}",
            id="first untolerated taint reported",
        ),
        pytest.param(
            [taint("a"), taint("b", "x")], [toleration(operator="Exists")], None, id="wildcard toleration"
        ),
    ],
)
def test_filter(taints: list[dict[str, str]], tolerations: list[dict[str, str]], reason: str | None) -> None:
    code, reasons = _filter(taints, tolerations)
    if reason is None:
        assert code == Code.SUCCESS
    else:
        assert code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert reasons == (f"node(s) had untolerated taint {reason}",)


def test_batched_filter_mixed_rows() -> None:
    nodes = [
        make_node("a").obj(),
        make_node("b").taints(taint("x", "1")).obj(),
        make_node("c").taints(taint("y", "2")).obj(),
        make_node("d").taints(taint("x", "1")).obj(),
        make_node("e").taints(taint("z", "3", PNS)).obj(),
    ]
    plugin = TaintToleration()
    table = make_table(nodes)
    pod = make_pod("p").tolerations(toleration("y", "Exists")).info()
    v = plugin.filter_nodes(new_state(), pod, table)
    assert v.passed.tolist() == [True, False, True, False, True]
    assert v.status_of(1).reasons == ("node(s) had untolerated taint {x: 1}",)
    assert v.status_of(3) == v.status_of(1)
    assert len(v.statuses) == 1
    # a taint change is seen even though the cache was warm
    table.set_node(make_node("c").taints(taint("w", "9")).obj())
    v = plugin.filter_nodes(new_state(), pod, table)
    assert v.passed.tolist() == [True, False, False, False, True]
    assert v.status_of(2).reasons == ("node(s) had untolerated taint {w: 9}",)


def _t(key: str, value: str, effect: str = PNS) -> dict[str, str]:
    return taint(key, value, effect)


@pytest.mark.parametrize(
    ("tolerations", "node_taints", "raw", "normalized"),
    [
        pytest.param(
            [toleration("foo", "Equal", "bar", PNS)],
            [[_t("foo", "bar")], [_t("foo", "blah")]],
            [0, 1],
            [100, 0],
            id="tolerated taints score higher",
        ),
        pytest.param(
            [toleration("cpu-type", "Equal", "arm64", PNS), toleration("disk-type", "Equal", "ssd", PNS)],
            [[], [_t("cpu-type", "arm64")], [_t("cpu-type", "arm64"), _t("disk-type", "ssd")]],
            [0, 0, 0],
            [100, 100, 100],
            id="all tolerated score the same",
        ),
        pytest.param(
            [toleration("foo", "Equal", "bar", PNS)],
            [[], [_t("cpu-type", "arm64")], [_t("cpu-type", "arm64"), _t("disk-type", "ssd")]],
            [0, 1, 2],
            [100, 50, 0],
            id="more intolerable taints lower score",
        ),
        pytest.param(
            [toleration("cpu-type", "Equal", "arm64", "NoSchedule"), toleration("disk-type", "Equal", "ssd")],
            [[], [_t("cpu-type", "arm64", "NoSchedule")], [_t("cpu-type", "arm64"), _t("disk-type", "ssd")]],
            [0, 0, 1],
            [100, 100, 0],
            id="only PreferNoSchedule effects count",
        ),
        pytest.param([], [[], [_t("cpu-type", "arm64")]], [0, 1], [100, 0], id="no tolerations"),
        pytest.param([], [[], []], [0, 0], [100, 100], id="no taints anywhere"),
    ],
)
def test_score(
    tolerations: list[dict[str, str]],
    node_taints: list[list[dict[str, str]]],
    raw: list[int],
    normalized: list[int],
) -> None:
    plugin = TaintToleration()
    table = make_table([make_node(f"n{i}").taints(*t).obj() for i, t in enumerate(node_taints)])
    pod = make_pod("p").tolerations(*tolerations).info()
    state, scores = score_all(plugin, pod, table)
    assert scores.tolist() == raw
    assert plugin.normalize_scores(state, pod, scores).tolist() == normalized


def test_score_subset_of_rows() -> None:
    plugin = TaintToleration()
    table = make_table(
        [
            make_node("a").taints(_t("k", "v")).obj(),
            make_node("b").obj(),
            make_node("c").taints(_t("k", "v")).obj(),
        ]
    )
    pod = make_pod("p").info()
    idx = np.array([2, 1], dtype=np.int64)
    assert plugin.score_nodes(new_state(), pod, table, idx).tolist() == [1, 0]


def test_events() -> None:
    events: list[Any] = TaintToleration().events_to_register()
    assert [(e.resource, sorted(e.actions)) for e in events] == [("Node", ["Add", "Update"])]


def test_cached_groups_survive_pod_churn_and_see_node_changes() -> None:
    plugin = TaintToleration()
    table = make_table([make_node("a").taints(taint("k", "v")).obj(), make_node("b").obj()])
    pod = make_pod("p").info()
    assert plugin.filter_nodes(new_state(), pod, table).passed.tolist() == [False, True]
    table.add_pod(1, make_pod("x").info())  # bumps the generation, taints unchanged
    assert plugin.filter_nodes(new_state(), pod, table).passed.tolist() == [False, True]
    table.set_node(make_node("b").taints(taint("k", "v", "NoExecute")).obj())
    table.set_node(make_node("a").obj())
    assert plugin.filter_nodes(new_state(), pod, table).passed.tolist() == [True, False]
    table.remove_node("a")
    assert plugin.filter_nodes(new_state(), pod, table).passed.tolist() == [False]
    other = make_table([make_node("c").obj()])  # a different table with the same generation is not confused
    other.generation = table.generation
    assert plugin.filter_nodes(new_state(), pod, other).passed.tolist() == [True]
