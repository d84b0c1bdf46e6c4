"""Bindings sent concurrently, off the scheduling thread (kube-scheduler's asynchronous binding cycle).

The scheduler assumes a pod on its node in its cache, then the binding is only queued here and the next pod's
scheduling cycle starts at once; `workers` threads send the ``pods/binding`` requests (within the client's QPS
budget). Each finished binding becomes a `BindOutcome`, handed to `done` (the mirror's queue, drained on the
scheduling thread): a success needs nothing more (the watch confirms the assumed pod), a failure makes the
scheduler forget the pod and queue it again.

A binding the server applied but whose answer was lost is recognised, never repeated as a new decision: after a
``409 Conflict`` or a failed attempt the pod is read back, and a pod already on the chosen node is a success.
Transient failures (the server unreachable, ``429``, ``5xx``) are retried `RETRIES` times with a backoff.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from berth.api.errors import InternalError, StatusError, TooManyRequests
from berth.remote.client import KubeClient, ServerUnreachable, ServiceUnavailable

__all__ = ["RETRIES", "WORKERS", "AsyncBinder", "BindOutcome", "BindRequest"]

log = logging.getLogger(__name__)

WORKERS = 16
"""Bindings in flight at most."""
RETRIES = 3
"""Further attempts of a binding that failed for a transient reason."""
RETRY_BACKOFF = 0.5
"""Seconds before the first retry, doubling after each."""


@dataclass(frozen=True, slots=True)
class BindRequest:
    """One binding: the pod (namespace, name, uid), the node, and the Binding's annotations."""

    namespace: str
    name: str
    node: str
    uid: str | None = None
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BindOutcome:
    """How a binding ended: `error` None on success."""

    request: BindRequest
    error: StatusError | None
    attempts: int


def _transient(e: Exception) -> bool:
    return isinstance(e, ServerUnreachable | TooManyRequests) or (
        isinstance(e, StatusError) and e.code >= 500
    )


class AsyncBinder:
    """A pool of `workers` threads posting Bindings through `client`; each outcome goes to `done`."""

    def __init__(
        self,
        client: KubeClient,
        done: Callable[[BindOutcome], None],
        *,
        workers: int = WORKERS,
        retries: int = RETRIES,
        backoff: float = RETRY_BACKOFF,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Bind through `client`; `done` is called from a worker thread."""
        self.client = client
        self.done = done
        self.retries = retries
        self.backoff = backoff
        self._sleep = sleep
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="binder")
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self.in_flight = 0
        self.succeeded = 0
        self.failed = 0

    def submit(self, request: BindRequest) -> None:
        """Queue a binding."""
        with self._lock:
            self.in_flight += 1
        self._pool.submit(self._run, request)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no binding is in flight (at most `timeout` seconds); whether none is."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self.in_flight:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Let the bindings in flight finish (at most `timeout` seconds), then stop the workers."""
        self.wait_idle(timeout)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _run(self, request: BindRequest) -> None:
        try:
            outcome = self._bind(request)
        except Exception as e:  # a bug here must not leave the pod assumed forever: report it as a failure
            log.exception("binding %s/%s failed unexpectedly", request.namespace, request.name)
            outcome = BindOutcome(request, InternalError(f"binding failed: {e}"), 0)
        with self._lock:
            if outcome.error is None:
                self.succeeded += 1
            else:
                self.failed += 1
        try:
            self.done(outcome)
        finally:
            with self._idle:
                self.in_flight -= 1
                self._idle.notify_all()

    def _bind(self, request: BindRequest) -> BindOutcome:
        path = f"/api/v1/namespaces/{request.namespace}/pods/{request.name}/binding"
        meta: dict[str, Any] = {"name": request.name, "namespace": request.namespace}
        if request.uid:
            meta["uid"] = request.uid
        if request.annotations:
            meta["annotations"] = dict(request.annotations)
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": meta,
            "target": {"apiVersion": "v1", "kind": "Node", "name": request.node},
        }
        attempts = 0
        wait = self.backoff
        while True:
            attempts += 1
            try:
                self.client.request("POST", path, body=body)
                return BindOutcome(request, None, attempts)
            except (StatusError, ServerUnreachable) as e:
                error = e
            # applied already (a lost answer, or a retry after one)? then it is a success, not a second binding
            placed = self._placed(request)
            if placed == request.node:
                return BindOutcome(request, None, attempts)
            if placed is None or placed or not _transient(error) or attempts > self.retries:
                return BindOutcome(request, _as_status(error), attempts)
            self._sleep(wait)
            wait *= 2

    def _placed(self, request: BindRequest) -> str | None:
        """The pod's node now ("" when unbound; None when it is gone, is another pod, or cannot be read)."""
        path = f"/api/v1/namespaces/{request.namespace}/pods/{request.name}"
        try:
            pod = self.client.request("GET", path)
        except (StatusError, ServerUnreachable):
            return ""  # unknown: a transient failure is retried, a refusal reported
        meta = pod.get("metadata") or {}
        if request.uid and meta.get("uid") != request.uid:
            return None
        return str((pod.get("spec") or {}).get("nodeName") or "")


def _as_status(error: Exception) -> StatusError:
    if isinstance(error, StatusError):
        return error
    return ServiceUnavailable(f"the server is currently unable to handle the request ({error})")
