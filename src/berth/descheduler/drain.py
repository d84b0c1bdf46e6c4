"""Node drain, cordon and uncordon, as ``kubectl drain`` does them, against any `Store` on any `Clock`.

One drain serves every caller: a scenario's ``drain:`` step (the embedded store on virtual time), ``berth
drain`` against an API server (the remote store on real time) and, later, the rescheduler. `drain` cordons
the node, picks the pods to evict with kubectl's filters (`pods_to_evict`), evicts them through the eviction
API (`Store.evict`), retries every pod refused with 429 TooManyRequests every 5 seconds, checks every second
whether each evicted pod is gone (kubectl's ``waitForDelete`` poll), and finishes once every evicted pod is
gone, or fails when ``timeout`` passes first. Nothing blocks: retries, polls and the deadline are clock
timers. kubectl's lines go to ``on_log`` (its standard output) and ``on_error`` (its standard error) as they
happen; the outcome goes to ``on_done``.

Dry runs are kubectl's: ``client`` changes nothing and prints what would be evicted, ``server`` sends the
cordon and the evictions with ``dryRun=All`` (refusals and retries included) and waits for nothing.

A drain that fails reports kubectl's texts (`failure_lines`): the per-pod errors (``error when evicting
pods/"x" -n "ns": global timeout reached: 30s``), then the pods still on the node. `DrainResult.blocked` keeps
the Status causes of each pod's last refusal, which name the PodDisruptionBudget that held it.

``prefer_avoid`` asks each evicted pod's node to avoid the pod's controller afterwards (seed 001's
PreferAvoidPods, written by `Store.evict`); kubectl never asks it, so it is off unless the caller sets it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from berth.api.contracts import Store
from berth.api.duration import go_duration
from berth.api.errors import NotFound, StatusError, TooManyRequests
from berth.clock import Clock, Timer

__all__ = [
    "DRY_RUN_SUFFIX",
    "MIRROR_POD_ANNOTATION",
    "POLL_SECONDS",
    "RETRY_SECONDS",
    "Drain",
    "DrainError",
    "DrainOptions",
    "DrainResult",
    "DryRun",
    "aggregate",
    "cordon",
    "drain",
    "failure_lines",
    "pods_to_evict",
    "set_unschedulable",
    "uncordon",
]

NODE_KEY = ("", "Node")
POD_KEY = ("", "Pod")
DAEMONSET_KEY = ("apps", "DaemonSet")
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
RETRY_SECONDS = 5.0
"""kubectl drain retries an eviction refused with 429 after this many seconds."""
POLL_SECONDS = 1.0
"""kubectl polls an evicted pod every second until it is gone."""
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"
DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
DRAIN_PRIORITY = 8

DryRun = Literal["none", "client", "server"]
DRY_RUN_SUFFIX: dict[str, str] = {"none": "", "client": " (dry run)", "server": " (server dry run)"}
"""What kubectl appends to its lines in each ``--dry-run`` mode."""


class DrainError(Exception):
    """A drain that cannot start (kubectl's error text, e.g. pods without a controller and no force)."""


@dataclass(slots=True)
class DrainResult:
    """The outcome of a drain: ``ok`` or the ``error`` text, the pods evicted, timings, the kubectl lines
    (standard output and error, in order), the pods still on the node when it failed (``ns/name``, kubectl's
    pending list) and, per pod refused by a budget, the Status causes of its last refusal."""

    node: str
    ok: bool
    error: str
    evicted: list[str]
    started: float
    finished: float
    log: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    blocked: dict[str, list[str]] = field(default_factory=dict)


def aggregate(errors: Sequence[str]) -> str:
    """apimachinery's NewAggregate(errs).Error(): one error as it is, several as ``[a, b]`` (repeats once)."""
    unique = list(dict.fromkeys(errors))
    if len(unique) == 1:
        return unique[0]
    return f"[{', '.join(unique)}]" if unique else ""


def failure_lines(result: DrainResult) -> list[str]:
    """kubectl's standard-error lines for a drain that failed after evicting began: ``There are pending pods
    in node "n1" when an error occurred: <error>`` and one ``pod/<name>`` per pod still there (none when no pod
    is left)."""
    if result.ok or not result.pending:
        return []
    lines = [f'There are pending pods in node "{result.node}" when an error occurred: {result.error}']
    lines.extend(f"pod/{ref.split('/', 1)[1]}" for ref in result.pending)
    return lines


def set_unschedulable(
    store: Store, node: str, unschedulable: bool, *, dry_run: DryRun = "none"
) -> tuple[dict[str, Any], str]:
    """Cordon (True) or uncordon (False) `node`: the node after the change and kubectl's line for it
    (``node/x cordoned``, ``node/x already cordoned``, with ``(dry run)`` / ``(server dry run)`` in those modes;
    a client dry run writes nothing). Raises NotFound for an unknown node."""
    verb = "cordoned" if unschedulable else "uncordoned"
    suffix = DRY_RUN_SUFFIX[dry_run]
    current = store.get(NODE_KEY, "", node)
    if bool((current.get("spec") or {}).get("unschedulable")) == unschedulable:
        return current, f"node/{node} already {verb}{suffix}"
    if dry_run == "client":
        return current, f"node/{node} {verb}{suffix}"
    # kubectl uncordon drops the field rather than writing false
    changed = store.patch(
        NODE_KEY,
        "",
        node,
        {"spec": {"unschedulable": True if unschedulable else None}},
        dry_run=dry_run == "server",
    )
    return changed, f"node/{node} {verb}{suffix}"


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


def _has_local_storage(pod: Mapping[str, Any]) -> bool:
    return any("emptyDir" in (v or {}) for v in (pod.get("spec") or {}).get("volumes") or ())


def _filter(
    pod: Mapping[str, Any],
    *,
    force: bool,
    ignore_daemonsets: bool,
    delete_emptydir_data: bool,
    missing_daemonset: Callable[[str, str], str | None] | None,
) -> tuple[bool, str, str]:
    """kubectl's filters in order (DaemonSet, mirror, local storage, unreplicated), stopping at the first that
    refuses the pod: (delete?, "warning"/"error"/"skip"/"", message); as in kubectl, only the last filter's
    message survives."""
    finished = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
    ref = _controller(pod)
    if ref is not None and ref.get("kind") == "DaemonSet" and not finished:
        ns = pod["metadata"].get("namespace") or "default"
        gone = missing_daemonset(ns, str(ref.get("name") or "")) if missing_daemonset is not None else None
        if gone is not None and not force:
            return (False, "error", gone)
        if gone is None and not ignore_daemonsets:
            return (False, "error", DAEMONSET_FATAL)
        if gone is None:
            return (False, "warning", DAEMONSET_WARNING)
        # forced, the pod of a deleted DaemonSet goes on to the next filters, whose verdict replaces the warning
    if MIRROR_POD_ANNOTATION in (pod["metadata"].get("annotations") or {}):
        return (False, "skip", "")
    if _has_local_storage(pod) and not finished and not delete_emptydir_data:
        return (False, "error", LOCAL_STORAGE_FATAL)
    # kubectl's local-storage warning is always replaced by the unreplicated filter's verdict (its own TODO)
    if finished or ref is not None:
        return (True, "", "")
    if force:
        return (True, "warning", UNMANAGED_WARNING)
    return (False, "error", UNMANAGED_FATAL)


def pods_to_evict(
    pods: Sequence[Mapping[str, Any]],
    *,
    force: bool,
    ignore_daemonsets: bool = False,
    delete_emptydir_data: bool = False,
    missing_daemonset: Callable[[str, str], str | None] | None = None,
) -> tuple[list[Mapping[str, Any]], list[str], list[str]]:
    """kubectl's GetPodsForDeletion: (pods to evict, errors, warnings) for the pods of a node.

    DaemonSet-managed pods (unless finished) are an error unless ``ignore_daemonsets`` (then skipped with a
    warning); a DaemonSet that no longer exists (``missing_daemonset(ns, name)`` gives the NotFound text) is an
    error unless ``force``; mirror pods are skipped; pods with an emptyDir volume are an error unless
    ``delete_emptydir_data``; finished pods are removable; pods without a controller are an error unless
    ``force`` (then a warning). Messages list the pods as ``ns/name, ns/name``, errors start "cannot delete".
    """
    chosen: list[Mapping[str, Any]] = []
    errors: dict[str, list[str]] = {}
    warnings: dict[str, list[str]] = {}
    for pod in pods:
        delete, kind, message = _filter(
            pod,
            force=force,
            ignore_daemonsets=ignore_daemonsets,
            delete_emptydir_data=delete_emptydir_data,
            missing_daemonset=missing_daemonset,
        )
        if kind == "error":
            errors.setdefault(message, []).append(_pod_ref(pod))
        elif kind == "warning":
            warnings.setdefault(message, []).append(_pod_ref(pod))
        if delete:
            chosen.append(pod)
    error_lines = [
        f"{m if m.lower().startswith('cannot delete') else 'cannot delete ' + m}: {', '.join(refs)}"
        for m, refs in errors.items()
    ]
    warning_lines = [f"{m}: {', '.join(refs)}" for m, refs in warnings.items()]
    return chosen, error_lines, warning_lines


@dataclass(frozen=True, slots=True)
class DrainOptions:
    """How a drain runs: kubectl's filter flags (``force``, ``ignore_daemonsets``, ``delete_emptydir_data``),
    the ``pod_selector`` (a label selector; only matching pods are considered), the ``dry_run`` mode, overall
    ``timeout`` (None/0: none), the grace-period override, retry and poll periods, whether evicted pods' nodes
    should avoid their controllers, and where kubectl's standard output (``on_log``) and standard error
    (``on_error``; None: ``on_log``) lines go."""

    timeout: float | None = None
    grace_period_seconds: int | None = None
    retry_seconds: float = RETRY_SECONDS
    poll_seconds: float = POLL_SECONDS
    prefer_avoid: bool = False
    on_log: Callable[[str], None] | None = None
    force: bool = False
    ignore_daemonsets: bool = False
    delete_emptydir_data: bool = False
    pod_selector: str = ""
    dry_run: DryRun = "none"
    on_error: Callable[[str], None] | None = None


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
        self._waiting: set[tuple[str, str]] = set()  # evicted pods not gone yet (the others retry eviction)
        self._order: list[tuple[str, str]] = []
        self._blocked: dict[str, list[str]] = {}
        self._deadline: Timer | None = None

    @property
    def done(self) -> bool:
        """Whether the drain has finished (successfully or not)."""
        return self.result is not None

    def start(self) -> None:
        """Cordon, choose the pods and evict them; raises DrainError (node left cordoned) or NotFound."""
        opts = self.options
        self._say(set_unschedulable(self.store, self.node, True, dry_run=opts.dry_run)[1])
        chosen, errors, warnings = self._candidates()
        if errors:
            raise DrainError(aggregate(errors))
        if warnings:
            self._complain(f"Warning: {'; '.join(warnings)}")
        if opts.dry_run == "client":
            for pod in chosen:
                self._say(f"evicting pod {_pod_ref(pod)} (dry run)")
            self._finish("")
            return
        if opts.timeout:
            self._deadline = self.clock.call_at(self._started + opts.timeout, self._expire, DRAIN_PRIORITY)
        for pod in chosen:
            meta = pod["metadata"]
            ns = meta.get("namespace") or "default"
            self._order.append((ns, meta["name"]))
            self._attempt(ns, meta["name"], meta.get("uid") or "")
        self._maybe_finish()

    def cancel(self) -> None:
        """Stop retrying and waiting; the drain ends as failed with error "drain cancelled"."""
        self._finish("drain cancelled")

    # ----- internals --------------------------------------------------------------------------
    def _candidates(self) -> tuple[list[Mapping[str, Any]], list[str], list[str]]:
        """kubectl's GetPodsForDeletion for this node now."""
        opts = self.options
        pods = self.store.list(
            POD_KEY, label_selector=opts.pod_selector or None, field_selector=f"spec.nodeName={self.node}"
        )[0]
        return pods_to_evict(
            pods,
            force=opts.force,
            ignore_daemonsets=opts.ignore_daemonsets,
            delete_emptydir_data=opts.delete_emptydir_data,
            missing_daemonset=self._missing_daemonset,
        )

    def _missing_daemonset(self, ns: str, name: str) -> str | None:
        try:
            self.store.get(DAEMONSET_KEY, ns, name)
        except NotFound as e:
            return e.message
        return None

    def _say(self, line: str) -> None:
        self._log.append(line)
        if self.options.on_log is not None:
            self.options.on_log(line)

    def _complain(self, line: str) -> None:
        self._log.append(line)
        sink = self.options.on_error or self.options.on_log
        if sink is not None:
            sink(line)

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
        self._say(f"evicting pod {ns}/{name}{DRY_RUN_SUFFIX[opts.dry_run]}")
        try:
            self.store.evict(
                ns,
                name,
                grace_period_seconds=opts.grace_period_seconds,
                avoid=opts.prefer_avoid,
                dry_run=opts.dry_run == "server",
            )
        except NotFound:
            return
        except TooManyRequests as e:
            causes = [c.get("message", "") for c in e.details().get("causes") or () if c.get("message")]
            self._blocked[f"{ns}/{name}"] = causes or [e.message]
            self._complain(
                f'error when evicting pods/"{name}" -n "{ns}" (will retry after '
                f"{go_duration(opts.retry_seconds)}): {e.message}"
            )
            self._later(ns, name, opts.retry_seconds, lambda: self._step(self._attempt, ns, name, uid))
            return
        except StatusError as e:
            self._errors.append(f'error when evicting pods/"{name}" -n "{ns}": {e.message}')
            return
        self._blocked.pop(f"{ns}/{name}", None)
        self._evicted.append(f"{ns}/{name}")
        if opts.dry_run == "server":
            return  # kubectl waits for nothing after a server dry run
        self._waiting.add((ns, name))
        self._poll(ns, name, uid)

    def _poll(self, ns: str, name: str, uid: str) -> None:
        self._timers.pop((ns, name), None)
        if self.done:
            return
        if self._gone(ns, name, uid):
            self._waiting.discard((ns, name))
            self._say(f"pod/{name} evicted")
            return
        self._later(ns, name, self.options.poll_seconds, lambda: self._step(self._poll, ns, name, uid))

    def _step(self, fn: Callable[[str, str, str], None], ns: str, name: str, uid: str) -> None:
        fn(ns, name, uid)
        self._maybe_finish()

    def _maybe_finish(self) -> None:
        if self.done or self._timers:
            return
        self._finish(aggregate(self._errors))

    def _expire(self) -> None:
        """The global timeout: each pod still retrying or terminating fails as in kubectl's evictPods."""
        self._deadline = None
        if self.done:
            return
        limit = go_duration(self.options.timeout or 0)
        for ns, name in self._order:
            if (ns, name) not in self._timers:
                continue
            if (ns, name) in self._waiting:
                self._errors.append(
                    f'error when waiting for pod "{name}" in namespace "{ns}" to terminate: '
                    f"global timeout reached: {limit}"
                )
            else:
                self._errors.append(
                    f'error when evicting pods/"{name}" -n "{ns}": global timeout reached: {limit}'
                )
        self._finish(aggregate(self._errors) or f"global timeout reached: {limit}")

    def _finish(self, error: str) -> None:
        if self.done:
            return
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        pending: list[str] = []
        if error:
            try:
                pending = [_pod_ref(p) for p in self._candidates()[0]]
            except StatusError:
                pending = []
        else:
            self._say(f"node/{self.node} drained{DRY_RUN_SUFFIX[self.options.dry_run]}")
        blocked = {ref: causes for ref, causes in self._blocked.items() if ref in pending}
        self.result = DrainResult(
            self.node,
            not error,
            error,
            list(self._evicted),
            self._started,
            self.clock.now(),
            list(self._log),
            pending,
            blocked,
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
    ignore_daemonsets: bool = False,
    delete_emptydir_data: bool = False,
    pod_selector: str = "",
    dry_run: DryRun = "none",
    on_error: Callable[[str], None] | None = None,
) -> Drain:
    """Start draining `node` and return the running `Drain`; `on_done(result)` is called when it ends.

    ``timeout`` (seconds; None or 0: none) bounds the whole drain, ``grace_period_seconds`` overrides the
    pods' termination grace period (None: the pod's own), ``prefer_avoid`` asks the node to avoid each
    evicted pod's controller, ``on_log`` / ``on_error`` receive each kubectl line of its standard output /
    error as it happens; ``force``, ``ignore_daemonsets``, ``delete_emptydir_data``, ``pod_selector`` and
    ``dry_run`` are kubectl's flags. Raises NotFound for an unknown node and DrainError with kubectl's message
    when the filters refuse pods (the node stays cordoned and ``on_done`` is not called). A node with nothing to
    evict finishes (and calls ``on_done``) at once.
    """
    options = DrainOptions(
        timeout,
        grace_period_seconds,
        retry_seconds,
        poll_seconds,
        prefer_avoid,
        on_log,
        force,
        ignore_daemonsets,
        delete_emptydir_data,
        pod_selector,
        dry_run,
        on_error,
    )
    op = Drain(store, clock, node, options, on_done)
    op.start()
    return op
