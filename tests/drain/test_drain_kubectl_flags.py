"""kubectl drain's flags on Berth's drain: --ignore-daemonsets, --delete-emptydir-data, --pod-selector,
--dry-run=client|server, and the texts of a drain that cannot finish."""

from __future__ import annotations

from typing import Any

import pytest
from drain_helpers import NODE, POD, Bare, advance, budget, daemonset, deployment, pods_on, start

from berth.api.errors import InvalidObjectError
from berth.api.manifest import Manifest
from berth.descheduler import DrainResult, drain
from berth.descheduler.drain import aggregate, failure_lines
from berth.sim.engine import Simulation
from berth.sim.scenario import build_plan
from builders import make_node, make_pod

VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget."


def _with_agent(*extra: dict[str, Any]) -> Bare:
    """n1 with one pod of the DaemonSet "agent" (owned by the real object) and the given objects."""
    bare = Bare(make_node("n1").obj(), daemonset("agent"), *extra)
    uid = bare.store.get(("apps", "DaemonSet"), "default", "agent")["metadata"]["uid"]
    bare.store.create(
        make_pod("agent-x").label(app="agent").node("n1").owner("DaemonSet", "agent", uid).obj()
    )
    return bare


def _scratch(name: str) -> dict[str, Any]:
    """A pod with a controller, bound to n1, with an emptyDir volume."""
    pod = make_pod(name).label(app=name).node("n1").owner("ReplicaSet", "rs", "rs-uid").obj()
    pod["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    return pod


def _drain(sim: Simulation, node: str = "n1", **kw: Any) -> DrainResult:
    done: list[DrainResult] = []
    drain(sim.store, sim.clock, node, on_done=done.append, **kw)
    advance(sim, sim.clock.now() + 120.0)
    (result,) = done
    return result


def test_daemonset_pods_are_refused_without_ignore_daemonsets() -> None:
    bare = _with_agent()
    assert bare.refusal() == (
        "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): default/agent-x"
    )
    result = bare.drain(ignore_daemonsets=True)
    assert result.ok and result.evicted == []
    assert result.log == [
        "node/n1 already cordoned",
        "Warning: ignoring DaemonSet-managed Pods: default/agent-x",
        "node/n1 drained",
    ]
    assert [p["metadata"]["name"] for p in bare.store.list(POD)[0]] == ["agent-x"]


def test_a_pod_of_a_deleted_daemonset_needs_force() -> None:
    bare = Bare(
        make_node("n1").obj(), make_pod("orphan").node("n1").owner("DaemonSet", "gone", "gone-uid").obj()
    )
    assert (
        bare.refusal(ignore_daemonsets=True)
        == 'cannot delete daemonsets.apps "gone" not found: default/orphan'
    )
    result = bare.drain(ignore_daemonsets=True, force=True, grace_period_seconds=0)
    # kubectl's warning for it is replaced by the next filters' verdict (it has a controller): none is printed
    assert result.log == [
        "node/n1 already cordoned",
        "evicting pod default/orphan",
        "pod/orphan evicted",
        "node/n1 drained",
    ]
    assert result.ok and result.evicted == ["default/orphan"]


def test_emptydir_pods_need_delete_emptydir_data() -> None:
    bare = Bare(make_node("n1").obj(), _scratch("cache"))
    assert bare.refusal() == (
        "cannot delete Pods with local storage (use --delete-emptydir-data to override): default/cache"
    )
    result = bare.drain(delete_emptydir_data=True, grace_period_seconds=0)
    assert result.ok and result.evicted == ["default/cache"]
    # kubectl's own warning for local storage is replaced by the next filter's verdict: none is printed
    assert result.log == [
        "node/n1 already cordoned",
        "evicting pod default/cache",
        "pod/cache evicted",
        "node/n1 drained",
    ]


def test_several_refusals_are_aggregated_as_kubectl_does() -> None:
    bare = _with_agent(_scratch("cache"), make_pod("loner").node("n1").obj())
    assert bare.refusal() == (
        "[cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): default/agent-x, "
        "cannot delete Pods with local storage (use --delete-emptydir-data to override): default/cache, "
        "cannot delete Pods that declare no controller (use --force to override): default/loner]"
    )


def test_pod_selector_limits_the_pods_drained() -> None:
    sim = start(make_node("n1").obj(), deployment("web", 2), deployment("api", 1))
    result = _drain(sim, pod_selector="app=web", grace_period_seconds=0)
    assert result.ok
    assert [r.split("/")[1].split("-")[0] for r in result.evicted] == ["web", "web"]
    api = [p for p in pods_on(sim, "n1") if p.startswith("api-")]
    assert len(api) == 1


def test_client_dry_run_changes_nothing() -> None:
    sim = start(make_node("n1").obj(), deployment("web", 2))
    before = sorted(pods_on(sim, "n1"))
    result = _drain(sim, dry_run="client")
    assert result.ok and result.evicted == []
    assert result.log == [
        "node/n1 cordoned (dry run)",
        *[f"evicting pod default/{p} (dry run)" for p in before],
        "node/n1 drained (dry run)",
    ]
    assert "unschedulable" not in sim.store.get(NODE, "", "n1")["spec"]
    assert sorted(pods_on(sim, "n1")) == before


def test_server_dry_run_asks_the_server_and_changes_nothing() -> None:
    sim = start(
        make_node("n1").obj(),
        make_node("n2").obj(),
        deployment("web", 1),
        budget("pdb", "web", maxUnavailable=0),
    )
    (victim,) = [p for n in ("n1", "n2") for p in pods_on(sim, n)]
    node = "n1" if pods_on(sim, "n1") else "n2"
    done: list[DrainResult] = []
    drain(sim.store, sim.clock, node, dry_run="server", timeout=7.0, on_done=done.append)
    advance(sim, sim.clock.now() + 60.0)
    (result,) = done
    # the budget refuses even a dry-run eviction, so it is retried as a real one would be
    assert result.log == [
        f"node/{node} cordoned (server dry run)",
        f"evicting pod default/{victim} (server dry run)",
        f'error when evicting pods/"{victim}" -n "default" (will retry after 5s): {VIOLATES}',
        f"evicting pod default/{victim} (server dry run)",
        f'error when evicting pods/"{victim}" -n "default" (will retry after 5s): {VIOLATES}',
    ]
    assert result.error == f'error when evicting pods/"{victim}" -n "default": global timeout reached: 7s'
    assert "unschedulable" not in sim.store.get(NODE, "", node)["spec"]

    free = start(make_node("n1").obj(), deployment("web", 1))
    (pod,) = pods_on(free, "n1")
    result = _drain(free, dry_run="server")
    assert result.log == [
        "node/n1 cordoned (server dry run)",
        f"evicting pod default/{pod} (server dry run)",
        "node/n1 drained (server dry run)",
    ]
    assert pods_on(free, "n1") == [pod]
    assert free.store.get(POD, "default", pod)["metadata"].get("deletionTimestamp") is None


def test_a_drain_that_cannot_finish_names_the_pods_and_their_budgets() -> None:
    sim = start(make_node("n1").obj(), deployment("web", 2), budget("web-pdb", "web", minAvailable=2))
    victims = sorted(pods_on(sim, "n1"))
    result = _drain(sim, timeout=12.0)
    errors = [f'error when evicting pods/"{v}" -n "default": global timeout reached: 12s' for v in victims]
    assert result.error == aggregate(errors) == f"[{errors[0]}, {errors[1]}]"
    assert result.pending == [f"default/{v}" for v in victims]
    held = ["The disruption budget web-pdb needs 2 healthy pods and has 2 currently"]
    assert result.blocked == {f"default/{v}": held for v in victims}
    assert failure_lines(result) == [
        f'There are pending pods in node "n1" when an error occurred: {result.error}',
        *[f"pod/{v}" for v in victims],
    ]


def test_a_terminating_pod_at_the_deadline_is_waited_for() -> None:
    sim = start(make_node("n1").obj(), deployment("web", 1))
    (victim,) = pods_on(sim, "n1")
    result = _drain(sim, timeout=10.0)  # the pod's 30 s grace period outlasts the timeout
    assert result.error == (
        f'error when waiting for pod "{victim}" in namespace "default" to terminate: global timeout reached: 10s'
    )
    assert result.evicted == [f"default/{victim}"]
    assert result.pending == [f"default/{victim}"] and result.blocked == {}


def test_scenario_drain_step_with_the_flags() -> None:
    sim = start(make_node("n1").obj(), deployment("web", 1), deployment("api", 1))
    scenario = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {
            "steps": [
                {
                    "at": "10s",
                    "drain": {
                        "node": "n1",
                        "ignoreDaemonSets": True,
                        "deleteEmptyDirData": True,
                        "podSelector": "app=web",
                        "gracePeriodSeconds": 0,
                    },
                },
            ]
        },
    }
    plan = build_plan([Manifest(scenario, "s.yaml")])
    sim.run(plan, until=60.0)
    assert sim.step_errors == []
    ((node, ok, evicted),) = [(d.node, d.ok, d.evicted) for d in sim.drains]
    assert (node, ok, [e.split("/")[1].split("-")[0] for e in evicted]) == ("n1", True, ["web"])


def test_scenario_drain_step_refuses_a_bad_pod_selector() -> None:
    scenario = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"steps": [{"at": "10s", "drain": {"node": "n1", "podSelector": "app in ("}}]},
    }
    with pytest.raises(InvalidObjectError) as info:
        build_plan([Manifest(scenario, "s.yaml")])
    assert (info.value.path, info.value.message) == (
        "spec.steps[0].drain.podSelector",
        "Invalid value: must be a valid label selector",
    )
