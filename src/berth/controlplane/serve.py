"""`berth serve`: the Kubernetes API over a durable embedded store, with the control plane on real time.

One asyncio event loop runs everything: uvicorn's HTTP(S) server, whose handlers call the store directly,
and the core task, which hands store events to the components and runs the clock's due timers. A handler
runs to completion between two slices of the core, so nothing needs a lock. The core works in slices of
`SLICE_CYCLES` scheduling cycles so that a long queue never holds requests back for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import uvicorn

from berth.clock import RealClock
from berth.controlplane.metrics import metrics_registry, render_metrics
from berth.controlplane.plane import DEFAULT_DESCHEDULING_INTERVAL, ControlPlane, install_admission
from berth.descheduler.policy import Policy
from berth.scheduler.binding import OffThread
from berth.scheduler.framework.config import SchedulerConfig
from berth.scheduler.framework.status import Status
from berth.scheduler.trace import CycleTrace, Tracer
from berth.server.app import ApiServer
from berth.server.credentials import ServerCredentials
from berth.store import MemoryStore

__all__ = ["IDLE_TIMEOUT_SECONDS", "SLICE_CYCLES", "ServeOptions", "serve"]

IDLE_TIMEOUT_SECONDS = 90
"""How long an idle HTTP keep-alive connection stays open (kube-apiserver's IdleTimeout)."""
SLICE_CYCLES = 200
"""Scheduling cycles the core runs before it lets waiting requests in."""


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """How `berth serve` runs: where its state lives, where it listens and which components it runs."""

    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 6443
    kubelet: bool = True
    api_only: bool = False
    config: SchedulerConfig | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    descheduler: Policy | None = None
    descheduling_interval: float = DEFAULT_DESCHEDULING_INTERVAL


class _Server(uvicorn.Server):
    """uvicorn's server, telling the API to end its watch streams as soon as shutdown begins."""

    def __init__(self, config: uvicorn.Config, api: ApiServer) -> None:
        super().__init__(config)
        self.api = api

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.api.stopping.set()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """SIGINT/SIGTERM end the serving loop; unlike uvicorn's own handling the signal is not raised again
        afterwards, so `serve` closes the control plane and the store before the process exits (status 0)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


async def _core(
    plane: ControlPlane,
    clock: RealClock,
    wake: asyncio.Event,
    stopping: asyncio.Event,
    flush: Callable[[], None],
) -> None:
    """Run the control plane: events as they come, timers when due, in slices between requests; the writes
    of a slice are committed together (`flush`) before the loop lets anything else run."""
    while not stopping.is_set():
        wake.clear()
        if plane.work(SLICE_CYCLES):
            flush()
            await asyncio.sleep(0)
            continue
        due = clock.peek()
        if due is not None and due <= clock.now():
            clock.step()
            continue
        flush()
        timeout = None if due is None else due - clock.now()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), timeout)


def _off_thread(loop: asyncio.AbstractEventLoop, wake: asyncio.Event) -> OffThread:
    """Runs a blocking call on the loop's default executor and its callback back on the loop (then wakes the
    core); an exception of the call is raised there, on the loop, and reported by it."""

    def run(call: Callable[[], Status | None], done: Callable[[Status | None], None]) -> None:
        def answered(future: asyncio.Future[Status | None]) -> None:
            done(future.result())
            wake.set()

        loop.run_in_executor(None, call).add_done_callback(answered)

    return run


class _LastTraces(Tracer):
    """The dashboard's per-plugin view of the scheduler: the pods the dashboard asked to explain (the last
    `WANTED` of them) have their scheduling attempts traced node by node and plugin by plugin, as for
    ``berth explain``, and the last attempt of each is kept. A pod asked about without a recorded attempt is
    activated (kube's Activate: retried now, backoff or not) so that its next attempt comes at once."""

    WANTED = 200

    def __init__(self, plane: ControlPlane, wake: asyncio.Event) -> None:
        super().__init__(lambda pod: pod.key in self.wanted)
        self.plane = plane
        self.wake = wake
        self.wanted: dict[str, CycleTrace | None] = {}

    def record(self, trace: CycleTrace) -> None:
        if trace.pod in self.wanted:
            self.wanted[trace.pod] = trace

    def explain(self, pod_key: str) -> dict[str, Any] | None:
        """The pod's last traced attempt as JSON-ready data; None (and the pod activated) when there is none."""
        trace = self.wanted.pop(pod_key, None)
        self.wanted[pod_key] = trace  # the most recently asked about last
        while len(self.wanted) > self.WANTED:
            del self.wanted[next(iter(self.wanted))]
        if trace is not None:
            return trace.to_dict()
        queue = self.plane.scheduler.queue
        uids = [qp.pod.uid for qp in queue.pending() if qp.pod.key == pod_key]
        if uids:
            queue.activate(uids)
            self.wake.set()
        return None


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named explicitly: asyncio turns on TCP_NODELAY only for sockets that say they are TCP, and
    # without it every response waited ~40 ms for the client's delayed ACK (Nagle)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(512)
    sock.setblocking(False)
    return sock


async def serve(options: ServeOptions, *, ready: Any = None) -> None:
    """Serve until SIGINT/SIGTERM: bind, make the credentials and kubeconfig, recover the store, run.

    `ready`, when given, is called with the ServerCredentials once the server accepts connections.
    """
    sock = _listen(options.host, options.port)
    port = sock.getsockname()[1]
    creds = ServerCredentials.ensure(options.data_dir, options.host, port, options.tls_cert, options.tls_key)
    clock = RealClock()
    # group commit: the writes of one loop turn share a transaction, committed before any answer, watch
    # event or wait (ApiServer and _core flush), so acknowledged still means durable
    store = MemoryStore.open(options.data_dir, clock=clock, epoch=datetime.now(UTC), group_commit=True)
    try:
        install_admission(store)
        plane: ControlPlane | None = None
        if not options.api_only:
            plane = ControlPlane(store, clock, config=options.config, kubelet=options.kubelet)
            plane.warn_unserved()
            plane.replay()
            if options.descheduler is not None:
                plane.enable_descheduler(options.descheduler, options.descheduling_interval)
        registry = metrics_registry(plane) if plane is not None else None
        wake = asyncio.Event()
        traces: _LastTraces | None = None
        if plane is not None:  # the dashboard's per-plugin view of pending pods
            traces = plane.scheduler.tracer = _LastTraces(plane, wake)
        api = ApiServer(
            store,
            token_ok=creds.token_matches,
            metrics=(lambda: render_metrics(registry)) if registry is not None else None,
            flush=store.flush,
            explain=traces.explain if traces is not None else None,
        )
        store.subscribe(lambda _ev: wake.set())
        if plane is not None:  # an extender binding through this server is answered while it binds
            plane.scheduler.binding.off_thread = _off_thread(asyncio.get_running_loop(), wake)
        config = uvicorn.Config(
            api.app,
            ssl_certfile=str(creds.cert_file),
            ssl_keyfile=str(creds.key_file),
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=3,
            # idle keep-alive connections stay open as long as kube-apiserver keeps them (90 s): a client such
            # as kubectl drain retrying a refused eviction after 5 s reuses its connection, and a POST on a
            # connection the server is just closing fails with EOF (Go retries only idempotent requests)
            timeout_keep_alive=IDLE_TIMEOUT_SECONDS,
            proxy_headers=False,  # no proxy in front: X-Forwarded-* is not trusted, and not parsed per request
        )
        server = _Server(config, api)
        core = (
            asyncio.create_task(_core(plane, clock, wake, api.stopping, store.flush))
            if plane is not None
            else None
        )
        if ready is not None:
            asyncio.get_running_loop().call_soon(ready, creds)
        try:
            await server.serve(sockets=[sock])
        finally:
            api.stopping.set()
            wake.set()
            if core is not None:
                core.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await core
            if plane is not None:
                plane.close()
    finally:
        store.close()
