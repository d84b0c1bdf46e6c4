"""Extenders in every mode: `berth serve` (a real server process) and `berth simulate` (the CLI) call a real
extender over HTTP."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import yaml
from extender_server import running
from typer.testing import CliRunner

from berth.cli import app
from builders import make_node, make_pod
from serve.serve_helpers import running as serving


def test_serve_schedules_through_the_extender(tmp_path: Path) -> None:
    def keep_n2(body: dict[str, Any]) -> tuple[int, Any]:
        names = body["NodeNames"]
        return 200, {
            "NodeNames": [n for n in names if n == "n2"],
            "FailedNodes": {"n1": "no gpu", "n3": "no gpu"},
        }

    with running({"filter": keep_n2}) as ext:
        config = tmp_path / "scheduler.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "extenders": [{"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}],
                }
            )
        )
        with serving(tmp_path / "data", "--scheduler-config", str(config)) as served, served.client() as c:
            for n in ("n1", "n2", "n3"):
                node = make_node(n).capacity(cpu="4", memory="8Gi", pods="110").obj()
                assert c.post("/api/v1/nodes", json=node).status_code == 201
            pods = "/api/v1/namespaces/default/pods"
            assert c.post(pods, json=make_pod("p").req(cpu="1").obj()).status_code == 201
            deadline = time.monotonic() + 30
            node_name = None
            while node_name is None and time.monotonic() < deadline:
                node_name = c.get(f"{pods}/p").json()["spec"].get("nodeName")
                if node_name is None:
                    time.sleep(0.1)
    assert node_name == "n2"
    (body,) = ext.bodies("filter")
    assert body["NodeNames"] == ["n1", "n2", "n3"]
    assert body["Pod"]["metadata"]["name"] == "p"


def test_serve_answers_an_extender_that_binds_through_it(tmp_path: Path) -> None:
    """kube's extenders bind by POSTing pods/binding to the API server: in berth serve that is the server that
    is binding, so the extender's call must not hold it (it used to block until httpTimeout)."""
    serving_at: list[Any] = []

    def bind_back(body: dict[str, Any]) -> tuple[int, Any]:
        (served,) = serving_at
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": body["PodName"], "namespace": body["PodNamespace"], "uid": body["PodUID"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": body["Node"]},
        }
        with served.client() as c:
            path = f"/api/v1/namespaces/{body['PodNamespace']}/pods/{body['PodName']}/binding"
            done = c.post(path, json=binding)
        return 200, {"Error": "" if done.status_code == 201 else done.text}

    with running({"bind": bind_back}) as ext:
        config = tmp_path / "scheduler.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "extenders": [{"urlPrefix": ext.url, "bindVerb": "bind", "httpTimeout": "20s"}],
                }
            )
        )
        with serving(tmp_path / "data", "--scheduler-config", str(config)) as served, served.client() as c:
            serving_at.append(served)
            node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj()
            assert c.post("/api/v1/nodes", json=node).status_code == 201
            pods = "/api/v1/namespaces/default/pods"
            started = time.monotonic()
            assert c.post(pods, json=make_pod("p").req(cpu="1").obj()).status_code == 201
            scheduled: list[str] = []
            while not scheduled and time.monotonic() < started + 15:
                events = c.get("/api/v1/namespaces/default/events").json()["items"]
                scheduled = [e["message"] for e in events if e["reason"] == "Scheduled"]
                time.sleep(0.1)
            node_name = c.get(f"{pods}/p").json()["spec"].get("nodeName")
    assert (node_name, scheduled) == ("n1", ["Successfully assigned default/p to n1"])
    (body,) = ext.bodies("bind")
    assert (body["PodName"], body["Node"]) == ("p", "n1")


def _invoke(*argv: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(argv))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _write(path: Path, *docs: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _scheduler_config(path: Path, *extenders: dict[str, Any]) -> str:
    return _write(
        path,
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "extenders": list(extenders),
        },
    )


def test_simulate_calls_the_extender_over_http(tmp_path: Path) -> None:
    prio = [{"Host": "n1", "Score": 0}, {"Host": "n2", "Score": 7}]
    with running({"prioritize": lambda body: (200, prio)}) as ext:
        cluster = _write(
            tmp_path / "cluster.yaml",
            *[make_node(n).capacity(cpu="4", memory="8Gi", pods="110").obj() for n in ("n1", "n2")],
            make_pod("p").req(cpu="1").obj(),
        )
        config = _scheduler_config(
            tmp_path / "sched.yaml", {"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 2}
        )
        code, out, err = _invoke("simulate", cluster, "--scheduler-config", config, "-o", "json")
    assert (code, err) == (0, "")
    items = json.loads(out)["items"]
    (pod,) = [o for o in items if o["kind"] == "Pod"]
    assert pod["spec"]["nodeName"] == "n2"
    assert ext.verbs() == ["prioritize"]


def test_simulate_refuses_an_invalid_extender_config(tmp_path: Path) -> None:
    cluster = _write(tmp_path / "cluster.yaml", make_node("n1").obj())
    config = _scheduler_config(
        tmp_path / "sched.yaml",
        {"urlPrefix": "http://127.0.0.1:1/x", "bindVerb": "bind"},
        {"urlPrefix": "http://127.0.0.1:1/y", "bindVerb": "bind"},
    )
    assert _invoke("simulate", cluster, "--scheduler-config", config) == (
        2,
        "",
        f'error: {config}: extenders: Invalid value: "found 2 extenders implementing bind": '
        "only one extender can implement bind\n",
    )
