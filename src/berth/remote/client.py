"""A small Kubernetes API client over httpx: wire-form dicts in and out; a refusal raises the
`berth.api.errors.StatusError` its metav1.Status names (the one place a remote Status becomes an exception)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import httpx

from berth.api.errors import StatusError, error_from_status

Obj = dict[str, Any]

__all__ = ["KubeClient", "ServerUnreachable"]


class ServerUnreachable(Exception):
    """The API server could not be reached (no answer, refused connection, TLS failure, ...)."""


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
        """One request; the decoded JSON body, or the StatusError of a non-2xx answer."""
        content = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": content_type} if body is not None else {}
        try:
            resp = self._http.request(method, path, params=params, content=content, headers=headers)
        except httpx.HTTPError as e:
            raise ServerUnreachable(f"{method} {path}: {e}") from None
        try:
            doc = resp.json() if resp.content else {}
        except ValueError:
            doc = {}
        if resp.status_code >= 300:
            raise _refusal(resp.status_code, doc, resp.text)
        return doc if isinstance(doc, dict) else {}

    def stream_lines(self, path: str, params: Mapping[str, str]) -> Iterator[Obj]:
        """A streaming GET (a watch): each JSON line of the answer, decoded, until the server ends it."""
        try:
            with self._http.stream("GET", path, params=params, timeout=None) as resp:
                if resp.status_code >= 300:
                    text = resp.read().decode(errors="replace")
                    try:
                        doc = json.loads(text) if text else {}
                    except ValueError:
                        doc = {}
                    raise _refusal(resp.status_code, doc, text)
                for line in resp.iter_lines():
                    if line.strip():
                        yield json.loads(line)
        except httpx.HTTPError as e:
            raise ServerUnreachable(f"GET {path}: {e}") from None


def _refusal(code: int, doc: object, text: str) -> StatusError:
    """The exception for a non-2xx answer: its metav1.Status, or the HTTP code and body text."""
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return error_from_status(doc, code)
    return error_from_status({"message": text.strip() or f"HTTP {code}"}, code)
