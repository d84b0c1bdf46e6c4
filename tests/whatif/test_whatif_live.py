"""``berth whatif`` against a live cluster: a real ``berth serve --api-only`` on a loopback port, reached through
its kubeconfig (or ``--server`` and ``--token``). The answers come from a copy; the server's objects keep their
resourceVersions and nothing is created there (no pod, no Event, no node)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from berth.cli import app
from builders import make_node, make_pod
from serve.serve_helpers import Served, running

Obj = dict[str, Any]

COLLECTIONS = {
    "Node": "/api/v1/nodes",
    "Pod": "/api/v1/namespaces/default/pods",
    "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
}
WATCHED = [*COLLECTIONS.values(), "/api/v1/events", "/api/v1/namespaces"]


def _create(http: httpx.Client, obj: Obj) -> None:
    answer = http.post(COLLECTIONS[obj["kind"]], json=obj)
    assert answer.status_code == 201, answer.text


def _state(http: httpx.Client) -> dict[str, list[tuple[str, str, str]]]:
    """Every object of the watched collections by name with its uid and resourceVersion."""
    out = {}
    for path in WATCHED:
        answer = http.get(path)
        assert answer.status_code == 200, answer.text
        out[path] = sorted(
            (o["metadata"]["name"], o["metadata"]["uid"], o["metadata"]["resourceVersion"])
            for o in answer.json()["items"]
        )
    return out


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """node-1 (4 cpu, 3 requested by pod busy), node-2 (2 cpu), PriorityClass high."""
    with running(tmp_path_factory.mktemp("serve"), "--api-only") as server, server.client() as http:
        _create(
            http,
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "high"},
                "value": 1000,
            },
        )
        _create(http, make_node("node-1").capacity(cpu="4", memory="8Gi").obj())
        _create(http, make_node("node-2").capacity(cpu="2", memory="8Gi").obj())
        _create(http, make_pod("busy").req(cpu="3").node("node-1").obj())
        yield server


def whatif(served: Served, *argv: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["whatif", "--kubeconfig", str(served.kubeconfig), *argv])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_a_live_answer_changes_nothing_on_the_server(served: Served, tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump(make_pod("urgent").req(cpu="3").priority_class("high").obj()))
    with served.client() as http:
        before = _state(http)
        code, out, err = whatif(served, "--pod", str(pod))
        assert (code, err) == (0, "")
        assert out == (
            "Pod default/urgent fits: node-1\n"
            "Preempts 1 pod(s):\n"
            "  NAMESPACE   POD    NODE     PRIORITY\n"
            "  default     busy   node-1   0\n"
        )
        assert _state(http) == before


def test_a_live_pod_that_does_not_fit_with_its_changes_tried_on_copies(
    served: Served, tmp_path: Path
) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump(make_pod("big").req(cpu="3").obj()))
    with served.client() as http:
        before = _state(http)
        code, out, err = whatif(served, "--pod", str(pod), "-o", "json")
        assert (code, err) == (0, "")
        assert _state(http) == before
    answer = json.loads(out)
    assert answer["fits"] is False
    assert answer["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )
    assert [(s["kind"], s["fits"], s["nodes"]) for s in answer["suggestions"]] == [
        ("priority", True, {"default/big": "node-1"}),
        ("nodes", True, {"default/big": "node-1-new-1"}),
    ]


def test_server_and_token_options(served: Served, tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump(make_pod("web").req(cpu="1").obj()))
    result = CliRunner().invoke(
        app,
        [
            "whatif",
            "--server",
            served.url,
            "--token",
            served.token,
            "--insecure-skip-tls-verify",
            "--pod",
            str(pod),
        ],
    )
    assert (result.exit_code, result.stdout) == (0, "Pod default/web fits: node-2\n"), result.stderr
