"""The API paths of `ApiServer` in process: the bare ASGI path past Starlette, msgspec bodies, the store's
group-committed writes flushed before every answer, watch lines encoded once per event."""

from __future__ import annotations

import asyncio
import json

import httpx

from berth.api.watch import ADDED, WatchEvent
from berth.server.app import MAX_BODY_BYTES, ApiServer
from berth.store import MemoryStore
from builders import make_pod

TOKEN = "Bearer s3cret"
PODS = "/api/v1/namespaces/default/pods"


def _client(store: MemoryStore, flushed: list[int] | None = None) -> httpx.AsyncClient:
    api = ApiServer(
        store,
        token_ok=lambda header: header == TOKEN,
        flush=(lambda: flushed.append(store.revision)) if flushed is not None else None,
    )
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=api.app),
        base_url="https://testserver",
        headers={"Authorization": TOKEN},
    )


def test_every_answer_is_sent_after_a_flush_of_the_writes_it_reports() -> None:
    store = MemoryStore()
    flushed: list[int] = []

    async def run() -> None:
        async with _client(store, flushed) as http:
            created = await http.post(PODS, content=json.dumps(make_pod("a").obj()))
            assert (created.status_code, created.json()["metadata"]["resourceVersion"]) == (201, "1")
            assert flushed == [1]
            listed = await http.get(PODS)
            assert (listed.status_code, [p["metadata"]["name"] for p in listed.json()["items"]]) == (
                200,
                ["a"],
            )
            assert flushed == [1, 1]

    asyncio.run(run())


def test_answers_and_refusals_on_the_api_path() -> None:
    store = MemoryStore()
    asyncio.run(_refusals(store))
    assert store.revision == 0


async def _refusals(store: MemoryStore) -> None:
    async with _client(store) as http:
        assert (await http.get("/api/v1")).json()["kind"] == "APIResourceList"
        bad = await http.post(PODS, content=b"{not json")
        assert (bad.status_code, bad.json()["reason"], bad.headers["content-type"]) == (
            400,
            "BadRequest",
            "application/json",
        )
        big = await http.post(PODS, content=b" " * (MAX_BODY_BYTES + 1))
        assert (big.status_code, big.json()["reason"]) == (413, "RequestEntityTooLarge")
        missing = await http.get(f"{PODS}/nope")
        assert (missing.status_code, missing.json()["message"]) == (404, 'pods "nope" not found')
        paged = await http.get(PODS, params={"limit": "1"})
        assert (paged.status_code, paged.json()["metadata"]) == (200, {"resourceVersion": "0"})
        unauthorized = await http.get(PODS, headers={"Authorization": "Bearer wrong"})
        assert (unauthorized.status_code, unauthorized.json()["reason"]) == (401, "Unauthorized")
        assert (await http.get("/healthz")).text == "ok"


def test_a_watch_line_is_encoded_once_per_event() -> None:
    store = MemoryStore()
    api = ApiServer(store)
    pod = store.create(make_pod("a").obj())
    event = WatchEvent(ADDED, pod, ("", "Pod"), 1)
    again = WatchEvent(ADDED, pod, ("", "Pod"), 1)
    line = api._line(event)
    assert api._line(again) is line
    assert json.loads(line) == {"type": "ADDED", "object": pod}
    assert line.endswith(b"\n") and line.count(b"\n") == 1
