"""A Warning Event for a pending pod no scheduler profile serves (Berth's addition; kube-scheduler is silent)."""

from __future__ import annotations

from typing import Any

from berth.scheduler.framework.config import parse_config
from berth.scheduler.unserved import UnservedPods
from berth.sim.engine import Simulation
from berth.sim.scenario import Plan, Step
from berth.store.events import EventRecorder
from builders import make_node, make_pod
from event_helpers import warning_events

EVENT = ("", "Event")
UNSERVED = (
    'no scheduler profile is named "my-scheduler" (the profiles are "default-scheduler", "koord-scheduler"): '
    "the pod stays Pending until a scheduler of that name binds it"
)


def _run(steps: list[tuple[float, list[dict[str, Any]]]], until: float, **kw: Any) -> Simulation:
    sim = Simulation(**kw)
    sim.run(Plan([Step(t, objs) for t, objs in steps]), until=until)
    return sim


def test_a_pod_no_profile_serves_gets_one_warning() -> None:
    pod = make_pod("lost").scheduler("my-scheduler").req(cpu="100m").obj()
    served = make_pod("fine").req(cpu="100m").obj()
    # the pod is updated many times over the run (labels), and still has one Event with count 1
    steps = [(0.0, [make_node("n1").obj(), pod, served])]
    sim = _run(steps, 60.0)
    for i in range(3):
        sim.store.patch(("", "Pod"), "default", "lost", {"metadata": {"labels": {"try": str(i)}}})
        sim.advance(70.0 + i)
    assert warning_events(sim) == [
        ("Pod", "lost", "NoSchedulerProfile", UNSERVED, 1, "berth-scheduler"),
    ]
    assert sim.store.get(("", "Pod"), "default", "lost")["spec"].get("nodeName") is None


def test_a_bound_pod_of_another_scheduler_is_not_warned_about() -> None:
    pod = make_pod("placed").scheduler("my-scheduler").node("n1").obj()
    sim = _run([(0.0, [make_node("n1").obj(), pod])], 10.0)
    assert warning_events(sim) == []


def test_the_message_names_the_configured_profiles() -> None:
    config = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "alpha"}],
        }
    )
    sim = _run([(0.0, [make_node("n1").obj(), make_pod("p").obj()])], 10.0, config=config)
    assert warning_events(sim) == [
        (
            "Pod",
            "p",
            "NoSchedulerProfile",
            'no scheduler profile is named "default-scheduler" (the profiles are "alpha"): '
            "the pod stays Pending until a scheduler of that name binds it",
            1,
            "berth-scheduler",
        )
    ]


def test_a_pod_warned_about_before_a_restart_is_not_warned_again() -> None:
    sim = _run([(0.0, [make_pod("lost").scheduler("my-scheduler").obj()])], 5.0)
    # what berth serve does after a restart: a new recorder and scheduler state over the same store
    fresh = UnservedPods(sim.store, EventRecorder(sim.store), ["default-scheduler"])
    fresh.pending(sim.store.get(("", "Pod"), "default", "lost"))
    assert [w[2] for w in warning_events(sim)] == ["NoSchedulerProfile"]
