"""Each policy's scores and choice on a hand-made 3-node case (see three_nodes)."""

from __future__ import annotations

import numpy as np
import pytest
from openb_helpers import three_nodes

from berth.scheduler.plugins.gpushare.frag import TypicalPods
from berth.scheduler.plugins.gpushare.policies import (
    BestFitPolicy,
    DotProductPolicy,
    FGDPolicy,
    FragTracker,
    GpuClusteringPolicy,
    GpuPackingPolicy,
    RandomPolicy,
    make_policy,
    normalize,
    select_host,
)
from berth.scheduler.plugins.gpushare.state import GpuCluster, GpuPod
from berth.sim.traces.openb import TraceNode
from berth.sim.traces.replay import replay

ROWS = np.array([0, 1, 2], dtype=np.int64)
SHARE = GpuPod("p", 4000, 0, 400, 1)


def test_dot_product() -> None:
    # n0: 1 - (0.25*0.03125 + 0.25*0.05)/2 = 0.9898; n1: gpu left 1500 -> 0.9914; n2: 1 - (0.5*0.03125 + 0.4*0.05)/2
    assert DotProductPolicy().score(three_nodes(), SHARE, ROWS).tolist() == [98, 99, 98]


def test_gpu_clustering() -> None:
    # n0 idle: 25 + 25*6000//8000; n1 only shares: 75 + 25*6500//8000; n2 shares and 1-gpu: 50 + 25*5800//8000
    assert GpuClusteringPolicy().score(three_nodes(), SHARE, ROWS).tolist() == [43, 95, 68]
    whole = GpuPod("w", 0, 0, 1000, 1)
    assert GpuClusteringPolicy().score(three_nodes(), whole, ROWS).tolist() == [43, 20, 68]
    assert GpuClusteringPolicy().score(three_nodes(), GpuPod("c", 1, 0), ROWS).tolist() == [0, 0, 0]


def test_gpu_packing() -> None:
    # n0 idle: max(33-2, 2); n1 uses the 500 device: 100 - 50//10; n2 must take a free GPU: 50 - 1
    assert GpuPackingPolicy().score(three_nodes(), SHARE, ROWS).tolist() == [31, 95, 49]
    two = GpuPod("two", 0, 0, 1000, 2)
    assert GpuPackingPolicy().score(three_nodes(), two, np.array([0, 2])).tolist() == [31, 48]


def test_best_fit_normalised() -> None:
    # raw 79, 82, 65 -> (s - 65) * 100 // 17
    assert BestFitPolicy().score(three_nodes(), SHARE, ROWS).tolist() == [82, 100, 0]
    assert normalize(np.array([7, 7])).tolist() == [0, 0]


def test_fgd_scores_and_device() -> None:
    c = three_nodes()
    frag = FragTracker(TypicalPods.of([GpuPod("s", 4000, 0, 500, 1), GpuPod("w", 8000, 0, 1000, 1)]), c)
    fgd = FGDPolicy(frag)
    # n0: frag 0 -> 300 (sigmoid(-0.3)); n1: GPU 0 (500 -> 100) takes frag 250 -> 100 (sigmoid(0.15)),
    # GPU 1 would give 550; n2: 200 -> 500
    assert fgd.score(c, SHARE, ROWS).tolist() == [42, 53, 42]
    assert fgd.devices(c, SHARE, 1) == (0,)
    assert fgd.devices(c, SHARE, 2) == (0,)
    whole = GpuPod("w", 8000, 0, 1000, 1)
    # n0 -> [0,1000]: 0 -> 0; n1 -> [500,0]: 250 -> 250; n2 -> [0,200,1000,0]: 200 -> 200 (sigmoid(0) = 0.5)
    assert fgd.score(c, whole, ROWS).tolist() == [50, 50, 50]


@pytest.mark.parametrize(
    ("policy", "node", "devices"),
    [("DotProduct", 1, (0,)), ("GpuClustering", 1, (0,)), ("GpuPacking", 1, (0,)), ("BestFit", 1, (0,))],
)
def test_choice(policy: str, node: int, devices: tuple[int, ...]) -> None:
    c = three_nodes()
    p = make_policy(policy, np.random.default_rng(0), FragTracker(TypicalPods.of([SHARE]), c))
    chosen = select_host(p.score(c, SHARE, ROWS), ROWS, c.name_rank)
    assert (chosen, p.devices(c, SHARE, chosen)) == (node, devices)


def test_random_is_seeded() -> None:
    c = three_nodes()
    expect = np.random.default_rng(7)
    node = int(expect.integers(3))
    p = RandomPolicy(np.random.default_rng(7))
    scores = p.score(c, SHARE, ROWS)
    assert scores.tolist() == [100 if i == node else 0 for i in range(3)]
    cand = np.flatnonzero(c.gpu_free[2] >= 400)
    assert p.devices(c, SHARE, 2) == (int(cand[int(expect.integers(len(cand)))]),)


def test_ties_go_to_the_first_name() -> None:
    c = three_nodes()
    assert select_host(np.array([5, 9, 9]), ROWS, c.name_rank) == 1
    assert select_host(np.array([9, 9, 9]), np.array([2, 0, 1]), c.name_rank) == 0


def test_unknown_policy() -> None:
    with pytest.raises(ValueError, match='unknown policy "Nope"'):
        make_policy("Nope", np.random.default_rng(0), FragTracker(TypicalPods.of([SHARE]), three_nodes()))


def test_prefix_names_ranks_ties_by_the_random_prefix() -> None:
    # rows n1, n0, n2; by name n0 (row 1), n1 (row 0), n2 (row 2) get the prefixes 2, 0, 1 of the permutation:
    # "0002-n0", "0000-n1", "0001-n2", so the ranks per row are [0, 2, 1]
    c = GpuCluster.build([("n1", 1000, 1, 1, "T4"), ("n0", 1000, 1, 1, "T4"), ("n2", 1000, 1, 1, "T4")])
    assert c.name_rank.tolist() == [1, 0, 2]
    c.prefix_names(np.array([2, 0, 1]))
    assert c.name_rank.tolist() == [0, 2, 1]
    assert select_host(np.array([9, 9, 9]), ROWS, c.name_rank) == 0
    assert select_host(np.array([0, 9, 9]), ROWS, c.name_rank) == 2
    with pytest.raises(ValueError, match="not a permutation of 3 nodes"):
        c.prefix_names(np.array([0, 0, 1]))


def test_cpu_only_pods_under_gpu_packing_go_to_a_random_node_per_replay() -> None:
    # GpuPacking and GpuClustering score every node 0 for a CPU-only pod: the tie-break alone decides. Four
    # identical idle nodes: each replay sends all such pods to one node (the smallest prefix), and which node
    # depends on the seed instead of always being the first name
    nodes = [TraceNode(f"n-{i}", 64000, 1024, 2, "T4") for i in range(4)]
    cpu_pods = [GpuPod(f"c-{i}", 1000, 0) for i in range(3)]
    chosen = set()
    for policy in ("GpuPacking", "GpuClustering"):
        for seed in range(16):
            placed = {p.node for p in replay(nodes, cpu_pods, cpu_pods, policy, seed).placements}
            assert len(placed) == 1
            chosen |= placed
    assert chosen == {"n-0", "n-1", "n-2", "n-3"}


def test_the_tie_order_is_drawn_aside_from_the_random_policy() -> None:
    # the replay's random node order comes from a child generator: the Random policy still draws the seed's
    # own numbers, so its first pick on three identical nodes is row rng([seed, 1]).integers(3)
    nodes = [TraceNode(f"n-{i}", 64000, 1024, 2, "T4") for i in range(3)]
    for seed in range(8):
        first = replay(nodes, [SHARE], [SHARE], "Random", seed).placements[0].node
        assert first == f"n-{int(np.random.default_rng([seed, 1]).integers(3))}"
