"""`berth serve` with the real kubectl: Jobs and CronJobs created, run, listed with kube's columns, deleted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from serve_helpers import KUBECTL, Served, eventually, running

from builders import make_node

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="the end-to-end tests need kubectl on PATH")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("jobs")) as served:
        served.apply(make_node("n1").obj())
        yield served


def _ok(done: Any) -> str:
    assert done.returncode == 0, done.stderr
    return str(done.stdout)


def _rows(text: str) -> list[list[str]]:
    """A kubectl table split into cells (on runs of two or more spaces)."""
    return [[c for c in line.split("  ") if c.strip()] for line in text.splitlines()]


def _cells(row: list[str]) -> list[str]:
    return [c.strip() for c in row]


def test_kubectl_create_job_runs_its_pod(server: Served) -> None:
    assert _ok(server.kubectl("create", "job", "hello", "--image=busybox", "--", "echo", "hi")) == (
        "job.batch/hello created\n"
    )

    def running_pod() -> list[str] | None:
        rows = _rows(_ok(server.kubectl("get", "jobs")))
        return _cells(rows[1]) if rows[1:] and rows[1][1].strip() == "Running" else None

    row = eventually(running_pod, "job hello Running")
    header = _ok(server.kubectl("get", "jobs")).splitlines()[0]
    assert header.split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert row[:3] == ["hello", "Running", "0/1"]
    job = json.loads(_ok(server.kubectl("get", "job", "hello", "-o", "json")))
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["backoffLimit"] == 6
    pods = json.loads(_ok(server.kubectl("get", "pods", "-l", "job-name=hello", "-o", "json")))["items"]
    assert [p["metadata"]["ownerReferences"][0]["uid"] for p in pods] == [uid]
    eventually(
        lambda: (
            json.loads(_ok(server.kubectl("get", "job", "hello", "-o", "json")))["status"].get("ready") == 1
        ),
        "job hello ready 1",
    )


def test_a_job_from_a_manifest_completes(server: Served) -> None:
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "quick"},
        "spec": {
            "completions": 2,
            "template": {
                "metadata": {"annotations": {"berth.dev/duration": "1s"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    assert server.apply(manifest) == "job.batch/quick created\n"

    def complete() -> list[str] | None:
        rows = _rows(_ok(server.kubectl("get", "job", "quick")))
        return _cells(rows[1]) if rows[1][1].strip() == "Complete" else None

    row = eventually(complete, "job quick Complete")
    assert row[:3] == ["quick", "Complete", "2/2"]
    status = json.loads(_ok(server.kubectl("get", "job", "quick", "-o", "json")))["status"]
    assert [c["type"] for c in status["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert status["succeeded"] == 2


def test_deleting_a_job_deletes_its_pods(server: Served) -> None:
    _ok(server.kubectl("create", "job", "doomed", "--image=busybox"))
    eventually(
        lambda: _ok(server.kubectl("get", "pods", "-l", "job-name=doomed", "-o", "name")).strip() != "",
        "doomed's pod",
    )
    assert _ok(server.kubectl("delete", "job", "doomed")) == 'job.batch "doomed" deleted\n'

    def terminating() -> bool:
        pods = json.loads(_ok(server.kubectl("get", "pods", "-l", "job-name=doomed", "-o", "json")))["items"]
        return all(p["metadata"].get("deletionTimestamp") for p in pods)  # gone, or in their 30s grace period

    eventually(terminating, "doomed's pods deleted by the garbage collector")


def test_kubectl_create_cronjob_and_get_cronjobs(server: Served) -> None:
    out = _ok(server.kubectl("create", "cronjob", "tick", "--image=busybox", "--schedule=0 3 * * *"))
    assert out == "cronjob.batch/tick created\n"
    lines = _ok(server.kubectl("get", "cronjobs")).splitlines()
    assert lines[0].split() == [
        "NAME",
        "SCHEDULE",
        "TIMEZONE",
        "SUSPEND",
        "ACTIVE",
        "LAST",
        "SCHEDULE",
        "AGE",
    ]
    assert _cells(_rows(lines[1])[0])[:6] == ["tick", "0 3 * * *", "<none>", "False", "0", "<none>"]
    bad = server.kubectl("create", "cronjob", "bad", "--image=busybox", "--schedule=61 * * * *")
    assert bad.returncode == 1
    assert (
        'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61' in bad.stderr
    )
