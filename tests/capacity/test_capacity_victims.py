"""Quota-aware victim selection on one node (select_quota_victims / potential_victims)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from capacity_helpers import GPU, Obj, quota, quota_pod

from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import Code, Status
from berth.scheduler.plugins.capacityscheduling import (
    STATE_KEY,
    CapacityScheduling,
    PreFilterState,
    select_quota_victims,
)
from berth.scheduler.plugins.defaultpreemption import Budget, StartTimes

NODE_GPUS = 10
QA = quota("a", {GPU: 4}, {GPU: 6})
QB = quota("b", {GPU: 6}, {GPU: 8})


def run_pod(
    ns: str, name: str, gpu: int, prio: int = 0, start: int = 0, labels: dict[str, str] | None = None
) -> Obj:
    """A running pod on n1 started at second ``start`` of 2026-01-01."""
    started = f"2026-01-01T00:00:{start:02d}Z"
    return (
        quota_pod(ns, name, gpu, prio=prio)
        .node("n1")
        .label(labels)
        .phase("Running")
        .start_time(started)
        .obj()
    )


def select(
    quotas: Sequence[Obj],
    node_pods: Sequence[Obj],
    preemptor: Obj,
    budgets: Sequence[Budget] = (),
    elsewhere: Sequence[Obj] = (),
    *,
    pre_filter: bool = False,
) -> tuple[list[str] | None, int, Status]:
    """The victims on n1 (``NODE_GPUS`` GPUs) for ``preemptor``; its PreFilterState is the bare request, or
    with ``pre_filter`` the one the plugin's PreFilter writes."""
    plugin = CapacityScheduling(handle=None)  # type: ignore[arg-type]
    for o in [*quotas, *node_pods, *elsewhere]:
        plugin.on_object_event("ADDED", o)
    infos = [PodInfo(o) for o in node_pods]
    me = PodInfo(preemptor)

    def fits_without(removed: Sequence[PodInfo]) -> Status:
        gone = {p.uid for p in removed}
        used = sum(p.requests.get(GPU, 0) for p in infos if p.uid not in gone)
        if used + me.requests.get(GPU, 0) <= NODE_GPUS:
            return Status()
        return Status(Code.UNSCHEDULABLE, ("Insufficient nvidia.com/gpu",))

    req = dict(me.requests)
    pfs = PreFilterState(req, req, req)
    if pre_filter:
        state = CycleState()
        plugin.pre_filter(state, me, None)  # type: ignore[arg-type]
        pfs = state.read(STATE_KEY)
    victims, s = select_quota_victims(
        me, "n1", infos, fits_without, plugin.book, pfs, budgets, StartTimes(lambda: 1.8e9)
    )
    if victims is None:
        return None, 0, s
    return [v.name for v in victims.pods], victims.num_pdb_violations, s


FULL_A_BORROWING = [
    run_pod("a", "a1", 2, start=1),
    run_pod("a", "a2", 2, start=2),
    run_pod("a", "a3", 1, start=3),
    run_pod("a", "a4", 1, start=4),
    run_pod("b", "b1", 4, start=5),
]

CASES: list[tuple[str, list[Obj], list[Obj], Obj, list[str] | None, str]] = [
    (
        "within min: reclaims from the borrowing quota (most important reprieved first)",
        [QA, QB],
        [*FULL_A_BORROWING[:4], run_pod("b", "b1", 4, start=5)],
        quota_pod("b", "p", 2).obj(),
        ["a3", "a4"],
        "",
    ),
    (
        "within min: higher-priority borrowed pods are victims too",
        [QA, QB],
        [
            run_pod("a", "a1", 3, prio=1000, start=1),
            run_pod("a", "a2", 3, prio=1000, start=2),
            run_pod("b", "b1", 4),
        ],
        quota_pod("b", "p", 2).obj(),
        ["a2"],
        "",
    ),
    (
        "within min: the preemptor's own namespace is never a victim",
        [QA, quota("b", {GPU: 10}, {GPU: 10})],
        [run_pod("a", "a1", 3), run_pod("b", "b1", 7)],
        quota_pod("b", "p", 2, prio=100).obj(),
        None,
        "No victims found on node n1 for preemptor pod p",
    ),
    (
        "over min: only lower-priority pods of its own namespace",
        [QA, QB],
        [
            run_pod("a", "a1", 2, prio=10),
            run_pod("a", "a2", 2, prio=0, start=3),
            run_pod("b", "b1", 6, prio=0),
        ],
        quota_pod("a", "p", 2, prio=5).obj(),
        ["a2"],
        "",
    ),
    (
        "over min: equal-priority own pods are not victims",
        [QA, QB],
        [run_pod("a", "a1", 4, prio=5), run_pod("b", "b1", 6, prio=0)],
        quota_pod("a", "p", 2, prio=5).obj(),
        None,
        "No victims found on node n1 for preemptor pod p",
    ),
    (
        "quota'd preemptor never takes pods of unquota'd namespaces",
        [QA, QB],
        [run_pod("free", "f1", 10, prio=0)],
        quota_pod("b", "p", 2, prio=100).obj(),
        None,
        "No victims found on node n1 for preemptor pod p",
    ),
    (
        "unquota'd preemptor takes only lower-priority unquota'd pods",
        [QA, QB],
        [run_pod("free", "f1", 4, prio=0), run_pod("a", "a1", 6, prio=0)],
        quota_pod("free", "p", 2, prio=100).obj(),
        ["f1"],
        "",
    ),
    (
        "quota still over max with every victim gone",
        [quota("a", {GPU: 2}, {GPU: 3}), QB],
        [run_pod("a", "a1", 3, prio=0)],
        quota_pod("a", "p", 8, prio=100).obj(),
        None,
        "global quota max exceeded",
    ),
    (
        "filters still fail with every victim gone",
        [QA, QB],
        [run_pod("a", "a1", 1, prio=0), run_pod("free", "f1", 9)],
        quota_pod("a", "p", 5, prio=100).obj(),
        None,
        "Insufficient nvidia.com/gpu",
    ),
    (
        "a pod that fits back is still a victim when giving it back breaks the total min",
        [quota("a", {GPU: 1}, {GPU: 6}), quota("b", {GPU: 4}, {GPU: 8})],
        [run_pod("a", "a1", 2, start=1), run_pod("a", "a2", 2, start=2)],
        quota_pod("b", "p", 2).obj(),
        ["a2"],
        "",
    ),
]


@pytest.mark.parametrize(
    ("quotas", "node_pods", "preemptor", "want", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_select_victims(
    quotas: list[Obj], node_pods: list[Obj], preemptor: Obj, want: list[str] | None, message: str
) -> None:
    names, _, s = select(quotas, node_pods, preemptor)
    assert (names, s.message) == (want, message)


def test_pdb_violating_pods_are_reprieved_first() -> None:
    budget = Budget(
        {
            "metadata": {"name": "keep", "namespace": "a"},
            "spec": {"selector": {"matchLabels": {"app": "keep"}}},
            "status": {"disruptionsAllowed": 0},
        }
    )
    node_pods = [
        run_pod("a", "a1", 3, start=1, labels={"app": "keep"}),
        run_pod("a", "a2", 3, start=2),
        run_pod("b", "b1", 4, start=3),
    ]
    names, violations, _ = select([QA, QB], node_pods, quota_pod("b", "p", 2).obj(), [budget])
    assert (names, violations) == (["a2"], 0)


def _terminating(obj: Obj) -> Obj:
    return {**obj, "metadata": {**obj["metadata"], "deletionTimestamp": "2026-01-01T00:01:00Z"}}


def test_terminating_pods_are_leaving_not_victims() -> None:
    # A (min 4) runs 7 GPUs, 2 of them terminating: without those it is over min by 1, so one more of its
    # pods goes; the terminating ones are never chosen again and their room counts as free
    pods = [
        run_pod("a", "a1", 2, start=1),
        run_pod("a", "a2", 2, start=2),
        run_pod("a", "a3", 1, start=3),
        _terminating(run_pod("a", "gone", 2, start=4)),
        run_pod("b", "b1", 3, start=5),
    ]
    assert select([QA, QB], pods, quota_pod("b", "p", 3).obj()) == (
        ["a3"],
        0,
        Status(),
    )


def test_fits_once_terminating_pods_leave_means_no_victims() -> None:
    pods = [
        run_pod("a", "a1", 4, start=1),
        _terminating(run_pod("a", "gone", 2, start=2)),
        run_pod("b", "b1", 4),
    ]
    victims, _, s = select([QA, QB], pods, quota_pod("b", "p", 2).obj())
    assert victims is None
    assert (s.code, s.message) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "No victims found on node n1 for preemptor pod p",
    )


def test_fits_once_terminating_pods_elsewhere_leave_means_no_victims() -> None:
    # the node has room; the quotas will too once A's terminating pod on n2 is gone: nothing to preempt
    gone = _terminating(run_pod("a", "gone", 2, start=4))
    gone["spec"]["nodeName"] = "n2"
    pods = [run_pod("a", "a1", 4, start=1), run_pod("a", "a2", 1, start=2), run_pod("b", "b1", 3)]
    victims, _, s = select([QA, QB], pods, quota_pod("b", "p", 2).obj(), elsewhere=[gone])
    assert victims is None
    assert (s.code, s.message) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "No victims found on node n1 for preemptor pod p",
    )


def test_a_borrower_keeps_the_min_others_want_free() -> None:
    # a is at its min (4) and borrows with p; b (min 6) uses 2 and has "w" (3) pending, which fits its unused
    # min: PreFilter refuses p (2 + 4 + 1 + b's wanted 4 > 10) although n1 has room. Reprieving from the most
    # important (the earliest started) keeps a1, a2, a3 (2 + 3 + 1 + 4 = 10); a4 must go. Without the rule
    # in the reprieve every pod came back and the node had "no victims" (an internal error)
    node_pods = [
        run_pod("a", "a1", 1, start=1),
        run_pod("a", "a2", 1, start=2),
        run_pod("a", "a3", 1, start=3),
        run_pod("a", "a4", 1, start=4),
        run_pod("b", "b1", 2, start=5),
    ]
    preemptor = quota_pod("a", "p", 1, prio=10).obj()
    pending = [quota_pod("b", "w", 3).obj()]
    assert select([QA, QB], node_pods, preemptor, elsewhere=pending, pre_filter=True) == (["a4"], 0, Status())
    # without b's pending pod nobody wants b's min: p fits as it is, and the node has no victim to offer
    _, _, s = select([QA, QB], node_pods, preemptor, pre_filter=True)
    assert (s.code, s.message) == (Code.ERROR, 'expected at least one victim pod on node "n1"')
