"""`Reflector`: list, watch from the list's resourceVersion, resume from the last one seen (bookmarks too),
relist on 410, back off on errors — against a scripted API served through httpx's MockTransport."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from berth.api.kinds import all_kinds
from berth.api.watch import WatchEvent
from berth.remote.client import KubeClient
from berth.remote.informer import Listed, Reflector
from berth.remote.ratelimit import TokenBucket
from builders import make_pod

POD_INFO = next(k for k in all_kinds() if k.kind == "Pod" and k.group == "")
Obj = dict[str, Any]


def _pod(name: str, rv: int) -> Obj:
    obj: Obj = make_pod(name).obj()
    obj["metadata"]["resourceVersion"] = str(rv)
    return obj


def _lines(*events: Obj) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


def _wait(cond: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not cond():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def test_lists_watches_resumes_relists_and_backs_off(caplog: pytest.LogCaptureFixture) -> None:
    requests: list[dict[str, str]] = []
    release = threading.Event()
    lists = iter(
        [
            {"metadata": {"resourceVersion": "10", "continue": "next"}, "items": [_pod("a", 3)]},
            {"metadata": {"resourceVersion": "11"}, "items": [_pod("b", 4)]},
            {"metadata": {"resourceVersion": "40"}, "items": [_pod("c", 39)]},
        ]
    )
    watches: list[Callable[[], httpx.Response]] = [
        lambda: httpx.Response(
            200,
            content=_lines(
                {"type": "ADDED", "object": _pod("d", 12)},
                {"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "15"}}},
            ),
        ),
        lambda: httpx.Response(
            200,
            content=_lines(
                {"type": "MODIFIED", "object": _pod("d", 16)},
                {
                    "type": "ERROR",
                    "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"},
                },
            ),
        ),
        lambda: httpx.Response(500, json={"kind": "Status", "code": 500, "message": "etcd is down"}),
        lambda: (release.wait(10), httpx.Response(200, content=b""))[1],
    ]

    def handle(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        requests.append(params)
        if params.get("watch"):
            return watches.pop(0)() if watches else httpx.Response(200, content=b"")
        return httpx.Response(200, json={"kind": "PodList", "apiVersion": "v1", **next(lists)})

    seen: list[Listed | WatchEvent] = []
    client = KubeClient("http://berth.test", transport=httpx.MockTransport(handle))
    r = Reflector(client, POD_INFO, seen.append, initial_backoff=0.01, max_backoff=0.02, min_watch_timeout=60)
    r.start()
    try:
        _wait(lambda: len(requests) >= 7)
    finally:
        r.stop()
        release.set()
        r.join(5)
    described = [
        (type(i).__name__, [o["metadata"]["name"] for o in i.items], i.resource_version)
        if isinstance(i, Listed)
        else (i.type, i.object["metadata"]["name"], i.revision)
        for i in seen
    ]
    assert described == [
        ("Listed", ["a", "b"], 10),
        ("ADDED", "d", 12),
        ("MODIFIED", "d", 16),
        ("Listed", ["c"], 40),
    ]
    assert all(i.object["kind"] == "Pod" for i in seen if isinstance(i, WatchEvent))
    asked = [
        (
            p.get("watch", "list"),
            p.get("resourceVersion", ""),
            p.get("continue", ""),
            p.get("allowWatchBookmarks"),
        )
        for p in requests[:7]
    ]
    assert asked == [
        ("list", "", "", None),
        ("list", "", "next", None),
        ("1", "10", "", "true"),  # from the list's resourceVersion
        ("1", "15", "", "true"),  # resumed from the bookmark
        ("list", "", "", None),  # 410: listed again
        ("1", "40", "", "true"),  # 500: backed off, then watched again from the same version
        ("1", "40", "", "true"),
    ]
    assert requests[2]["timeoutSeconds"].isdigit() and 60 <= int(requests[2]["timeoutSeconds"]) <= 120
    assert r.lists == 2
    assert "pods: etcd is down; retrying in " in caplog.text


def test_token_bucket_allows_a_burst_then_paces_at_qps() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(round(s, 6))
        now[0] += s

    bucket = TokenBucket(10, 3, now=lambda: now[0], sleep=sleep)
    for _ in range(5):
        bucket.wait()
    assert slept == [0.1, 0.1]
    now[0] += 1.0  # a second later the bucket is full again (3 tokens, not 10)
    for _ in range(4):
        bucket.wait()
    assert slept == [0.1, 0.1, 0.1]
    assert TokenBucket(0, 0).reserve() == 0.0  # qps 0: unthrottled
