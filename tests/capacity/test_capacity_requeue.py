"""A pod refused by its quota is retried as soon as the ElasticQuota changes (not after the 5-minute flush)."""

from __future__ import annotations

from typing import Any

from berth.api.manifest import Manifest
from berth.scheduler.framework.config import parse_config
from berth.sim.engine import Simulation
from berth.sim.scenario import Plan, Step


def _config() -> Any:
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {
                        "multiPoint": {
                            "enabled": [{"name": "CapacityScheduling"}],
                            "disabled": [{"name": "DefaultPreemption"}],
                        }
                    },
                }
            ],
        }
    )


def test_raising_max_retries_the_refused_pod_at_once() -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n"},
        "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}},
    }
    quota = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "q", "namespace": "team"},
        "spec": {"min": {"cpu": "1"}, "max": {"cpu": "1"}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "team"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]},
    }
    sim = Simulation(config=_config())
    sim.run_manifests([Manifest(o, "t") for o in (node, quota, pod)], until=20.0)
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
