"""Where the runs of ``berth compare`` go: this process (``--jobs 1``), worker processes on this machine
(``concurrent.futures.ProcessPoolExecutor``, ``--jobs N``, default the CPU count), or an existing
dask.distributed cluster (``--executor dask://HOST:PORT``) when one machine is not enough.

dask.distributed is the distributed engine: pure Python, installed with pip (``pip install 'berth[dask]'``),
a ``LocalCluster`` for tests, and the futures API of ``concurrent.futures``. Its workers need Berth installed
and, for trace workloads, the trace folder at the same path (scenario workloads travel with the runs). Start
them with one thread each (``dask worker HOST:PORT --nthreads 1 --nworkers N``): a worker runs one simulation
at a time anyway (they are pure Python).

A run is a `RunSpec` and its result depends on nothing else, so every executor gives the same figures (wall
seconds aside), in the order of the specs.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from berth.sim.compare.outcome import Outcome, run_one
from berth.sim.compare.runs import RunSpec
from berth.sim.compare.workload import CompareError

LOCAL = "local"
DASK_SCHEME = "dask://"
CONNECT_TIMEOUT = "5s"

_one_at_a_time = threading.Lock()


@dataclass(frozen=True, slots=True)
class ExecutorSpec:
    """``--executor`` and ``--jobs``: ``address`` is a dask scheduler's (None: this machine)."""

    jobs: int
    address: str | None = None


def parse_executor(executor: str, jobs: int | None) -> ExecutorSpec:
    """The executor of ``--executor`` (``local`` or ``dask://HOST:PORT``) and ``--jobs`` (≥ 1; default the CPU
    count); CompareError naming the bad value."""
    if jobs is not None and jobs < 1:
        raise CompareError(f"--jobs: must be at least 1, not {jobs}")
    n = jobs if jobs is not None else (os.cpu_count() or 1)
    if executor == LOCAL:
        return ExecutorSpec(n)
    if executor.startswith(DASK_SCHEME):
        hostport = executor[len(DASK_SCHEME) :]
        host, _, port = hostport.rpartition(":")
        if host and port.isdigit() and "/" not in hostport:
            return ExecutorSpec(n, f"tcp://{hostport}")
    raise CompareError(f'--executor: expected local or dask://HOST:PORT, not "{executor}"')


@contextmanager
def connected(spec: ExecutorSpec) -> Iterator[Any]:
    """The dask Client of ``spec`` (None for this machine), connected now, closed on leaving; CompareError when
    dask is not installed or the scheduler does not answer."""
    if spec.address is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise CompareError(
            f"--executor dask://{spec.address[6:]}: dask.distributed is not installed (pip install 'berth[dask]')"
        ) from None
    try:
        client = Client(spec.address, timeout=CONNECT_TIMEOUT, set_as_default=False)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as e:
        msg = " ".join(str(e).split()) or type(e).__name__
        raise CompareError(
            f"--executor dask://{spec.address[6:]}: cannot reach the dask scheduler: {msg}"
        ) from None
    try:
        yield client
    finally:
        client.close()  # type: ignore[no-untyped-call]


def run_all(
    specs: Sequence[RunSpec],
    jobs: int = 1,
    client: Any = None,
    on_done: Callable[[], None] | None = None,
) -> list[Outcome]:
    """The outcomes of ``specs``, in their order: on the dask ``client`` when given, else in ``jobs`` worker
    processes (in this process for one job or one run). ``on_done`` is told of each finished run."""
    if client is not None:
        return _dask(specs, client, on_done)
    if jobs <= 1 or len(specs) <= 1:
        out = []
        for s in specs:
            out.append(run_one(s))
            if on_done is not None:
                on_done()
        return out
    with ProcessPoolExecutor(max_workers=min(jobs, len(specs))) as pool:
        futures = [pool.submit(run_one, s) for s in specs]
        if on_done is not None:
            for f in futures:
                f.add_done_callback(lambda _: on_done())
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for f in done:
            if f.exception() is not None:
                for other in futures:
                    other.cancel()
                raise f.exception()  # type: ignore[misc]
        return [f.result() for f in futures]


def _run_serialised(spec: RunSpec) -> Outcome:
    """One run on a dask worker: one at a time per worker process (threads would only share the GIL)."""
    with _one_at_a_time:
        return run_one(spec)


def _dask(specs: Sequence[RunSpec], client: Any, on_done: Callable[[], None] | None) -> list[Outcome]:
    from distributed import as_completed

    futures = client.map(_run_serialised, list(specs), pure=False)
    try:
        for f in as_completed(futures, loop=client.loop):  # type: ignore[no-untyped-call]
            f.result()  # raises a run's error here
            if on_done is not None:
                on_done()
        return list(client.gather(futures))
    finally:
        client.cancel(futures)


__all__ = ["LOCAL", "ExecutorSpec", "connected", "parse_executor", "run_all"]
