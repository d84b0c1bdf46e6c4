"""Load on a real `berth serve` over loopback HTTPS: watch fan-out, and scheduling through the API.

* Watch fan-out: `berth serve --api-only` on a fresh data directory; ``--watchers`` streaming watches of
  pods in all namespaces (``GET /api/v1/pods?watch=1&resourceVersion=<list rv>``, httpx, one thread each,
  in a child process so that their parsing does not share a GIL with the writer) and a paced writer creating
  pods at ``--rate`` writes/s for ``--seconds`` (``--writer-threads`` keep-alive HTTP/1.1 connections of
  `LightClient`, a minimal client that leaves the CPU to the server).
  Every watcher must see every acknowledged pod's ADDED event exactly once; any non-2xx answer, closed or
  stalled stream, missing or duplicate event counts as an error. Write latency is send → response; watch
  delivery delay is the event's arrival at a watcher minus the writer's receipt of the 201 (so it can be
  slightly negative), also given from the send.
* Scheduling through the API: `berth serve --kubelet none` (scheduler on, pods stay bound); ``--nodes``
  nodes, then ``--pods`` pods created by ``--create-threads`` concurrent keep-alive connections as fast as
  they go. One watch on pods (started before the first create; cheaper than polling a 10 000-pod list)
  records when each pod is first seen with ``spec.nodeName`` set; pods bound/s = pods / (last binding
  - first pod create sent). Reference: kube-apiserver + kube-scheduler v1.30 on a 2-core machine bind
  320-340 pods/s with 5 000 nodes; issue 13's target for Berth is >= 1 000.

The server is always stopped (SIGTERM, then SIGKILL). Server and client CPU seconds are reported so one can
see which side was saturated. Writes benchmarks/results/serve_load.json. Not a timed test: ``make bench``
material. ``--quick``: 10 watchers for 5 s, 500 nodes and 1 000 pods.
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing as mp
import os
import platform
import re
import socket
import ssl
import sys
import tempfile
import threading
import time
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "serve"))

from report import parse_args, peak_rss_mib, publish  # noqa: E402
from serve_helpers import Served, running  # noqa: E402

from workloads import make_node, make_pod  # noqa: E402

STALL_SECONDS = 15.0
"""A watch stream silent this long while events are still expected counts as stalled."""
EVENT = re.compile(rb'\{"type":"([A-Z]+)","object":\{.*?"name":"p-(\d+)"')
NODE_NAME = b'"nodeName":"'


# ----- the server ----------------------------------------------------------------------------------------
def client(server: Served, timeout: float = 30.0) -> httpx.Client:
    """A keep-alive HTTP/1.1 client (one connection) trusting the server's CA, with the bearer token."""
    return httpx.Client(
        base_url=server.url,
        verify=ssl.create_default_context(cafile=str(server.ca)),
        headers={"Authorization": f"Bearer {server.token}"},
        timeout=timeout,
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
    )


@contextmanager
def serving(*args: str) -> Iterator[Served]:
    """`berth serve --data-dir <fresh temp dir> --listen 127.0.0.1:0 ARGS` (tests/serve's starter, stderr to
    a log file), always stopped afterwards."""
    with (
        tempfile.TemporaryDirectory(prefix="berth-serve-load-") as tmp,
        running(Path(tmp), *args, log=Path(tmp) / "serve.stderr") as server,
    ):
        yield server


# ----- figures -------------------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of `values`; NaN when empty."""
    if not values:
        return math.nan
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2) if not math.isnan(seconds) else seconds


# ----- watchers (in a child process) ---------------------------------------------------------------------
def _watch_one(
    url: str,
    token: str,
    ca: str,
    rv: str,
    mode: str,
    expected: Any,
    stop: Any,
    out: dict[str, Any],
) -> None:
    """One watch of all pods. mode "added": arrival of each ADDED event (repeats counted); mode "bound":
    first arrival of each pod with spec.nodeName set. Ends when `expected` (-1: not known yet) is reached,
    on `stop`, or on an error (recorded in out["errors"])."""
    arrivals: dict[int, float] = {}
    dups = 0
    other = 0
    errors: list[str] = []
    out.update(arrivals=arrivals, errors=errors)
    params = {"watch": "1", "resourceVersion": rv}
    headers = {"Authorization": f"Bearer {token}"}
    timeout = httpx.Timeout(10.0, read=STALL_SECONDS)
    clock = time.monotonic
    try:
        with (
            httpx.Client(base_url=url, verify=ssl.create_default_context(cafile=ca), timeout=timeout) as c,
            c.stream("GET", "/api/v1/pods", params=params, headers=headers) as r,
        ):
            if r.status_code != 200:
                errors.append(f"watch answered {r.status_code}: {r.read()[:300]!r}")
                return
            buf = b""
            last = clock()
            raw = r.iter_raw()
            while True:
                try:
                    chunk = next(raw)
                except StopIteration:
                    errors.append(f"watch stream closed by the server after {len(arrivals)} events")
                    return
                except httpx.ReadTimeout:
                    # httpx cannot resume a stream after a read timeout: the watch ends here
                    n = expected.value
                    if stop.is_set() or 0 <= n <= len(arrivals):
                        return
                    errors.append(
                        f"watch silent for {clock() - last:.0f} s after {len(arrivals)} events (stalled)"
                    )
                    return
                now = clock()
                last = now
                buf += chunk
                if b"\n" not in chunk:
                    continue
                lines = buf.split(b"\n")
                buf = lines.pop()
                for line in lines:
                    m = EVENT.match(line)
                    if m is None:
                        other += 1
                        continue
                    kind, idx = m.group(1), int(m.group(2))
                    if mode == "added":
                        if kind == b"ADDED":
                            if idx in arrivals:
                                dups += 1
                            else:
                                arrivals[idx] = now
                        else:
                            other += 1
                    elif idx not in arrivals and NODE_NAME in line:
                        arrivals[idx] = now
                n = expected.value
                if (0 <= n <= len(arrivals)) or stop.is_set():
                    return
    except httpx.HTTPError as e:
        errors.append(f"watch failed after {len(arrivals)} events: {type(e).__name__}: {e}")
    finally:
        out["dups"] = dups
        out["other"] = other
        out["closed"] = clock()


def _watcher_process(
    url: str,
    token: str,
    ca: str,
    rv: str,
    count: int,
    mode: str,
    expected: Any,
    stop: Any,
    started: Any,
    results: Any,
) -> None:
    outs: list[dict[str, Any]] = [{} for _ in range(count)]
    threads = [
        threading.Thread(
            target=_watch_one, args=(url, token, ca, rv, mode, expected, stop, outs[i]), daemon=True
        )
        for i in range(count)
    ]
    for t in threads:
        t.start()
    started.set()
    for t in threads:
        t.join()
    # arrivals as (index, time) arrays: compact to send back
    packed = []
    for o in outs:
        arr = o.get("arrivals", {})
        packed.append(
            {
                "idx": array("q", arr.keys()).tobytes(),
                "t": array("d", arr.values()).tobytes(),
                "dups": o.get("dups", 0),
                "other": o.get("other", 0),
                "errors": o.get("errors", []),
            }
        )
    results.put({"watchers": packed, "cpuSeconds": time.process_time()})


class Watchers:
    """`count` watches of pods from resourceVersion `rv`, in a child process."""

    def __init__(self, server: Served, rv: str, count: int, mode: str) -> None:
        ctx = mp.get_context("spawn")
        self.expected = ctx.Value("q", -1)
        self.stop = ctx.Event()
        self.started = ctx.Event()
        self.results = ctx.Queue()
        self.proc = ctx.Process(
            target=_watcher_process,
            args=(server.url, server.token, str(server.ca), rv, count, mode, *self._sync()),
            daemon=True,
        )
        self.proc.start()
        if not self.started.wait(30):
            raise RuntimeError("the watcher process did not start")

    def _sync(self) -> tuple[Any, ...]:
        return (self.expected, self.stop, self.started, self.results)

    def finish(self, expected: int, timeout: float) -> dict[str, Any]:
        """Tell the watchers how many events to wait for; their results (stopped after `timeout` s)."""
        self.expected.value = expected
        try:
            got = self.results.get(timeout=timeout)
        except Exception:
            self.stop.set()
            got = self.results.get(timeout=30)
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
        watchers = []
        for w in got["watchers"]:
            idx, t = array("q"), array("d")
            idx.frombytes(w["idx"])
            t.frombytes(w["t"])
            watchers.append({**w, "arrivals": dict(zip(idx, t, strict=True))})
        return {"watchers": watchers, "cpuSeconds": got["cpuSeconds"]}

    def kill(self) -> None:
        if self.proc.is_alive():
            self.stop.set()
            self.proc.join(5)
            if self.proc.is_alive():
                self.proc.kill()


# ----- writers -------------------------------------------------------------------------------------------
class LightClient:
    """One keep-alive HTTP/1.1 connection over TLS carrying the bearer token, one request at a time, bodies
    read by Content-Length (what `berth serve` sends for every non-watch answer). It spends a fraction of
    httpx's client CPU per request, so that on a 2-core machine the load generator leaves the server its
    core: the figure is the server's throughput, not the client's."""

    def __init__(self, server: Served, timeout: float = 30.0) -> None:
        url = urlsplit(server.url)
        self.address = (url.hostname or "127.0.0.1", url.port or 443)
        self.context = ssl.create_default_context(cafile=str(server.ca))
        self.timeout = timeout
        self.head = (
            f"Host: {url.netloc}\r\nAuthorization: Bearer {server.token}\r\n"
            "Content-Type: application/json\r\nAccept: application/json\r\nUser-Agent: berth-serve-load\r\n"
        )
        self.sock: ssl.SSLSocket | None = None
        self.buf = b""

    def _connect(self) -> ssl.SSLSocket:
        raw = socket.create_connection(self.address, timeout=self.timeout)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        return self.context.wrap_socket(raw, server_hostname=self.address[0])

    def close(self) -> None:
        """Close the connection (the next request opens a new one)."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _fill(self, sock: ssl.SSLSocket) -> None:
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buf += chunk

    def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        """(status, body) of one request; OSError or ValueError (after which the connection is closed)
        when the exchange fails."""
        try:
            sock = self.sock = self.sock or self._connect()
            head = f"{method} {path} HTTP/1.1\r\n{self.head}Content-Length: {len(body)}\r\n\r\n"
            sock.sendall(head.encode() + body)
            while (end := self.buf.find(b"\r\n\r\n")) < 0:
                self._fill(sock)
            lines = self.buf[:end].split(b"\r\n")
            status = int(lines[0].split(b" ", 2)[1])
            length = -1
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length < 0:
                raise ValueError(f"an answer without Content-Length: {lines[0]!r}")
            while len(self.buf) < end + 4 + length:
                self._fill(sock)
            answer = self.buf[end + 4 : end + 4 + length]
            self.buf = self.buf[end + 4 + length :]
            return status, answer
        except (OSError, ValueError):
            self.close()
            raise


_encode_json = msgspec.json.Encoder().encode


@dataclass
class Writes:
    send: dict[int, float]
    ack: dict[int, float]
    errors: list[str]


def write_all(
    server: Served,
    total: int,
    threads: int,
    make: Callable[[int], tuple[str, dict[str, Any]]],
    *,
    rate: float | None = None,
    deadline: float,
) -> Writes:
    """POST make(i) for i < total over `threads` keep-alive connections; paced at `rate`/s when given (write
    i is due at start + i/rate; a late write goes at once). Stops at `deadline` (monotonic)."""
    send: dict[int, float] = {}
    ack: dict[int, float] = {}
    errors: list[str] = []
    unsent: list[int] = []
    counter = itertools.count()
    clock = time.monotonic
    start = clock() + 0.05

    def run() -> None:
        c = LightClient(server)
        try:
            while True:
                i = next(counter)
                if i >= total:
                    return
                if rate is not None:
                    due = start + i / rate
                    wait = due - clock()
                    if wait > 0:
                        time.sleep(wait)
                if clock() > deadline:
                    unsent.append(i)
                    continue
                path, doc = make(i)
                body = _encode_json(doc)
                t = clock()
                try:
                    code, answer = c.request("POST", path, body)
                except (OSError, ValueError) as e:
                    errors.append(f"POST {path} #{i}: {type(e).__name__}: {e}")
                    continue
                a = clock()
                if code in (200, 201):
                    send[i] = t
                    ack[i] = a
                else:
                    errors.append(f"POST {path} #{i}: {code} {answer[:300].decode(errors='replace')}")
        finally:
            c.close()

    pool = [threading.Thread(target=run) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if unsent:
        errors.append(f"{len(unsent)} writes not sent: time limit reached (from #{min(unsent)})")
    return Writes(send, ack, errors)


def list_rv(server: Served, path: str) -> str:
    with client(server) as c:
        r = c.get(path, params={"limit": "1"})
        r.raise_for_status()
        return str(r.json()["metadata"]["resourceVersion"])


def pod_body(i: int, namespace: str) -> tuple[str, dict[str, Any]]:
    return f"/api/v1/namespaces/{namespace}/pods", make_pod(f"p-{i}", namespace)


# ----- 1. watch fan-out ----------------------------------------------------------------------------------
def watch_fanout(watchers: int, rate: float, seconds: float, writer_threads: int) -> dict[str, Any]:
    total = int(rate * seconds)
    with serving("--api-only") as server:
        rv = list_rv(server, "/api/v1/pods")
        w = Watchers(server, rv, watchers, "added")
        try:
            time.sleep(0.5)  # let every watch connect before the first write
            cpu0, t0 = server.cpu_seconds(), time.monotonic()
            writes = write_all(
                server,
                total,
                writer_threads,
                lambda i: pod_body(i, "default"),
                rate=rate,
                deadline=t0 + seconds + 10,
            )
            write_end = time.monotonic()
            got = w.finish(len(writes.ack), timeout=60)
            cpu = server.cpu_seconds() - cpu0
            wall = time.monotonic() - t0
            rss = server.rss_mib()
        finally:
            w.kill()
        log = server.stderr_tail()
    acked = writes.ack
    lat = [acked[i] - writes.send[i] for i in acked]
    errors = list(writes.errors)
    delays: list[float] = []
    from_send: list[float] = []
    missing = dups = 0
    for n, wr in enumerate(got["watchers"]):
        errors += [f"watcher {n}: {e}" for e in wr["errors"]]
        arr = wr["arrivals"]
        miss = [i for i in acked if i not in arr]
        unexpected = [i for i in arr if i not in acked]
        missing += len(miss)
        dups += wr["dups"]
        if miss:
            errors.append(f"watcher {n}: {len(miss)} ADDED events missing (e.g. p-{miss[0]})")
        if unexpected:
            errors.append(f"watcher {n}: {len(unexpected)} ADDED events for unacknowledged pods")
        if wr["dups"]:
            errors.append(f"watcher {n}: {wr['dups']} duplicate ADDED events")
        for i, t in arr.items():
            if i in acked:
                delays.append(t - acked[i])
                from_send.append(t - writes.send[i])
    first = min(writes.send.values(), default=t0)
    last = max(acked.values(), default=t0)
    return {
        "watchers": watchers,
        "targetWritesPerSecond": rate,
        "seconds": seconds,
        "writerThreads": writer_threads,
        "writesAttempted": total,
        "writesAcknowledged": len(acked),
        "achievedWritesPerSecond": round(len(acked) / (last - first), 1) if last > first else 0.0,
        "writeSeconds": round(write_end - t0, 2),
        "writeLatencyMillis": {
            "p50": ms(pct(lat, 0.5)),
            "p99": ms(pct(lat, 0.99)),
            "max": ms(max(lat, default=math.nan)),
        },
        "watchDeliveryDelayMillis": {
            "p50": ms(pct(delays, 0.5)),
            "p99": ms(pct(delays, 0.99)),
            "max": ms(max(delays, default=math.nan)),
        },
        "watchDelayFromSendMillis": {"p50": ms(pct(from_send, 0.5)), "p99": ms(pct(from_send, 0.99))},
        "eventsDelivered": len(delays),
        "eventsExpected": len(acked) * watchers,
        "missingEvents": missing,
        "duplicateEvents": dups,
        "errorCount": len(errors),
        "errors": errors[:20],
        "serverCpuSeconds": round(cpu, 2),
        "serverCpuUtilisation": round(cpu / wall, 2),
        "serverPeakRSSMiB": rss,
        "watcherProcessCpuSeconds": round(got["cpuSeconds"], 2),
        "wallSeconds": round(wall, 2),
        **({"serverStderrTail": log} if errors and log else {}),
    }


# ----- 2. scheduling through the API ---------------------------------------------------------------------
def scheduling(nodes: int, pods: int, threads: int, bind_timeout: float) -> dict[str, Any]:
    with serving("--kubelet", "none") as server:
        t0 = time.monotonic()
        made = write_all(
            server,
            nodes,
            threads,
            lambda i: ("/api/v1/nodes", make_node(f"node-{i}")),
            deadline=t0 + 600,
        )
        node_seconds = time.monotonic() - t0
        rv = list_rv(server, "/api/v1/pods")
        w = Watchers(server, rv, 1, "bound")
        try:
            cpu0 = server.cpu_seconds()
            client_cpu0 = time.process_time()
            start = time.monotonic()
            writes = write_all(
                server, pods, threads, lambda i: pod_body(i, "sched-test"), deadline=start + 600
            )
            client_cpu = time.process_time() - client_cpu0
            created = time.monotonic()
            got = w.finish(len(writes.ack), timeout=bind_timeout)
            cpu = server.cpu_seconds() - cpu0
            wall = time.monotonic() - start
            rss = server.rss_mib()
            with client(server) as c:
                r = c.get("/api/v1/namespaces/sched-test/pods", params={"fieldSelector": "spec.nodeName="})
                unbound_listed = len(r.json().get("items", [])) if r.status_code == 200 else -1
        finally:
            w.kill()
        log = server.stderr_tail()
    errors = [f"node {e}" for e in made.errors] + list(writes.errors)
    wr = got["watchers"][0]
    errors += [f"watcher: {e}" for e in wr["errors"]]
    bound = {i: t for i, t in wr["arrivals"].items() if i in writes.ack}
    if len(bound) < len(writes.ack):
        errors.append(f"{len(writes.ack) - len(bound)} acknowledged pods not seen bound")
    first = min(writes.send.values(), default=start)
    last_create = max(writes.ack.values(), default=start)
    last_bound = max(bound.values(), default=start)
    span = last_bound - first
    lat = [writes.ack[i] - writes.send[i] for i in writes.ack]
    to_bind = [bound[i] - writes.ack[i] for i in bound]
    return {
        "nodes": nodes,
        "pods": pods,
        "createThreads": threads,
        "nodesCreated": len(made.ack),
        "nodeCreateSeconds": round(node_seconds, 2),
        "nodeCreatesPerSecond": round(len(made.ack) / node_seconds, 1),
        "podsCreated": len(writes.ack),
        "podCreateSeconds": round(last_create - first, 2),
        "podCreatesPerSecond": round(len(writes.ack) / (last_create - first), 1)
        if last_create > first
        else 0.0,
        "podCreateLatencyMillis": {"p50": ms(pct(lat, 0.5)), "p99": ms(pct(lat, 0.99))},
        "podsBound": len(bound),
        "firstCreateToLastBindingSeconds": round(span, 2),
        "podsBoundPerSecond": round(len(bound) / span, 1) if span > 0 else 0.0,
        "lastCreateToLastBindingSeconds": round(last_bound - last_create, 2),
        "createToBoundMillis": {"p50": ms(pct(to_bind, 0.5)), "p99": ms(pct(to_bind, 0.99))},
        "unboundPodsListedAtEnd": unbound_listed,
        "targetPodsPerSecond": 1000,
        "kubeV130ReferencePodsPerSecond": "320-340",
        "errorCount": len(errors),
        "errors": errors[:20],
        "serverCpuSeconds": round(cpu, 2),
        "serverCpuMillisPerPod": round(1000 * cpu / pods, 3),
        "serverCpuUtilisation": round(cpu / wall, 2) if wall > 0 else 0.0,
        "serverPeakRSSMiB": rss,
        "loadClientCpuSeconds": round(client_cpu, 2),
        "loadClientCpuMillisPerPod": round(1000 * client_cpu / pods, 3),
        "watcherProcessCpuSeconds": round(got["cpuSeconds"], 2),
        "podCreatePhaseWallSeconds": round(created - start, 2),
        **({"serverStderrTail": log} if errors and log else {}),
    }


def summary(figures: dict[str, Any]) -> None:
    """A short table of the headline figures."""
    rows: list[tuple[str, Any]] = []
    fan = figures.get("watchFanout")
    if fan:
        rows += [
            (
                "fan-out: watchers x target writes/s x s",
                f"{fan['watchers']} x {fan['targetWritesPerSecond']:g} x {fan['seconds']:g}",
            ),
            ("fan-out: achieved writes/s", fan["achievedWritesPerSecond"]),
            (
                "fan-out: write latency p50 / p99 ms",
                f"{fan['writeLatencyMillis']['p50']} / {fan['writeLatencyMillis']['p99']}",
            ),
            (
                "fan-out: watch delay p50 / p99 ms",
                f"{fan['watchDeliveryDelayMillis']['p50']} / {fan['watchDeliveryDelayMillis']['p99']}",
            ),
            ("fan-out: events delivered / expected", f"{fan['eventsDelivered']} / {fan['eventsExpected']}"),
            ("fan-out: errors", fan["errorCount"]),
            ("fan-out: server CPU utilisation", fan["serverCpuUtilisation"]),
        ]
    sched = figures.get("schedulingThroughAPI")
    if sched:
        rows += [
            ("scheduling: nodes / pods", f"{sched['nodes']} / {sched['pods']}"),
            ("scheduling: pod creates/s", sched["podCreatesPerSecond"]),
            ("scheduling: pods bound/s (target >= 1000)", sched["podsBoundPerSecond"]),
            ("scheduling: errors", sched["errorCount"]),
        ]
    print()
    for k, v in rows:
        print(f"{k:42s} {v}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="10 watchers for 5 s, 500 nodes, 1 000 pods")
    ap.add_argument("--watchers", type=int, default=50)
    ap.add_argument("--rate", type=float, default=500.0, help="target pod writes/s of the fan-out writer")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--writer-threads", type=int, default=4)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--create-threads", type=int, default=4)
    ap.add_argument("--bind-timeout", type=float, default=300.0, help="max seconds to wait for bindings")
    ap.add_argument("--skip-fanout", action="store_true")
    ap.add_argument("--skip-scheduling", action="store_true")
    args = parse_args(ap)
    if args.quick:
        args.watchers, args.seconds, args.nodes, args.pods = 10, 5.0, 500, 1000
    figures: dict[str, Any] = {
        "machine": {
            "cpuCount": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "quick": args.quick,
    }
    if not args.skip_fanout:
        figures["watchFanout"] = watch_fanout(args.watchers, args.rate, args.seconds, args.writer_threads)
    if not args.skip_scheduling:
        figures["schedulingThroughAPI"] = scheduling(
            args.nodes, args.pods, args.create_threads, args.bind_timeout
        )
    figures["benchmarkPeakRSSMiB"] = peak_rss_mib()
    publish("serve_load", figures)
    summary(figures)


if __name__ == "__main__":
    main()
