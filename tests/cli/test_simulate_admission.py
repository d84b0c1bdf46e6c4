"""`berth simulate` / `berth explain` refuse initial objects the API server refuses; steps' refusals go on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from berth.cli import app
from builders import make_node, make_pod


def _pc(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def _write(path: Path, *docs: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _invoke(*argv: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(argv))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _cluster(tmp_path: Path) -> str:
    return _write(
        tmp_path / "cluster.yaml",
        make_node("n").capacity(cpu="4").obj(),
        make_pod("web-1").req(cpu="1").priority_class("high").obj(),
        make_pod("web-2").req(cpu="1").obj(),
        make_pod("web-3").req(cpu="1").priority_class("batch").obj(),
    )


def test_refused_initial_objects_exit_2_with_every_refusal_and_no_run(tmp_path: Path) -> None:
    path = _cluster(tmp_path)
    report = tmp_path / "report.json"
    code, out, err = _invoke("simulate", path, "-o", "json", "--report", str(report))
    assert (code, out) == (2, "")
    assert err == (
        f'Error from server (Forbidden): error when creating "{path}#1": pods "web-1" is forbidden: '
        "no PriorityClass with name high was found\n"
        f'Error from server (Forbidden): error when creating "{path}#3": pods "web-3" is forbidden: '
        "no PriorityClass with name batch was found\n"
    )
    assert not report.exists()


def test_explain_refuses_the_same_initial_objects(tmp_path: Path) -> None:
    path = _cluster(tmp_path)
    code, out, err = _invoke("explain", path, "--pod", "web-2")
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f'Error from server (Forbidden): error when creating "{path}#1": pods "web-1" is forbidden: '
        "no PriorityClass with name high was found",
        f'Error from server (Forbidden): error when creating "{path}#3": pods "web-3" is forbidden: '
        "no PriorityClass with name batch was found",
    ]


def test_a_duplicate_initial_object_exits_2(tmp_path: Path) -> None:
    path = _write(tmp_path / "nodes.yaml", make_node("n").obj(), make_node("n").obj())
    assert _invoke("simulate", path) == (
        2,
        "",
        f'Error from server (AlreadyExists): error when creating "{path}#1": nodes "n" already exists\n',
    )


def test_a_class_read_earlier_from_another_file_admits_the_pod(tmp_path: Path) -> None:
    _write(tmp_path / "00-classes.yaml", _pc("high", 1000), _pc("batch", 10))
    _cluster(tmp_path)
    code, out, err = _invoke("simulate", str(tmp_path), "-o", "json")
    assert (code, err) == (0, "")
    pods = {
        o["metadata"]["name"]: (o["spec"]["priority"], o["spec"]["nodeName"])
        for o in json.loads(out)["items"]
        if o["kind"] == "Pod"
    }
    assert pods == {"web-1": (1000, "n"), "web-2": (0, "n"), "web-3": (10, "n")}


def test_a_refused_step_object_is_reported_and_the_run_goes_on(tmp_path: Path) -> None:
    scenario = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {
            "until": "1m",
            "steps": [
                {"at": "0s", "create": [make_pod("early").req(cpu="1").priority_class("high").obj()]},
                {"at": "30s", "create": [make_pod("late").req(cpu="1").obj()]},
            ],
        },
    }
    path = _write(tmp_path / "run.yaml", make_node("n").capacity(cpu="4").obj(), scenario)
    code, out, err = _invoke("simulate", path, "-o", "json")
    assert code == 0
    assert err == (
        'at 0s: Error from server (Forbidden): pods "early" is forbidden: no PriorityClass with name high was '
        "found\n"
    )
    pods = {
        o["metadata"]["name"]: o["spec"]["nodeName"] for o in json.loads(out)["items"] if o["kind"] == "Pod"
    }
    assert pods == {"late": "n"}
