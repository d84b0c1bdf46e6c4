"""`/metrics` and `/healthz` of `berth run` (kube-scheduler's secure port serves the same paths).

A small threaded HTTP server, on loopback by default, answering from two callables: `metrics()` gives the
Prometheus exposition and its content type, `healthz()` gives None when healthy or the failed check's message.
The callables must be safe to call from the server's threads (`berth.controlplane.run.Runner` marshals them to
its own thread). Plain HTTP: kube-scheduler's port is HTTPS with delegated authentication; this one is meant
for loopback or a pod's own network namespace.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["DEFAULT_METRICS_LISTEN", "StatusServer"]

DEFAULT_METRICS_LISTEN = "127.0.0.1:10259"
"""kube-scheduler's secure port, on loopback."""


class StatusServer:
    """Serves `/metrics`, `/healthz` (and `/livez`, `/readyz`, same check) on `host`:`port` (0: any port)."""

    def __init__(
        self,
        host: str,
        port: int,
        metrics: Callable[[], tuple[bytes, str]],
        healthz: Callable[[], str | None],
    ) -> None:
        """Bind at once (OSError when the address is taken); `start()` serves."""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                try:
                    if path == "/metrics":
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
        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="status server", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        """The host and port served."""
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        """Serve on a daemon thread."""
        self._thread.start()

    def close(self) -> None:
        """Stop serving and release the port."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()
