"""DefaultPreemption: the PostFilter plugin that frees a node for a pod by preempting lower-priority pods.

It follows kube-scheduler's preemption evaluator: check that the pod may preempt, dry-run preemption on
the nodes that failed with Unschedulable (from a random offset, until enough candidates are found), pick
one node by kube's criteria, then mark its victims DisruptionTarget and delete them (victims waiting at
Permit are rejected instead), drop the nominations of lower-priority pods on that node, and nominate the
node. Only real pods preempt and are preempted; reservation pseudo pods are neither.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from berth.api.errors import AlreadyExists, NotFound, StatusError
from berth.api.quantity import format_resource
from berth.api.reservation import (
    ANNOTATION_RESERVATION_ALLOCATED,
    allocated_annotation_value,
    parse_allocated,
    parse_rfc3339,
    reservation_requests,
)
from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.framework.plugin import Handle, NodeStatusMap, PostFilterResult
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import SUCCESS, Code, Status
from berth.scheduler.plugins.defaultpreemption import messages as m
from berth.scheduler.plugins.defaultpreemption.args import NAME, DefaultPreemptionArgs
from berth.scheduler.plugins.defaultpreemption.extenders import call_extenders
from berth.scheduler.plugins.defaultpreemption.memo import VictimMemo, request_key, request_signature
from berth.scheduler.plugins.defaultpreemption.pdb import PDB_KEY, Budget, BudgetCache
from berth.scheduler.plugins.defaultpreemption.reservation import (
    RESERVATION_KEY,
    pinned_node,
    preemption_reservation,
    reservation_name,
)
from berth.scheduler.plugins.defaultpreemption.selection import Candidate, pick_one_node, rank
from berth.scheduler.plugins.defaultpreemption.victims import (
    StartTimes,
    by_importance,
    is_candidate_victim,
    select_victims_on_node,
)

POD_KEY = ("", "Pod")
_UNSCHEDULABLE = Status(Code.UNSCHEDULABLE)
_NOT_HELPFUL = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (m.NOT_HELPFUL,))


def terminating_by_preemption(pod: Mapping[str, Any]) -> bool:
    """Whether ``pod`` is being deleted because the scheduler preempted it (kube's podTerminatingByPreemption)."""
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == m.DISRUPTION_TARGET:
            return bool(c.get("status") == "True" and c.get("reason") == m.REASON_PREEMPTION_BY_SCHEDULER)
    return False


def with_condition(
    conditions: Sequence[Mapping[str, Any]], new: dict[str, Any]
) -> tuple[list[Mapping[str, Any]], bool]:
    """``conditions`` with ``new`` set (kube's UpdatePodCondition) and whether anything changed.

    An existing condition of the same type and status keeps its lastTransitionTime.
    """
    out = list(conditions)
    for i, c in enumerate(out):
        if c.get("type") != new["type"]:
            continue
        if c.get("status") == new["status"]:
            new["lastTransitionTime"] = c.get("lastTransitionTime")
        same = all(
            c.get(k) == new.get(k)
            for k in ("status", "reason", "message", "lastProbeTime", "lastTransitionTime")
        )
        out[i] = new
        return out, not same
    out.append(new)
    return out, True


class DefaultPreemption:
    """kube's DefaultPreemption PostFilter plugin (plus Berth's reservation-backed preemption)."""

    name = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self._budgets = BudgetCache()
        self._reserved: dict[str, str] = {}  # preemptor uid → name of the reservation created for it
        # node name -> (its pods version, preemptor priority, potential victims in reprieve order, their
        # request signature)
        self._orders: dict[str, tuple[int, int, list[PodInfo], tuple[Hashable, ...]]] = {}
        # node name -> (its pods version, preemptor priority, preemptor requests, node key, candidate or
        # None, status): the dry-run outcome on the node, reused by later dry runs while the first four are
        # unchanged
        self._outcomes: dict[str, tuple[int, int, Hashable, Hashable, Candidate | None, Status]] = {}

    # ----- PostFilter --------------------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeStatusMap
    ) -> tuple[PostFilterResult | None, Status]:
        """Try to make room for ``pod`` by preempting lower-priority pods; nominate the node on success."""
        if pod.kind != "Pod":
            return None, _UNSCHEDULABLE  # pseudo pods (e.g. reserve pods) never preempt
        result, s = self.preempt(state, pod, statuses)
        if s.message:
            return result, Status(s.code, (m.PREFIX + s.message,))
        return result, s

    def preempt(
        self, state: CycleState, pod: PodInfo, statuses: NodeStatusMap
    ) -> tuple[PostFilterResult | None, Status]:
        """kube's Evaluator.Preempt, with its statuses unprefixed."""
        try:
            current = self.handle.client.get(POD_KEY, pod.namespace, pod.name)
        except NotFound as e:
            return None, Status(Code.ERROR, (str(e),))
        table = self.handle.node_table()
        ok, why = self.eligible(pod, current, table, statuses)
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, (why,))
        start = StartTimes(self._now)
        rows = potential_rows(table, statuses)
        if not rows:
            return self._no_candidates(pod, current, table.size, {})
        budgets = self.list_budgets()
        offset = self.handle.rng.randrange(len(rows))
        wanted = self.args.num_candidates(len(rows))
        candidates, failed, errors = self.dry_run(state, pod, table, rows, budgets, offset, wanted, start)
        if not candidates:
            if errors:
                return None, Status(Code.ERROR, (_aggregate(errors),))
            return self._no_candidates(pod, current, table.size, failed)
        candidates, s = call_extenders(self.handle, pod, candidates)
        if not s.is_success():
            return None, s
        best = pick_one_node(candidates, start)
        if best is None:
            return None, Status(Code.UNSCHEDULABLE, (m.NO_CANDIDATE,))
        s = self.prepare(best, pod)
        if not s.is_success():
            return None, s
        if self.args.reserve_preempted_resources:
            self.reserve(pod, best.node, best.victims.pods)
        return PostFilterResult(best.node, len(best.victims.pods)), SUCCESS

    def _no_candidates(
        self, pod: PodInfo, current: Mapping[str, Any], num_nodes: int, failed: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        # kube answers with an empty nomination, which clears the pod's nominatedNodeName
        if (current.get("status") or {}).get("nominatedNodeName"):
            self.handle.clear_nomination(pod)
        return PostFilterResult(""), Status(
            Code.UNSCHEDULABLE, (m.fit_error(num_nodes, failed, _NOT_HELPFUL),)
        )

    # ----- eligibility -------------------------------------------------------------------------------
    def eligible(
        self, pod: PodInfo, current: Mapping[str, Any], table: NodeTable, statuses: NodeStatusMap
    ) -> tuple[bool, str]:
        """kube's PodEligibleToPreemptOthers: (eligible, reason when not)."""
        if (current.get("spec") or {}).get("preemptionPolicy") == "Never":
            return False, m.NOT_ELIGIBLE_NEVER
        nominated = (current.get("status") or {}).get("nominatedNodeName") or ""
        if nominated:
            if statuses.get(nominated).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            row = table.index.get(nominated)
            if row is not None:
                for p in table.pods[row].values():
                    if is_candidate_victim(p, pod) and terminating_by_preemption(p.obj):
                        return False, m.NOT_ELIGIBLE_TERMINATING
        return True, ""

    # ----- dry run -----------------------------------------------------------------------------------
    def dry_run(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        rows: Sequence[int],
        budgets: Sequence[Budget],
        offset: int,
        wanted: int,
        start: StartTimes,
    ) -> tuple[list[Candidate], dict[str, Status], list[Status]]:
        """kube's DryRunPreemption, one node after another from ``offset``: (candidates without PDB
        violations then with, the statuses of the nodes that are no candidates, the errors)."""
        clean: list[Candidate] = []
        violating: list[Candidate] = []
        failed: dict[str, Status] = {}
        errors: list[Status] = []
        handle = self.handle
        memo = VictimMemo()
        # a node's outcome holds until a pod comes or goes there or its key changes, while no budget
        # (whose standing changes without the node's pods changing) is involved
        remember = not budgets
        outcomes = self._outcomes
        requests = request_key(pod)  # node keys hold margins, not which resources they are of
        if len(outcomes) > 4 * table.size + 1024:
            outcomes.clear()
        k = len(rows)
        chunk = max(wanted, 64)
        keys: list[Hashable | None] = []
        for i in range(k):
            if i == len(keys):  # node keys for the next nodes in visiting order, computed together
                keys += handle.dry_run_keys(
                    state, pod, [rows[(offset + j) % k] for j in range(i, min(k, i + chunk))]
                )
            row = rows[(offset + i) % k]
            node = table.names[row]
            key = keys[i]
            version = table.pods_version(node)
            known = outcomes.get(node) if remember and key is not None else None
            if known is not None and known[:4] == (version, pod.priority, requests, key):
                candidate, s = known[4], known[5]
            else:
                node_pods = table.pods[row].values()
                ordered, signature = self._ordered(table, row, pod, start)
                lookup = memo.lookup(key, pod, node_pods, budgets, start, ordered, signature)
                found = memo.get(lookup)
                if found is None:

                    def fits_without(removed: Sequence[PodInfo], node: str = node) -> Status:
                        return handle.filter_with_changes(state, pod, node, removed)

                    found = select_victims_on_node(pod, node_pods, fits_without, budgets, start)
                    memo.put(lookup, found)
                victims, s = found
                candidate = None
                if s.is_success() and victims is not None and victims.pods:
                    candidate = Candidate(node, victims, rank(victims, start))
                if remember and key is not None and s.code != Code.ERROR and start.all_known(ordered):
                    outcomes[node] = (version, pod.priority, requests, key, candidate, s)
            if candidate is not None:
                bucket = clean if candidate.victims.num_pdb_violations == 0 else violating
                if len(bucket) < wanted:
                    bucket.append(candidate)
                if clean and len(clean) + len(violating) >= wanted:
                    break
                continue
            if s.is_success():
                s = Status(Code.ERROR, (m.no_victim_error(node),))
            if s.code == Code.ERROR:
                errors.append(s)
            failed[node] = s
        return clean + violating, failed, errors

    def _ordered(
        self, table: NodeTable, row: int, pod: PodInfo, start: StartTimes
    ) -> tuple[list[PodInfo], tuple[Hashable, ...]]:
        """The potential victims of ``pod`` on ``row`` from most to least important with their
        ``request_signature``, remembered per node and preemptor priority until a pod comes or goes there
        (when every one of them has started)."""
        name = table.names[row]
        version = table.pods_version(name)
        hit = self._orders.get(name)
        if hit is not None and hit[0] == version and hit[1] == pod.priority:
            return hit[2], hit[3]
        ordered = by_importance([p for p in table.pods[row].values() if is_candidate_victim(p, pod)], start)
        signature = request_signature(ordered)
        if start.all_known(ordered):
            self._orders[name] = (version, pod.priority, ordered, signature)
        return ordered, signature

    # ----- acting on the chosen node -----------------------------------------------------------------
    def prepare(self, candidate: Candidate, pod: PodInfo) -> Status:
        """kube's prepareCandidate: preempt each victim, then drop lower-priority nominations on the node."""
        for victim in candidate.victims.pods:
            if (victim.obj.get("metadata") or {}).get("deletionTimestamp"):
                continue  # graceful deletion already started
            s = self.preempt_pod(victim, pod, candidate.node)
            if not s.is_success():
                return s
        for other in self.handle.nominated_pods(candidate.node):
            if other.priority < pod.priority:
                self.handle.clear_nomination(other)
        return SUCCESS

    def preempt_pod(self, victim: PodInfo, preemptor: PodInfo, node: str) -> Status:
        """Reject ``victim`` if it waits at Permit, else mark it DisruptionTarget and delete it; then the
        ``Preempted`` event."""
        handle = self.handle
        event_obj: Mapping[str, Any] = victim.obj
        waiting = handle.get_waiting_pod(victim.uid)
        if waiting is not None:
            waiting.reject(NAME, m.PREEMPTED_MESSAGE)
        else:
            client = handle.client
            try:
                current = client.get(POD_KEY, victim.namespace, victim.name)
                if (current.get("metadata") or {}).get("uid") != victim.uid:
                    return SUCCESS  # the victim is gone (a new pod took its name)
                conditions, changed = with_condition(
                    (current.get("status") or {}).get("conditions") or (),
                    {
                        "type": m.DISRUPTION_TARGET,
                        "status": "True",
                        "lastProbeTime": None,
                        "lastTransitionTime": self._timestamp(),
                        "reason": m.REASON_PREEMPTION_BY_SCHEDULER,
                        "message": m.condition_message(preemptor.scheduler_name),
                    },
                )
                if changed:
                    current = client.patch(
                        POD_KEY,
                        victim.namespace,
                        victim.name,
                        {"status": {"conditions": conditions}},
                        subresource="status",
                    )
                client.delete(POD_KEY, victim.namespace, victim.name)
            except NotFound:
                return SUCCESS  # already deleted
            except StatusError as e:
                return Status(Code.ERROR, (str(e),))
            event_obj = current
        handle.record_event(
            event_obj, "Normal", m.EVENT_REASON, m.event_message(preemptor.uid, node), action=m.EVENT_ACTION
        )
        return SUCCESS

    def reserve(self, pod: PodInfo, node: str, victims: Sequence[PodInfo] = ()) -> None:
        """Create (or move to ``node``) the Reservation holding the freed room for ``pod``.

        It is bound at once, like a pre-allocating reservation: phase Waiting on ``node`` with the victims
        as the pods whose resources it takes over (they carry its reservation-allocated annotation), so the
        room is held from the moment the victims leave and the controller makes it Available then."""
        client = self.handle.client
        if victims and all(parse_allocated(v.obj) is not None for v in victims):
            return  # the victims' room is already promised to another reservation (an earlier preemption)
        victims = [v for v in victims if parse_allocated(v.obj) is None]
        obj = preemption_reservation(pod, node)
        try:
            try:
                created = client.create(obj)
                self._reserved[pod.uid] = reservation_name(pod)
                self._bind_waiting(created, node, victims)
                return
            except AlreadyExists:
                pass
            self._reserved[pod.uid] = reservation_name(pod)
            existing = client.get(RESERVATION_KEY, "", reservation_name(pod))
            if pinned_node(existing) != node:
                client.delete(RESERVATION_KEY, "", reservation_name(pod))
                client.create(obj)
        except StatusError as e:
            self.handle.record_event(
                pod.obj,
                "Warning",
                "FailedReservation",
                f"failed to reserve the preempted resources on node {node}: {e}",
                action=m.EVENT_ACTION,
            )

    def _bind_waiting(self, reservation: Mapping[str, Any], node: str, victims: Sequence[PodInfo]) -> None:
        client = self.handle.client
        meta = reservation.get("metadata") or {}
        value = allocated_annotation_value(str(meta.get("name", "")), str(meta.get("uid", "")))
        for v in victims:
            with contextlib.suppress(NotFound):
                client.patch(
                    POD_KEY,
                    v.namespace,
                    v.name,
                    {"metadata": {"annotations": {ANNOTATION_RESERVATION_ALLOCATED: value}}},
                )
        now = self._timestamp()
        conditions: list[dict[str, Any]] = [
            {
                "type": "Scheduled",
                "status": "True",
                "reason": "Scheduled",
                "lastProbeTime": now,
                "lastTransitionTime": now,
            }
        ]
        if not victims:
            conditions.append(
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Available",
                    "lastProbeTime": now,
                    "lastTransitionTime": now,
                }
            )
        status: dict[str, Any] = {
            "phase": "Waiting" if victims else "Available",
            "nodeName": node,
            "allocatable": {
                r: format_resource(r, q) for r, q in sorted(reservation_requests(reservation).items())
            },
            "conditions": conditions,
        }
        client.update_status({**reservation, "status": status})

    # ----- following the preemptors ------------------------------------------------------------------
    def watched_kinds(self) -> tuple[str, ...]:
        """Pods, when preempted resources are reserved (to drop reservations their owner did not use)."""
        return ("Pod",) if self.args.reserve_preempted_resources else ()

    def on_object_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """Once a preemptor is bound (or gone) without allocating its reservation, delete the reservation."""
        if not self._reserved:
            return
        meta = obj.get("metadata") or {}
        name = self._reserved.get(meta.get("uid") or "")
        if name is None:
            return
        if type_ != "DELETED" and not (obj.get("spec") or {}).get("nodeName"):
            return
        del self._reserved[meta["uid"]]
        allocated = parse_allocated(obj) if type_ != "DELETED" else None
        if allocated is not None and allocated[0] == name:
            return  # the preemptor took its reservation; allocateOnce ends it
        # gone already, or refused: the reservation controller's TTL ends it then
        with contextlib.suppress(StatusError):
            self.handle.client.delete(RESERVATION_KEY, "", name)

    # ----- helpers -----------------------------------------------------------------------------------
    def list_budgets(self) -> list[Budget]:
        """The cluster's PodDisruptionBudgets, compiled (none when the API has no such kind)."""
        try:
            objs, _ = self.handle.client.list(PDB_KEY)
        except NotFound:  # the API serves no PodDisruptionBudgets
            return []
        return self._budgets.compile(objs)

    def _timestamp(self) -> str:
        return self.handle.client.timestamp()

    def _now(self) -> float:
        return parse_rfc3339(self._timestamp()).timestamp()


def potential_rows(table: NodeTable, statuses: NodeStatusMap) -> list[int]:
    """Rows of the nodes whose filter status is Unschedulable (preemption might help), in table order."""
    return statuses.rows_with_code(Code.UNSCHEDULABLE, table.index, table.size)


def _aggregate(errors: Sequence[Status]) -> str:
    """kube's utilerrors aggregate text."""
    msgs = [e.message for e in errors]
    return msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
