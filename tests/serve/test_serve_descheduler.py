"""`berth serve --descheduler-policy`: the descheduler runs every --descheduling-interval of real time against
the served cluster, and the real kubectl sees its evictions (the example of examples/descheduler/)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import yaml
from serve_helpers import running

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "descheduler"
MESSAGE = re.compile(r"^pod eviction from (node-[12]) node by sigs\.k8s\.io/descheduler$")


def _until(what: str, fn: Any, seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = fn()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_serve_runs_the_descheduler_periodically(tmp_path: Path) -> None:
    with running(
        tmp_path,
        "--descheduler-policy",
        str(EXAMPLE / "policy.yaml"),
        "--descheduling-interval",
        "2s",
    ) as served:
        done = served.kubectl("create", "-f", str(EXAMPLE / "01-cluster.yaml"))
        assert done.returncode == 0, done.stderr

        def web_pods() -> list[dict[str, Any]]:
            out = served.kubectl("get", "pods", "-l", "app=web", "-o", "json")
            assert out.returncode == 0, out.stderr
            return list(json.loads(out.stdout)["items"])

        def ready(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [
                p
                for p in pods
                if not p["metadata"].get("deletionTimestamp")
                and any(
                    c["type"] == "Ready" and c["status"] == "True"
                    for c in p.get("status", {}).get("conditions", [])
                )
            ]

        _until("8 ready web pods", lambda: len(ready(web_pods())) == 8)
        time.sleep(2.5)  # a cycle with two nodes, both busy: nothing underutilized, nothing evicted
        assert (
            served.kubectl(
                "get", "events", "--field-selector", "reason=LowNodeUtilization", "-o", "name"
            ).stdout
            == ""
        )
        scenario = yaml.safe_load((EXAMPLE / "02-scale-out.yaml").read_text())
        served.apply(*scenario["spec"]["steps"][0]["create"])

        def evictions() -> list[dict[str, Any]]:
            out = served.kubectl(
                "get", "events", "--field-selector", "reason=LowNodeUtilization", "-o", "json"
            )
            items = list(json.loads(out.stdout)["items"])
            return items if len(items) >= 2 else []

        events = _until("the descheduler's events", evictions)
        for ev in events:
            match = MESSAGE.match(ev["message"])
            assert match, ev["message"]
            assert ev["type"] == "Normal"
            assert ev["source"]["component"] == "sigs.k8s.io/descheduler"
            assert ev["involvedObject"]["kind"] == "Pod"
        pods = _until(
            "8 ready web pods again, some on the new nodes",
            lambda: (
                lambda ps: (
                    ps if len(ps) == 8 and {"node-3", "node-4"} & {p["spec"]["nodeName"] for p in ps} else []
                )
            )(ready(web_pods())),
        )
        evicted = {ev["involvedObject"]["name"] for ev in events}
        assert evicted.isdisjoint({p["metadata"]["name"] for p in pods})
