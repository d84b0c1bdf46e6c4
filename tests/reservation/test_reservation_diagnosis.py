"""The Reservation PostFilter's reasons, from per-node diagnosis counts: Koordinator's TestPostFilter cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from berth.scheduler.framework.plugin import NodeStatusMap, RowStatuses
from berth.scheduler.framework.status import Code, Status
from berth.scheduler.plugins.reservation.diagnosis import Diagnosis, node_reason_counts, post_filter_reasons

NODES = ["test-node-0", "test-node-1"]
INDEX = {n: i for i, n in enumerate(NODES)}
OTHER = Status(Code.UNSCHEDULABLE, ("node(s) didn't match the requested node name",))
GPU = Status(
    Code.UNSCHEDULABLE,
    (
        "Reservation(s) Insufficient nvidia.com/gpu",
        "Reservation(s) Insufficient koordinator.sh/gpu-mem-ratio",
    ),
)
CPU_MEMORY = Status(Code.UNSCHEDULABLE, ("Reservation(s) Insufficient cpu", "Insufficient memory"))
EMPTY = Status(Code.UNSCHEDULABLE)


def diagnosis(*nodes: dict[str, Any]) -> Diagnosis:
    """Counts per node row, named as Koordinator's nodeDiagnosisState fields."""
    d = Diagnosis.empty(len(NODES))
    fields = {
        "ownerMatched": d.owner_matched,
        "nameMatched": d.name_matched,
        "nameUnmatched": d.name_unmatched,
        "isUnschedulableUnmatched": d.unschedulable,
        "affinityUnmatched": d.affinity_unmatched,
        "notExactMatched": d.not_exact_matched,
        "taintsUnmatched": d.taints_unmatched,
    }
    for row, counts in enumerate(nodes):
        for name, value in counts.items():
            if name == "taintsUnmatchedReasons":
                for key, c in value.items():
                    d.taint_reasons[key] = d.taint_reasons.get(key, 0) + c
            else:
                fields[name][row] = value
    return d


CASES: list[tuple[str, Diagnosis, bool, tuple[Status, Status], list[str]]] = [
    ("no-reservation", diagnosis(), False, (EMPTY, EMPTY), []),
    (
        "affinity-shows-owner-total",
        diagnosis(),
        True,
        (EMPTY, EMPTY),
        ["0 Reservation(s) matched owner total"],
    ),
    (
        "unschedulable",
        diagnosis(
            {"ownerMatched": 3, "isUnschedulableUnmatched": 3},
            {"ownerMatched": 1, "isUnschedulableUnmatched": 1},
        ),
        False,
        (EMPTY, EMPTY),
        ["4 Reservation(s) is unschedulable", "4 Reservation(s) matched owner total"],
    ),
    (
        "name-unmatched",
        diagnosis({"ownerMatched": 3, "nameUnmatched": 3}, {"ownerMatched": 1, "nameUnmatched": 1}),
        False,
        (EMPTY, EMPTY),
        [
            "4 Reservation(s) didn't match the requested reservation name",
            "4 Reservation(s) matched owner total",
        ],
    ),
    (
        "taints",
        diagnosis(
            {
                "ownerMatched": 3,
                "taintsUnmatched": 3,
                "taintsUnmatchedReasons": {"{node.kubernetes.io/unreachable: }": 3},
            },
            {
                "ownerMatched": 1,
                "taintsUnmatched": 1,
                "taintsUnmatchedReasons": {"{node.kubernetes.io/unreachable: }": 1},
            },
        ),
        False,
        (EMPTY, EMPTY),
        [
            "4 Reservation(s) had untolerated taint {node.kubernetes.io/unreachable: }",
            "4 Reservation(s) matched owner total",
        ],
    ),
    (
        "unschedulable-and-exact",
        diagnosis(
            {"ownerMatched": 3, "notExactMatched": 3},
            {"ownerMatched": 2, "isUnschedulableUnmatched": 1, "notExactMatched": 1},
        ),
        False,
        (EMPTY, EMPTY),
        [
            "1 Reservation(s) is unschedulable",
            "4 Reservation(s) is not exact matched",
            "5 Reservation(s) matched owner total",
        ],
    ),
    (
        "affinity-and-unschedulable",
        diagnosis(
            {"ownerMatched": 3, "affinityUnmatched": 3},
            {"ownerMatched": 2, "isUnschedulableUnmatched": 1, "affinityUnmatched": 1},
        ),
        False,
        (EMPTY, EMPTY),
        [
            "4 Reservation(s) didn't match affinity rules",
            "1 Reservation(s) is unschedulable",
            "5 Reservation(s) matched owner total",
        ],
    ),
    (
        "name-matched-and-unmatched",
        diagnosis(
            {"ownerMatched": 3, "nameMatched": 1, "nameUnmatched": 2, "notExactMatched": 1},
            {"ownerMatched": 2, "nameUnmatched": 2},
        ),
        False,
        (EMPTY, EMPTY),
        [
            "1 Reservation(s) exactly matches the requested reservation name",
            "4 Reservation(s) didn't match the requested reservation name",
            "1 Reservation(s) is not exact matched",
            "5 Reservation(s) matched owner total",
        ],
    ),
    (
        "other-plugins-on-the-node",
        diagnosis(
            {"ownerMatched": 3, "affinityUnmatched": 3}, {"ownerMatched": 3, "isUnschedulableUnmatched": 1}
        ),
        False,
        (EMPTY, OTHER),
        [
            "3 Reservation(s) didn't match affinity rules",
            "1 Reservation(s) is unschedulable",
            "2 Reservation(s) for node reason that node(s) didn't match the requested node name",
            "6 Reservation(s) matched owner total",
        ],
    ),
    (
        "reservation-level-reasons-not-counted",
        diagnosis(
            {"ownerMatched": 3, "affinityUnmatched": 1}, {"ownerMatched": 3, "isUnschedulableUnmatched": 1}
        ),
        False,
        (GPU, CPU_MEMORY),
        [
            "1 Reservation(s) didn't match affinity rules",
            "1 Reservation(s) is unschedulable",
            "1 Reservation(s) for node reason that Insufficient memory",
            "6 Reservation(s) matched owner total",
        ],
    ),
]


@pytest.mark.parametrize("by_name", [True, False], ids=["statuses-by-name", "statuses-by-row"])
@pytest.mark.parametrize(
    ("diag", "has_affinity", "statuses", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_post_filter_reasons(
    diag: Diagnosis, has_affinity: bool, statuses: tuple[Status, Status], expected: list[str], by_name: bool
) -> None:
    """Both ways a failed attempt lists its node statuses give Koordinator's reasons."""
    if by_name:
        status_map = NodeStatusMap(statuses=dict(zip(NODES, statuses, strict=True)))
    else:
        codes = np.asarray([0, 1], dtype=np.int64)
        status_map = NodeStatusMap(rows=RowStatuses(INDEX, codes, list(statuses)))
    by_node = node_reason_counts(diag.matched, NODES, status_map, INDEX)
    assert post_filter_reasons(diag, has_affinity, by_node) == expected
