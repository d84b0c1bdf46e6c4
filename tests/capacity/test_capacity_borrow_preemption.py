"""A borrowing pod that PreFilter refuses because other quotas' pending pods want their unused min: the
quota-aware preemption keeps to the same rule, so it frees the room by preempting the pod's own
lower-priority pods instead of failing with "expected at least one victim" (an internal error, which sent
the pod into backoff: the quota contention benchmark's long waits below min)."""

from __future__ import annotations

from capacity_helpers import (
    GPU,
    POD,
    bound,
    preempted,
    priority_class,
    quota,
    quota_pod,
    scheduled_message,
    simulate,
)

from berth.sim.engine import Simulation
from builders import make_node, make_pod


def _run() -> Simulation:
    # n1: 10 GPUs. Quota a (min 4) runs four 1-GPU pods of priority 0: at its min. Quota b (min 6) runs 2
    # and has "w" (3 GPUs) pending: it fits b's unused min (4) but not the node, where a pod without a
    # quota holds 2 GPUs (10 - 4 - 2 - 2 = 2 free). a's "p" (1 GPU, priority 10) borrows: the node has room,
    # the total min has room without b's wanted 4 (4 + 2 + 1 <= 10), but not with it (11 > 10)
    return simulate(
        [
            (
                0.0,
                [
                    make_node("n1").capacity(cpu="32", memory="64Gi").gpu(10).obj(),
                    quota("a", {GPU: 4}, {GPU: 10}),
                    quota("b", {GPU: 6}, {GPU: 10}),
                    priority_class(10),
                ],
            ),
            (
                1.0,
                [
                    *(quota_pod("a", f"low{i}", 1).obj() for i in range(4)),
                    quota_pod("b", "v", 2).obj(),
                    make_pod("other").ns("free").req({GPU: "2"}).obj(),
                ],
            ),
            (2.0, [quota_pod("b", "w", 3).obj()]),
            (3.0, [make_pod("p").ns("a").req({GPU: "1"}).priority_class("p10").obj()]),
        ],
        until=3.5,
    )


def test_borrower_preempts_its_own_lower_priority_pod() -> None:
    sim = _run()
    assert preempted(sim) == 1
    p = sim.store.get(POD, "a", "p")
    assert p["status"]["nominatedNodeName"] == "n1"
    assert scheduled_message(sim, "a", "p") == (
        "0/1 nodes are available: Pod a/p is rejected in PreFilter because total ElasticQuota used is more "
        "than min."
    )
    terminating = [
        o["metadata"]["name"] for o in sim.store.list(POD, "a")[0] if o["metadata"].get("deletionTimestamp")
    ]
    assert len(terminating) == 1


def test_borrower_binds_once_its_victim_is_gone() -> None:
    sim = _run()
    sim.advance(60.0)  # the victim's 30 s of grace
    assert sim.store.get(POD, "a", "p")["spec"]["nodeName"] == "n1"
    assert len(bound(sim, "a")) == 4  # three of the low pods and p: a back at its min
