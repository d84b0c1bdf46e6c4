"""The FGD paper's fragmentation measure on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from openb_helpers import three_nodes

from berth.scheduler.plugins.gpushare.frag import TypicalPods, frag_amount, node_frag
from berth.scheduler.plugins.gpushare.policies import FragTracker
from berth.scheduler.plugins.gpushare.state import GpuPod

SHARE = GpuPod("s", 4000, 0, 500, 1)
WHOLE = GpuPod("w", 8000, 0, 1000, 1)


def two_typical() -> TypicalPods:
    """A 500m share (4 cores) and a whole GPU (8 cores), half each."""
    return TypicalPods.of([SHARE, WHOLE])


def test_typical_pods_order_cut_and_frequencies() -> None:
    pods = [SHARE] * 6 + [WHOLE] * 3 + [GpuPod("c", 2000, 0)]
    t = TypicalPods.of(pods, threshold=80)
    # 6 shares then 3 whole cover 9 of 10 pods (>= 80 %); the CPU pod is cut, frequencies renormalised over 9
    assert t.milli.tolist() == [500, 1000]
    assert t.cpu.tolist() == [4000, 8000]
    assert t.freq.tolist() == pytest.approx([6 / 9, 3 / 9])
    full = TypicalPods.of(pods)
    assert full.milli.tolist() == [500, 1000, 0]
    assert full.freq.tolist() == pytest.approx([0.6, 0.3, 0.1])


def test_typical_pods_ties_put_the_larger_shape_first() -> None:
    t = two_typical()
    assert t.cpu.tolist() == [8000, 4000]
    assert t.freq.tolist() == [0.5, 0.5]


def test_node_fragmentation_hand_computed() -> None:
    c = three_nodes()
    t = two_typical()
    # n0 [1000,1000]: both typical pods fit, no device too small -> 0
    # n1 [500,1000]: the share fits (no device < 500); the whole GPU fits, device 0 (500) is too small -> 0.5*500
    # n2 [1000,200,1000,0]: both fit; 200 is too small for either -> 0.5*200 + 0.5*200
    assert node_frag(t, t.access(c), c).tolist() == [0.0, 250.0, 200.0]


def test_lack_of_cpu_makes_all_free_gpu_fragment() -> None:
    t = two_typical()
    access = np.ones((2, 2), dtype=np.bool_)
    cpu = np.array([6000, 3000], dtype=np.int64)
    gpu = np.array([[1000, 700, 0, 0, 0, 0, 0, 0], [1000, 700, 0, 0, 0, 0, 0, 0]], dtype=np.int64)
    # node 0: whole GPU lacks CPU (1700 fragment), the share fits (no device < 500) -> 0.5*1700
    # node 1: neither fits for CPU -> all 1700 for both
    assert frag_amount(t, access, cpu, gpu).tolist() == [850.0, 1700.0]


def test_model_mismatch_and_cpu_only_typical_pods_count_all_free_gpu() -> None:
    c = three_nodes()
    t = TypicalPods.of([GpuPod("t4", 1000, 0, 500, 1, ("T4",)), GpuPod("cpu", 1000, 0)])
    assert t.models == (("T4",), ())
    # n2 is a V100 node: the T4 share cannot use it (all 2200 free) and the CPU pod counts all free GPU
    assert node_frag(t, t.access(c), c).tolist() == [1000.0, 750.0, 2200.0]


def test_tracker_refreshes_one_node() -> None:
    c = three_nodes()
    tr = FragTracker(two_typical(), c)
    assert tr.total == 450.0
    c.allocate(0, GpuPod("x", 0, 0, 300, 1), (1,))
    tr.refresh(0)
    # n0 [1000,700]: the whole GPU leaves 700 as fragment -> 350
    assert tr.values.tolist() == [350.0, 250.0, 200.0]
