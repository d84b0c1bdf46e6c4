"""NodeResourcesBalancedAllocation: (1 - std of utilisation fractions) * 100 on actual requests."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from plugin_helpers import new_state, score_all

from berth.scheduler.framework import ConfigError, PodInfo
from berth.scheduler.plugins.noderesources import (
    NodeResourcesBalancedAllocationArgs,
    ResourceSpec,
    balanced_score,
    new_balanced,
    parse_balanced_args,
)
from builders import make_node, make_pod, make_table

GPU = "example.com/gpu"
TWO_NODES = [
    make_node("n1").capacity(cpu="4000m", memory=10000).obj(),
    make_node("n2").capacity(cpu="6000m", memory=10000).obj(),
]
THREE = {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}]}


@pytest.mark.parametrize(
    ("args", "nodes", "used", "pod", "expected"),
    [
        # fractions 0.75/0.5 → std 0.125 → 87; 0.5/0.5 → 100 (kube's "differently sized nodes")
        pytest.param(
            {},
            TWO_NODES,
            {},
            make_pod("p").req(cpu="3000m", memory=5000).info(),
            [87, 100],
            id="differently sized",
        ),
        pytest.param(
            {},
            [
                make_node("n1").capacity(cpu="10000m", memory=20000).obj(),
                make_node("n2").capacity(cpu="10000m", memory=50000).obj(),
            ],
            {
                "n1": [make_pod("a").req(cpu="3000m", memory=5000).info()],
                "n2": [make_pod("b").req(cpu="3000m", memory=5000).info()],
            },
            make_pod("p").req(cpu="3000m", memory=5000).info(),
            # n1: 0.6 / 0.5 → 95; n2: 0.6 / 0.2 → std 0.2 → 80
            [95, 80],
            id="with scheduled pods",
        ),
        pytest.param(
            {},
            TWO_NODES[:1],
            {},
            make_pod("p").req(cpu="6000m", memory=5000).info(),
            [75],
            id="fraction capped at 1",
        ),
        pytest.param(
            {},
            [make_node("n1").capacity(cpu="4000m", memory=10000).obj()],
            {"n1": [make_pod("be").info()]},  # a best-effort pod adds nothing to Requested
            make_pod("p").req(cpu="2000m", memory=5000).info(),
            [100],
            id="actual requests not non-zero defaults",
        ),
        pytest.param(
            THREE,
            [make_node("n1").capacity({GPU: 4}, cpu="4000m", memory=10000).obj()],
            {},
            make_pod("p").req({GPU: 2}, cpu="3000m", memory=5000).info(),
            # fractions 0.75, 0.5, 0.5: std = sqrt(((1/6)^2 + 2*(1/12)^2)/3) = 0.1178 → 88
            [88],
            id="three resources general std",
        ),
        pytest.param(
            THREE,
            [make_node("n1").capacity({GPU: 4}, cpu="4000m", memory=10000).obj()],
            {},
            make_pod("p").req(cpu="3000m", memory=5000).info(),
            [87],
            id="extended resource not requested is bypassed",
        ),
        pytest.param(
            {},
            [make_node("n1").capacity(cpu="4000m", memory=None).obj()],
            {},
            make_pod("p").req(cpu="3000m", memory=5000).info(),
            [100],
            id="one fraction",
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
    plugin = new_balanced(args, None)  # type: ignore[arg-type]
    _, scores = score_all(plugin, pod, make_table(nodes, used))
    assert scores.tolist() == expected


def test_best_effort_pod_skipped() -> None:
    plugin = new_balanced({}, None)  # type: ignore[arg-type]
    table = make_table(TWO_NODES)
    pod = make_pod("be").info()
    state = new_state()
    idx = np.arange(2, dtype=np.int64)
    assert plugin.pre_score(state, pod, table, idx).is_skip()
    assert plugin.score(state, pod, table.info(0)) == 0
    assert plugin.score_nodes(state, pod, table, idx).tolist() == [0, 0]


@pytest.mark.parametrize(
    ("requested", "allocatable", "expected"),
    [
        ([0, 0], [0, 0], 100),
        ([1, 3], [4, 4], 75),
        ([1, 1, 1], [2, 4, 8], 84),
        ([5, 0], [4, 4], 50),
    ],
)
def test_balanced_score_formula(requested: list[int], allocatable: list[int], expected: int) -> None:
    assert balanced_score(requested, allocatable) == expected


def test_args() -> None:
    assert parse_balanced_args({}) == NodeResourcesBalancedAllocationArgs()
    assert parse_balanced_args({"resources": [{"name": "cpu"}, {"name": GPU, "weight": 0}]}).resources == (
        ResourceSpec("cpu", 1),
        ResourceSpec(GPU, 1),
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"resources": [{"name": "cpu", "weight": 2}]},
            "NodeResourcesBalancedAllocation: resources[0].weight: Invalid value: 2: must be 1",
        ),
        (
            {"resources": [{"name": "cpu"}, {"name": "cpu"}]},
            'NodeResourcesBalancedAllocation: resources[1].name: Duplicate value: "cpu"',
        ),
        (
            {"resource": []},
            "decoding args for plugin NodeResourcesBalancedAllocation: strict decoding error: "
            'unknown field "resource" (did you mean "resources"?)',
        ),
    ],
)
def test_args_errors(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_balanced_args(args)
    assert str(exc.value) == message
