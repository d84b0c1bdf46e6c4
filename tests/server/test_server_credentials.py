"""`berth serve`'s credentials: CA, serving certificate, bearer token and kubeconfig in the data directory."""

from __future__ import annotations

import base64
import datetime as dt
import json
import shutil
import socket
import ssl
import stat
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from cryptography import x509

from berth.remote.kubeconfig import load_kubeconfig
from berth.server.credentials import CredentialsError, ServerCredentials

TIMEOUT = 10.0
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl on PATH")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _sans(cert_file: Path) -> set[str]:
    cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {str(v) for v in san.get_values_for_type(x509.DNSName)} | {
        str(v) for v in san.get_values_for_type(x509.IPAddress)
    }


@contextmanager
def _echo_server(ctx: ssl.SSLContext) -> Iterator[int]:
    """A TLS echo server on 127.0.0.1 in a thread; yields its port, always stops."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(TIMEOUT)
                try:
                    with ctx.wrap_socket(conn, server_side=True) as tls:
                        data = tls.recv(1024)
                        if data:
                            tls.sendall(data)
                except (ssl.SSLError, OSError):
                    pass  # a client that refused our certificate

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(TIMEOUT)
        listener.close()


def _echo(port: int, client: ssl.SSLContext, server_hostname: str) -> bytes:
    with (
        socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as raw,
        client.wrap_socket(raw, server_hostname=server_hostname) as tls,
    ):
        tls.sendall(b"ping")
        return tls.recv(1024)


@contextmanager
def _https_version_server(creds: ServerCredentials, port: int) -> Iterator[None]:
    """A tiny HTTPS server answering GET /version for the bearer token (401 otherwise)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if not creds.token_matches(self.headers.get("Authorization", "")):
                body = b'{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}'
                self.send_response(401)
            else:
                body = json.dumps({"major": "1", "minor": "30", "gitVersion": "v1.30.0-berth"}).encode()
                self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    httpd.socket = creds.ssl_context().wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(TIMEOUT)


def test_first_start_creates_files_with_modes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    creds = ServerCredentials.ensure(data, "127.0.0.1", 6443)
    assert creds.ca_file is not None
    for secret in (creds.key_file, data / "pki" / "ca.key", data / "token", creds.kubeconfig_path):
        assert secret.exists()
        assert _mode(secret) == 0o600, secret
    assert _mode(creds.cert_file) == 0o644
    assert _mode(creds.ca_file) == 0o644
    assert creds.kubeconfig_path == data.absolute() / "kubeconfig"
    assert creds.server_url == "https://127.0.0.1:6443"
    assert len(creds.token) >= 43
    assert (data / "token").read_text().strip() == creds.token

    ca = x509.load_pem_x509_certificate(creds.ca_file.read_bytes())
    assert ca.subject.rfc4514_string() == "CN=berth-ca"
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ca.not_valid_after_utc - ca.not_valid_before_utc >= dt.timedelta(days=3650)
    serving = x509.load_pem_x509_certificate(creds.cert_file.read_bytes())
    serving.verify_directly_issued_by(ca)
    eku = serving.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert x509.oid.ExtendedKeyUsageOID.SERVER_AUTH in eku
    assert _sans(creds.cert_file) == {"localhost", "127.0.0.1", "::1"}

    doc = yaml.safe_load(creds.kubeconfig_path.read_text())
    assert doc["apiVersion"] == "v1" and doc["kind"] == "Config"
    assert doc["current-context"] == "berth"
    assert doc["clusters"] == [
        {
            "name": "berth",
            "cluster": {
                "server": "https://127.0.0.1:6443",
                "certificate-authority-data": base64.b64encode(creds.ca_file.read_bytes()).decode(),
            },
        }
    ]
    assert doc["users"] == [{"name": "berth-admin", "user": {"token": creds.token}}]
    assert doc["contexts"] == [{"name": "berth", "context": {"cluster": "berth", "user": "berth-admin"}}]


def test_second_start_reuses_everything(tmp_path: Path) -> None:
    first = ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443)
    assert first.ca_file is not None
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.rglob("*") if p.is_file()}
    second = ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443)
    assert second == first
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before


def test_new_port_rewrites_only_the_kubeconfig(tmp_path: Path) -> None:
    first = ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443)
    cert, token = first.cert_file.read_bytes(), first.token
    second = ServerCredentials.ensure(tmp_path, "127.0.0.1", 7443)
    assert second.token == token and second.cert_file.read_bytes() == cert
    assert second.server_url == "https://127.0.0.1:7443"
    assert load_kubeconfig(str(second.kubeconfig_path)).server == "https://127.0.0.1:7443"
    assert _mode(second.kubeconfig_path) == 0o600


def test_new_host_reissues_serving_cert_only(tmp_path: Path) -> None:
    first = ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443)
    assert first.ca_file is not None
    ca, cert = first.ca_file.read_bytes(), first.cert_file.read_bytes()
    second = ServerCredentials.ensure(tmp_path, "10.1.2.3", 6443)
    assert second.ca_file is not None
    assert second.ca_file.read_bytes() == ca
    assert second.token == first.token
    assert second.cert_file.read_bytes() != cert
    assert _sans(second.cert_file) == {"localhost", "127.0.0.1", "::1", "10.1.2.3"}
    assert second.server_url == "https://10.1.2.3:6443"
    third = ServerCredentials.ensure(tmp_path, "berth.example.com", 6443)
    assert "berth.example.com" in _sans(third.cert_file)
    assert third.server_url == "https://berth.example.com:6443"


def test_ipv6_and_wildcard_hosts(tmp_path: Path) -> None:
    v6 = ServerCredentials.ensure(tmp_path / "v6", "[fd00::1]", 6443)
    assert v6.server_url == "https://[fd00::1]:6443"
    assert "fd00::1" in _sans(v6.cert_file)
    anyv4 = ServerCredentials.ensure(tmp_path / "any", "0.0.0.0", 6443)
    assert anyv4.server_url == "https://127.0.0.1:6443"
    assert {"localhost", "127.0.0.1", "::1"} <= _sans(anyv4.cert_file)


def test_expiring_serving_cert_is_reissued(tmp_path: Path) -> None:
    now = dt.datetime.now(dt.UTC)
    first = ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443, now=now)
    assert first.ca_file is not None
    ca, cert = first.ca_file.read_bytes(), first.cert_file.read_bytes()
    ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443, now=now + dt.timedelta(days=300))
    assert first.cert_file.read_bytes() == cert
    ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443, now=now + dt.timedelta(days=340))
    assert first.cert_file.read_bytes() != cert
    assert first.ca_file.read_bytes() == ca


def test_lost_ca_regenerates_ca_and_serving_cert(tmp_path: Path) -> None:
    first = ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443)
    assert first.ca_file is not None
    cert = first.cert_file.read_bytes()
    (tmp_path / "pki" / "ca.key").unlink()
    second = ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443)
    assert second.ca_file is not None
    assert second.cert_file.read_bytes() != cert
    assert second.token == first.token
    ca = x509.load_pem_x509_certificate(second.ca_file.read_bytes())
    x509.load_pem_x509_certificate(second.cert_file.read_bytes()).verify_directly_issued_by(ca)


def test_loose_modes_are_tightened(tmp_path: Path) -> None:
    creds = ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443)
    for p in (creds.key_file, tmp_path / "token", creds.kubeconfig_path):
        p.chmod(0o644)
    ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443)
    for p in (creds.key_file, tmp_path / "token", creds.kubeconfig_path):
        assert _mode(p) == 0o600


def test_serving_cert_verifies_against_ca_over_tls(tmp_path: Path) -> None:
    creds = ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443)
    assert creds.ca_file is not None
    client = ssl.create_default_context(cafile=str(creds.ca_file))
    with _echo_server(creds.ssl_context()) as port:
        assert _echo(port, client, "localhost") == b"ping"
        assert _echo(port, client, "127.0.0.1") == b"ping"
        with pytest.raises(ssl.SSLCertVerificationError):
            _echo(port, client, "elsewhere.example.com")
        with pytest.raises(ssl.SSLCertVerificationError):
            _echo(port, ssl.create_default_context(), "localhost")  # not trusted without our CA


def test_token_matches_bearer_only(tmp_path: Path) -> None:
    creds = ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443)
    t = creds.token
    assert creds.token_matches(f"Bearer {t}")
    assert creds.token_matches(f"bearer {t}")  # the scheme is case-insensitive
    for bad in (
        "",
        None,
        t,
        f"Basic {t}",
        f"Token {t}",
        "Bearer ",
        "Bearer",
        f"Bearer {t}x",
        f"Bearer {t[:-1]}",
        f"Bearer {t} extra",
        f"Bearer  {t}",
        "Bearer wrong",
        "Bearer ünïcode",
    ):
        assert not creds.token_matches(bad), bad


def test_load_kubeconfig_reads_it(tmp_path: Path) -> None:
    creds = ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443)
    conn = load_kubeconfig(str(creds.kubeconfig_path))
    assert conn.server == "https://127.0.0.1:6443"
    assert conn.token == creds.token
    assert isinstance(conn.verify, ssl.SSLContext)
    with _echo_server(creds.ssl_context()) as port:
        assert _echo(port, conn.verify, "127.0.0.1") == b"ping"


@needs_kubectl
def test_kubectl_reads_kubeconfig(tmp_path: Path) -> None:
    creds = ServerCredentials.ensure(tmp_path, "127.0.0.1", 6443)
    assert creds.ca_file is not None
    out = subprocess.run(
        ["kubectl", "config", "view", "--kubeconfig", str(creds.kubeconfig_path), "-o", "json", "--raw"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    doc = json.loads(out.stdout)
    assert doc["current-context"] == "berth"
    (cluster,) = doc["clusters"]
    assert cluster["name"] == "berth"
    assert cluster["cluster"]["server"] == "https://127.0.0.1:6443"
    assert base64.b64decode(cluster["cluster"]["certificate-authority-data"]) == creds.ca_file.read_bytes()
    (user,) = doc["users"]
    assert user == {"name": "berth-admin", "user": {"token": creds.token}}


@needs_kubectl
def test_kubectl_trusts_the_server_and_sends_the_token(tmp_path: Path) -> None:
    port = _free_port()
    creds = ServerCredentials.ensure(tmp_path, "127.0.0.1", port)
    with _https_version_server(creds, port):
        out = subprocess.run(
            [
                "kubectl",
                "--kubeconfig",
                str(creds.kubeconfig_path),
                "--request-timeout",
                "10s",
                "get",
                "--raw",
                "/version",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["gitVersion"] == "v1.30.0-berth"


def test_user_certificate_replaces_generated_one(tmp_path: Path) -> None:
    # Another data directory's serving pair stands in for a user's certificate.
    own = ServerCredentials.ensure(tmp_path / "other", "127.0.0.1", 6443)
    creds = ServerCredentials.ensure(
        tmp_path / "data", "127.0.0.1", 6443, tls_cert=own.cert_file, tls_key=own.key_file
    )
    assert creds.ca_file is None
    assert creds.cert_file == own.cert_file and creds.key_file == own.key_file
    assert not (tmp_path / "data" / "pki").exists()
    doc = yaml.safe_load(creds.kubeconfig_path.read_text())
    cluster = doc["clusters"][0]["cluster"]
    assert cluster == {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": False}
    assert _mode(creds.kubeconfig_path) == 0o600
    conn = load_kubeconfig(str(creds.kubeconfig_path))
    assert conn.verify is True and conn.token == creds.token
    assert own.ca_file is not None
    with _echo_server(creds.ssl_context()) as port:
        assert _echo(port, ssl.create_default_context(cafile=str(own.ca_file)), "localhost") == b"ping"


def test_bad_user_certificate_or_arguments(tmp_path: Path) -> None:
    a = ServerCredentials.ensure(tmp_path / "a", "127.0.0.1", 6443)
    b = ServerCredentials.ensure(tmp_path / "b", "127.0.0.1", 6443)
    with pytest.raises(CredentialsError, match="together"):
        ServerCredentials.ensure(tmp_path / "d", "127.0.0.1", 6443, tls_cert=a.cert_file)
    with pytest.raises(CredentialsError, match="cannot use"):
        ServerCredentials.ensure(tmp_path / "d", "127.0.0.1", 6443, tls_cert=a.cert_file, tls_key=b.key_file)
    with pytest.raises(CredentialsError, match="cannot use"):
        ServerCredentials.ensure(
            tmp_path / "d", "127.0.0.1", 6443, tls_cert=tmp_path / "missing.crt", tls_key=a.key_file
        )
    with pytest.raises(CredentialsError, match="port"):
        ServerCredentials.ensure(tmp_path / "d", "127.0.0.1", 0)
    with pytest.raises(CredentialsError, match="host"):
        ServerCredentials.ensure(tmp_path / "d", "bad host!", 6443)
    assert not (tmp_path / "d").exists()
