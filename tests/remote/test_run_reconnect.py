"""`berth run` survives its API server going away mid-stream: the watches drop, the reflectors back off and come
back (resuming, or relisting on 410), and pods created after the restart are bound; none is bound twice. Without
``--scheduler-config`` it schedules only its own profile's pods (``berth-scheduler``): kube-scheduler's are left
alone."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path
from typing import Any

import pytest
from run_helpers import Served, eventually, running, running_berth

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")

Obj = dict[str, Any]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _pod(name: str, scheduler: str = "berth-scheduler") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}],
        },
    }


def _placement(served: Served) -> dict[str, str]:
    with served.client() as c:
        items = c.get("/api/v1/namespaces/default/pods").json()["items"]
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in items}


def test_a_restarted_server_is_followed_again(tmp_path: Path) -> None:
    port = _free_port()
    listen = ("--listen", f"127.0.0.1:{port}")
    data = tmp_path / "data"
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}},
    }
    first = running(data, "--api-only", *listen, log=tmp_path / "serve1.log")
    served = first.__enter__()
    try:
        with running_berth(served, tmp_path / "run.log", "--leader-elect=false") as run:
            run.wait_for("starting the scheduler")
            served.apply(
                node, _pod("before"), _pod("kubes", "default-scheduler"), _pod("koords", "koord-scheduler")
            )
            eventually(lambda: _placement(served) == {"before": "n1", "kubes": "", "koords": ""})
            first.__exit__(None, None, None)  # the server stops: every watch drops
            first = None
            with running(data, "--api-only", *listen, log=tmp_path / "serve2.log") as again:
                again.apply(_pod("after"))
                expected = {"before": "n1", "after": "n1", "kubes": "", "koords": ""}
                eventually(lambda: _placement(again) == expected, seconds=60)
                # the node's CPU: 8 - 1 - 1 = 6 left; a pod too big for what is left stays pending (the replica counted
                # both pods, the one bound before the restart too)
                again.apply(
                    {
                        **_pod("big"),
                        "spec": {
                            **_pod("big")["spec"],
                            "containers": [
                                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "7"}}}
                            ],
                        },
                    }
                )

                def refused() -> bool:
                    with again.client() as c:
                        pod = c.get("/api/v1/namespaces/default/pods/big").json()
                    return any(
                        cond["type"] == "PodScheduled" and cond["status"] == "False"
                        for cond in (pod.get("status") or {}).get("conditions") or []
                    )

                eventually(refused, seconds=60)
                assert _placement(again)["big"] == ""
                # the pods of kube-scheduler and Koordinator: never touched (no condition, no event)
                with again.client() as c:
                    pods = {
                        p["metadata"]["name"]: p
                        for p in c.get("/api/v1/namespaces/default/pods").json()["items"]
                    }
                    events = c.get("/api/v1/namespaces/default/events").json()["items"]
                assert [(pods[n].get("status") or {}).get("conditions") for n in ("kubes", "koords")] == [
                    None,
                    None,
                ]
                assert {e["involvedObject"]["name"] for e in events} == {"before", "after", "big"}
            assert "Traceback" not in run.text()
    finally:
        if first is not None:
            first.__exit__(None, None, None)
