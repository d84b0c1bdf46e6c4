"""``berth deschedule`` on a snapshot, through the command line: the example's DeschedulingPlan document and
table, a cycle that moves nothing, replacements that do not exist or stay Pending, snapshot fidelity (uids,
creationTimestamps, restart counts, ``--now``), owners of kinds Berth does not model, the nodes' resources,
and every kind of bad input (exit 2 with the exact message)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from berth.cli import app
from builders import GPU, make_node, make_pod

Obj = dict[str, Any]

EXAMPLE = Path(__file__).parents[2] / "examples" / "descheduler"
SNAPSHOT = EXAMPLE / "snapshot.yaml"
POLICY = EXAMPLE / "policy.yaml"
NOW = "2024-01-01T00:02:00Z"
EVICT_ANNOTATION = {"descheduler.alpha.kubernetes.io/evict": "true"}


@dataclass
class Run:
    """The outcome of one ``berth deschedule``."""

    exit_code: int
    stdout: str
    stderr: str

    def plan(self) -> Obj:
        """The ``-o json`` document (the run must have succeeded)."""
        assert self.exit_code == 0, self.stderr
        assert self.stderr == ""
        doc: Obj = json.loads(self.stdout)
        return doc


def deschedule(*argv: str) -> Run:
    """``berth deschedule ARGV...`` in-process."""
    result = CliRunner().invoke(app, ["deschedule", *argv])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def policy_doc(
    plugin: str,
    args: Obj,
    point: str,
    *,
    evictor: Obj | None = None,
    profile: str = "p",
) -> Obj:
    """A one-profile DeschedulerPolicy enabling `plugin` at `point` (DefaultEvictor's args when given)."""
    config: list[Obj] = [{"name": plugin, "args": args}]
    if evictor is not None:
        config.insert(0, {"name": "DefaultEvictor", "args": evictor})
    return {
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerPolicy",
        "profiles": [{"name": profile, "pluginConfig": config, "plugins": {point: {"enabled": [plugin]}}}],
    }


def lnu_policy(thresholds: Obj, targets: Obj, **extra: Any) -> Obj:
    """Profile ``balance`` with LowNodeUtilization at balance."""
    return policy_doc(
        "LowNodeUtilization",
        {"thresholds": thresholds, "targetThresholds": targets, **extra},
        "balance",
        profile="balance",
    )


@pytest.fixture
def on_snapshot(tmp_path: Path) -> Callable[..., Run]:
    """Write the cluster's objects and the policy to files and run ``berth deschedule`` on them."""

    def run(objects: list[Obj], policy: Obj, *args: str) -> Run:
        cluster = tmp_path / "cluster.yaml"
        cluster.write_text(yaml.safe_dump_all(objects))
        pol = tmp_path / "policy.yaml"
        pol.write_text(yaml.safe_dump(policy))
        return deschedule(str(cluster), "--policy", str(pol), *args)

    return run


def replica_set(name: str, uid: str, replicas: int, cpu: str = "1") -> Obj:
    """A ReplicaSet (with the uid its pods' ownerReferences name) of `replicas` pods requesting `cpu`."""
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": uid,
            "creationTimestamp": "2024-01-01T00:00:00Z",
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]
                },
            },
        },
    }


def container_statuses(restarts: int) -> list[Obj]:
    """One running container ``c`` that has restarted `restarts` times."""
    return [
        {
            "name": "c",
            "ready": True,
            "started": True,
            "restartCount": restarts,
            "image": "busybox",
            "imageID": "",
            "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}},
        }
    ]


def web_pod(name: str, node: str, restarts: int) -> Obj:
    """A running pod of ReplicaSet ``web`` (linked by uid) on `node`, with its restart count."""
    return (
        make_pod(name)
        .label(app="web")
        .req(cpu="1")
        .node(node)
        .running()
        .created("2024-01-01T00:00:00Z")
        .owner("ReplicaSet", "web", "rs-web-uid")
        .status(containerStatuses=container_statuses(restarts))
        .obj()
    )


def usage(cpu: float, memory: float, pods: float, extended: Obj | None = None) -> Obj:
    """A node's ``before`` / ``after`` fractions (extended resources after cpu, memory and pods)."""
    return {"cpu": cpu, "memory": memory, "pods": pods, **(extended or {})}


# --- the example ------------------------------------------------------------------------------------------

EXAMPLE_PLAN: Obj = {
    "apiVersion": "berth.dev/v1alpha1",
    "kind": "DeschedulingPlan",
    "evictions": [
        {
            "pod": {"namespace": "default", "name": "web-74886fcc66-9xvvz"},
            "node": "node-1",
            "plugin": "LowNodeUtilization",
            "replacement": {"namespace": "default", "name": "web-74886fcc66-gdkg4", "node": "node-4"},
        },
        {
            "pod": {"namespace": "default", "name": "web-74886fcc66-5wxqf"},
            "node": "node-2",
            "plugin": "LowNodeUtilization",
            "replacement": {"namespace": "default", "name": "web-74886fcc66-p28hx", "node": "node-3"},
        },
    ],
    "nodes": [
        # 4 pods of 400m / 512Mi on 4 cpu / 16Gi / 110 pods, then 3; the empty nodes get one each
        {
            "name": "node-1",
            "before": usage(0.4, 0.125, 0.036364),
            "after": usage(0.3, 0.09375, 0.027273),
        },
        {
            "name": "node-2",
            "before": usage(0.4, 0.125, 0.036364),
            "after": usage(0.3, 0.09375, 0.027273),
        },
        {"name": "node-3", "before": usage(0.0, 0.0, 0.0), "after": usage(0.1, 0.03125, 0.009091)},
        {"name": "node-4", "before": usage(0.0, 0.0, 0.0), "after": usage(0.1, 0.03125, 0.009091)},
    ],
}


def test_example_plan_json() -> None:
    run = deschedule(str(SNAPSHOT), "--policy", str(POLICY), "--now", NOW, "-o", "json")
    plan = run.plan()
    assert plan == EXAMPLE_PLAN
    # the fractions are requested / allocatable, rounded to 6 places
    assert plan["nodes"][0]["before"]["pods"] == round(4 / 110, 6)
    assert plan["nodes"][0]["after"]["pods"] == round(3 / 110, 6)
    assert plan["nodes"][2]["after"]["pods"] == round(1 / 110, 6)
    assert run.stdout == json.dumps(EXAMPLE_PLAN, indent=2) + "\n"


def test_example_plan_table() -> None:
    run = deschedule(str(SNAPSHOT), "--policy", str(POLICY), "--now", NOW)
    assert (run.exit_code, run.stderr) == (0, "")
    assert run.stdout == (
        "NAMESPACE   POD                    NODE     PLUGIN               REPLACEMENT            NEW NODE\n"
        "default     web-74886fcc66-9xvvz   node-1   LowNodeUtilization   web-74886fcc66-gdkg4   node-4\n"
        "default     web-74886fcc66-5wxqf   node-2   LowNodeUtilization   web-74886fcc66-p28hx   node-3\n"
        "\n"
        "NODE     CPU        MEMORY    PODS\n"
        "node-1   40%->30%   12%->9%   4%->3%\n"
        "node-2   40%->30%   12%->9%   4%->3%\n"
        "node-3   0%->10%    0%->3%    0%->1%\n"
        "node-4   0%->10%    0%->3%    0%->1%\n"
    )


def test_the_output_is_the_same_every_time_and_dry_run_is_implied() -> None:
    first = deschedule(str(SNAPSHOT), "--policy", str(POLICY), "--now", NOW, "-o", "json")
    again = deschedule(str(SNAPSHOT), "--policy", str(POLICY), "--now", NOW, "-o", "json")
    dry = deschedule(str(SNAPSHOT), "--policy", str(POLICY), "--now", NOW, "--dry-run", "-o", "json")
    assert first.stdout == again.stdout == dry.stdout
    # the seed only changes the names of the replacements
    other = deschedule(str(SNAPSHOT), "--policy", str(POLICY), "--now", NOW, "--seed", "3", "-o", "json")
    plan = other.plan()
    assert [e["pod"] for e in plan["evictions"]] == [e["pod"] for e in EXAMPLE_PLAN["evictions"]]
    assert plan["nodes"] == EXAMPLE_PLAN["nodes"]


def test_the_example_pdb_bounds_the_moves(on_snapshot: Callable[..., Run]) -> None:
    # minAvailable 7 of 8 (the status as the cluster's disruption controller left it: 1 allowed): the
    # second eviction (from node-2) is refused by the eviction API (429) and skipped
    objects = list(yaml.safe_load_all(SNAPSHOT.read_text()))
    for obj in objects:
        if obj["kind"] == "PodDisruptionBudget":
            obj["spec"]["minAvailable"] = 7
            obj["status"].update(disruptionsAllowed=1, desiredHealthy=7)
    plan = on_snapshot(objects, yaml.safe_load(POLICY.read_text()), "--now", NOW, "-o", "json").plan()
    assert plan["evictions"] == EXAMPLE_PLAN["evictions"][:1]
    assert [n["after"] for n in plan["nodes"]] == [
        usage(0.3, 0.09375, 0.027273),
        usage(0.4, 0.125, 0.036364),
        usage(0.0, 0.0, 0.0),
        usage(0.1, 0.03125, 0.009091),
    ]


def test_nothing_to_move_exits_0(on_snapshot: Callable[..., Run]) -> None:
    # no node is above 50% of anything: nothing is overutilized, nothing moves
    objects = list(yaml.safe_load_all(SNAPSHOT.read_text()))
    policy = lnu_policy({"cpu": 20, "memory": 20, "pods": 20}, {"cpu": 50, "memory": 50, "pods": 50})
    plan = on_snapshot(objects, policy, "--now", NOW, "-o", "json").plan()
    busy, idle = usage(0.4, 0.125, 0.036364), usage(0.0, 0.0, 0.0)
    assert plan == {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "DeschedulingPlan",
        "evictions": [],
        "nodes": [
            {"name": "node-1", "before": busy, "after": busy},
            {"name": "node-2", "before": busy, "after": busy},
            {"name": "node-3", "before": idle, "after": idle},
            {"name": "node-4", "before": idle, "after": idle},
        ],
    }
    table = on_snapshot(objects, policy, "--now", NOW)
    assert (table.exit_code, table.stderr) == (0, "")
    assert table.stdout == (
        "No pods would be evicted.\n"
        "\n"
        "NODE     CPU   MEMORY   PODS\n"
        "node-1   40%   12%      4%\n"
        "node-2   40%   12%      4%\n"
        "node-3   0%    0%       0%\n"
        "node-4   0%    0%       0%\n"
    )


def test_an_empty_cluster_is_an_empty_plan(on_snapshot: Callable[..., Run]) -> None:
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}]
    policy = lnu_policy({"cpu": 20}, {"cpu": 50})
    assert on_snapshot(objects, policy, "-o", "json").plan() == {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "DeschedulingPlan",
        "evictions": [],
        "nodes": [],
    }
    table = on_snapshot(objects, policy)
    assert table.stdout == "No pods would be evicted.\n\nNODE   CPU   MEMORY   PODS\n"


def test_one_ready_node_is_no_cluster_to_balance(on_snapshot: Callable[..., Run]) -> None:
    # upstream: "the cluster size is 0 or 1 meaning eviction causes service disruption or degradation"
    old = make_pod("old").req(cpu="1").node("a").running().created("2024-01-01T00:00:00Z")
    policy = policy_doc("PodLifeTime", {"maxPodLifeTimeSeconds": 60}, "deschedule")
    objects = [make_node("a").obj(), old.annotate(EVICT_ANNOTATION).obj()]
    plan = on_snapshot(objects, policy, "--now", "2024-01-01T01:00:00Z", "-o", "json").plan()
    assert plan["evictions"] == []


# --- replacements -------------------------------------------------------------------------------------------


def _aged_bare_pods() -> list[Obj]:
    """Two bare pods that may be evicted (the evict annotation lifts DefaultEvictor's bare-pod rule), created
    at 00:00 and 00:10."""
    old = make_pod("old").req(cpu="1").node("a").running().created("2024-01-01T00:00:00Z")
    young = make_pod("young").req(cpu="1").node("b").running().created("2024-01-01T00:10:00Z")
    return [
        make_node("a").obj(),
        make_node("b").obj(),
        old.annotate(EVICT_ANNOTATION).obj(),
        young.annotate(EVICT_ANNOTATION).obj(),
    ]


LIFETIME_600 = policy_doc("PodLifeTime", {"maxPodLifeTimeSeconds": 600}, "deschedule")


def test_a_bare_pod_has_no_replacement(on_snapshot: Callable[..., Run]) -> None:
    plan = on_snapshot(_aged_bare_pods(), LIFETIME_600, "--now", "2024-01-01T00:15:00Z", "-o", "json").plan()
    assert plan == {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "DeschedulingPlan",
        "evictions": [
            {
                "pod": {"namespace": "default", "name": "old"},
                "node": "a",
                "plugin": "PodLifeTime",
                "replacement": None,
            }
        ],
        "nodes": [
            {"name": "a", "before": usage(0.25, 0.0, 0.009091), "after": usage(0.0, 0.0, 0.0)},
            {"name": "b", "before": usage(0.25, 0.0, 0.009091), "after": usage(0.25, 0.0, 0.009091)},
        ],
    }
    table = on_snapshot(_aged_bare_pods(), LIFETIME_600, "--now", "2024-01-01T00:15:00Z")
    assert table.stdout == (
        "NAMESPACE   POD   NODE   PLUGIN        REPLACEMENT   NEW NODE\n"
        "default     old   a      PodLifeTime   <none>        <none>\n"
        "\n"
        "NODE   CPU       MEMORY   PODS\n"
        "a      25%->0%   0%       1%->0%\n"
        "b      25%       0%       1%\n"
    )


@pytest.mark.parametrize(
    ("now", "evicted"),
    [
        ("2024-01-01T00:05:00Z", []),  # old is 300s old, young not yet created
        ("2024-01-01T00:10:00Z", []),  # old is exactly 600s old: not more than maxPodLifeTimeSeconds
        ("2024-01-01T00:10:01Z", ["old"]),
        ("2024-01-01T00:15:00Z", ["old"]),  # young is 300s old
        ("2024-01-01T00:20:01Z", ["old", "young"]),  # oldest first
    ],
)
def test_now_decides_the_ages_podlifetime_sees(
    on_snapshot: Callable[..., Run], now: str, evicted: list[str]
) -> None:
    plan = on_snapshot(_aged_bare_pods(), LIFETIME_600, "--now", now, "-o", "json").plan()
    assert [e["pod"]["name"] for e in plan["evictions"]] == evicted


def test_without_now_the_wall_clock_decides(on_snapshot: Callable[..., Run]) -> None:
    # both pods were created in 2024: far more than 600s before the wall clock
    plan = on_snapshot(_aged_bare_pods(), LIFETIME_600, "-o", "json").plan()
    assert [e["pod"]["name"] for e in plan["evictions"]] == ["old", "young"]


def test_a_now_with_an_offset_is_the_same_instant(on_snapshot: Callable[..., Run]) -> None:
    # 01:10:01+01:00 is 00:10:01Z: old is 601s old
    plan = on_snapshot(
        _aged_bare_pods(), LIFETIME_600, "--now", "2024-01-01T01:10:01+01:00", "-o", "json"
    ).plan()
    assert [e["pod"]["name"] for e in plan["evictions"]] == ["old"]


def test_restart_counts_and_owner_uids_are_what_the_cycle_sees(on_snapshot: Callable[..., Run]) -> None:
    # the ReplicaSet's given uid links its pods: it recreates the two evicted ones (no extra pods at load)
    objects = [
        make_node("a").obj(),
        make_node("b").obj(),
        replica_set("web", "rs-web-uid", 3),
        web_pod("w1", "a", 3),
        web_pod("w2", "a", 10),
        web_pod("w3", "b", 5),
    ]
    policy = policy_doc("RemovePodsHavingTooManyRestarts", {"podRestartThreshold": 5}, "deschedule")
    plan = on_snapshot(objects, policy, "--now", "2024-01-01T01:00:00Z", "-o", "json").plan()
    assert plan == {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "DeschedulingPlan",
        "evictions": [
            {
                "pod": {"namespace": "default", "name": "w2"},
                "node": "a",
                "plugin": "RemovePodsHavingTooManyRestarts",
                "replacement": {"namespace": "default", "name": "web-cb76t", "node": "b"},
            },
            {
                "pod": {"namespace": "default", "name": "w3"},
                "node": "b",
                "plugin": "RemovePodsHavingTooManyRestarts",
                "replacement": {"namespace": "default", "name": "web-bqdcf", "node": "b"},
            },
        ],
        "nodes": [
            {"name": "a", "before": usage(0.5, 0.0, 0.018182), "after": usage(0.25, 0.0, 0.009091)},
            {"name": "b", "before": usage(0.25, 0.0, 0.009091), "after": usage(0.5, 0.0, 0.018182)},
        ],
    }


def test_restart_counts_of_init_containers_count_only_when_asked(on_snapshot: Callable[..., Run]) -> None:
    pod = web_pod("w1", "a", 1)
    pod["status"]["initContainerStatuses"] = [
        {"name": "init", "ready": True, "restartCount": 7, "image": "busybox", "imageID": ""}
    ]
    objects = [make_node("a").obj(), make_node("b").obj(), replica_set("web", "rs-web-uid", 1), pod]
    plain = policy_doc("RemovePodsHavingTooManyRestarts", {"podRestartThreshold": 5}, "deschedule")
    with_init = policy_doc(
        "RemovePodsHavingTooManyRestarts",
        {"podRestartThreshold": 5, "includingInitContainers": True},
        "deschedule",
    )
    assert on_snapshot(objects, plain, "--now", NOW, "-o", "json").plan()["evictions"] == []
    evicted = on_snapshot(objects, with_init, "--now", NOW, "-o", "json").plan()["evictions"]
    assert [e["pod"]["name"] for e in evicted] == ["w1"]


def _failed(name: str, reason: str) -> Obj:
    """A Failed pod of ReplicaSet ``web`` on node a whose container was terminated for `reason` at 00:30."""
    terminated = {
        "exitCode": 137,
        "reason": reason,
        "startedAt": "2024-01-01T00:00:00Z",
        "finishedAt": "2024-01-01T00:30:00Z",
    }
    status = {"name": "c", "ready": False, "restartCount": 0, "image": "busybox", "imageID": ""}
    return (
        make_pod(name)
        .label(app="web")
        .req(cpu="1")
        .node("a")
        .phase("Failed")
        .created("2024-01-01T00:00:00Z")
        .owner("ReplicaSet", "web", "rs-web-uid")
        .status(containerStatuses=[{**status, "state": {"terminated": terminated}}])
        .obj()
    )


@pytest.mark.parametrize(
    ("now", "evicted"),
    # upstream evicts from minPodLifetimeSeconds on (an age of exactly 3600s is enough)
    [("2024-01-01T00:59:59Z", []), ("2024-01-01T01:00:00Z", ["oom"])],
)
def test_phase_and_termination_reasons_are_what_remove_failed_pods_sees(
    on_snapshot: Callable[..., Run], now: str, evicted: list[str]
) -> None:
    # the ReplicaSet already replaced its failed pods (web-1 runs): evicting a Failed pod replaces nothing
    objects = [
        make_node("a").obj(),
        make_node("b").obj(),
        replica_set("web", "rs-web-uid", 1),
        _failed("oom", "OOMKilled"),
        _failed("err", "Error"),
        web_pod("web-1", "b", 0),
    ]
    policy = policy_doc(
        "RemoveFailedPods", {"reasons": ["OOMKilled"], "minPodLifetimeSeconds": 3600}, "deschedule"
    )
    plan = on_snapshot(objects, policy, "--now", now, "-o", "json").plan()
    assert plan["evictions"] == [
        {
            "pod": {"namespace": "default", "name": name},
            "node": "a",
            "plugin": "RemoveFailedPods",
            "replacement": None,
        }
        for name in evicted
    ]
    # Failed pods hold nothing: a is empty before and after
    assert plan["nodes"] == [
        {"name": "a", "before": usage(0.0, 0.0, 0.0), "after": usage(0.0, 0.0, 0.0)},
        {"name": "b", "before": usage(0.25, 0.0, 0.009091), "after": usage(0.25, 0.0, 0.009091)},
    ]


def test_node_conditions_are_kept(on_snapshot: Callable[..., Run]) -> None:
    # b is NotReady in the snapshot: one Ready node is no cluster to deschedule
    not_ready = make_node("b").obj()
    not_ready["status"]["conditions"] = [
        {
            "type": "Ready",
            "status": "False",
            "reason": "KubeletNotReady",
            "lastTransitionTime": "2024-01-01T00:00:00Z",
        }
    ]
    old = make_pod("old").req(cpu="1").node("a").running().created("2024-01-01T00:00:00Z")
    policy = policy_doc("PodLifeTime", {"maxPodLifeTimeSeconds": 60}, "deschedule")
    objects = [make_node("a").obj(), not_ready, old.annotate(EVICT_ANNOTATION).obj()]
    plan = on_snapshot(objects, policy, "--now", "2024-01-01T01:00:00Z", "-o", "json").plan()
    assert plan["evictions"] == []
    objects[1] = make_node("b").obj()
    plan = on_snapshot(objects, policy, "--now", "2024-01-01T01:00:00Z", "-o", "json").plan()
    assert [e["pod"]["name"] for e in plan["evictions"]] == ["old"]


def test_a_terminating_pod_in_the_snapshot_is_not_evicted(on_snapshot: Callable[..., Run]) -> None:
    # w1 was being deleted when the snapshot was taken: DefaultEvictor keeps terminating pods ("pod is
    # terminating"), so the plan must not list it, however many restarts it has
    terminating = web_pod("w1", "a", 10)
    terminating["metadata"]["deletionTimestamp"] = "2024-01-01T00:59:50Z"
    terminating["metadata"]["deletionGracePeriodSeconds"] = 30
    objects = [
        make_node("a").obj(),
        make_node("b").obj(),
        replica_set("web", "rs-web-uid", 2),
        terminating,
        web_pod("w2", "b", 0),
    ]
    policy = policy_doc("RemovePodsHavingTooManyRestarts", {"podRestartThreshold": 5}, "deschedule")
    plan = on_snapshot(objects, policy, "--now", "2024-01-01T01:00:00Z", "-o", "json").plan()
    assert plan["evictions"] == []


def test_a_replacement_that_cannot_be_placed_stays_pending(on_snapshot: Callable[..., Run]) -> None:
    # a is cordoned, b is full: the ReplicaSet's new pod has nowhere to go
    objects = [
        make_node("a").unschedulable().obj(),
        make_node("b").obj(),
        replica_set("web", "rs-web-uid", 1),
        web_pod("w1", "a", 10),
        make_pod("big").req(cpu="4").node("b").running().obj(),
    ]
    policy = policy_doc("RemovePodsHavingTooManyRestarts", {"podRestartThreshold": 5}, "deschedule")
    plan = on_snapshot(objects, policy, "--now", NOW, "-o", "json").plan()
    assert plan["evictions"] == [
        {
            "pod": {"namespace": "default", "name": "w1"},
            "node": "a",
            "plugin": "RemovePodsHavingTooManyRestarts",
            "replacement": {"namespace": "default", "name": "web-cb76t", "node": None},
        }
    ]
    assert plan["nodes"] == [
        {"name": "a", "before": usage(0.25, 0.0, 0.009091), "after": usage(0.0, 0.0, 0.0)},
        {"name": "b", "before": usage(1.0, 0.0, 0.009091), "after": usage(1.0, 0.0, 0.009091)},
    ]
    table = on_snapshot(objects, policy, "--now", NOW)
    assert table.stdout == (
        "NAMESPACE   POD   NODE   PLUGIN                            REPLACEMENT   NEW NODE\n"
        "default     w1    a      RemovePodsHavingTooManyRestarts   web-cb76t     <pending>\n"
        "\n"
        "NODE   CPU       MEMORY   PODS\n"
        "a      25%->0%   0%       1%->0%\n"
        "b      100%      0%       1%\n"
    )


# --- owners Berth does not model, resources -----------------------------------------------------------------


def _owned(name: str, kind: str, node: str, created: str) -> Obj:
    return (
        make_pod(name)
        .req(cpu="500m")
        .node(node)
        .running()
        .created(created)
        .owner(kind, f"{name}-owner", f"{name}-owner-uid")
        .obj()
    )


def test_owners_of_unmodelled_kinds_follow_the_evictor_rules(on_snapshot: Callable[..., Run]) -> None:
    mirror = _owned("static-web-a", "Node", "a", "2024-01-01T00:00:00Z")
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "hash"}
    trainer = (
        make_pod("trainer")
        .req(cpu="1", memory="2Gi")
        .lim({GPU: "1"})
        .node("a")
        .running()
        .created("2024-01-01T00:00:04Z")
        .owner("Job", "train", "train-uid")
        .obj()
    )
    objects = [
        make_node("a").gpu(2).obj(),
        make_node("b").obj(),
        mirror,
        _owned("ds", "DaemonSet", "a", "2024-01-01T00:00:01Z"),
        _owned("sts", "StatefulSet", "a", "2024-01-01T00:00:02Z"),
        _owned("job", "Job", "b", "2024-01-01T00:00:03Z"),
        trainer,
    ]
    policy = policy_doc("PodLifeTime", {"maxPodLifeTimeSeconds": 60}, "deschedule")
    plan = on_snapshot(objects, policy, "--now", "2024-01-01T01:00:00Z", "-o", "json").plan()
    # the DaemonSet's pod and the mirror pod stay (DefaultEvictor); nothing recreates the others in Berth
    assert plan == {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "DeschedulingPlan",
        "evictions": [
            {
                "pod": {"namespace": "default", "name": name},
                "node": node,
                "plugin": "PodLifeTime",
                "replacement": None,
            }
            for name, node in (("sts", "a"), ("job", "b"), ("trainer", "a"))
        ],
        "nodes": [
            {
                "name": "a",
                # static-web-a, ds, sts (500m each) and trainer (1 cpu, 2Gi, 1 gpu) of 4 cpu / 8Gi / 2 gpu
                "before": usage(0.625, 0.25, 0.036364, {GPU: 0.5}),
                "after": usage(0.25, 0.0, 0.018182, {GPU: 0.0}),
            },
            {
                "name": "b",
                "before": usage(0.125, 0.0, 0.009091, {GPU: 0.0}),
                "after": usage(0.0, 0.0, 0.0, {GPU: 0.0}),
            },
        ],
    }
    table = on_snapshot(objects, policy, "--now", "2024-01-01T01:00:00Z")
    assert table.stdout == (
        "NAMESPACE   POD       NODE   PLUGIN        REPLACEMENT   NEW NODE\n"
        "default     sts       a      PodLifeTime   <none>        <none>\n"
        "default     job       b      PodLifeTime   <none>        <none>\n"
        "default     trainer   a      PodLifeTime   <none>        <none>\n"
        "\n"
        "NODE   CPU        MEMORY    PODS     NVIDIA.COM/GPU\n"
        "a      62%->25%   25%->0%   4%->2%   50%->0%\n"
        "b      12%->0%    0%        1%->0%   0%\n"
    )


def test_daemon_set_pods_move_when_the_evictor_allows_it(on_snapshot: Callable[..., Run]) -> None:
    objects = [
        make_node("a").obj(),
        make_node("b").obj(),
        _owned("ds", "DaemonSet", "a", "2024-01-01T00:00:01Z"),
    ]
    policy = policy_doc(
        "PodLifeTime", {"maxPodLifeTimeSeconds": 60}, "deschedule", evictor={"evictDaemonSetPods": True}
    )
    plan = on_snapshot(objects, policy, "--now", "2024-01-01T01:00:00Z", "-o", "json").plan()
    assert plan["evictions"] == [
        {
            "pod": {"namespace": "default", "name": "ds"},
            "node": "a",
            "plugin": "PodLifeTime",
            "replacement": None,
        }
    ]


def test_extended_resources_are_listed_only_when_a_pod_requests_one(on_snapshot: Callable[..., Run]) -> None:
    # the nodes have GPUs, no pod asks for one: cpu, memory and pods only
    objects = [
        make_node("a").gpu(2).capacity({"example.com/fpga": "4"}).obj(),
        make_node("b").gpu(2).obj(),
        make_pod("p").req(cpu="2", memory="4Gi").node("a").running().obj(),
    ]
    policy = policy_doc("PodLifeTime", {"maxPodLifeTimeSeconds": 60}, "deschedule")
    plan = on_snapshot(objects, policy, "--now", NOW, "-o", "json").plan()
    assert plan["nodes"] == [
        {"name": "a", "before": usage(0.5, 0.5, 0.009091), "after": usage(0.5, 0.5, 0.009091)},
        {"name": "b", "before": usage(0.0, 0.0, 0.0), "after": usage(0.0, 0.0, 0.0)},
    ]
    # two extended resources requested: both listed, sorted, on every node (0 where it has none)
    objects.append(make_pod("q").req({"example.com/fpga": "1", GPU: "1"}).node("a").running().obj())
    plan = on_snapshot(objects, policy, "--now", NOW, "-o", "json").plan()
    both = usage(0.5, 0.5, 0.018182, {"example.com/fpga": 0.25, GPU: 0.5})
    none = usage(0.0, 0.0, 0.0, {"example.com/fpga": 0.0, GPU: 0.0})
    assert plan["nodes"] == [
        {"name": "a", "before": both, "after": both},
        {"name": "b", "before": none, "after": none},
    ]
    assert list(plan["nodes"][0]["before"]) == ["cpu", "memory", "pods", "example.com/fpga", GPU]


def test_finished_pods_hold_no_resources(on_snapshot: Callable[..., Run]) -> None:
    objects = [
        make_node("a").obj(),
        make_node("b").obj(),
        make_pod("done").req(cpu="2").node("a").phase("Succeeded").obj(),
        make_pod("failed").req(cpu="2").node("a").phase("Failed").obj(),
        make_pod("run").req(cpu="1").node("b").running().obj(),
    ]
    policy = policy_doc("PodLifeTime", {"maxPodLifeTimeSeconds": 60}, "deschedule")
    plan = on_snapshot(objects, policy, "--now", NOW, "-o", "json").plan()
    assert plan["nodes"] == [
        {"name": "a", "before": usage(0.0, 0.0, 0.0), "after": usage(0.0, 0.0, 0.0)},
        {"name": "b", "before": usage(0.25, 0.0, 0.009091), "after": usage(0.25, 0.0, 0.009091)},
    ]


# --- bad input ----------------------------------------------------------------------------------------------

V2 = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy"}
SKEWED = {"cpu": 20, "memory": 20, "pods": 20}
TARGETS = {"cpu": 50, "memory": 50, "pods": 50}


def _scenario() -> Obj:
    return yaml.safe_load((EXAMPLE / "02-scale-out.yaml").read_text())


def _node_with_uid(name: str, uid: str) -> Obj:
    node = make_node(name).obj()
    node["metadata"]["uid"] = uid
    return node


def _dup_uid_cluster() -> list[Obj]:
    return [
        _node_with_uid("a", "node-uid"),
        _node_with_uid("b", "shared-uid"),
        make_pod("p").node("a").uid("shared-uid").running().obj(),
    ]


# (id, policy: a document / raw text / None for no file, cluster objects or None for the example snapshot,
#  extra arguments, the message after "error: " with {policy} and {cluster} for the files' paths)
BAD: list[tuple[str, Obj | str | None, list[Obj] | None, list[str], str]] = [
    (
        "unknown-plugin-in-plugin-config",
        policy_doc("LowNodeUtilisation", {}, "balance", profile="balance"),
        None,
        [],
        "{policy}: profile \"balance\": plugin 'LowNodeUtilisation' in pluginConfig not registered "
        '(did you mean "LowNodeUtilization"?)',
    ),
    (
        "unknown-plugin-enabled",
        {
            **V2,
            "profiles": [
                {
                    "name": "balance",
                    "pluginConfig": [],
                    "plugins": {"balance": {"enabled": ["HighNodeUtilisation"]}},
                }
            ],
        },
        None,
        [],
        "{policy}: profile \"balance\": profile 'balance' configures balance extension point of non-existing "
        "plugins: 'HighNodeUtilisation' (did you mean \"HighNodeUtilization\"?)",
    ),
    (
        "plugin-at-a-point-it-does-not-serve",
        policy_doc("PodLifeTime", {"maxPodLifeTimeSeconds": 60}, "balance", profile="life"),
        None,
        [],
        # upstream's words; no "did you mean" naming the very plugin written
        "{policy}: profile \"life\": profile 'life' configures balance extension point of non-existing "
        "plugins: 'PodLifeTime'",
    ),
    (
        "enabled-without-plugin-config",
        {
            **V2,
            "profiles": [
                {"name": "life", "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}}},
            ],
        },
        None,
        [],
        '{policy}: profile "life": plugin "PodLifeTime" is enabled at deschedule but has no pluginConfig '
        "entry (unable to find 'PodLifeTime' plugin config)",
    ),
    (
        "unknown-strategy-arg",
        lnu_policy(SKEWED, TARGETS, numberOfNode=2),
        None,
        [],
        '{policy}: profile "balance": plugin "LowNodeUtilization": args: strict decoding error: unknown field '
        '"numberOfNode" (did you mean "numberOfNodes"?)',
    ),
    (
        "unknown-evictor-arg",
        policy_doc(
            "PodLifeTime",
            {"maxPodLifeTimeSeconds": 60},
            "deschedule",
            evictor={"nodefit": True},
            profile="life",
        ),
        None,
        [],
        '{policy}: profile "life": plugin "DefaultEvictor": args: strict decoding error: unknown field "nodefit" '
        '(did you mean "nodeFit"?)',
    ),
    (
        "threshold-above-100",
        lnu_policy(SKEWED, {"cpu": 120, "memory": 50, "pods": 50}),
        None,
        [],
        '{policy}: profile "balance": plugin "LowNodeUtilization": args.targetThresholds.cpu: '
        "120 is out of range 0-100",
    ),
    (
        "threshold-below-0",
        lnu_policy({"cpu": -1, "memory": 20, "pods": 20}, TARGETS),
        None,
        [],
        '{policy}: profile "balance": plugin "LowNodeUtilization": args.thresholds.cpu: '
        "-1 is out of range 0-100",
    ),
    (
        "thresholds-above-targets",
        lnu_policy({"cpu": 60, "memory": 20, "pods": 20}, TARGETS),
        None,
        [],
        '{policy}: profile "balance": plugin "LowNodeUtilization": args.thresholds.cpu: '
        "60 is greater than targetThresholds.cpu (50)",
    ),
    (
        "mismatched-resource-keys",
        lnu_policy({"cpu": 20, "memory": 20}, {"cpu": 50}),
        None,
        [],
        '{policy}: profile "balance": plugin "LowNodeUtilization": args.targetThresholds: thresholds and '
        "targetThresholds configured different resources (thresholds: cpu, memory; targetThresholds: cpu)",
    ),
    ("missing-policy", None, None, [], "--policy: a DeschedulerPolicy file is required"),
    (
        "priority-threshold-naming-no-class",
        policy_doc(
            "PodLifeTime",
            {"maxPodLifeTimeSeconds": 60},
            "deschedule",
            evictor={"priorityThreshold": {"name": "no-such-class"}},
            profile="life",
        ),
        None,
        ["--now", NOW],
        # known only once the cluster is read (upstream: "unable to get priority value from the priority class")
        '{policy}: profile "life": plugin "DefaultEvictor": args.priorityThreshold.name: unable to get priority '
        'value from the priority class: priorityclasses.scheduling.k8s.io "no-such-class" not found',
    ),
    (
        "invalid-object-in-the-snapshot",
        lnu_policy(SKEWED, TARGETS),
        [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}],
        [],
        # as berth simulate says it
        '{cluster}: Pod "default/p": spec.containers: Required value',
    ),
    (
        "unknown-kind-in-the-snapshot",
        lnu_policy(SKEWED, TARGETS),
        [
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Rollout",
                "metadata": {"name": "s"},
                "spec": {"replicas": 1},
            }
        ],
        [],
        '{cluster}: Rollout "s": apiVersion/kind: Unsupported value: "argoproj.io/v1alpha1, Kind=Rollout"',
    ),
    (
        "unreadable-policy",
        None,
        None,
        ["--policy", "{cluster}.missing"],
        "{cluster}.missing: cannot read the descheduler policy: No such file or directory",
    ),
    (
        "invalid-yaml",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: [\n",
        None,
        [],
        "{policy}: not valid YAML: while parsing a flow node\n"
        "expected the node content, but found '<stream end>'\n"
        '  in "<unicode string>", line 4, column 1:\n'
        "    \n"
        "    ^",
    ),
    (
        "not-an-object",
        "- profiles\n",
        None,
        [],
        "{policy}: a DeschedulerPolicy must be a YAML/JSON object",
    ),
    (
        "v1alpha1",
        {
            "apiVersion": "descheduler/v1alpha1",
            "kind": "DeschedulerPolicy",
            "strategies": {"LowNodeUtilization": {"enabled": True}},
        },
        None,
        [],
        "{policy}: DeschedulerPolicy.apiVersion: unsupported 'descheduler/v1alpha1': must be "
        "'descheduler/v1alpha2' (the v1alpha1 strategies format was removed upstream; write profiles)",
    ),
    (
        "wrong-kind",
        {"apiVersion": "descheduler/v1alpha2", "kind": "KubeSchedulerConfiguration"},
        None,
        [],
        "{policy}: DeschedulerPolicy.kind: must be 'DeschedulerPolicy', not 'KubeSchedulerConfiguration'",
    ),
    (
        "unknown-policy-field",
        {**V2, "maxNoOfPodsToEvictPerNodes": 2},
        None,
        [],
        '{policy}: DeschedulerPolicy: strict decoding error: unknown field "maxNoOfPodsToEvictPerNodes" '
        '(did you mean "maxNoOfPodsToEvictPerNode"?)',
    ),
    (
        "scenario",
        lnu_policy(SKEWED, TARGETS),
        [_scenario()],
        [],
        "{cluster}: berth deschedule reads cluster objects, not a Scenario",
    ),
    (
        "bad-now",
        lnu_policy(SKEWED, TARGETS),
        None,
        ["--now", "yesterday"],
        '--now: invalid time "yesterday" (expected RFC 3339, e.g. 2024-01-01T00:00:00Z)',
    ),
    (
        "duplicate-uid",
        lnu_policy(SKEWED, TARGETS),
        _dup_uid_cluster(),
        ["--now", NOW],
        'Pod "p" is invalid: metadata.uid: Duplicate value: "shared-uid"',
    ),
]


@pytest.mark.parametrize(
    ("policy", "objects", "args", "message"), [c[1:] for c in BAD], ids=[c[0] for c in BAD]
)
def test_bad_input_exits_2_naming_profile_plugin_and_field(
    tmp_path: Path, policy: Obj | str | None, objects: list[Obj] | None, args: list[str], message: str
) -> None:
    if objects is None:
        cluster = SNAPSHOT
    else:
        cluster = tmp_path / "cluster.yaml"
        cluster.write_text(yaml.safe_dump_all(objects))
    pol = tmp_path / "policy.yaml"
    argv = [str(cluster)]
    if policy is not None:
        pol.write_text(policy if isinstance(policy, str) else yaml.safe_dump(policy))
        argv += ["--policy", str(pol)]
    argv += [a.format(cluster=cluster) for a in args]
    run = deschedule(*argv)
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == "error: " + message.format(policy=pol, cluster=cluster) + "\n"


def test_a_policy_that_is_a_directory_is_unreadable(tmp_path: Path) -> None:
    run = deschedule(str(SNAPSHOT), "--policy", str(tmp_path))
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == f"error: {tmp_path}: cannot read the descheduler policy: Is a directory\n"


def test_a_bad_scheduler_config_exits_2(tmp_path: Path) -> None:
    run = deschedule(
        str(SNAPSHOT), "--policy", str(POLICY), "--scheduler-config", str(tmp_path / "none.yaml")
    )
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == f"error: {tmp_path / 'none.yaml'}: No such file or directory\n"


def test_a_missing_kubeconfig_exits_2(tmp_path: Path) -> None:
    run = deschedule("--policy", str(POLICY), "--kubeconfig", str(tmp_path / "kubeconfig"))
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == f"error: {tmp_path / 'kubeconfig'}: No such file or directory\n"


def test_an_unreachable_server_exits_1() -> None:
    # nothing listens on port 1: reported as kubectl reports it, the cluster left alone
    run = deschedule("--policy", str(POLICY), "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify")
    assert (run.exit_code, run.stdout) == (1, "")
    assert run.stderr == (
        "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n"
    )
