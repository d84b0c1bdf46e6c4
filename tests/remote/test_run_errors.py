"""`berth run` refuses bad input with one clear line and a non-zero exit: an unreadable kubeconfig, an
unreachable server, a server without Berth's CRDs, a verb RBAC forbids, bad options."""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.parse
from pathlib import Path

import httpx
import pytest
import yaml

from berth.controlplane.plane import select_controllers
from berth.controlplane.run import OPTIONAL_KINDS, followed_kinds
from berth.remote.client import KubeClient
from berth.remote.preflight import PreflightError, check_cluster
from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore


def _berth_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "berth", "run", *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_an_unreadable_kubeconfig(tmp_path: Path) -> None:
    done = _berth_run("--kubeconfig", str(tmp_path / "missing"))
    assert (done.returncode, done.stderr) == (
        2,
        f"error: {tmp_path / 'missing'}: No such file or directory\n",
    )


def test_an_unreachable_server(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    done = _berth_run("--kubeconfig", str(path))
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        f"error: cannot reach the API server at http://127.0.0.1:{port}: GET /api/v1/pods"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--controllers", "reservation,kubelet"), '--controllers: unknown controller "kubelet"'),
        (("--leader-elect", "maybe"), '--leader-elect: invalid boolean "maybe" (true or false)'),
        (("--leader-elect-renew-deadline", "20s"), "--leader-elect-lease-duration must be greater than"),
        (("--kube-api-burst", "0"), "--kube-api-burst: must be positive when --kube-api-qps is (0)"),
    ],
)
def test_bad_options(args: tuple[str, ...], message: str) -> None:
    done = _berth_run(*args)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {message}") and done.stderr.count("\n") == 1


def _client(handle: object) -> KubeClient:
    return KubeClient("http://berth.test", transport=httpx.MockTransport(handle))  # type: ignore[arg-type]


def test_a_server_without_berths_crds() -> None:
    api = RestAPI(MemoryStore())

    def handle(request: httpx.Request) -> httpx.Response:
        if "koordinator" in request.url.path or "x-k8s" in request.url.path:
            return httpx.Response(
                404, json={"kind": "Status", "code": 404, "reason": "NotFound", "message": "404"}
            )
        query = urllib.parse.parse_qs(request.url.query.decode())
        code, body = api.handle(Request(request.method, request.url.path, query, request.content))
        return httpx.Response(code, json=body)

    with pytest.raises(PreflightError) as e:
        check_cluster(_client(handle), "https://k8s:6443", followed_kinds(select_controllers("*"), False))
    assert str(e.value) == (
        "the server at https://k8s:6443 does not serve reservations.scheduling.koordinator.sh "
        "(scheduling.koordinator.sh/v1alpha1): install Berth's CustomResourceDefinitions first "
        "(berth crds | kubectl apply -f -)"
    )


def test_a_forbidden_list_is_reported_with_the_rbac_message() -> None:
    message = (
        'nodes is forbidden: User "system:serviceaccount:kube-system:berth" cannot list resource "nodes" '
        'in API group "" at the cluster scope'
    )

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1/nodes":
            return httpx.Response(
                403, json={"kind": "Status", "code": 403, "reason": "Forbidden", "message": message}
            )
        return httpx.Response(200, json={"kind": "List", "metadata": {"resourceVersion": "1"}, "items": []})

    with pytest.raises(PreflightError) as e:
        check_cluster(_client(handle), "https://k8s:6443", followed_kinds(select_controllers("*"), False))
    assert str(e.value) == f"Error from server (Forbidden): {message}"


def test_the_older_group_of_scheduler_plugins_kinds_is_optional() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        if "sigs.k8s.io" in request.url.path:
            return httpx.Response(
                404, json={"kind": "Status", "code": 404, "reason": "NotFound", "message": "x"}
            )
        return httpx.Response(200, json={"kind": "List", "metadata": {"resourceVersion": "1"}, "items": []})

    kinds = followed_kinds(select_controllers("reservation"), False)
    assert check_cluster(_client(handle), "https://k8s:6443", kinds, OPTIONAL_KINDS) == list(OPTIONAL_KINDS)


def test_select_controllers_reads_kube_controller_managers_syntax() -> None:
    assert select_controllers("*") == {"reservation", "elasticquota", "podgroup", "podmigrationjob"}
    assert select_controllers("*,-podgroup") == {"reservation", "elasticquota", "podmigrationjob"}
    assert select_controllers("reservation, elasticquota") == {"reservation", "elasticquota"}
    assert select_controllers("") == frozenset()
