"""The columnar usage arithmetic of the node-utilization plugins: upstream's nodeutilization_test.go cases
(sortNodesByUsage, ResourceUsageToResourceThreshold, classification with deviation thresholds) and the
helpers' own rules (capacity, active pods, capping, QoS, pod order, the dry-run fractions)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from harness import new_store
from test_nodeutilization import EXT, best_effort, node, pod, prio, rs

from berth.descheduler.plugins.nodeutilization import node_utilization_fractions
from berth.descheduler.plugins.nodeutilization_usage import (
    cap_to_thresholds,
    deviation_thresholds,
    is_above,
    is_below,
    node_capacity,
    pod_eviction_order,
    pod_qos,
    sort_nodes_by_usage,
    usage_percentages,
    usage_table,
)
from berth.descheduler.view import ClusterView, read_view
from builders import make_node, make_pod

Obj = dict[str, Any]


def view_of(*objects: Obj) -> ClusterView:
    return read_view(new_store(objects), 0.0)


# ---- upstream TestSortNodesByUsage -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        pytest.param(
            [[1730, 3038982964, 25], [1220, 3038982964, 11], [1530, 5038982964, 20]],
            [2, 0, 1],
            id="cpu memory pods",
        ),
        pytest.param([[0, 3038982964, 0], [0, 2038982964, 0], [0, 5038982964, 0]], [2, 0, 1], id="memory"),
    ],
)
def test_sort_nodes_by_usage(usage: list[list[int]], expected: list[int]) -> None:
    table = np.array(usage, dtype=np.int64)
    assert sort_nodes_by_usage([0, 1, 2], table, ascending=False) == expected
    assert sort_nodes_by_usage([0, 1, 2], table, ascending=True) == expected[::-1]


def test_sort_nodes_by_usage_keeps_ties_in_order() -> None:
    table = np.array([[5, 0], [7, 0], [5, 0], [1, 0]], dtype=np.int64)
    assert sort_nodes_by_usage([0, 1, 2, 3], table, ascending=False) == [1, 0, 2, 3]
    assert sort_nodes_by_usage([3, 2, 0], table, ascending=True) == [3, 2, 0]
    assert sort_nodes_by_usage([], table, ascending=True) == []


# ---- upstream TestResourceUsageToResourceThreshold ------------------------------------------------------


@pytest.mark.parametrize(
    ("usage", "capacity", "present", "expected"),
    [
        pytest.param([100], [1000], [True], [10.0], id="10 percent"),
        pytest.param([100], [0], [True], [0.0], id="zeroed out capacity"),
        pytest.param([100], [0], [False], [0.0], id="non existing usage"),
        pytest.param([100, 200], [0, 1000], [False, True], [0.0, 20.0], id="existing and non existing usage"),
        pytest.param(
            [3200, 8], [4000, 9], [True, True], [3200 / 4000 * 100, 8 / 9 * 100], id="float64 as Go"
        ),
    ],
)
def test_usage_percentages(
    usage: list[int], capacity: list[int], present: list[bool], expected: list[float]
) -> None:
    got = usage_percentages(
        np.array([usage], dtype=np.int64),
        np.array([capacity], dtype=np.int64),
        np.array([present], dtype=bool),
    )
    assert got.tolist() == [expected]


# ---- upstream TestClassificationUsingDeviationThresholds (and ...WithPointers) -------------------------


def test_classification_using_deviation_thresholds() -> None:
    """Average 50%: the low threshold is 45%, the high one 55%; node1 (10%) is under, node5 (90%) over."""
    used = [100, 480, 520, 500, 900]
    usage = np.array([[u, u] for u in used], dtype=np.int64)
    capacity = np.full((5, 2), 1000, dtype=np.int64)
    present = np.ones((5, 2), dtype=bool)
    pct = usage_percentages(usage, capacity, present)
    columns = {"cpu": 0, "memory": 1}
    lower, higher = deviation_thresholds(
        pct, present, columns, {"cpu": 5, "memory": 5}, {"cpu": 5, "memory": 5}
    )
    assert lower == {"cpu": 45.0, "memory": 45.0}
    assert higher == {"cpu": 55.0, "memory": 55.0}
    under = is_below(pct, columns, lower)
    over = ~under & is_above(pct, columns, higher)
    assert under.tolist() == [True, False, False, False, False]
    assert over.tolist() == [False, False, False, False, True]


def test_deviation_thresholds_clamp_and_skip_unlisted_resources() -> None:
    """The average counts only the nodes that list the resource; a resource no node lists gets no
    threshold; results are clamped to 0-100 (upstream's Average, Sum, Negate, Clamp)."""
    pct = np.array([[4.0, 0.0, 0.0], [96.0, 50.0, 0.0], [50.0, 0.0, 0.0]])
    present = np.array([[True, False, False], [True, True, False], [True, False, False]])
    columns = {"cpu": 0, EXT: 1, "nvidia.com/gpu": 2}
    lower, higher = deviation_thresholds(
        pct,
        present,
        columns,
        {"cpu": 60, EXT: 10, "nvidia.com/gpu": 5},
        {"cpu": 60, EXT: 10, "nvidia.com/gpu": 5},
    )
    assert lower == {"cpu": 0.0, EXT: 40.0}
    assert higher == {"cpu": 100.0, EXT: 60.0}


# ---- upstream TestNormalizeAndClassify ("happy path"), with the plugins' own comparisons -----------------


def test_normalize_and_classify() -> None:
    """Under: every resource at or below its threshold; over: some resource above its target. Upstream's
    generic classifier test expects node4 (cpu 10%, memory 90%) in neither group; the plugins' own rule
    (``isNodeAboveThreshold``: any resource) puts it over."""
    usage = np.array([[10, 10], [90, 90], [50, 50], [10, 90], [20, 80]], dtype=np.int64)
    capacity = np.full((5, 2), 100, dtype=np.int64)
    present = np.ones((5, 2), dtype=bool)
    pct = usage_percentages(usage, capacity, present)
    columns = {"cpu": 0, "memory": 1}
    under = is_below(pct, columns, {"cpu": 20, "memory": 20})
    over = ~under & is_above(pct, columns, {"cpu": 80, "memory": 80})
    assert under.tolist() == [True, False, False, False, False]
    assert over.tolist() == [False, True, False, True, False]


# ---- capacity, capping ----------------------------------------------------------------------------------


def test_node_capacity_prefers_allocatable() -> None:
    n = make_node("n").capacity(cpu="4", memory="1Gi", pods="10").allocatable(cpu="3500m").obj()
    assert node_capacity(n) == {"cpu": 3500, "memory": 1024**3, "pods": 10, "MetricResource": 100}
    bare = make_node("m").obj()
    bare["status"] = {"capacity": {"cpu": "2", "pods": "5"}}
    assert node_capacity(bare) == {"cpu": 2000, "pods": 5, "MetricResource": 100}


def test_node_capacity_bad_quantity() -> None:
    n = make_node("n").obj()
    n["status"]["allocatable"]["cpu"] = "lots"
    with pytest.raises(ValueError, match=r'Node "n": status.allocatable.cpu: invalid quantity "lots"'):
        node_capacity(n)


def test_cap_to_thresholds() -> None:
    """``int64(threshold * 0.01 * capacity)`` (truncated), the full capacity without a threshold, 0 where
    the node does not list the resource."""
    capacity = np.array([[4000, 9, 3000, 8], [4000, 10, 3000, 0]], dtype=np.int64)
    present = np.array([[True, True, True, True], [True, True, True, False]])
    got = cap_to_thresholds(
        capacity, present, ["cpu", "pods", "memory", EXT], {"cpu": 50, "pods": 50, EXT: 50}
    )
    assert got.tolist() == [[2000, 4, 3000, 4], [2000, 5, 3000, 0]]
    lifted = cap_to_thresholds(capacity, present, ["cpu", "pods", "memory", EXT], {"pods": 70})
    assert lifted.tolist() == [[4000, 6, 3000, 8], [4000, 7, 3000, 0]]


# ---- the usage table ------------------------------------------------------------------------------------


def test_usage_table_counts_active_pods_only() -> None:
    view = view_of(
        node("n1", 4000, 3000, 10, ext=8),
        node("n2", 2000, 1000, 5),
        pod("a", 400, 100, "n1", rs, lambda b: b.req({EXT: "2"})),
        pod("b", 300, 0, "n1", rs, lambda b: b.phase("Running")),
        pod("done", 1000, 1000, "n1", rs, lambda b: b.phase("Succeeded")),
        pod("failed", 1000, 1000, "n1", rs, lambda b: b.phase("Failed")),
        pod("c", 100, 50, "n2", rs, lambda b: b.phase("Pending")),
    )
    table = usage_table(view, view.nodes, ["cpu", EXT, "memory", "pods"])
    assert table.names == ["n1", "n2"]
    assert table.usage.tolist() == [[700, 2, 100, 2], [100, 0, 50, 1]]
    assert table.capacity.tolist() == [[4000, 8, 3000, 10], [2000, 0, 1000, 5]]
    assert table.present.tolist() == [[True, True, True, True], [True, False, True, True]]
    assert [[p["metadata"]["name"] for p in ps] for ps in table.pods] == [["a", "b"], ["c"]]


def test_node_utilization_fractions() -> None:
    """The dry-run report's fractions: requested / allocatable for every node, 0.0 without the resource."""
    view = view_of(
        node("n1", 4000, 3000, 10, ext=8),
        node("n2", 2000, 1000, 5, unschedulable=True),
        pod("a", 1000, 1500, "n1", rs, lambda b: b.req({EXT: "2"})),
        pod("b", 500, 250, "n2", rs),
        pod("gone", 500, 250, "n2", rs, lambda b: b.phase("Succeeded")),
    )
    assert node_utilization_fractions(view, ["cpu", "memory", "pods", EXT, "cpu"]) == {
        "n1": {"cpu": 0.25, "memory": 0.5, "pods": 0.1, EXT: 0.25},
        "n2": {"cpu": 0.25, "memory": 0.25, "pods": 0.2, EXT: 0.0},
    }


# ---- QoS and the eviction order -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("built", "qos"),
    [
        pytest.param(make_pod("p"), "BestEffort", id="no resources"),
        pytest.param(make_pod("p").req(cpu="0", memory="0"), "BestEffort", id="zero requests"),
        pytest.param(make_pod("p").req({EXT: "1"}), "BestEffort", id="only an extended resource"),
        pytest.param(make_pod("p").req(cpu="100m"), "Burstable", id="cpu request"),
        pytest.param(
            make_pod("p").req(cpu="1", memory="1Gi").lim(cpu="1", memory="1Gi"), "Guaranteed", id="equal"
        ),
        pytest.param(make_pod("p").lim(cpu="1", memory="1Gi"), "Burstable", id="limits only, not defaulted"),
        pytest.param(
            make_pod("p").req(cpu="1", memory="1Gi").lim(cpu="2", memory="1Gi"), "Burstable", id="unequal"
        ),
        pytest.param(make_pod("p").req(cpu="1").lim(cpu="1"), "Burstable", id="no memory limit"),
        pytest.param(
            make_pod("p").lim(cpu="1", memory="1Gi").container("d", cpu="1"),
            "Burstable",
            id="second container",
        ),
        pytest.param(make_pod("p").status(qosClass="Guaranteed"), "Guaranteed", id="status wins"),
    ],
)
def test_pod_qos(built: Any, qos: str) -> None:
    assert pod_qos(built.obj()) == qos


def test_pod_eviction_order() -> None:
    """No priority first, then ascending priority; BestEffort < Burstable < Guaranteed; without the
    prefer-no-eviction annotation first; ties keep their order."""
    guaranteed = lambda b: b.lim(cpu="400m", memory="100")  # noqa: E731
    soft = lambda b: b.annotate({"descheduler.alpha.kubernetes.io/prefer-no-eviction": ""})  # noqa: E731
    pods = [
        pod("high", 400, 0, "n1", prio(100)),
        pod("g", 400, 100, "n1", guaranteed),
        pod("burst-soft", 400, 0, "n1", soft),
        pod("burst", 400, 0, "n1"),
        pod("be", 0, 0, "n1", best_effort),
        pod("low", 400, 0, "n1", prio(-5)),
        pod("burst2", 400, 0, "n1"),
        pod("class", 400, 0, "n1", lambda b: b.priority_class("mid")),
        pod("zero", 400, 0, "n1", prio(0)),
    ]
    view = ClusterView(
        nodes=[],
        pods=pods,
        now=0.0,
        priority_classes=[{"metadata": {"name": "mid"}, "value": 50}],
    )
    order = [p["metadata"]["name"] for p in pod_eviction_order(view, pods)]
    assert order == ["be", "burst", "burst2", "burst-soft", "g", "low", "zero", "class", "high"]
