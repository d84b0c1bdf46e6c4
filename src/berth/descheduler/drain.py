"""Node drain, cordon and uncordon, as ``kubectl drain`` does them, driven by clock timers.

`drain` cordons the node (``spec.unschedulable: true``), picks the pods to evict with kubectl's filters
(mirror pods and DaemonSet-managed pods are skipped, finished pods are always removable, pods that declare no
controller need ``force``), evicts them through the eviction API (`berth.store.eviction.evict`), retries
every pod refused with 429 TooManyRequests every 5 seconds, and finishes once every evicted pod is gone from
the store, or fails when ``timeout`` passes first. Nothing blocks: retries and the deadline are timers, and
deletions are noticed through a store subscription. The outcome goes to ``on_done``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from berth.api.contracts import Store
from berth.api.errors import NotFound, StatusError, TooManyRequests
from berth.api.watch import WatchEvent
from berth.clock import Timer
from berth.store.eviction import NODE_KEY, POD_KEY, evict

__all__ = [
    "MIRROR_POD_ANNOTATION",
    "RETRY_SECONDS",
    "Drain",
    "DrainError",
    "DrainResult",
    "cordon",
    "drain",
    "go_duration",
    "pods_to_evict",
    "uncordon",
]

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
RETRY_SECONDS = 5.0
"""kubectl drain retries an eviction refused with 429 after this many seconds."""
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
DRAIN_PRIORITY = 8


class DrainClock(Protocol):
    """The clock operations a drain uses."""

    def now(self) -> float:
        """Seconds since the clock's epoch."""
        ...

    def call_at(self, when: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        """Run `fn` at time `when`."""
        ...


class DrainError(Exception):
    """A drain that cannot start (kubectl's error text, e.g. pods without a controller and no force)."""


@dataclass(slots=True)
class DrainResult:
    """The outcome of a drain: ``ok`` or the ``error`` text, the pods evicted, timings and kubectl-style log."""

    node: str
    ok: bool
    error: str
    evicted: list[str]
    started: float
    finished: float
    log: list[str] = field(default_factory=list)


def go_duration(seconds: float) -> str:
    """Seconds as Go's time.Duration prints them: ``5m0s``, ``1h0m0s``, ``1.5s``, ``0s``."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    sec_text = f"{int(secs)}" if secs == int(secs) else f"{secs:.9f}".rstrip("0")
    if hours:
        return f"{sign}{int(hours)}h{int(minutes)}m{sec_text}s"
    if minutes:
        return f"{sign}{int(minutes)}m{sec_text}s"
    return f"{sign}{sec_text}s"


def cordon(store: Store, node: str) -> dict[str, Any]:
    """Mark `node` unschedulable (``kubectl cordon``); returns the node. Raises NotFound."""
    current = store.get(NODE_KEY, "", node)
    if (current.get("spec") or {}).get("unschedulable"):
        return current
    return store.patch(NODE_KEY, "", node, {"spec": {"unschedulable": True}})


def uncordon(store: Store, node: str) -> dict[str, Any]:
    """Mark `node` schedulable again (``kubectl uncordon`` drops the field); returns the node."""
    current = store.get(NODE_KEY, "", node)
    if not (current.get("spec") or {}).get("unschedulable"):
        return current
    return store.patch(NODE_KEY, "", node, {"spec": {"unschedulable": None}})


def _pod_ref(pod: Mapping[str, Any]) -> str:
    meta = pod["metadata"]
    return f"{meta.get('namespace') or 'default'}/{meta['name']}"


def _controller(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in pod["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def pods_to_evict(
    pods: Sequence[Mapping[str, Any]], *, force: bool
) -> tuple[list[Mapping[str, Any]], list[str], list[str]]:
    """kubectl's GetPodsForDeletion: (pods to evict, errors, warnings) for the pods of a node.

    Filters in kubectl's order: DaemonSet-managed pods (unless finished) are skipped with a warning; mirror
    pods are skipped; finished pods are removable; pods without a controller are an error unless ``force``
    (then a warning). Messages list the pods as ``ns/name, ns/name``.
    """
    chosen: list[Mapping[str, Any]] = []
    daemonsets: list[str] = []
    unmanaged: list[str] = []
    for pod in pods:
        ref = _controller(pod)
        finished = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
        if ref is not None and ref.get("kind") == "DaemonSet" and not finished:
            daemonsets.append(_pod_ref(pod))
            continue
        if MIRROR_POD_ANNOTATION in (pod["metadata"].get("annotations") or {}):
            continue
        if ref is None and not finished:
            unmanaged.append(_pod_ref(pod))
            if not force:
                continue
        chosen.append(pod)
    errors: list[str] = []
    warnings: list[str] = []
    if unmanaged:
        if force:
            warnings.append(f"{UNMANAGED_WARNING}: {', '.join(unmanaged)}")
        else:
            errors.append(f"{UNMANAGED_FATAL}: {', '.join(unmanaged)}")
    if daemonsets:
        warnings.append(f"{DAEMONSET_WARNING}: {', '.join(daemonsets)}")
    return chosen, errors, warnings


class Drain:
    """A drain in progress (made by `drain`): `done`, `result`, and `cancel()`."""

    def __init__(
        self,
        store: Store,
        clock: DrainClock,
        node: str,
        *,
        timeout: float | None,
        grace_period_seconds: int | None,
        on_done: Callable[[DrainResult], None] | None,
        retry_seconds: float,
    ) -> None:
        """Prepare a drain of `node` (nothing happens before `start`)."""
        self.store = store
        self.clock = clock
        self.node = node
        self.timeout = timeout
        self.grace_period_seconds = grace_period_seconds
        self.on_done = on_done
        self.retry_seconds = retry_seconds
        self.result: DrainResult | None = None
        self._started = clock.now()
        self._log: list[str] = []
        self._evicted: list[str] = []
        self._errors: list[str] = []
        self._retrying: dict[tuple[str, str], Timer] = {}
        self._waiting: dict[tuple[str, str], str] = {}  # pod -> uid awaiting deletion
        self._deadline: Timer | None = None
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def done(self) -> bool:
        """Whether the drain has finished (successfully or not)."""
        return self.result is not None

    def start(self, force: bool) -> None:
        """Cordon, choose the pods and evict them; raises DrainError (node left cordoned) or NotFound."""
        cordon(self.store, self.node)
        self._log.append(f"node/{self.node} cordoned")
        pods = self.store.list(POD_KEY, field_selector=f"spec.nodeName={self.node}")[0]
        chosen, errors, warnings = pods_to_evict(pods, force=force)
        if errors:
            raise DrainError("; ".join(errors))
        self._log.extend(f"Warning: {w}" for w in warnings)
        self._unsubscribe = self.store.subscribe(self._on_event, POD_KEY)
        if self.timeout:
            self._deadline = self.clock.call_at(self._started + self.timeout, self._expire, DRAIN_PRIORITY)
        for pod in chosen:
            meta = pod["metadata"]
            self._attempt(meta.get("namespace") or "default", meta["name"], meta.get("uid") or "")
        self._maybe_finish()

    def cancel(self) -> None:
        """Stop retrying and waiting; the drain ends as failed with error "drain cancelled"."""
        self._finish("drain cancelled")

    # ----- internals --------------------------------------------------------------------------
    def _attempt(self, ns: str, name: str, uid: str) -> None:
        self._retrying.pop((ns, name), None)
        if self.done:
            return
        try:
            current = self.store.get(POD_KEY, ns, name)
        except NotFound:
            return
        if current["metadata"].get("uid") != uid:
            return
        try:
            evict(self.store, ns, name, grace_period_seconds=self.grace_period_seconds)
        except NotFound:
            return
        except TooManyRequests as e:
            self._log.append(
                f'error when evicting pods/"{name}" -n "{ns}" (will retry after '
                f"{go_duration(self.retry_seconds)}): {e.message}"
            )
            self._retrying[(ns, name)] = self.clock.call_at(
                self.clock.now() + self.retry_seconds, lambda: self._retry(ns, name, uid), DRAIN_PRIORITY
            )
            return
        except StatusError as e:
            self._errors.append(f'error when evicting pods/"{name}" -n "{ns}": {e.message}')
            return
        self._log.append(f"evicting pod {ns}/{name}")
        self._evicted.append(f"{ns}/{name}")
        try:
            after = self.store.get(POD_KEY, ns, name)
        except NotFound:
            self._log.append(f"pod/{name} evicted")
            return
        if after["metadata"].get("uid") != uid:
            self._log.append(f"pod/{name} evicted")
            return
        self._waiting[(ns, name)] = uid

    def _retry(self, ns: str, name: str, uid: str) -> None:
        self._attempt(ns, name, uid)
        self._maybe_finish()

    def _on_event(self, ev: WatchEvent) -> None:
        if ev.type != "DELETED" or not self._waiting:
            return
        meta = ev.object["metadata"]
        key = (meta.get("namespace") or "default", meta["name"])
        if self._waiting.get(key) == meta.get("uid"):
            del self._waiting[key]
            self._log.append(f"pod/{key[1]} evicted")
            self._maybe_finish()

    def _maybe_finish(self) -> None:
        if self.done or self._retrying or self._waiting:
            return
        self._finish("\n".join(self._errors))

    def _expire(self) -> None:
        self._deadline = None
        if not self.done:
            self._finish(f"drain did not complete within {go_duration(self.timeout or 0)}")

    def _finish(self, error: str) -> None:
        if self.done:
            return
        for timer in self._retrying.values():
            timer.cancel()
        self._retrying.clear()
        self._waiting.clear()
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if not error:
            self._log.append(f"node/{self.node} drained")
        self.result = DrainResult(
            self.node, not error, error, list(self._evicted), self._started, self.clock.now(), list(self._log)
        )
        if self.on_done is not None:
            self.on_done(self.result)


def drain(
    store: Store,
    clock: DrainClock,
    node: str,
    *,
    timeout: float | None = None,
    force: bool = False,
    grace_period_seconds: int | None = None,
    on_done: Callable[[DrainResult], None] | None = None,
    retry_seconds: float = RETRY_SECONDS,
) -> Drain:
    """Start draining `node` and return the running `Drain`; `on_done(result)` is called when it ends.

    ``timeout`` (seconds; None or 0: none) bounds the whole drain, ``grace_period_seconds`` overrides the
    pods' termination grace period (None: the pod's own). Raises NotFound for an unknown node and DrainError
    when pods without a controller are found without ``force`` (kubectl's message; the node stays cordoned
    and ``on_done`` is not called). A node with nothing to evict finishes (and calls ``on_done``) at once.
    """
    op = Drain(
        store,
        clock,
        node,
        timeout=timeout,
        grace_period_seconds=grace_period_seconds,
        on_done=on_done,
        retry_seconds=retry_seconds,
    )
    op.start(force)
    return op
