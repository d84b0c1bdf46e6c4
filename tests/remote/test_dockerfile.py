"""The repository's Dockerfile builds the image examples/deploy/berth-scheduler.yaml runs: python:3.11-slim,
Berth installed with pip, a non-root numeric user, `berth` as the entry point — and the Deployment's command
is that entry point, its arguments a `berth run` the command line accepts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer.core
import typer.main
import yaml

from berth.cli import app

ROOT = Path(__file__).resolve().parents[2]
Obj = dict[str, Any]


def _instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions (continuation lines joined, comments left out)."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in (ROOT / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pending = f"{pending} {line.removesuffix(chr(92)).strip()}".strip()
        if line.endswith("\\"):
            continue
        word, _, rest = pending.partition(" ")
        out.append((word.upper(), rest.strip()))
        pending = ""
    return out


def _container() -> Obj:
    docs = {
        d["kind"]: d for d in yaml.safe_load_all((ROOT / "examples/deploy/berth-scheduler.yaml").read_text())
    }
    deployment = docs["Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    result: Obj = {
        **container,
        "podSecurityContext": deployment["spec"]["template"]["spec"]["securityContext"],
    }
    return result


def test_the_image_installs_berth_on_python_311_slim_as_a_non_root_user() -> None:
    steps = _instructions()
    assert steps[0] == ("FROM", "python:3.11-slim")
    runs = [rest for word, rest in steps if word == "RUN"]
    assert any(r.startswith("pip install .") for r in runs)
    (user,) = [rest for word, rest in steps if word == "USER"]
    uid = user.split(":")[0]
    assert uid.isdigit() and int(uid) != 0  # numeric: the kubelet can check runAsNonRoot
    copied = {rest.split()[0] for word, rest in steps if word == "COPY"}
    assert copied == {"pyproject.toml", "src"}
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert {"*", "!pyproject.toml", "!README.md", "!src/"} <= set(ignored)  # the build context: only these


def test_the_deployment_runs_the_entry_point_with_berth_run_options() -> None:
    steps = dict(_instructions())
    entry = json.loads(steps["ENTRYPOINT"])
    container = _container()
    assert container["command"] == entry == ["berth"]
    assert container["podSecurityContext"]["runAsNonRoot"] is True
    args = container["args"]
    assert args[0] == "run"
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    command = group.commands[args[0]]
    with command.make_context("berth run", list(args[1:])) as ctx:  # refuses an unknown or malformed option
        params = ctx.params
    assert params["metrics_listen"].endswith(":10259")
    assert f"EXPOSE {params['metrics_listen'].rpartition(':')[2]}" in (ROOT / "Dockerfile").read_text()
