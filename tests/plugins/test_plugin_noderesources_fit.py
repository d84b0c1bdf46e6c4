"""NodeResourcesFit: filter reasons in kube's order, args defaults/validation, and the three scoring strategies."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from plugin_helpers import new_state, score_all

from berth.scheduler.framework import ClusterEvent, Code, ConfigError, PodInfo
from berth.scheduler.plugins.helpers import go_div
from berth.scheduler.plugins.noderesources import (
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    fit_checks,
    new_fit,
    parse_fit_args,
)
from berth.scheduler.plugins.noderesources.fit import failed_checks, failed_checks_of_row
from berth.scheduler.plugins.noderesources.scorers import (
    LeastAllocated,
    RequestedToCapacityRatio,
    least_requested_score,
)
from builders import make_node, make_pod, make_table

EXT = "example.com/aaa"
HUGE = "hugepages-2Mi"

# kube's fit_test node: 10m cpu, 20 memory, 32 pods, 5 example.com/aaa, 20 ephemeral-storage, 5 hugepages
NODE = (
    make_node("n").capacity({EXT: 5, "ephemeral-storage": 20, HUGE: 5}, cpu="10m", memory=20, pods=32).obj()
)


def _check(
    args: dict[str, Any], pod: PodInfo, used: list[PodInfo], node: dict[str, Any], reasons: list[str]
) -> None:
    plugin = new_fit(args, None)  # type: ignore[arg-type]
    table = make_table([node], {node["metadata"]["name"]: used})
    state = new_state()
    plugin.pre_filter(state, pod, table)
    status = plugin.filter(state, pod, table.info(0))
    verdict = plugin.filter_nodes(state, pod, table)
    if reasons:
        assert status.code == Code.UNSCHEDULABLE
        assert list(status.reasons) == reasons
        assert not verdict.passed[0]
        assert verdict.status_of(0) == status
    else:
        assert status.is_success()
        assert verdict.passed[0]


@pytest.mark.parametrize(
    ("pod", "used", "reasons"),
    [
        pytest.param(
            make_pod().info(),
            [make_pod().req(cpu="10m", memory=20).info()],
            [],
            id="no resources requested always fits",
        ),
        pytest.param(
            make_pod().req(cpu="1m", memory=1).info(),
            [make_pod().req(cpu="10m", memory=20).info()],
            ["Insufficient cpu", "Insufficient memory"],
            id="too many resources fails",
        ),
        pytest.param(
            make_pod().req(cpu="1m", memory=1).info(),
            [make_pod().req(cpu="5m", memory=5).info()],
            [],
            id="both resources fit",
        ),
        pytest.param(
            make_pod().req(cpu="2m", memory=1).info(),
            [make_pod().req(cpu="9m", memory=5).info()],
            ["Insufficient cpu"],
            id="one resource memory fits",
        ),
        pytest.param(
            make_pod().req(cpu="1m", memory=2).info(),
            [make_pod().req(cpu="5m", memory=19).info()],
            ["Insufficient memory"],
            id="one resource cpu fits",
        ),
        pytest.param(
            make_pod().req(cpu="5m", memory=1).info(),
            [make_pod().req(cpu="5m", memory=19).info()],
            [],
            id="equal edge case",
        ),
        pytest.param(
            make_pod().req({EXT: 1}, cpu="1m", memory=1).info(),
            [make_pod().req({EXT: 5}, cpu="0", memory=0).info()],
            ["Insufficient example.com/aaa"],
            id="extended resource capacity enforced",
        ),
        pytest.param(
            make_pod().req({EXT: 6}).info(),
            [],
            ["Insufficient example.com/aaa"],
            id="extended resource over allocatable",
        ),
        pytest.param(
            make_pod().req({EXT: 2}).info(),
            [make_pod().req({EXT: 3}).info()],
            [],
            id="extended resource fits",
        ),
        pytest.param(
            make_pod().req({"example.com/bbb": 1}).info(),
            [],
            ["Insufficient example.com/bbb"],
            id="extended resource unknown to node",
        ),
        pytest.param(
            make_pod().req({"example.com/zzz": 1, "example.com/bbb": 1}).info(),
            [],
            ["Insufficient example.com/bbb", "Insufficient example.com/zzz"],
            id="several extended resources by name",
        ),
        pytest.param(
            make_pod().req({HUGE: 6}).info(), [], ["Insufficient hugepages-2Mi"], id="hugepages enforced"
        ),
        pytest.param(
            make_pod().req({HUGE: 3}).info(), [make_pod().req({HUGE: 2}).info()], [], id="hugepages fit"
        ),
        pytest.param(
            make_pod().req({"ephemeral-storage": 25}).info(),
            [],
            ["Insufficient ephemeral-storage"],
            id="storage over",
        ),
        pytest.param(
            make_pod().req({"ephemeral-storage": 10}).info(),
            [make_pod().req({"ephemeral-storage": 10}).info()],
            [],
            id="storage fits",
        ),
        pytest.param(make_pod().req(foo=100).info(), [], [], id="untracked native resource ignored"),
        pytest.param(
            make_pod().req({"ephemeral-storage": 30, HUGE: 9}, cpu="1m", memory=1).info(),
            [make_pod().req(cpu="10m", memory=20).info()],
            [
                "Insufficient cpu",
                "Insufficient memory",
                "Insufficient ephemeral-storage",
                "Insufficient hugepages-2Mi",
            ],
            id="all reasons in order",
        ),
    ],
)
def test_filter_reasons(pod: PodInfo, used: list[PodInfo], reasons: list[str]) -> None:
    _check({}, pod, used, NODE, reasons)


def test_too_many_pods_comes_first() -> None:
    node = make_node("n").capacity(cpu="10m", memory=20, pods=1).obj()
    _check({}, make_pod().info(), [make_pod().info()], node, ["Too many pods"])
    _check(
        {},
        make_pod().req(cpu="20m", memory=30).info(),
        [make_pod().info()],
        node,
        ["Too many pods", "Insufficient cpu", "Insufficient memory"],
    )
    _check(
        {},
        make_pod().info(),
        [],
        make_node("n").capacity(cpu="1", memory=1, pods=None).obj(),
        ["Too many pods"],
    )


def test_init_containers_take_the_peak() -> None:
    d = make_pod("p").req(cpu="1m", memory=1).obj()
    d["spec"]["initContainers"] = [{"name": "i", "resources": {"requests": {"cpu": "3m", "memory": "1"}}}]
    # kube: "too many resources fails due to init container cpu" (8m used + max(1m, 3m) > 10m)
    _check({}, PodInfo(d), [make_pod().req(cpu="8m", memory=19).info()], NODE, ["Insufficient cpu"])


@pytest.mark.parametrize(
    ("args", "reasons"),
    [
        ({}, ["Insufficient example.com/aaa"]),
        ({"ignoredResources": [EXT]}, []),
        ({"ignoredResourceGroups": ["example.com"]}, []),
        ({"ignoredResourceGroups": ["example.org"]}, ["Insufficient example.com/aaa"]),
    ],
)
def test_ignored_extended_resources(args: dict[str, Any], reasons: list[str]) -> None:
    _check(args, make_pod().req({EXT: 10}).info(), [], NODE, reasons)


def test_ignored_resources_apply_to_extended_only() -> None:
    _check(
        {"ignoredResources": [HUGE]},
        make_pod().req({HUGE: 10}).info(),
        [],
        NODE,
        ["Insufficient hugepages-2Mi"],
    )


def test_fit_checks_order() -> None:
    pod = (
        make_pod()
        .req({"example.com/b": 1, "example.com/a": 1, "ephemeral-storage": 3, HUGE: 4}, cpu="1", memory=2)
        .info()
    )
    assert [c[0] for c in fit_checks(pod)] == [
        "cpu",
        "memory",
        "ephemeral-storage",
        "example.com/a",
        "example.com/b",
        HUGE,
    ]


def test_batched_filter_groups_statuses() -> None:
    nodes = [
        make_node("a").capacity(cpu="1", memory=100, pods=10).obj(),
        make_node("b").capacity(cpu="100m", memory=100, pods=10).obj(),
        make_node("c").capacity(cpu="1", memory=10, pods=10).obj(),
        make_node("d").capacity(cpu="100m", memory=10, pods=10).obj(),
        make_node("e").capacity(cpu="100m", memory=10, pods=0).obj(),
    ]
    plugin = new_fit({}, None)  # type: ignore[arg-type]
    table = make_table(nodes)
    pod = make_pod().req(cpu="500m", memory=50).info()
    state = new_state()
    v = plugin.filter_nodes(state, pod, table)
    assert v.passed.tolist() == [True, False, False, False, False]
    assert [v.status_of(i).reasons for i in range(5)] == [
        (),
        ("Insufficient cpu",),
        ("Insufficient memory",),
        ("Insufficient cpu", "Insufficient memory"),
        ("Too many pods", "Insufficient cpu", "Insufficient memory"),
    ]
    # one shared status object per combination of failed checks
    assert len({id(v.status_of(i)) for i in range(1, 5)}) == 4
    assert v.status_of(1) is plugin.filter_nodes(state, pod, table).status_of(1)


# ----- args -------------------------------------------------------------------------------------
def test_default_args() -> None:
    assert parse_fit_args({}) == NodeResourcesFitArgs(
        frozenset(),
        frozenset(),
        ScoringStrategy("LeastAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))),
    )


def test_args_defaulting() -> None:
    a = parse_fit_args(
        {
            "ignoredResources": ["example.com/x"],
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "cpu"}, {"name": "memory", "weight": 3}],
            },
        }
    )
    assert a.ignored_resources == frozenset({"example.com/x"})
    assert a.scoring_strategy == ScoringStrategy(
        "MostAllocated", (ResourceSpec("cpu", 1), ResourceSpec("memory", 3))
    )
    b = parse_fit_args({"scoringStrategy": {"type": "LeastAllocated"}})
    assert b.scoring_strategy.resources == (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    c = parse_fit_args(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 10}, {"utilization": 100}]
                },
            }
        }
    )
    assert c.scoring_strategy.shape == (UtilizationShapePoint(0, 10), UtilizationShapePoint(100, 0))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"scoringStrategy": {"type": "Foo"}},
            'NodeResourcesFit: scoringStrategy.type: Unsupported value: "Foo": supported values: '
            '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        ),
        (
            {"scoringStrategy": {"resources": [{"name": "cpu"}]}},
            'NodeResourcesFit: scoringStrategy.type: Unsupported value: "": supported values: '
            '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        ),
        (
            {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}},
            "NodeResourcesFit: scoringStrategy.resources[0].weight: Invalid value: 101: "
            "resource weight of cpu not in valid range [1, 100]",
        ),
        (
            {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": -1}]}},
            "NodeResourcesFit: scoringStrategy.resources[0].weight: Invalid value: -1: "
            "resource weight of cpu not in valid range [1, 100]",
        ),
        (
            {"ignoredResourceGroups": ["example.com/aaa"]},
            'NodeResourcesFit: ignoredResourceGroups[0]: Invalid value: "example.com/aaa": '
            "resource group name can't contain '/'",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": []},
                }
            },
            "NodeResourcesFit: scoringStrategy.shape: Required value: at least one point must be specified",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {
                        "shape": [{"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]
                    },
                }
            },
            "NodeResourcesFit: scoringStrategy.shape[1].utilization: Invalid value: 50: "
            "utilization values must be sorted in increasing order",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": [{"utilization": 10, "score": 11}]},
                }
            },
            "NodeResourcesFit: scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
        ),
        (
            {
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "requestedToCapacityRatio": {"shape": [{"utilization": 101, "score": 1}]},
                }
            },
            "NodeResourcesFit: scoringStrategy.shape[0].utilization: Invalid value: 101: not in valid range [0, 100]",
        ),
        (
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
            "NodeResourcesFit: scoringStrategy.requestedToCapacityRatio: Required value: "
            "must be set for type RequestedToCapacityRatio",
        ),
        ({"foo": 1}, 'decoding args for plugin NodeResourcesFit: strict decoding error: unknown field "foo"'),
        ({"ignoredResources": "x"}, 'NodeResourcesFit: ignoredResources: Invalid value: "x": must be a list'),
    ],
)
def test_args_errors(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_fit_args(args)
    assert str(exc.value) == message


# ----- scoring ----------------------------------------------------------------------------------
LEAST: dict[str, Any] = {}
MOST = {"scoringStrategy": {"type": "MostAllocated"}}


def _ratio(*points: tuple[int, int], resources: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    shape = [{"utilization": u, "score": s} for u, s in points]
    d: dict[str, Any] = {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": shape}}
    if resources:
        d["resources"] = resources
    return {"scoringStrategy": d}


TWO_NODES = [
    make_node("n1").capacity(cpu="4000m", memory=10000).obj(),
    make_node("n2").capacity(cpu="6000m", memory=10000).obj(),
]
GPU = "example.com/gpu"


@pytest.mark.parametrize(
    ("args", "nodes", "used", "pod", "expected"),
    [
        # LeastAllocated: ((alloc - req) * 100 / alloc) averaged by weight
        pytest.param(
            LEAST,
            TWO_NODES,
            {},
            make_pod().req(cpu="3000m", memory=5000).info(),
            [37, 50],
            id="least differently sized nodes",
        ),
        pytest.param(
            LEAST,
            [
                make_node("n1").capacity(cpu="10000m", memory=20000).obj(),
                make_node("n2").capacity(cpu="10000m", memory=50000).obj(),
            ],
            {
                "n1": [make_pod().req(cpu="3000m", memory=5000).info()],
                "n2": [make_pod().req(cpu="3000m", memory=5000).info()],
            },
            make_pod().req(cpu="3000m", memory=5000).info(),
            [45, 60],
            id="least with scheduled pods",
        ),
        pytest.param(
            LEAST,
            TWO_NODES[:1],
            {},
            make_pod().req(cpu="6000m", memory=5000).info(),
            [25],
            id="least request exceeds capacity",
        ),
        pytest.param(
            LEAST,
            [make_node("n1").capacity(cpu="4000m", memory="1Gi").obj()],
            {},
            make_pod().info(),
            [88],
            id="least non-zero defaults",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu", "weight": 2}, {"name": "memory"}],
                }
            },
            TWO_NODES,
            {},
            make_pod().req(cpu="3000m", memory=5000).info(),
            [33, 50],
            id="least weighted",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}],
                }
            },
            TWO_NODES,
            {},
            make_pod().req(cpu="3000m", memory=5000).info(),
            [37, 50],
            id="least extended resource not requested is bypassed",
        ),
        pytest.param(
            {
                "scoringStrategy": {
                    "type": "LeastAllocated",
                    "resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}],
                }
            },
            [make_node("n1").capacity({GPU: 4}, cpu="4000m", memory=10000).obj(), TWO_NODES[1]],
            {},
            make_pod().req({"example.com/gpu": 1}, cpu="3000m", memory=5000).info(),
            [50, 50],
            id="least extended resource requested",
        ),
        # MostAllocated: (req * 100 / alloc), req capped at alloc
        pytest.param(
            MOST,
            TWO_NODES,
            {},
            make_pod().req(cpu="3000m", memory=5000).info(),
            [62, 50],
            id="most differently sized nodes",
        ),
        pytest.param(
            MOST,
            TWO_NODES[:1],
            {},
            make_pod().req(cpu="6000m", memory=5000).info(),
            [75],
            id="most request exceeds capacity",
        ),
        # RequestedToCapacityRatio: broken-linear function, Go rounding of the weighted mean
        pytest.param(
            _ratio((0, 0), (100, 10)),
            TWO_NODES,
            {},
            make_pod().req(cpu="3000m", memory=5000).info(),
            [63, 50],
            id="ratio most-like rounds up",
        ),
        pytest.param(
            _ratio((0, 10), (100, 0)),
            TWO_NODES,
            {},
            make_pod().req(cpu="3000m", memory=5000).info(),
            [38, 50],
            id="ratio least-like",
        ),
        pytest.param(
            _ratio((0, 0), (100, 10)),
            TWO_NODES[:1],
            {},
            make_pod().req(cpu="0", memory=5000).info(),
            [50],
            id="ratio zero scores not weighted",
        ),
        pytest.param(
            _ratio((0, 0), (100, 10)),
            TWO_NODES[:1],
            {},
            make_pod().req(cpu="8000m", memory=5000).info(),
            [75],
            id="ratio over capacity is full",
        ),
        pytest.param(
            _ratio((50, 5)),
            TWO_NODES[:1],
            {},
            make_pod().req(cpu="3000m", memory=1000).info(),
            [50],
            id="ratio single point",
        ),
    ],
)
def test_scores(
    args: dict[str, Any],
    nodes: list[dict[str, Any]],
    used: dict[str, list[PodInfo]],
    pod: PodInfo,
    expected: list[int],
) -> None:
    plugin = new_fit(args, None)  # type: ignore[arg-type]
    _, scores = score_all(plugin, pod, make_table(nodes, used))
    assert scores.tolist() == expected


@pytest.mark.parametrize(
    ("utilization", "expected"),
    [(0, 100), (1, 99), (5, 95), (10, 90), (30, 70), (40, 62), (75, 32), (100, 10)],
)
def test_broken_linear_truncates_toward_zero(utilization: int, expected: int) -> None:
    scorer = RequestedToCapacityRatio(
        (UtilizationShapePoint(0, 10), UtilizationShapePoint(30, 7), UtilizationShapePoint(100, 1))
    )
    assert scorer.raw(utilization) == expected
    assert scorer.raw_vec(np.array([utilization], dtype=np.int64)).tolist() == [expected]


def test_events_and_no_normalize() -> None:
    plugin = new_fit({}, None)  # type: ignore[arg-type]
    assert plugin.events_to_register() == [
        ClusterEvent("Pod", frozenset({"Delete"})),
        ClusterEvent("Node", frozenset({"Add", "Update"})),
    ]
    assert not hasattr(plugin, "normalize_scores")


@given(
    st.lists(
        st.tuples(st.integers(-50, 5000), st.integers(-100, 4000), st.integers(0, 5)), min_size=1, max_size=4
    )
)
def test_least_allocated_node_score_is_the_weighted_mean_of_resource_scores(
    rows: list[tuple[int, int, int]],
) -> None:
    requested, allocatable, weights = (list(c) for c in zip(*rows, strict=True))
    total = wsum = 0
    for r, a, w in rows:
        if a != 0:
            total += least_requested_score(r, a) * w
            wsum += w
    expected = go_div(total, wsum) if wsum else 0
    assert LeastAllocated().score(requested, allocatable, weights) == expected


@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 40), st.integers(0, 3), st.integers(0, 30)),
        min_size=1,
        max_size=5,
    ),
    st.integers(1, 12),
    st.integers(1, 25),
)
def test_one_row_of_failed_checks_is_that_row_of_the_columns(
    rows: list[tuple[int, int, int, int]], cpu: int, memory: int
) -> None:
    nodes = [
        make_node(f"n{i}").capacity(cpu=f"{c}m" if c else None, memory=m, pods=p or None).obj()
        for i, (c, m, p, _) in enumerate(rows)
    ]
    pods = {
        f"n{i}": [make_pod(f"p{i}-{j}").req(cpu="1m").info() for j in range(k % 4)]
        for i, (*_, k) in enumerate(rows)
    }
    table = make_table(nodes, pods)
    checks = fit_checks(make_pod().req(cpu=f"{cpu}m", memory=memory).info())
    bits, passed = failed_checks(table, checks, None)
    for r in range(table.size):
        assert failed_checks_of_row(table, checks, r) == (int(bits[r]), bool(passed[r]))
