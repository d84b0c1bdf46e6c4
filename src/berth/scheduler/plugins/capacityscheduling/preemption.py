"""Quota-aware preemption: CapacityScheduling's PostFilter (scheduler-plugins' preemptor).

Which pods a preemptor may take room from depends on its quota:

* over its min with the pod (and its namespace's equal-or-higher-priority nominated pods): only
  lower-priority pods of its own namespace;
* within its min: pods of other quota'd namespaces that use more than their min, whatever their priority;
* a preemptor without a quota: lower-priority pods of namespaces without a quota.

Pods of namespaces without a quota are never victims of a quota'd preemptor. Victims are chosen per node as
kube does (remove all, then reprieve from the most important, PDB-violating first), a reprieve also failing
when it would take the preemptor's quota over max or the quotas over their total min (for a preemptor that
borrows, leaving the unused min other quotas' pending pods want, as PreFilter does). Every node is a
candidate; the node is picked and its victims preempted as DefaultPreemption does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from berth.api.errors import NotFound
from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.framework.plugin import Handle, NodeStatusMap, PostFilterResult
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import SUCCESS, Code, Status
from berth.scheduler.plugins.capacityscheduling.quota import PreFilterState, QuotaBook, QuotaLedger
from berth.scheduler.plugins.defaultpreemption import messages as m
from berth.scheduler.plugins.defaultpreemption.args import parse_default_preemption_args
from berth.scheduler.plugins.defaultpreemption.extenders import call_extenders
from berth.scheduler.plugins.defaultpreemption.pdb import Budget, split_by_pdb_violation
from berth.scheduler.plugins.defaultpreemption.plugin import DefaultPreemption, potential_rows
from berth.scheduler.plugins.defaultpreemption.selection import Candidate, pick_one_node
from berth.scheduler.plugins.defaultpreemption.victims import FitsWithout, StartTimes, Victims, by_importance

POD_KEY = ("", "Pod")
MSG_GLOBAL_MAX = "global quota max exceeded"
_NOT_HELPFUL = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (m.NOT_HELPFUL,))


def no_victims_message(node: str, pod: PodInfo) -> str:
    """The status of a node without any potential victim for ``pod``."""
    return f"No victims found on node {node} for preemptor pod {pod.name}"


def potential_victims(
    pod: PodInfo,
    node_pods: Iterable[PodInfo],
    book: QuotaBook,
    pfs: PreFilterState,
    over_min_cache: dict[str, bool] | None = None,
) -> list[PodInfo]:
    """The pods of one node ``pod`` may preempt, by the quota rules of the module docstring
    (``over_min_cache`` remembers which namespaces use more than their min, across the nodes of one attempt)."""
    infos = book.infos
    cache = over_min_cache if over_min_cache is not None else {}
    out: list[PodInfo] = []
    if pod.namespace in infos:
        over_min = book.staying_over_min_with(pod.namespace, pfs.in_quota)
        for p in node_pods:
            if p.kind != "Pod" or p.namespace not in infos or _terminating(p):
                continue
            if over_min:
                if p.namespace == pod.namespace and p.priority < pod.priority:
                    out.append(p)
            elif p.namespace != pod.namespace:
                over = cache.get(p.namespace)
                if over is None:
                    over = cache[p.namespace] = book.staying_over_min(p.namespace)
                if over:
                    out.append(p)
    else:
        for p in node_pods:
            if (
                p.kind == "Pod"
                and p.namespace not in infos
                and p.priority < pod.priority
                and not _terminating(p)
            ):
                out.append(p)
    return out


def _terminating(pod: PodInfo) -> bool:
    """Whether the pod is already being deleted: never a victim again (its room is promised to whoever
    evicted it), and left out of its quota's usage when deciding who is over min."""
    return bool((pod.obj.get("metadata") or {}).get("deletionTimestamp"))


def select_quota_victims(
    pod: PodInfo,
    node: str,
    node_pods: Iterable[PodInfo],
    fits_without: FitsWithout,
    book: QuotaBook,
    pfs: PreFilterState,
    budgets: Sequence[Budget],
    start: StartTimes,
    over_min_cache: dict[str, bool] | None = None,
) -> tuple[Victims | None, Status]:
    """The victims on one node for ``pod`` (scheduler-plugins' SelectVictimsOnNode)."""
    node_pods = list(node_pods)
    potential = potential_victims(pod, node_pods, book, pfs, over_min_cache)
    if not potential:
        return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (no_victims_message(node, pod),))
    # pods being deleted are leaving: the dry run counts their room as free (the nominated pods that
    # preempted them are counted on the node instead)
    leaving = [p for p in node_pods if _terminating(p)]
    s = fits_without(potential + leaving)
    if not s.is_success():
        return None, s
    ledger = QuotaLedger(book)
    for p in potential:
        ledger.change(p.namespace, p.uid, -1)
    quota_ns = pod.namespace if pod.namespace in book.infos else None
    # a pod PreFilter judged a borrower leaves other quotas the unused min their pending pods want, as
    # there: the victims must make room for what PreFilter will ask next time
    guarded = pfs.guarded if quota_ns is not None else None
    if quota_ns is not None and (
        ledger.used_over_max_with(quota_ns, pfs.request)
        or ledger.aggregated_over_min_with(pfs.request)
        or (guarded is not None and ledger.aggregated_over_min_with(guarded))
    ):
        return None, Status(Code.UNSCHEDULABLE, (MSG_GLOBAL_MAX,))
    aggregate = pfs.total if guarded is None else guarded
    ordered = by_importance(potential, start)
    violating, fine = split_by_pdb_violation(ordered, budgets)
    removed: dict[str, PodInfo] = {p.uid: p for p in ordered}
    victims: list[PodInfo] = []

    def reprieve(p: PodInfo) -> bool:
        del removed[p.uid]
        ledger.change(p.namespace, p.uid, 1)
        s = fits_without(list(removed.values()) + leaving)
        if s.code == Code.ERROR:
            raise _DryRunError(s)
        fits = s.is_success()
        if fits and quota_ns is not None:
            fits = not (
                ledger.used_over_max_with(quota_ns, pfs.in_quota)
                or ledger.aggregated_over_min_with(aggregate)
            )
        if not fits:
            removed[p.uid] = p
            ledger.change(p.namespace, p.uid, -1)
            victims.append(p)
        return fits

    num_violating = 0
    try:
        for p in violating:
            if not reprieve(p):
                num_violating += 1
        for p in fine:
            reprieve(p)
    except _DryRunError as e:
        return None, e.status
    if not victims:
        if leaving or any(v > 0 for v in book.total_leaving.values()):
            # it fits once pods being deleted (here, or elsewhere in quotas) are gone: nothing to preempt
            # here, it waits for them
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (no_victims_message(node, pod),))
        return None, Status(Code.ERROR, (m.no_victim_error(node),))
    if violating and fine:
        victims = by_importance(victims, start)
    return Victims(tuple(victims), num_violating), SUCCESS


class _DryRunError(Exception):
    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


class QuotaPreemption:
    """The preemption evaluator with the quota-aware victim rules; acting on the chosen node is
    DefaultPreemption's (DisruptionTarget condition, deletion, Preempted event, nominations)."""

    def __init__(self, handle: Handle, book: QuotaBook, nodes_of: Callable[[str], Iterable[str]]) -> None:
        self.handle = handle
        self.book = book
        self._nodes_of = nodes_of
        self._actor = DefaultPreemption(parse_default_preemption_args({}), handle)

    def preempt(
        self, state: CycleState, pod: PodInfo, statuses: NodeStatusMap, pfs: PreFilterState
    ) -> tuple[PostFilterResult | None, Status]:
        """kube's Evaluator.Preempt with every node a candidate (offset 0, all of them)."""
        if pod.kind != "Pod":
            return None, Status(Code.UNSCHEDULABLE)
        try:
            current = self.handle.client.get(POD_KEY, pod.namespace, pod.name)
        except NotFound as e:
            return None, Status(Code.ERROR, (str(e),))
        table = self.handle.node_table()
        ok, why = self.eligible(pod, current, table, statuses, pfs)
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, (why,))
        rows = potential_rows(table, statuses)
        holding = self._rows_with_potential_victims(pod, pfs, table)
        start = StartTimes(self._actor._now)
        clean: list[Candidate] = []
        violating: list[Candidate] = []
        failed: dict[str, Status] = {}
        errors: list[Status] = []
        budgets = self._actor.list_budgets() if rows else []
        over_min_cache: dict[str, bool] = {}
        for row in rows:
            node = table.names[row]
            if holding is not None and row not in holding:
                failed[node] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (no_victims_message(node, pod),))
                continue

            def fits_without(removed: Sequence[PodInfo], node: str = node) -> Status:
                return self.handle.filter_with_changes(state, pod, node, removed)

            victims, s = select_quota_victims(
                pod,
                node,
                table.pods[row].values(),
                fits_without,
                self.book,
                pfs,
                budgets,
                start,
                over_min_cache,
            )
            if s.is_success() and victims is not None:
                (clean if victims.num_pdb_violations == 0 else violating).append(Candidate(node, victims))
                continue
            if s.code == Code.ERROR:
                errors.append(s)
            failed[node] = s
        candidates = clean + violating
        if not candidates:
            if errors:
                msgs = [e.message for e in errors]
                return None, Status(Code.ERROR, (msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]",))
            if (current.get("status") or {}).get("nominatedNodeName"):
                self.handle.clear_nomination(pod)
            return PostFilterResult(""), Status(
                Code.UNSCHEDULABLE, (m.fit_error(table.size, failed, _NOT_HELPFUL),)
            )
        candidates, s = call_extenders(self.handle, pod, candidates)
        if not s.is_success():
            return None, s
        best = pick_one_node(candidates, start)
        if best is None:
            return None, Status(Code.UNSCHEDULABLE, (m.NO_CANDIDATE,))
        s = self._actor.prepare(best, pod)
        if not s.is_success():
            return None, s
        return PostFilterResult(best.node, len(best.victims.pods)), SUCCESS

    def _rows_with_potential_victims(
        self, pod: PodInfo, pfs: PreFilterState, table: NodeTable
    ) -> set[int] | None:
        """The rows that may hold a potential victim of a quota'd preemptor: those running counted pods of
        its own namespace (when it would exceed its min) or of the other namespaces over their min; None
        (every row) for a preemptor without a quota."""
        book = self.book
        if pod.namespace not in book.infos:
            return None
        if book.staying_over_min_with(pod.namespace, pfs.in_quota):
            namespaces = [pod.namespace]
        else:
            namespaces = [ns for ns in book.infos if ns != pod.namespace and book.staying_over_min(ns)]
        index = table.index
        rows: set[int] = set()
        for ns in namespaces:
            for node in self._nodes_of(ns):
                row = index.get(node)
                if row is not None:
                    rows.add(row)
        return rows

    def eligible(
        self,
        pod: PodInfo,
        current: Mapping[str, Any],
        table: NodeTable,
        statuses: NodeStatusMap,
        pfs: PreFilterState,
    ) -> tuple[bool, str]:
        """scheduler-plugins' PodEligibleToPreemptOthers: (eligible, reason when not)."""
        if (current.get("spec") or {}).get("preemptionPolicy") == "Never":
            return False, m.NOT_ELIGIBLE_NEVER
        nominated = (current.get("status") or {}).get("nominatedNodeName") or ""
        if not nominated:
            return True, ""
        if statuses.get(nominated).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return True, ""
        row = table.index.get(nominated)
        if row is None:
            return True, ""
        book = self.book
        infos = book.infos
        if pod.namespace in infos:
            over_min = book.used_over_min_with(pod.namespace, pfs.in_quota)
            for p in table.pods[row].values():
                if not _terminating(p) or p.namespace not in infos:
                    continue
                if p.namespace == pod.namespace and p.priority < pod.priority:
                    return False, m.NOT_ELIGIBLE_TERMINATING
                if p.namespace != pod.namespace and not over_min and book.used_over_min(p.namespace):
                    return False, m.NOT_ELIGIBLE_TERMINATING
        else:
            for p in table.pods[row].values():
                if p.namespace in infos:
                    continue
                if _terminating(p) and p.priority < pod.priority:
                    return False, m.NOT_ELIGIBLE_TERMINATING
        return True, ""
