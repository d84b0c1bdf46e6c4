"""A pod refused by its quota is retried as soon as the ElasticQuota changes (not after the 5-minute flush)."""

from __future__ import annotations

from capacity_helpers import quota

from berth.api.manifest import Manifest
from berth.sim.engine import Simulation
from berth.sim.scenario import Plan, Step
from builders import make_node, make_pod, scheduler_config


def test_raising_max_retries_the_refused_pod_at_once() -> None:
    config = scheduler_config(
        {
            "multiPoint": {
                "enabled": [{"name": "CapacityScheduling"}],
                "disabled": [{"name": "DefaultPreemption"}],
            }
        }
    )
    node = make_node("n").capacity(cpu="8").obj()
    pod = make_pod("p").ns("team").req(cpu="2").obj()
    sim = Simulation(config=config)
    objs = (node, quota("team", {"cpu": "1"}, {"cpu": "1"}, name="q"), pod)
    sim.run_manifests([Manifest(o, "t") for o in objs], until=20.0)
    assert sim.store.get(("", "Pod"), "team", "p")["spec"].get("nodeName") is None
    sim.store.patch(
        ("scheduling.x-k8s.io", "ElasticQuota"),
        "team",
        "q",
        {"spec": {"min": {"cpu": "4"}, "max": {"cpu": "4"}}},
    )
    sim.run(Plan([Step(20.0, [])]), until=40.0)
    bound = sim.store.get(("", "Pod"), "team", "p")
    assert bound["spec"]["nodeName"] == "n"
    scheduled = [o for o in sim.objects() if o["kind"] == "Event" and o["reason"] == "Scheduled"]
    assert [e["firstTimestamp"] for e in scheduled] == ["2024-01-01T00:00:20Z"]
