"""Helpers for running ``berth simulate`` in-process."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from berth.cli import app


@dataclass
class Run:
    """The outcome of one CLI invocation."""

    exit_code: int
    stdout: str
    stderr: str

    def objects(self) -> list[dict[str, Any]]:
        doc = json.loads(self.stdout)
        assert doc["kind"] == "List"
        return list(doc["items"])

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        for o in self.objects():
            meta = o["metadata"]
            if (
                o["kind"] == kind
                and meta["name"] == name
                and (namespace is None or meta.get("namespace") == namespace)
            ):
                return o
        raise KeyError(f"{kind} {namespace}/{name} not in output")

    def events(self, involved: str) -> list[dict[str, Any]]:
        return [o for o in self.objects() if o["kind"] == "Event" and o["involvedObject"]["name"] == involved]


@pytest.fixture
def simulate(tmp_path: Path) -> Callable[..., Run]:
    """Write documents to a file and run ``berth simulate`` on it with the given extra arguments."""

    def run(docs: list[dict[str, Any]] | None = None, *args: str, paths: list[str] | None = None) -> Run:
        argv = ["simulate"]
        if docs is not None:
            f = tmp_path / "input.yaml"
            f.write_text(yaml.safe_dump_all(docs))
            argv.append(str(f))
        argv += paths or []
        argv += list(args)
        if "-o" not in args:
            argv += ["-o", "json"]
        result = CliRunner().invoke(app, argv)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Run(result.exit_code, result.stdout, result.stderr)

    return run
