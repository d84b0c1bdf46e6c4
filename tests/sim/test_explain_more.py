"""Failures that explain themselves: Koordinator's reservation reasons in FailedScheduling (through
``berth simulate``), and ``berth explain`` on reservations, deleted pods, attempt numbers, --node and --top."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from conftest import Run
from typer.testing import CliRunner

from berth.cli import app
from builders import make_node, make_pod

KOORD = "koord-scheduler"
RESERVATION_API = "scheduling.koordinator.sh/v1alpha1"
OWNERS = [{"labelSelector": {"matchLabels": {"app": "a"}}}]
AFFINITY = "scheduling.koordinator.sh/reservation-affinity"
NO_VICTIMS = "preemption: 0/{n} nodes are available: {n} No preemption victims found for incoming pod."
NOT_HELPFUL = "preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."

# koord-scheduler with three scoring plugins, so the scores below follow from the formulas by hand
CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": KOORD,
            "plugins": {
                "multiPoint": {
                    "enabled": [
                        {"name": "PrioritySort"},
                        {"name": "NodeUnschedulable"},
                        {"name": "TaintToleration", "weight": 3},
                        {"name": "NodeResourcesFit", "weight": 1},
                        {"name": "Reservation", "weight": 5000},
                        {"name": "DefaultBinder"},
                    ],
                    "disabled": [{"name": "*"}],
                }
            },
        }
    ],
}


def reservation(
    name: str,
    cpu: str,
    node: str,
    *,
    policy: str | None = None,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
) -> dict[str, Any]:
    """A reservation of ``cpu`` (and 1Gi) pinned to ``node`` for pods labelled ``app: a``, kept after use."""
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"namespace": "default"},
            "spec": {
                "schedulerName": KOORD,
                "nodeName": node,
                "containers": [
                    {
                        "name": "c",
                        "image": "busybox",
                        "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}},
                    }
                ],
            },
        },
        "owners": OWNERS,
        "allocateOnce": False,
        "ttl": "1h",
    }
    if policy:
        spec["allocatePolicy"] = policy
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": RESERVATION_API, "kind": "Reservation", "metadata": meta, "spec": spec}


def owner(name: str, cpu: str, affinity: dict[str, Any] | None = None) -> dict[str, Any]:
    """A koord-scheduler pod labelled ``app: a`` requesting ``cpu`` and 1Gi."""
    b = make_pod(name).scheduler(KOORD).req(cpu=cpu, memory="1Gi").label(app="a")
    if affinity is not None:
        b = b.annotate({AFFINITY: json.dumps(affinity)})
    return b.obj()


def scenario(*steps: dict[str, Any]) -> dict[str, Any]:
    """A Berth Scenario with these steps."""
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "explain"},
        "spec": {"steps": list(steps)},
    }


def failed_scheduling(run: Run, pod: str) -> list[str]:
    """The messages of the pod's FailedScheduling events."""
    return [e["message"] for e in run.events(pod) if e["reason"] == "FailedScheduling"]


def explain(tmp_path: Path, docs: list[dict[str, Any]], *args: str, config: bool = False) -> Run:
    """``berth explain`` over ``docs`` (with CONFIG as the scheduler configuration when ``config``)."""
    f = tmp_path / "explain.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    argv = ["explain", str(f), "--until", "5m", *args]
    if config:
        cfg = tmp_path / "config.yaml"
        cfg.write_text(yaml.safe_dump(CONFIG))
        argv += ["--scheduler-config", str(cfg)]
    result = CliRunner().invoke(app, argv)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


# ----- FailedScheduling names the reservations -------------------------------------------------------------


def test_owner_blocked_by_a_taint_and_an_unschedulable_reservation(simulate: Callable[..., Run]) -> None:
    """Each node's free 1 cpu is too little; the 3-cpu reservations there would do, but one is tainted and
    the other unschedulable: Koordinator's PostFilter counts them, before DefaultPreemption's part."""
    docs = [
        make_node("node-1").capacity(cpu="4", memory="8Gi").obj(),
        make_node("node-2").capacity(cpu="4", memory="8Gi").obj(),
        reservation(
            "r-taint", "3", "node-1", taints=[{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]
        ),
        reservation("r-off", "3", "node-2", unschedulable=True),
        scenario({"at": "5s", "create": [owner("web", "2")]}),
    ]
    run = simulate(docs, "--until", "1m")
    assert run.exit_code == 0, run.stderr
    assert failed_scheduling(run, "web") == [
        "0/2 nodes are available: 2 Insufficient cpu. 1 Reservation(s) is unschedulable, "
        "1 Reservation(s) had untolerated taint {dedicated: ml}, 2 Reservation(s) matched owner total, "
        + NO_VICTIMS.format(n=2)
    ]


def test_restricted_reservation_too_small(simulate: Callable[..., Run]) -> None:
    """A Restricted reservation of 2 cpu cannot give 3, though the node could: the Reservation filter's
    reason names it, and its PostFilter does not count it again as a node reason."""
    docs = [
        make_node("node-1").capacity(cpu="8", memory="8Gi").obj(),
        reservation("r", "2", "node-1", policy="Restricted", labels={"pool": "x"}),
        scenario({"at": "5s", "create": [owner("web", "3", {"reservationSelector": {"pool": "x"}})]}),
    ]
    run = simulate(docs, "--until", "1m")
    assert failed_scheduling(run, "web") == [
        "0/1 nodes are available: 1 Reservation(s) Insufficient cpu. 1 Reservation(s) matched owner total, "
        + NO_VICTIMS.format(n=1)
    ]


def test_reservation_by_name_too_small_gives_the_amounts(simulate: Callable[..., Run]) -> None:
    docs = [
        make_node("node-1").capacity(cpu="8", memory="8Gi").obj(),
        reservation("r", "2", "node-1", policy="Restricted"),
        scenario({"at": "5s", "create": [owner("web", "3", {"name": "r"})]}),
    ]
    run = simulate(docs, "--until", "1m")
    assert failed_scheduling(run, "web") == [
        "0/1 nodes are available: 1 Reservation(s) Insufficient cpu, requested: 3000, used: 0, capacity: 2000. "
        "1 Reservation(s) exactly matches the requested reservation name, 1 Reservation(s) matched owner total, "
        + NO_VICTIMS.format(n=1)
    ]


def test_aligned_owner_larger_than_reservation_and_node(simulate: Callable[..., Run]) -> None:
    """Size: the Aligned reservation and the node's free part together are too small."""
    docs = [
        make_node("node-1").capacity(cpu="4", memory="8Gi").obj(),
        reservation("r", "2", "node-1", policy="Aligned"),
        scenario({"at": "5s", "create": [owner("web", "5")]}),
    ]
    run = simulate(docs, "--until", "1m")
    assert failed_scheduling(run, "web") == [
        "0/1 nodes are available: 1 Insufficient cpu. 1 Reservation(s) for node reason that Insufficient cpu, "
        "1 Reservation(s) matched owner total, " + NO_VICTIMS.format(n=1)
    ]


def test_affinity_to_a_reservation_that_does_not_match(simulate: Callable[..., Run]) -> None:
    docs = [
        make_node("node-1").capacity(cpu="4", memory="8Gi").obj(),
        reservation("r", "2", "node-1", labels={"pool": "x"}),
        scenario({"at": "5s", "create": [owner("web", "1", {"reservationSelector": {"pool": "y"}})]}),
    ]
    run = simulate(docs, "--until", "1m")
    assert failed_scheduling(run, "web") == [
        "0/1 nodes are available: node(s) no reservations match reservation affinity. "
        "1 Reservation(s) didn't match affinity rules, 1 Reservation(s) matched owner total, "
        + NOT_HELPFUL.format(n=1)
    ]


def test_pods_no_reservation_concerns_keep_kube_messages(simulate: Callable[..., Run]) -> None:
    docs = [
        make_node("node-1").capacity(cpu="4", memory="8Gi").obj(),
        reservation("r", "2", "node-1"),
        scenario(
            {"at": "5s", "create": [make_pod("other").scheduler(KOORD).req(cpu="3").label(app="b").obj()]}
        ),
    ]
    run = simulate(docs, "--until", "1m")
    assert failed_scheduling(run, "other") == [
        "0/1 nodes are available: 1 Insufficient cpu. " + NO_VICTIMS.format(n=1)
    ]


def test_the_reservation_filter_names_the_node_shortfall(
    simulate: Callable[..., Run], tmp_path: Path
) -> None:
    """Without NodeResourcesFit's Filter, the Reservation filter itself finds the node short (Koordinator's
    "Insufficient cpu by node") besides the Restricted reservation's own shortfall."""
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": KOORD, "plugins": {"filter": {"disabled": [{"name": "NodeResourcesFit"}]}}}
        ],
    }
    cfg = tmp_path / "no-fit.yaml"
    cfg.write_text(yaml.safe_dump(config))
    filler = make_pod("filler").scheduler(KOORD).req(cpu="2", memory="1Gi").label(app="b").obj()
    docs = [
        make_node("node-1").capacity(cpu="4", memory="8Gi").obj(),
        reservation("r", "2", "node-1", policy="Restricted", labels={"pool": "x"}),
        scenario(
            {"at": "2s", "create": [filler]},
            {"at": "5s", "create": [owner("web", "3", {"reservationSelector": {"pool": "x"}})]},
        ),
    ]
    run = simulate(docs, "--until", "1m", "--scheduler-config", str(cfg))
    assert run.exit_code == 0, run.stderr
    assert failed_scheduling(run, "web") == [
        "0/1 nodes are available: 1 Insufficient cpu by node, 1 Reservation(s) Insufficient cpu. "
        "1 Reservation(s) matched owner total, " + NO_VICTIMS.format(n=1)
    ]


def test_koordinator_postfilter_config_gives_the_same_message(
    simulate: Callable[..., Run], tmp_path: Path
) -> None:
    """koord-scheduler's own configuration lists its PostFilter plugins explicitly, Reservation first: the
    message equals that of Berth's default profile."""
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": KOORD,
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Reservation", "weight": 5000}]},
                    "postFilter": {
                        "disabled": [{"name": "*"}],
                        "enabled": [{"name": "Reservation"}, {"name": "DefaultPreemption"}],
                    },
                },
            }
        ],
    }
    cfg = tmp_path / "koord.yaml"
    cfg.write_text(yaml.safe_dump(config))
    docs = [
        make_node("node-1").capacity(cpu="4", memory="8Gi").obj(),
        reservation("r", "3", "node-1", unschedulable=True),
        scenario({"at": "5s", "create": [owner("web", "2")]}),
    ]
    expected = [
        "0/1 nodes are available: 1 Insufficient cpu. 1 Reservation(s) is unschedulable, "
        "1 Reservation(s) matched owner total, " + NO_VICTIMS.format(n=1)
    ]
    assert failed_scheduling(simulate(docs, "--until", "1m"), "web") == expected
    run = simulate(docs, "--until", "1m", "--scheduler-config", str(cfg))
    assert run.exit_code == 0, run.stderr
    assert failed_scheduling(run, "web") == expected


def test_a_malformed_reservation_affinity_fails_the_attempt(simulate: Callable[..., Run]) -> None:
    """As Koordinator's PreFilter (AsStatus(err)): a scheduling error naming the annotation, retried with
    backoff, never a crash of the run."""
    bad = make_pod("bad").scheduler(KOORD).req(cpu="1").label(app="a").annotate({AFFINITY: "{not json"}).obj()
    docs = [
        make_node("node-1").obj(),
        reservation("r", "1", "node-1"),
        scenario({"at": "5s", "create": [bad]}),
    ]
    run = simulate(docs, "--until", "1m")
    assert run.exit_code == 0, run.stderr
    (message,) = set(failed_scheduling(run, "bad"))
    assert message == (
        'Pod "default/bad": metadata.annotations[scheduling.koordinator.sh/reservation-affinity]: Invalid value: '
        '"{not json": invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)'
    )
    assert run.get("Pod", "bad")["spec"].get("nodeName") is None


# ----- berth explain ---------------------------------------------------------------------------------------


def _cluster() -> list[dict[str, Any]]:
    """a (4 cpu) holds r-a (2 cpu); b (8 cpu) holds the unschedulable r-b; c (4 cpu) is tainted."""
    return [
        make_node("a").capacity(cpu="4", memory="8Gi").obj(),
        make_node("b").capacity(cpu="8", memory="8Gi").obj(),
        make_node("c").capacity(cpu="4", memory="8Gi").taint("gpu", "yes").obj(),
        reservation("r-a", "2", "a"),
        reservation("r-b", "2", "b", unschedulable=True),
    ]


def test_explain_shows_the_reservation_used(tmp_path: Path) -> None:
    docs = [*_cluster(), scenario({"at": "5s", "create": [owner("web", "1")]})]
    run = explain(tmp_path, docs, "--pod", "web", config=True)
    assert run.exit_code == 0, run.stderr
    assert run.stdout == (
        "Pod default/web — attempt 1 of 1 at 5s (profile koord-scheduler)\n"
        "PreFilter: NodeResourcesFit: passed; Reservation: passed\n"
        "Filter (2 of 3 nodes feasible; plugins in order: NodeUnschedulable, TaintToleration, NodeResourcesFit)\n"
        "NODE   FILTER     PLUGIN            REASON\n"
        "a      passed\n"
        "b      passed\n"
        "c      rejected   TaintToleration   node(s) had untolerated taint {gpu: yes}\n"
        "Score (raw->normalised[=x weight] per plugin; 2 node(s) scored)\n"
        "NODE   TaintToleration(x3)   NodeResourcesFit(x1)   Reservation(x5000)   TOTAL\n"
        "a *    0->100=300            81->81                 75->100=500000       500381\n"
        "b      0->100=300            68->68                 0->0=0               368\n"
        "Reservations whose owners match the pod:\n"
        "RESERVATION   NODE   RESULT      REASON\n"
        "r-a           a      allocated\n"
        "r-b           b      refused     Reservation(s) is unschedulable\n"
        "Selected node: a\n"
    )


WEB_FILTER = (
    "PreFilter: NodeResourcesFit: passed; Reservation: passed\n"
    "Filter (2 of 3 nodes feasible; plugins in order: NodeUnschedulable, TaintToleration, NodeResourcesFit)\n"
)
RESERVATIONS_HEAD = "Reservations whose owners match the pod:\n"


def test_explain_shows_the_reservations_that_refused_a_failed_pod(tmp_path: Path) -> None:
    """7 cpu fit nowhere: r-a's owner sees its node rejected; r-b refuses (unschedulable)."""
    docs = [*_cluster(), scenario({"at": "5s", "create": [owner("big", "7")]})]
    run = explain(tmp_path, docs, "--pod", "big", config=True)
    assert run.exit_code == 0, run.stderr
    rows = (
        "RESERVATION   NODE   RESULT    REASON\n"
        "r-a           a      matched   node rejected by NodeResourcesFit: Insufficient cpu\n"
        "r-b           b      refused   Reservation(s) is unschedulable\n"
    )
    assert run.stdout == (
        "Pod default/big — attempt 1 of 1 at 5s (profile koord-scheduler)\n"
        "PreFilter: NodeResourcesFit: passed; Reservation: passed\n"
        "Filter (0 of 3 nodes feasible; plugins in order: NodeUnschedulable, TaintToleration, NodeResourcesFit)\n"
        "NODE   FILTER     PLUGIN             REASON\n"
        "a      rejected   NodeResourcesFit   Insufficient cpu\n"
        "b      rejected   NodeResourcesFit   Insufficient cpu\n"
        "c      rejected   TaintToleration    node(s) had untolerated taint {gpu: yes}\n"
        + RESERVATIONS_HEAD
        + rows
        + "Unschedulable: 0/3 nodes are available: 1 node(s) had untolerated taint {gpu: yes}, 2 Insufficient cpu. "
        "1 Reservation(s) is unschedulable, 1 Reservation(s) for node reason that Insufficient cpu, "
        "2 Reservation(s) matched owner total.\n"
    )
    js = explain(tmp_path, docs, "--pod", "big", "-o", "json", config=True)
    (trace,) = json.loads(js.stdout)
    assert trace["reservations"] == [
        {
            "name": "r-a",
            "node": "a",
            "result": "matched",
            "reason": "node rejected by NodeResourcesFit: Insufficient cpu",
        },
        {"name": "r-b", "node": "b", "result": "refused", "reason": "Reservation(s) is unschedulable"},
    ]


def test_explain_a_reservation(tmp_path: Path) -> None:
    """The reserve pod of r-b, pinned to b: the Reservation filter turns a away, TaintToleration c."""
    run = explain(tmp_path, _cluster(), "--reservation", "r-b", config=True)
    assert run.exit_code == 0, run.stderr
    assert run.stdout == (
        "Reservation r-b — attempt 1 of 1 at 0s (profile koord-scheduler)\n"
        "PreFilter: NodeResourcesFit: passed; Reservation: passed\n"
        "Filter (1 of 3 nodes feasible; plugins in order: NodeUnschedulable, TaintToleration, NodeResourcesFit, "
        "Reservation)\n"
        "NODE   FILTER     PLUGIN            REASON\n"
        "a      rejected   Reservation       node(s) didn't match the nodeName specified by reservation\n"
        "b      passed\n"
        "c      rejected   TaintToleration   node(s) had untolerated taint {gpu: yes}\n"
        "Note: only one feasible node: scoring skipped\n"
        "Selected node: b\n"
    )
    js = explain(tmp_path, _cluster(), "--reservation", "r-b", "-o", "json", config=True)
    (trace,) = json.loads(js.stdout)
    assert (trace["reservation"], trace["attempt"], trace["selected"]) == ("r-b", 1, "b")


def test_explain_refuses_unknown_reservations_and_two_subjects(tmp_path: Path) -> None:
    run = explain(tmp_path, _cluster(), "--reservation", "nope", config=True)
    assert (run.exit_code, run.stderr) == (2, "error: reservation nope does not exist in the scenario\n")
    run = explain(tmp_path, _cluster(), "--reservation", "r-b", "--pod", "web", config=True)
    assert (run.exit_code, run.stderr) == (2, "error: give exactly one of --pod and --reservation\n")
    run = explain(tmp_path, _cluster(), config=True)
    assert (run.exit_code, run.stderr) == (2, "error: give exactly one of --pod and --reservation\n")
    run = explain(tmp_path, _cluster(), "--reservation", "ns/r-b", config=True)
    assert run.exit_code == 2
    assert (
        run.stderr
        == 'error: --reservation: invalid reservation name "ns/r-b" (Reservations are cluster-scoped)\n'
    )


DELETE: dict[str, Any] = {
    "at": "1m",
    "delete": [
        {"apiVersion": "v1", "kind": "Pod", "name": "web", "namespace": "default"},
        {"apiVersion": "v1", "kind": "Pod", "name": "gated", "namespace": "default"},
    ],
}


def test_explain_a_pod_deleted_after_its_attempts(tmp_path: Path) -> None:
    docs = [*_cluster(), owner("web", "1"), scenario({"at": "1m", "delete": [DELETE["delete"][0]]})]
    run = explain(tmp_path, docs, "--pod", "web", "--attempt", "1", config=True)
    assert run.exit_code == 0, run.stderr
    assert run.stdout.startswith("Pod default/web — attempt 1 of 1 at 0s (profile koord-scheduler)\n")
    assert run.stdout.endswith("Selected node: a\n\nPod default/web deleted at 1m\n")
    js = explain(tmp_path, docs, "--pod", "web", "-o", "json", config=True)
    assert [(t["attempt"], t["deletedAt"]) for t in json.loads(js.stdout)] == [(1, 60.0)]


def test_explain_a_pod_deleted_before_any_attempt(tmp_path: Path) -> None:
    """The default profile's SchedulingGates keeps the gated pod out of scheduling until it is deleted."""
    delete = {"at": "1m", "delete": [DELETE["delete"][1]]}
    docs = [make_node("a").obj(), make_pod("gated").gate("wait").obj(), scenario(delete)]
    run = explain(tmp_path, docs, "--pod", "gated")
    assert run.exit_code == 2
    assert run.stderr == (
        "error: pod default/gated was never attempted by Berth's scheduler (created at 0s, deleted at 1m)\n"
    )
    run = explain(tmp_path, docs, "--pod", "never")
    assert (run.exit_code, run.stderr) == (2, "error: pod default/never does not exist in the scenario\n")


def _late_node() -> list[dict[str, Any]]:
    """p fits only on the node added at 1m30s."""
    return [
        make_node("small").capacity(cpu="2", memory="8Gi").obj(),
        make_pod("p").req(cpu="3", memory="1Gi").scheduler(KOORD).obj(),
        scenario({"at": "1m30s", "create": [make_node("large").capacity(cpu="8", memory="8Gi").obj()]}),
    ]


def test_json_and_text_number_attempts_alike(tmp_path: Path) -> None:
    run = explain(tmp_path, _late_node(), "--pod", "p", config=True)
    headers = [line for line in run.stdout.splitlines() if line.startswith("Pod ")]
    assert headers == [
        "Pod default/p — attempt 1 of 2 at 0s (profile koord-scheduler)",
        "Pod default/p — attempt 2 of 2 at 1m30s (profile koord-scheduler)",
    ]
    js = explain(tmp_path, _late_node(), "--pod", "p", "-o", "json", config=True)
    assert [(t["attempt"], t["time"], t["selected"]) for t in json.loads(js.stdout)] == [
        (1, 0.0, ""),
        (2, 90.0, "large"),
    ]
    for n in ("2", "-1"):
        js = explain(tmp_path, _late_node(), "--pod", "p", "-o", "json", "--attempt", n, config=True)
        assert [t["attempt"] for t in json.loads(js.stdout)] == [2]
        run = explain(tmp_path, _late_node(), "--pod", "p", "--attempt", n, config=True)
        assert run.stdout.startswith("Pod default/p — attempt 2 of 2 at 1m30s")


def test_node_filter(tmp_path: Path) -> None:
    docs = [*_cluster(), scenario({"at": "5s", "create": [owner("web", "1")]})]
    run = explain(tmp_path, docs, "--pod", "web", "--node", "b", "--node", "c", config=True)
    assert run.exit_code == 0, run.stderr
    assert run.stdout == (
        "Pod default/web — attempt 1 of 1 at 5s (profile koord-scheduler)\n"
        + WEB_FILTER
        + "(showing 2 of 3 nodes)\n"
        "NODE   FILTER     PLUGIN            REASON\n"
        "b      passed\n"
        "c      rejected   TaintToleration   node(s) had untolerated taint {gpu: yes}\n"
        "Score (raw->normalised[=x weight] per plugin; 2 node(s) scored)\n"
        "NODE   TaintToleration(x3)   NodeResourcesFit(x1)   Reservation(x5000)   TOTAL\n"
        "b      0->100=300            68->68                 0->0=0               368\n"
        + RESERVATIONS_HEAD
        + "RESERVATION   NODE   RESULT    REASON\n"
        "r-b           b      refused   Reservation(s) is unschedulable\n"
        "Selected node: a\n"
    )
    run = explain(tmp_path, docs, "--pod", "web", "--node", "zz", config=True)
    assert (run.exit_code, run.stderr) == (2, 'error: --node: node "zz" is not in the cluster\n')


def test_top_keeps_the_best_scored_nodes(tmp_path: Path) -> None:
    docs = [*_cluster(), scenario({"at": "5s", "create": [owner("web", "1")]})]
    run = explain(tmp_path, docs, "--pod", "web", "--top", "1", config=True)
    assert run.exit_code == 0, run.stderr
    assert run.stdout == (
        "Pod default/web — attempt 1 of 1 at 5s (profile koord-scheduler)\n"
        + WEB_FILTER
        + "(showing 1 of 3 nodes)\n"
        "NODE   FILTER   PLUGIN   REASON\n"
        "a      passed\n"
        "Score (raw->normalised[=x weight] per plugin; 2 node(s) scored)\n"
        "NODE   TaintToleration(x3)   NodeResourcesFit(x1)   Reservation(x5000)   TOTAL\n"
        "a *    0->100=300            81->81                 75->100=500000       500381\n"
        + RESERVATIONS_HEAD
        + "RESERVATION   NODE   RESULT      REASON\n"
        "r-a           a      allocated\n"
        "r-b           b      refused     Reservation(s) is unschedulable\n"
        "Selected node: a\n"
    )
    js = explain(tmp_path, docs, "--pod", "web", "--top", "1", "-o", "json", config=True)
    (t,) = json.loads(js.stdout)
    assert (list(t["filter"]), t["totalScores"], t["feasible"]) == (["a"], {"a": 500381}, ["a", "b"])
    run = explain(tmp_path, docs, "--pod", "web", "--top", "0", config=True)
    assert (run.exit_code, run.stderr) == (2, "error: --top: must be a positive number, got 0\n")


def test_top_of_a_failure_is_the_first_nodes_by_name(tmp_path: Path) -> None:
    docs = [*_cluster(), scenario({"at": "5s", "create": [owner("big", "7")]})]
    run = explain(tmp_path, docs, "--pod", "big", "--top", "2", config=True)
    table = run.stdout.split("(showing 2 of 3 nodes)\n")[1].split(RESERVATIONS_HEAD)[0]
    assert table == (
        "NODE   FILTER     PLUGIN             REASON\n"
        "a      rejected   NodeResourcesFit   Insufficient cpu\n"
        "b      rejected   NodeResourcesFit   Insufficient cpu\n"
    )
