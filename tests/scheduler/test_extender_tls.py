"""HTTPS extenders: enableHTTPS and tlsConfig (CA, server name, client certificates) as kube's
makeTransport uses them."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from extender_server import FakeExtender, running

from berth.api.manifest import Manifest
from berth.scheduler.framework.config import ConfigError, parse_config
from berth.sim.engine import Simulation
from builders import make_node, make_pod
from remote.remote_pki import CA, Issued


def schedule(extender: dict[str, Any]) -> dict[str, Any]:
    """Schedule one pod on n1/n2 with ``extender`` (a filter keeping n2); the pod afterwards."""
    cfg = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "extenders": [{"filterVerb": "filter", "nodeCacheCapable": True, **extender}],
        }
    )
    sim = Simulation(config=cfg)
    docs = [make_node(n).capacity(cpu="4").obj() for n in ("n1", "n2")] + [make_pod("p").obj()]
    sim.run_manifests([Manifest(d, "t") for d in docs], until=5.0)
    return next(o for o in sim.objects() if o["kind"] == "Pod")


def keep_n2(body: dict[str, Any]) -> tuple[int, Any]:
    return 200, {"NodeNames": ["n2"], "FailedNodes": {"n1": "no gpu"}}


@pytest.fixture(scope="module")
def ca() -> CA:
    return CA()


def server_context(ca: CA, leaf: Issued, tmp: Path, *, client_ca: CA | None = None) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert, key = leaf.write(tmp, "server")
    ctx.load_cert_chain(cert, key)
    if client_ca is not None:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(cadata=client_ca.pem.decode())
    return ctx


@pytest.fixture
def https(ca: CA, tmp_path: Path) -> Iterator[FakeExtender]:
    leaf = ca.issue("extender", server_names=("127.0.0.1",))
    with running({"filter": keep_n2}, tls=server_context(ca, leaf, tmp_path)) as ext:
        yield ext


def test_ca_data_verifies_the_extender(https: FakeExtender, ca: CA) -> None:
    pod = schedule({"urlPrefix": https.url, "enableHTTPS": True, "tlsConfig": {"caData": ca.b64}})
    assert pod["spec"]["nodeName"] == "n2"


def test_ca_file_verifies_the_extender(https: FakeExtender, ca: CA, tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_bytes(ca.pem)
    pod = schedule({"urlPrefix": https.url, "tlsConfig": {"caFile": str(tmp_path / "ca.crt")}})
    assert pod["spec"]["nodeName"] == "n2"


def test_enable_https_without_a_ca_does_not_verify(https: FakeExtender) -> None:
    pod = schedule({"urlPrefix": https.url, "enableHTTPS": True})
    assert pod["spec"]["nodeName"] == "n2"


def test_an_unknown_ca_fails_the_attempt(https: FakeExtender) -> None:
    pod = schedule({"urlPrefix": https.url, "enableHTTPS": True, "tlsConfig": {"caData": CA("other").b64}})
    cond = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    assert cond["reason"] == "SchedulerError"
    assert cond["message"].startswith(f'Post "{https.url}/filter": ')
    assert "CERTIFICATE_VERIFY_FAILED" in cond["message"]


def test_server_name_is_the_name_verified(ca: CA, tmp_path: Path) -> None:
    leaf = ca.issue("extender", server_names=("gpu-extender.example.com",))
    with running({"filter": keep_n2}, tls=server_context(ca, leaf, tmp_path)) as ext:
        tls = {"caData": ca.b64, "serverName": "gpu-extender.example.com"}
        pod = schedule({"urlPrefix": ext.url, "enableHTTPS": True, "tlsConfig": tls})
    assert pod["spec"]["nodeName"] == "n2"


def test_client_certificate_from_data_and_files(ca: CA, tmp_path: Path) -> None:
    leaf = ca.issue("extender", server_names=("127.0.0.1",))
    client = ca.issue("kube-scheduler")
    cert, key = client.write(tmp_path, "client")
    with running({"filter": keep_n2}, tls=server_context(ca, leaf, tmp_path, client_ca=ca)) as ext:
        by_data = {"caData": ca.b64, "certData": client.cert_b64, "keyData": client.key_b64}
        by_file = {"caData": ca.b64, "certFile": str(cert), "keyFile": str(key)}
        assert schedule({"urlPrefix": ext.url, "tlsConfig": by_data})["spec"]["nodeName"] == "n2"
        assert schedule({"urlPrefix": ext.url, "tlsConfig": by_file})["spec"]["nodeName"] == "n2"
        without = schedule({"urlPrefix": ext.url, "tlsConfig": {"caData": ca.b64}})
    assert without["spec"].get("nodeName") is None


def test_missing_certificate_file_is_a_config_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.crt")
    with pytest.raises(ConfigError) as e:
        schedule({"urlPrefix": "https://127.0.0.1:1", "tlsConfig": {"certFile": missing}})
    assert str(e.value) == (
        f'extenders[0].tlsConfig.certFile: Invalid value: "{missing}": open {missing}: no such file or not readable'
    )


def test_unreadable_certificate_is_a_config_error_when_the_scheduler_starts(tmp_path: Path) -> None:
    bad = tmp_path / "bad.crt"
    bad.write_text("not a certificate")
    with pytest.raises(ConfigError) as e:
        schedule(
            {"urlPrefix": "https://127.0.0.1:1", "tlsConfig": {"certFile": str(bad), "keyFile": str(bad)}}
        )
    assert str(e.value).startswith('extender "https://127.0.0.1:1": tlsConfig: [SSL]')
