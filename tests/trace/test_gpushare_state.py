"""Per-device GPU accounting: fit masks, allocation, release and the default device choices."""

from __future__ import annotations

import numpy as np
import pytest
from openb_helpers import three_nodes

from berth.scheduler.plugins.gpushare.state import GpuPod, best_fit_device, exclusive_devices, parse_gpu_index


def test_free_milli_per_device_after_allocations() -> None:
    c = three_nodes()
    assert c.gpu_free[:, :4].tolist() == [[1000, 1000, 0, 0], [500, 1000, 0, 0], [1000, 200, 1000, 0]]
    assert c.gpu_free[:, 4:].sum() == 0
    assert c.gpu_capacity_milli == 8000
    assert c.gpu_allocated_milli == 2300
    assert c.affinity == [{}, {"share": 1}, {"share": 1, "1-gpu": 1}]


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        (GpuPod("cpu", 40000, 0), [False, False, True]),
        (GpuPod("cpu", 64001, 0), [False, False, False]),
        (GpuPod("share", 1000, 0, 600, 1), [True, True, True]),
        (GpuPod("two", 1000, 0, 1000, 2), [True, False, True]),
        (GpuPod("three", 1000, 0, 1000, 3), [False, False, False]),
        (GpuPod("t4", 1000, 0, 1000, 1, ("T4",)), [True, True, False]),
        (GpuPod("v100", 1000, 0, 300, 1, ("V100", "A10")), [False, False, True]),
        (GpuPod("a10", 1000, 0, 300, 1, ("A10",)), [False, False, False]),
    ],
)
def test_fits(pod: GpuPod, expected: list[bool]) -> None:
    assert three_nodes().fits(pod).tolist() == expected


def test_allocate_then_release_restores_the_node() -> None:
    c = three_nodes()
    before = c.gpu_free.copy()
    pod = GpuPod("p", 2000, 1024, 1000, 2)
    c.allocate(2, pod, (0, 2))
    assert c.gpu_free[2, :4].tolist() == [0, 200, 0, 0]
    assert c.cpu_free[2] == 62000
    assert c.affinity[2] == {"share": 1, "1-gpu": 1, "2-gpu": 1}
    c.release(2, pod, (0, 2))
    assert np.array_equal(c.gpu_free, before)
    assert c.cpu_free[2] == 64000
    assert c.affinity[2] == {"share": 1, "1-gpu": 1}


def test_allocate_refuses_a_device_without_room() -> None:
    c = three_nodes()
    with pytest.raises(ValueError, match='Pod "p": GPU 1 of node "n2" has 200 milli free, 300 asked'):
        c.allocate(2, GpuPod("p", 0, 0, 300, 1), (1,))


def test_device_choices() -> None:
    free = np.array([1000, 300, 1000, 600, 300, 0, 0, 0], dtype=np.int64)
    assert best_fit_device(free, 300) == 1
    assert best_fit_device(free, 400) == 3
    assert best_fit_device(free, 700) == 0
    assert exclusive_devices(free, 2) == (0, 2)


def test_parse_gpu_index() -> None:
    assert parse_gpu_index("0,3", "x") == (0, 3)
    with pytest.raises(ValueError, match='pod "p": invalid GPU index list "a"'):
        parse_gpu_index("a", 'pod "p"')
