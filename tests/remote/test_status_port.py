"""`berth run`'s status port as kube-scheduler's secure port: HTTPS, `/healthz` open, `/metrics` for the tokens
the API server's TokenReview and SubjectAccessReview accept (or berth run's own), answers cached 10 s."""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest

from berth.controlplane.statusserver import StatusServer
from berth.remote.client import KubeClient
from berth.remote.delegated import DelegatedAuthorizer
from berth.server.credentials import CredentialsError, ServerCredentials

Obj = dict[str, Any]
PROMETHEUS = "system:serviceaccount:monitoring:prometheus"


class FakeReviews:
    """An API server answering TokenReviews (two known tokens) and SubjectAccessReviews (Prometheus may get
    /metrics); records the reviews' specs."""

    def __init__(self) -> None:
        self.specs: list[tuple[str, Obj]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        doc = json.loads(request.content)
        kind = doc["kind"]
        self.specs.append((kind, doc["spec"]))
        if kind == "TokenReview":
            users = {
                "scrape": {"username": PROMETHEUS, "uid": "u-1", "groups": ["system:serviceaccounts"]},
                "alice": {"username": "alice", "groups": ["system:authenticated"]},
            }
            user = users.get(doc["spec"]["token"])
            status: Obj = {"authenticated": True, "user": user} if user else {"authenticated": False}
            return httpx.Response(201, json={**doc, "status": status})
        allowed = doc["spec"]["user"] == PROMETHEUS and doc["spec"]["nonResourceAttributes"] == {
            "path": "/metrics",
            "verb": "get",
        }
        return httpx.Response(201, json={**doc, "status": {"allowed": allowed}})


def test_the_api_servers_reviews_decide_and_are_cached() -> None:
    fake = FakeReviews()
    client = KubeClient("https://api.example", token="berth", transport=httpx.MockTransport(fake))
    clock = [100.0]
    authorize = DelegatedAuthorizer(client, lambda: "Bearer berth", now=lambda: clock[0])
    assert authorize("Bearer berth") is None  # berth run's own token: no review
    assert authorize("Bearer scrape") is None
    assert fake.specs == [
        ("TokenReview", {"token": "scrape"}),
        (
            "SubjectAccessReview",
            {
                "user": PROMETHEUS,
                "groups": ["system:serviceaccounts"],
                "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
                "uid": "u-1",
            },
        ),
    ]
    refused = authorize("Bearer alice")
    assert refused is not None
    assert (refused.code, refused.status["reason"], refused.status["message"]) == (
        403,
        "Forbidden",
        'forbidden: User "alice" cannot get path "/metrics"',
    )
    for header in (None, "", "Basic abc", "Bearer ", "Bearer unknown"):
        refused = authorize(header)
        assert refused is not None and (refused.code, refused.status["message"]) == (401, "Unauthorized")
    assert authorize.reviews == 3  # scrape, alice, unknown
    clock[0] += 9.0
    assert authorize("Bearer scrape") is None
    assert authorize.reviews == 3  # answered from the cache
    clock[0] += 2.0
    assert authorize("Bearer scrape") is None
    assert authorize.reviews == 4  # the answer was 11 s old: asked again
    client.close()
    # without a client (no reviews possible), only the own token
    alone = DelegatedAuthorizer(None, lambda: "Bearer berth")
    assert alone("Bearer berth") is None
    refused = alone("Bearer scrape")
    assert refused is not None and refused.code == 401


def test_a_review_the_server_does_not_serve_is_unauthorized() -> None:
    def no_reviews(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            404, json={"kind": "Status", "code": 404, "reason": "NotFound", "message": "no"}
        )

    client = KubeClient("https://api.example", transport=httpx.MockTransport(no_reviews))
    refused = DelegatedAuthorizer(client, lambda: None)("Bearer scrape")
    assert refused is not None and refused.code == 401
    client.close()


def _metrics() -> tuple[bytes, str]:
    return b"scheduler_pending_pods 0\n", "text/plain; version=0.0.4"


def test_the_port_serves_https_with_the_given_certificate(tmp_path: Path) -> None:
    creds = ServerCredentials.ensure(tmp_path / "pki", "127.0.0.1", 10259)  # berth serve's CA and certificate
    assert creds.ca_file is not None
    authorize = DelegatedAuthorizer(None, lambda: "Bearer secret")
    server = StatusServer(
        "127.0.0.1",
        0,
        _metrics,
        lambda: None,
        secure=True,
        cert_file=creds.cert_file,
        key_file=creds.key_file,
        authorize=authorize,
    )
    server.start()
    try:
        assert server.url.startswith("https://127.0.0.1:")
        ctx = ssl.create_default_context(cafile=str(creds.ca_file))
        with httpx.Client(verify=ctx, timeout=10) as c:
            assert c.get(f"{server.url}/healthz").text == "ok"
            assert c.get(f"{server.url}/metrics").status_code == 401
            ok = c.get(f"{server.url}/metrics", headers={"Authorization": "Bearer secret"})
            assert (ok.status_code, ok.text) == (200, "scheduler_pending_pods 0\n")
        # a client speaking plain HTTP gets nothing, and the port goes on serving
        with pytest.raises(httpx.HTTPError):
            httpx.get(server.url.replace("https", "http") + "/healthz", timeout=5)
        with httpx.Client(verify=ctx, timeout=10) as c:
            assert c.get(f"{server.url}/livez").text == "ok"
    finally:
        server.close()
    with pytest.raises(CredentialsError, match="cannot use"):
        StatusServer(
            "127.0.0.1",
            0,
            _metrics,
            lambda: None,
            secure=True,
            cert_file=creds.cert_file,
            key_file=creds.ca_file,
        )
