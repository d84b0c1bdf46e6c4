"""Bodies checked against their path, as kube-apiserver checks them: kind, apiVersion, namespace, name."""

from __future__ import annotations

import json
from typing import Any

import pytest

from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore
from builders import make_node, make_pod


def _send(api: RestAPI, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return api.handle(Request(method, path, {}, json.dumps(body).encode()))


@pytest.mark.parametrize(
    ("method", "path", "body", "message"),
    [
        (
            "POST",
            "/api/v1/namespaces/default/pods",
            make_node("x").obj(),
            'Node in version "v1" cannot be handled as a Pod: the object\'s kind does not match the resource of the request',
        ),
        (
            "POST",
            "/apis/apps/v1/namespaces/default/deployments",
            {"apiVersion": "apps/v1beta2", "kind": "Deployment", "metadata": {"name": "d"}},
            "the API version in the data (apps/v1beta2) does not match the expected API version (apps/v1)",
        ),
        (
            "POST",
            "/api/v1/namespaces/other/pods",
            make_pod("p").obj(),
            "the namespace of the provided object does not match the namespace sent on the request",
        ),
        (
            "PUT",
            "/api/v1/namespaces/default/pods/zz",
            make_pod("yy").obj(),
            "the name of the object (yy) does not match the name on the URL (zz)",
        ),
    ],
)
def test_a_body_that_does_not_fit_its_path_is_refused(
    method: str, path: str, body: dict[str, Any], message: str
) -> None:
    store = MemoryStore()
    code, status = _send(RestAPI(store), method, path, body)
    assert (code, status["reason"], status["message"]) == (400, "BadRequest", message)
    assert store.revision == 0  # nothing written


def test_a_body_without_namespace_takes_the_path_s() -> None:
    pod = make_pod("p").obj()
    del pod["metadata"]["namespace"]
    code, created = _send(RestAPI(MemoryStore()), "POST", "/api/v1/namespaces/team/pods", pod)
    assert (code, created["metadata"]["namespace"]) == (201, "team")
