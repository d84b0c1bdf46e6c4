"""The HTTP face of `berth serve`: a Starlette application speaking the Kubernetes API over a `Store`.

Requests are authenticated by bearer token (except the health and version endpoints, which kube-apiserver
also answers anonymously), bodies are limited to 3 MiB, and every refusal is a metav1.Status with kube's
reason and code. Object verbs go through `berth.server.rest.RestAPI`; watches stream JSON lines from the
store's `Watch`; discovery and Table printing come from `berth.server.discovery` / `berth.server.tables`.
Requests under ``/api`` and ``/apis`` go from the authenticating middleware straight to the API handler (a
bare ASGI app, bodies encoded with msgspec); Starlette routes the few other endpoints. Before any answer,
watch event or bookmark leaves the server the store's group-committed writes are flushed (``flush``), so what
a client learns of is durable.

Every handler is a coroutine on the server's event loop, the same loop that runs the control plane, so
store calls need no lock: a handler runs to completion between two steps of the core.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

import msgspec
import yaml
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from berth.api import safeyaml
from berth.api.contracts import Store
from berth.api.errors import (
    BadRequest,
    NotFound,
    RequestEntityTooLarge,
    ResourceExpired,
    StatusError,
    Unauthorized,
    UnsupportedMediaType,
)
from berth.api.labels import LabelSelectorError, Selector, parse_selector
from berth.api.watch import Watch, WatchEvent
from berth.server import discovery, eventsv1, openapi, openapi_v2, protobuf, tables
from berth.server.dashboard import Dashboard, cookie_token, login_page
from berth.server.dashboard_state import DashboardState
from berth.server.fieldvalidation import warning_header
from berth.server.media import JSON_RANGES, accepted, media_type
from berth.server.rest import Request, RestAPI, query_value, resolve
from berth.store.fieldselector import FieldSelector, compile_field_selector

__all__ = ["MAX_BODY_BYTES", "VERSION", "ApiServer"]

MAX_BODY_BYTES = 3 * 1024 * 1024
"""kube-apiserver's limit on a request body (3 MiB)."""
VERSION: dict[str, str] = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-berth",
    "gitCommit": "",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "python",
    "compiler": "cpython",
    "platform": "linux/amd64",
}
"""What ``/version`` reports: the Kubernetes API level Berth serves."""
WATCH_HEARTBEAT_SECONDS = 30.0
_LINES_KEPT = 8192
"""Watch event lines kept encoded for the next watcher that sends the same event."""
ANONYMOUS_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version"})


_encode = msgspec.json.Encoder().encode


def _status_response(err: StatusError) -> Response:
    return Response(_encode(err.to_status()), status_code=err.code, media_type="application/json")


def _decode_body(raw: bytes, content_type: str) -> bytes:
    """The body as JSON bytes: JSON as is, YAML and Kubernetes protobuf converted; others refused with 415."""
    if not raw:
        return raw
    media = media_type(content_type)
    if media in ("", "application/json") or media.endswith("+json"):
        return raw
    if media == protobuf.CONTENT_TYPE:
        return json.dumps(protobuf.decode(raw)).encode()
    if media in ("application/yaml", "application/apply-patch+yaml", "text/yaml"):
        try:
            doc = safeyaml.load_one(raw)
        except (yaml.YAMLError, safeyaml.YAMLLimitError) as e:
            raise BadRequest(f"the request body is not valid YAML: {e}") from None
        return json.dumps(doc).encode()
    raise UnsupportedMediaType(
        f'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf ("{media}")'
    )


def _headers(scope: Any) -> dict[str, str]:
    """The request's headers by lower-case name (the last of repeated ones), as text."""
    return {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers") or ()}


async def _read_body(receive: Any) -> bytes:
    """The whole request body from ASGI ``http.request`` messages."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        if chunk:
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _json_response(doc: Any, code: int, media: str = "application/json") -> Response:
    """`doc` as a JSON response (msgspec: compact, UTF-8, as kube-apiserver writes it)."""
    return Response(_encode(doc), status_code=code, media_type=media)


def _protobuf_only(accept: str) -> bool:
    """Whether the client accepts Kubernetes protobuf and no JSON (then it must be answered in protobuf)."""
    media = {m for m, _ in accepted(accept)}
    return protobuf.CONTENT_TYPE in media and not media & JSON_RANGES and bool(accept.strip())


class ApiServer:
    """The Kubernetes API over `store`, as a Starlette app (`app`); `token_ok` checks a request's
    ``Authorization`` header (None: no authentication). `on_write` is called after every request that may
    have written (the control plane wakes up)."""

    def __init__(
        self,
        store: Store,
        *,
        token_ok: Callable[[str], bool] | None = None,
        now: Callable[[], datetime] | None = None,
        metrics: Callable[[], tuple[bytes, str]] | None = None,
        flush: Callable[[], None] | None = None,
        explain: Callable[[str], dict[str, Any] | None] | None = None,
    ) -> None:
        """Serve `store`; `now` (default: wall time) ages objects in Table output; `metrics` renders
        ``/metrics`` (body, content type) when given; `flush` makes the store's writes durable (group
        commit) and is called before any answer or watch event leaves the server; `explain` gives the
        dashboard a pod's last recorded scheduling attempt (`berth.server.dashboard`)."""
        self.store = store
        self.flush = flush or (lambda: None)
        self._lines: dict[tuple[int, str], bytes] = {}
        self.metrics = metrics
        self.rest = RestAPI(store)
        self.token_ok = token_ok
        self.now = now or (lambda: datetime.now(UTC))
        self.stopping = asyncio.Event()
        self.dashboard = Dashboard(
            DashboardState(store),
            token_ok=token_ok,
            flush=self.flush,
            stopping=self.stopping,
            explain=explain,
        )
        """The live dashboard at ``/ui`` (its state watches the store from the first ``/ui`` request on)."""
        routes = Starlette(
            routes=[
                *self.dashboard.routes(),
                Route("/healthz", self._health),
                Route("/livez", self._health),
                Route("/readyz", self._health),
                Route("/version", self._version),
                Route("/metrics", self._metrics),
                Route("/openapi/v2", openapi_v2.endpoint),
                Route("/openapi/v3", self._openapi_root),
                Route("/openapi/v3/{path:path}", self._openapi),
                Route("/{path:path}", self._api, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
            ]
        )
        self.app: Any = _Guard(routes, server=self)
        """The ASGI application: authentication first, then the API paths straight to `api_asgi` and the
        other endpoints through Starlette's routing."""

    # ----- small endpoints -------------------------------------------------------------------
    async def _health(self, request: HttpRequest) -> Response:
        return PlainTextResponse("ok")

    async def _version(self, request: HttpRequest) -> Response:
        return JSONResponse(VERSION)

    async def _metrics(self, request: HttpRequest) -> Response:
        if self.metrics is None:
            return _status_response(NotFound("the server could not find the requested resource (/metrics)"))
        body, content_type = self.metrics()
        return Response(body, media_type=content_type)

    async def _openapi_root(self, request: HttpRequest) -> Response:
        return JSONResponse(openapi.root())

    async def _openapi(self, request: HttpRequest) -> Response:
        parts = request.path_params["path"].strip("/").split("/")
        doc = None
        if len(parts) == 2 and parts[0] == "api":
            doc = openapi.document("", parts[1])
        elif len(parts) == 3 and parts[0] == "apis":
            doc = openapi.document(parts[1], parts[2])
        if doc is None:
            return _status_response(
                NotFound(f"the server could not find the requested resource ({request.url.path})")
            )
        return JSONResponse(doc)

    # ----- the API ---------------------------------------------------------------------------
    async def _api(self, request: HttpRequest) -> Response:
        response = await self._api_response(request.scope, request.receive)
        self.flush()
        return response

    async def api_asgi(self, scope: Any, receive: Any, send: Any) -> None:
        """The API paths as a bare ASGI app (what `_Guard` calls for them, past Starlette's routing and
        middleware: the same answers, less work per request)."""
        response = await self._api_response(scope, receive)
        self.flush()  # acknowledged means durable
        await response(scope, receive, send)

    async def _api_response(self, scope: Any, receive: Any) -> Response:
        """The response to one API request (discovery, watch or a `RestAPI` verb), from its ASGI scope."""
        path = scope["path"]
        query: dict[str, list[str]] = {}
        raw_query = scope.get("query_string") or b""
        if raw_query:
            for k, v in parse_qsl(raw_query.decode("latin-1"), keep_blank_values=True):
                query.setdefault(k, []).append(v)
        headers = _headers(scope)
        accept = headers.get("accept", "")
        method = scope["method"]
        try:
            if method == "GET":
                found = self._discovery(path, accept)
                if found is not None:
                    return _json_response(found[0], 200, found[1])
                if query_value(query, "watch") in ("1", "true"):
                    return self._watch(path, query)
            raw = await _read_body(receive)
            if len(raw) > MAX_BODY_BYTES:
                raise RequestEntityTooLarge.of(f"limit is {MAX_BODY_BYTES}")
            body = _decode_body(raw, headers.get("content-type", ""))
        except StatusError as e:
            return _status_response(e)
        code, doc, warnings = self.rest.handle_with_warnings(
            Request(
                method,
                path,
                query,
                body,
                content_type=headers.get("content-type", "") if method == "PATCH" else "",
                user_agent=headers.get("user-agent", ""),
            )
        )
        table = tables.negotiate_table(accept) if code < 300 and method == "GET" else None
        if table is not None:
            try:
                doc = self._as_table(path, doc, query, table)
            except StatusError as e:
                return _status_response(e)
            return _json_response(doc, code, tables.table_content_type(table))
        if accept and _protobuf_only(accept) and protobuf.is_registered(doc):
            response = Response(protobuf.encode(doc), status_code=code, media_type=protobuf.CONTENT_TYPE)
        else:
            response = _json_response(doc, code)
        for text in warnings:  # one Warning header each, as kube-apiserver writes them
            response.raw_headers.append((b"warning", warning_header(text).encode()))
        return response

    def _discovery(self, path: str, accept: str) -> tuple[dict[str, Any], str] | None:
        """The discovery document at `path` and its content type, or None when `path` names resources."""
        trimmed = path.rstrip("/") or "/"
        if trimmed in ("/api", "/apis"):
            version = discovery.negotiate_aggregated(accept)
            if version is not None:
                return discovery.aggregated(trimmed, version), discovery.aggregated_content_type(version)
            doc = discovery.api_versions() if trimmed == "/api" else discovery.api_group_list()
            return doc, "application/json"
        parts = [p for p in trimmed.split("/") if p]
        found: dict[str, Any] | None = None
        if len(parts) == 2 and parts[0] == "api":
            found = discovery.resource_list("", parts[1])
        elif len(parts) == 3 and parts[0] == "apis":
            found = discovery.resource_list(parts[1], parts[2])
        elif len(parts) == 2 and parts[0] == "apis":
            found = discovery.api_group(parts[1])
        else:
            return None
        if found is None:
            raise NotFound(f"the server could not find the requested resource ({path})")
        return found, "application/json"

    def _as_table(
        self, path: str, doc: dict[str, Any], query: Mapping[str, list[str]], version: str
    ) -> dict[str, Any]:
        info = resolve(path).info
        is_list = str(doc.get("kind", "")).endswith("List") and "items" in doc
        objects = list(doc["items"]) if is_list else [doc]
        if (info.group, info.kind) == eventsv1.KEY:  # the core Event's columns, as kube prints both
            info = resolve(eventsv1.core_path(path)).info
            objects = [eventsv1.to_core(o) for o in objects]
        return tables.table_for(
            objects,
            info,
            now=self.now(),
            include_object=query_value(query, "includeObject") or "Metadata",
            version=version,
            list_meta=doc.get("metadata") if is_list else None,
        )

    # ----- watch -----------------------------------------------------------------------------
    def _watch(self, path: str, query: Mapping[str, list[str]]) -> Response:
        route = resolve(path)
        if route.name or route.subresource:
            raise NotFound(f"the server could not find the requested resource ({path})")
        convert: Callable[[WatchEvent], WatchEvent] | None = None
        if (route.info.group, route.info.kind) == eventsv1.KEY:  # the core Events, in the newer shape
            shown = route.info
            route = resolve(eventsv1.core_path(path))
            fields_text = query_value(query, "fieldSelector")
            if fields_text:
                query = {**query, "fieldSelector": [eventsv1.to_core_fields(fields_text)]}

            def convert(ev: WatchEvent) -> WatchEvent:
                return WatchEvent(ev.type, eventsv1.to_events_v1(ev.object), ev.key, ev.revision)

        labels: Selector | None = None
        fields: FieldSelector | None = None
        try:
            label_text = query_value(query, "labelSelector")
            if label_text:
                labels = parse_selector(label_text)
        except LabelSelectorError as e:
            raise BadRequest(f"unable to parse requirement: {e}") from None
        field_text = query_value(query, "fieldSelector")
        if field_text:
            fields = compile_field_selector(field_text)
        key = (route.info.group, route.info.kind)
        try:
            watch = self.store.watch(
                key, resource_version=query_value(query, "resourceVersion"), namespace=route.namespace or None
            )
        except ResourceExpired as e:
            return StreamingResponse(_expired(e), media_type="application/json")
        bookmarks = query_value(query, "allowWatchBookmarks") in ("1", "true")
        timeout = query_value(query, "timeoutSeconds")
        try:
            seconds = float(timeout) if timeout else None
        except ValueError:
            raise BadRequest(f'invalid timeoutSeconds "{timeout}"') from None
        info = route.info if convert is None else shown
        stream = self._events(watch, labels, fields, bookmarks, info.api_version, info.kind, seconds, convert)
        return StreamingResponse(stream, media_type="application/json")

    def _line(self, ev: WatchEvent) -> bytes:
        """The event as one JSON line, encoded once for all the watches that send it: in one store a revision
        and an event type name one immutable object version, so the bytes are the same for every watcher."""
        key = (ev.revision, ev.type)
        line = self._lines.get(key)
        if line is None:
            if len(self._lines) >= _LINES_KEPT:
                self._lines.clear()
            line = self._lines[key] = _line(ev)
        return line

    async def _events(
        self,
        watch: Watch,
        labels: Selector | None,
        fields: FieldSelector | None,
        bookmarks: bool,
        api_version: str,
        kind: str,
        timeout: float | None,
        convert: Callable[[WatchEvent], WatchEvent] | None = None,
    ) -> AsyncIterator[bytes]:
        """The watch's events as JSON lines until the server stops or `timeout` seconds have passed (the
        client's timeoutSeconds: it then watches again from the last resourceVersion it saw); `convert`
        gives each event another shape (not kept for other watchers)."""
        ready = asyncio.Event()
        watch.on_ready = ready.set
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        try:
            while not self.stopping.is_set() and (deadline is None or loop.time() < deadline):
                events = watch.poll()
                selected = [ev for ev in events if _selected(ev, labels, fields)]
                if convert is None:
                    lines = [self._line(ev) for ev in selected]
                else:
                    lines = [_line(convert(ev)) for ev in selected]
                if lines:
                    self.flush()  # a watcher sees only durable writes
                    yield b"".join(lines)
                    continue
                if events:
                    continue
                ready.clear()
                if watch.pending():
                    continue
                wait = (
                    WATCH_HEARTBEAT_SECONDS
                    if deadline is None
                    else min(WATCH_HEARTBEAT_SECONDS, deadline - loop.time())
                )
                try:
                    await asyncio.wait_for(ready.wait(), max(0.0, wait))
                except TimeoutError:
                    if bookmarks:
                        self.flush()  # the bookmark's resourceVersion must survive a crash
                        yield _bookmark(api_version, kind, self.store.revision)
        finally:
            watch.stop()


def _selected(ev: WatchEvent, labels: Selector | None, fields: FieldSelector | None) -> bool:
    obj = ev.object
    if labels is not None and not labels.matches((obj.get("metadata") or {}).get("labels") or {}):
        return False
    return fields is None or fields.matches(obj)


def _line(ev: WatchEvent) -> bytes:
    return _encode({"type": ev.type, "object": ev.object}) + b"\n"


def _bookmark(api_version: str, kind: str, revision: int) -> bytes:
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"resourceVersion": str(revision)}}
    return json.dumps({"type": "BOOKMARK", "object": obj}).encode() + b"\n"


async def _expired(err: ResourceExpired) -> AsyncIterator[bytes]:
    """kube-apiserver answers a watch from a compacted resourceVersion with a 200 stream of one ERROR event."""
    yield json.dumps({"type": "ERROR", "object": err.to_status()}).encode() + b"\n"


_API_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})


def _is_api_path(path: str) -> bool:
    """Whether `path` is under ``/api`` or ``/apis`` (discovery and resources)."""
    return path.startswith(("/api/", "/apis/")) or path in ("/api", "/apis")


class _Guard:
    """ASGI middleware: bearer-token authentication, and Status answers for what the routes refuse."""

    def __init__(self, app: Any, server: ApiServer) -> None:
        self.app = app
        self.server = server

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if self.server.token_ok is not None and path not in ANONYMOUS_PATHS:
            headers = dict(scope.get("headers") or ())
            auth = headers.get(b"authorization", b"").decode("latin-1")
            if not self.server.token_ok(auth):
                # the dashboard's paths (only those) also take the token from its login cookie
                ui = path == "/ui" or path.startswith("/ui/")
                cookie = cookie_token(headers) if ui else None
                if not (cookie is not None and self.server.token_ok(f"Bearer {cookie}")):
                    if ui and (path == "/ui/login" or path.startswith("/ui/assets/")):
                        pass  # the login form and its stylesheet
                    elif ui and path in ("/ui", "/ui/") and scope["method"] == "GET":
                        await login_page()(scope, receive, send)
                        return
                    else:
                        await _status_response(Unauthorized("Unauthorized"))(scope, receive, send)
                        return
        try:
            if scope["method"] in _API_METHODS and _is_api_path(scope["path"]):
                await self.server.api_asgi(scope, receive, send)
            else:
                await self.app(scope, receive, send)
        except StatusError as e:
            await _status_response(e)(scope, receive, send)
