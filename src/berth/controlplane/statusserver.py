"""`/metrics` and `/healthz` of `berth run` (kube-scheduler's secure port serves the same paths).

A small threaded HTTP server, on loopback by default, answering from two callables: `metrics()` gives the
Prometheus exposition and its content type, `healthz()` gives None when healthy or the failed check's message.
The callables must be safe to call from the server's threads (`berth.controlplane.run.Runner` marshals them to
its own thread).

As kube-scheduler's secure port (10259) it serves HTTPS when `secure`: with the certificate and key files given
(``--tls-cert-file``/``--tls-private-key-file``), else with a certificate made at start — the self-signed CA and
serving certificate `berth serve` makes (`berth.server.credentials`), for the listen address, kept in memory.
`/healthz`, `/livez` and `/readyz` are open (kube's ``--authorization-always-allow-paths``); `/metrics` is
served only when `authorize(Authorization header)` lets the request in (``berth.remote.delegated``: the API
server's TokenReview and SubjectAccessReview), else answered with its refusal.
"""

from __future__ import annotations

import json
import logging
import ssl
import sys
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from berth.server.credentials import ServerCredentials

__all__ = ["DEFAULT_METRICS_LISTEN", "Refused", "StatusServer", "serving_context"]

log = logging.getLogger(__name__)

DEFAULT_METRICS_LISTEN = "127.0.0.1:10259"
"""kube-scheduler's secure port, on loopback."""
REQUEST_TIMEOUT = 10.0
"""Seconds a connection may take to send its request (a TLS handshake included)."""


class Refused(Protocol):
    """A refusal of `/metrics`: the HTTP code and the metav1.Status body."""

    @property
    def code(self) -> int:
        """The HTTP code (401, 403)."""
        ...

    @property
    def status(self) -> dict[str, Any]:
        """The metav1.Status body."""
        ...


def serving_context(
    host: str, port: int, cert_file: Path | None = None, key_file: Path | None = None
) -> ssl.SSLContext:
    """A server TLS context for `host`:`port`: the given certificate and key, else a certificate made now (the
    one `berth serve` makes, in a directory removed at once: the context holds it). Raises
    ``berth.server.credentials.CredentialsError`` for an unusable pair."""
    with tempfile.TemporaryDirectory(prefix="berth-run-tls-") as tmp:
        creds = ServerCredentials.ensure(Path(tmp), host, port, cert_file, key_file)
        return creds.ssl_context()


class _QuietServer(ThreadingHTTPServer):
    """A threaded HTTP server that logs a failed connection (a client that is not speaking TLS, a handshake
    cut short) in one debug line; any other error of a request is logged with its traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Log the failure of the request from `client_address`."""
        error = sys.exc_info()[1]
        if isinstance(error, ssl.SSLError | ConnectionError | TimeoutError):
            log.debug("status port: connection from %s failed: %s", client_address, error)
            return
        log.exception("status port: the request from %s failed", client_address)


class StatusServer:
    """Serves `/metrics`, `/healthz` (and `/livez`, `/readyz`, same check) on `host`:`port` (0: any port)."""

    def __init__(
        self,
        host: str,
        port: int,
        metrics: Callable[[], tuple[bytes, str]],
        healthz: Callable[[], str | None],
        *,
        secure: bool = False,
        cert_file: Path | None = None,
        key_file: Path | None = None,
        authorize: Callable[[str | None], Refused | None] | None = None,
    ) -> None:
        """Bind at once (OSError when the address is taken); `start()` serves. `secure`: HTTPS (see
        `serving_context`); `authorize`: who may read `/metrics` (None: anyone)."""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            timeout = REQUEST_TIMEOUT

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                try:
                    if path == "/metrics":
                        refused = (
                            outer.authorize(self.headers.get("Authorization")) if outer.authorize else None
                        )
                        if refused is not None:
                            body = json.dumps(refused.status).encode()
                            self._answer(refused.code, body, "application/json")
                            return
                        body, ctype = outer.metrics()
                        self._answer(200, body, ctype)
                    elif path in ("/healthz", "/livez", "/readyz"):
                        failed = outer.healthz()
                        if failed is None:
                            self._answer(200, b"ok", "text/plain; charset=utf-8")
                        else:
                            text = f"[-]leaderElection failed: {failed}\n{path[1:]} check failed"
                            self._answer(500, text.encode(), "text/plain; charset=utf-8")
                    else:
                        self._answer(404, b"404 page not found\n", "text/plain; charset=utf-8")
                except TimeoutError as e:
                    self._answer(503, f"{e}\n".encode(), "text/plain; charset=utf-8")

            def _answer(self, code: int, body: bytes, ctype: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return  # no access log

        self.metrics = metrics
        self.healthz = healthz
        self.authorize = authorize
        self.scheme = "https" if secure else "http"
        self._server = _QuietServer((host, port), Handler)
        self._server.daemon_threads = True
        if secure:
            try:
                ctx = serving_context(host, self.address[1], cert_file, key_file)
            except Exception:
                self._server.server_close()
                raise
            # the handshake happens on the request's own thread, not in the accepting loop
            self._server.socket = ctx.wrap_socket(
                self._server.socket, server_side=True, do_handshake_on_connect=False
            )
        self._thread = threading.Thread(target=self._server.serve_forever, name="status server", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        """The host and port served."""
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        """Where it serves (``https://127.0.0.1:10259``)."""
        host, port = self.address
        shown = f"[{host}]" if ":" in host else host
        return f"{self.scheme}://{shown}:{port}"

    def start(self) -> None:
        """Serve on a daemon thread."""
        self._thread.start()

    def close(self) -> None:
        """Stop serving and release the port."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()
