"""Connecting through a kubeconfig (read by kubernetes-asyncio's loader) or the in-cluster service account:
client certificates and CA data against a TLS server that requires them, bearer tokens, exec credential
plugins (with renewal) and in-cluster config against a real `berth serve`, contexts, $KUBECONFIG merging,
the command-line overrides, and the one-line errors of `berth cordon` (exit 2)."""

from __future__ import annotations

import base64
import datetime as dt
import itertools
import json
import ssl
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from remote_pki import CA, mtls_server
from typer.testing import CliRunner

import berth.remote.kubeconfig as kubeconfig_module
from berth.api.errors import Unauthorized
from berth.cli import app
from berth.remote.client import KubeClient, ServerUnreachable
from berth.remote.kubeconfig import connection_for, load_kubeconfig
from serve.serve_helpers import Served, running

_names = itertools.count()


def _kubeconfig(
    path: Path,
    contexts: dict[str, tuple[dict[str, Any], dict[str, Any]]],
    current: str | None = None,
) -> Path:
    """Write a kubeconfig with one cluster and one user per context (``name: (cluster, user)``)."""
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": f"{n}-cluster", "cluster": c} for n, (c, _) in contexts.items()],
        "users": [{"name": f"{n}-user", "user": u} for n, (_, u) in contexts.items()],
        "contexts": [
            {"name": n, "context": {"cluster": f"{n}-cluster", "user": f"{n}-user"}} for n in contexts
        ],
    }
    if current is not None:
        doc["current-context"] = current
    path.write_text(yaml.safe_dump(doc))
    return path


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


# --- client certificates against a TLS server that requires them -----------------------------------------


def test_client_certificate_and_ca_data_against_a_server_requiring_client_certs(tmp_path: Path) -> None:
    ca = CA()
    alice = ca.issue("alice")
    with mtls_server(ca, ca.issue("server", server_names=("127.0.0.1",)), tmp_path) as port:
        cluster = {"server": f"https://127.0.0.1:{port}", "certificate-authority-data": ca.b64}
        user = {"client-certificate-data": alice.cert_b64, "client-key-data": alice.key_b64}
        cfg = _kubeconfig(tmp_path / "config", {"mtls": (cluster, user)}, "mtls")
        conn = load_kubeconfig(str(cfg))
        assert isinstance(conn.verify, ssl.SSLContext) and conn.token is None
        client = KubeClient.connect(conn)
        assert client.request("GET", "/api/v1/nodes") == {"path": "/api/v1/nodes", "clientCN": "alice"}
        client.close()
        # the same server without a client certificate: the handshake is refused
        bare = _kubeconfig(tmp_path / "bare", {"mtls": (cluster, {})}, "mtls")
        with pytest.raises(ServerUnreachable):
            KubeClient.connect(load_kubeconfig(str(bare))).request("GET", "/api/v1/nodes")
        # and a client that does not trust the CA refuses the server
        untrusted = _kubeconfig(
            tmp_path / "untrusted",
            {"mtls": ({**cluster, "certificate-authority-data": CA().b64}, user)},
            "mtls",
        )
        with pytest.raises(ServerUnreachable, match="CERTIFICATE_VERIFY_FAILED"):
            KubeClient.connect(load_kubeconfig(str(untrusted))).request("GET", "/api/v1/nodes")


def test_certificate_files_relative_to_the_kubeconfig_and_tls_server_name(tmp_path: Path) -> None:
    ca = CA()
    (tmp_path / "pki").mkdir()
    (tmp_path / "pki" / "ca.crt").write_bytes(ca.pem)
    ca.issue("bob").write(tmp_path / "pki", "bob")
    # the server's certificate names only kube.test, not the address the kubeconfig dials
    with mtls_server(ca, ca.issue("server", server_names=("kube.test",)), tmp_path) as port:
        cluster = {
            "server": f"https://127.0.0.1:{port}",
            "certificate-authority": "pki/ca.crt",
            "tls-server-name": "kube.test",
        }
        user = {"client-certificate": "pki/bob.crt", "client-key": "pki/bob.key"}
        cfg = _kubeconfig(tmp_path / "config", {"files": (cluster, user)}, "files")
        conn = load_kubeconfig(str(cfg))
        assert conn.cert == (str(tmp_path / "pki" / "bob.crt"), str(tmp_path / "pki" / "bob.key"))
        assert conn.tls_server_name == "kube.test"
        assert KubeClient.connect(conn).request("GET", "/x")["clientCN"] == "bob"
        del cluster["tls-server-name"]
        plain = _kubeconfig(tmp_path / "plain", {"files": (cluster, user)}, "files")
        with pytest.raises(ServerUnreachable, match="CERTIFICATE_VERIFY_FAILED"):
            KubeClient.connect(load_kubeconfig(str(plain))).request("GET", "/x")
        # --insecure-skip-tls-verify: no server verification, the client certificate is still presented
        insecure = connection_for(str(plain), insecure=True)
        assert KubeClient.connect(insecure).request("GET", "/x")["clientCN"] == "bob"


def test_proxy_url_is_passed_on(tmp_path: Path) -> None:
    cluster = {"server": "https://10.0.0.1:6443", "proxy-url": "http://proxy.test:3128"}
    conn = load_kubeconfig(str(_kubeconfig(tmp_path / "config", {"p": (cluster, {"token": "t"})}, "p")))
    assert (conn.server, conn.proxy, conn.token, conn.verify) == (
        "https://10.0.0.1:6443",
        "http://proxy.test:3128",
        "t",
        True,
    )


# --- against berth serve ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("serve"), "--api-only") as s:
        yield s


def _node(served: Served) -> str:
    """A new node on the server; its name."""
    name = f"node-{next(_names)}"
    with served.client() as http:
        done = http.post(
            "/api/v1/nodes", json={"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
        )
        assert done.status_code == 201, done.text
    return name


def _unschedulable(served: Served, node: str) -> bool:
    with served.client() as http:
        return bool(http.get(f"/api/v1/nodes/{node}").json()["spec"].get("unschedulable"))


def test_token_user_from_berth_serve_kubeconfig(served: Served) -> None:
    node = _node(served)
    done = _cli("cordon", node, "--kubeconfig", str(served.kubeconfig))
    assert (done.exit_code, done.stdout, done.stderr) == (0, f"node/{node} cordoned\n", "")
    assert _unschedulable(served, node)
    done = _cli("uncordon", node, "--kubeconfig", str(served.kubeconfig))
    assert (done.exit_code, done.stdout) == (0, f"node/{node} uncordoned\n")


def _served_cluster(served: Served) -> dict[str, Any]:
    return {
        "server": served.url,
        "certificate-authority-data": base64.b64encode(served.ca.read_bytes()).decode(),
    }


PLUGIN = """\
import json, os, pathlib, sys
plan = pathlib.Path(sys.argv[1])
calls = plan.with_suffix(".calls")
n = int(calls.read_text()) if calls.exists() else 0
calls.write_text(str(n + 1))
if os.environ.get("BERTH_TEST_PLUGIN") != "yes":
    sys.exit("the kubeconfig's env did not reach the plugin")
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
steps = json.loads(plan.read_text())
step = steps[min(n, len(steps) - 1)]
if "fail" in step:
    sys.stderr.write(step["fail"])
    sys.exit(1)
status = {"token": step["token"]}
if step.get("expires"):
    status["expirationTimestamp"] = step["expires"]
print(json.dumps({"apiVersion": info["apiVersion"], "kind": "ExecCredential", "status": status}))
"""


def _exec_kubeconfig(
    tmp_path: Path,
    served: Served,
    steps: list[dict[str, Any]],
    api_version: str = "client.authentication.k8s.io/v1",
) -> tuple[Path, Path]:
    """A kubeconfig whose user is the test plugin, answering ``steps`` in turn; the file and the plugin's
    call counter."""
    plugin = tmp_path / "plugin.py"
    plugin.write_text(PLUGIN)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(steps))
    user = {
        "exec": {
            "apiVersion": api_version,
            "command": sys.executable,
            "args": [str(plugin), str(plan)],
            "env": [{"name": "BERTH_TEST_PLUGIN", "value": "yes"}],
            "interactiveMode": "Never",
        }
    }
    return _kubeconfig(
        tmp_path / "config", {"exec": (_served_cluster(served), user)}, "exec"
    ), plan.with_suffix(".calls")


@pytest.mark.parametrize(
    "api_version",
    ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"],
)
def test_exec_plugin_token(tmp_path: Path, served: Served, api_version: str) -> None:
    cfg, calls = _exec_kubeconfig(tmp_path, served, [{"token": served.token}], api_version)
    node = _node(served)
    done = _cli("cordon", node, "--kubeconfig", str(cfg))
    assert (done.exit_code, done.stdout, done.stderr) == (0, f"node/{node} cordoned\n", "")
    assert _unschedulable(served, node)
    assert calls.read_text() == "1"


def test_exec_plugin_token_is_renewed_when_it_expires(tmp_path: Path, served: Served) -> None:
    now = dt.datetime.now(dt.UTC)
    past = (now - dt.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    future = (now + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    cfg, calls = _exec_kubeconfig(
        tmp_path, served, [{"token": "expired", "expires": past}, {"token": served.token, "expires": future}]
    )
    client = KubeClient.connect(load_kubeconfig(str(cfg)))
    assert calls.read_text() == "1"
    for _ in range(3):
        assert client.request("GET", "/api/v1/nodes")["kind"] == "NodeList"
    assert calls.read_text() == "2"  # renewed once, before the first request, then cached until it expires


def test_exec_plugin_token_is_renewed_when_refused(tmp_path: Path, served: Served) -> None:
    cfg, calls = _exec_kubeconfig(tmp_path, served, [{"token": "revoked"}, {"token": served.token}])
    client = KubeClient.connect(load_kubeconfig(str(cfg)))
    assert client.request("GET", "/api/v1/nodes")["kind"] == "NodeList"  # 401, plugin run again, retried
    assert client.request("GET", "/api/v1/nodes")["kind"] == "NodeList"
    assert calls.read_text() == "2"


def test_exec_plugin_that_keeps_failing_on_renewal_is_a_server_error(tmp_path: Path, served: Served) -> None:
    cfg, _ = _exec_kubeconfig(tmp_path, served, [{"token": "revoked"}, {"fail": "login expired\n"}])
    client = KubeClient.connect(load_kubeconfig(str(cfg)))
    with pytest.raises(ServerUnreachable) as refused:
        client.request("GET", "/api/v1/nodes")
    assert str(refused.value) == (
        f'GET /api/v1/nodes: {cfg}, context "exec": exec: process returned 1. login expired'
    )


def test_a_token_still_refused_after_renewal_is_unauthorized(tmp_path: Path, served: Served) -> None:
    cfg, calls = _exec_kubeconfig(tmp_path, served, [{"token": "revoked"}])
    client = KubeClient.connect(load_kubeconfig(str(cfg)))
    with pytest.raises(Unauthorized):
        client.request("GET", "/api/v1/nodes")
    assert calls.read_text() == "2"


def test_in_cluster_service_account(tmp_path: Path, served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text(served.token)
    (account / "ca.crt").write_bytes(served.ca.read_bytes())
    (account / "namespace").write_text("kube-system")
    port = served.url.rsplit(":", 1)[1]
    monkeypatch.setattr(kubeconfig_module, "SERVICE_ACCOUNT_DIR", account)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    conn = load_kubeconfig()
    assert (conn.server, conn.source) == (f"https://127.0.0.1:{port}", f"in-cluster config ({account})")
    assert conn.authorization() == f"Bearer {served.token}"
    node = _node(served)
    done = _cli("cordon", node)
    assert (done.exit_code, done.stdout, done.stderr) == (0, f"node/{node} cordoned\n", "")
    # a kubeconfig, when there is one, comes first
    monkeypatch.setenv("KUBECONFIG", str(served.kubeconfig))
    assert load_kubeconfig().source == f'{served.kubeconfig}, context "berth"'
    # without the token file
    monkeypatch.delenv("KUBECONFIG")
    (account / "token").unlink()
    done = _cli("cordon", node)
    assert (done.exit_code, done.stderr) == (
        2,
        f"error: in-cluster config ({account}): Service token file does not exist.\n",
    )


def test_no_kubeconfig_and_not_in_a_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    done = _cli("cordon", "n1")
    assert (done.exit_code, done.stderr) == (
        2,
        f"error: no kubeconfig: {tmp_path}/.kube/config not found, and not in a cluster"
        " (KUBERNETES_SERVICE_HOST is unset)\n",
    )


def test_contexts_and_the_context_option(tmp_path: Path, served: Served) -> None:
    cluster = _served_cluster(served)
    cfg = _kubeconfig(
        tmp_path / "config",
        {"wrong": (cluster, {"token": "not-the-token"}), "right": (cluster, {"token": served.token})},
        "wrong",
    )
    node = _node(served)
    done = _cli("cordon", node, "--kubeconfig", str(cfg))
    assert done.exit_code == 1 and done.stderr.startswith("Error from server (Unauthorized)"), done.stderr
    done = _cli("cordon", node, "--kubeconfig", str(cfg), "--context", "right")
    assert (done.exit_code, done.stdout) == (0, f"node/{node} cordoned\n")
    # --token replaces the context's credentials
    done = _cli("uncordon", node, "--kubeconfig", str(cfg), "--token", served.token)
    assert (done.exit_code, done.stdout) == (0, f"node/{node} uncordoned\n")


def test_kubeconfig_files_merge_like_kubectl(
    tmp_path: Path, served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = _served_cluster(served)
    first = _kubeconfig(tmp_path / "first", {"right": (cluster, {"token": served.token})}, "right")
    second = _kubeconfig(
        tmp_path / "second",
        {"right": ({"server": "https://10.255.0.1:1"}, {"token": "x"}), "other": (cluster, {"token": "y"})},
        "other",
    )
    monkeypatch.setenv("KUBECONFIG", f"{first}:{tmp_path / 'missing'}:{second}")
    conn = load_kubeconfig()
    # the first file's current-context and entries win; a missing file is skipped
    assert (conn.server, conn.token) == (served.url, served.token)
    assert conn.source == f'{first}:{second}, context "right"'
    assert load_kubeconfig(context="other").token == "y"


def test_server_token_and_insecure_overrides(served: Served) -> None:
    node = _node(served)
    done = _cli("cordon", node, "--server", served.url, "--token", served.token, "--insecure-skip-tls-verify")
    assert (done.exit_code, done.stdout) == (0, f"node/{node} cordoned\n")
    done = _cli(
        "uncordon", node, "--server", served.url, "--token", served.token
    )  # the server's CA is unknown
    assert done.exit_code == 1 and "CERTIFICATE_VERIFY_FAILED" in done.stderr


def test_insecure_override_of_a_kubeconfig_without_ca(tmp_path: Path, served: Served) -> None:
    cfg = _kubeconfig(tmp_path / "config", {"c": ({"server": served.url}, {"token": served.token})}, "c")
    node = _node(served)
    done = _cli("cordon", node, "--kubeconfig", str(cfg))
    assert done.exit_code == 1 and "CERTIFICATE_VERIFY_FAILED" in done.stderr
    done = _cli("cordon", node, "--kubeconfig", str(cfg), "--insecure-skip-tls-verify")
    assert (done.exit_code, done.stdout) == (0, f"node/{node} cordoned\n")


def test_a_connection_works_with_plain_httpx(served: Served) -> None:
    """`Connection.verify` and `Connection.authorization()` are all an HTTPS client needs."""
    conn = load_kubeconfig(str(served.kubeconfig))
    with httpx.Client(verify=conn.verify) as http:
        answer = http.get(
            f"{conn.server}/api/v1/nodes", headers={"Authorization": conn.authorization() or ""}
        )
    assert answer.status_code == 200


# --- errors: one line naming the file and context, exit 2 -------------------------------------------------


def _error(*args: str) -> str:
    done = _cli("cordon", "n1", *args)
    assert done.exit_code == 2, (done.exit_code, done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1, done.stderr
    return str(done.stderr)


def test_unreadable_and_invalid_kubeconfigs(tmp_path: Path) -> None:
    assert _error("--kubeconfig", str(tmp_path)) == f"error: {tmp_path}: Is a directory\n"
    bad = tmp_path / "bad"
    bad.write_text("clusters: [unclosed\n")
    assert _error("--kubeconfig", str(bad)) == (
        f"error: {bad}: invalid YAML: expected ',' or ']', but got '<stream end>' (line 2, column 1)\n"
    )
    bad.write_text("- just\n- a list\n")
    assert _error("--kubeconfig", str(bad)) == (
        f"error: {bad}: not a kubeconfig (expected a mapping with clusters, contexts and users)\n"
    )
    bad.write_text("contexts: {a: b}\n")
    assert _error("--kubeconfig", str(bad)) == (
        f"error: {bad}: not a kubeconfig (contexts must be a list of named entries)\n"
    )
    bad.write_bytes(b"\xff\xfe\x00binary")
    assert _error("--kubeconfig", str(bad)) == f"error: {bad}: not a kubeconfig (not text)\n"


def test_context_cluster_and_user_errors(tmp_path: Path) -> None:
    cfg = _kubeconfig(tmp_path / "config", {"dev": ({"server": "https://10.0.0.1:6443"}, {"token": "t"})})
    assert _error("--kubeconfig", str(cfg)) == f"error: {cfg}: no current-context (use --context)\n"
    assert (
        _error("--kubeconfig", str(cfg), "--context", "prod") == f'error: {cfg}: context "prod" not found\n'
    )
    doc = yaml.safe_load(cfg.read_text())
    doc["contexts"].append({"name": "lost", "context": {"cluster": "nowhere", "user": "dev-user"}})
    doc["contexts"].append({"name": "nobody", "context": {"cluster": "dev-cluster", "user": "ghost"}})
    doc["clusters"].append({"name": "empty", "cluster": {}})
    doc["contexts"].append({"name": "serverless", "context": {"cluster": "empty"}})
    cfg.write_text(yaml.safe_dump(doc))
    assert _error("--kubeconfig", str(cfg), "--context", "lost") == (
        f'error: {cfg}: cluster "nowhere" not found (context "lost")\n'
    )
    assert _error("--kubeconfig", str(cfg), "--context", "nobody") == (
        f'error: {cfg}: user "ghost" not found (context "nobody")\n'
    )
    assert _error("--kubeconfig", str(cfg), "--context", "serverless") == (
        f'error: {cfg}: cluster "empty" has no server (context "serverless")\n'
    )


def test_credential_errors(tmp_path: Path) -> None:
    server = {"server": "https://10.0.0.1:6443"}
    cfg = _kubeconfig(
        tmp_path / "config", {"c": ({**server, "certificate-authority-data": "bm90IGEgY2VydA=="}, {})}, "c"
    )
    assert _error("--kubeconfig", str(cfg)) == (
        f'error: {cfg}, context "c": certificate-authority: no certificate or crl found\n'
    )
    cfg = _kubeconfig(
        tmp_path / "config", {"c": ({**server, "certificate-authority": "missing.crt"}, {})}, "c"
    )
    assert _error("--kubeconfig", str(cfg)) == (
        f'error: {cfg}, context "c": File does not exists: {tmp_path / "missing.crt"}\n'
    )
    ca = CA()
    mallory = ca.issue("mallory")
    other = ca.issue("other")
    user = {"client-certificate-data": mallory.cert_b64, "client-key-data": other.key_b64}
    cfg = _kubeconfig(
        tmp_path / "config", {"c": ({**server, "certificate-authority-data": ca.b64}, user)}, "c"
    )
    assert _error("--kubeconfig", str(cfg)) == (
        f'error: {cfg}, context "c": client certificate: key values mismatch\n'
    )
    cfg = _kubeconfig(tmp_path / "config", {"c": (server, {"tokenFile": "nope"})}, "c")
    assert _error("--kubeconfig", str(cfg)) == (
        f'error: {cfg}, context "c": {tmp_path / "nope"}: No such file or directory\n'
    )


def test_exec_plugin_errors(tmp_path: Path) -> None:
    server = {"server": "https://10.0.0.1:6443"}
    failing = tmp_path / "failing.py"
    failing.write_text(
        "import sys\nsys.stderr.write('token expired:\\n  run `login` first\\n')\nsys.exit(1)\n"
    )
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(failing)],
        }
    }
    cfg = _kubeconfig(tmp_path / "config", {"exec": (server, user)}, "exec")
    assert _error("--kubeconfig", str(cfg)) == (
        f'error: {cfg}, context "exec": exec: process returned 1. token expired: run `login` first\n'
    )
    user = {
        "exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(tmp_path / "no-such-plugin")}
    }
    cfg = _kubeconfig(tmp_path / "config", {"exec": (server, user)}, "exec")
    assert _error("--kubeconfig", str(cfg)) == (
        f'error: {cfg}, context "exec": {tmp_path / "no-such-plugin"}: No such file or directory\n'
    )
    garbage = tmp_path / "garbage.py"
    garbage.write_text("print('not json')\n")
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(garbage)],
        }
    }
    cfg = _kubeconfig(tmp_path / "config", {"exec": (server, user)}, "exec")
    assert _error("--kubeconfig", str(cfg)).startswith(
        f'error: {cfg}, context "exec": exec: failed to decode process output: '
    )
