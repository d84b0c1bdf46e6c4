"""Gang scheduling through the simulation engine with a Coscheduling profile."""

from __future__ import annotations

import pytest
from gang_helpers import bound, cosched_config, gang, pg_obj, pod_group, pod_obj, simulate

from builders import make_node, make_pod


def _message(sim: object, name: str) -> str:
    conds = (pod_obj(sim, name).get("status") or {}).get("conditions") or []  # type: ignore[arg-type]
    return str(next(c["message"] for c in conds if c["type"] == "PodScheduled"))


def test_gang_that_fits_is_bound_whole_and_group_runs() -> None:
    sim = simulate([(0, [make_node("n1").obj(), make_node("n2").obj()]), (1, gang("a", 4))], until=60)
    assert sorted(bound(sim)) == ["a-0", "a-1", "a-2", "a-3"]
    status = pg_obj(sim, "a")["status"]
    assert status["phase"] == "Running"
    assert status["running"] == 4
    assert status["scheduleStartTime"] == "2024-01-01T00:00:01Z"
    assert not sim.scheduler.waiting


def test_gang_too_big_is_rejected_by_post_filter_and_nothing_binds() -> None:
    sim = simulate([(0, [make_node("n1").obj()]), (1, gang("b", 6))], until=30)
    assert bound(sim) == {}
    msgs = {_message(sim, f"b-{i}") for i in range(6)}
    assert "optimistic rejection in PostFilter" in msgs
    assert any(m.endswith("is unschedulable even after PostFilter.") for m in msgs)
    assert pg_obj(sim, "b")["status"]["phase"] == "Scheduling"


def test_missing_member_fails_pre_filter_with_upstream_message() -> None:
    sim = simulate(
        [
            (0, [make_node("n1").obj()]),
            (
                1,
                [
                    pod_group("c", 3),
                    make_pod("c-0").pod_group("c").req(cpu="1").obj(),
                    make_pod("c-1").pod_group("c").req(cpu="1").obj(),
                ],
            ),
        ],
        until=10,
    )
    assert bound(sim) == {}
    assert _message(sim, "c-0").startswith(
        "0/1 nodes are available: pre-filter pod c-0 cannot find enough sibling pods, "
        "current pods number: 2, minMember of group: 3. preemption: "
    )
    assert pg_obj(sim, "c")["status"] == {"phase": "Pending"}


def test_min_resources_gap_message() -> None:
    objs = gang("d", 2, min_resources={"cpu": "10"})
    sim = simulate([(0, [make_node("n1").obj()]), (1, objs)], until=10)
    assert bound(sim) == {}
    assert _message(sim, "d-0").startswith("0/1 nodes are available: resource gap: map[cpu:6]. preemption: ")


@pytest.mark.parametrize(
    ("timeout", "args", "rejected_at"), [(5, None, 6.0), (None, {"permitWaitingTimeSeconds": 8}, 9.0)]
)
def test_timeout_rejects_whole_gang(
    timeout: int | None, args: dict[str, int] | None, rejected_at: float
) -> None:
    # the third member is gated: the first two wait at Permit until the timeout
    objs = [
        pod_group("e", 3, timeout=timeout),
        make_pod("e-0").pod_group("e").req(cpu="1").obj(),
        make_pod("e-1").pod_group("e").req(cpu="1").obj(),
        make_pod("e-2").pod_group("e").req(cpu="1").gate("wait").obj(),
    ]
    sim = simulate(
        [(0, [make_node("n1").obj()]), (1, objs)], until=rejected_at + 0.5, config=cosched_config(args)
    )
    assert bound(sim) == {}
    wait = timeout if timeout is not None else 8
    messages = {_message(sim, "e-0"), _message(sim, "e-1")}
    assert f"rejected due to timeout after waiting {wait}s at plugin Coscheduling" in messages
    assert messages <= {
        f"rejected due to timeout after waiting {wait}s at plugin Coscheduling",
        "rejection in Unreserve",
    }
    # nothing is left reserved but for members waiting at Permit again: the rejection's PodGroup status
    # update requeues them, and the idle scheduler retries them at once (SchedulerPopFromBackoffQ)
    waiting = [w.pod for w in sim.scheduler.waiting.values()]
    assert sim.scheduler.cache.table.req("cpu").sum() == sum(p.requests["cpu"] for p in waiting)


def test_group_finishes_after_members_succeed() -> None:
    sim = simulate([(0, [make_node("n1").obj()]), (1, gang("f", 2))], until=5)
    for name in ("f-0", "f-1"):
        sim.store.patch(
            ("", "Pod"), "default", name, {"status": {"phase": "Succeeded"}}, subresource="status"
        )
    sim.run_until_idle()
    sim.clock.run(until=sim.clock.now() + 1)
    sim.run_until_idle()
    assert pg_obj(sim, "f")["status"]["phase"] == "Finished"
    assert pg_obj(sim, "f")["status"]["succeeded"] == 2


def test_backoff_refuses_group_after_post_filter_rejection() -> None:
    sim = simulate(
        [(0, [make_node("n1").obj()]), (1, gang("g", 6))],
        until=3,
        config=cosched_config({"podGroupBackoffSeconds": 100}),
    )
    msgs = {_message(sim, f"g-{i}") for i in range(6)}
    assert any(m.startswith("0/1 nodes are available: podGroup default/g failed recently. ") for m in msgs)
