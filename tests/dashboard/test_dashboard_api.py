"""`berth serve`'s live dashboard over the socket: the login, the cookie's reach, the state's figures, the
event stream and a 5 000-node state answered in pages."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from dashboard_helpers import PODGROUP, QUOTA, node, pod, reservation
from serve_helpers import KUBECTL, Served, eventually, running

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="the end-to-end tests need kubectl on PATH")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("dashboard"), "--kubelet", "none") as served:
        yield served


def anonymous(server: Served) -> httpx.Client:
    client = server.client()
    del client.headers["Authorization"]
    return client


def test_ui_without_token_shows_the_login_form(server: Served) -> None:
    with anonymous(server) as c:
        r = c.get("/ui")
        assert r.status_code == 401
        assert '<form method="post" action="/ui/login">' in r.text
        assert c.get("/ui/api/state").status_code == 401
        assert c.get("/ui/api/state").json()["reason"] == "Unauthorized"
        bad = c.post("/ui/login", data={"token": "not-the-token"})
        assert bad.status_code == 401 and "not this server" in bad.text
        assert "set-cookie" not in bad.headers


def test_cookie_login_opens_the_ui_only(server: Served) -> None:
    with anonymous(server) as c:
        r = c.post("/ui/login", data={"token": server.token})
        assert r.status_code == 303 and r.headers["location"] == "/ui"
        cookie = r.headers["set-cookie"]
        assert cookie.startswith(f"berth_token={server.token};")
        lowered = cookie.lower()
        assert "httponly" in lowered and "secure" in lowered and "samesite=strict" in lowered
        assert "path=/ui" in lowered
        jar = {"Cookie": f"berth_token={server.token}"}
        page = c.get("/ui", headers=jar)
        assert page.status_code == 200 and "/ui/assets/dashboard.js" in page.text
        assert c.get("/ui/api/state", headers=jar).status_code == 200
        assert c.get("/ui/assets/dashboard.js").status_code == 200
        # the Kubernetes API stays bearer-only
        api = c.get("/api/v1/pods", headers=jar)
        assert api.status_code == 401 and api.json()["reason"] == "Unauthorized"
        assert c.get("/metrics", headers=jar).status_code == 401
    with server.client() as c:  # the bearer token opens the UI too
        assert c.get("/ui/api/state").status_code == 200


def test_state_figures(server: Served) -> None:
    server.apply(node("n1"), node("n2", cpu="8", memory="16Gi"), QUOTA, PODGROUP)
    server.apply(reservation("r1", "500m", "n1"))
    eventually(
        lambda: (
            server.kubectl("get", "reservation", "r1", "-o", "jsonpath={.status.phase}").stdout == "Available"
        ),
        "r1 Available",
    )
    server.apply(pod("a", "1", node_name="n1"), pod("b", "500m", memory="512Mi", node_name="n1"))
    server.apply(pod("huge", "64", node_name="n1"))

    def state() -> dict[str, Any]:
        with server.client() as c:
            doc: dict[str, Any] = c.get("/ui/api/state").json()
        return doc

    def settled() -> dict[str, Any] | None:
        doc = state()
        pend = doc["pending"]
        if doc["totals"]["bound"] == 2 and pend and pend[0]["reason"] == "Unschedulable":
            return doc
        return None

    try:
        doc = eventually(settled, "two pods bound and one unschedulable")
    except AssertionError:
        raise AssertionError(json.dumps(state(), indent=1)) from None
    n1, n2 = doc["nodes"]["items"]
    assert n1["name"] == "n1" and n2["name"] == "n2"
    assert n1["allocatable"] == [4000, 8 * 1024**3, 110]
    assert n1["requested"] == [1500, 1024**3 + 512 * 1024**2, 2]
    assert n1["reserved"] == [500, 0, 0]
    assert n1["pods"] == 2
    assert n2["requested"] == [0, 0, 0] and n2["reserved"] == [0, 0, 0]
    assert doc["totals"]["allocatable"][0] == 12000 and doc["totals"]["requested"][0] == 1500
    assert doc["totals"]["nodes"] == 2 and doc["totals"]["pending"] == 1
    (r1,) = doc["reservations"]
    assert r1["name"] == "r1" and r1["phase"] == "Available" and r1["node"] == "n1"
    assert r1["owners"] == ["object default/owner-pod"] and r1["allocatable"][0] == 500
    (quota,) = doc["quotas"]
    assert quota["key"] == "default/team-a"
    assert quota["min"] == [2000, 4 * 1024**3] and quota["max"] == [6000, 12 * 1024**3]
    (group,) = doc["podgroups"]
    assert group["key"] == "default/gang" and group["minMember"] == 3
    (pending,) = doc["pending"]
    assert pending["key"] == "default/huge" and pending["cpu"] == 64000
    assert "Insufficient cpu" in pending["message"]
    # one node per page, by name
    with server.client() as c:
        page = c.get("/ui/api/state", params={"offset": 1, "limit": 1}).json()["nodes"]
    assert page["total"] == 2 and [n["name"] for n in page["items"]] == ["n2"]


def test_explain_a_pending_pod(server: Served) -> None:
    """The first question activates the pod; its next attempt is traced node by node, plugin by plugin."""

    def explained() -> dict[str, Any] | None:
        with server.client() as c:
            doc: dict[str, Any] = c.get("/ui/api/explain/default/huge").json()
        assert doc["pod"] == "default/huge" and doc["recording"] is True
        assert doc["pending"]["reason"] == "Unschedulable"
        return doc if doc["attempt"] else None

    attempt = eventually(explained, "a recorded attempt of default/huge")["attempt"]
    assert attempt["pod"] == "default/huge" and attempt["selected"] == ""
    assert "Insufficient cpu" in attempt["failure"]
    assert attempt["filter"]["n1"]["NodeResourcesFit"] == "Insufficient cpu"
    assert "NodeAffinity" in attempt["filterPlugins"]
    with server.client() as c:  # a pod nobody knows: no attempt, nothing pending
        other = c.get("/ui/api/explain/default/nobody").json()
    assert other["attempt"] is None and other["pending"] is None


def test_owner_pod_takes_the_reservation(server: Served) -> None:
    """The reservation's owner lands in it: reserved goes to the pod's requested."""
    server.apply(pod("owner-pod", "500m", memory="0", node_name="n1"))

    def n1() -> dict[str, Any] | None:
        with server.client() as c:
            row: dict[str, Any] = c.get("/ui/api/state", params={"limit": 1}).json()["nodes"]["items"][0]
        return row if row["reserved"][0] == 0 else None

    row = eventually(n1, "the owner pod allocated from r1")
    assert row["name"] == "n1" and row["requested"][0] == 2000 and row["pods"] == 3
    with server.client() as c:
        (r1,) = c.get("/ui/api/state").json()["reservations"]
    assert r1["allocated"][0] == 500


def sse_events(response: httpx.Response) -> Iterator[tuple[str, str]]:
    """(event, data) of a server-sent-event stream; comments are yielded as ("comment", text)."""
    event, data = "message", []
    for line in response.iter_lines():
        if line == "":
            if data:
                yield event, "\n".join(data)
            event, data = "message", []
        elif line.startswith(":"):
            yield "comment", line[1:].strip()
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())


def test_event_stream_delivers_a_new_pod(server: Served) -> None:
    with server.client() as c:
        seq = c.get("/ui/api/state").json()["seq"]
    with (
        server.client() as c,
        c.stream("GET", "/ui/api/events", params={"since": seq}, timeout=httpx.Timeout(10.0)) as r,
    ):
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        server.apply(pod("streamed", "100m", node_name="n2"))
        deadline = time.monotonic() + 15
        seen_pod = seen_sample = False
        for event, data in sse_events(r):
            if event == "delta":
                delta = json.loads(data)
                assert delta["seq"] > seq
                nodes = {n["name"]: n for n in (delta.get("nodes") or {}).get("set", [])}
                pending = [p["key"] for p in (delta.get("pending") or {}).get("set", [])]
                if "default/streamed" in pending or ("n2" in nodes and nodes["n2"]["requested"][0] == 100):
                    seen_pod = True
            elif event == "sample":
                point = json.loads(data)
                assert point["cpuAllocatable"] == 12000
                # the report's series too (exact figures: tests/dashboard/test_dashboard_state.py)
                assert point["allocatable"][0] == 12000 and point["groupLabel"] == "shape"
                assert sum(g["allocatable"][0] for g in point["groups"].values()) == 12000
                assert {"pendingWaitMean", "latencyMean", "scheduled", "reserved", "quotas"} <= set(point)
                seen_sample = True
            if (seen_pod and seen_sample) or time.monotonic() > deadline:
                break
        assert seen_pod and seen_sample


def test_5000_nodes_paged(served_5000: Served) -> None:
    with served_5000.client() as c:
        first = c.get("/ui/api/state", params={"offset": 0, "limit": 500}).json()
        page = c.get("/ui/api/state", params={"offset": 4900, "limit": 500}).json()
    assert first["totals"]["nodes"] == 5000
    assert first["totals"]["allocatable"][0] == 5000 * 4000
    assert first["nodes"]["total"] == 5000 and len(first["nodes"]["items"]) == 500
    assert first["nodes"]["items"][0]["name"] == "node-00000"
    assert [n["name"] for n in page["nodes"]["items"]] == [f"node-{i:05d}" for i in range(4900, 5000)]
    assert page["nodes"]["offset"] == 4900 and page["nodes"]["limit"] == 500
