"""The disruption controller's PodDisruptionBudget status: counts, percentages, scale, health, conditions."""

from __future__ import annotations

from typing import Any

import pytest
from disruption_helpers import PDB, POD, Cluster, deployment, pdb, replica_set

from berth.controllers.disruption import go_print_label_selector
from builders import create, make_pod


def _three_ready(c: Cluster, replicas: int = 3) -> dict[str, Any]:
    rs = replica_set(c.store, replicas=replicas)
    for i in range(3):
        create(c.store, make_pod(f"web-{i}").label(app="web").node("n1").owned_by(rs).running())
    return rs


def _counts(status: dict[str, Any]) -> tuple[int, int, int, int]:
    return (
        status["expectedPods"],
        status["desiredHealthy"],
        status["currentHealthy"],
        status["disruptionsAllowed"],
    )


@pytest.mark.parametrize(
    ("bounds", "expected"),
    [
        ({"min_available": 2}, (3, 2, 3, 1)),
        ({"min_available": "50%"}, (3, 2, 3, 1)),
        ({"max_unavailable": "50%"}, (3, 1, 3, 2)),
        ({"max_unavailable": 0}, (3, 3, 3, 0)),
        ({"max_unavailable": 1}, (3, 2, 3, 1)),
        ({"min_available": "34%"}, (3, 2, 3, 1)),  # 1.02 rounds up to 2
        ({"min_available": "33%"}, (3, 1, 3, 2)),  # 0.99 rounds up to 1
        ({"min_available": "100%"}, (3, 3, 3, 0)),
        ({"max_unavailable": "10%"}, (3, 2, 3, 1)),  # 0.3 unavailable rounds up to 1
        ({"min_available": 5}, (3, 5, 3, 0)),  # never below 0
        ({"max_unavailable": "100%"}, (3, 0, 3, 3)),
        ({}, (0, 0, 3, 0)),  # neither bound: nothing is expected, nothing allowed
    ],
    ids=lambda v: str(v),
)
def test_status_table_three_ready_replicas(
    bounds: dict[str, Any], expected: tuple[int, int, int, int]
) -> None:
    c = Cluster()
    _three_ready(c)
    pdb(c.store, **bounds)
    c.settle()
    assert _counts(c.status()) == expected


def test_full_status_object() -> None:
    c = Cluster()
    _three_ready(c)
    pdb(c.store, min_available=2)
    c.clock.run(until=7.0)
    assert c.status() == {
        "observedGeneration": 1,
        "disruptionsAllowed": 1,
        "currentHealthy": 3,
        "desiredHealthy": 2,
        "expectedPods": 3,
        "conditions": [
            {
                "type": "DisruptionAllowed",
                "status": "True",
                "observedGeneration": 1,
                "lastTransitionTime": "2024-01-01T00:00:00Z",
                "reason": "SufficientPods",
                "message": "",
            }
        ],
    }


@pytest.mark.parametrize(
    ("bounds", "replicas", "expected"),
    [
        ({"min_available": "60%"}, 5, (5, 3, 3, 0)),
        ({"max_unavailable": "40%"}, 5, (5, 3, 3, 0)),
        ({"max_unavailable": 3}, 5, (5, 2, 3, 1)),
        ({"min_available": 2}, 5, (3, 2, 3, 1)),  # an int minAvailable counts the pods, not the scale
        ({"min_available": "50%"}, 2, (2, 1, 3, 2)),
    ],
)
def test_expected_count_from_deployment_scale(
    bounds: dict[str, Any], replicas: int, expected: tuple[int, int, int, int]
) -> None:
    c = Cluster()
    d = deployment(c.store, replicas=replicas)
    rs = replica_set(c.store, replicas=3, parent=d)
    for i in range(3):
        create(c.store, make_pod(f"web-{i}").label(app="web").node("n1").owned_by(rs).running())
    pdb(c.store, **bounds)
    c.settle()
    assert _counts(c.status()) == expected


def test_scale_change_resyncs_percentage_budget() -> None:
    c = Cluster()
    rs = _three_ready(c)
    pdb(c.store, min_available="50%")
    c.settle()
    assert _counts(c.status()) == (3, 2, 3, 1)
    c.store.patch(("apps", "ReplicaSet"), "default", rs["metadata"]["name"], {"spec": {"replicas": 6}})
    c.settle()
    assert _counts(c.status()) == (6, 3, 3, 0)


@pytest.mark.parametrize(
    ("ready", "phases", "expected_current"),
    [
        ((True, True, False), ("Running",) * 3, 2),
        ((False, False, False), ("Running",) * 3, 0),
        ((True, True, True), ("Running", "Running", "Succeeded"), 3),  # readiness alone decides
    ],
)
def test_unhealthy_pods_do_not_count(
    ready: tuple[bool, ...], phases: tuple[str, ...], expected_current: int
) -> None:
    c = Cluster()
    rs = replica_set(c.store)
    for i in range(3):
        create(
            c.store,
            make_pod(f"web-{i}").label(app="web").node("n1").owned_by(rs).phase(phases[i]).ready(ready[i]),
        )
    pdb(c.store, min_available=2)
    c.settle()
    assert c.status()["currentHealthy"] == expected_current


def test_pods_being_deleted_do_not_count_and_condition_flips() -> None:
    c = Cluster()
    _three_ready(c)
    pdb(c.store, min_available=2)
    c.settle()
    c.clock.run(until=30.0)
    c.store.delete(POD, "default", "web-0")  # graceful: stays, being deleted
    c.settle()
    status = c.status()
    assert _counts(status) == (3, 2, 2, 0)
    assert status["conditions"] == [
        {
            "type": "DisruptionAllowed",
            "status": "False",
            "observedGeneration": 1,
            "lastTransitionTime": "2024-01-01T00:00:30Z",
            "reason": "InsufficientPods",
            "message": "",
        }
    ]


def test_disrupted_pods_expire_after_two_minutes() -> None:
    c = Cluster()
    _three_ready(c)
    budget = pdb(c.store, min_available=1)
    c.settle()
    stored = c.store.get(PDB, "default", "web-pdb")
    c.store.update_status(
        {**stored, "status": {**stored["status"], "disruptedPods": {"web-1": "2024-01-01T00:00:00Z"}}}
    )
    c.settle()
    assert c.status()["disruptedPods"] == {"web-1": "2024-01-01T00:00:00Z"}
    assert _counts(c.status()) == (3, 1, 2, 1)
    c.settle(until=119.0)
    assert _counts(c.status()) == (3, 1, 2, 1)
    c.settle(until=121.0)  # the controller's recheck timer fires at 120s
    assert "disruptedPods" not in c.status()
    assert _counts(c.status()) == (3, 1, 3, 2)
    assert budget["metadata"]["name"] == "web-pdb"


def test_disrupted_entry_dropped_once_pod_is_deleting() -> None:
    c = Cluster()
    _three_ready(c)
    pdb(c.store, min_available=1)
    c.settle()
    stored = c.store.get(PDB, "default", "web-pdb")
    c.store.update_status(
        {**stored, "status": {**stored["status"], "disruptedPods": {"web-1": "2024-01-01T00:00:00Z"}}}
    )
    c.store.delete(POD, "default", "web-1")
    c.settle()
    assert "disruptedPods" not in c.status()
    assert c.status()["currentHealthy"] == 2


def test_missing_controller_fails_safe() -> None:
    c = Cluster()
    rs = replica_set(c.store)
    create(c.store, make_pod("web-0").label(app="web").node("n1").owned_by(rs).running())
    create(c.store, make_pod("web-1").label(app="web").node("n1").owned_by(rs).running())
    pdb(c.store, min_available=1)
    c.settle()
    assert c.status()["disruptionsAllowed"] == 1
    c.store.delete(("apps", "ReplicaSet"), "default", "web")
    c.store.patch(PDB, "default", "web-pdb", {"spec": {"minAvailable": "50%"}})
    c.settle()
    status = c.status()
    assert status["disruptionsAllowed"] == 0
    assert status["observedGeneration"] == 1  # failSafe keeps the old observation
    assert status["conditions"][0]["status"] == "False"
    assert status["conditions"][0]["reason"] == "SyncFailed"
    assert status["conditions"][0]["message"] == 'found no controllers for pod "web-0"'
    assert c.events("CalculateExpectedPodCountFailed") == [
        'Failed to calculate the number of expected pods: found no controllers for pod "web-0"'
    ]


def test_unmanaged_pods_are_skipped_for_scale_with_event() -> None:
    c = Cluster()
    rs = replica_set(c.store, replicas=2)
    create(c.store, make_pod("web-0").label(app="web").node("n1").owned_by(rs).running())
    create(c.store, make_pod("web-1").label(app="web").node("n1").owned_by(rs).running())
    create(c.store, make_pod("bare").label(app="web").node("n1").running())
    pdb(c.store, max_unavailable=1)
    c.settle()
    assert _counts(c.status()) == (2, 1, 3, 2)
    assert c.events("UnmanagedPods") == [
        "Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{app: "
        "web,},MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged. As a result, the "
        "status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account "
        'for these pods please set ".spec.minAvailable" field of the PDB to an integer value.'
    ]


def test_no_pods_event_and_zero_status() -> None:
    c = Cluster()
    pdb(c.store, min_available=1)
    c.settle()
    assert _counts(c.status()) == (0, 1, 0, 0)
    assert c.events("NoPods") == ["No matching pods found"]


def test_label_change_moves_pod_between_budgets() -> None:
    c = Cluster()
    rs = _three_ready(c)
    pdb(c.store, min_available=1)
    pdb(c.store, "other-pdb", min_available=1, selector={"matchLabels": {"app": "other"}})
    c.settle()
    assert c.status()["currentHealthy"] == 3
    assert c.status("other-pdb")["currentHealthy"] == 0
    moved = c.store.get(POD, "default", "web-2")
    c.store.update({**moved, "metadata": {**moved["metadata"], "labels": {"app": "other"}}})
    c.settle()
    assert c.status()["currentHealthy"] == 2
    assert c.status("other-pdb")["currentHealthy"] == 1
    assert rs["metadata"]["name"] == "web"


def test_generation_change_is_observed() -> None:
    c = Cluster()
    _three_ready(c)
    pdb(c.store, min_available=1)
    c.settle()
    c.store.patch(PDB, "default", "web-pdb", {"spec": {"minAvailable": 3}})
    c.settle()
    status = c.status()
    assert status["observedGeneration"] == 2
    assert _counts(status) == (3, 3, 3, 0)
    assert status["conditions"][0]["observedGeneration"] == 2


def test_existing_objects_indexed_at_start() -> None:
    c = Cluster()
    _three_ready(c)
    pdb(c.store, min_available=2)
    from berth.controllers.disruption import DisruptionController

    fresh = DisruptionController(c.store, c.clock)
    fresh.sync("default", "web-pdb")
    assert _counts(c.status()) == (3, 2, 3, 1)


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        (None, "nil"),
        (
            {},
            "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}",
        ),
        (
            {
                "matchLabels": {"b": "2", "a": "1"},
                "matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y"]}],
            },
            "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement"
            "{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}",
        ),
    ],
)
def test_format_label_selector(selector: dict[str, Any] | None, text: str) -> None:
    assert go_print_label_selector(selector) == text
