"""``--validate`` of berth simulate / explain / deschedule, and safe YAML, through the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from decoding_helpers import LAUGHS
from typer.testing import CliRunner

from berth.cli import app
from builders import make_node, make_pod


def _berth(*argv: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(argv))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _typos() -> list[dict[str, Any]]:
    pod = make_pod("web").req(cpu="100m").obj()
    pod["spec"]["nodeSelecter"] = {"zone": "a"}
    quota = {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "q", "namespace": "team"},
        "spec": {"mix": {"cpu": "1"}, "max": {"cpu": "2"}},
    }
    return [make_node("n1").capacity(cpu="4").obj(), pod, quota]


@pytest.fixture
def typos(tmp_path: Path) -> Path:
    f = tmp_path / "typos.yaml"
    f.write_text(yaml.safe_dump_all(_typos()))
    return f


def _lines(f: Path) -> list[str]:
    return [
        f'{f}#1: Pod "default/web": strict decoding error: unknown field "spec.nodeSelecter" '
        '(did you mean "spec.nodeSelector"?)',
        f'{f}#2: ElasticQuota "team/q": strict decoding error: unknown field "spec.mix"',
    ]


def test_pods_of_a_json_file_sharing_a_spec_are_each_checked(tmp_path: Path) -> None:
    # a spec found without unknown fields is not walked again: one differing deep down still is
    pods = [make_pod(f"p{i}").req(cpu="100m").obj() for i in range(4)]
    pods[2]["spec"]["containers"][0]["resources"]["limitz"] = {"cpu": "1"}
    f = tmp_path / "pods.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    code, out, err = _berth("simulate", str(f))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f'error: {f} items[2]: Pod "default/p2": strict decoding error: unknown field '
        '"spec.containers[0].resources.limitz" (did you mean "spec.containers[0].resources.limits"?)'
    ]


@pytest.mark.parametrize("flag", [[], ["--validate=strict"], ["--validate", "true"]])
def test_strict_refuses_every_object_with_unknown_fields(typos: Path, flag: list[str]) -> None:
    code, out, err = _berth("simulate", str(typos), *flag)
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"error: {line}" for line in _lines(typos)]


def test_warn_prints_the_same_text_and_runs_without_the_fields(typos: Path) -> None:
    code, out, err = _berth("simulate", str(typos), "--validate=warn", "-o", "json")
    assert code == 0, err
    assert err.splitlines() == [f"Warning: {line}" for line in _lines(typos)]
    objects = {o["kind"]: o for o in yaml.safe_load(out)["items"]}
    assert "nodeSelecter" not in objects["Pod"]["spec"]
    assert objects["Pod"]["spec"]["nodeName"] == "n1"
    assert objects["ElasticQuota"]["spec"] == {"max": {"cpu": "2"}}


@pytest.mark.parametrize("value", ["ignore", "false", "False"])
def test_ignore_drops_the_fields_silently(typos: Path, value: str) -> None:
    code, _, err = _berth("simulate", str(typos), f"--validate={value}", "-o", "json")
    assert (code, err) == (0, "")


def test_a_bad_validate_value_is_refused_as_kubectl_refuses_it(typos: Path) -> None:
    code, _, err = _berth("simulate", str(typos), "--validate=loose")
    assert (code, err) == (
        2,
        'error: invalid - validate option "loose"; must be one of: strict (or true), warn, ignore (or false)\n',
    )


def test_explain_and_deschedule_refuse_unknown_fields_too(typos: Path, tmp_path: Path) -> None:
    code, _, err = _berth("explain", str(typos), "--pod", "web")
    assert (code, err.splitlines()) == (2, [f"error: {line}" for line in _lines(typos)])
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        yaml.safe_dump({"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": []})
    )
    code, _, err = _berth("deschedule", str(typos), "--policy", str(policy))
    assert (code, err.splitlines()) == (2, [f"error: {line}" for line in _lines(typos)])
    code, _, err = _berth("deschedule", str(typos), "--policy", str(policy), "--validate=ignore")
    assert (code, err) == (0, "")


def test_unknown_fields_are_reported_before_validation_errors(tmp_path: Path) -> None:
    pod = make_pod("web").req(cpu="500x").obj()
    pod["spec"]["nodeSelecter"] = {}
    f = tmp_path / "pod.yaml"
    f.write_text(yaml.safe_dump(pod))
    code, _, err = _berth("simulate", str(f))
    assert (code, err) == (
        2,
        f'error: {f}: Pod "default/web": strict decoding error: unknown field "spec.nodeSelecter" '
        '(did you mean "spec.nodeSelector"?)\n',
    )


def test_a_billion_laughs_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    f = tmp_path / "laughs.yaml"
    f.write_text(LAUGHS)
    code, out, err = _berth("simulate", str(f))
    assert (code, out, err) == (
        2,
        "",
        f"error: {f}: invalid YAML: yaml: document contains excessive aliasing\n",
    )
