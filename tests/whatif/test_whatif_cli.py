"""``berth whatif`` on snapshots, through the command line: a pod that fits (and where), one that does not (kube's
grouped message, the per-node reasons, the changes tried on a copy), preemption victims, gangs (all or
nothing), a Reservation's placement, ElasticQuota headroom and borrowing, nodes to add, the example of
``examples/whatif`` and every kind of bad input (exit 2 with one line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from berth.cli import app
from builders import make_node, make_pod

Obj = dict[str, Any]

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "whatif"
GANG_CONFIG = ROOT / "examples" / "gang-scheduler-config.yaml"
QUOTA_CONFIG = ROOT / "examples" / "elasticquota-scheduler-config.yaml"
GROUP = "scheduling.x-k8s.io/pod-group"


def whatif(*argv: str) -> tuple[int, str, str]:
    """``berth whatif ARGV...`` in-process: exit code, stdout, stderr."""
    result = CliRunner().invoke(app, ["whatif", *argv])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def write(path: Path, *objects: Obj) -> str:
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def doc(*argv: str) -> Obj:
    """The ``-o json`` answer (the command must succeed, silently on stderr)."""
    code, out, err = whatif(*argv, "-o", "json")
    assert (code, err) == (0, ""), err
    answer: Obj = json.loads(out)
    return answer


def cluster() -> list[Obj]:
    """node-1 (4 cpu, 3 requested), node-2 (2 cpu, free), gpu-1 (8 cpu, tainted), PriorityClass high (1000)."""
    return [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
        make_node("node-1").capacity(cpu="4", memory="8Gi").obj(),
        make_node("node-2").capacity(cpu="2", memory="8Gi").obj(),
        make_node("gpu-1").capacity(cpu="8", memory="8Gi").taint("dedicated", "gpu").obj(),
        make_pod("busy").req(cpu="3").node("node-1").running().obj(),
    ]


@pytest.fixture
def snap(tmp_path: Path) -> str:
    return write(tmp_path / "cluster.yaml", *cluster())


NOT_FIT_MESSAGE = (
    "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. "
    "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
    "2 No preemption victims found for incoming pod."
)


# --- fits ---------------------------------------------------------------------------------------------------


def test_a_pod_that_fits_goes_to_the_only_node_with_room(snap: str, tmp_path: Path) -> None:
    pod = write(tmp_path / "pod.yaml", make_pod("web").req(cpu="1500m").obj())
    assert whatif(snap, "--pod", pod) == (0, "Pod default/web fits: node-2\n", "")
    assert doc(snap, "--pod", pod) == {
        "kind": "Pod",
        "subject": "Pod default/web",
        "fits": True,
        "node": "node-2",
        "nodes": {"default/web": "node-2"},
        "nominatedNodes": {},
        "victims": [],
        "quotaBorrowed": {},
        "reasons": [],
        "message": "",
        "suggestions": [],
    }


def test_a_pod_that_does_not_fit_gets_kubes_message_reasons_and_changes(snap: str, tmp_path: Path) -> None:
    pod = write(tmp_path / "pod.yaml", make_pod("big").req(cpu="3").obj())
    code, out, err = whatif(snap, "--pod", pod)
    assert (code, err) == (0, "")
    assert out == (
        "Pod default/big does not fit.\n"
        f"{NOT_FIT_MESSAGE}\n"
        "\n"
        "NODES   REASON\n"
        "1       node(s) had untolerated taint {dedicated: gpu}\n"
        "2       Insufficient cpu\n"
        "\n"
        "It would fit with any one of these changes (each tried on a copy of the cluster):\n"
        "- priorityClassName high (priority 1000): on node-1\n"
        "  evicting:\n"
        "    NAMESPACE   POD    NODE     PRIORITY\n"
        "    default     busy   node-1   0\n"
        "- add 1 node(s) like node-1 (cpu 4, memory 8Gi, pods 110): on node-1-new-1\n"
    )
    answer = doc(snap, "--pod", pod)
    assert answer["fits"] is False
    assert answer["node"] is None
    assert answer["nodes"] == {"default/big": None}
    assert answer["message"] == NOT_FIT_MESSAGE
    assert answer["reasons"] == [
        {"reason": "node(s) had untolerated taint {dedicated: gpu}", "nodes": 1},
        {"reason": "Insufficient cpu", "nodes": 2},
    ]
    assert answer["suggestions"] == [
        {
            "kind": "priority",
            "summary": "priorityClassName high (priority 1000)",
            "priorityClassName": "high",
            "priority": 1000,
            "fits": True,
            "nodes": {"default/big": "node-1"},
            "victims": [{"namespace": "default", "name": "busy", "node": "node-1", "priority": 0}],
        },
        {
            "kind": "nodes",
            "summary": "add 1 node(s) like node-1 (cpu 4, memory 8Gi, pods 110)",
            "count": 1,
            "like": "node-1",
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "added": ["node-1-new-1"],
            "fits": True,
            "nodes": {"default/big": "node-1-new-1"},
            "victims": [],
        },
    ]


def test_a_higher_priority_pod_fits_by_preempting(snap: str, tmp_path: Path) -> None:
    pod = write(tmp_path / "pod.yaml", make_pod("urgent").req(cpu="3").priority_class("high").obj())
    code, out, err = whatif(snap, "--pod", pod)
    assert (code, err) == (0, "")
    assert out == (
        "Pod default/urgent fits: node-1\n"
        "Preempts 1 pod(s):\n"
        "  NAMESPACE   POD    NODE     PRIORITY\n"
        "  default     busy   node-1   0\n"
    )
    answer = doc(snap, "--pod", pod)
    assert (answer["fits"], answer["node"]) == (True, "node-1")
    assert answer["victims"] == [{"namespace": "default", "name": "busy", "node": "node-1", "priority": 0}]
    assert answer["suggestions"] == []


def test_no_existing_class_is_enough_then_the_highest_user_priority_is_tried(tmp_path: Path) -> None:
    # the only class above the pod (500) cannot preempt "mid" (priority 600): a class of 1e9 can
    objs = [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "low-ish"},
            "value": 500,
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "mid"},
            "value": 600,
        },
        make_node("node-1").capacity(cpu="2").obj(),
        make_pod("running").req(cpu="2").priority(600).priority_class("mid").node("node-1").running().obj(),
    ]
    snap = write(tmp_path / "cluster.yaml", *objs)
    pod = write(tmp_path / "pod.yaml", make_pod("p").req(cpu="1").obj())
    (priority, nodes) = doc(snap, "--pod", pod)["suggestions"]
    assert priority == {
        "kind": "priority",
        "summary": "a PriorityClass of value 1000000000 (no existing class above 0 is enough)",
        "priorityClassName": None,
        "priority": 1000000000,
        "fits": True,
        "nodes": {"default/p": "node-1"},
        "victims": [{"namespace": "default", "name": "running", "node": "node-1", "priority": 600}],
    }
    assert (nodes["kind"], nodes["count"], nodes["added"]) == ("nodes", 1, ["node-1-new-1"])


# --- gangs --------------------------------------------------------------------------------------------------


def gang_pods(cpu: str, n: int = 3) -> list[Obj]:
    return [make_pod(f"g1-{i}").req(cpu=cpu).label({GROUP: "g1"}).obj() for i in range(n)]


POD_GROUP = {
    "apiVersion": "scheduling.x-k8s.io/v1alpha1",
    "kind": "PodGroup",
    "metadata": {"name": "g1", "namespace": "default"},
    "spec": {"minMember": 3},
}


def test_a_gang_that_fits_only_partially_does_not_fit(snap: str, tmp_path: Path) -> None:
    # room for two pods of 1500m (node-2, and node-1... no: node-1 has 1 cpu left): one only
    gang = write(tmp_path / "gang.yaml", POD_GROUP, *gang_pods("1500m"))
    answer = doc(snap, "--gang", gang, "--scheduler-config", str(GANG_CONFIG))
    assert answer["kind"] == "PodGroup"
    assert answer["subject"] == "Gang default/g1 (3 pods)"
    assert answer["fits"] is False
    # Coscheduling: the member that had room waits at Permit and is rejected with its gang
    assert answer["nodes"] == {"default/g1-0": None, "default/g1-1": None, "default/g1-2": None}
    assert answer["message"].startswith(NOT_FIT_MESSAGE.removesuffix(".") + ".,")
    assert "PodGroup default/g1 gets rejected" in answer["message"]
    # without Coscheduling the pods are placed one by one; the answer is still all or nothing
    code, out, err = whatif(snap, "--gang", gang)
    assert (code, err) == (
        0,
        "warning: no scheduler profile enables Coscheduling: the gang's pods were placed one by one "
        "(the answer still counts the gang all or nothing)\n",
    )
    assert out.splitlines()[:3] == [
        "Gang default/g1 (3 pods) does not fit.",
        "Only default/g1-0 on node-2 could be placed: the gang is all or nothing.",
        NOT_FIT_MESSAGE,
    ]


def test_a_gang_that_fits_lists_every_member(snap: str, tmp_path: Path) -> None:
    # no PodGroup in the file: one is made with minMember = the file's pods
    gang = write(tmp_path / "gang.yaml", *gang_pods("500m"))
    code, out, err = whatif(snap, "--gang", gang, "--scheduler-config", str(GANG_CONFIG))
    assert (code, err) == (0, "")
    assert out.startswith("Gang default/g1 (3 pods) fits: default/g1-0 on ")
    answer = doc(snap, "--gang", gang, "--scheduler-config", str(GANG_CONFIG))
    assert answer["fits"] is True
    assert answer["node"] is None
    assert sorted(answer["nodes"]) == ["default/g1-0", "default/g1-1", "default/g1-2"]
    assert all(answer["nodes"].values())


def test_nodes_to_add_for_a_gang_is_the_fewest_of_one_shape_verified(snap: str, tmp_path: Path) -> None:
    # three pods of 3 cpu: only node-1's shape (4 cpu) holds one, gpu-1's taint keeps them off: 3 new nodes
    gang = write(tmp_path / "gang.yaml", POD_GROUP, *gang_pods("3"))
    answer = doc(snap, "--gang", gang, "--scheduler-config", str(GANG_CONFIG))
    assert answer["fits"] is False
    kinds = [s["kind"] for s in answer["suggestions"]]
    assert kinds == ["nodes"]  # no priority frees three 3-cpu slots
    (nodes,) = answer["suggestions"]
    assert nodes["summary"] == "add 3 node(s) like node-1 (cpu 4, memory 8Gi, pods 110)"
    assert nodes["added"] == ["node-1-new-1", "node-1-new-2", "node-1-new-3"]
    assert nodes["fits"] is True
    assert sorted(nodes["nodes"].values()) == ["node-1-new-1", "node-1-new-2", "node-1-new-3"]


# --- reservations ---------------------------------------------------------------------------------------------


def reservation(name: str, cpu: str) -> Obj:
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}
            },
            "owners": [{"object": {"name": "web", "namespace": "default"}}],
        },
    }


def test_a_reservation_is_placed(snap: str, tmp_path: Path) -> None:
    res = write(tmp_path / "r.yaml", reservation("r1", "2"))
    assert whatif(snap, "--reservation", res) == (0, "Reservation r1 fits: node-2\n", "")
    answer = doc(snap, "--reservation", res)
    assert (answer["kind"], answer["fits"], answer["node"], answer["nodes"]) == (
        "Reservation",
        True,
        "node-2",
        {"r1": "node-2"},
    )


def test_a_reservation_that_does_not_fit_gets_nodes_only(snap: str, tmp_path: Path) -> None:
    res = write(tmp_path / "r.yaml", reservation("r1", "3"))
    answer = doc(snap, "--reservation", res)
    assert answer["fits"] is False
    assert answer["reasons"] == [
        {"reason": "node(s) had untolerated taint {dedicated: gpu}", "nodes": 1},
        {"reason": "Insufficient cpu", "nodes": 2},
    ]
    assert [(s["kind"], s["added"], s["nodes"]) for s in answer["suggestions"]] == [
        ("nodes", ["node-1-new-1"], {"r1": "node-1-new-1"})
    ]


# --- quotas ---------------------------------------------------------------------------------------------------


def quota(ns: str, min_: Obj, max_: Obj) -> Obj:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": f"quota-{ns}", "namespace": ns},
        "spec": {"min": min_, "max": max_},
    }


@pytest.fixture
def quota_snap(tmp_path: Path) -> str:
    objs = [
        make_node("node-1").capacity(cpu="8", memory="16Gi").obj(),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b"}},
        quota("team-a", {"cpu": "1", "memory": "2Gi"}, {"cpu": "2", "memory": "4Gi"}),
        quota("team-b", {"cpu": "4", "memory": "8Gi"}, {"cpu": "8", "memory": "16Gi"}),
        make_pod("a-1").ns("team-a").req(cpu="1", memory="1Gi").node("node-1").running().obj(),
    ]
    return write(tmp_path / "quota.yaml", *objs)


def test_missing_quota_headroom_in_exact_quantities(quota_snap: str, tmp_path: Path) -> None:
    pod = write(tmp_path / "pod.yaml", make_pod("train").ns("team-a").req(cpu="1500m", memory="3584Mi").obj())
    answer = doc(quota_snap, "--pod", pod, "--scheduler-config", str(QUOTA_CONFIG))
    assert answer["fits"] is False
    assert answer["message"] == (
        "0/1 nodes are available: Pod team-a/train is rejected in PreFilter because ElasticQuota team-a is "
        "more than Max. 0/1 nodes are available: 1 No victims found on node node-1 for preemptor pod train."
    )
    assert answer["reasons"] == [
        {
            "reason": "Pod team-a/train is rejected in PreFilter because ElasticQuota team-a is more than Max",
            "nodes": 1,
        }
    ]
    by_kind = {s["kind"]: s for s in answer["suggestions"]}
    # used 1 cpu / 1Gi + 1500m / 3.5Gi against max 2 / 4Gi: 500m and 512Mi short
    assert by_kind["quota"] == {
        "kind": "quota",
        "summary": "raise ElasticQuota team-a/quota-team-a max by cpu 500m, memory 512Mi",
        "quota": "team-a/quota-team-a",
        "field": "max",
        "missing": {"cpu": "500m", "memory": "512Mi"},
        "fits": True,
        "nodes": {"team-a/train": "node-1"},
        "victims": [],
    }
    # more nodes do not raise a quota
    assert "nodes" not in by_kind
    code, out, _ = whatif(quota_snap, "--pod", pod, "--scheduler-config", str(QUOTA_CONFIG))
    assert code == 0
    assert "- raise ElasticQuota team-a/quota-team-a max by cpu 500m, memory 512Mi: on node-1\n" in out


def test_quota_borrowed_beyond_min(quota_snap: str, tmp_path: Path) -> None:
    pod = write(tmp_path / "pod.yaml", make_pod("small").ns("team-a").req(cpu="500m", memory="1536Mi").obj())
    code, out, err = whatif(quota_snap, "--pod", pod, "--scheduler-config", str(QUOTA_CONFIG))
    assert (code, err) == (0, "")
    assert out == (
        "Pod team-a/small fits: node-1\n"
        "Borrows from other quotas through ElasticQuota team-a/quota-team-a: cpu 500m, memory 512Mi\n"
    )
    answer = doc(quota_snap, "--pod", pod, "--scheduler-config", str(QUOTA_CONFIG))
    assert answer["quotaBorrowed"] == {"team-a/quota-team-a": {"cpu": "500m", "memory": "512Mi"}}


# --- the example ------------------------------------------------------------------------------------------------

EXAMPLE_TABLE = """\
Pod default/report does not fit.
0/3 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 2 Insufficient cpu. \
preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims \
found for incoming pod.

NODES   REASON
1       node(s) had untolerated taint {nvidia.com/gpu: present}
2       Insufficient cpu

It would fit with any one of these changes (each tried on a copy of the cluster):
- priorityClassName batch-high (priority 1000): on node-2
  evicting:
    NAMESPACE   POD     NODE     PRIORITY
    default     web-2   node-2   0
- add 1 node(s) like node-1 (cpu 4, memory 16Gi, pods 110): on node-1-new-1
"""


def test_the_example() -> None:
    code, out, err = whatif(str(EXAMPLE / "snapshot.yaml"), "--pod", str(EXAMPLE / "pod.yaml"))
    assert (code, err) == (0, "")
    assert out == EXAMPLE_TABLE


def test_the_readme_shows_the_example_output() -> None:
    readme = (ROOT / "README.md").read_text()
    assert (
        "$ berth whatif examples/whatif/snapshot.yaml --pod examples/whatif/pod.yaml\n" + EXAMPLE_TABLE
        in readme
    )


def test_nothing_in_the_snapshot_file_changes(snap: str, tmp_path: Path) -> None:
    before = Path(snap).read_text()
    pod = write(tmp_path / "pod.yaml", make_pod("urgent").req(cpu="3").priority_class("high").obj())
    assert doc(snap, "--pod", pod)["fits"] is True
    assert Path(snap).read_text() == before


# --- bad input ---------------------------------------------------------------------------------------------------


def test_bad_input_exits_2_with_one_line(snap: str, tmp_path: Path) -> None:
    def error(*argv: str) -> str:
        code, out, err = whatif(*argv)
        assert (code, out) == (2, ""), (code, out, err)
        assert err.count("\n") == 1, err
        return err.removeprefix("error: ").rstrip("\n")

    pod = write(tmp_path / "pod.yaml", make_pod("web").req(cpu="1").obj())
    missing = str(tmp_path / "nope.yaml")
    assert error(snap, "--pod", missing) == f"{missing}: path does not exist"
    assert error(missing, "--pod", pod) == f"{missing}: path does not exist"
    assert error(snap) == "give exactly one of --pod, --gang and --reservation"
    assert error(snap, "--pod", pod, "--gang", pod) == "give exactly one of --pod, --gang and --reservation"
    node_file = write(tmp_path / "node.yaml", make_node("n9").obj())
    assert error(snap, "--pod", node_file) == (
        f'{node_file}: Node "n9": kind: Unsupported value: "Node" (--pod reads Pod objects)'
    )
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing\n")
    assert error(snap, "--pod", str(empty)) == f"{empty}: no Pod in the file"
    two = write(tmp_path / "two.yaml", make_pod("a").obj(), make_pod("b").obj())
    assert error(snap, "--pod", two) == (
        f'{two}#1: Pod "default/b": a second Pod (--pod takes one; --gang takes the pods of one gang)'
    )
    bad = write(tmp_path / "bad.yaml", make_pod("web").req(cpu="500x").obj())
    assert error(snap, "--pod", bad) == (
        f'{bad}: Pod "default/web": spec.containers[0].resources.requests.cpu: invalid quantity "500x"'
    )
    bound = write(tmp_path / "bound.yaml", make_pod("web").node("node-1").obj())
    assert error(snap, "--pod", bound) == (
        f'{bound}: Pod "default/web": spec.nodeName: Invalid value: "node-1": the pod is already assigned '
        "(a what-if pod is left to the scheduler)"
    )
    loose = write(tmp_path / "loose.yaml", POD_GROUP, make_pod("g1-0").obj())
    assert error(snap, "--gang", loose) == (
        f'{loose}#1: Pod "default/g1-0": metadata.labels["{GROUP}"]: Required value (--gang reads the pods of one PodGroup)'
    )
    mixed = write(
        tmp_path / "mixed.yaml",
        make_pod("a").label({GROUP: "g1"}).obj(),
        make_pod("b").label({GROUP: "g2"}).obj(),
    )
    assert error(snap, "--gang", mixed) == (
        f'{mixed}#1: Pod "default/b": metadata.labels["{GROUP}"]: Invalid value: "g2": not the gang default/g1 of the '
        "file's first pod"
    )
    assert error(snap, "--reservation", pod) == (
        f'{pod}: Pod "default/web": kind: Unsupported value: "Pod" (--reservation reads Reservation objects)'
    )
    unknown_class = write(tmp_path / "class.yaml", make_pod("web").priority_class("gold").obj())
    assert error(snap, "--pod", unknown_class) == (
        f'{unknown_class}: Pod "default/web": pods "web" is forbidden: no PriorityClass with name gold was found'
    )
    assert error(snap, "--pod", pod, "--now", "yesterday") == (
        '--now: invalid time "yesterday" (expected RFC 3339, e.g. 2024-01-01T00:00:00Z)'
    )


def test_a_pod_never_attempted_says_why(snap: str, tmp_path: Path) -> None:
    gated = write(tmp_path / "gated.yaml", make_pod("web").req(cpu="1").gate("example.com/wait").obj())
    assert whatif(snap, "--pod", gated) == (
        0,
        "Pod default/web does not fit.\n"
        "never attempted by the scheduler: default/web has spec.schedulingGates\n",
        "",
    )
    other = write(tmp_path / "other.yaml", make_pod("web").req(cpu="1").scheduler("my-scheduler").obj())
    answer = doc(snap, "--pod", other)
    assert (answer["fits"], answer["message"], answer["suggestions"]) == (
        False,
        'never attempted by the scheduler: no scheduler profile serves schedulerName "my-scheduler"',
        [],
    )


def test_a_subject_named_as_a_pending_pod_of_the_cluster_replaces_it(tmp_path: Path) -> None:
    # the cluster's pending "web" asks 8 cpu and cannot be placed; the file's "web" asks 1
    objs = [*cluster(), make_pod("web").req(cpu="8").obj()]
    snap = write(tmp_path / "cluster.yaml", *objs)
    pod = write(tmp_path / "pod.yaml", make_pod("web").req(cpu="1").obj())
    assert whatif(snap, "--pod", pod) == (0, "Pod default/web fits: node-2\n", "")


def test_a_scenario_is_not_a_cluster(tmp_path: Path) -> None:
    scenario = write(
        tmp_path / "scenario.yaml",
        {
            "apiVersion": "berth.dev/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": "s"},
            "spec": {"steps": []},
        },
    )
    pod = write(tmp_path / "pod.yaml", make_pod("web").obj())
    code, out, err = whatif(scenario, "--pod", pod)
    assert (code, out, err) == (
        2,
        "",
        f"error: {scenario}: berth whatif reads cluster objects, not a Scenario\n",
    )


def test_missing_total_min_is_added_to_the_pods_quota_min(tmp_path: Path) -> None:
    objs = [
        make_node("node-1").capacity(cpu="8", memory="16Gi").obj(),
        quota("team-a", {"cpu": "1"}, {"cpu": "8"}),
        quota("team-b", {"cpu": "1"}, {"cpu": "8"}),
        make_pod("a-1").ns("team-a").req(cpu="1").node("node-1").running().obj(),
        make_pod("b-1").ns("team-b").req(cpu="1").node("node-1").running().obj(),
    ]
    snap = write(tmp_path / "quota.yaml", *objs)
    pod = write(tmp_path / "pod.yaml", make_pod("more").ns("team-a").req(cpu="1500m").obj())
    answer = doc(snap, "--pod", pod, "--scheduler-config", str(QUOTA_CONFIG))
    assert answer["fits"] is False
    assert answer["reasons"] == [
        {
            "reason": "Pod team-a/more is rejected in PreFilter because total ElasticQuota used is more than min",
            "nodes": 1,
        }
    ]
    # 2 cpu used of a total min of 2: the pod's 1500m is missing, added to team-a's min (max stays 8)
    assert answer["suggestions"] == [
        {
            "kind": "quota",
            "summary": "raise ElasticQuota team-a/quota-team-a min by cpu 1500m",
            "quota": "team-a/quota-team-a",
            "field": "min",
            "missing": {"cpu": "1500m"},
            "fits": True,
            "nodes": {"team-a/more": "node-1"},
            "victims": [],
        }
    ]
