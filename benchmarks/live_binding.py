"""Pods bound per second by `berth run` against `berth serve --api-only` (issue 14's live binding benchmark).

For each client budget (``--kube-api-qps``/``--kube-api-burst`` 50/100, as kube-scheduler's defaults, and
unthrottled): a fresh `berth serve --api-only`; ``--nodes`` nodes and ``--pods`` pending pods (scheduler_perf's
shapes) created over ``--create-threads`` keep-alive connections; then `berth run --leader-elect=false` is
started. One watch on pods (from the resourceVersion after the creates) records when each pod is first seen
bound. Reported: the time `berth run` took to list the cluster and start ("starting the scheduler" in its log),
pods bound/s = pods / (last binding seen - scheduler start), and the CPU seconds of `berth run` and of the
server over the run, so one can see which side was saturated.

Every process is stopped at the end (SIGTERM, then SIGKILL). Writes benchmarks/results/live_binding.json.
Not a timed test: ``make bench`` material. ``--quick``: 200 nodes, 500 pods.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import ssl
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "serve"))
sys.path.insert(0, str(HERE.parent / "tests" / "remote"))

from report import parse_args, publish  # noqa: E402
from run_helpers import Run, start_run, stop_run  # noqa: E402
from serve_helpers import Served, running  # noqa: E402

from workloads import make_node, make_pod  # noqa: E402

TIMEOUT = 900.0
"""A configuration that has not bound every pod after this many seconds is reported as incomplete."""


def _client(server: Served) -> httpx.Client:
    return httpx.Client(
        base_url=server.url,
        verify=ssl.create_default_context(cafile=str(server.ca)),
        headers={"Authorization": f"Bearer {server.token}"},
        timeout=60.0,
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
    )


def _create(server: Served, path: str, objs: list[dict[str, Any]], threads: int) -> None:
    """POST every object, `threads` connections at a time; raises on a refusal."""
    errors: list[str] = []

    def work(part: list[dict[str, Any]]) -> None:
        with _client(server) as c:
            for obj in part:
                r = c.post(path, content=json.dumps(obj), headers={"Content-Type": "application/json"})
                if r.status_code != 201:
                    errors.append(r.text)
                    return

    parts = [objs[i::threads] for i in range(threads)]
    workers = [threading.Thread(target=work, args=(p,)) for p in parts]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if errors:
        raise RuntimeError(f"create refused: {errors[0]}")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _BindWatch:
    """A watch on pods recording when each one is first seen bound."""

    def __init__(self, server: Served, rv: str, expected: int) -> None:
        self.expected = expected
        self.bound: dict[str, float] = {}
        self.done = threading.Event()
        self._server = server
        self._rv = rv
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        params = {"watch": "1", "resourceVersion": self._rv}
        with (
            httpx.Client(
                base_url=self._server.url,
                verify=ssl.create_default_context(cafile=str(self._server.ca)),
                headers={"Authorization": f"Bearer {self._server.token}"},
                timeout=None,
            ) as c,
            c.stream("GET", "/api/v1/pods", params=params) as resp,
        ):
            for line in resp.iter_lines():
                if not line.strip():
                    continue
                ev = json.loads(line)
                obj = ev.get("object") or {}
                if (obj.get("spec") or {}).get("nodeName"):
                    name = obj["metadata"]["name"]
                    if name not in self.bound:
                        self.bound[name] = time.monotonic()
                        if len(self.bound) >= self.expected:
                            self.done.set()
                            return


def measure(
    nodes: int, pods: int, threads: int, budget: tuple[float, int] | None, bind_workers: int
) -> dict[str, Any]:
    """One configuration on a fresh server; its figures."""
    qps, burst = budget if budget is not None else (-1.0, 0)
    label = f"qps{qps:g}_burst{burst}" if budget is not None else "unthrottled"
    with tempfile.TemporaryDirectory(prefix="berth-live-binding-") as tmp:
        base = Path(tmp)
        with running(base / "data", "--api-only", log=base / "serve.log") as server:
            t0 = time.monotonic()
            _create(server, "/api/v1/nodes", [make_node(f"node-{i}") for i in range(nodes)], threads)
            pod_objs = [make_pod(f"p-{i}") for i in range(pods)]
            for pod in pod_objs:  # berth run's own profile (default-scheduler's pods are kube-scheduler's)
                pod["spec"]["schedulerName"] = "berth-scheduler"
            _create(server, "/api/v1/namespaces/default/pods", pod_objs, threads)
            create_s = time.monotonic() - t0
            with _client(server) as c:
                rv = c.get("/api/v1/pods", params={"limit": "1"}).json()["metadata"]["resourceVersion"]
            watch = _BindWatch(server, rv, pods)
            server_cpu0 = server.cpu_seconds()
            started = time.monotonic()
            run: Run = start_run(
                server,
                base / "run.log",
                "--leader-elect=false",
                f"--kube-api-qps={qps:g}",
                f"--kube-api-burst={burst}",
                f"--bind-workers={bind_workers}",
            )
            try:
                run.wait_for("starting the scheduler", seconds=TIMEOUT)
                ready = time.monotonic()
                complete = watch.done.wait(TIMEOUT)
                end = max(watch.bound.values(), default=ready)
                run_cpu = _cpu_seconds(run.process.pid)
                server_cpu = server.cpu_seconds() - server_cpu0
            finally:
                stop_run(run)
            bound = len(watch.bound)
            binding_s = end - ready
            return {
                f"{label}_complete": complete,
                f"{label}_pods_bound": bound,
                f"{label}_create_seconds": round(create_s, 2),
                f"{label}_sync_seconds": round(ready - started, 2),
                f"{label}_binding_seconds": round(binding_s, 2),
                f"{label}_pods_bound_per_second": round(bound / binding_s, 1) if binding_s > 0 else None,
                f"{label}_run_cpu_seconds": round(run_cpu, 2),
                f"{label}_server_cpu_seconds": round(server_cpu, 2),
            }


def main() -> None:
    """Measure each budget and publish the figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--create-threads", type=int, default=4)
    ap.add_argument("--quick", action="store_true", help="200 nodes, 500 pods")
    ap.add_argument("--only", choices=["throttled", "unthrottled"], help="measure one budget only")
    ap.add_argument("--bind-workers", type=int, default=16, help="berth run --bind-workers")
    args = parse_args(ap)
    nodes, pods = (200, 500) if args.quick else (args.nodes, args.pods)
    figures: dict[str, Any] = {
        "nodes": nodes,
        "pods": pods,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "bind_workers": args.bind_workers,
    }
    budgets: list[tuple[float, int] | None] = [(50.0, 100), None]
    if args.only == "throttled":
        budgets = [(50.0, 100)]
    elif args.only == "unthrottled":
        budgets = [None]
    for budget in budgets:
        figures.update(measure(nodes, pods, args.create_threads, budget, args.bind_workers))
    publish("live_binding", figures)


if __name__ == "__main__":
    main()
