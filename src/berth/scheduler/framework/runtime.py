"""One profile's plugins, instantiated and run extension point by extension point."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from berth.scheduler.framework.config import ConfigError, ProfileConfig, expand_plugins
from berth.scheduler.framework.config_schema import EXTENSION_POINTS
from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.nodetable import BoolArray, IntArray, NodeInfo, NodeTable
from berth.scheduler.framework.plugin import (
    BatchFilterPlugin,
    BatchScorePlugin,
    BindPlugin,
    ClusterEvent,
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    NodeStatusMap,
    NormalizeScorePlugin,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ResourceFitFilter,
    ScorePlugin,
    UniformScoreHint,
    filter_depends_on_node_pods,
    filter_ignores_node_pods,
)
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.registry import Registry
from berth.scheduler.framework.status import SUCCESS, Code, PluginError, Status

POINT_PROTOCOLS: dict[str, tuple[type, ...]] = {
    "preEnqueue": (PreEnqueuePlugin,),
    "queueSort": (QueueSortPlugin,),
    "preFilter": (PreFilterPlugin,),
    "filter": (FilterPlugin, BatchFilterPlugin),
    "postFilter": (PostFilterPlugin,),
    "preScore": (PreScorePlugin,),
    "score": (ScorePlugin, BatchScorePlugin),
    "reserve": (ReservePlugin,),
    "permit": (PermitPlugin,),
    "preBind": (PreBindPlugin,),
    "bind": (BindPlugin,),
    "postBind": (PostBindPlugin,),
}

ALL_EVENTS = [ClusterEvent("*")]


def implemented_points(plugin: object) -> list[str]:
    """The extension points ``plugin`` implements."""
    return [p for p, protos in POINT_PROTOCOLS.items() if any(isinstance(plugin, pr) for pr in protos)]


@dataclass(slots=True)
class FilterOutcome:
    """Result of running every Filter plugin over the table for one pod."""

    passed: BoolArray
    status_codes: IntArray  # per row: -1 passed/not evaluated, else index into ``statuses``
    statuses: list[Status] = field(default_factory=list)

    def status_of(self, i: int) -> Status | None:
        """The failing status of row ``i`` (None when it passed or was not evaluated)."""
        c = int(self.status_codes[i])
        return None if c < 0 else self.statuses[c]


class DryRunPlan:
    """The Filter plugins of one cycle in order, split into those decided by arithmetic on a node's pods
    (ResourceFitFilter) and those whose verdict ignores the pods (run once per node and remembered)."""

    __slots__ = ("_static", "steps")

    def __init__(self, steps: list[tuple[Any, bool, bool]]) -> None:
        self.steps = steps
        self._static: dict[
            int, tuple[int, Status] | None
        ] = {}  # row -> first static failure (position, status)

    def _static_failure(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status] | None:
        row = node.index
        if row in self._static:
            return self._static[row]
        found: tuple[int, Status] | None = None
        for k, (p, per_node, arithmetic) in enumerate(self.steps):
            if arithmetic:
                continue
            st: Status = (
                p.filter(state, pod, node)
                if per_node
                else p.filter_nodes(state, pod, node.table).status_of(row)
            )
            if not st.is_success():
                found = (k, st.with_plugin(p.name))
                break
        self._static[row] = found
        return found

    def evaluate(
        self,
        state: CycleState,
        pod: PodInfo,
        node: NodeInfo,
        removed: Sequence[PodInfo],
        added: Sequence[PodInfo],
    ) -> Status:
        """The first failing Filter's status on ``node`` with ``removed`` gone and ``added`` placed, in order."""
        static = self._static_failure(state, pod, node)
        stop = static[0] if static is not None else len(self.steps)
        for k in range(stop):
            p, _, arithmetic = self.steps[k]
            if arithmetic:
                st: Status = p.fits_with_changes(state, pod, node.table, node.index, removed, added)
                if not st.is_success():
                    return st.with_plugin(p.name)
        return static[1] if static is not None else SUCCESS

    def keys(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Sequence[int]) -> list[Hashable]:
        """``key`` of each of ``rows`` with no nominated pods added, computed over the table at once: the
        first static failure per row from the plugins' batched forms, the arithmetic plugins' row keys."""
        first: list[Status | None] = [None] * len(rows)
        undecided = np.ones(len(rows), dtype=np.bool_)
        picked = np.asarray(rows, dtype=np.int64)
        arithmetic: list[Any] = []
        for p, _, is_arithmetic in self.steps:
            if is_arithmetic:
                arithmetic.append(p)
                continue
            if not np.count_nonzero(undecided):
                continue
            if not isinstance(p, BatchFilterPlugin):
                # a per-node-only static filter: the remaining rows are settled row by row (remembered)
                for j in np.flatnonzero(undecided).tolist():
                    found = self._static_failure(state, pod, table.info(rows[j]))
                    first[j] = None if found is None else found[1]
                undecided[:] = False
                continue
            v = p.filter_nodes(state, pod, table)
            failed = undecided & ~v.passed[picked]
            for j in np.flatnonzero(failed).tolist():
                first[j] = v.status_of(rows[j]).with_plugin(p.name)
            undecided &= ~failed
        parts = [p.dry_run_keys(state, pod, table, rows) for p in arithmetic]
        return list(zip(first, *parts, strict=True))

    def key(self, state: CycleState, pod: PodInfo, node: NodeInfo, added: Sequence[PodInfo]) -> Hashable:
        """Equal for two nodes on which equal removals give equal statuses (see Handle.dry_run_key)."""
        static = self._static_failure(state, pod, node)
        parts: list[Hashable] = [None if static is None else static[1]]
        for p, _, arithmetic in self.steps:
            if arithmetic:
                parts.append(p.dry_run_key(state, pod, node.table, node.index, added))
        return tuple(parts)


@dataclass(slots=True)
class ScoreOutcome:
    """Per-plugin raw and normalised scores over the feasible rows, and the weighted total."""

    idx: IntArray
    total: IntArray
    raw: dict[str, IntArray] = field(default_factory=dict)
    normalized: dict[str, IntArray] = field(default_factory=dict)


class Framework:
    """The plugins of one profile, ready to run."""

    def __init__(
        self,
        profile: ProfileConfig,
        registry: Registry,
        handle: Handle,
        *,
        default_percentage: int | None = None,
    ) -> None:
        self.profile_name = profile.scheduler_name
        self.percentage_of_nodes_to_score = (
            profile.percentage_of_nodes_to_score
            if profile.percentage_of_nodes_to_score is not None
            else default_percentage
        )
        self.handle = handle
        names: list[str] = []
        for point in ("multiPoint", *EXTENSION_POINTS):
            for ref in profile.plugins[point].enabled:
                if ref.name not in names:
                    names.append(ref.name)
        self.plugins: dict[str, Any] = {}
        for n in names:
            factory = registry.get(n)
            if factory is None:
                raise ConfigError(f'profiles[{profile.scheduler_name}].plugins: plugin "{n}" does not exist')
            self.plugins[n] = factory(profile.plugin_args.get(n, {}), handle)
        implements = {n: implemented_points(p) for n, p in self.plugins.items()}
        points, weights = expand_plugins(profile, implements)
        for point, lst in points.items():
            for n in lst:
                if point not in implements.get(n, ()):
                    raise ConfigError(
                        f'profiles[{profile.scheduler_name}].plugins.{point}: plugin "{n}" does not extend {point}'
                    )
        self.points = points
        self.weights = weights
        if len(points["queueSort"]) != 1:
            raise ConfigError(
                f"profiles[{profile.scheduler_name}].plugins.queueSort: exactly one queue sort plugin must be "
                f"enabled, got {points['queueSort']}"
            )
        if not points["bind"]:
            raise ConfigError(
                f"profiles[{profile.scheduler_name}].plugins.bind: at least one bind plugin is needed"
            )

        def get(point: str) -> list[Any]:
            return [self.plugins[n] for n in points[point]]

        self.pre_enqueue_plugins = get("preEnqueue")
        self.queue_sort: QueueSortPlugin = get("queueSort")[0]
        self.pre_filter_plugins = get("preFilter")
        self.filter_plugins = get("filter")
        self.post_filter_plugins = get("postFilter")
        self.pre_score_plugins = get("preScore")
        self.score_plugins = get("score")
        self.reserve_plugins = get("reserve")
        self.permit_plugins = get("permit")
        self.pre_bind_plugins = get("preBind")
        self.bind_plugins = get("bind")
        self.post_bind_plugins = get("postBind")
        # protocol checks are slow: decide each plugin's form once
        self._filters: list[tuple[Any, bool]] = [
            (p, isinstance(p, BatchFilterPlugin)) for p in self.filter_plugins
        ]
        self._node_filters: list[tuple[Any, bool]] = [
            (p, isinstance(p, FilterPlugin)) for p in self.filter_plugins
        ]
        self._pod_dependent_filters = [
            (p, f) for p, f in self._node_filters if not filter_ignores_node_pods(p)
        ]
        self._static_filters = [(p, f) for p, f in self._node_filters if filter_ignores_node_pods(p)]
        self._resource_fit = {p.name for p in self.filter_plugins if isinstance(p, ResourceFitFilter)}
        self._may_be_uniform = {p.name for p in self.score_plugins if isinstance(p, UniformScoreHint)}
        # the status codes of a filter run in which no row failed: -1 on every row (shared and read-only; made
        # again when the table's size changes)
        self._no_failures: IntArray = np.full(0, -1, dtype=np.int64)
        self._no_failures.flags.writeable = False
        self._scores: list[tuple[Any, bool, bool]] = [
            (p, isinstance(p, BatchScorePlugin), isinstance(p, NormalizeScorePlugin))
            for p in self.score_plugins
        ]
        self._prefilter_ext: list[tuple[str, PreFilterExtensions]] = []
        # (plugin, id of a status list it returned) -> (that list, its statuses attributed to the plugin)
        self._attributed_lists: dict[tuple[str, int], tuple[Sequence[Status], list[Status]]] = {}
        self.has_pre_filter_extensions = False
        for p in self.pre_filter_plugins:
            ext = getattr(p, "pre_filter_extensions", None)
            if ext is not None and isinstance(ext, PreFilterExtensions):
                self._prefilter_ext.append((p.name, ext))
                self.has_pre_filter_extensions = True
        self.events: dict[str, list[ClusterEvent]] = {
            n: (p.events_to_register() if isinstance(p, EnqueueExtensions) else ALL_EVENTS)
            for n, p in self.plugins.items()
        }

    # ----- queueing ------------------------------------------------------------------------
    def run_pre_enqueue(self, pod: PodInfo) -> Status:
        """Run PreEnqueue plugins; the first non-success status is returned."""
        for p in self.pre_enqueue_plugins:
            s: Status = p.pre_enqueue(pod)
            if not s.is_success():
                return s.with_plugin(p.name)
        return SUCCESS

    # ----- filtering -----------------------------------------------------------------------
    def run_pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult, Status, set[str]]:
        """Run PreFilter plugins: merged node narrowing, first rejection, and the plugins that narrowed/rejected."""
        result = PreFilterResult()
        narrowing: set[str] = set()
        for p in self.pre_filter_plugins:
            r, s = p.pre_filter(state, pod, table)
            code = s.code
            if code == Code.SKIP:
                state.skip_filter.add(p.name)
                continue
            if code != Code.SUCCESS:
                s = s.with_plugin(p.name)
                if s.code == Code.ERROR:
                    raise PluginError(s)
                return result, s, {p.name}
            if r is not None and r.node_names is not None:
                narrowing.add(p.name)
                result = result.merge(r)
                if not result.node_names:
                    msg = "node(s) didn't satisfy plugin(s) [" + " ".join(sorted(narrowing)) + "]"
                    return result, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,), p.name), narrowing
        return result, SUCCESS, narrowing

    def run_pre_filter_add_pod(
        self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status:
        """Tell PreFilter extensions that ``pod_to_add`` is (hypothetically) on ``node``."""
        for name, ext in self._prefilter_ext:
            if name in state.skip_filter:
                continue
            s = ext.add_pod(state, pod, pod_to_add, node)
            if not s.is_success():
                return s.with_plugin(name)
        return SUCCESS

    def run_pre_filter_remove_pod(
        self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        """Tell PreFilter extensions that ``pod_to_remove`` is (hypothetically) gone from ``node``."""
        for name, ext in self._prefilter_ext:
            if name in state.skip_filter:
                continue
            s = ext.remove_pod(state, pod, pod_to_remove, node)
            if not s.is_success():
                return s.with_plugin(name)
        return SUCCESS

    def run_filters(
        self, state: CycleState, pod: PodInfo, table: NodeTable, candidates: BoolArray
    ) -> FilterOutcome:
        """Run Filter plugins in order over ``candidates``; each failing row keeps its first failure."""
        n = table.size
        alive = candidates.copy()
        codes: IntArray | None = None  # made at the first failure
        statuses: list[Status] = []
        skip = state.skip_filter
        for p, batched in self._filters:
            if skip and p.name in skip:
                continue
            if batched:
                v = p.filter_nodes(state, pod, table)
                if not v.statuses:
                    continue  # a verdict without statuses has no failed row
                failed = alive & ~v.passed
                if not np.count_nonzero(failed):
                    continue
                base = len(statuses)
                statuses.extend(self._attributed(p.name, v.statuses))
                if codes is None:
                    codes = np.full(n, -1, dtype=np.int64)
                if v.codes is None:
                    codes[failed] = base
                else:
                    codes[failed] = v.codes[failed] + base
                alive &= v.passed
            else:
                seen: dict[Status, int] = {}
                if codes is None:
                    codes = np.full(n, -1, dtype=np.int64)
                for i in np.flatnonzero(alive):
                    s = p.filter(state, pod, table.info(int(i)))
                    if s.is_success():
                        continue
                    s = s.with_plugin(p.name)
                    if s.code == Code.ERROR:
                        raise PluginError(s)
                    c = seen.get(s)
                    if c is None:
                        c = seen[s] = len(statuses)
                        statuses.append(s)
                    codes[i] = c
                    alive[i] = False
        if codes is None:
            codes = self._no_failures
            if codes.size != n:
                codes = self._no_failures = np.full(n, -1, dtype=np.int64)
                codes.flags.writeable = False
        return FilterOutcome(alive, codes, statuses)

    def _attributed(self, plugin: str, statuses: Sequence[Status]) -> list[Status]:
        """``statuses`` attributed to ``plugin`` (remembered for the plugin's reused status lists); raises
        PluginError on an Error status."""
        known = self._attributed_lists.get((plugin, id(statuses)))
        if known is not None and known[0] is statuses:
            return known[1]
        out = [s.with_plugin(plugin) for s in statuses]
        for s in out:
            if s.code == Code.ERROR:
                raise PluginError(s)
        if len(self._attributed_lists) >= 256:
            self._attributed_lists.clear()
        self._attributed_lists[(plugin, id(statuses))] = (statuses, out)
        return out

    def run_filter_node(
        self, state: CycleState, pod: PodInfo, node: NodeInfo, *, pod_dependent_only: bool = False
    ) -> Status:
        """Run the Filter plugins on one node (per-node form); the first failure is returned.

        ``pod_dependent_only`` skips plugins whose verdict ignores the pods on the node (the caller already
        knows they pass), as a preemption dry run does between reprieves."""
        skip = state.skip_filter
        for p, per_node in self._pod_dependent_filters if pod_dependent_only else self._node_filters:
            if skip and p.name in skip:
                continue
            if per_node:
                s: Status = p.filter(state, pod, node)
            else:
                s = p.filter_nodes(state, pod, node.table).status_of(node.index)
            if not s.is_success():
                return s.with_plugin(p.name)
        return SUCCESS

    def dry_run_plan(self, state: CycleState, pod: PodInfo) -> DryRunPlan | None:
        """How a preemption dry run can decide ``pod`` by arithmetic in this cycle: possible when every Filter
        that looks at a node's pods is a ResourceFitFilter (the others are evaluated once per node); None
        when some other Filter depends on the pods (the full per-node filters must run)."""
        steps: list[tuple[Any, bool, bool]] = []  # (plugin, per-node form, decided by arithmetic)
        skip = state.skip_filter
        for p, per_node in self._node_filters:
            if skip and p.name in skip:
                continue
            if p.name in self._resource_fit:
                steps.append((p, per_node, True))
            elif filter_depends_on_node_pods(p, state, pod):
                return None
            else:
                steps.append((p, per_node, False))
        return DryRunPlan(steps)

    def run_post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeStatusMap
    ) -> tuple[PostFilterResult | None, Status]:
        """Run PostFilter plugins until one succeeds."""
        last = Status(Code.UNSCHEDULABLE)
        reasons: list[str] = []
        for p in self.post_filter_plugins:
            r, s = p.post_filter(state, pod, statuses)
            if s.is_success():
                return r, s.with_plugin(p.name)
            if s.code == Code.ERROR:
                raise PluginError(s.with_plugin(p.name))
            if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return r, s.with_plugin(p.name)
            reasons.extend(s.reasons)
            last = s.with_plugin(p.name)
        if reasons:
            return None, Status(last.code, tuple(reasons), last.plugin)
        return None, last

    # ----- scoring -------------------------------------------------------------------------
    def run_scores(
        self, state: CycleState, pod: PodInfo, table: NodeTable, idx: IntArray, *, keep_parts: bool = False
    ) -> ScoreOutcome:
        """Run PreScore, Score and NormalizeScore over rows ``idx``; weighted total per row."""
        for p in self.pre_score_plugins:
            s = p.pre_score(state, pod, table, idx)
            code = s.code
            if code == Code.SKIP:
                state.skip_score.add(p.name)
            elif code != Code.SUCCESS:
                raise PluginError(s.with_plugin(p.name))
        total = np.zeros(len(idx), dtype=np.int64)
        out = ScoreOutcome(idx, total)
        skip = state.skip_score
        weights = self.weights
        for p, batched, normalizes in self._scores:
            if skip and p.name in skip:
                continue
            if not keep_parts and p.name in self._may_be_uniform and p.uniform_score(state, pod, table):
                continue  # the same score on every node cannot change the choice
            if batched:
                raw = p.score_nodes(state, pod, table, idx)
            else:
                raw = np.fromiter(
                    (p.score(state, pod, table.info(int(i))) for i in idx), dtype=np.int64, count=len(idx)
                )
            norm = p.normalize_scores(state, pod, raw) if normalizes else raw
            if keep_parts:
                out.raw[p.name] = raw
                out.normalized[p.name] = norm
            w = weights.get(p.name, 1)
            if w == 1:
                total += norm
            else:
                total += norm * w
        return out

    # ----- binding -------------------------------------------------------------------------
    def run_reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        """Run Reserve plugins; on failure the caller runs Unreserve."""
        for p in self.reserve_plugins:
            s: Status = p.reserve(state, pod, node)
            if not s.is_success():
                return s.with_plugin(p.name)
        return SUCCESS

    def run_unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        """Run Unreserve of every Reserve plugin in reverse order."""
        for p in reversed(self.reserve_plugins):
            p.unreserve(state, pod, node)

    def run_permit(self, state: CycleState, pod: PodInfo, node: str) -> tuple[Status, dict[str, float]]:
        """Run Permit plugins: a rejection, or Wait with per-plugin timeouts, or Success."""
        waits: dict[str, float] = {}
        for p in self.permit_plugins:
            s, timeout = p.permit(state, pod, node)
            if s.code == Code.WAIT:
                waits[p.name] = min(float(timeout), 15 * 60.0)
                continue
            if not s.is_success():
                return s.with_plugin(p.name), {}
        if waits:
            return Status(Code.WAIT), waits
        return SUCCESS, {}

    def run_pre_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        """Run PreBind plugins."""
        for p in self.pre_bind_plugins:
            s: Status = p.pre_bind(state, pod, node)
            if not s.is_success():
                return s.with_plugin(p.name)
        return SUCCESS

    def run_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        """Run Bind plugins until one does not Skip."""
        for p in self.bind_plugins:
            s: Status = p.bind(state, pod, node)
            if s.is_skip():
                continue
            return s.with_plugin(p.name)
        return Status(Code.SKIP)

    def run_post_bind(self, state: CycleState, pod: PodInfo, node: str) -> None:
        """Run PostBind plugins."""
        for p in self.post_bind_plugins:
            p.post_bind(state, pod, node)

    def plugin(self, name: str) -> Any:
        """The instantiated plugin ``name``."""
        return self.plugins[name]

    def interested(self, plugins: set[str], resource: str, action: str) -> bool:
        """Whether any of ``plugins`` registered for a change of ``resource`` by ``action``."""
        if not plugins:
            return True
        return any(ev.matches(resource, action) for n in plugins for ev in self.events.get(n, ALL_EVENTS))


def weights_view(fw: Framework) -> Mapping[str, int]:
    """The score weights of a framework."""
    return fw.weights
