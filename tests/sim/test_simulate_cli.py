"""``berth simulate`` end to end: placement, messages, timing, determinism and input errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import Run

from builders import make_node, make_pod

Simulate = Callable[..., Run]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


def pc(name: str, value: int, *, default: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
    }


def test_quickstart_placements_and_reason(simulate: Simulate) -> None:
    r = simulate(None, paths=[str(EXAMPLES)])
    assert r.exit_code == 0, r.stderr
    placed = {o["metadata"]["name"]: o["spec"].get("nodeName") for o in r.objects() if o["kind"] == "Pod"}
    assert placed == {
        "db": "node-a",
        "web-1": "node-b",
        "web-2": "node-b",
        "trainer": "gpu-1",
        "giant": None,
        "nightly-report": "node-b",
    }
    giant = r.get("Pod", "giant", "ml")
    cond = next(c for c in giant["status"]["conditions"] if c["type"] == "PodScheduled")
    expected = (
        "0/3 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, "
        "2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for "
        "scheduling, 2 No preemption victims found for incoming pod."
    )
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", expected)
    failed = [e for e in r.events("giant") if e["reason"] == "FailedScheduling"]
    assert [(e["type"], e["message"]) for e in failed] == [("Warning", expected)]
    assert r.get("Pod", "db", "shop")["spec"]["priority"] == 1000
    assert r.get("Pod", "giant", "ml")["spec"]["priority"] == 100  # the globalDefault class
    assert r.get("Pod", "trainer", "ml")["status"]["phase"] == "Succeeded"
    assert r.get("Pod", "nightly-report", "shop")["status"]["phase"] == "Succeeded"
    assert r.get("Pod", "db", "shop")["status"]["phase"] == "Running"


def test_quickstart_table_output(simulate: Simulate) -> None:
    r = simulate(None, "-o", "table", paths=[str(EXAMPLES)])
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert "NAMESPACE   NAME             READY   STATUS      RESTARTS   AGE   NODE" in lines
    assert "ml          giant            0/1     Pending     0          10m   <none>" in lines
    assert "shop        db               1/1     Running     0          10m   node-a" in lines
    assert "ml          trainer          0/1     Completed   0          10m   gpu-1" in lines


def test_scheduled_event_and_condition(simulate: Simulate) -> None:
    r = simulate([make_node("n1").obj(), make_pod("p1").req(cpu="1", memory="1Gi").obj()])
    assert r.exit_code == 0
    p = r.get("Pod", "p1")
    assert p["spec"]["nodeName"] == "n1"
    assert [(e["type"], e["reason"], e["message"]) for e in r.events("p1")] == [
        ("Normal", "Scheduled", "Successfully assigned default/p1 to n1")
    ]
    types = {c["type"]: c["status"] for c in p["status"]["conditions"]}
    assert types == {
        "PodScheduled": "True",
        "Initialized": "True",
        "Ready": "True",
        "ContainersReady": "True",
    }


def test_output_is_sorted_by_kind_namespace_name(simulate: Simulate) -> None:
    r = simulate(
        [
            make_pod("b").ns("z").req(cpu="1", memory="1Gi").obj(),
            make_pod("a").ns("z").req(cpu="1", memory="1Gi").obj(),
            make_node("n2").obj(),
            make_node("n1").obj(),
            make_pod("c").req(cpu="1", memory="1Gi").obj(),
        ]
    )
    keys = [
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])
        for o in r.objects()
        if o["kind"] != "Event"
    ]
    assert keys == [
        ("Namespace", "", "default"),
        ("Namespace", "", "z"),
        ("Node", "", "n1"),
        ("Node", "", "n2"),
        ("Pod", "default", "c"),
        ("Pod", "z", "a"),
        ("Pod", "z", "b"),
        ("PriorityClass", "", "system-cluster-critical"),
        ("PriorityClass", "", "system-node-critical"),
    ]


def test_built_in_priority_classes_exist(simulate: Simulate) -> None:
    r = simulate(
        [
            make_node("n1").obj(),
            make_pod("critical").req(cpu="1", memory="1Gi").priority_class("system-node-critical").obj(),
        ]
    )
    pcs = {
        o["metadata"]["name"]: (o["value"], o["preemptionPolicy"])
        for o in r.objects()
        if o["kind"] == "PriorityClass"
    }
    assert pcs == {
        "system-cluster-critical": (2_000_000_000, "PreemptLowerPriority"),
        "system-node-critical": (2_000_001_000, "PreemptLowerPriority"),
    }
    assert r.get("Pod", "critical")["spec"]["priority"] == 2_000_001_000


def test_same_seed_same_result(simulate: Simulate) -> None:
    docs = [make_node(f"n{i}").obj() for i in range(6)] + [
        make_pod(f"p{i}").req(cpu="500m", memory="1Gi").obj() for i in range(20)
    ]
    a = simulate(docs, "--seed", "3")
    b = simulate(docs, "--seed", "3")
    assert a.stdout == b.stdout


def test_seed_changes_tie_breaks(simulate: Simulate) -> None:
    docs = [make_node(f"n{i}").obj() for i in range(8)] + [make_pod("p").req(cpu="1", memory="1Gi").obj()]
    chosen = {simulate(docs, "--seed", str(s)).get("Pod", "p")["spec"]["nodeName"] for s in range(12)}
    assert len(chosen) > 1


def test_unschedulable_pod_retried_when_node_arrives(simulate: Simulate) -> None:
    scenario = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"steps": [{"at": "2m", "create": [make_node("big").capacity(cpu="16").obj()]}]},
    }
    r = simulate(
        [make_node("small").capacity(cpu="2").obj(), make_pod("p").req(cpu="8", memory="1Gi").obj(), scenario]
    )
    p = r.get("Pod", "p")
    assert p["spec"]["nodeName"] == "big"
    ev = [(e["reason"], e["count"]) for e in r.events("p")]
    assert ev == [("FailedScheduling", 1), ("Scheduled", 1)]


def _first_deleted_at_one_minute(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """A 2-CPU node running "first" (deleted at 1m) and "second" waiting for its room from 10s."""
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {
            "until": "5m",
            "steps": [
                {
                    "at": "0s",
                    "create": [
                        make_node("n").capacity(cpu="2").obj(),
                        make_pod("first").req(cpu="2", memory="1Gi").annotate(annotations).obj(),
                    ],
                },
                {"at": "10s", "create": [make_pod("second").req(cpu="2", memory="1Gi").obj()]},
                {
                    "at": "1m",
                    "delete": [{"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": "first"}],
                },
            ],
        },
    }


def test_delete_frees_room_after_grace_period(simulate: Simulate) -> None:
    r = simulate([_first_deleted_at_one_minute()])
    names = {o["metadata"]["name"] for o in r.objects() if o["kind"] == "Pod"}
    assert names == {"second"}
    second = r.get("Pod", "second")
    assert second["spec"]["nodeName"] == "n"
    scheduled = next(e for e in r.events("second") if e["reason"] == "Scheduled")
    # terminationGracePeriodSeconds defaults to 30: the room frees at 1m30s
    assert scheduled["firstTimestamp"] == "2024-01-01T00:01:30Z"


def test_pod_whose_run_ends_during_its_grace_period_leaves_then(simulate: Simulate) -> None:
    r = simulate([_first_deleted_at_one_minute(annotations={"berth.dev/duration": "70s"})])
    scheduled = next(e for e in r.events("second") if e["reason"] == "Scheduled")
    # deleted at 1m with 30 s of grace, but its run ends at 1m10s: its containers stop then
    assert scheduled["firstTimestamp"] == "2024-01-01T00:01:10Z"


def test_patch_cordons_a_node(simulate: Simulate) -> None:
    scenario = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {
            "steps": [
                {"at": "0s", "create": [make_node("a").obj(), make_node("b").obj()]},
                {
                    "at": "1m",
                    "patch": [
                        {
                            "apiVersion": "v1",
                            "kind": "Node",
                            "name": "a",
                            "patch": {"spec": {"unschedulable": True}},
                        }
                    ],
                },
                {
                    "at": "2m",
                    "create": [make_pod(f"p{i}").req(cpu="100m", memory="1Gi").obj() for i in range(4)],
                },
            ]
        },
    }
    r = simulate([scenario])
    assert {r.get("Pod", f"p{i}")["spec"]["nodeName"] for i in range(4)} == {"b"}


def test_until_and_startup_duration(simulate: Simulate) -> None:
    p = (
        make_pod("job")
        .req(cpu="1", memory="1Gi")
        .annotate({"berth.dev/startup": "30s", "berth.dev/duration": "2m"})
        .obj()
    )
    early = simulate([make_node("n").obj(), p], "--until", "20s")
    assert early.get("Pod", "job")["status"]["phase"] == "Pending"
    running = simulate([make_node("n").obj(), p], "--until", "2m")
    assert running.get("Pod", "job")["status"]["phase"] == "Running"
    assert running.get("Pod", "job")["status"]["startTime"] == "2024-01-01T00:00:30Z"
    done = simulate([make_node("n").obj(), p], "--until", "2m30s")
    assert done.get("Pod", "job")["status"]["phase"] == "Succeeded"


def test_priority_orders_the_queue(simulate: Simulate) -> None:
    docs = [
        pc("high", 1000),
        make_node("n").capacity(cpu="1").obj(),
        make_pod("low").req(cpu="1", memory="1Gi").obj(),
        make_pod("urgent").req(cpu="1", memory="1Gi").priority_class("high").obj(),
    ]
    r = simulate(docs)
    assert r.get("Pod", "urgent")["spec"]["nodeName"] == "n"
    assert r.get("Pod", "low")["spec"].get("nodeName") is None


def test_unknown_priority_class_at_time_zero_exits_2(simulate: Simulate, tmp_path: Path) -> None:
    r = simulate(
        [make_node("n").obj(), make_pod("p").req(cpu="1", memory="1Gi").priority_class("missing").obj()]
    )
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (
        f'Error from server (Forbidden): error when creating "{tmp_path}/input.yaml#1": '
        'pods "p" is forbidden: no PriorityClass with name missing was found\n'
    )


def test_unknown_priority_class_in_a_step_is_refused_and_the_run_goes_on(simulate: Simulate) -> None:
    step = {"at": "10s", "create": [make_pod("p").req(cpu="1", memory="1Gi").priority_class("missing").obj()]}
    scenario = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"steps": [step]},
    }
    r = simulate([make_node("n").obj(), scenario])
    assert r.exit_code == 0
    assert r.stderr == (
        'at 10s: Error from server (Forbidden): pods "p" is forbidden: no PriorityClass with name missing '
        "was found\n"
    )
    assert [o for o in r.objects() if o["kind"] == "Pod"] == []


def test_scheduling_gates_hold_the_pod(simulate: Simulate) -> None:
    r = simulate(
        [make_node("n").obj(), make_pod("gated").req(cpu="1", memory="1Gi").gate("example.com/wait").obj()]
    )
    p = r.get("Pod", "gated")
    assert p["spec"].get("nodeName") is None
    assert r.events("gated") == []


def test_scheduler_config_most_allocated(simulate: Simulate, tmp_path: Path) -> None:
    conf = tmp_path / "sched.yaml"
    conf.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": "default-scheduler",
                        "pluginConfig": [
                            {
                                "name": "NodeResourcesFit",
                                "args": {"scoringStrategy": {"type": "MostAllocated"}},
                            }
                        ],
                    }
                ],
            }
        )
    )
    docs = [
        make_node("a").obj(),
        make_node("b").obj(),
        make_pod("p1").req(cpu="1", memory="1Gi").node("a").obj(),
        make_pod("p2").req(cpu="1", memory="1Gi").obj(),
    ]
    least = simulate(docs)
    most = simulate(docs, "--scheduler-config", str(conf))
    assert least.get("Pod", "p2")["spec"]["nodeName"] == "b"
    assert most.get("Pod", "p2")["spec"]["nodeName"] == "a"


def test_second_profile_by_scheduler_name(simulate: Simulate, tmp_path: Path) -> None:
    conf = tmp_path / "sched.yaml"
    conf.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {"schedulerName": "default-scheduler"},
                    {
                        "schedulerName": "no-taints",
                        "plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}},
                    },
                ],
            }
        )
    )
    taint = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    docs = [
        make_node("t").taints(*taint).obj(),
        make_pod("plain").req(cpu="1", memory="1Gi").obj(),
        make_pod("custom").req(cpu="1", memory="1Gi").scheduler("no-taints").obj(),
        make_pod("foreign").req(cpu="1", memory="1Gi").scheduler("other").obj(),
    ]
    r = simulate(docs, "--scheduler-config", str(conf))
    assert r.get("Pod", "plain")["spec"].get("nodeName") is None
    assert r.get("Pod", "custom")["spec"]["nodeName"] == "t"
    assert r.get("Pod", "foreign")["spec"].get("nodeName") is None
    # kube-scheduler says nothing about a pod no profile serves; Berth warns once (NoSchedulerProfile)
    assert [(e["type"], e["reason"]) for e in r.events("foreign")] == [("Warning", "NoSchedulerProfile")]


def test_report_file(simulate: Simulate, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    r = simulate(
        [
            make_node("n").capacity(cpu="2").obj(),
            make_pod("a").req(cpu="1", memory="1Gi").obj(),
            make_pod("b").req(cpu="1", memory="1Gi").obj(),
            make_pod("c").req(cpu="1", memory="1Gi").obj(),
        ],
        "--report",
        str(report),
    )
    assert r.exit_code == 0
    data = json.loads(report.read_text())
    assert data["pods"]["total"] == 3
    assert data["pods"]["bound"] == 2
    assert data["pods"]["unschedulable"] == 1
    assert data["virtualSeconds"] == 600.0
    assert data["schedulingAttempts"] >= 3
    assert data["seed"] == 0


def test_invalid_quantity_exits_2_and_applies_nothing(simulate: Simulate) -> None:
    bad = make_pod("p").req(cpu="500x", memory="1Gi").obj()
    r = simulate([make_node("n").obj(), bad])
    assert r.exit_code == 2
    assert r.stdout == ""
    assert 'Pod "default/p": spec.containers[0].resources.requests.cpu: invalid quantity "500x"' in r.stderr
    assert "input.yaml" in r.stderr


def test_missing_path_exits_2(simulate: Simulate) -> None:
    r = simulate(None, paths=["/nonexistent/file.yaml"])
    assert r.exit_code == 2
    assert r.stdout == ""
    assert "/nonexistent/file.yaml" in r.stderr


def test_bad_scheduler_config_exits_2(simulate: Simulate, tmp_path: Path) -> None:
    conf = tmp_path / "sched.yaml"
    conf.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "percentageOfNodesToScore": 300,
            }
        )
    )
    r = simulate([make_node("n").obj()], "--scheduler-config", str(conf))
    assert r.exit_code == 2
    assert "percentageOfNodesToScore: Invalid value: 300" in r.stderr


def test_bad_scenario_step_exits_2(simulate: Simulate) -> None:
    scenario = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"steps": [{"at": "soon", "create": []}]},
    }
    r = simulate([scenario])
    assert r.exit_code == 2
    assert 'Scenario "s": spec.steps[0].at: Invalid value: "soon"' in r.stderr


def test_bad_until_exits_2(simulate: Simulate) -> None:
    r = simulate([make_node("n").obj()], "--until", "later")
    assert r.exit_code == 2
    assert '--until: invalid duration "later"' in r.stderr


def test_events_are_reported_by_the_profile(simulate: Simulate) -> None:
    r = simulate(
        [
            make_node("n").obj(),
            make_pod("k").req(cpu="1", memory="1Gi").scheduler("koord-scheduler").obj(),
            make_pod("d").req(cpu="1", memory="1Gi").obj(),
        ]
    )
    sources = {
        e["involvedObject"]["name"]: (e["source"]["component"], e["reportingComponent"], e["action"])
        for e in r.objects()
        if e["kind"] == "Event"
    }
    assert sources == {
        "k": ("koord-scheduler", "koord-scheduler", "Binding"),
        "d": ("default-scheduler", "default-scheduler", "Binding"),
    }
