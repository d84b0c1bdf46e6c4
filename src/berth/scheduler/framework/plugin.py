"""The plugin contract: one small protocol per extension point, plus the handle plugins receive.

A plugin is any object with a ``name`` and the methods of the extension points it takes part in.
Filter and Score plugins may also offer a batched form over the whole NodeTable
(``filter_nodes`` / ``score_nodes``); the runtime prefers it, and it must agree with the per-node form.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from berth.api.contracts import Store
from berth.clock import Clock
from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.nodetable import BoolArray, IntArray, NodeInfo, NodeTable
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import Code, Status

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0

SharedT = TypeVar("SharedT")


_ALL_PASS: dict[int, Verdicts] = {}


class Verdicts:
    """Filter results over all rows of a NodeTable.

    ``passed[i]`` says whether row i passed. For failed rows, ``codes[i]`` indexes ``statuses``
    (``codes`` None means every failed row has ``statuses[0]``). Without statuses every row passed.
    """

    __slots__ = ("codes", "passed", "statuses")

    def __init__(
        self, passed: BoolArray, statuses: Sequence[Status] = (), codes: IntArray | None = None
    ) -> None:
        self.passed = passed
        self.statuses = statuses
        self.codes = codes

    @classmethod
    def all_pass(cls, n: int) -> Verdicts:
        """Every row passes (a shared, read-only result per table size)."""
        v = _ALL_PASS.get(n)
        if v is None:
            passed = np.ones(n, dtype=np.bool_)
            passed.flags.writeable = False
            v = _ALL_PASS[n] = cls(passed)
        return v

    @classmethod
    def single(cls, passed: BoolArray, status: Status) -> Verdicts:
        """Rows that fail all fail with ``status``."""
        return cls(passed, (status,))

    def status_of(self, i: int) -> Status:
        """The status of row ``i``."""
        if self.passed[i]:
            return Status()
        if self.codes is None:
            return self.statuses[0]
        return self.statuses[int(self.codes[i])]


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Narrows the nodes to evaluate; ``node_names`` None means all nodes."""

    node_names: frozenset[str] | None = None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        """Intersection of two results."""
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """What a PostFilter achieved: a node nominated for the pod, if any, and how many victims a preemption
    chose to make room there (kube's scheduler_preemption_victims)."""

    nominated_node_name: str = ""
    victims: int = 0


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A kind of cluster change that may make unschedulable pods schedulable."""

    resource: str  # "Node", "Pod" (assigned pods), or any kind name; "*" for all
    actions: frozenset[str] = frozenset({"*"})  # "Add", "Update", "Delete", "*"

    def matches(self, resource: str, action: str) -> bool:
        """Whether a change of ``resource`` by ``action`` is one of these events."""
        return (self.resource in ("*", resource)) and ("*" in self.actions or action in self.actions)


@dataclass(frozen=True, slots=True)
class RowStatuses:
    """Filter statuses by table row: ``codes[row]`` indexes ``statuses`` (-1: the row passed or was not
    evaluated); ``index`` maps node names to rows."""

    index: Mapping[str, int]
    codes: IntArray
    statuses: Sequence[Status]

    def get(self, node: str) -> Status | None:
        """The status of ``node``, if it failed."""
        row = self.index.get(node)
        if row is None:
            return None
        c = int(self.codes[row])
        return None if c < 0 else self.statuses[c]


@dataclass(slots=True)
class NodeStatusMap:
    """Per-node statuses of a failed attempt, as PostFilter plugins receive them: listed by name in
    ``statuses``, by table row in ``rows``, ``absent`` for the others."""

    statuses: dict[str, Status] = field(default_factory=dict)
    absent: Status | None = None  # status of nodes not listed (e.g. PreFilter rejection)
    rows: RowStatuses | None = None

    def get(self, node: str) -> Status:
        """The status of ``node``."""
        s = self.statuses.get(node)
        if s is not None:
            return s
        if self.rows is not None:
            s = self.rows.get(node)
            if s is not None:
                return s
        return self.absent if self.absent is not None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def items(self) -> list[tuple[str, Status]]:
        """Every listed (node, status): those listed by name, then those listed by row in row order."""
        out = list(self.statuses.items())
        if self.rows is not None:
            names = {row: name for name, row in self.rows.index.items()}
            codes = self.rows.codes
            out += [
                (names[r], self.rows.statuses[int(codes[r])]) for r in np.flatnonzero(codes >= 0).tolist()
            ]
        return out

    def rows_with_code(self, code: Code, index: Mapping[str, int], size: int) -> list[int]:
        """The rows (of a table of ``size`` rows whose names map to rows by ``index``) whose status has
        ``code``, in row order."""
        mask = np.zeros(size, dtype=np.bool_)
        if self.absent is not None and self.absent.code == code:
            mask[:] = True
        if self.rows is not None:
            codes = self.rows.codes[:size]
            listed = codes >= 0
            wanted = np.fromiter(
                (s.code == code for s in self.rows.statuses), dtype=np.bool_, count=len(self.rows.statuses)
            )
            mask[listed] = wanted[codes[listed]] if wanted.size else False
        for name, s in self.statuses.items():
            row = index.get(name)
            if row is not None and row < size:
                mask[row] = s.code == code
        out: list[int] = np.flatnonzero(mask).tolist()
        return out


class WaitingPod(Protocol):
    """A pod held at Permit."""

    @property
    def pod(self) -> PodInfo: ...

    @property
    def node_name(self) -> str: ...

    def pending_plugins(self) -> list[str]: ...

    def allow(self, plugin: str) -> None: ...

    def reject(self, plugin: str, message: str) -> None: ...


class Handle(Protocol):
    """What the scheduler gives each plugin: time, objects, the node table, waiting pods, events."""

    @property
    def clock(self) -> Clock: ...

    @property
    def client(self) -> Store: ...

    @property
    def rng(self) -> random.Random: ...

    def node_table(self) -> NodeTable: ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def iterate_waiting_pods(self) -> Iterable[WaitingPod]: ...

    def record_event(
        self, obj: Mapping[str, Any], type_: str, reason: str, message: str, action: str = ""
    ) -> None:
        """Record a Kubernetes Event about ``obj``, reported by this profile."""
        ...

    def call_later(self, delay: float, fn: Callable[[], None]) -> None: ...

    def bind_pod(self, pod: PodInfo, node_name: str, annotations: Mapping[str, str] | None = None) -> None:
        """Write the pod's binding to ``node_name`` (the pods/binding subresource, with ``annotations``
        copied onto the pod); raises a `berth.api.errors.StatusError` when the API refuses it."""
        ...

    def register_pseudo_kind(self, kind: str, source: PseudoPodSource) -> None:
        """Let pods of ``kind`` (built by a plugin, e.g. reserve pods) be scheduled; ``source`` binds them."""
        ...

    def enqueue(self, pod: PodInfo) -> None:
        """Add a (pseudo) pod to the scheduling queue, or refresh it there."""
        ...

    def dequeue(self, uid: str) -> None:
        """Remove a (pseudo) pod from the scheduling queue."""
        ...

    def set_virtual_pod(self, pod: PodInfo, node_name: str) -> None:
        """Count ``pod`` (a pseudo pod that holds node resources) on ``node_name``, replacing its old entry."""
        ...

    def remove_virtual_pod(self, uid: str) -> None:
        """Stop counting the pseudo pod ``uid`` (its resources return to the node)."""
        ...

    def resize_virtual_pod(
        self, uid: str, node_name: str, requests: dict[str, int], nonzero_cpu: int, nonzero_memory: int
    ) -> PodInfo | None:
        """Give the pseudo pod ``uid`` counted on ``node_name`` new requests, counted in their place (as
        ``set_virtual_pod`` with a copy that differs only in them, without the copy: the counted PodInfo is
        changed and returned); None, doing nothing, when no pod ``uid`` is counted on ``node_name``."""
        ...

    def shared(self, key: Hashable, make: Callable[[], SharedT]) -> SharedT:
        """The object kept under ``key`` for the whole scheduler, made by ``make`` when first asked for: the
        plugins of every profile that ask with an equal key get the same one (state kept once per scheduler,
        as Koordinator's plugins share the scheduler's caches across profiles)."""
        ...

    def nominated_pods(self, node_name: str) -> list[PodInfo]:
        """Pods nominated to ``node_name`` (status.nominatedNodeName) that are not bound yet."""
        ...

    def filter_with_changes(
        self,
        state: CycleState,
        pod: PodInfo,
        node_name: str,
        removed: Sequence[PodInfo] = (),
    ) -> Status:
        """Run this profile's Filter plugins for ``pod`` on one node as if ``removed`` were gone from it
        (with equal-or-higher-priority nominated pods counted, as kube's preemption dry run does)."""
        ...

    def clear_nomination(self, pod: PodInfo) -> None:
        """Drop ``pod``'s status.nominatedNodeName (a preemptor took the node it was nominated to)."""
        ...

    def dry_run_key(self, state: CycleState, pod: PodInfo, node_name: str) -> Hashable | None:
        """Within this cycle, a value equal for two nodes on which removing pods with equal requests gives
        equal Filter statuses for ``pod`` (so a preemption dry run may reuse a node's victim choice);
        None when no such value is known (some filter looks at the pods themselves)."""
        ...

    def dry_run_keys(self, state: CycleState, pod: PodInfo, rows: Sequence[int]) -> list[Hashable | None]:
        """``dry_run_key`` of the nodes of table ``rows``, computed together."""
        ...

    def activate_pods(self, uids: Iterable[str]) -> None:
        """Move the pods ``uids`` that wait in the unschedulable pool or backoffQ straight to activeQ
        (kube's PodsToActivate / SchedulingQueue.Activate); pods elsewhere (activeQ, in flight, waiting at
        Permit, bound, unknown) are left alone."""
        ...

    def extender_preemption(
        self, pod: PodInfo, victims: Mapping[str, tuple[list[PodInfo], int]]
    ) -> tuple[dict[str, tuple[list[PodInfo], int]] | None, Status]:
        """The preemption candidates (node -> (victims, PDB violations)) that the scheduler extenders with
        a preempt verb keep for ``pod``, with the victims they chose (kube's callExtenders); None when no
        extender preempts for ``pod``; an Error status when one failed."""
        ...


class PseudoPodSource(Protocol):
    """Where the scheduler sends the outcome of scheduling a pseudo pod (one that is not a Pod object)."""

    def bind_pseudo(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Record that ``pod`` is placed on ``node_name`` (write the owning object's status)."""
        ...

    def pseudo_failed(self, pod: PodInfo, reason: str, message: str) -> None:
        """Record that scheduling ``pod`` failed (condition reason and message as kube writes them)."""
        ...


@runtime_checkable
class ObjectEventPlugin(Protocol):
    """A plugin that follows changes of some object kinds (its informers)."""

    name: str

    def watched_kinds(self) -> tuple[str, ...]:
        """The kinds (``kind`` field values, e.g. "Reservation", "Pod") whose changes it wants."""
        ...

    def on_object_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """One change: type ADDED / MODIFIED / DELETED and the object."""
        ...


@runtime_checkable
class PreEnqueuePlugin(Protocol):
    """Gate a pod before it enters the active queue."""

    name: str

    def pre_enqueue(self, pod: PodInfo) -> Status: ...


@runtime_checkable
class QueueSortPlugin(Protocol):
    """Order of the active queue: smaller ``sort_key`` pops first, pods of equal keys in arrival order; the
    keys are hashable tuples (of numbers and strings)."""

    name: str

    def sort_key(self, pod: PodInfo, enqueued_at: float) -> tuple[Any, ...]: ...


@runtime_checkable
class PreFilterPlugin(Protocol):
    """Check the pod (and precompute state) once per cycle; may narrow the nodes."""

    name: str

    def pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Incremental updates of PreFilter state when pods are added or removed hypothetically."""

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status: ...

    def remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status: ...


@runtime_checkable
class FilterPlugin(Protocol):
    """Decide whether the pod can run on one node."""

    name: str

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status: ...


def filter_ignores_node_pods(plugin: object) -> bool:
    """Whether a Filter plugin declares (``filter_ignores_node_pods = True``) that its verdict depends only on
    the node object, not on the pods counted on it, so that removing pods (preemption) cannot change it."""
    return bool(getattr(plugin, "filter_ignores_node_pods", False))


@runtime_checkable
class ResourceFitFilter(Protocol):
    """A Filter whose verdict on a node depends on the pods there only through their count and summed
    requests, so a preemption dry run can decide it by arithmetic."""

    name: str

    def fits_with_changes(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        row: int,
        removed: Sequence[PodInfo],
        added: Sequence[PodInfo],
    ) -> Status:
        """The Filter's status for ``pod`` on row ``row`` with ``removed`` gone from it and ``added`` placed
        on it (the same status its ``filter`` gives on such a node)."""
        ...

    def dry_run_key(
        self, state: CycleState, pod: PodInfo, table: NodeTable, row: int, added: Sequence[PodInfo]
    ) -> Hashable:
        """A value equal for two rows exactly when equal removals give equal statuses on them."""
        ...

    def dry_run_keys(
        self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Sequence[int]
    ) -> list[Hashable]:
        """``dry_run_key`` of each of ``rows`` with nothing added (equal to the single-row form)."""
        ...


def filter_depends_on_node_pods(plugin: object, state: CycleState, pod: PodInfo) -> bool:
    """Whether a Filter plugin's verdict for ``pod`` in this cycle may depend on the pods on a node.

    Plugins that declare ``filter_ignores_node_pods`` never do; others may answer per pod with a
    ``filter_depends_on_node_pods(state, pod)`` method; without one the answer is yes."""
    if filter_ignores_node_pods(plugin):
        return False
    ask = getattr(plugin, "filter_depends_on_node_pods", None)
    return True if ask is None else bool(ask(state, pod))


@runtime_checkable
class BatchFilterPlugin(Protocol):
    """The batched form of Filter over every row of the table."""

    name: str

    def filter_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts: ...


@runtime_checkable
class PostFilterPlugin(Protocol):
    """Runs when no node fits (e.g. preemption)."""

    name: str

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeStatusMap
    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Protocol):
    """Precompute scoring state for the feasible nodes; Skip disables the plugin's Score."""

    name: str

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, feasible: IntArray) -> Status: ...


@runtime_checkable
class ScorePlugin(Protocol):
    """Rank one feasible node (0..100 after normalisation)."""

    name: str

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int: ...


@runtime_checkable
class UniformScoreHint(Protocol):
    """A Score plugin that can tell, before scoring, that every node would get the same final score for
    the pod in this cycle; the framework then leaves it out of the total (the choice cannot change) unless
    the scores are being recorded."""

    name: str

    def uniform_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> bool: ...


@runtime_checkable
class BatchScorePlugin(Protocol):
    """The batched form of Score over the feasible rows ``idx``."""

    name: str

    def score_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: IntArray) -> IntArray: ...


@runtime_checkable
class NormalizeScorePlugin(Protocol):
    """Rescale a Score plugin's raw scores (the ScoreExtensions of kube)."""

    name: str

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray: ...


@runtime_checkable
class ReservePlugin(Protocol):
    """Claim (and release on failure) plugin-side state once a node is chosen."""

    name: str

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Protocol):
    """Allow, reject or hold (Wait, with a timeout in seconds) the pod before binding."""

    name: str

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]: ...


@runtime_checkable
class PreBindPlugin(Protocol):
    """Work that must succeed before the binding is written."""

    name: str

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...


@runtime_checkable
class BindPlugin(Protocol):
    """Write the binding; Skip passes to the next binder."""

    name: str

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...


@runtime_checkable
class PostBindPlugin(Protocol):
    """Informational hook after a successful bind."""

    name: str

    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    """The cluster events after which a pod this plugin rejected is worth retrying."""

    def events_to_register(self) -> list[ClusterEvent]: ...


def nominated_counted(handle: object, pod: PodInfo, node_name: str) -> list[PodInfo]:
    """The pods nominated to ``node_name`` that kube adds before filtering ``pod`` there (equal or higher
    priority, not the pod itself); none when the handle keeps no nominations."""
    get = getattr(handle, "nominated_pods", None)
    if get is None:
        return []
    return [p for p in get(node_name) if p.uid != pod.uid and p.priority >= pod.priority]


def rows_with_added_pods(state: CycleState, n: int) -> list[int]:
    """Rows (below ``n``) that this cycle's overlays add pods to: where nominated pods are counted (in Filter
    only: their overlays are taken off before Score, as kube's RunFilterPluginsWithNominatedPods)."""
    rows: set[int] = set()
    for ov in state.overlay:
        if ov.rows is not None and ov.pods is not None:
            rows.update(r for r, c in zip(ov.rows.tolist(), ov.pods.tolist(), strict=False) if c > 0)
    return sorted(r for r in rows if r < n)


def default_normalize(scores: IntArray, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> IntArray:
    """kube's DefaultNormalizeScore: scale to 0..max by the maximum, optionally reversed."""
    if scores.size == 0:
        return scores
    top = int(scores[scores.argmax()])  # as scores.max(), without numpy's Python-level reduction wrapper
    if top <= 0:
        # kube only raises scores above 0; a max of 0 leaves zeros (or max when reversed)
        if reverse:
            return np.full_like(scores, max_priority)
        return scores
    out = max_priority * scores // top
    if reverse:
        out = max_priority - out
    return out
