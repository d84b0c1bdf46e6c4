"""The eviction subresource: every rule of kube's EvictionREST.Create, dry-run, and the exact errors."""

from __future__ import annotations

from typing import Any

import pytest
from eviction_helpers import POD, get_pdb, new_store, pdb

from berth.api.errors import Forbidden, InternalError, NotFound, TooManyRequests
from berth.store.eviction import EvictionBlocked, evict
from builders import create, make_pod

VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget."
DISRUPTION_TARGET = {
    "type": "DisruptionTarget",
    "status": "True",
    "lastProbeTime": None,
    "lastTransitionTime": "2024-01-01T00:00:00Z",
    "reason": "EvictionByEvictionAPI",
    "message": "Eviction API: evicting",
}


def _conditions(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list((obj.get("status") or {}).get("conditions") or [])


def test_no_budget_deletes_gracefully_with_condition() -> None:
    store, _ = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running())
    out = evict(store, "default", "web-0")
    assert out["metadata"]["deletionTimestamp"] == "2024-01-01T00:00:30Z"
    assert out["metadata"]["deletionGracePeriodSeconds"] == 30
    assert _conditions(out)[-1] == DISRUPTION_TARGET


@pytest.mark.parametrize(
    ("phase", "node_name"),
    [("Succeeded", "n1"), ("Failed", "n1"), ("Pending", None), (None, None), ("Pending", "n1")],
)
def test_terminal_and_pending_pods_ignore_the_budget(phase: str | None, node_name: str | None) -> None:
    store, _ = new_store()
    web = make_pod("web-0").label(app="web").node(node_name)
    create(store, web.phase(phase).ready() if phase else web)
    pdb(store, allowed=0, current=1, desired=2)
    before = get_pdb(store)
    out = evict(store, "default", "web-0", grace_period_seconds=0)
    with pytest.raises(NotFound):
        store.get(POD, "default", "web-0")
    assert _conditions(out)[-1]["type"] == "DisruptionTarget"
    assert get_pdb(store) == before  # no debit


def test_pod_already_terminating_ignores_the_budget() -> None:
    store, _ = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running())
    store.delete(POD, "default", "web-0")
    pdb(store, allowed=0)
    out = evict(store, "default", "web-0", grace_period_seconds=0)
    with pytest.raises(NotFound):
        store.get(POD, "default", "web-0")
    assert out["metadata"]["name"] == "web-0"


def test_more_than_one_budget_is_an_internal_error() -> None:
    store, _ = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running())
    pdb(store, "a")
    pdb(store, "b", selector={"matchExpressions": [{"key": "app", "operator": "Exists"}]})
    with pytest.raises(InternalError) as info:
        evict(store, "default", "web-0")
    assert info.value.code == 500
    assert info.value.message == (
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    )
    assert "deletionTimestamp" not in store.get(POD, "default", "web-0")["metadata"]


def test_exhausted_budget_is_too_many_requests() -> None:
    store, _ = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running())
    pdb(store, allowed=0, current=2, desired=2)
    with pytest.raises(TooManyRequests) as info:
        evict(store, "default", "web-0")
    err = info.value
    assert isinstance(err, EvictionBlocked)
    assert (err.code, err.reason, err.message) == (429, "TooManyRequests", VIOLATES)
    assert err.causes == [
        ("DisruptionBudget", "The disruption budget web-pdb needs 2 healthy pods and has 2 currently")
    ]
    assert err.to_status()["details"] == {
        "causes": [
            {
                "reason": "DisruptionBudget",
                "message": "The disruption budget web-pdb needs 2 healthy pods and has 2 currently",
            }
        ]
    }
    assert "deletionTimestamp" not in store.get(POD, "default", "web-0")["metadata"]


def test_debit_writes_status_then_deletes() -> None:
    store, clock = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running())
    pdb(store, allowed=1)
    clock.run(until=42.0)
    out = evict(store, "default", "web-0")
    assert get_pdb(store)["status"] == {
        "observedGeneration": 1,
        "disruptionsAllowed": 0,
        "currentHealthy": 3,
        "desiredHealthy": 2,
        "expectedPods": 3,
        "conditions": [
            {
                "type": "DisruptionAllowed",
                "status": "False",
                "observedGeneration": 1,
                "lastTransitionTime": "2024-01-01T00:00:42Z",
                "reason": "InsufficientPods",
                "message": "",
            }
        ],
        "disruptedPods": {"web-0": "2024-01-01T00:00:42Z"},
    }
    assert out["metadata"]["deletionTimestamp"] == "2024-01-01T00:01:12Z"
    assert _conditions(out)[-1] == {**DISRUPTION_TARGET, "lastTransitionTime": "2024-01-01T00:00:42Z"}


def test_debit_keeps_condition_when_budget_remains() -> None:
    store, _ = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running())
    pdb(store, allowed=2)
    evict(store, "default", "web-0")
    status = get_pdb(store)["status"]
    assert status["disruptionsAllowed"] == 1
    assert "conditions" not in status  # kube only refreshes the condition when the budget reaches 0


def test_budget_not_yet_observed() -> None:
    store, _ = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running())
    pdb(store, observed=0)
    with pytest.raises(EvictionBlocked) as info:
        evict(store, "default", "web-0")
    assert info.value.causes == [
        ("DisruptionBudget", "The disruption budget web-pdb is still being processed by the server.")
    ]
    assert info.value.retry_after_seconds == 10
    assert info.value.to_status()["details"]["retryAfterSeconds"] == 10


def test_negative_budget_is_forbidden() -> None:
    store, _ = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running())
    pdb(store, allowed=-1)
    with pytest.raises(Forbidden) as info:
        evict(store, "default", "web-0")
    assert info.value.message == (
        'poddisruptionbudget.policy "web-pdb" is forbidden: pdb disruptions allowed is negative'
    )


@pytest.mark.parametrize(
    ("policy", "current", "desired", "evicted"),
    [
        ("AlwaysAllow", 0, 2, True),
        ("AlwaysAllow", 5, 2, True),
        (None, 2, 2, True),  # IfHealthyBudget (default): the healthy pods already satisfy the budget
        ("IfHealthyBudget", 3, 2, True),
        ("IfHealthyBudget", 1, 2, False),
        (None, 0, 0, False),  # desiredHealthy must be > 0
    ],
)
def test_unhealthy_pod_policy(policy: str | None, current: int, desired: int, evicted: bool) -> None:
    store, _ = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running(ready=False))
    pdb(store, allowed=0, current=current, desired=desired, policy=policy)
    before = get_pdb(store)
    if evicted:
        out = evict(store, "default", "web-0")
        assert out["metadata"]["deletionTimestamp"] == "2024-01-01T00:00:30Z"
        assert get_pdb(store) == before  # no debit
    else:
        with pytest.raises(EvictionBlocked) as info:
            evict(store, "default", "web-0")
        assert info.value.causes == [
            (
                "DisruptionBudget",
                f"The disruption budget web-pdb needs {desired} healthy pods and has {current} currently",
            )
        ]


def test_unhealthy_pod_with_budget_left_is_debited() -> None:
    store, _ = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running(ready=False))
    pdb(store, allowed=1, current=1, desired=2)  # IfHealthyBudget does not apply: 1 < 2
    evict(store, "default", "web-0")
    assert get_pdb(store)["status"]["disruptionsAllowed"] == 0


@pytest.mark.parametrize(
    "selector",
    [{}, {"matchLabels": {"app": "db"}}],
    ids=["empty-selector-matches-nothing", "other-labels"],
)
def test_unmatched_budget_is_not_consulted(selector: dict[str, Any]) -> None:
    store, _ = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running())
    pdb(store, allowed=0, selector=selector)
    out = evict(store, "default", "web-0")
    assert out["metadata"]["deletionGracePeriodSeconds"] == 30


def test_grace_period_override_removes_the_pod() -> None:
    store, _ = new_store()
    create(store, make_pod("web-0").label(app="web").node("n1").running())
    pdb(store, allowed=1)
    out = evict(store, "default", "web-0", grace_period_seconds=0)
    assert out["metadata"]["deletionGracePeriodSeconds"] == 0
    with pytest.raises(NotFound):
        store.get(POD, "default", "web-0")


def test_missing_pod() -> None:
    store, _ = new_store()
    with pytest.raises(NotFound) as info:
        evict(store, "default", "ghost")
    assert info.value.message == 'pods "ghost" not found'


@pytest.mark.parametrize(
    ("setup", "error"),
    [
        ({"allowed": 1}, None),
        ({"allowed": 0, "current": 2}, EvictionBlocked),
        (None, None),
    ],
    ids=["budget-left", "budget-exhausted", "no-budget"],
)
def test_dry_run_writes_nothing(setup: dict[str, Any] | None, error: type[Exception] | None) -> None:
    store, _ = new_store()
    stored = create(store, make_pod("web-0").label(app="web").node("n1").running())
    if setup is not None:
        pdb(store, **setup)
    revision = store.revision
    if error is None:
        out = evict(store, "default", "web-0", dry_run=True, avoid=True)
        assert out == stored
    else:
        with pytest.raises(error):
            evict(store, "default", "web-0", dry_run=True)
    assert store.revision == revision
