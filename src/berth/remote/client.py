"""A small Kubernetes API client over httpx: wire-form dicts in and out; a refusal raises the
`berth.api.errors.StatusError` its metav1.Status names (the one place a remote Status becomes an exception).

`KubeClient.connect` builds one from a `berth.remote.kubeconfig.Connection` (a kubeconfig context read by
kubernetes-asyncio's loader, or the in-cluster service account): its TLS context, proxy, server name and
Authorization header, renewed on expiry or on a 401 answer."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any

import httpx

from berth.api.errors import StatusError, error_from_status
from berth.remote.kubeconfig import Connection, Credentials, KubeconfigError, tls_context
from berth.remote.ratelimit import TokenBucket

Obj = dict[str, Any]

__all__ = ["MAX_RETRIES", "KubeClient", "LineStream", "ServerUnreachable", "ServiceUnavailable"]

MAX_RETRIES = 10
"""client-go's ``maxRetries``: how often a request answered 429 or 5xx with a Retry-After header is sent again."""
LIMITS = httpx.Limits(max_connections=200, max_keepalive_connections=64, keepalive_expiry=60.0)
"""Connections to the server: enough kept open for every watch, binding worker and the main thread at once (with
httpx's default of 20 kept, a busy binder pool reconnects, and handshakes TLS, for most requests)."""
MAX_RETRY_AFTER = 10.0
"""The longest Retry-After wait honoured, seconds (a longer one is cut to this)."""


class ServerUnreachable(Exception):
    """The API server could not be reached (no answer, refused connection, TLS failure, credential plugin
    failure, ...); `server` is its host:port and `cause` the underlying error, when known."""

    def __init__(self, message: str, *, server: str = "", cause: BaseException | None = None) -> None:
        """`message` says which request failed; `server` (host:port) and `cause` say where and why."""
        super().__init__(message)
        self.server = server
        self.cause = cause

    def kubectl_message(self) -> str:
        """kubectl's line for it: ``The connection to the server HOST:PORT was refused - did you specify the
        right host or port?`` for a refused connection, else ``Unable to connect to the server: dial tcp
        HOST:PORT: <why>`` (a failed connect) or ``Unable to connect to the server: <why>``."""
        cause = self.cause
        why = str(cause) if cause is not None else str(self)
        if isinstance(cause, ConnectionRefusedError) or "connection refused" in why.lower():
            return f"The connection to the server {self.server} was refused - did you specify the right host or port?"
        if isinstance(cause, httpx.ConnectError | httpx.ConnectTimeout) and self.server:
            return f"Unable to connect to the server: dial tcp {self.server}: {why}"
        return f"Unable to connect to the server: {why}"


class ServiceUnavailable(StatusError):
    """503: how the `Store` implementations over a server report that it could not be reached."""

    reason = "ServiceUnavailable"
    code = 503


class _CredentialsAuth(httpx.Auth):
    """Sets the Authorization header from renewable credentials, and retries once with a renewed header
    when the server answers 401 Unauthorized."""

    def __init__(self, credentials: Credentials) -> None:
        self._credentials = credentials

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Send with the current header; on a 401, renew it and send again if it changed."""
        header = self._credentials.authorization()
        if header:
            request.headers["Authorization"] = header
        response = yield request
        if response.status_code != 401 or not header:
            return
        fresh = self._credentials.authorization(stale=header)
        if fresh and fresh != header:
            request.headers["Authorization"] = fresh
            yield request


class KubeClient:
    """Requests against one API server (``base_url``), authenticated by bearer ``token``, renewable
    ``credentials`` or a client certificate."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        verify: bool | ssl.SSLContext = True,
        cert: tuple[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
        credentials: Credentials | None = None,
        proxy: str | None = None,
        tls_server_name: str | None = None,
        rate_limiter: TokenBucket | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """`rate_limiter` throttles every request (and every watch it opens) as client-go's does; `sleep` waits
        out a Retry-After (injectable for tests)."""
        self.rate_limiter = rate_limiter
        self._sleep = sleep
        headers = {"Accept": "application/json"}
        if token and credentials is None:
            headers["Authorization"] = f"Bearer {token}"
        if cert is not None:  # httpx takes client certificates in the SSLContext only
            if isinstance(verify, ssl.SSLContext):
                verify.load_cert_chain(*cert)
            else:
                verify = tls_context(None, cert, insecure=not verify)
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers=headers,
            verify=verify,
            transport=transport,
            timeout=timeout,
            auth=_CredentialsAuth(credentials) if credentials is not None else None,
            proxy=proxy,
            limits=LIMITS,
        )
        self._extensions: dict[str, Any] = {"sni_hostname": tls_server_name} if tls_server_name else {}
        url = self._http.base_url
        self.server = f"{url.host}:{url.port or (443 if url.scheme == 'https' else 80)}"
        """The server's host:port (as kubectl names it in a connection error)."""

    @classmethod
    def connect(
        cls,
        conn: Connection,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
        rate_limiter: TokenBucket | None = None,
    ) -> KubeClient:
        """A client for ``conn`` (its client certificate is already in ``conn.verify``'s context)."""
        return cls(
            conn.server,
            token=conn.token,
            verify=conn.verify,
            cert=None if isinstance(conn.verify, ssl.SSLContext) else conn.cert,
            transport=transport,
            timeout=timeout,
            credentials=conn.credentials,
            proxy=conn.proxy,
            tls_server_name=conn.tls_server_name,
            rate_limiter=rate_limiter,
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
        """One request; the decoded JSON body, or the StatusError of a non-2xx answer. An answer 429 or 5xx
        with a Retry-After header is waited out and the request sent again, up to `MAX_RETRIES` times (client-go's
        ``checkWait``)."""
        content = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": content_type} if body is not None else {}
        retries = 0
        while True:
            if self.rate_limiter is not None:
                self.rate_limiter.wait()
            try:
                resp = self._http.request(
                    method, path, params=params, content=content, headers=headers, extensions=self._extensions
                )
            except (httpx.HTTPError, KubeconfigError) as e:
                raise ServerUnreachable(f"{method} {path}: {e}", server=self.server, cause=e) from None
            wait = _retry_after(resp)
            if wait is None or retries >= MAX_RETRIES:
                break
            retries += 1
            self._sleep(wait)
        try:
            doc = resp.json() if resp.content else {}
        except ValueError:
            doc = {}
        if resp.status_code >= 300:
            raise _refusal(resp.status_code, doc, resp.text)
        return doc if isinstance(doc, dict) else {}

    def open_lines(self, path: str, params: Mapping[str, str]) -> LineStream:
        """A streaming GET (a watch) that another thread may `close()`; iterate it for the decoded lines."""
        return LineStream(self, path, params)

    def stream_lines(self, path: str, params: Mapping[str, str]) -> Iterator[Obj]:
        """A streaming GET (a watch): each JSON line of the answer, decoded, until the server ends it."""
        return iter(LineStream(self, path, params))

    def _stream(
        self, path: str, params: Mapping[str, str], opened: Callable[[httpx.Response], None]
    ) -> Iterator[Obj]:
        """The decoded lines of a streaming GET; `opened` is told of the response once it is open."""
        if self.rate_limiter is not None:
            self.rate_limiter.wait()
        try:
            with self._http.stream(
                "GET", path, params=params, timeout=None, extensions=self._extensions
            ) as resp:
                if resp.status_code >= 300:
                    text = resp.read().decode(errors="replace")
                    try:
                        doc = json.loads(text) if text else {}
                    except ValueError:
                        doc = {}
                    raise _refusal(resp.status_code, doc, text)
                opened(resp)
                for line in resp.iter_lines():
                    if line.strip():
                        yield json.loads(line)
        except (httpx.HTTPError, KubeconfigError) as e:
            raise ServerUnreachable(f"GET {path}: {e}", server=self.server, cause=e) from None


class LineStream:
    """One streaming GET: iterate it (once) for the JSON lines; `close()` (from any thread) ends it."""

    def __init__(self, client: KubeClient, path: str, params: Mapping[str, str]) -> None:
        self._client = client
        self._path = path
        self._params = params
        self._lock = threading.Lock()
        self._response: httpx.Response | None = None
        self.closed = False

    def __iter__(self) -> Iterator[Obj]:
        return self._client._stream(self._path, self._params, self._opened)

    def _opened(self, resp: httpx.Response) -> None:
        with self._lock:
            self._response = resp
            closed = self.closed
        if closed:
            resp.close()

    def close(self) -> None:
        """End the stream: the iterating thread's next read fails (ServerUnreachable) or the stream ends."""
        with self._lock:
            self.closed = True
            resp = self._response
        if resp is not None:
            resp.close()


def _retry_after(resp: httpx.Response) -> float | None:
    """The seconds to wait before sending again, for a 429 or 5xx answer with a Retry-After header; else None."""
    if resp.status_code != 429 and resp.status_code < 500:
        return None
    value = resp.headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def _refusal(code: int, doc: object, text: str) -> StatusError:
    """The exception for a non-2xx answer: its metav1.Status, or the HTTP code and body text."""
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        return error_from_status(doc, code)
    return error_from_status({"message": text.strip() or f"HTTP {code}"}, code)
