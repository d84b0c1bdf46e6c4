"""The FitError text matches kube-scheduler's format exactly."""

from __future__ import annotations

import pytest

from berth.scheduler.messages import fit_error_message, scheduled_message
from berth.scheduler.scheduler import num_feasible_nodes_to_find


def test_reasons_counted_and_sorted_as_strings() -> None:
    reasons = ["Insufficient cpu"] * 3 + ["node(s) had untolerated taint {a: b}"] * 2
    assert fit_error_message(5, reasons) == (
        "0/5 nodes are available: 2 node(s) had untolerated taint {a: b}, 3 Insufficient cpu."
    )


def test_sorting_is_lexicographic_like_go() -> None:
    reasons = ["Insufficient memory"] * 10 + ["Insufficient cpu"] * 2
    assert (
        fit_error_message(12, reasons)
        == "0/12 nodes are available: 10 Insufficient memory, 2 Insufficient cpu."
    )


def test_prefilter_message_replaces_reasons() -> None:
    assert fit_error_message(3, ["x"], prefilter_msg="pod has unbound immediate PersistentVolumeClaims") == (
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims."
    )


def test_postfilter_message_is_appended() -> None:
    msg = fit_error_message(
        5,
        ["Insufficient cpu"] * 5,
        postfilter_msg="preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod",
    )
    assert msg == (
        "0/5 nodes are available: 5 Insufficient cpu. preemption: 0/5 nodes are available: "
        "5 No preemption victims found for incoming pod."
    )


def test_scheduled_message() -> None:
    assert scheduled_message("default", "web", "node-1") == "Successfully assigned default/web to node-1"


@pytest.mark.parametrize(
    ("pct", "nodes", "expected"),
    [
        (None, 50, 50),
        (None, 99, 99),
        (None, 100, 100),
        (None, 1000, 420),
        (None, 5000, 500),
        (None, 6000, 300),
        (None, 15000, 750),
        (100, 5000, 5000),
        (30, 1000, 300),
        (1, 1000, 100),
    ],
)
def test_adaptive_number_of_nodes(pct: int | None, nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(pct, nodes) == expected
