"""One Warning Event per ElasticQuota when no scheduler profile enables CapacityScheduling (Berth's addition)."""

from __future__ import annotations

from capacity_helpers import capacity_config, quota

from berth.controllers.elasticquota import ElasticQuotaController
from berth.sim.engine import Simulation
from berth.sim.scenario import Plan, Step
from builders import make_node, make_pod
from event_helpers import warning_events

EVENT = ("", "Event")
EQ = ("scheduling.x-k8s.io", "ElasticQuota")


def test_quotas_without_capacity_scheduling_get_one_warning_each() -> None:
    q1 = quota("team-a", {"cpu": "1"}, {"cpu": "2"})
    q2 = quota("team-b", {"cpu": "1"}, {"cpu": "2"})
    pods = [make_pod(f"p{i}").ns("team-a").req(cpu="100m").obj() for i in range(3)]
    sim = Simulation()
    sim.run(Plan([Step(0.0, [make_node("n1").obj(), q1, q2, *pods])]), until=120.0)
    sim.store.patch(EQ, "team-a", "team-a", {"spec": {"max": {"cpu": "3"}}})
    sim.advance(130.0)
    message = (
        'CapacityScheduling is not enabled in scheduler profiles "default-scheduler", "koord-scheduler": '
        "this ElasticQuota's min and max are not enforced"
    )
    assert warning_events(sim) == [
        ("ElasticQuota", "team-a", "QuotaNotEnforced", message, 1, "elasticquota-controller"),
        ("ElasticQuota", "team-b", "QuotaNotEnforced", message, 1, "elasticquota-controller"),
    ]


def test_quotas_are_not_warned_about_when_capacity_scheduling_is_on() -> None:
    q1 = quota("team-a", {"cpu": "1"}, {"cpu": "2"})
    sim = Simulation(config=capacity_config())
    sim.run(Plan([Step(0.0, [make_node("n1").obj(), q1])]), until=10.0)
    assert warning_events(sim) == []


def test_a_restarted_controller_does_not_warn_again() -> None:
    sim = Simulation()
    sim.run(Plan([Step(0.0, [quota("team-a", {"cpu": "1"}, {"cpu": "2"})])]), until=5.0)
    # a new controller over the same store (berth serve after a restart) sees the quota again
    again = ElasticQuotaController(sim.store, sim.clock)
    again.warn_unenforced(sim.events, ["default-scheduler"])
    for q in sim.store.list(EQ)[0]:
        again.handle_event("ADDED", q)
    assert [w[2] for w in warning_events(sim)] == ["QuotaNotEnforced"]
