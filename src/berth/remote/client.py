"""A small Kubernetes API client over httpx: wire-form dicts in and out, API errors as ``APIError``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

Obj = dict[str, Any]

__all__ = ["APIError", "KubeClient"]

POD_PATH = "/api/v1/namespaces/{ns}/pods/{name}"


class APIError(Exception):
    """A refusal from the API server: HTTP ``code``, metav1.Status ``reason`` and ``message``."""

    def __init__(self, code: int, reason: str, message: str, status: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.status: Mapping[str, Any] = status or {}


class KubeClient:
    """Requests against one API server (``base_url``), authenticated by bearer ``token`` or client cert."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        verify: Any = True,
        cert: tuple[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
    ) -> None:
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers=headers,
            verify=verify,
            cert=cert,
            transport=transport,
            timeout=timeout,
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Mapping[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> Obj:
        """One request; the decoded JSON body, or APIError for a non-2xx answer."""
        content = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": content_type} if body is not None else {}
        try:
            resp = self._http.request(method, path, params=params, content=content, headers=headers)
        except httpx.HTTPError as e:
            raise APIError(0, "ConnectionError", f"{method} {path}: {e}") from None
        try:
            doc = resp.json() if resp.content else {}
        except ValueError:
            doc = {}
        if resp.status_code >= 300:
            if isinstance(doc, dict) and doc.get("kind") == "Status":
                raise APIError(
                    resp.status_code, str(doc.get("reason") or ""), str(doc.get("message") or ""), doc
                )
            raise APIError(resp.status_code, "", resp.text.strip() or f"HTTP {resp.status_code}")
        return doc if isinstance(doc, dict) else {}

    # ----- the calls node maintenance needs -------------------------------------------------
    def get_node(self, name: str) -> Obj:
        """GET a node."""
        return self.request("GET", f"/api/v1/nodes/{name}")

    def patch_node(self, name: str, patch: Mapping[str, Any]) -> Obj:
        """Merge-patch a node."""
        return self.request(
            "PATCH", f"/api/v1/nodes/{name}", body=patch, content_type="application/merge-patch+json"
        )

    def pods_on_node(self, node: str) -> list[Obj]:
        """Every pod bound to ``node``, in all namespaces."""
        doc = self.request("GET", "/api/v1/pods", params={"fieldSelector": f"spec.nodeName={node}"})
        return list(doc.get("items") or [])

    def get_pod(self, namespace: str, name: str) -> Obj:
        """GET a pod."""
        return self.request("GET", POD_PATH.format(ns=namespace, name=name))

    def evict(self, namespace: str, name: str, grace_period_seconds: int | None = None) -> Obj:
        """POST a policy/v1 Eviction for the pod."""
        body: Obj = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        if grace_period_seconds is not None:
            body["deleteOptions"] = {"gracePeriodSeconds": grace_period_seconds}
        return self.request("POST", POD_PATH.format(ns=namespace, name=name) + "/eviction", body=body)
