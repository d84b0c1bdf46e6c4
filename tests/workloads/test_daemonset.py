"""The DaemonSet controller through ``berth simulate``: one pod per eligible node, placed by the default
scheduler through kube's node affinity term, kube's daemon tolerations, node changes, status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kinds_helpers import daemon_set, node, pod_template, simulate

GPU_TAINT = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
UNSCHEDULABLE = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]


def _scenario(*steps: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"steps": list(steps)},
    }


def _nodes_of(run: Any) -> list[str]:
    return sorted(run.placements("agent-").values())


def test_one_pod_per_eligible_node(tmp_path: Path) -> None:
    nodes = [
        node("n1"),
        node("n2", disk="ssd"),
        node("n3", taints=GPU_TAINT),
        node("n4", taints=UNSCHEDULABLE),
    ]
    run = simulate(tmp_path, [*nodes, daemon_set("agent")])
    assert run.exit_code == 0, run.stderr
    # n3's taint is not tolerated; n4 is cordoned, which daemon pods tolerate
    assert _nodes_of(run) == ["n1", "n2", "n4"]
    assert run.get("DaemonSet", "agent")["status"] == {
        "currentNumberScheduled": 3,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 3,
        "numberReady": 3,
        "observedGeneration": 1,
        "updatedNumberScheduled": 3,
        "numberAvailable": 3,
    }


def test_pods_get_kubes_affinity_term_and_tolerations(tmp_path: Path) -> None:
    run = simulate(
        tmp_path, [node("n1"), daemon_set("agent", template=pod_template("agent", hostNetwork=True))]
    )
    assert run.exit_code == 0, run.stderr
    (pod,) = run.objects("Pod")
    assert pod["spec"]["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            }
        }
    }
    assert pod["spec"]["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
        {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"},
    ]
    labels = pod["metadata"]["labels"]
    assert (labels["app"], labels["pod-template-generation"]) == ("agent", "1")
    assert pod["metadata"]["generateName"] == "agent-"
    assert run.messages("agent") == [("SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")]


def test_node_selector_and_required_affinity_choose_the_nodes(tmp_path: Path) -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z2"]}
                        ]
                    }
                ]
            }
        }
    }
    template = pod_template("agent", nodeSelector={"disk": "ssd"}, affinity=affinity)
    nodes = [node("n1", disk="ssd"), node("n2", zone="z2", disk="ssd"), node("n3", zone="z2")]
    run = simulate(tmp_path, [*nodes, daemon_set("agent", template=template)])
    assert run.exit_code == 0, run.stderr
    assert _nodes_of(run) == ["n2"]
    assert run.get("DaemonSet", "agent")["status"]["desiredNumberScheduled"] == 1


def test_nodes_added_relabelled_and_removed(tmp_path: Path) -> None:
    template = pod_template("agent", nodeSelector={"role": "edge"})
    steps = _scenario(
        {"at": "1m", "create": [node("n3", role="edge")]},
        {
            "at": "2m",
            "patch": [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": "n1",
                    "patch": {"metadata": {"labels": {"role": "core"}}},
                }
            ],
        },
        {"at": "3m", "delete": [{"apiVersion": "v1", "kind": "Node", "name": "n2"}]},
    )
    docs = [node("n1", role="edge"), node("n2", role="edge"), daemon_set("agent", template=template), steps]
    one = simulate(tmp_path, docs, "--until", "90s")
    assert _nodes_of(one) == ["n1", "n2", "n3"]
    two = simulate(tmp_path, docs, "--until", "150s")
    assert _nodes_of(two) == ["n2", "n3"]  # n1 no longer matches: its pod is deleted
    three = simulate(tmp_path, docs, "--until", "5m")
    assert three.exit_code == 0, three.stderr
    assert _nodes_of(three) == ["n3"]
    assert three.get("DaemonSet", "agent")["status"]["desiredNumberScheduled"] == 1


def test_invalid_daemon_set_is_refused(tmp_path: Path) -> None:
    ds = daemon_set("agent")
    ds["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    run = simulate(tmp_path, [ds])
    assert run.exit_code == 2
    assert (
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"agent"}: `selector` does not match template `labels`'
        in run.stderr
    )


def test_a_matching_orphan_is_adopted(tmp_path: Path) -> None:
    orphan = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "agent-old", "labels": {"app": "agent"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "img"}]},
    }
    run = simulate(
        tmp_path, [node("n1"), node("n2"), orphan, daemon_set("agent", updateStrategy={"type": "OnDelete"})]
    )
    assert run.exit_code == 0, run.stderr
    placed = run.placements("agent-")
    assert placed["agent-old"] == "n1" and sorted(placed.values()) == ["n1", "n2"]
    assert [r["name"] for r in run.get("Pod", "agent-old")["metadata"]["ownerReferences"]] == ["agent"]
    assert len(run.messages("agent")) == 1  # one pod made, for n2
