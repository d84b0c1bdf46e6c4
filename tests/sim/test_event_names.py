"""Event names never collide: objects of different kinds may share a name and be written about at once."""

from __future__ import annotations

from collections.abc import Callable

from conftest import Run

from berth.clock import SimClock
from berth.store import MemoryStore
from builders import make_node


def test_a_deployment_and_its_budget_of_the_same_name(simulate: Callable[..., Run]) -> None:
    labels = {"app": "web"}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}},
    }
    run = simulate([make_node("n1").obj(), deployment, budget])
    assert run.exit_code == 0, run.stderr
    events = run.events("web")
    assert sorted((e["involvedObject"]["kind"], e["reason"]) for e in events) == [
        ("Deployment", "ScalingReplicaSet"),
        ("PodDisruptionBudget", "NoPods"),
    ]
    assert len({e["metadata"]["name"] for e in events}) == 2


def test_now_nanos_increases_within_one_instant() -> None:
    store = MemoryStore(clock=SimClock(5.0))
    first, second, third = store.now_nanos(), store.now_nanos(), store.now_nanos()
    assert second == first + 1 and third == first + 2
