"""Node deletion (podgc) and the Scenario steps ``drain`` / ``cordon`` / ``uncordon``."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from drain_helpers import NODE, POD, advance, deployment, pods_on, start, web_on_two_nodes

from berth.api.errors import InvalidObjectError
from berth.api.manifest import parse_manifest_text
from berth.api.watch import WatchEvent
from berth.scheduler.builtin import builtin_registry
from berth.sim.engine import Simulation
from berth.sim.scenario import DrainSpec, build_plan
from builders import make_node, make_pod

# ----- podgc --------------------------------------------------------------------------------------------


def test_deleted_node_pods_are_collected_and_replaced() -> None:
    sim = start(make_node("node-a").obj(), make_node("node-b").obj(), deployment("web", 3))
    doomed = pods_on(sim, "node-a")
    assert doomed
    last: dict[str, dict[str, Any]] = {}

    def track(ev: WatchEvent) -> None:
        if ev.object.get("kind") == "Pod" and ev.type == "MODIFIED":
            last[ev.object["metadata"]["name"]] = ev.object

    sim.store.subscribe(track)
    sim.clock.call_at(10.0, lambda: sim.store.delete(NODE, "", "node-a") and None, -1)
    advance(sim, 49.0)
    assert pods_on(sim, "node-a") == doomed  # quarantine: 40s after the node went away
    advance(sim, 50.0)
    assert pods_on(sim, "node-a") == []
    assert len(pods_on(sim, "node-b")) == 3
    for name in doomed:
        final = last[name]
        assert final["status"]["phase"] == "Failed"
        assert final["status"]["conditions"][-1] == {
            "type": "DisruptionTarget",
            "status": "True",
            "lastProbeTime": None,
            "lastTransitionTime": "2024-01-01T00:00:50Z",
            "reason": "DeletionByPodGC",
            "message": "PodGC: node no longer exists",
        }


def test_node_back_within_quarantine_keeps_pods() -> None:
    sim = start(make_node("node-a").obj(), deployment("web", 2))
    kept = pods_on(sim, "node-a")
    sim.store.delete(NODE, "", "node-a")
    advance(sim, 20.0)
    sim.store.create(make_node("node-a").obj())
    advance(sim, 120.0)
    assert pods_on(sim, "node-a") == kept


def test_pod_bound_to_missing_node_is_collected() -> None:
    sim = start(make_pod("stray").label(app="stray").node("nowhere").obj(), until=39.0)
    assert pods_on(sim, "nowhere") == ["stray"]
    advance(sim, 40.0)
    assert pods_on(sim, "nowhere") == []


# ----- scenario steps -----------------------------------------------------------------------------------


def _plan(steps: list[dict[str, Any]], until: str = "120s") -> Any:
    doc = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"until": until, "steps": steps},
    }
    return build_plan(parse_manifest_text(yaml.safe_dump(doc), "s.yaml"))


def test_steps_parse() -> None:
    plan = _plan(
        [
            {"at": "10s", "cordon": "n1"},
            {"at": "20s", "drain": "n2", "uncordon": ["n1", "n3"]},
            {
                "at": "30s",
                "drain": [{"node": "n3", "timeout": "5m", "force": True, "gracePeriodSeconds": 0}, "n4"],
            },
        ]
    )
    assert [(s.at, s.cordon, s.uncordon, s.drain) for s in plan.steps] == [
        (10.0, ["n1"], [], []),
        (20.0, [], ["n1", "n3"], [DrainSpec("n2")]),
        (30.0, [], [], [DrainSpec("n3", 300.0, True, 0), DrainSpec("n4")]),
    ]


@pytest.mark.parametrize(
    ("step", "path", "message"),
    [
        ({"at": 1, "drain": {"timeout": "5m"}}, "spec.steps[0].drain.node", "Required value"),
        (
            {"at": 1, "drain": {"node": "n", "wait": 1}},
            "spec.steps[0].drain.wait",
            'Unsupported value: "wait": supported values: "node", "timeout", "force", "gracePeriodSeconds", '
            '"preferAvoidPods", "ignoreDaemonSets", "deleteEmptyDirData", "podSelector"',
        ),
        (
            {"at": 1, "drain": {"node": "n", "force": "yes"}},
            "spec.steps[0].drain.force",
            "Invalid value: must be a boolean",
        ),
        (
            {"at": 1, "drain": {"node": "n", "timeout": "soon"}},
            "spec.steps[0].drain.timeout",
            'Invalid value: "soon": not a duration',
        ),
        ({"at": 1, "cordon": ["n", 3]}, "spec.steps[0].cordon[1]", "Invalid value: must be a node name"),
        (
            {"at": 1, "evict": "p"},
            "spec.steps[0].evict",
            'Unsupported value: "evict": supported values: "at", "create", "delete", "patch", "drain", "cordon", '
            '"uncordon"',
        ),
    ],
)
def test_bad_steps(step: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(InvalidObjectError) as info:
        _plan([step])
    assert info.value.path == path
    assert info.value.message == message


def test_scenario_cordon_drain_uncordon_run() -> None:
    sim = Simulation(registry=builtin_registry())
    for o in web_on_two_nodes(replicas=2):
        sim.store.create(o)
    plan = _plan(
        [
            {"at": "10s", "cordon": "node-b"},
            {"at": "20s", "drain": {"node": "node-a", "timeout": "2m"}},
            {"at": "100s", "uncordon": ["node-a", "node-b"], "drain": "ghost"},
        ],
        until="200s",
    )
    sim.run(plan)
    assert [(d.node, d.ok) for d in sim.drains] == [("node-a", False)]
    (victim,) = [ref.split("/")[1] for ref in sim.drains[0].pending]
    error = f'error when evicting pods/"{victim}" -n "default": global timeout reached: 2m0s'
    assert sim.drains[0].error == error  # the budget never allows it
    assert sim.step_errors == [
        'at 100s: Error from server (NotFound): nodes "ghost" not found',
        f'at 140s: There are pending pods in node "node-a" when an error occurred: {error}',
        f"pod/{victim} (blocked: The disruption budget web-pdb needs 2 healthy pods and has 2 currently)",
        f'at 140s: error: unable to drain node "node-a" due to error: {error}, continuing command...',
    ]
    assert "unschedulable" not in sim.store.get(NODE, "", "node-a")["spec"]
    assert len([p for p in sim.store.list(POD)[0] if p["spec"].get("nodeName")]) == 2


def test_scenario_drain_refused_without_force() -> None:
    sim = Simulation()
    sim.store.create(make_node("n1").obj())
    sim.store.create(make_pod("solo").label(app="solo").node("n1").obj())
    sim.run(_plan([{"at": "5s", "drain": "n1"}], until="10s"))
    assert sim.step_errors == [
        'at 5s: error: unable to drain node "n1" due to error: cannot delete Pods that declare no controller '
        "(use --force to override): default/solo, continuing command..."
    ]
    assert sim.drains == []
