"""Faults between `berth run`'s core and a real `berth serve --api-only`: 500, 429 and 409 answers, a binding
applied but whose answer is lost, a watch dropped mid-stream — injected by a transport between the client and
the server. Every pod ends bound, the server accepts one binding per pod, and the runner logs no API error."""

from __future__ import annotations

import shutil
import ssl
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from run_helpers import Served, eventually, pod_placement, running, scheduled_counts

from berth.controlplane.run import REQUIRED_KINDS, Runner, RunOptions
from berth.remote.client import KubeClient
from berth.remote.mirror import ClusterMirror
from berth.remote.store import RemoteStore

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")

Obj = dict[str, Any]
PODS = 12


class _Cut(httpx.SyncByteStream):
    """A watch stream that breaks after `lines` lines."""

    def __init__(self, inner: httpx.SyncByteStream, lines: int) -> None:
        self.inner = inner
        self.lines = lines

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        for chunk in self.inner:
            yield chunk
            seen += chunk.count(b"\n")
            if seen >= self.lines:
                raise httpx.ReadError("connection reset by peer")

    def close(self) -> None:
        self.inner.close()


class Faults(httpx.BaseTransport):
    """Forwards to the server, but: the 1st binding gets a 500, the 2nd is applied and its answer lost, the 3rd
    gets a 409 without reaching the server; the first Event gets a 429 with Retry-After (sent again); the first pods
    watch breaks after 3 events. Counts the bindings the server accepted, per pod."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.lock = threading.Lock()
        self.bindings = 0
        self.events = 0
        self.pod_watches = 0
        self.accepted: Counter[str] = Counter()
        self.injected: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        with self.lock:
            if path.endswith("/binding"):
                self.bindings += 1
                nth = self.bindings
            else:
                nth = 0
            if request.method == "POST" and path.endswith("/events"):
                self.events += 1
                event = self.events
            else:
                event = 0
            watch = path == "/api/v1/pods" and request.url.params.get("watch") == "1"
            if watch:
                self.pod_watches += 1
            first_watch = watch and self.pod_watches == 1
        pod = path.split("/")[-2] if nth else ""
        if nth == 1:
            self.injected.append(f"500 {pod}")
            return _status(500, "InternalError", "Internal error occurred: etcdserver: request timed out")
        if nth == 3:
            self.injected.append(f"409 {pod}")
            return _status(409, "Conflict", "Operation cannot be fulfilled on pods/binding: injected")
        if event == 1:
            self.injected.append("429 event")
            resp = _status(429, "TooManyRequests", "too many requests, please try again later")
            resp.headers["Retry-After"] = "1"
            return resp
        response = self.inner.handle_request(request)
        if nth and response.status_code == 201:
            with self.lock:
                self.accepted[pod] += 1
        if nth == 2:
            response.read()
            self.injected.append(f"lost {pod}")
            raise httpx.ReadTimeout("the answer was lost")
        if first_watch:
            self.injected.append("watch cut")
            assert isinstance(response.stream, httpx.SyncByteStream)
            return httpx.Response(
                response.status_code, headers=response.headers, stream=_Cut(response.stream, 3)
            )
        return response


def _status(code: int, reason: str, message: str) -> httpx.Response:
    return httpx.Response(code, json={"kind": "Status", "code": code, "reason": reason, "message": message})


def test_faults_lose_no_pod_and_bind_none_twice(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with running(tmp_path / "data", "--api-only", log=tmp_path / "serve.log") as served:
        served.apply(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "n1"},
                "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "110"}},
            }
        )
        ctx = ssl.create_default_context(cafile=str(served.ca))
        faults = Faults(httpx.HTTPTransport(verify=ctx))
        client = KubeClient(served.url, token=served.token, transport=faults)
        mirror = ClusterMirror(RemoteStore(client), REQUIRED_KINDS, bind_workers=4)
        runner = Runner(mirror, RunOptions(leader_elect=False, controllers=frozenset()))
        thread = threading.Thread(target=runner.run, daemon=True)
        thread.start()
        try:
            eventually(lambda: runner.plane is not None)
            pods = [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"p{i:02d}", "namespace": "default"},
                    "spec": {
                        "schedulerName": "berth-scheduler",
                        "containers": [
                            {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
                        ],
                    },
                }
                for i in range(PODS)
            ]
            served.apply(*pods)
            eventually(lambda: sorted(pod_placement(served).values()) == ["n1"] * PODS, seconds=60)
        finally:
            runner.stop()
            thread.join(30)
            client.close()
        assert not thread.is_alive()
        kinds = sorted(i.split()[0] for i in faults.injected)
        assert kinds == ["409", "429", "500", "lost", "watch"]
        assert faults.pod_watches >= 2  # the cut watch was opened again
        assert dict(faults.accepted) == {f"p{i:02d}": 1 for i in range(PODS)}
        assert runner.errors == 0
        assert (
            mirror.binder is not None and mirror.binder.failed == 1
        )  # the 409: forgotten, queued, bound again
        assert "Binding rejected: Operation cannot be fulfilled on pods/binding: injected" in _events(served)
        # Scheduled is said once the server accepted the binding: the rejected one left only its FailedScheduling
        assert scheduled_counts(served) == {f"p{i:02d}": 1 for i in range(PODS)}


def _events(served: Served) -> list[str]:
    with served.client() as c:
        items = c.get("/api/v1/namespaces/default/events").json()["items"]
    return [e["message"] for e in items if e["reason"] == "FailedScheduling"]
