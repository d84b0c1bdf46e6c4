"""The seed's worked example: 10 GPUs, QuotaA (min 4, max 6) and QuotaB (min 6, max 8)."""

from __future__ import annotations

from capacity_helpers import (
    EQ,
    GPU,
    bound,
    gpu_pods,
    preempted,
    priority_class,
    quota,
    scheduled_message,
    simulate,
)

from berth.sim.engine import Simulation
from builders import make_node, make_pod


def _run(b_pods: int) -> Simulation:
    timeline = [
        (
            0.0,
            [
                make_node("n1").capacity(cpu="32", memory="64Gi").gpu(5).obj(),
                make_node("n2").capacity(cpu="32", memory="64Gi").gpu(5).obj(),
            ],
        ),
        (0.0, [quota("quota-a", {GPU: 4}, {GPU: 6}), quota("quota-b", {GPU: 6}, {GPU: 8})]),
        (1.0, gpu_pods("quota-a", "a", 4)),  # A fills its min
        (10.0, gpu_pods("quota-a", "x", 3)),  # A borrows up to its max; the third is over max
    ]
    if b_pods:
        timeline.append((20.0, gpu_pods("quota-b", "b", b_pods)))
    return simulate(timeline, until=400.0)


def _used(sim: Simulation, ns: str) -> dict[str, str]:
    return dict(sim.store.get(EQ, ns, ns)["status"]["used"])


def test_a_borrows_up_to_its_max_while_b_is_idle() -> None:
    sim = _run(0)
    assert bound(sim, "quota-a") == ["a0", "a1", "a2", "a3", "x0", "x1"]
    assert scheduled_message(sim, "quota-a", "x2") == (
        "0/2 nodes are available: Pod quota-a/x2 is rejected in PreFilter because ElasticQuota quota-a is "
        "more than Max. 0/2 nodes are available: 1 No victims found on node n1 for preemptor pod x2, "
        "1 No victims found on node n2 for preemptor pod x2."
    )
    assert _used(sim, "quota-a") == {GPU: "6"}
    assert _used(sim, "quota-b") == {GPU: "0"}


def test_b_reclaims_its_min_by_preempting_a_borrowed_pods() -> None:
    sim = _run(6)
    assert bound(sim, "quota-a") == ["a0", "a1", "a2", "a3"]  # the borrowed x0, x1 were preempted
    assert bound(sim, "quota-b") == ["b0", "b1", "b2", "b3", "b4", "b5"]
    assert preempted(sim) == 2
    assert (_used(sim, "quota-a"), _used(sim, "quota-b")) == ({GPU: "4"}, {GPU: "6"})


def test_b_within_free_capacity_preempts_nothing() -> None:
    sim = _run(4)
    assert len(bound(sim, "quota-a")) == 6
    assert bound(sim, "quota-b") == ["b0", "b1", "b2", "b3"]
    assert preempted(sim) == 0


def test_quota_at_max_preempts_its_own_lower_priority_pod() -> None:
    timeline = [
        (
            0.0,
            [
                make_node("n1").capacity(cpu="32", memory="64Gi").gpu(5).obj(),
                make_node("n2").capacity(cpu="32", memory="64Gi").gpu(5).obj(),
                priority_class(100),
            ],
        ),
        (0.0, [quota("quota-a", {GPU: 4}, {GPU: 6}), quota("quota-b", {GPU: 6}, {GPU: 8})]),
        (1.0, gpu_pods("quota-a", "a", 6)),
        (10.0, [make_pod("hi").ns("quota-a").req({GPU: "1"}).priority_class("p100").obj()]),
    ]
    sim = simulate(timeline, until=300.0)
    assert bound(sim, "quota-a") == ["a0", "a1", "a2", "a3", "a4", "hi"]  # a5, the newest, was preempted
    assert preempted(sim) == 1


def test_within_min_reclaims_even_from_higher_priority_borrowers() -> None:
    timeline = [
        (
            0.0,
            [
                make_node("n1").capacity(cpu="32", memory="64Gi").gpu(5).obj(),
                make_node("n2").capacity(cpu="32", memory="64Gi").gpu(5).obj(),
                priority_class(1000),
            ],
        ),
        (0.0, [quota("quota-a", {GPU: 4}, {GPU: 6}), quota("quota-b", {GPU: 6}, {GPU: 8})]),
        (
            1.0,
            [make_pod(f"a{i}").ns("quota-a").req({GPU: "1"}).priority_class("p1000").obj() for i in range(6)],
        ),
        (10.0, gpu_pods("quota-b", "b", 6)),
    ]
    sim = simulate(timeline, until=300.0)
    assert len(bound(sim, "quota-a")) == 4
    assert bound(sim, "quota-b") == ["b0", "b1", "b2", "b3", "b4", "b5"]
    assert preempted(sim) == 2
