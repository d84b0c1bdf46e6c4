"""NodeResourcesFit: does the node have room for the pod's requests (and one more pod)? Score by strategy."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from berth.scheduler.framework import CycleState, NodeInfo, NodeTable, PodInfo, PreFilterResult, Verdicts
from berth.scheduler.framework.columncache import ColumnCache
from berth.scheduler.framework.nodetable import IntArray
from berth.scheduler.framework.status import SUCCESS, Status, unschedulable
from berth.scheduler.plugins.common import PodHoldingsFilter
from berth.scheduler.plugins.helpers import is_extended_resource, is_scalar_resource
from berth.scheduler.plugins.noderesources.allocation import CPU, EPHEMERAL_STORAGE, MEMORY
from berth.scheduler.plugins.noderesources.args import FIT, NodeResourcesFitArgs
from berth.scheduler.plugins.noderesources.resourcescore import ResourceAllocationScore
from berth.scheduler.plugins.noderesources.scorers import build_scorer

PRE_FILTER_KEY = "PreFilter" + FIT
FREE_KEY = "DryRunFree" + FIT  # (free pod slots per row, [(resource, free minus request per row, reason)])
PRE_SCORE_KEY = "PreScore" + FIT
REASON_TOO_MANY_PODS = "Too many pods"
PODS = "pods"
_BASIC = (CPU, MEMORY, EPHEMERAL_STORAGE)

# (resource, requested amount, failure reason) in kube's fitsRequest order
Check = tuple[str, int, str]


def fit_checks(
    pod: PodInfo, ignored: frozenset[str] = frozenset(), ignored_groups: frozenset[str] = frozenset()
) -> tuple[Check, ...]:
    """The resources to compare for ``pod``: cpu, memory, ephemeral-storage, then scalar resources by name.

    Only positive requests are checked; ignored extended resources (by name or by the group before
    the "/") are left out; names kube does not track (neither basic nor scalar) are ignored.
    """
    req = pod.requests
    out: list[Check] = []
    for name in _BASIC:
        v = req.get(name, 0)
        if v > 0:
            out.append((name, v, f"Insufficient {name}"))
    for name in sorted(req):
        if name in _BASIC or name == PODS or not is_scalar_resource(name):
            continue
        v = req[name]
        if v <= 0:
            continue
        if is_extended_resource(name) and (name in ignored or name.split("/", 1)[0] in ignored_groups):
            continue
        out.append((name, v, f"Insufficient {name}"))
    return tuple(out)


def insufficient(node: NodeInfo, checks: tuple[Check, ...]) -> list[str]:
    """Failure reasons of one node, in kube's order (pods first)."""
    reasons = []
    if node.pod_count + 1 > node.allocatable(PODS):
        reasons.append(REASON_TOO_MANY_PODS)
    for name, amount, reason in checks:
        if amount > node.allocatable(name) - node.requested(name):
            reasons.append(reason)
    return reasons


def failed_checks(
    table: NodeTable, checks: tuple[Check, ...], rows: IntArray | None
) -> tuple[IntArray, npt.NDArray[np.bool_]]:
    """Per row of ``rows`` (None: every row) the bit set of failed checks (bit 0: too many pods, bit k:
    ``checks[k-1]``) and whether none failed."""
    n = table.size
    sel: slice | IntArray = slice(0, n) if rows is None else rows
    size = n if rows is None else len(rows)

    def column(columns: dict[str, IntArray], name: str) -> IntArray:
        col = columns.get(name)
        return np.zeros(size, dtype=np.int64) if col is None else col[:n][sel]

    allocatable, requested = table.allocatable, table.requested
    bits = (table.pod_count[:n][sel] >= column(allocatable, PODS)).astype(np.int64)  # len(pods)+1 > allowed
    for b, (name, amount, _) in enumerate(checks, start=1):
        short = (column(allocatable, name) - column(requested, name) < amount).astype(np.int64)
        short <<= b
        bits |= short
    return bits, bits == 0


def failed_checks_of_row(table: NodeTable, checks: tuple[Check, ...], row: int) -> tuple[int, bool]:
    """``failed_checks`` of one row."""
    allocatable, requested = table.allocatable, table.requested
    pods = allocatable.get(PODS)
    bits = 1 if table.pod_count.item(row) >= (0 if pods is None else pods.item(row)) else 0
    for b, (name, amount, _) in enumerate(checks, start=1):
        alloc = allocatable.get(name)
        used = requested.get(name)
        if (0 if alloc is None else alloc.item(row)) - (0 if used is None else used.item(row)) < amount:
            bits |= 1 << b
    return bits, bits == 0


class Fit(PodHoldingsFilter, ResourceAllocationScore):
    """Filter: every requested resource must fit in allocatable minus requested (Unschedulable); deleted pods
    free resources, new or resized nodes add them.

    Score: LeastAllocated (default), MostAllocated or RequestedToCapacityRatio over the configured resources.
    """

    name = FIT

    def __init__(self, args: NodeResourcesFitArgs) -> None:
        strategy = args.scoring_strategy
        super().__init__(
            strategy.resources, build_scorer(strategy), use_requested=False, pre_score_key=PRE_SCORE_KEY
        )
        self.args = args
        self._status_cache: dict[tuple[str, ...], Status] = {}
        self._combos: dict[tuple[Check, ...], list[Status]] = {}
        self._fit_columns = ColumnCache()
        self._checks_seen: dict[tuple[tuple[str, int], ...], tuple[Check, ...]] = {}

    def _status(self, reasons: tuple[str, ...]) -> Status:
        s = self._status_cache.get(reasons)
        if s is None:
            s = self._status_cache[reasons] = unschedulable(*reasons)
        return s

    # ----- filter --------------------------------------------------------------------------
    def _checks(self, state: CycleState, pod: PodInfo) -> tuple[Check, ...]:
        checks: tuple[Check, ...] | None = state.get(PRE_FILTER_KEY)
        if checks is None:
            checks = self._checks_of(pod)
        return checks

    def _checks_of(self, pod: PodInfo) -> tuple[Check, ...]:
        """:func:`fit_checks` of the pod, kept per request vector (pods of one shape share them)."""
        key = tuple(pod.requests.items())
        checks = self._checks_seen.get(key)
        if checks is None:
            if len(self._checks_seen) >= 1024:
                self._checks_seen.clear()
            checks = self._checks_seen[key] = fit_checks(
                pod, self.args.ignored_resources, self.args.ignored_resource_groups
            )
        return checks

    def pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Compute the pod's resource checks once per cycle."""
        state.write(PRE_FILTER_KEY, self._checks_of(pod))
        return None, SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Per-node form: every insufficient resource is a reason."""
        reasons = insufficient(node, self._checks(state, pod))
        return self._status(tuple(reasons)) if reasons else SUCCESS

    def _margins(
        self, state: CycleState, pod: PodInfo, table: NodeTable, row: int
    ) -> tuple[int, list[tuple[str, int, str]]]:
        """Free pod slots of ``row`` and, per checked resource, what is left once the pod is placed."""
        slots_col, per_check_cols = self._margin_columns(state, pod, table)
        return slots_col[row], [(name, col[row], reason) for name, col, reason in per_check_cols]

    def _margin_columns(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[list[int], list[tuple[str, list[int], str]]]:
        """Free pod slots and per-check margins of every row, computed once per cycle as plain ints."""
        cols: tuple[list[int], list[tuple[str, list[int], str]]] | None = state.get(FREE_KEY)
        if cols is None:
            n = table.size
            slots = (table.alloc(PODS) - table.pod_count[:n]).tolist()
            per_check = [
                (name, (table.alloc(name) - table.req(name) - amount).tolist(), reason)
                for name, amount, reason in self._checks(state, pod)
            ]
            cols = (slots, per_check)
            state.write(FREE_KEY, cols)
        return cols

    def dry_run_key(
        self, state: CycleState, pod: PodInfo, table: NodeTable, row: int, added: Sequence[PodInfo]
    ) -> Hashable:
        """Equal for two rows on which equal removals give equal statuses (free slots and margins)."""
        slots_col, per_check_cols = self._margin_columns(state, pod, table)
        if not added:
            return (slots_col[row], *(col[row] for _, col, _ in per_check_cols))
        return (
            slots_col[row] - len(added),
            *(col[row] - sum(p.requests.get(name, 0) for p in added) for name, col, _ in per_check_cols),
        )

    def dry_run_keys(
        self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Sequence[int]
    ) -> list[Hashable]:
        """``dry_run_key`` of each of ``rows`` with nothing added."""
        slots_col, per_check_cols = self._margin_columns(state, pod, table)
        columns = [slots_col, *(col for _, col, _ in per_check_cols)]
        return list(zip(*([col[r] for r in rows] for col in columns), strict=True))

    def fits_with_changes(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        row: int,
        removed: Sequence[PodInfo],
        added: Sequence[PodInfo],
    ) -> Status:
        """The Filter's status on ``row`` with ``removed`` gone and ``added`` placed, by arithmetic.

        A dry run asks many times per node within one cycle, while the table does not change: each row's
        free amounts are read from the table once per cycle."""
        slots, margins = self._margins(state, pod, table, row)
        reasons: list[str] = []
        if len(added) + 1 - len(removed) > slots:
            reasons.append(REASON_TOO_MANY_PODS)
        for name, margin, reason in margins:
            for p in removed:
                margin += p.requests.get(name, 0)
            for p in added:
                margin -= p.requests.get(name, 0)
            if margin < 0:
                reasons.append(reason)
        return self._status(tuple(reasons)) if reasons else SUCCESS

    def filter_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        """Batched form: one bit per failed check, one status per distinct combination.

        The bits of every row are kept per pod shape (see ColumnCache) and recomputed only where the table
        changed since the last pod of that shape."""
        checks = self._checks(state, pod)
        columns = self._fit_columns.columns(
            table,
            checks,
            lambda t, rows: failed_checks(t, checks, rows),
            lambda t, row: failed_checks_of_row(t, checks, row),
        )
        codes, passed = columns if columns is not None else failed_checks(table, checks, None)
        if np.count_nonzero(passed) == table.size:
            return Verdicts(passed)
        # a failed row's code is the bit set of its failed checks: it indexes one status per combination
        return Verdicts(passed, self._combination_statuses(checks), codes)

    def _combination_statuses(self, checks: tuple[Check, ...]) -> list[Status]:
        """One status per bit set of failed checks (index 0, no failure, is never used)."""
        statuses = self._combos.get(checks)
        if statuses is None:
            reasons_all = (REASON_TOO_MANY_PODS, *(c[2] for c in checks))
            statuses = [
                self._status(tuple(r for b, r in enumerate(reasons_all) if u >> b & 1))
                for u in range(1 << len(reasons_all))
            ]
            self._combos[checks] = statuses
        return statuses

    # ----- score ---------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, feasible: IntArray) -> Status:
        """The pod's (non-zero) requests for the scored resources."""
        state.write(PRE_SCORE_KEY, self.pod_requests(pod))
        return SUCCESS
