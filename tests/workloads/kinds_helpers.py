"""Running ``berth simulate`` in-process on built manifests, for the StatefulSet/DaemonSet/Service tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from berth.cli import app

Obj = dict[str, Any]


def node(name: str, zone: str = "z1", cpu: str = "4", taints: list[Obj] | None = None, **labels: str) -> Obj:
    """A Node with hostname and zone labels."""
    meta_labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone, **labels}
    out: Obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": meta_labels},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }
    if taints:
        out["spec"] = {"taints": taints}
    return out


def pod_template(
    app_label: str, cpu: str = "100m", annotations: dict[str, str] | None = None, **spec: Any
) -> Obj:
    """A pod template labelled app=<app_label>; extra keyword arguments go into its spec."""
    meta: Obj = {"labels": {"app": app_label}}
    if annotations:
        meta["annotations"] = annotations
    containers = [{"name": "c", "image": "img", "resources": {"requests": {"cpu": cpu}}}]
    return {"metadata": meta, "spec": {"containers": containers, **spec}}


def stateful_set(name: str, replicas: int, **spec: Any) -> Obj:
    """A StatefulSet selecting app=<name>; extra keyword arguments go into its spec."""
    body: Obj = {
        "serviceName": name,
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": spec.pop("template", None) or pod_template(name),
        **spec,
    }
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name}, "spec": body}


def daemon_set(name: str, **spec: Any) -> Obj:
    """A DaemonSet selecting app=<name>; extra keyword arguments go into its spec."""
    body: Obj = {
        "selector": {"matchLabels": {"app": name}},
        "template": spec.pop("template", None) or pod_template(name),
        **spec,
    }
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name}, "spec": body}


class Result:
    """The outcome of one ``berth simulate -o json`` run."""

    def __init__(self, exit_code: int, stdout: str, stderr: str) -> None:
        self.exit_code, self.stdout, self.stderr = exit_code, stdout, stderr

    def objects(self, kind: str | None = None) -> list[Obj]:
        """The final objects (of `kind`)."""
        items: list[Obj] = json.loads(self.stdout)["items"]
        return [o for o in items if kind is None or o["kind"] == kind]

    def get(self, kind: str, name: str) -> Obj:
        """The object of `kind` named `name`."""
        (found,) = [o for o in self.objects(kind) if o["metadata"]["name"] == name]
        return found

    def placements(self, prefix: str) -> dict[str, str]:
        """Pod name → node name ("" when pending) of the pods whose name starts with `prefix`."""
        return {
            p["metadata"]["name"]: p["spec"].get("nodeName", "")
            for p in self.objects("Pod")
            if p["metadata"]["name"].startswith(prefix)
        }

    def messages(self, involved: str) -> list[tuple[str, str]]:
        """(reason, message) of the events about the object named `involved`, in time order."""
        events = [e for e in self.objects("Event") if e["involvedObject"]["name"] == involved]
        events.sort(key=lambda e: (e.get("firstTimestamp") or "", e["metadata"]["name"]))
        return [(e["reason"], e["message"]) for e in events]


def simulate(tmp_path: Path, docs: list[Obj], *args: str) -> Result:
    """Write `docs` to a file and run ``berth simulate FILE -o json ARGS``."""
    path = tmp_path / "input.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", "json", *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Result(result.exit_code, result.stdout, result.stderr)
