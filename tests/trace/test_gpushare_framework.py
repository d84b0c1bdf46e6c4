"""The GPU-sharing plugins against a NodeTable: devices read from the pods' gpu-index annotations, the batched
and per-node forms agreeing, Reserve skipping the pod itself, PreBind's annotation."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from berth.scheduler.framework import BINDING_ANNOTATIONS_KEY, CycleState, NodeTable, PodInfo
from berth.scheduler.plugins.gpushare.plugin import (
    SCORE_PLUGINS,
    GpuLedger,
    OpenGpuShare,
    _new_share,
    _score_factory,
)


def node(name: str, model: str, gpus: int) -> dict[str, Any]:
    alloc = {"cpu": "16", "memory": "64Gi", "pods": "110", "alibabacloud.com/gpu-count": str(gpus)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"alibabacloud.com/gpu-card-model": model}},
        "status": {"allocatable": alloc},
    }


def pod(name: str, milli: int, count: int, index: str = "") -> PodInfo:
    ann = {"alibabacloud.com/gpu-milli": str(milli), "alibabacloud.com/gpu-count": str(count)}
    if index:
        ann["alibabacloud.com/gpu-index"] = index
    return PodInfo(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "uid": f"uid-{name}", "annotations": ann},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        }
    )


class FakeHandle:
    """Just what the factories read: a seeded rng and the node table."""

    def __init__(self, table: NodeTable) -> None:
        self.rng = random.Random(1)
        self.table = table

    def node_table(self) -> NodeTable:
        return self.table


def cluster() -> NodeTable:
    t = NodeTable()
    for n in (node("n0", "T4", 2), node("n1", "P100", 1), node("n2", "T4", 4)):
        t.set_node(n)
    t.add_pod(0, pod("a", 300, 1, "1"))
    t.add_pod(2, pod("b", 1000, 2, "0,3"))
    t.add_pod(2, pod("c", 500, 1, "1"))
    return t


def test_ledger_reads_the_gpu_index_annotations() -> None:
    t = cluster()
    ledger = GpuLedger()
    assert [ledger.row(t, i)[0][:4].tolist() for i in range(3)] == [
        [1000, 700, 0, 0],
        [1000, 0, 0, 0],
        [0, 500, 1000, 0],
    ]
    assert ledger.row(t, 2)[1] == {"2-gpu": 1, "share": 1}
    assert ledger.row(t, 2, exclude="uid-c")[0][:4].tolist() == [0, 1000, 1000, 0]


@pytest.mark.parametrize(
    ("milli", "count", "passed"),
    [
        (600, 1, [True, True, True]),
        (800, 1, [True, True, True]),
        (1000, 2, [False, False, False]),
        (1000, 1, [True, True, True]),
    ],
)
def test_filter_batched_and_per_node_agree(milli: int, count: int, passed: list[bool]) -> None:
    t = cluster()
    share = _new_share({}, FakeHandle(t))  # type: ignore[arg-type]
    p = pod("x", milli, count)
    v = share.filter_nodes(CycleState(), p, t)
    assert v.passed.tolist() == passed
    assert [share.filter(CycleState(), p, t.info(i)).is_success() for i in range(3)] == passed


@pytest.mark.parametrize("name", SCORE_PLUGINS)
def test_scores_batched_and_per_node_agree(name: str) -> None:
    t = cluster()
    p = pod("x", 400, 1)
    rows = np.arange(3, dtype=np.int64)
    batched = _score_factory(name)({}, FakeHandle(t)).score_nodes(CycleState(), p, t, rows)  # type: ignore[arg-type]
    single = _score_factory(name)({}, FakeHandle(t))  # type: ignore[arg-type]
    per_node = [single.score(CycleState(), p, t.info(i)) for i in range(3)]
    if name == "RandomScore":
        assert sorted(batched.tolist()) == [0, 0, 100]
    else:
        assert per_node == batched.tolist()


def test_reserve_skips_the_assumed_pod_and_prebind_writes_the_index() -> None:
    t = cluster()
    share = _new_share({}, FakeHandle(t))  # type: ignore[arg-type]
    assert isinstance(share, OpenGpuShare)
    p = pod("x", 400, 1)
    t.add_pod(2, p)  # assumed before Reserve, as kube does
    state = CycleState()
    assert share.reserve(state, p, "n2").is_success()
    assert share.pre_bind(state, p, "n2").is_success()
    # n2 without x: [0, 500, 1000, 0]: best fit for 400 is GPU 1
    assert state.get(BINDING_ANNOTATIONS_KEY) == {"alibabacloud.com/gpu-index": "1"}
    share.unreserve(state, p, "n2")
    assert "alibabacloud.com/gpu-index" not in p.extra
