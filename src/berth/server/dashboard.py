"""The live dashboard of `berth serve` at ``/ui``.

* ``GET /ui``: the page (``berth/assets/dashboard.html`` with ``dashboard.js`` / ``dashboard.css``), or, without
  credentials, a small login form (401) where the token is pasted; ``POST /ui/login`` checks it and sets the
  ``berth_token`` cookie (HttpOnly, Secure, SameSite=Strict). Only ``/ui`` paths accept that cookie; the
  Kubernetes API stays bearer-only (see `cookie_token` and `berth.server.app`).
* ``GET /ui/api/state?offset=&limit=``: the `DashboardState` snapshot, nodes paged by name.
* ``GET /ui/api/events?since=SEQ``: server-sent events: ``delta`` (rows changed since SEQ), ``sample`` (a chart
  point every `SAMPLE_SECONDS`) and a ``: keep-alive`` comment every `KEEPALIVE_SECONDS`.
* ``GET /ui/api/explain/NAMESPACE/NAME``: a pending pod's row and, when the control plane recorded one, its
  last scheduling attempt node by node and plugin by plugin (`explain` callable: the `CycleTrace` as JSON).
"""

from __future__ import annotations

import asyncio
import html
import json
import time
from collections.abc import AsyncIterator, Callable
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from berth.server.dashboard_state import DashboardState

__all__ = ["COOKIE", "Dashboard", "cookie_token", "login_page"]

COOKIE = "berth_token"
SAMPLE_SECONDS = 2.0
KEEPALIVE_SECONDS = 15.0
IDLE_SECONDS = 600.0
"""Without a dashboard request or stream for this long, the summary and its watch are dropped (the next
request builds them again from the store)."""
TICK_SECONDS = 0.25
"""How often an event stream looks for changes (the deltas of a tick go out together)."""
_ASSETS = {
    "dashboard.js": "text/javascript",
    "dashboard.css": "text/css",
    "dashboard.html": "text/html",
    "berth-charts.js": "text/javascript",
    "berth-charts.css": "text/css",
}


def _asset(name: str) -> bytes:
    return resources.files("berth").joinpath("assets", name).read_bytes()


def cookie_token(headers: dict[bytes, bytes]) -> str | None:
    """The ``berth_token`` cookie of a request's headers, or None."""
    raw = headers.get(b"cookie")
    if not raw:
        return None
    for part in raw.decode("latin-1").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and value:
            return value
    return None


def login_page(error: str = "") -> HTMLResponse:
    """The login form (401): paste the bearer token (``DIR/token``, or the kubeconfig's user token)."""
    note = f'<p class="error">{html.escape(error)}</p>' if error else ""
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Berth — log in</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="/ui/assets/dashboard.css"></head>
<body class="login"><form method="post" action="/ui/login">
<h1>Berth dashboard</h1>
<p>Paste the server's token (<code>DATA_DIR/token</code>, or the <code>token</code> of the kubeconfig's user).</p>
{note}<input type="password" name="token" autocomplete="off" autofocus placeholder="token">
<button type="submit">Log in</button></form></body></html>"""
    return HTMLResponse(body, status_code=401)


class Dashboard:
    """The ``/ui`` routes over a `DashboardState` (built on first use); `token_ok` checks an Authorization
    value, `flush` makes writes durable before their deltas leave, `explain` gives a pod's last recorded
    scheduling attempt (``namespace/name`` -> JSON-ready dict or None), `stopping` ends the event streams."""

    def __init__(
        self,
        state: DashboardState,
        *,
        token_ok: Callable[[str], bool] | None,
        flush: Callable[[], None],
        stopping: asyncio.Event,
        explain: Callable[[str], dict[str, Any] | None] | None = None,
    ) -> None:
        self.state = state
        self.token_ok = token_ok
        self.flush = flush
        self.stopping = stopping
        self.explain = explain
        self.streams = 0
        """Open event streams."""
        self._last_sample = 0.0
        self._last_used = 0.0
        self._draining = False
        self._loop: asyncio.AbstractEventLoop | None = None

    def _use(self) -> DashboardState:
        """The state, current: its watch opened on first use and drained as events come (`_ready`)."""
        self._last_used = time.monotonic()
        if self.state.watch is None:
            self._loop = asyncio.get_running_loop()
            self.state.start()
            assert self.state.watch is not None
            self.state.watch.on_ready = self._ready
        self.state.refresh()
        return self.state

    def _ready(self) -> None:
        """An event arrived (called from inside a store write): apply it soon, on the loop, so the watch's
        buffer stays short whether or not a dashboard is looking."""
        if not self._draining and self._loop is not None:
            self._draining = True
            try:
                self._loop.call_soon_threadsafe(self._drain)
            except RuntimeError:  # the loop is closed: the server has stopped
                self._draining = False

    def _drain(self) -> None:
        self._draining = False
        if self.streams == 0 and time.monotonic() - self._last_used > IDLE_SECONDS:
            store = self.state.store
            self.state.close()
            self.state = DashboardState(store)
            return
        self.state.refresh()

    def routes(self) -> list[Route]:
        return [
            Route("/ui", self._page),
            Route("/ui/", self._page),
            Route("/ui/login", self._login, methods=["POST"]),
            Route("/ui/logout", self._logout, methods=["POST", "GET"]),
            Route("/ui/assets/{name}", self._assets),
            Route("/ui/api/state", self._state),
            Route("/ui/api/events", self._events),
            Route("/ui/api/explain/{namespace}/{name}", self._explain),
        ]

    # ----- pages ---------------------------------------------------------------------------------
    async def _page(self, request: Request) -> Response:
        return HTMLResponse(_asset("dashboard.html"), headers={"Cache-Control": "no-store"})

    async def _assets(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _ASSETS:
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(_asset(name), media_type=_ASSETS[name], headers={"Cache-Control": "no-cache"})

    async def _login(self, request: Request) -> Response:
        raw = (await request.body())[:8192].decode("utf-8", "replace")
        token = (parse_qs(raw).get("token") or [""])[0].strip()
        if not token or any(c.isspace() for c in token):
            return login_page("The token is empty.")
        if self.token_ok is not None and not self.token_ok(f"Bearer {token}"):
            return login_page("That token is not this server's.")
        response = RedirectResponse("/ui", status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, secure=True, samesite="strict", path="/ui")
        return response

    async def _logout(self, request: Request) -> Response:
        response = RedirectResponse("/ui", status_code=303)
        response.delete_cookie(COOKIE, path="/ui", secure=True, httponly=True, samesite="strict")
        return response

    # ----- data ----------------------------------------------------------------------------------
    def _maybe_sample(self) -> dict[str, Any] | None:
        now = time.time()
        if now - self._last_sample < SAMPLE_SECONDS * 0.95:
            return None
        self._last_sample = now
        return self.state.sample(now)

    async def _state(self, request: Request) -> Response:
        self._use()
        self.flush()
        if not self.state.samples:
            self._maybe_sample()
        try:
            offset = int(request.query_params.get("offset", "0"))
            limit = int(request.query_params.get("limit", "500"))
        except ValueError:
            return JSONResponse({"error": "offset and limit must be integers"}, status_code=400)
        return JSONResponse(self.state.snapshot(offset, limit), headers={"Cache-Control": "no-store"})

    async def _explain(self, request: Request) -> Response:
        self._use()
        key = f"{request.path_params['namespace']}/{request.path_params['name']}"
        trace = self.explain(key) if self.explain is not None else None
        return JSONResponse(
            {
                "pod": key,
                "pending": self.state.pending.get(key),
                "attempt": trace,
                "recording": self.explain is not None,
            }
        )

    async def _events(self, request: Request) -> Response:
        try:
            since = int(request.query_params.get("since") or request.headers.get("last-event-id") or "0")
        except ValueError:
            since = 0
        return StreamingResponse(
            self._stream(since),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def _stream(self, since: int) -> AsyncIterator[bytes]:
        self.streams += 1
        loop = asyncio.get_running_loop()
        last_out = loop.time()
        try:
            yield b"retry: 2000\n\n"
            while not self.stopping.is_set():
                self._use()
                chunks: list[bytes] = []
                delta = self.state.delta(since)
                if delta is not None:
                    since = delta["seq"]
                    chunks.append(_event("delta", delta, since))
                point = self._maybe_sample()
                if point is not None:
                    chunks.append(_event("sample", point))
                elif self.state.samples and not chunks and loop.time() - last_out > SAMPLE_SECONDS * 1.5:
                    chunks.append(_event("sample", self.state.samples[-1]))  # another stream took the sample
                if chunks:
                    self.flush()  # deltas show only durable writes
                    last_out = loop.time()
                    yield b"".join(chunks)
                elif loop.time() - last_out >= KEEPALIVE_SECONDS:
                    last_out = loop.time()
                    yield b": keep-alive\n\n"
                await asyncio.sleep(TICK_SECONDS)
        finally:
            self.streams -= 1


def _event(name: str, data: Any, event_id: int | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
