"""`berth simulate`'s input checks (issue 16): --until, --report, ElasticQuota min/max, stdin, --version."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from berth.cli import app
from builders import make_node, make_pod


def _invoke(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(argv), input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _write(path: Path, *docs: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _node_file(tmp_path: Path) -> str:
    return _write(tmp_path / "nodes.yaml", make_node("n1").capacity(cpu="4").obj())


def _pods(objects: list[dict[str, Any]]) -> dict[str, str]:
    """Pod name -> node name of a `-o json` List."""
    return {o["metadata"]["name"]: o["spec"].get("nodeName", "") for o in objects if o["kind"] == "Pod"}


def _quota(min_cpu: Any, max_cpu: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "quota", "namespace": "team"},
        "spec": {"min": {"cpu": min_cpu, "memory": "1Gi"}, "max": {"cpu": max_cpu, "memory": "2Gi"}},
    }


# --- 1. --until ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("-5m", 'error: --until: must be positive, not "-5m"\n'),
        ("0s", 'error: --until: must be positive, not "0s"\n'),
        ("0", 'error: --until: must be positive, not "0"\n'),
        ("soon", 'error: --until: invalid duration "soon"\n'),
        ("5", 'error: --until: invalid duration "5"\n'),
    ],
)
def test_a_non_positive_or_garbage_until_is_refused_before_anything_runs(
    tmp_path: Path, value: str, message: str
) -> None:
    report = tmp_path / "report.json"
    code, out, err = _invoke("simulate", _node_file(tmp_path), "--until", value, "--report", str(report))
    assert (code, out, err) == (2, "", message)
    assert not report.exists()


def test_explain_refuses_the_same_until(tmp_path: Path) -> None:
    assert _invoke("explain", _node_file(tmp_path), "--pod", "p", "--until", "-5m") == (
        2,
        "",
        'error: --until: must be positive, not "-5m"\n',
    )


def test_a_positive_until_still_runs(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    code, _, err = _invoke("simulate", _node_file(tmp_path), "--until", "90s", "--report", str(report))
    assert (code, err) == (0, "")
    assert json.loads(report.read_text())["virtualSeconds"] == 90


# --- 2. ElasticQuota min above max -----------------------------------------------------------------


def test_an_elastic_quota_with_min_above_max_is_refused_naming_file_and_object(tmp_path: Path) -> None:
    path = _write(tmp_path / "quota.yaml", _quota("10", "8"))
    assert _invoke("simulate", _node_file(tmp_path), path) == (
        2,
        "",
        f'error: {path}: ElasticQuota "team/quota": spec.min.cpu: Invalid value: "10": '
        "must be less than or equal to spec.max.cpu\n",
    )


def test_an_elastic_quota_with_min_equal_to_max_runs(tmp_path: Path) -> None:
    path = _write(tmp_path / "quota.yaml", _quota("8", "8000m"))
    code, _, err = _invoke("simulate", _node_file(tmp_path), path, "-o", "json")
    assert (code, err) == (0, "")


# --- 3. --report ----------------------------------------------------------------------------------


def test_a_report_in_a_missing_folder_is_refused_before_the_run(tmp_path: Path) -> None:
    report = tmp_path / "missing" / "report.json"
    assert _invoke("simulate", _node_file(tmp_path), "--report", str(report)) == (
        2,
        "",
        f'error: --report: cannot write "{report}": directory "{report.parent}" does not exist\n',
    )
    assert not report.parent.exists()


def test_a_report_under_a_file_is_refused(tmp_path: Path) -> None:
    nodes = _node_file(tmp_path)
    report = Path(nodes) / "report.json"
    assert _invoke("simulate", nodes, "--report", str(report)) == (
        2,
        "",
        f'error: --report: cannot write "{report}": "{nodes}" is not a directory\n',
    )


def test_a_report_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    assert _invoke("simulate", _node_file(tmp_path), "--report", str(folder)) == (
        2,
        "",
        f'error: --report: "{folder}" is a directory\n',
    )
    assert list(folder.iterdir()) == []


def test_the_report_check_comes_before_reading_the_manifests(tmp_path: Path) -> None:
    code, out, err = _invoke("simulate", str(tmp_path / "absent.yaml"), "--report", str(tmp_path))
    assert (code, out, err) == (2, "", f'error: --report: "{tmp_path}" is a directory\n')


# --- 4. stdin -------------------------------------------------------------------------------------


def test_dash_reads_yaml_manifests_from_stdin_mixed_with_files(tmp_path: Path) -> None:
    pods = yaml.safe_dump_all([make_pod("a").req(cpu="1").obj(), make_pod("b").req(cpu="1").obj()])
    code, out, err = _invoke("simulate", "-", _node_file(tmp_path), "-o", "json", stdin=pods)
    assert (code, err) == (0, "")
    assert _pods(json.loads(out)["items"]) == {"a": "n1", "b": "n1"}


def test_dash_reads_a_kubectl_json_list_from_stdin(tmp_path: Path) -> None:
    dump = json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": [make_pod("c").req(cpu="5").obj()]}, indent=4
    )
    code, out, err = _invoke("simulate", _node_file(tmp_path), "-", "-o", "json", stdin=dump)
    assert (code, err) == (0, "")
    assert _pods(json.loads(out)["items"]) == {"c": ""}


def test_errors_in_stdin_name_it_stdin(tmp_path: Path) -> None:
    bad = make_pod("d").req(cpu="500x").obj()
    assert _invoke("simulate", "-", stdin=yaml.safe_dump(bad)) == (
        2,
        "",
        'error: STDIN: Pod "default/d": spec.containers[0].resources.requests.cpu: invalid quantity "500x"\n',
    )


def test_refused_initial_objects_from_stdin_are_named_as_kubectl_names_them() -> None:
    pod = make_pod("e").priority_class("missing").obj()
    assert _invoke("simulate", "-", stdin=yaml.safe_dump(pod)) == (
        2,
        "",
        'Error from server (Forbidden): error when creating "STDIN": pods "e" is forbidden: '
        "no PriorityClass with name missing was found\n",
    )


def test_dash_twice_is_refused() -> None:
    assert _invoke("simulate", "-", "-", stdin="") == (
        2,
        "",
        "error: -: standard input is given more than once\n",
    )


# --- 5. --version ---------------------------------------------------------------------------------


def test_version_option_prints_what_version_command_prints() -> None:
    assert _invoke("--version") == (0, f"{version('berth')}\n", "")
    assert _invoke("version") == (0, f"{version('berth')}\n", "")


def test_explain_reads_stdin_too(tmp_path: Path) -> None:
    pod = yaml.safe_dump(make_pod("f").req(cpu="1").obj())
    code, out, err = _invoke("explain", _node_file(tmp_path), "-", "--pod", "f", "-o", "json", stdin=pod)
    assert (code, err) == (0, "")
    assert [(t["number"], t["pod"]) for t in json.loads(out)] == [(1, "default/f")]
