"""Node drain, cordon and uncordon, as ``kubectl drain`` does them, against any `Store` on any `Clock`.

One drain serves every caller: a scenario's ``drain:`` step (the embedded store on virtual time), ``berth
drain`` against an API server (the remote store on real time) and, later, the rescheduler. `drain` cordons
the node, picks the pods to evict with kubectl's filters (mirror pods and DaemonSet-managed pods are skipped,
finished pods are always removable, pods that declare no controller need ``force``), evicts them through the
eviction API (`Store.evict`), retries every pod refused with 429 TooManyRequests every 5 seconds, checks
every second whether each evicted pod is gone (kubectl's ``waitForDelete`` poll), and finishes once every
evicted pod is gone, or fails when ``timeout`` passes first. Nothing blocks: retries, polls and the deadline
are clock timers. Each kubectl line goes to ``on_log`` as it happens; the outcome goes to ``on_done``.

``prefer_avoid`` asks each evicted pod's node to avoid the pod's controller afterwards (seed 001's
PreferAvoidPods, written by `Store.evict`); kubectl never asks it, so it is off unless the caller sets it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from berth.api.contracts import Store
from berth.api.duration import go_duration
from berth.api.errors import NotFound, StatusError, TooManyRequests
from berth.clock import Clock, Timer

__all__ = [
    "MIRROR_POD_ANNOTATION",
    "POLL_SECONDS",
    "RETRY_SECONDS",
    "Drain",
    "DrainError",
    "DrainResult",
    "cordon",
    "drain",
    "pods_to_evict",
    "set_unschedulable",
    "uncordon",
]

NODE_KEY = ("", "Node")
POD_KEY = ("", "Pod")
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
RETRY_SECONDS = 5.0
"""kubectl drain retries an eviction refused with 429 after this many seconds."""
POLL_SECONDS = 1.0
"""kubectl polls an evicted pod every second until it is gone."""
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
DRAIN_PRIORITY = 8


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


def set_unschedulable(store: Store, node: str, unschedulable: bool) -> tuple[dict[str, Any], str]:
    """Cordon (True) or uncordon (False) `node`: the node after the change and kubectl's line for it
    (``node/x cordoned``, ``node/x already cordoned``, ...). Raises NotFound for an unknown node."""
    verb = "cordoned" if unschedulable else "uncordoned"
    current = store.get(NODE_KEY, "", node)
    if bool((current.get("spec") or {}).get("unschedulable")) == unschedulable:
        return current, f"node/{node} already {verb}"
    # kubectl uncordon drops the field rather than writing false
    changed = store.patch(NODE_KEY, "", node, {"spec": {"unschedulable": True if unschedulable else None}})
    return changed, f"node/{node} {verb}"


def cordon(store: Store, node: str) -> dict[str, Any]:
    """Mark `node` unschedulable (``kubectl cordon``); returns the node. Raises NotFound."""
    return set_unschedulable(store, node, True)[0]


def uncordon(store: Store, node: str) -> dict[str, Any]:
    """Mark `node` schedulable again (``kubectl uncordon``); returns the node. Raises NotFound."""
    return set_unschedulable(store, node, False)[0]


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


@dataclass(frozen=True, slots=True)
class DrainOptions:
    """How a drain runs: overall ``timeout`` (None/0: none), the grace-period override, retry and poll
    periods, whether evicted pods' nodes should avoid their controllers, and where log lines go."""

    timeout: float | None = None
    grace_period_seconds: int | None = None
    retry_seconds: float = RETRY_SECONDS
    poll_seconds: float = POLL_SECONDS
    prefer_avoid: bool = False
    on_log: Callable[[str], None] | None = None


class Drain:
    """A drain in progress (made by `drain`): `done`, `result`, and `cancel()`."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        node: str,
        options: DrainOptions,
        on_done: Callable[[DrainResult], None] | None,
    ) -> None:
        """Prepare a drain of `node` (nothing happens before `start`)."""
        self.store = store
        self.clock = clock
        self.node = node
        self.options = options
        self.on_done = on_done
        self.result: DrainResult | None = None
        self._started = clock.now()
        self._log: list[str] = []
        self._evicted: list[str] = []
        self._errors: list[str] = []
        self._timers: dict[tuple[str, str], Timer] = {}  # pod -> its next retry or poll
        self._deadline: Timer | None = None

    @property
    def done(self) -> bool:
        """Whether the drain has finished (successfully or not)."""
        return self.result is not None

    def start(self, force: bool) -> None:
        """Cordon, choose the pods and evict them; raises DrainError (node left cordoned) or NotFound."""
        self._say(set_unschedulable(self.store, self.node, True)[1])
        pods = self.store.list(POD_KEY, field_selector=f"spec.nodeName={self.node}")[0]
        chosen, errors, warnings = pods_to_evict(pods, force=force)
        if errors:
            raise DrainError("; ".join(errors))
        for w in warnings:
            self._say(f"Warning: {w}")
        if self.options.timeout:
            self._deadline = self.clock.call_at(
                self._started + self.options.timeout, self._expire, DRAIN_PRIORITY
            )
        for pod in chosen:
            meta = pod["metadata"]
            self._attempt(meta.get("namespace") or "default", meta["name"], meta.get("uid") or "")
        self._maybe_finish()

    def cancel(self) -> None:
        """Stop retrying and waiting; the drain ends as failed with error "drain cancelled"."""
        self._finish("drain cancelled")

    # ----- internals --------------------------------------------------------------------------
    def _say(self, line: str) -> None:
        self._log.append(line)
        if self.options.on_log is not None:
            self.options.on_log(line)

    def _later(self, ns: str, name: str, delay: float, fn: Callable[[], None]) -> None:
        self._timers[(ns, name)] = self.clock.call_at(self.clock.now() + delay, fn, DRAIN_PRIORITY)

    def _gone(self, ns: str, name: str, uid: str) -> bool:
        try:
            current = self.store.get(POD_KEY, ns, name)
        except NotFound:
            return True
        return bool(current["metadata"].get("uid") != uid)

    def _attempt(self, ns: str, name: str, uid: str) -> None:
        self._timers.pop((ns, name), None)
        if self.done or self._gone(ns, name, uid):
            return
        opts = self.options
        try:
            self.store.evict(
                ns, name, grace_period_seconds=opts.grace_period_seconds, avoid=opts.prefer_avoid
            )
        except NotFound:
            return
        except TooManyRequests as e:
            self._say(
                f'error when evicting pods/"{name}" -n "{ns}" (will retry after '
                f"{go_duration(opts.retry_seconds)}): {e.message}"
            )
            self._later(ns, name, opts.retry_seconds, lambda: self._step(self._attempt, ns, name, uid))
            return
        except StatusError as e:
            self._errors.append(f'error when evicting pods/"{name}" -n "{ns}": {e.message}')
            return
        self._say(f"evicting pod {ns}/{name}")
        self._evicted.append(f"{ns}/{name}")
        self._poll(ns, name, uid)

    def _poll(self, ns: str, name: str, uid: str) -> None:
        self._timers.pop((ns, name), None)
        if self.done:
            return
        if self._gone(ns, name, uid):
            self._say(f"pod/{name} evicted")
            return
        self._later(ns, name, self.options.poll_seconds, lambda: self._step(self._poll, ns, name, uid))

    def _step(self, fn: Callable[[str, str, str], None], ns: str, name: str, uid: str) -> None:
        fn(ns, name, uid)
        self._maybe_finish()

    def _maybe_finish(self) -> None:
        if self.done or self._timers:
            return
        self._finish("\n".join(self._errors))

    def _expire(self) -> None:
        self._deadline = None
        if not self.done:
            self._finish(f"drain did not complete within {go_duration(self.options.timeout or 0)}")

    def _finish(self, error: str) -> None:
        if self.done:
            return
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if not error:
            self._say(f"node/{self.node} drained")
        self.result = DrainResult(
            self.node, not error, error, list(self._evicted), self._started, self.clock.now(), list(self._log)
        )
        if self.on_done is not None:
            self.on_done(self.result)


def drain(
    store: Store,
    clock: Clock,
    node: str,
    *,
    force: bool = False,
    timeout: float | None = None,
    grace_period_seconds: int | None = None,
    prefer_avoid: bool = False,
    on_log: Callable[[str], None] | None = None,
    on_done: Callable[[DrainResult], None] | None = None,
    retry_seconds: float = RETRY_SECONDS,
    poll_seconds: float = POLL_SECONDS,
) -> Drain:
    """Start draining `node` and return the running `Drain`; `on_done(result)` is called when it ends.

    ``timeout`` (seconds; None or 0: none) bounds the whole drain, ``grace_period_seconds`` overrides the
    pods' termination grace period (None: the pod's own), ``prefer_avoid`` asks the node to avoid each
    evicted pod's controller, ``on_log`` receives each kubectl line as it happens. Raises NotFound for an
    unknown node and DrainError when pods without a controller are found without ``force`` (kubectl's
    message; the node stays cordoned and ``on_done`` is not called). A node with nothing to evict finishes
    (and calls ``on_done``) at once.
    """
    options = DrainOptions(timeout, grace_period_seconds, retry_seconds, poll_seconds, prefer_avoid, on_log)
    op = Drain(store, clock, node, options, on_done)
    op.start(force)
    return op
