"""CapacityScheduling PreFilter / Reserve / Unreserve / events: exact outcomes per quota arithmetic."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from capacity_helpers import GPU, Obj, quota, quota_pod

from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import Code
from berth.scheduler.plugins.capacityscheduling import STATE_KEY, CapacityScheduling, PreFilterState

MAX_A = "Pod a/p is rejected in PreFilter because ElasticQuota a is more than Max"
MAX_B = "Pod b/p is rejected in PreFilter because ElasticQuota b is more than Max"
MIN_A = "Pod a/p is rejected in PreFilter because total ElasticQuota used is more than min"
MIN_B = "Pod b/p is rejected in PreFilter because total ElasticQuota used is more than min"

QA = quota("a", {GPU: 4}, {GPU: 6})
QB = quota("b", {GPU: 6}, {GPU: 8})


def running(ns: str, name: str, gpu: int, prio: int = 0) -> Obj:
    """A bound, running pod using ``gpu`` GPUs."""
    return quota_pod(ns, name, gpu, prio=prio).node("n1").phase("Running").obj()


def nominated(ns: str, name: str, gpu: int, prio: int) -> Obj:
    """An unbound pod nominated to n1."""
    return quota_pod(ns, name, gpu, prio=prio).nominated("n1").obj()


def plugin_with(objs: Sequence[Obj]) -> CapacityScheduling:
    """A plugin fed ADDED events for ``objs`` in order."""
    p = CapacityScheduling(handle=None)  # type: ignore[arg-type]
    for o in objs:
        p.on_object_event("ADDED", o)
    return p


def run(objs: Sequence[Obj], preemptor: Obj) -> tuple[Code, str]:
    p = plugin_with(objs)
    _, s = p.pre_filter(CycleState(), PodInfo(preemptor), None)  # type: ignore[arg-type]
    return s.code, s.message


OK = (Code.SUCCESS, "")

CASES: list[tuple[str, list[Obj], Obj, tuple[Code, str]]] = [
    (
        "no quota in namespace",
        [QA, running("a", "u", 6)],
        quota_pod("c", "p", 9).obj(),
        OK,
    ),
    (
        "within max and min",
        [QA, QB, running("a", "u", 4)],
        quota_pod("a", "p", 2).obj(),
        OK,
    ),
    (
        "exactly max",
        [QA, QB, running("a", "u", 5)],
        quota_pod("a", "p", 1).obj(),
        OK,
    ),
    (
        "over max",
        [QA, QB, running("a", "u", 5)],
        quota_pod("a", "p", 2).obj(),
        (Code.UNSCHEDULABLE, MAX_A),
    ),
    (
        "nominated same namespace, higher priority, counts toward max",
        [QA, QB, running("a", "u", 4), nominated("a", "n", 2, 10)],
        quota_pod("a", "p", 1, prio=5).obj(),
        (Code.UNSCHEDULABLE, MAX_A),
    ),
    (
        "nominated same namespace, equal priority, counts toward max",
        [QA, QB, running("a", "u", 4), nominated("a", "n", 2, 5)],
        quota_pod("a", "p", 1, prio=5).obj(),
        (Code.UNSCHEDULABLE, MAX_A),
    ),
    (
        "nominated same namespace, lower priority, ignored",
        [QA, QB, running("a", "u", 4), nominated("a", "n", 2, 1)],
        quota_pod("a", "p", 1, prio=5).obj(),
        OK,
    ),
    (
        "total used over total min",
        [QA, QB, running("a", "u", 6), running("b", "v", 3)],
        quota_pod("b", "p", 2).obj(),
        (Code.UNSCHEDULABLE, MIN_B),
    ),
    (
        "total used exactly total min",
        [QA, QB, running("a", "u", 6), running("b", "v", 3)],
        quota_pod("b", "p", 1).obj(),
        OK,
    ),
    (
        "nominated pod of another quota within its min counts toward total min",
        [QA, QB, running("a", "u", 4), running("b", "v", 5), nominated("a", "n", 1, 0)],
        quota_pod("b", "p", 1).obj(),
        (Code.UNSCHEDULABLE, MIN_B),
    ),
    (
        "nominated pod of another quota over its min is not counted",
        [QA, QB, running("a", "u", 5), running("b", "v", 4), nominated("a", "n", 1, 0)],
        quota_pod("b", "p", 1).obj(),
        OK,
    ),
    (
        "resource named in no quota is not governed",
        [QA, QB, running("a", "u", 6), running("b", "v", 4)],
        quota_pod("a", "p").req(cpu="64", memory="1Ti").obj(),
        OK,
    ),
    (
        "max listing some resources leaves the others unbounded",
        [quota("a", {"cpu": "10", GPU: 4}, {GPU: 6}), quota("b", {"cpu": "10"}, None)],
        quota_pod("a", "p").req(cpu="20").obj(),
        OK,
    ),
    (
        "a resource only in max still counts against the (zero) total min",
        [quota("a", {"cpu": "10"}, {"cpu": "10", "memory": "1Gi"})],
        quota_pod("a", "p").req(memory="1Mi").obj(),
        (Code.UNSCHEDULABLE, MIN_A),
    ),
    (
        "cpu milli arithmetic: exactly max",
        [
            quota("a", {"cpu": "2"}, {"cpu": "1500m"}),
            quota_pod("a", "q").req(cpu="1").node("n1").obj(),
        ],
        quota_pod("a", "p").req(cpu="500m").obj(),
        OK,
    ),
    (
        "cpu milli arithmetic: one milli over max",
        [
            quota("a", {"cpu": "2"}, {"cpu": "1500m"}),
            quota_pod("a", "q").req(cpu="1").node("n1").obj(),
        ],
        quota_pod("a", "p").req(cpu="501m").obj(),
        (Code.UNSCHEDULABLE, MAX_A),
    ),
    (
        "several resources: one over max is enough",
        [
            quota("a", {"cpu": "8", GPU: 4}, {"cpu": "8", GPU: 4}),
            quota_pod("a", "q").req({"cpu": "1", GPU: "4"}).node("n1").obj(),
        ],
        quota_pod("a", "p").req({"cpu": "1", GPU: "1"}).obj(),
        (Code.UNSCHEDULABLE, MAX_A),
    ),
    (
        "quota under the other API group",
        [quota("a", {GPU: 1}, {GPU: 1}, group="scheduling.sigs.k8s.io")],
        quota_pod("a", "p", 2).obj(),
        (Code.UNSCHEDULABLE, MAX_A),
    ),
    (
        "borrowing is refused while another quota's pending pod wants its unused min",
        [
            QA,
            QB,
            running("a", "u", 4),
            running("b", "v", 2),
            quota_pod("b", "w", 3).obj(),
        ],
        quota_pod("a", "p", 1).obj(),
        (Code.UNSCHEDULABLE, MIN_A),
    ),
    (
        "borrowing is allowed when the other quota's pending pods cannot fit in its unused min",
        [
            QA,
            QB,
            running("a", "u", 4),
            running("b", "v", 2),
            quota_pod("b", "w", 5).obj(),
        ],
        quota_pod("a", "p", 1).obj(),
        OK,
    ),
    (
        "borrowing is allowed from a quota without pending pods",
        [QA, QB, running("a", "u", 4), running("b", "v", 2)],
        quota_pod("a", "p", 2).obj(),
        OK,
    ),
    (
        "a wanting quota holds its whole unused min, not only its pending pods' share",
        [
            QA,
            QB,
            running("a", "u", 4),
            running("b", "v", 2),
            quota_pod("b", "w", 1).obj(),
        ],
        quota_pod("a", "p", 1).obj(),
        (Code.UNSCHEDULABLE, MIN_A),
    ),
    (
        "a pod within its own min is not held back by others' pending pods",
        [
            QA,
            QB,
            running("a", "u", 2),
            running("b", "v", 2),
            quota_pod("b", "w", 3).obj(),
        ],
        quota_pod("a", "p", 2).obj(),
        OK,
    ),
]


@pytest.mark.parametrize(("objs", "preemptor", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_prefilter(objs: list[Obj], preemptor: Obj, want: tuple[Code, str]) -> None:
    assert run(objs, preemptor) == want


def test_prefilter_state_sums_nominated_requests() -> None:
    p = plugin_with([QA, QB, running("a", "u", 1), nominated("a", "n", 2, 9), nominated("b", "m", 1, 0)])
    state = CycleState()
    p.pre_filter(state, quota_pod("a", "p", 1, prio=5).info(), None)  # type: ignore[arg-type]
    assert state.read(STATE_KEY) == PreFilterState({GPU: 1}, {GPU: 3}, {GPU: 4})


def test_prefilter_state_of_a_borrower_guards_the_min_others_want() -> None:
    # a at its min borrows with p; b (min 6, used 2) has a pending pod of 3 that fits its unused 4: the
    # aggregate check (and the preemption that follows it) leaves those 4 to b: 2 + 4 + 1 + 4 = 11 > 10
    p = plugin_with([QA, QB, running("a", "u", 4), running("b", "v", 2), quota_pod("b", "w", 3).obj()])
    state = CycleState()
    _, s = p.pre_filter(state, quota_pod("a", "p", 1).info(), None)  # type: ignore[arg-type]
    assert (s.code, s.message) == (Code.UNSCHEDULABLE, MIN_A)
    assert state.read(STATE_KEY) == PreFilterState({GPU: 1}, {GPU: 1}, {GPU: 1}, {GPU: 5})


def test_prefilter_state_within_min_has_no_guard() -> None:
    p = plugin_with([QA, QB, running("a", "u", 2), running("b", "v", 2), quota_pod("b", "w", 3).obj()])
    state = CycleState()
    p.pre_filter(state, quota_pod("a", "p", 2).info(), None)  # type: ignore[arg-type]
    assert state.read(STATE_KEY) == PreFilterState({GPU: 2}, {GPU: 2}, {GPU: 2}, None)


def _used(p: CapacityScheduling, ns: str) -> dict[str, int]:
    return {k: v for k, v in p.book.infos[ns].used.items() if v}


@pytest.mark.parametrize(
    ("events", "want"),
    [
        ([("ADDED", running("a", "u", 2))], {GPU: 2}),
        ([("ADDED", running("a", "u", 2)), ("MODIFIED", running("a", "u", 2))], {GPU: 2}),
        ([("ADDED", running("a", "u", 2)), ("DELETED", running("a", "u", 2))], {}),
        (
            [
                ("ADDED", running("a", "u", 2)),
                ("MODIFIED", {**running("a", "u", 2), "status": {"phase": "Succeeded"}}),
            ],
            {},
        ),
        (
            [("ADDED", quota_pod("a", "w", 3).obj())],
            {},
        ),  # unbound pods are not counted
        ([("ADDED", running("b", "v", 2))], {}),
    ],
)
def test_pod_events_track_used(events: list[tuple[str, Obj]], want: dict[str, int]) -> None:
    p = plugin_with([QA, QB])
    for t, o in events:
        p.on_object_event(t, o)
    assert _used(p, "a") == want


def test_reserve_unreserve_and_binding() -> None:
    p = plugin_with([QA, QB])
    w = quota_pod("a", "w", 3).obj()
    p.reserve(CycleState(), PodInfo(w), "n1")
    p.reserve(CycleState(), PodInfo(w), "n1")  # counted once
    assert _used(p, "a") == {GPU: 3}
    assert p.book.total_used == {GPU: 3}
    p.unreserve(CycleState(), PodInfo(w), "n1")
    assert _used(p, "a") == {}
    p.reserve(CycleState(), PodInfo(w), "n1")
    p.on_object_event("MODIFIED", {**w, "spec": {**w["spec"], "nodeName": "n1"}})
    assert _used(p, "a") == {GPU: 3}


def test_quota_added_after_pods_counts_them_and_updates_keep_used() -> None:
    p = plugin_with([running("a", "u", 2), running("a", "v", 1)])
    p.on_object_event("ADDED", QA)
    assert _used(p, "a") == {GPU: 3}
    p.on_object_event("MODIFIED", quota("a", {GPU: 1}, {GPU: 3}))
    assert (p.book.infos["a"].min, p.book.infos["a"].max, _used(p, "a")) == ({GPU: 1}, {GPU: 3}, {GPU: 3})
    p.on_object_event("ADDED", quota("a", {GPU: 9}, {GPU: 9}, name="second"))  # one per namespace
    assert p.book.infos["a"].name == "a"
    p.on_object_event("DELETED", QA)
    assert "a" not in p.book.infos
