"""PreScore/Score/NormalizeScore against kube's scoring_test.go tables (exact normalised scores)."""

from __future__ import annotations

from typing import Any

import pytest
from pts_helpers import BAR, FOO, plugin, run_score, spread

from berth.scheduler.framework import Code
from builders import make_node, make_pod, make_table

HOST = "kubernetes.io/hostname"


def foo_pods(**per_node: int) -> list[Any]:
    """``per_node`` matching pods labelled foo on each node (node-a=2 -> two pods on node-a)."""
    return [
        make_pod(f"p-{n}{i}").label(foo="").node(n.replace("_", "-")).info()
        for n, k in per_node.items()
        for i in range(k)
    ]


CASES: list[tuple[str, list[dict[str, Any]], list[Any], list[str], list[dict[str, Any]], dict[str, int]]] = [
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        [
            make_node("node-a").obj(),
            make_node("node-b").obj(),
            make_node("node-c").obj(),
            make_node("node-d").obj(),
        ],
        foo_pods(node_a=2, node_b=1, node_d=3),
        ["node-a", "node-b", "node-c", "node-d"],
        [spread(2, HOST, "ScheduleAnyway")],
        {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        [
            make_node("node-a").obj(),
            make_node("node-b").obj(),
            make_node("node-c").obj(),
            make_node("node-d").obj(),
        ],
        foo_pods(node_a=4, node_b=3, node_c=2, node_d=1),
        ["node-a", "node-b", "node-c", "node-d"],
        [spread(3, HOST, "ScheduleAnyway")],
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates",
        [
            make_node("node-a").obj(),
            make_node("node-b").obj(),
            make_node("node-x").obj(),
            make_node("node-y").obj(),
        ],
        foo_pods(node_a=4, node_b=2, node_x=1, node_y=3),
        ["node-a", "node-b", "node-x"],
        [spread(1, HOST, "ScheduleAnyway")],
        {"node-a": 33, "node-b": 83, "node-x": 100},
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        [
            make_node("node-a").obj(),
            make_node("node-b").unlabel(HOST).label(n="node-b").obj(),
            make_node("node-x").obj(),
            make_node("node-y").obj(),
        ],
        foo_pods(node_a=4, node_b=2, node_x=1, node_y=3),
        ["node-a", "node-b", "node-x"],
        [spread(1, HOST, "ScheduleAnyway")],
        {"node-a": 16, "node-b": 0, "node-x": 100},
    ),
    (
        "one constraint on zone, 3 out of 4 nodes are candidates",
        [
            make_node("node-a").label(zone="zone1").obj(),
            make_node("node-b").label(zone="zone1").obj(),
            make_node("node-x").label(zone="zone2").obj(),
            make_node("node-y").label(zone="zone2").obj(),
        ],
        foo_pods(node_a=4, node_b=2, node_x=1, node_y=3),
        ["node-a", "node-b", "node-x"],
        [spread(1, "zone", "ScheduleAnyway")],
        {"node-a": 75, "node-b": 75, "node-x": 100},
    ),
    (
        "two constraints on zone and node, 2 out of 4 nodes are candidates",
        [
            make_node("node-a").label(zone="zone1").obj(),
            make_node("node-b").label(zone="zone1").obj(),
            make_node("node-x").label(zone="zone2").obj(),
            make_node("node-y").label(zone="zone2").obj(),
        ],
        foo_pods(node_a=2, node_b=1, node_x=2, node_y=4),
        ["node-a", "node-x"],
        [spread(1, "zone", "ScheduleAnyway"), spread(1, HOST, "ScheduleAnyway")],
        {"node-a": 100, "node-x": 63},
    ),
]


@pytest.mark.parametrize(
    ("nodes", "existing", "feasible", "constraints", "want"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_kube_scoring_tables(
    nodes: list[dict[str, Any]],
    existing: list[Any],
    feasible: list[str],
    constraints: list[dict[str, Any]],
    want: dict[str, int],
) -> None:
    p = make_pod("p").label(foo="").spread(*constraints).info()
    s, _, norm = run_score(plugin(), p, make_table(nodes, existing), feasible)
    assert s.is_success()
    assert norm == want


def _different_selectors_cluster(pods: list[Any]) -> Any:
    nodes = [
        make_node("node-a").label(zone="zone1").obj(),
        make_node("node-b").label(zone="zone1").obj(),
        make_node("node-x").label(zone="zone2").obj(),
        make_node("node-y").label(zone="zone2").obj(),
    ]
    return make_table(nodes, pods)


def test_two_constraints_with_different_selectors() -> None:
    existing = [
        make_pod("p-a1").label(foo="").node("node-a").info(),
        make_pod("p-b1").label(foo="", bar="").node("node-b").info(),
        make_pod("p-y1").label(foo="").node("node-y").info(),
        make_pod("p-y2").label(bar="").node("node-y").info(),
    ]
    p = (
        make_pod("p")
        .label(foo="", bar="")
        .spread(spread(1, "zone", "ScheduleAnyway", FOO), spread(1, HOST, "ScheduleAnyway", BAR))
        .info()
    )
    t = _different_selectors_cluster(existing)
    _, raw, norm = run_score(plugin(), p, t)
    assert norm == {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}
    # zone weight log(4), hostname weight log(6): round(2*1.386) = 3, round(2.772 + 1.792) = 5, 1, 3
    assert raw == {"node-a": 3, "node-b": 5, "node-x": 1, "node-y": 3}
    _, _, norm3 = run_score(plugin(), p, t, ["node-a", "node-b", "node-x"])
    assert norm3 == {"node-a": 50, "node-b": 25, "node-x": 100}


def test_two_constraints_some_nodes_have_no_pods() -> None:
    existing = [
        make_pod("p-b1").label(bar="").node("node-b").info(),
        make_pod("p-x1").label(foo="").node("node-x").info(),
        make_pod("p-y1").label(foo="", bar="").node("node-y").info(),
    ]
    p = (
        make_pod("p")
        .label(foo="", bar="")
        .spread(spread(1, "zone", "ScheduleAnyway", FOO), spread(1, HOST, "ScheduleAnyway", BAR))
        .info()
    )
    _, _, norm = run_score(plugin(), p, _different_selectors_cluster(existing))
    assert norm == {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0}


def test_same_counts_everywhere_all_score_100() -> None:
    t = make_table([make_node("node-a").obj(), make_node("node-b").obj()], foo_pods(node_a=1, node_b=1))
    p = make_pod("p").label(foo="").spread(spread(1, HOST, "ScheduleAnyway")).info()
    assert run_score(plugin(), p, t)[2] == {"node-a": 100, "node-b": 100}


def test_pods_without_soft_constraints_skip_scoring() -> None:
    t = make_table([make_node("node-a").label(zone="zone1").obj()])
    p = make_pod("p").label(foo="").spread(spread(1, "zone")).info()
    assert run_score(plugin(), p, t)[0].code == Code.SKIP
    assert run_score(plugin(), make_pod("bare").info(), t)[0].code == Code.SKIP


def test_node_inclusion_policies_decide_which_nodes_count() -> None:
    # node-b is tainted and outside the pod's nodeSelector; it holds 3 matching pods in zone1
    nodes = [
        make_node("node-a").label(zone="zone1", pool="x").obj(),
        make_node("node-b").label(zone="zone1").taints({"key": "t", "effect": "NoSchedule"}).obj(),
        make_node("node-x").label(zone="zone2", pool="x").obj(),
    ]
    existing = foo_pods(node_b=3, node_x=1)

    def scores(**policies: str) -> dict[str, int]:
        p = (
            make_pod("p")
            .label(foo="")
            .spread(spread(1, "zone", "ScheduleAnyway", **policies))
            .node_selector(pool="x")
            .info()
        )
        return run_score(plugin(), p, make_table(nodes, existing), ["node-a", "node-x"])[1]

    # raw score = round(count * log(2 + 2)); Honor affinity (default): node-b's pods are left out
    assert scores() == {"node-a": 0, "node-x": 1}
    # Ignore affinity, Ignore taints: zone1 counts node-b's 3 pods: round(3 * 1.386) = 4
    assert scores(nodeAffinityPolicy="Ignore") == {"node-a": 4, "node-x": 1}
    # Ignore affinity but Honor taints: node-b is tainted, so it is left out again
    assert scores(nodeAffinityPolicy="Ignore", nodeTaintsPolicy="Honor") == {"node-a": 0, "node-x": 1}
