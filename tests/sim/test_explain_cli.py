"""``berth explain`` through the CLI, and the kube-scheduler-simulator result annotations."""

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

# only three scoring plugins, so every expected score below follows from kube's formulas by hand
CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "enabled": [
                        {"name": "PrioritySort"},
                        {"name": "NodeUnschedulable"},
                        {"name": "TaintToleration", "weight": 3},
                        {"name": "NodeAffinity", "weight": 2},
                        {"name": "NodeResourcesFit", "weight": 1},
                        {"name": "DefaultBinder"},
                    ],
                    "disabled": [{"name": "*"}],
                }
            },
        }
    ],
}

TAINT = {"key": "gpu", "value": "yes", "effect": "NoSchedule"}
PREFER_Z1 = {
    "nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 10,
                "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]},
            }
        ]
    }
}


def _docs() -> list[dict[str, Any]]:
    return [
        make_node("a").capacity(cpu="4", memory="8Gi").label(zone="z1").obj(),
        make_node("b").capacity(cpu="8", memory="8Gi").label(zone="z2").obj(),
        make_node("c").capacity(cpu="4", memory="8Gi").taints(TAINT).obj(),
        make_pod("web").req(cpu="1", memory="1Gi").affinity(PREFER_Z1).obj(),
        make_pod("big").req(cpu="16", memory="1Gi").obj(),
    ]


def _run(tmp_path: Path, *args: str, config: dict[str, Any] | None = None) -> Run:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump_all(_docs()))
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump(config or CONFIG))
    result = CliRunner().invoke(
        app, ["explain", str(scenario), "--scheduler-config", str(cfg), "--until", "10s", *args]
    )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def test_explain_text_shows_filters_scores_and_choice(tmp_path: Path) -> None:
    run = _run(tmp_path, "--pod", "default/web")
    assert run.exit_code == 0, run.stderr
    assert run.stdout == (
        "Pod default/web — attempt 1 of 1 at 0s (profile default-scheduler)\n"
        "PreFilter: NodeAffinity: passed; NodeResourcesFit: passed\n"
        "Filter (2 of 3 nodes feasible; plugins in order: NodeUnschedulable, TaintToleration, NodeResourcesFit)\n"
        "NODE   FILTER     PLUGIN            REASON\n"
        "a      passed\n"
        "b      passed\n"
        "c      rejected   TaintToleration   node(s) had untolerated taint {gpu: yes}\n"
        "Score (raw->normalised[=x weight] per plugin; 2 node(s) scored)\n"
        "NODE   TaintToleration(x3)   NodeAffinity(x2)   NodeResourcesFit(x1)   TOTAL\n"
        "a *    0->100=300            10->100=200        81->81                 581\n"
        "b      0->100=300            0->0=0             87->87                 387\n"
        "Selected node: a\n"
    )


def test_explain_json_of_an_unschedulable_pod(tmp_path: Path) -> None:
    run = _run(tmp_path, "--pod", "big", "--attempt", "1", "-o", "json")
    assert run.exit_code == 0, run.stderr
    (trace,) = json.loads(run.stdout)
    assert trace["attempt"] == 1  # numbered per pod, as the text and --attempt
    assert trace["filter"] == {
        "a": {
            "NodeUnschedulable": "passed",
            "TaintToleration": "passed",
            "NodeResourcesFit": "Insufficient cpu",
        },
        "b": {
            "NodeUnschedulable": "passed",
            "TaintToleration": "passed",
            "NodeResourcesFit": "Insufficient cpu",
        },
        "c": {"NodeUnschedulable": "passed", "TaintToleration": "node(s) had untolerated taint {gpu: yes}"},
    }
    # NodeAffinity's PreFilter skips its Filter for a pod without required node affinity, as in kube
    assert trace["filterPlugins"] == ["NodeUnschedulable", "TaintToleration", "NodeResourcesFit"]
    assert trace["feasible"] == []
    assert trace["selected"] == ""
    assert trace["failure"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {gpu: yes}, 2 Insufficient cpu."
    )


def test_explain_refuses_unknown_pods_and_attempts(tmp_path: Path) -> None:
    run = _run(tmp_path, "--pod", "default/nope")
    assert run.exit_code == 2
    assert run.stderr == "error: pod default/nope does not exist in the scenario\n"
    run = _run(tmp_path, "--pod", "web", "--attempt", "2")
    assert run.exit_code == 2
    assert run.stderr == "error: --attempt: 2 is out of range (pod default/web has 1 attempt(s))\n"
    run = _run(tmp_path, "--pod", "a/b/c")
    assert run.exit_code == 2
    assert run.stderr == 'error: --pod: invalid pod reference "a/b/c" (expected NAMESPACE/NAME or NAME)\n'


def test_results_plugin_writes_simulator_annotations(simulate: Callable[..., Run], tmp_path: Path) -> None:
    config = json.loads(json.dumps(CONFIG))
    config["profiles"][0]["plugins"]["multiPoint"]["enabled"].append({"name": "SchedulingResults"})
    cfg = tmp_path / "results.yaml"
    cfg.write_text(yaml.safe_dump(config))
    run = simulate(_docs(), "--scheduler-config", str(cfg), "--until", "10s")
    assert run.exit_code == 0, run.stderr
    web = run.get("Pod", "web")["metadata"]["annotations"]
    prefix = "kube-scheduler-simulator.sigs.k8s.io/"
    assert json.loads(web[prefix + "filter-result"])["c"] == {
        "NodeUnschedulable": "passed",
        "TaintToleration": "node(s) had untolerated taint {gpu: yes}",
    }
    assert json.loads(web[prefix + "score-result"]) == {
        "a": {"TaintToleration": "0", "NodeAffinity": "10", "NodeResourcesFit": "81"},
        "b": {"TaintToleration": "0", "NodeAffinity": "0", "NodeResourcesFit": "87"},
    }
    assert json.loads(web[prefix + "finalscore-result"]) == {
        "a": {"TaintToleration": "300", "NodeAffinity": "200", "NodeResourcesFit": "81"},
        "b": {"TaintToleration": "300", "NodeAffinity": "0", "NodeResourcesFit": "87"},
    }
    assert web[prefix + "selected-node"] == "a"
    big = run.get("Pod", "big")
    annotations = big["metadata"]["annotations"]
    assert json.loads(annotations[prefix + "filter-result"])["a"]["NodeResourcesFit"] == "Insufficient cpu"
    assert prefix + "selected-node" not in annotations
    # writing the annotations does not make the pod worth retrying: one attempt, then backoff on events only
    failed = [e for e in run.events("big") if e["reason"] == "FailedScheduling"]
    assert [e["count"] for e in failed] == [1]


def test_without_results_plugin_no_annotations(simulate: Callable[..., Run], tmp_path: Path) -> None:
    cfg = tmp_path / "plain.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    run = simulate(_docs(), "--scheduler-config", str(cfg), "--until", "10s")
    assert "annotations" not in run.get("Pod", "web")["metadata"]
