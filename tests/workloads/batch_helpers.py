"""Running ``berth simulate`` in-process on Job/CronJob manifests, and builders for them."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from berth.cli import app

NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
}


@dataclass
class Run:
    """The outcome of one ``berth simulate``."""

    exit_code: int
    stdout: str
    stderr: str

    def objects(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The objects of the JSON output (of one kind), in output order."""
        items = json.loads(self.stdout)["items"]
        return [o for o in items if kind is None or o["kind"] == kind]

    def get(self, kind: str, name: str) -> dict[str, Any]:
        """One object of the JSON output."""
        for o in self.objects(kind):
            if o["metadata"]["name"] == name:
                return o
        raise KeyError(f"{kind} {name} not in output")

    def table(self, heading: str) -> list[str]:
        """The lines of the table output whose header starts with `heading` (the header included)."""
        lines = self.stdout.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith(heading))
        end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
        return lines[start:end]

    def events(self, *reasons: str) -> list[tuple[str, str, str, str]]:
        """(time since the start, object, reason, message) of the Events with these reasons, oldest first."""
        items = [e for e in self.objects("Event") if not reasons or e["reason"] in reasons]
        items.sort(key=lambda e: int(e["metadata"]["resourceVersion"]))
        return [
            (
                e["firstTimestamp"][11:19],
                f"{e['involvedObject']['kind']}/{e['involvedObject']['name']}",
                e["reason"],
                e["message"],
            )
            for e in items
        ]


def simulate(docs: list[dict[str, Any]], *args: str) -> Run:
    """``berth simulate`` of the documents (JSON output unless ``-o`` is given)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input.yaml"
        path.write_text(yaml.safe_dump_all(docs))
        argv = ["simulate", str(path), *args]
        if "-o" not in args:
            argv += ["-o", "json"]
        result = CliRunner().invoke(app, argv)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def pod_template(
    *,
    duration: str | None = "30s",
    exit_code: int | None = None,
    restart: str = "Never",
    grace: int | None = None,
) -> dict[str, Any]:
    """A pod template running one container for `duration` (ending with `exit_code`)."""
    annotations: dict[str, str] = {}
    if duration is not None:
        annotations["berth.dev/duration"] = duration
    if exit_code is not None:
        annotations["berth.dev/exit-code"] = str(exit_code)
    spec: dict[str, Any] = {"restartPolicy": restart, "containers": [{"name": "c", "image": "busybox"}]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    template: dict[str, Any] = {"spec": spec}
    if annotations:
        template["metadata"] = {"annotations": annotations}
    return template


def job(name: str = "pi", template: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    """A batch/v1 Job; keyword arguments go into its spec."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {**spec, "template": template or pod_template()},
    }


def cron_job(
    name: str = "tick", schedule: str = "*/2 * * * *", template: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    """A batch/v1 CronJob whose Jobs run `template` (default: 30s pods); keyword arguments go into its spec."""
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": schedule,
            **spec,
            "jobTemplate": {"spec": {"template": template or pod_template()}},
        },
    }
