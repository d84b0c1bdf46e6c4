"""The REST layer: path resolution, verbs, selectors, Status errors and the eviction subresource."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from berth.api.errors import NotFound
from berth.remote.kubeconfig import KubeconfigError, load_kubeconfig
from berth.server.rest import Request, RestAPI, resolve
from berth.store import MemoryStore


def _api() -> RestAPI:
    store = MemoryStore(seed=1)
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    for name, node in (("a", "n1"), ("b", "n2")):
        store.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]},
            }
        )
    return RestAPI(store)


def _call(api: RestAPI, method: str, path: str, query: dict[str, list[str]] | None = None, body: Any = None):
    raw = b"" if body is None else json.dumps(body).encode()
    return api.handle(Request(method, path, query or {}, raw))


@pytest.mark.parametrize(
    ("path", "kind", "namespace", "name", "sub"),
    [
        ("/api/v1/nodes/n1", "Node", "", "n1", ""),
        ("/api/v1/namespaces/default/pods/a/eviction", "Pod", "default", "a", "eviction"),
        ("/api/v1/pods", "Pod", "", "", ""),
        ("/apis/policy/v1/namespaces/x/poddisruptionbudgets", "PodDisruptionBudget", "x", "", ""),
        (
            "/apis/scheduling.koordinator.sh/v1alpha1/reservations/r1/status",
            "Reservation",
            "",
            "r1",
            "status",
        ),
    ],
)
def test_resolve(path: str, kind: str, namespace: str, name: str, sub: str) -> None:
    r = resolve(path)
    assert (r.info.kind, r.namespace, r.name, r.subresource) == (kind, namespace, name, sub)


@pytest.mark.parametrize(
    "path", ["/healthz", "/api/v1/widgets", "/api/v1/namespaces/x/nodes/n1", "/api/v1/a/b/c/d"]
)
def test_unknown_paths_are_not_found(path: str) -> None:
    with pytest.raises(NotFound):
        resolve(path)


def test_list_with_field_selector_and_get_missing() -> None:
    api = _api()
    code, body = _call(api, "GET", "/api/v1/pods", {"fieldSelector": ["spec.nodeName=n2"]})
    assert code == 200
    assert body["kind"] == "PodList"
    assert [p["metadata"]["name"] for p in body["items"]] == ["b"]
    code, body = _call(api, "GET", "/api/v1/namespaces/default/pods/zz")
    assert (code, body["reason"], body["message"]) == (404, "NotFound", 'pods "zz" not found')


def test_patch_create_delete_and_bad_body() -> None:
    api = _api()
    code, body = _call(
        api, "PATCH", "/api/v1/namespaces/default/pods/a", body={"metadata": {"labels": {"x": "1"}}}
    )
    assert (code, body["metadata"]["labels"]) == (200, {"app": "a", "x": "1"})
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n9"}}
    code, body = _call(api, "POST", "/api/v1/nodes", body=node)
    assert (code, body["metadata"]["name"]) == (201, "n9")
    code, body = _call(api, "POST", "/api/v1/nodes", body=node)
    assert (code, body["reason"]) == (409, "AlreadyExists")
    code, body = api.handle(Request("POST", "/api/v1/nodes", {}, b"{not json"))
    assert (code, body["reason"]) == (400, "BadRequest")
    code, _ = _call(api, "DELETE", "/api/v1/nodes/n9")
    assert code == 200
    assert _call(api, "GET", "/api/v1/nodes/n9")[0] == 404


def test_eviction_without_budget_deletes_gracefully() -> None:
    api = _api()
    code, body = _call(
        api,
        "POST",
        "/api/v1/namespaces/default/pods/a/eviction",
        body={"apiVersion": "policy/v1", "kind": "Eviction", "deleteOptions": {"gracePeriodSeconds": 0}},
    )
    assert (code, body["status"]) == (201, "Success")
    assert _call(api, "GET", "/api/v1/namespaces/default/pods/a")[0] == 404
    assert _call(api, "GET", "/api/v1/namespaces/default/pods/a/eviction")[0] == 404  # only POST


def test_kubeconfig_current_context_and_errors(tmp_path: Path) -> None:
    cfg = tmp_path / "config"
    cfg.write_text(
        json.dumps(
            {
                "current-context": "dev",
                "contexts": [{"name": "dev", "context": {"cluster": "c1", "user": "u1"}}],
                "clusters": [
                    {
                        "name": "c1",
                        "cluster": {"server": "https://10.0.0.1:6443", "insecure-skip-tls-verify": True},
                    }
                ],
                "users": [{"name": "u1", "user": {"token": "s3cret"}}],
            }
        )
    )
    conn = load_kubeconfig(str(cfg))
    assert (conn.server, conn.token, conn.verify, conn.cert) == (
        "https://10.0.0.1:6443",
        "s3cret",
        False,
        None,
    )
    with pytest.raises(KubeconfigError, match='context "prod" not found'):
        load_kubeconfig(str(cfg), "prod")
