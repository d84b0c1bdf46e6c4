"""`ClusterMirror` retries an update refused with 409 Conflict as client-go's ``RetryOnConflict`` (``DefaultRetry``:
5 attempts, 10 ms apart, jitter 0.1): the writer's change is applied again to the object read anew from the
server. Against a real `berth serve --api-only`, with 409s injected by a transport (as test_run_faults.py's)."""

from __future__ import annotations

import random
import shutil
import ssl
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from run_helpers import running

from berth.api.errors import Conflict
from berth.remote.client import KubeClient
from berth.remote.conflict import backoff_delays, merge_diff
from berth.remote.mirror import ClusterMirror
from berth.remote.store import RemoteStore

Obj = dict[str, Any]
NODE = ("", "Node")


class Conflicts(httpx.BaseTransport):
    """Forwards to the server, but answers the next `inject` status writes 409 without sending them; counts
    the GETs of one object."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.lock = threading.Lock()
        self.inject = 0
        self.gets = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        with self.lock:
            if request.method == "PUT" and path.endswith("/status") and self.inject:
                self.inject -= 1
                body = {
                    "kind": "Status",
                    "code": 409,
                    "reason": "Conflict",
                    "message": 'Operation cannot be fulfilled on nodes "n1": injected',
                }
                return httpx.Response(409, json=body)
            if request.method == "GET" and path == "/api/v1/nodes/n1":
                self.gets += 1
        return self.inner.handle_request(request)


def test_merge_diff_and_the_default_backoff() -> None:
    old = {"a": 1, "b": {"c": 2, "d": 3}, "e": [1], "gone": True}
    new = {"a": 1, "b": {"c": 2, "d": 4, "x": 0}, "e": [1, 2]}
    assert merge_diff(old, new) == {"b": {"d": 4, "x": 0}, "e": [1, 2], "gone": None}
    delays = backoff_delays(rng=random.Random(1))
    assert len(delays) == 4
    assert all(0.010 <= d <= 0.011 for d in delays)
    assert backoff_delays(jitter=0.0) == [0.01, 0.01, 0.01, 0.01]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")
def test_a_stale_replica_or_an_injected_conflict_is_written_again(tmp_path: Path) -> None:
    with running(tmp_path / "data", "--api-only", log=tmp_path / "serve.log") as served:
        alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
        served.apply(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "n1"},
                "status": {"allocatable": alloc, "capacity": alloc},
            }
        )
        transport = Conflicts(httpx.HTTPTransport(verify=ssl.create_default_context(cafile=str(served.ca))))
        client = KubeClient(served.url, token=served.token, transport=transport)
        mirror = ClusterMirror(RemoteStore(client), [NODE])
        sleeps: list[float] = []
        mirror.sleep = sleeps.append
        mirror.start()
        try:
            assert mirror.wait_for_sync(30)
            # the replica falls behind: the node is labelled on the server, and the watch's event not applied yet
            done = served.kubectl("label", "node", "n1", "team=a")
            assert done.returncode == 0, done.stderr
            stale = mirror.get(NODE, "", "n1")
            assert "team" not in (stale["metadata"].get("labels") or {})
            written = mirror.update_status(
                {**stale, "status": {**stale["status"], "allocatable": {**alloc, "cpu": "3"}}}
            )
            assert written["metadata"]["labels"]["team"] == "a"  # the server's newest version ...
            assert written["status"]["allocatable"]["cpu"] == "3"  # ... with the writer's change
            assert (mirror.conflicts_retried, transport.gets, len(sleeps)) == (1, 1, 1)
            assert mirror.get(NODE, "", "n1")["status"]["allocatable"]["cpu"] == "3"  # read-your-writes

            # an injected 409, twice: the third attempt goes through
            current = mirror.get(NODE, "", "n1")
            transport.inject = 2
            written = mirror.update_status(
                {**current, "status": {**current["status"], "allocatable": {**alloc, "cpu": "2"}}}
            )
            assert written["status"]["allocatable"]["cpu"] == "2"
            assert (mirror.conflicts_retried, transport.gets, len(sleeps)) == (2, 3, 3)
            assert all(0.010 <= s <= 0.011 for s in sleeps)

            # conflicts on every attempt: 5 attempts, then the Conflict
            current = mirror.get(NODE, "", "n1")
            transport.inject = 10
            with pytest.raises(Conflict, match="injected"):
                mirror.update_status({**current, "status": {**current["status"], "allocatable": alloc}})
            assert (transport.inject, transport.gets, len(sleeps)) == (5, 7, 7)

            # a write not made from the replica's copy: its change is unknown, the Conflict is the writer's
            transport.inject = 0
            with pytest.raises(Conflict):
                mirror.update_status({**current, "metadata": {**current["metadata"], "resourceVersion": "1"}})
            assert transport.gets == 7
        finally:
            mirror.stop()
            client.close()
