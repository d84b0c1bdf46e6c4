"""ImageLocality scores: kube's image_locality_test.go table, name normalisation, clamping, the index."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from imagelocality_helpers import MB, image

from berth.scheduler.framework import CycleState, NodeTable, PodInfo
from berth.scheduler.plugins.imagelocality import (
    MAX_CONTAINER_THRESHOLD,
    MIN_THRESHOLD,
    ImageLocality,
    calculate_priorities,
    calculate_priority,
    normalized_image_name,
)
from builders import make_node, make_pod, make_table

NODE_40_300_2000 = [
    image(40, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"),
    image(300, "gcr.io/300:latest", "gcr.io/300:v1"),
    image(2000, "gcr.io/2000:latest"),
]
NODE_250_10 = [image(250, "gcr.io/250:latest"), image(10, "gcr.io/10:latest", "gcr.io/10:v1")]
NODE_600_40_900 = [
    image(600, "gcr.io/600:latest"),
    image(40, "gcr.io/40:latest"),
    image(900, "gcr.io/900:latest"),
]
NODE_300_600_900 = [
    image(300, "gcr.io/300:latest"),
    image(600, "gcr.io/600:latest"),
    image(900, "gcr.io/900:latest"),
]
NODE_4000_30 = [image(4000, "gcr.io/4000:latest"), image(30, "gcr.io/30:latest")]
NODE_20_30_40 = [image(20, "gcr.io/20:latest"), image(30, "gcr.io/30:latest"), image(40, "gcr.io/40:latest")]
NO_IMAGES: list[dict[str, Any]] = []


def scores(table: NodeTable, pod: PodInfo) -> list[int]:
    """Per-node scores of every row, after checking the batched form gives the same."""
    pl = ImageLocality()
    state = CycleState()
    per_node = [pl.score(state, pod, table.info(i)) for i in range(table.size)]
    batched = pl.score_nodes(state, pod, table, np.arange(table.size, dtype=np.int64)).tolist()
    assert batched == per_node
    return per_node


# kube's TestImageLocalityPriority cases, with its expected scores
KUBE_CASES = [
    # 250M/2 on node2 → 100 * (125M - 23M) / (2000M - 23M) = 5
    (
        "two images spread on two nodes",
        ["gcr.io/40", "gcr.io/250"],
        [],
        [NODE_40_300_2000, NODE_250_10],
        [0, 5],
    ),
    # (40M + 300M)/2 → 7
    ("two images on one node", ["gcr.io/40", "gcr.io/300"], [], [NODE_40_300_2000, NODE_250_10], [7, 0]),
    # 4000M/2 >= 2000M: max threshold
    ("if exceed limit, use limit", ["gcr.io/10", "gcr.io/4000"], [], [NODE_4000_30, NODE_250_10], [100, 0]),
    # 4000M/3 → 66
    (
        "if exceed limit, use limit (with node which has no images present)",
        ["gcr.io/10", "gcr.io/4000"],
        [],
        [NODE_4000_30, NODE_250_10, NO_IMAGES],
        [66, 0, 0],
    ),
    # node1: 600*2/3 + 900*2/3 → 32; node2: + 300*1/3 → 36
    (
        "pod with multiple large images, node2 is preferred",
        ["gcr.io/300", "gcr.io/600", "gcr.io/900"],
        [],
        [NODE_600_40_900, NODE_300_600_900, NO_IMAGES],
        [32, 36, 0],
    ),
    # node1: 30M + 40M/2 → 1; node2: 30M/2 below the minimum → 0
    ("pod with multiple small images", ["gcr.io/30", "gcr.io/40"], [], [NODE_20_30_40, NODE_4000_30], [1, 0]),
    # the init container's 300M/2 counts, and the threshold is for two containers → 6
    (
        "include InitContainers: two images spread on two nodes, prefer the larger image one",
        ["gcr.io/30"],
        ["gcr.io/300"],
        [NODE_40_300_2000, NODE_20_30_40],
        [6, 0],
    ),
]


@pytest.mark.parametrize(
    ("images", "init", "nodes", "expected"), [c[1:] for c in KUBE_CASES], ids=[c[0] for c in KUBE_CASES]
)
def test_kube_image_locality_priority(
    images: list[str], init: list[str], nodes: list[list[dict[str, Any]]], expected: list[int]
) -> None:
    table = make_table(make_node(f"node{i + 1}").images(*imgs).obj() for i, imgs in enumerate(nodes))
    assert scores(table, make_pod().images(*images).init_images(*init).info()) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        ("root@sha256:4d2f", "root@sha256:4d2f"),
        ("nginx", "nginx:latest"),
        ("docker.io/library/nginx", "docker.io/library/nginx:latest"),
        ("", ":latest"),
    ],
)
def test_normalized_image_name(name: str, expected: str) -> None:
    assert normalized_image_name(name) == expected


def test_calculate_priority_clamps_and_scales() -> None:
    assert MIN_THRESHOLD == 23 * MB and MAX_CONTAINER_THRESHOLD == 1000 * MB
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(23 * MB, 1) == 0
    assert calculate_priority(23 * MB + 9_769_000, 1) == 0  # 0.95 % of the range
    assert calculate_priority(23 * MB + 10_244_997, 1) == 1  # just over 1 % of the 977 MiB range
    assert calculate_priority(1000 * MB, 1) == 100
    assert calculate_priority(5000 * MB, 1) == 100
    assert calculate_priority(1000 * MB, 2) == 49  # 977 / 1977
    assert calculate_priority(0, 0) == 0  # no containers: the minimum, never a division by zero
    sums = np.array([0, 23 * MB, 23 * MB + 10_244_997, 1000 * MB, 5000 * MB], dtype=np.int64)
    assert calculate_priorities(sums, 1).tolist() == [0, 0, 1, 100, 100]
    assert calculate_priorities(sums, 2).tolist() == [0, 0, 0, 49, 100]
    assert calculate_priorities(sums, 0).tolist() == [0, 0, 0, 0, 0]


def test_repeated_image_counts_per_container() -> None:
    # two containers of gcr.io/300 on one of two nodes: 2 x 150M = 300M; 100 * 277M / 1977M → 14
    table = make_table(
        [make_node("a").images(*NODE_40_300_2000).obj(), make_node("b").images(*NODE_250_10).obj()]
    )
    assert scores(table, make_pod().images("gcr.io/300", "gcr.io/300").info()) == [14, 0]


def test_names_match_exactly_after_tagging() -> None:
    table = make_table(
        [
            make_node("a").images(image(500, "docker.io/library/nginx:latest")).obj(),
            make_node("b").images(image(500, "nginx:latest")).obj(),
            make_node("c")
            .images(image(500, "reg.local:5000/app@sha256:feed", "reg.local:5000/app:v2"))
            .obj(),
        ]
    )
    # 500M * 1/3 → 100 * (166.7M - 23M) / 977M = 14; only the exact reference matches
    assert scores(table, make_pod().images("nginx").info()) == [0, 14, 0]
    assert scores(table, make_pod().images("docker.io/library/nginx").info()) == [14, 0, 0]
    assert scores(table, make_pod().images("reg.local:5000/app@sha256:feed").info()) == [0, 0, 14]
    assert scores(table, make_pod().images("reg.local:5000/app:v2").info()) == [0, 0, 14]
    assert scores(table, make_pod().images("reg.local:5000/app").info()) == [0, 0, 0]


def test_size_is_the_first_reported_and_a_node_counts_once() -> None:
    # both nodes report x:latest, with different sizes: kube keeps the first size seen (500M);
    # node a lists the name twice yet counts once, so spread is 2/2 → 100 * 477M / 977M = 48
    table = make_table(
        [
            make_node("a").images(image(500, "x:latest", "x:latest"), image(700, "x:latest")).obj(),
            make_node("b").images(image(900, "x:latest")).obj(),
        ]
    )
    assert scores(table, make_pod().images("x").info()) == [48, 48]


def test_index_follows_node_changes() -> None:
    pl = ImageLocality()
    state = CycleState()
    table = make_table(
        [make_node("a").images(image(800, "big:latest")).obj(), make_node("b").obj(), make_node("c").obj()]
    )
    pod = make_pod().images("big").info()
    idx = np.arange(3, dtype=np.int64)
    # 800M/3 → 100 * (266.7M - 23M) / 977M = 24
    assert pl.score_nodes(state, pod, table, idx).tolist() == [24, 0, 0]
    # node b pulls the image: spread 2/3 → 100 * (533.3M - 23M) / 977M = 52 on both
    table.set_node(make_node("b").images(image(800, "big:latest")).obj())
    assert pl.score_nodes(state, pod, table, idx).tolist() == [52, 52, 0]
    # node a goes away: rows shift, spread 1/2 → 100 * 377M / 977M = 38
    table.remove_node("a")
    assert pl.score_nodes(state, pod, table, np.arange(2, dtype=np.int64)).tolist() == [38, 0]
    assert [pl.score(state, pod, table.info(i)) for i in range(2)] == [38, 0]


def test_batched_form_scores_only_the_given_rows() -> None:
    table = make_table(
        (
            make_node(f"node{i + 1}").images(*imgs).obj()
            for i, imgs in enumerate([NODE_600_40_900, NODE_300_600_900, NO_IMAGES])
        )
    )
    pl = ImageLocality()
    pod = make_pod().images("gcr.io/300", "gcr.io/600", "gcr.io/900").info()
    out = pl.score_nodes(CycleState(), pod, table, np.array([2, 1], dtype=np.int64))
    assert out.tolist() == [0, 36]
    assert pl.score_nodes(CycleState(), pod, table, np.zeros(0, dtype=np.int64)).tolist() == []


def test_pod_without_any_present_image_scores_zero_everywhere() -> None:
    table = make_table([make_node("a").images(*NODE_40_300_2000).obj(), make_node("b").obj()])
    assert scores(table, make_pod().images("registry.k8s.io/pause:3.10").info()) == [0, 0]
