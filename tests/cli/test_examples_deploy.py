"""`examples/deploy/`: rbac.yaml and crds.yaml are what `berth rbac` and `berth crds` print today, and the
Deployment runs `berth run` with options it accepts, the ConfigMap's scheduler configuration and the
ServiceAccount of rbac.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer.core
import typer.main
import yaml
from typer.testing import CliRunner

from berth.cli import app
from berth.scheduler.framework.config import parse_config

DEPLOY = Path(__file__).resolve().parents[2] / "examples" / "deploy"
Obj = dict[str, Any]


def _printed(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize(("file", "command"), [("rbac.yaml", "rbac"), ("crds.yaml", "crds")])
def test_the_manifests_are_the_commands_output(file: str, command: str) -> None:
    assert (DEPLOY / file).read_text() == _printed(command), (
        f"examples/deploy/{file} is stale: regenerate it with `berth {command} > examples/deploy/{file}`"
    )


def _manifest() -> dict[str, Obj]:
    docs = list(yaml.safe_load_all((DEPLOY / "berth-scheduler.yaml").read_text()))
    return {d["kind"]: d for d in docs}


def _container() -> Obj:
    (container,) = _manifest()["Deployment"]["spec"]["template"]["spec"]["containers"]
    result: Obj = container
    return result


def _run_options(args: list[str]) -> dict[str, Any]:
    """The `berth run` parameters the args give (parsed by the command's own options, not run)."""
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    command = group.commands[args[0]]
    with command.make_context("berth run", args[1:]) as ctx:
        return dict(ctx.params)


def test_the_deployment_runs_two_leader_electing_replicas_as_the_service_account() -> None:
    manifest = _manifest()
    deployment = manifest["Deployment"]
    rbac = {d["kind"]: d for d in yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text())}
    account = rbac["ServiceAccount"]["metadata"]
    assert deployment["spec"]["replicas"] == 2
    assert deployment["metadata"]["namespace"] == account["namespace"]
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == account["name"]
    params = _run_options(_container()["args"])
    assert params["leader_elect"] == "true"
    assert params["kubeconfig"] is None  # the in-cluster service account
    # the Lease is the one the Role of rbac.yaml grants
    (lease_rule,) = [r for r in rbac["Role"]["rules"] if r.get("resourceNames")]
    assert params["leader_elect_resource_namespace"] == rbac["Role"]["metadata"]["namespace"]
    assert [params["leader_elect_resource_name"]] == lease_rule["resourceNames"]


def test_the_scheduler_config_is_the_config_map_and_names_only_berths_profiles() -> None:
    manifest = _manifest()
    container = _container()
    params = _run_options(container["args"])
    (mount,) = container["volumeMounts"]
    (volume,) = manifest["Deployment"]["spec"]["template"]["spec"]["volumes"]
    assert volume == {"name": mount["name"], "configMap": {"name": manifest["ConfigMap"]["metadata"]["name"]}}
    config_path = Path(params["scheduler_config"])
    assert config_path.parent == Path(mount["mountPath"])
    text = manifest["ConfigMap"]["data"][config_path.name]
    config = parse_config(yaml.safe_load(text), source=str(config_path))
    assert [p.scheduler_name for p in config.profiles] == ["berth-scheduler"]


def test_the_probes_ask_healthz_of_the_metrics_port() -> None:
    container = _container()
    params = _run_options(container["args"])
    host, _, port = params["metrics_listen"].rpartition(":")
    assert host == "0.0.0.0"  # the kubelet probes the pod's IP
    assert [p["containerPort"] for p in container["ports"]] == [int(port)]
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": int(port), "scheme": "HTTPS"}
