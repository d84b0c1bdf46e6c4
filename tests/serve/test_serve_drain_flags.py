"""`berth drain` against a running `berth serve`: kubectl's --dry-run, --delete-emptydir-data and --pod-selector
with kubectl's texts; a pod no profile serves and a quota nothing enforces get their Warnings; an unreachable
server is named as kubectl does."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import KUBECTL, Served, eventually, running

from builders import make_node, make_pod

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="the end-to-end tests need kubectl on PATH")

LOCAL = "cannot delete Pods with local storage (use --delete-emptydir-data to override)"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("serve-drain")) as served:
        yield served


def _berth(*args: str, kubeconfig: Path | None = None) -> subprocess.CompletedProcess[str]:
    extra = ["--kubeconfig", str(kubeconfig)] if kubeconfig is not None else []
    return subprocess.run(
        [sys.executable, "-m", "berth", *args, *extra],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _get(served: Served, *args: str) -> Any:
    done = served.kubectl("get", *args, "-o", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _deployment(name: str, *, scratch: bool = False) -> dict[str, Any]:
    labels = {"app": name}
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "nginx"}],
        "terminationGracePeriodSeconds": 0,
    }
    if scratch:
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
    }


def _running_on(served: Served, app: str, node: str) -> list[str]:
    pods = _get(served, "pods", "-l", f"app={app}")["items"]
    return [
        p["metadata"]["name"]
        for p in pods
        if p["spec"].get("nodeName") == node
        and p["status"].get("phase") == "Running"
        and not p["metadata"].get("deletionTimestamp")
    ]


def test_drain_flags_against_a_server(server: Served) -> None:
    server.apply(make_node("n1").obj(), _deployment("cache", scratch=True), _deployment("api"))
    (cache,) = eventually(lambda: _running_on(server, "cache", "n1"), "cache Running")
    (api,) = eventually(lambda: _running_on(server, "api", "n1"), "api Running")
    pods = sorted([api, cache])

    client = _berth("drain", "n1", "--dry-run=client", "--delete-emptydir-data", kubeconfig=server.kubeconfig)
    assert (client.returncode, client.stderr) == (0, "")
    assert client.stdout.splitlines() == [
        "node/n1 cordoned (dry run)",
        *[f"evicting pod default/{p} (dry run)" for p in pods],
        "node/n1 drained (dry run)",
    ]
    srv = _berth("drain", "n1", "--dry-run=server", "--delete-emptydir-data", kubeconfig=server.kubeconfig)
    assert (srv.returncode, srv.stderr) == (0, "")
    assert srv.stdout.splitlines() == [
        "node/n1 cordoned (server dry run)",
        *[f"evicting pod default/{p} (server dry run)" for p in pods],
        "node/n1 drained (server dry run)",
    ]
    assert "unschedulable" not in _get(server, "node", "n1")["spec"]
    assert _running_on(server, "cache", "n1") == [cache]

    refused = _berth("drain", "n1", kubeconfig=server.kubeconfig)
    error = f"{LOCAL}: default/{cache}"
    assert refused.returncode == 1
    assert refused.stdout == "node/n1 cordoned\n"
    assert refused.stderr == (
        f'error: unable to drain node "n1" due to error: {error}, continuing command...\n'
        f"There are pending nodes to be drained:\n n1\nerror: {error}\n"
    )

    chosen = _berth("drain", "n1", "--pod-selector", "app=api", kubeconfig=server.kubeconfig)
    assert (chosen.returncode, chosen.stderr) == (0, "")
    assert chosen.stdout.splitlines() == [
        "node/n1 already cordoned",
        f"evicting pod default/{api}",
        f"pod/{api} evicted",
        "node/n1 drained",
    ]
    assert _running_on(server, "cache", "n1") == [cache]

    bad = _berth("drain", "n1", "--pod-selector", "app in (", kubeconfig=server.kubeconfig)
    assert (bad.returncode, bad.stderr) == (
        2,
        "error: --pod-selector=<pod_selector> must be a valid label selector\n",
    )


def test_a_pod_no_profile_serves_gets_a_warning(server: Served) -> None:
    server.apply(make_pod("lost").scheduler("my-scheduler").obj())

    def warnings() -> list[tuple[str, str, int]]:
        events = _get(server, "events", "--field-selector", "involvedObject.name=lost")["items"]
        return [(e["type"], e["reason"], e["count"]) for e in events]

    assert eventually(warnings, "the NoSchedulerProfile warning") == [("Warning", "NoSchedulerProfile", 1)]
    event = _get(server, "events", "--field-selector", "involvedObject.name=lost")["items"][0]
    assert event["message"] == (
        'no scheduler profile is named "my-scheduler" (the profiles are "default-scheduler", "koord-scheduler"): '
        "the pod stays Pending until a scheduler of that name binds it"
    )


def test_an_unreachable_server_is_named() -> None:
    done = _berth("drain", "n1", "--server", "https://127.0.0.1:1", "--token", "t")
    assert done.returncode == 1
    assert done.stderr == (
        "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n"
    )


def test_a_quota_nothing_enforces_gets_a_warning(server: Served) -> None:
    quota = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": "team-a", "namespace": "default"},
        "spec": {"min": {"cpu": "1"}, "max": {"cpu": "2"}},
    }
    server.apply(quota)

    def warnings() -> list[tuple[str, str, str, int]]:
        events = _get(server, "events", "--field-selector", "involvedObject.kind=ElasticQuota")["items"]
        return [(e["type"], e["reason"], e["message"], e["count"]) for e in events]

    message = (
        'CapacityScheduling is not enabled in scheduler profiles "default-scheduler", "koord-scheduler": '
        "this ElasticQuota's min and max are not enforced"
    )
    assert eventually(warnings, "the QuotaNotEnforced warning") == [
        ("Warning", "QuotaNotEnforced", message, 1)
    ]
