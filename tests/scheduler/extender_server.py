"""A small scheduler extender for the tests: an HTTP server on loopback in a thread.

Each verb is answered by a function of the decoded request body returning (HTTP code, JSON answer); every
request is recorded as (verb, body).
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = tuple[int, Any]
Handler = Callable[[dict[str, Any]], Answer]


class FakeExtender:
    """The extender's state: its handlers, the requests it received, its URL once started."""

    def __init__(self, handlers: dict[str, Handler]) -> None:
        self.handlers = handlers
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.url = ""

    def verbs(self) -> list[str]:
        """The verbs called, in order."""
        return [v for v, _ in self.calls]

    def bodies(self, verb: str) -> list[dict[str, Any]]:
        """The bodies of the calls of ``verb``, in order."""
        return [b for v, b in self.calls if v == verb]


def _handler_class(ext: FakeExtender) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            verb = self.path.strip("/").split("/")[-1]
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"null")
            ext.calls.append((verb, body))
            handler = ext.handlers.get(verb)
            code, answer = (404, {"error": "no such verb"}) if handler is None else handler(body)
            raw = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return _Handler


@contextmanager
def running(handlers: dict[str, Handler], tls: ssl.SSLContext | None = None) -> Iterator[FakeExtender]:
    """Serve an extender on 127.0.0.1 (a free port; HTTPS with the ``tls`` server context) for the
    duration of the block; always stopped."""
    ext = FakeExtender(handlers)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_class(ext))
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    scheme = "https" if tls is not None else "http"
    ext.url = f"{scheme}://127.0.0.1:{server.server_address[1]}/scheduler"
    try:
        yield ext
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
