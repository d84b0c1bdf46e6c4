"""A read-only HTTP server that answers only with `berth.server.discovery` documents and `berth.server.tables`
Tables over a fixed set of objects: enough for the real kubectl to discover the API and print `kubectl get`,
without `berth serve`."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from berth.api.errors import StatusError
from berth.server import discovery, tables
from berth.server.rest import resolve

VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.0", "platform": "linux/amd64"}


def kubectl_binaries() -> dict[str, str]:
    """Every kubectl on this machine by minor version ("1.27" ... "1.33"), and "default" for plain `kubectl`:
    `kubectl.1.NN` on PATH or beside the `kubectl` that is."""
    found: dict[str, str] = {}
    default = shutil.which("kubectl")
    dirs = [Path(default).resolve().parent] if default else []
    for minor in range(27, 34):
        name = f"kubectl.1.{minor}"
        path = shutil.which(name) or next((str(d / name) for d in dirs if (d / name).is_file()), None)
        if path:
            found[f"1.{minor}"] = path
    if default:
        found["default"] = default
    return found


@dataclass
class Stub:
    """The running server: its URL and the requests it was sent (path with query, Accept header)."""

    url: str
    requests: list[tuple[str, str]] = field(default_factory=list)

    def kubeconfig(self, directory: Path) -> Path:
        """A kubeconfig naming the server (plain HTTP, no credentials)."""
        path = directory / "kubeconfig"
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "stub", "cluster": {"server": self.url}}],
                    "users": [{"name": "stub", "user": {}}],
                    "contexts": [{"name": "stub", "context": {"cluster": "stub", "user": "stub"}}],
                    "current-context": "stub",
                }
            )
        )
        return path


def _listed(objects: Sequence[Mapping[str, Any]], path: str) -> tuple[Any, list[Mapping[str, Any]]]:
    route = resolve(path)
    items = [
        o
        for o in objects
        if o.get("kind") == route.info.kind
        and str(o.get("apiVersion")) == route.info.api_version
        and (not route.namespace or (o.get("metadata") or {}).get("namespace") == route.namespace)
        and (not route.name or (o.get("metadata") or {}).get("name") == route.name)
    ]
    return route, items


@contextmanager
def serve(
    objects: Sequence[Mapping[str, Any]], now: datetime | None = None, *, aggregated: bool = True
) -> Iterator[Stub]:
    """Serve discovery (aggregated too, unless told not to) and the objects' Tables on a loopback port until the
    block ends; ages are counted to `now` (default: the wall clock)."""
    stub = Stub("")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, code: int, doc: Any, content_type: str = "application/json") -> None:
            body = json.dumps(doc).encode()
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            path = url.path.rstrip("/") or "/"
            accept = self.headers.get("Accept", "")
            stub.requests.append((self.path, accept))
            if path == "/version":
                return self._send(200, VERSION)
            version = discovery.negotiate_aggregated(accept) if aggregated else None
            if path in ("/api", "/apis") and version:
                return self._send(
                    200, discovery.aggregated(path, version), discovery.aggregated_content_type(version)
                )
            parts = [p for p in path.split("/") if p]
            doc: Any = None
            if path == "/api":
                doc = discovery.api_versions()
            elif path == "/apis":
                doc = discovery.api_group_list()
            elif len(parts) == 2 and parts[0] == "api":
                doc = discovery.resource_list("", parts[1])
            elif len(parts) == 3 and parts[0] == "apis":
                doc = discovery.resource_list(parts[1], parts[2])
            elif len(parts) == 2 and parts[0] == "apis":
                doc = discovery.api_group(parts[1])
            if doc is not None:
                return self._send(200, doc)
            try:
                route, items = _listed(objects, path)
            except StatusError:
                return self._send(
                    404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404}
                )
            version = tables.negotiate_table(accept)
            if version is None:
                return self._send(
                    404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404}
                )
            include = parse_qs(url.query).get("includeObject", ["Metadata"])[0]
            table = tables.table_for(
                items, route.info, now=now or datetime.now(UTC), include_object=include, version=version
            )
            return self._send(200, table, tables.table_content_type(version))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    stub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
