"""Koordinator's Reservation plugin: schedules reserve pods and lets owner pods allocate reserved resources.

Reserve pods go through every filter and score plugin of their profile; once bound, the reservation
holds its node's resources (see model.py). An owner pod sees, on each node, the remainder of one
nominated matching reservation as free (a per-cycle overlay), scores nodes by how full that
reservation would become, and on Reserve is accounted to it; PreBind writes the
``reservation-allocated`` annotation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from berth.api.conditions import probe_condition
from berth.api.errors import InvalidObjectError, NotFound
from berth.api.quantity import format_resource
from berth.api.reservation import (
    ANNOTATION_RESERVATION_ALLOCATED,
    ReservationAffinity,
    allocated_annotation_value,
    is_reservation_ignored,
    parse_allocated,
    parse_exact_match,
    parse_reservation_affinity,
)
from berth.api.resources import pod_requests
from berth.api.taints import Taint, Toleration
from berth.scheduler.framework.config import ConfigError
from berth.scheduler.framework.cycle_state import (
    BINDING_ANNOTATIONS_KEY,
    CycleState,
    Overlay,
    OverlayLineage,
)
from berth.scheduler.framework.nodetable import BoolArray, IntArray, NodeInfo, NodeTable
from berth.scheduler.framework.plugin import (
    MAX_NODE_SCORE,
    ClusterEvent,
    Handle,
    NodeStatusMap,
    PostFilterResult,
    PreFilterResult,
    Verdicts,
    default_normalize,
)
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import SUCCESS, Code, Status
from berth.scheduler.plugins.reservation.diagnosis import (
    REASON_PREFIX,
    diagnose,
    exact_match,
    node_reason_counts,
    post_filter_reasons,
    refusal,
)
from berth.scheduler.plugins.reservation.model import (
    ANNOTATION_RESERVATION_NODE,
    RESERVATION_KIND,
    ReservationIndex,
    ReservationInfo,
    SharedReservations,
    reserve_pod_info,
)

NAME = "Reservation"
STATE_KEY = "Reservation/state"
ERR_AFFINITY = "node(s) no reservations match reservation affinity"
ERR_POLICY_CONFLICT = "node(s) reservation allocate policy conflict"
ERR_NODE_NAME = "node(s) didn't match the nodeName specified by reservation"
ERR_NO_FIT = "node(s) no reservation(s) to meet the requirements"
MOST_PREFERRED_SCORE = 1000
NOTE_LENGTH_LIMIT = 1024
RESERVATION_KEY = ("scheduling.koordinator.sh", "Reservation")
_NO_ROWS: IntArray = np.zeros(0, dtype=np.int64)
_NO_ROWS.flags.writeable = False
POD_KEY = ("", "Pod")


@dataclass(frozen=True, slots=True)
class ReservationArgs:
    """ReservationArgs as Koordinator's scheduler configuration spells them."""

    enable_preemption: bool = False
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100
    enable_cluster_mode: bool = False
    cluster_label_key: str = "pod.koordinator.sh/is-pre-allocatable"
    cluster_priority_annotation_key: str = "pod.koordinator.sh/pre-allocatable-priority"
    prefer_no_pre_allocated_pods: bool = False

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> ReservationArgs:
        """Read the pluginConfig args (unknown fields are refused)."""
        known = {
            "enablePreemption",
            "minCandidateNodesPercentage",
            "minCandidateNodesAbsolute",
            "preAllocationConfig",
            "controllerWorkers",
            "disableGarbageCollection",
            "gcDurationSeconds",
            "gcIntervalSeconds",
            "resyncIntervalSeconds",
        }
        for k in args:
            if k not in known:
                raise ConfigError(f'{NAME}: {k}: Invalid value: unknown field "{k}"')
        pre = args.get("preAllocationConfig") or {}
        if not isinstance(pre, Mapping):
            raise ConfigError(f"{NAME}: preAllocationConfig: Invalid value: must be an object")
        defaults = cls()
        return cls(
            enable_preemption=bool(args.get("enablePreemption", False)),
            min_candidate_nodes_percentage=int(args.get("minCandidateNodesPercentage", 10)),
            min_candidate_nodes_absolute=int(args.get("minCandidateNodesAbsolute", 100)),
            enable_cluster_mode=bool(pre.get("enableClusterMode", False)),
            cluster_label_key=str(pre.get("clusterLabelKey") or defaults.cluster_label_key),
            cluster_priority_annotation_key=str(
                pre.get("clusterPriorityAnnotationKey") or defaults.cluster_priority_annotation_key
            ),
            prefer_no_pre_allocated_pods=bool(pre.get("preferNoPreAllocatedPods", False)),
        )


class _NominationCache:
    """For pods with equal requests: fit of every reservation and the dense overlay, kept incrementally."""

    __slots__ = (
        "dense",
        "dense_all",
        "fits",
        "index_epoch",
        "layout",
        "lineage",
        "n",
        "node_version",
        "pods",
        "score_by_row",
        "table_epoch",
        "table_pos",
        "usage_pos",
    )

    def __init__(self, index: ReservationIndex, table: NodeTable, fits: BoolArray) -> None:
        self.fits = fits
        self.index_epoch = index.epoch
        self.layout = table.layout
        self.node_version = table.node_version
        self.n = table.size
        self.table_epoch = table.change_epoch
        self.table_pos = len(table.change_log)
        self.usage_pos = len(index.usage_log)
        self.dense: dict[str, IntArray] | None = None
        self.pods: IntArray | None = None
        self.dense_all = False
        self.lineage: OverlayLineage | None = None  # the versions of ``dense``: one per rebuild
        self.score_by_row: IntArray | None = None

    def valid_for(self, index: ReservationIndex, table: NodeTable) -> bool:
        """Whether the arrays still line up with the index and the table."""
        return (
            self.index_epoch == index.epoch
            and self.layout == table.layout
            and self.node_version == table.node_version
            and self.n == table.size
        )

    def mark(self, index: ReservationIndex, table: NodeTable) -> None:
        """Remember how far the change logs have been read."""
        self.table_epoch = table.change_epoch
        self.table_pos = len(table.change_log)
        self.usage_pos = len(index.usage_log)


class _PodState:
    """What PreFilter worked out for one owner pod: per node row, the nominated reservation."""

    __slots__ = (
        "affinity",
        "any_nominee",
        "dense_k",
        "dense_ok",
        "detailed",
        "fit_reasons",
        "matched_rows",
        "nominee_k",
        "preferred_row",
        "rows",
        "score_by_row",
    )

    def __init__(self, affinity: ReservationAffinity | None) -> None:
        self.affinity = affinity
        self.detailed = bool(affinity is not None and affinity.name)
        self.rows: IntArray = _NO_ROWS  # sorted node rows whose nominee the pod fits
        self.nominee_k: IntArray = _NO_ROWS  # reservation index per row
        self.matched_rows: IntArray = _NO_ROWS
        self.any_nominee = False
        # fast path: reservation index per node row and which reservations the pod fits
        self.dense_k: IntArray | None = None
        self.dense_ok: BoolArray | None = None
        self.fit_reasons: dict[int, tuple[str, ...]] = {}  # rows with matches but no fitting reservation
        self.preferred_row = -1
        self.score_by_row: IntArray | None = None  # precomputed Score per node row (fast path)

    def nominee_at(self, row: int) -> int:
        """Reservation index nominated on ``row`` (-1 if none)."""
        if self.dense_k is not None and self.dense_ok is not None:
            k = int(self.dense_k[row]) if 0 <= row < self.dense_k.size else -1
            return k if k >= 0 and bool(self.dense_ok[k]) else -1
        j = int(np.searchsorted(self.rows, row))
        if j < self.rows.size and int(self.rows[j]) == row:
            return int(self.nominee_k[j])
        return -1


def _tolerated(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> bool:
    return all(any(t.tolerates(taint) for t in tolerations) for taint in taints)


class Reservation:
    """The Reservation plugin (PreFilter, Filter, PostFilter, PreScore, Score, Reserve, PreBind; schedules reserve pods)."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = ReservationArgs.parse(args)
        self.handle = handle
        self.profile = str(getattr(handle, "profile_name", "default-scheduler"))
        # the reservations, their owners and usage (and so their virtual pods) are kept once per scheduler
        # by the instances of equal args (none of which the state depends on today: a conservative key)
        shared = getattr(handle, "shared", None)  # (test stand-ins of the handle may lack it)
        self.shared = (
            shared((NAME, self.args), SharedReservations) if shared is not None else SharedReservations()
        )
        self.follows_events = self.shared.claim(self)
        self.index = self.shared.index
        self._nomination_cache: dict[tuple[tuple[str, int], ...], _NominationCache] = {}
        self.pending: dict[str, Mapping[str, Any]] = {}  # uid -> Pending reservation of this profile
        handle.register_pseudo_kind(RESERVATION_KIND, self)

    # ----- informers -----------------------------------------------------------------------
    def watched_kinds(self) -> tuple[str, ...]:
        """Reservations, and pods (to follow owners)."""
        return (RESERVATION_KIND, "Pod")

    def on_object_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """Track reservations and their owners (the shared state through one instance only; each instance
        its profile's Pending reservations)."""
        if obj.get("kind") == RESERVATION_KIND:
            self._on_reservation(type_, obj)
        elif self.follows_events:
            self._on_pod(type_, obj)

    def _on_reservation(self, type_: str, obj: Mapping[str, Any]) -> None:
        uid = obj["metadata"].get("uid", "")
        status = obj.get("status") or {}
        phase = status.get("phase") or "Pending"
        node = status.get("nodeName") or ""
        infos = self.index.infos
        if type_ == "DELETED" or phase in ("Succeeded", "Failed"):
            self.pending.pop(uid, None)
            self.handle.dequeue(uid)
            if not self.follows_events:
                return
            gone = infos.pop(uid, None)
            if gone is not None:
                self.index.count_policy(gone, -1)
                self.index.mark_dirty()
            self.handle.remove_virtual_pod(uid)
            return
        if phase in ("Available", "Waiting") and node:
            self.pending.pop(uid, None)
            self.handle.dequeue(uid)
            if not self.follows_events:
                return
            info = infos.get(uid)
            if info is None:
                info = infos[uid] = ReservationInfo(obj)
                self._adopt_owners(info)
            elif _same_shape(info.obj, obj):
                info.obj = obj  # a status write (e.g. allocated) that changes nothing the plugin uses
                return
            else:
                self.index.count_policy(info, -1)
                info.refresh(obj)
            self.index.count_policy(info, 1)
            self.index.mark_dirty()
            self.handle.set_virtual_pod(info.virtual_pod(), info.node)
            return
        # Pending: schedule its reserve pod if this profile owns it
        template_spec = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        if (template_spec.get("schedulerName") or "default-scheduler") != self.profile:
            return
        self.pending[uid] = obj
        self.handle.enqueue(reserve_pod_info(obj))

    def _on_pod(self, type_: str, pod: Mapping[str, Any]) -> None:
        meta = pod["metadata"]
        ref = (
            parse_allocated(pod)
            if ANNOTATION_RESERVATION_ALLOCATED in (meta.get("annotations") or {})
            else None
        )
        if ref is None:
            return
        info = self.index.infos.get(ref[1])
        if info is None:
            return
        uid = meta.get("uid", "")
        phase = (pod.get("status") or {}).get("phase")
        gone = type_ == "DELETED" or phase in ("Succeeded", "Failed")
        if gone:
            if info.owners.pop(uid, None) is not None:
                self._usage_changed(info)
            return
        if (pod.get("spec") or {}).get("nodeName") == info.node and uid not in info.owners:
            # PodInfo(pod).requests, without compiling the rest of a PodInfo
            info.owners[uid] = info.masked(pod_requests(pod))
            self._usage_changed(info)

    def _adopt_owners(self, info: ReservationInfo) -> None:
        """Owners already bound on the node (e.g. pre-allocated pods annotated before the reservation updated)."""
        table = self.handle.node_table()
        row = table.index.get(info.node)
        if row is None:
            return
        for p in table.pods[row].values():
            if p.kind != "Pod" or p.uid in info.owners:
                continue
            ref = parse_allocated(p.obj)
            phase = (p.obj.get("status") or {}).get("phase")
            if ref is not None and ref[1] == info.uid and phase not in ("Succeeded", "Failed"):
                info.owners[p.uid] = info.masked(p.requests)

    def _usage_changed(self, info: ReservationInfo) -> None:
        """The owners of ``info`` changed: its usage in the index and its virtual pod's requests (changed in
        place; a new virtual pod only if none is counted for it on its node)."""
        allocated = info.allocated()
        self.index.update_usage(info, allocated)
        requests, nonzero_cpu, nonzero_memory = info.held(allocated)
        pod = self.handle.resize_virtual_pod(info.uid, info.node, requests, nonzero_cpu, nonzero_memory)
        if pod is None:
            self.handle.set_virtual_pod(info.virtual_pod(allocated), info.node)
        else:
            pod.extra["reservation"] = info.obj

    # ----- reserve pods (PseudoPodSource) ----------------------------------------------------
    def bind_pseudo(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Mark the reservation Available on ``node_name`` (Koordinator's SetReservationAvailable)."""
        res = pod.extra.get("reservation") or {}
        meta = res.get("metadata") or {}
        client = self.handle.client
        try:
            current = client.get(RESERVATION_KEY, "", meta.get("name", ""))
        except NotFound as e:  # the reservation went away meanwhile
            return Status(Code.ERROR, (f"cannot get reservation, err: {e}",))
        if current["metadata"].get("uid") != pod.uid:
            return Status(Code.ERROR, ("cannot get reservation, err: reservation was replaced",))
        status = dict(current.get("status") or {})
        if status.get("phase") == "Failed":
            return Status(Code.ERROR, ("reservation is not active",))
        now = client.timestamp()
        info = ReservationInfo(current)
        plan: dict[int, list[PodInfo]] = state.get(STATE_KEY + "/pre-allocation") or {}
        taken = plan.get(self.handle.node_table().index.get(node_name, -1), [])
        value = allocated_annotation_value(info.name, info.uid)
        for p in taken:
            client.patch(
                POD_KEY,
                p.namespace,
                p.name,
                {"metadata": {"annotations": {ANNOTATION_RESERVATION_ALLOCATED: value}}},
            )
        status["allocatable"] = {r: format_resource(r, v) for r, v in sorted(info.allocatable.items())}
        status["nodeName"] = node_name
        status["phase"] = "Waiting" if taken else "Available"
        status["conditions"] = [probe_condition("Scheduled", "True", "Scheduled", now)]
        if not taken:
            status["conditions"].append(probe_condition("Ready", "True", "Available", now))
        client.update_status({**current, "status": status})
        self.handle.record_event(
            current,
            "Normal",
            "Scheduled",
            f"Successfully assigned {meta.get('name')} to {node_name}",
            "Binding",
        )
        return SUCCESS

    def pseudo_failed(self, pod: PodInfo, reason: str, message: str) -> None:
        """Keep the reservation Pending with condition Scheduled=False/Unschedulable and the message."""
        res = pod.extra.get("reservation") or {}
        name = (res.get("metadata") or {}).get("name", "")
        client = self.handle.client
        try:
            current = client.get(RESERVATION_KEY, "", name)
        except NotFound:  # deleted meanwhile: nothing to record
            return
        if current["metadata"].get("uid") != pod.uid:
            return
        if len(message) > NOTE_LENGTH_LIMIT:
            message = message[: NOTE_LENGTH_LIMIT - 4] + " ..."
        self.handle.record_event(current, "Warning", "FailedScheduling", message, "Scheduling")
        now = client.timestamp()
        status = dict(current.get("status") or {})
        conditions = [dict(c) for c in status.get("conditions") or []]
        for c in conditions:
            if c.get("type") == "Scheduled":
                if c.get("status") == "True":
                    c["lastProbeTime"] = now
                else:
                    c.update(reason="Unschedulable", message=message, lastProbeTime=now)
                break
        else:
            conditions.append(
                {
                    "type": "Scheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": message,
                    "lastProbeTime": now,
                    "lastTransitionTime": now,
                }
            )
        status["conditions"] = conditions
        status.setdefault("phase", "Pending")
        client.update_status({**current, "status": status})

    # ----- PreFilter -------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Find the reservations this pod may allocate and nominate one per node."""
        if pod.kind == RESERVATION_KIND:
            res = pod.extra.get("reservation") or {}
            if (res.get("spec") or {}).get("preAllocation"):
                self._plan_pre_allocation(pod, res, table, state)
            return None, SUCCESS
        if is_reservation_ignored(pod.obj):
            return None, Status(Code.SKIP)
        try:  # a malformed annotation is the pod's error (Koordinator: AsStatus(err)); the attempt fails
            affinity = parse_reservation_affinity(pod.obj)
            index = self.index
            if not index.infos and affinity is None:
                return None, Status(Code.SKIP)
            index.ensure(table)
            ps = _PodState(affinity)
            matched = self._match(pod, affinity, table)
        except InvalidObjectError as e:
            return None, Status(Code.ERROR, (str(e),))
        if matched.size:
            self._nominate(pod, ps, matched, table, state)
        if affinity is not None:
            if ps.matched_rows.size == 0:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_AFFINITY,))
            state.write(STATE_KEY, ps)
            names = table.names
            return PreFilterResult(frozenset(names[r] for r in ps.matched_rows.tolist())), Status()
        if not ps.any_nominee:
            return None, Status(Code.SKIP)
        state.write(STATE_KEY, ps)
        state.skip_filter.add(
            self.name
        )  # without affinity the nominee is already a fit; Filter has nothing to add
        return None, SUCCESS

    def _plan_pre_allocation(
        self, pod: PodInfo, res: Mapping[str, Any], table: NodeTable, state: CycleState
    ) -> None:
        """Per node, the running pods whose resources a pre-allocating reservation may take over.

        Nodes with enough free capacity need none. Elsewhere candidates are taken by descending
        pre-allocatable priority (then name): the first single pod that covers the shortfall, or with
        ``enableMultiple`` as many as it takes. Chosen pods count as freed for this cycle (an overlay).
        """
        spec = res.get("spec") or {}
        policy = spec.get("preAllocationPolicy") or {}
        mode = policy.get("mode") or ("Cluster" if self.args.enable_cluster_mode else "Default")
        multiple = bool(policy.get("enableMultiple"))
        matcher = ReservationInfo(res).matcher if mode != "Cluster" else None
        need = pod.requests
        n = table.size
        short = np.zeros(n, dtype=np.bool_)
        for r, v in need.items():
            short |= table.alloc(r) - table.req(r) < v
        plan: dict[int, list[PodInfo]] = {}
        label_key = self.args.cluster_label_key
        prio_key = self.args.cluster_priority_annotation_key
        for row in np.flatnonzero(short).tolist():
            cands = []
            for p in table.pods[row].values():
                meta = p.obj.get("metadata") or {}
                if p.kind != "Pod" or meta.get("deletionTimestamp"):
                    continue
                if ANNOTATION_RESERVATION_ALLOCATED in (meta.get("annotations") or {}):
                    continue
                ok = p.labels.get(label_key) == "true" if matcher is None else matcher.matches(p.obj)
                if ok:
                    cands.append((-_priority(p, prio_key), p.name, p))
            if not cands:
                continue
            cands.sort(key=lambda c: (c[0], c[1]))
            free = {r: int(table.alloc(r)[row] - table.req(r)[row]) for r in need}
            chosen: list[PodInfo] = []
            if multiple:
                for _, _, p in cands:
                    chosen.append(p)
                    for r in free:
                        free[r] += p.requests.get(r, 0)
                    if all(free[r] >= v for r, v in need.items()):
                        break
                else:
                    continue
            else:
                for _, _, p in cands:
                    if all(free[r] + p.requests.get(r, 0) >= v for r, v in need.items()):
                        chosen = [p]
                        break
                if not chosen:
                    continue
            plan[row] = chosen
            one = np.asarray([row], dtype=np.int64)
            state.overlay.append(
                Overlay(
                    one,
                    {r: np.asarray([-sum(p.requests.get(r, 0) for p in chosen)]) for r in need},
                    np.asarray([-sum(p.nonzero_cpu for p in chosen)]),
                    np.asarray([-sum(p.nonzero_memory for p in chosen)]),
                )
            )
        state.write(STATE_KEY + "/pre-allocation", plan)

    def _match(self, pod: PodInfo, affinity: ReservationAffinity | None, table: NodeTable) -> IntArray:
        """Indices of usable reservations whose owners, taints, affinity and exact-match admit the pod."""
        index = self.index
        if not index.items:
            return np.zeros(0, dtype=np.int64)
        groups = index.groups
        group_ok: BoolArray | None = None  # None: every owner group matches
        if len(groups) == 1:
            if not groups[0].matches(pod.obj):
                return np.zeros(0, dtype=np.int64)
        else:
            group_ok = np.fromiter((g.matches(pod.obj) for g in groups), dtype=np.bool_, count=len(groups))
            if not group_ok.any():
                return np.zeros(0, dtype=np.int64)
            if group_ok.all():
                group_ok = None
        if group_ok is None and index.unusable == 0:
            cand = index.all_k
        elif group_ok is None:
            cand = np.flatnonzero(index.usable)
        else:
            cand = np.flatnonzero(group_ok[index.group_of] & index.usable)
        if cand.size == 0:
            return cand
        exact = parse_exact_match(pod.obj)
        need_loop = affinity is not None or exact is not None or index.any_taints
        if not need_loop:
            return cand
        tolerations = pod.tolerations + (affinity.tolerations if affinity is not None else ())
        keep = []
        for k in cand.tolist():
            info = index.items[k]
            if affinity is not None and not affinity.matches(
                info.name, {**table.labels[int(index.rows[k])], **info.labels}
            ):
                continue
            if info.taints and not _tolerated(info.taints, tolerations):
                continue
            if exact is not None and not exact_match(pod.requests, info.allocatable, exact):
                continue
            keep.append(k)
        return np.asarray(keep, dtype=np.int64)

    def _nominate(
        self, pod: PodInfo, ps: _PodState, cand: IntArray, table: NodeTable, state: CycleState
    ) -> None:
        """Per node, the matching reservation the pod fits with and would fill most (order label first).

        The nominee's remainder (and host ports) become free for the pod on that node this cycle. A pod
        with reservation affinity sees its best matching reservation freed even where it does not fit,
        so that the Reservation filter can say why.
        """
        index = self.index
        if ps.affinity is None and index.unique_rows and not index.any_restricted and not index.any_ports:
            self._nominate_fast(pod, ps, cand, table, state)
            return
        full = cand.size == len(index.items)

        def take(a: IntArray) -> IntArray:
            return a if full else a[cand]

        rows = take(index.rows)
        req = pod.requests
        fits = np.ones(cand.size, dtype=np.bool_)
        short_rows: dict[str, BoolArray] = {}  # per resource, the node rows short of it (affinity pods)
        for r, v in req.items():
            if v:
                free = take(index.node_alloc(r, table)) - table.requested[r][rows] + take(index.remainder(r))
                enough = free >= v
                fits &= enough
                if ps.affinity is not None and not enough.all():
                    short_rows[r] = np.zeros(table.size, dtype=np.bool_)
                    short_rows[r][rows[~enough]] = True
        room = table.pod_count[rows] <= take(index.node_alloc("pods", table))  # the reserve pod makes room
        fits &= room
        if ps.affinity is not None and not room.all():
            short_rows["pods"] = np.zeros(table.size, dtype=np.bool_)
            short_rows["pods"][rows[~room]] = True
        restricted_fail: dict[int, list[str]] = {}
        if index.any_restricted:
            for j in np.flatnonzero(take(index.policy) == 2).tolist():
                info = index.items[int(cand[j])]
                short = self._restricted_shortfall(info, req, ps.detailed)
                if short:
                    fits[j] = False
                    restricted_fail.setdefault(int(rows[j]), []).extend(short)
        if index.unique_rows:
            pick = index.row_order if full else np.argsort(rows, kind="stable")
        else:
            score = self._scores(cand, req)
            order = take(index.order)
            order_key = np.where(order > 0, order, np.iinfo(np.int64).max)
            # by row, fitting first, smaller order, higher score, smaller name; keep the first per row
            pick = np.lexsort((take(index.name_rank), -score, order_key, ~fits, rows))
            srt = rows[pick]
            pick = pick[np.concatenate(([True], srt[1:] != srt[:-1]))]
        ok = fits[pick]
        ps.matched_rows = rows[pick]
        bad = np.flatnonzero(~ok)
        for j in bad.tolist():
            row = int(rows[pick[j]])
            # Koordinator's filterWithReservations: the node's shortfalls, then the reservations' own reasons
            by_node = tuple(f"Insufficient {r} by node" for r in sorted(short_rows) if short_rows[r][row])
            own = tuple(dict.fromkeys(restricted_fail.get(row, ())))
            ps.fit_reasons[row] = (by_node + own) or (ERR_NO_FIT,)
        freed_pick = pick if ps.affinity is not None else pick[ok]
        fit_pick = pick[ok] if bad.size else pick
        ps.rows = rows[fit_pick]
        ps.nominee_k = fit_pick if full else cand[fit_pick]
        ps.any_nominee = bool(ps.rows.size)
        if index.any_order and ps.rows.size:
            ordered = index.order[ps.nominee_k]
            if (ordered > 0).any():
                masked = np.where(ordered > 0, ordered, np.iinfo(np.int64).max)
                ps.preferred_row = int(ps.rows[int(np.argmin(masked))])
        if freed_pick.size == 0:
            return
        k = freed_pick if full else cand[freed_pick]
        freed_rows = rows[freed_pick]
        freed = {r: index.remainder(r)[k] for r in index.alloc if r != "pods"}
        ports: list[tuple[int, tuple[tuple[str, str, int], ...]]] = []
        if index.any_ports:
            for j in np.flatnonzero(index.has_ports[k]).tolist():
                ports.append((int(freed_rows[j]), index.items[int(k[j])].reserve_pod.host_ports))
        n = table.size
        if freed_rows.size * 4 > n:  # most rows: a dense delta is cheaper to apply
            dense: dict[str, IntArray] = {}
            for r, amount in freed.items():
                d = np.zeros(n, dtype=np.int64)
                d[freed_rows] = -amount
                dense[r] = d
            pods = np.zeros(n, dtype=np.int64)
            pods[freed_rows] = -1
            state.overlay.append(Overlay(None, dense, dense.get("cpu"), dense.get("memory"), pods, ports))
        else:
            state.overlay.append(
                Overlay(
                    freed_rows,
                    {r: -v for r, v in freed.items()},
                    -freed["cpu"] if "cpu" in freed else None,
                    -freed["memory"] if "memory" in freed else None,
                    np.full(k.size, -1, dtype=np.int64),
                    ports,
                )
            )

    def _fits(self, ks: IntArray | None, req: Mapping[str, int], table: NodeTable) -> BoolArray:
        """Whether the pod fits on each reservation's node with that reservation's remainder freed."""
        index = self.index

        def take(a: IntArray) -> IntArray:
            return a if ks is None else a[ks]

        rows = take(index.rows)
        fits = np.ones(rows.size, dtype=np.bool_)
        for r, v in req.items():
            if v:
                free = take(index.node_alloc(r, table)) - table.requested[r][rows] + take(index.remainder(r))
                fits &= free >= v
        fits &= table.pod_count[rows] <= take(index.node_alloc("pods", table))  # the reserve pod makes room
        return fits

    def _fits_one(self, k: int, req: Mapping[str, int], table: NodeTable) -> bool:
        """_fits for one reservation, with plain integers."""
        index = self.index
        row = int(index.rows[k])
        for r, v in req.items():
            if v:
                col = index.rem.get(r)
                rem = int(col[k]) if col is not None else 0
                if int(index.node_alloc(r, table)[k]) - int(table.requested[r][row]) + rem < v:
                    return False
        return int(table.pod_count[row]) <= int(index.node_alloc("pods", table)[k])

    def _score_one(self, k: int, req: Mapping[str, int]) -> int:
        """_scores for one reservation, with plain integers."""
        index = self.index
        total = weight = 0
        for r, a in index.alloc.items():
            cap = int(a[k])
            if cap <= 0:
                continue
            weight += 1
            used = int(index.used[r][k]) + req.get(r, 0)
            if used <= cap:
                total += 100 * used // cap
        return total // weight if weight else 0

    def _nominate_fast(
        self, pod: PodInfo, ps: _PodState, cand: IntArray, table: NodeTable, state: CycleState
    ) -> None:
        """_nominate for the common case (one reservation per node, no affinity, Restricted or ports):
        incremental across pods with the same requests, recomputing only reservations whose node or
        usage changed since the previous pod."""
        index = self.index
        req = pod.requests
        key = tuple(sorted(req.items()))
        m = len(index.items)
        n = table.size
        c = self._nomination_cache.get(key)
        changed: IntArray | None = None
        if c is not None and c.valid_for(index, table):
            rows_changed = table.rows_changed_since(c.table_epoch, c.table_pos)
            if rows_changed is not None:
                usage = index.usage_log[c.usage_pos :]
                if len(rows_changed) + len(usage) <= 32:  # the usual handful: plain Python is cheaper
                    k_of_row = index.k_of_row
                    found = set(usage)
                    for row in rows_changed:
                        k = int(k_of_row[row])
                        if k >= 0:
                            found.add(k)
                    changed = np.fromiter(sorted(found), dtype=np.int64, count=len(found))
                else:
                    ks_rows = index.k_of_row[np.asarray(rows_changed, dtype=np.int64)]
                    ks = np.concatenate((np.asarray(usage, dtype=np.int64), ks_rows[ks_rows >= 0]))
                    changed = np.unique(ks)
        if changed is None:
            c = _NominationCache(index, table, self._fits(None, req, table))
            if len(self._nomination_cache) >= 8:
                self._nomination_cache.clear()
            self._nomination_cache[key] = c
        else:
            assert c is not None
            if changed.size > 8:
                c.fits[changed] = self._fits(changed, req, table)
            else:
                for k in changed.tolist():
                    c.fits[k] = self._fits_one(k, req, table)
        c.mark(index, table)
        if cand.size == m:
            ok = c.fits
            matched_all = True
        else:
            matched = np.zeros(m, dtype=np.bool_)
            matched[cand] = True
            ok = c.fits & matched
            matched_all = False
        ps.dense_k = index.k_of_row
        ps.dense_ok = ok
        ps.any_nominee = bool(np.count_nonzero(ok))
        if not ps.any_nominee:
            if changed is None or changed.size:
                # the rows changed since are not patched in: the next pod of this shape rebuilds them
                c.score_by_row = c.dense = None
            return
        patch = matched_all and c.dense_all and changed is not None
        # the nominees (only read when something is rebuilt or orders count)
        needed = index.any_order or not patch or c.score_by_row is None or c.dense is None
        sel = index.all_k[ok] if needed else _NO_ROWS
        if index.any_order:
            ordered = index.order[sel]
            if (ordered > 0).any():
                best = int(sel[int(np.argmin(np.where(ordered > 0, ordered, np.iinfo(np.int64).max)))])
                ps.preferred_row = int(index.rows[best])
        # Score per row: the nominee's MostAllocated score, kept like the overlay
        if c.score_by_row is None or not patch:
            c.score_by_row = np.zeros(n, dtype=np.int64)
            c.score_by_row[index.rows[sel]] = self._scores(sel, req)
        elif changed is not None and changed.size > 8:
            c.score_by_row[index.rows[changed]] = np.where(ok[changed], self._scores(changed, req), 0)
        elif changed is not None:
            for k in changed.tolist():
                c.score_by_row[int(index.rows[k])] = self._score_one(k, req) if ok[k] else 0
        ps.score_by_row = c.score_by_row
        # the dense overlay: rebuilt when the matched set differs, else patched where something changed
        if c.dense is None or not patch:
            c.dense = {r: np.zeros(n, dtype=np.int64) for r in index.alloc if r != "pods"}
            c.pods = np.zeros(n, dtype=np.int64)
            rows = index.rows[sel]
            for r, d in c.dense.items():
                d[rows] = -index.remainder(r)[sel]
            c.pods[rows] = -1
            c.dense_all = matched_all
            c.lineage = OverlayLineage()
        else:
            assert c.pods is not None and c.lineage is not None and changed is not None
            patched = []
            for k in changed.tolist():
                row = int(index.rows[k])
                patched.append(row)
                good = bool(ok[k])
                for r, d in c.dense.items():
                    d[row] = -int(index.rem[r][k]) if good else 0
                c.pods[row] = -1 if good else 0
            c.lineage.record(patched)
        state.overlay.append(
            Overlay(None, c.dense, c.dense.get("cpu"), c.dense.get("memory"), c.pods, lineage=c.lineage)
        )

    @staticmethod
    def _restricted_shortfall(info: ReservationInfo, req: Mapping[str, int], detailed: bool) -> list[str]:
        """Koordinator's fitsReservation reasons for a Restricted reservation."""
        left = info.remainder()
        used = info.allocated()
        out = []
        for r in info.restricted_names:
            want = req.get(r, 0)
            if not want or want <= left.get(r, 0):
                continue
            if detailed:
                out.append(
                    f"{REASON_PREFIX}Insufficient {r}, requested: {want}, used: {used.get(r, 0)}, "
                    f"capacity: {info.allocatable.get(r, 0)}"
                )
            else:
                out.append(f"{REASON_PREFIX}Insufficient {r}")
        return out

    def _scores(self, k: IntArray, req: Mapping[str, int]) -> IntArray:
        """MostAllocated score of reservations ``k`` with the pod's requests added."""
        index = self.index
        total = np.zeros(k.size, dtype=np.int64)
        weight = np.zeros(k.size, dtype=np.int64)
        for r, a in index.alloc.items():
            cap = a[k]
            used = index.used[r][k] + req.get(r, 0)
            has = cap > 0
            total += np.where(has & (used <= cap), 100 * used // np.where(has, cap, 1), 0)
            weight += has
        out: IntArray = np.where(weight > 0, total // np.maximum(weight, 1), 0)
        return out

    # ----- Filter ----------------------------------------------------------------------------
    def filter_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        """Reserve pods: pinned node and allocate-policy conflicts. Owner pods with affinity: a reservation must fit."""
        n = table.size
        if pod.kind == RESERVATION_KIND:
            return self._filter_reserve_pod(pod, table)
        ps: _PodState | None = state.get(STATE_KEY)
        if ps is None or ps.affinity is None:
            return Verdicts.all_pass(n)
        passed = np.zeros(n, dtype=np.bool_)
        passed[ps.rows] = True
        codes = np.zeros(n, dtype=np.int64)
        statuses = [Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_AFFINITY,))]
        seen: dict[tuple[str, ...], int] = {}
        for row, reasons in ps.fit_reasons.items():
            c = seen.get(reasons)
            if c is None:
                c = seen[reasons] = len(statuses)
                statuses.append(Status(Code.UNSCHEDULABLE, reasons))
            codes[row] = c
        return Verdicts(passed, statuses, codes)

    def _filter_reserve_pod(self, pod: PodInfo, table: NodeTable) -> Verdicts:
        n = table.size
        passed = np.ones(n, dtype=np.bool_)
        codes = np.zeros(n, dtype=np.int64)
        statuses: list[Status] = [
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NODE_NAME,)),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_POLICY_CONFLICT,)),
        ]
        pinned = (pod.obj.get("metadata") or {}).get("annotations", {}).get(ANNOTATION_RESERVATION_NODE)
        if pinned:
            mask = np.ones(n, dtype=np.bool_)
            i = table.index.get(pinned)
            if i is not None:
                mask[i] = False
            passed &= ~mask
        res = pod.extra.get("reservation") or {}
        policy = (res.get("spec") or {}).get("allocatePolicy") or ""
        for node in self.index.conflicting_nodes(policy):
            row = table.index.get(node)
            if row is not None and passed[row]:
                codes[row] = 1
                passed[row] = False
        return Verdicts(passed, statuses, codes)

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Per-node form of filter_nodes."""
        return self.filter_nodes(state, pod, node.table).status_of(node.index)

    # ----- PostFilter ------------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeStatusMap
    ) -> tuple[PostFilterResult | None, Status]:
        """Koordinator's PostFilter (without reservation preemption): never makes room, but names in the
        failure the reservations whose owners match the pod and why each could not take it."""
        if pod.kind == RESERVATION_KIND or is_reservation_ignored(pod.obj):
            return None, Status(Code.UNSCHEDULABLE)
        try:
            affinity = parse_reservation_affinity(pod.obj)
            exact = parse_exact_match(pod.obj)
        except InvalidObjectError:  # PreFilter reported it (or a PreFilter before it rejected the pod)
            return None, Status(Code.UNSCHEDULABLE)
        if not self.index.infos and affinity is None:
            return None, Status(Code.UNSCHEDULABLE)
        table = self.handle.node_table()
        self.index.ensure(table)
        diagnosis = diagnose(self.index, table, pod, affinity, exact)
        by_node = node_reason_counts(diagnosis.matched, table.names, statuses, table.index)
        reasons = post_filter_reasons(diagnosis, affinity is not None, by_node)
        return None, Status(Code.UNSCHEDULABLE, tuple(reasons))

    def explain_reservations(self, state: CycleState, pod: PodInfo, node_name: str) -> list[dict[str, str]]:
        """For ``berth explain``: each Available reservation whose owners match ``pod`` (by name), with the
        attempt's result for it: ``allocated`` (the pod goes to ``node_name`` and takes it), ``matched``
        (usable, on a node not chosen) or ``refused`` with Koordinator's reason."""
        if pod.kind == RESERVATION_KIND or is_reservation_ignored(pod.obj) or not self.index.infos:
            return []
        try:
            affinity = parse_reservation_affinity(pod.obj)
            exact = parse_exact_match(pod.obj)
        except InvalidObjectError:  # the attempt failed with this error; there is nothing to list
            return []
        table = self.handle.node_table()
        index = self.index
        index.ensure(table)
        ps: _PodState | None = state.get(STATE_KEY)
        out: list[dict[str, str]] = []
        for k, info in enumerate(index.items):
            if not info.available or not info.matcher.matches(pod.obj):
                continue
            row = int(index.rows[k])
            entry = {"name": info.name, "node": info.node, "result": "matched", "reason": ""}
            why = refusal(info, pod, affinity, exact, table.labels[row])
            if why:
                entry.update(result="refused", reason=REASON_PREFIX + why)
            elif not pod.required_node_affinity.matches(table.labels[row], info.node):
                entry.update(result="refused", reason="node(s) didn't match Pod's node affinity/selector")
            elif ps is not None and row in ps.fit_reasons:
                entry.update(result="refused", reason=", ".join(ps.fit_reasons[row]))
            elif ps is not None and info.node == node_name and ps.nominee_at(row) == k:
                entry["result"] = "allocated"
            out.append(entry)
        return out

    # ----- Score -----------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, feasible: IntArray) -> Status:
        """Skip pods without a nominated reservation (and reserve pods unless preferNoPreAllocatedPods applies)."""
        if pod.kind == RESERVATION_KIND:
            plan = state.get(STATE_KEY + "/pre-allocation")
            if plan and self.args.prefer_no_pre_allocated_pods:
                return SUCCESS
            return Status(Code.SKIP)
        ps: _PodState | None = state.get(STATE_KEY)
        if ps is None or not ps.any_nominee:
            return Status(Code.SKIP)
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: IntArray) -> IntArray:
        """1000 for the node of the most preferred reservation order, else the nominee's MostAllocated score."""
        out = np.zeros(len(idx), dtype=np.int64)
        if pod.kind == RESERVATION_KIND:  # preferNoPreAllocatedPods: nodes that need no pre-allocation win
            plan = state.get(STATE_KEY + "/pre-allocation") or {}
            for j, row in enumerate(idx.tolist()):
                out[j] = 0 if row in plan else MAX_NODE_SCORE
            return out
        ps: _PodState | None = state.get(STATE_KEY)
        if ps is None or not ps.any_nominee:
            return out
        if ps.score_by_row is not None:
            out = ps.score_by_row[idx]
        else:
            k_by_row = np.full(table.size, -1, dtype=np.int64)
            k_by_row[ps.rows] = ps.nominee_k
            k = k_by_row[idx]
            has = k >= 0
            if has.any():
                out[has] = self._scores(k[has], pod.requests)
        if ps.preferred_row >= 0:
            out[idx == ps.preferred_row] = MOST_PREFERRED_SCORE
        return out

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """Per-node form of score_nodes."""
        return int(self.score_nodes(state, pod, node.table, np.asarray([node.index], dtype=np.int64))[0])

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        """kube's default normalisation to 0..100."""
        return default_normalize(scores, reverse=False)

    # ----- Reserve / PreBind -----------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Account the pod to the reservation nominated on ``node_name``."""
        if pod.kind == RESERVATION_KIND:
            return SUCCESS
        ps: _PodState | None = state.get(STATE_KEY)
        if ps is None:
            return SUCCESS
        row = self.handle.node_table().index.get(node_name, -1)
        k = ps.nominee_at(row)
        info = self.index.items[k] if k >= 0 else None
        if info is None:
            if ps.affinity is not None:
                return Status(Code.UNSCHEDULABLE, (ERR_AFFINITY,))
            return SUCCESS
        info.owners[pod.uid] = info.masked(pod.requests)
        state.write(STATE_KEY + "/allocated", info)
        self._usage_changed(info)
        return SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Give back what reserve took."""
        info: ReservationInfo | None = state.get(STATE_KEY + "/allocated")
        if info is not None and info.owners.pop(pod.uid, None) is not None:
            state.delete(STATE_KEY + "/allocated")
            if info.uid in self.index.infos:
                self._usage_changed(info)

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Have the ``reservation-allocated`` annotation written with the binding."""
        info: ReservationInfo | None = state.get(STATE_KEY + "/allocated")
        if info is None:
            return SUCCESS
        annotations: dict[str, str] = dict(state.get(BINDING_ANNOTATIONS_KEY) or {})
        annotations[ANNOTATION_RESERVATION_ALLOCATED] = info.allocated_annotation
        state.write(BINDING_ANNOTATIONS_KEY, annotations)
        return SUCCESS

    def events_to_register(self) -> list[ClusterEvent]:
        """Pods and nodes coming and going (reservations change through virtual pods)."""
        return [
            ClusterEvent("Pod", frozenset({"Add", "Update", "Delete"})),
            ClusterEvent("Node", frozenset({"Add", "Update"})),
        ]


def _same_shape(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether two versions of a reservation agree on everything the plugin reads (not status.allocated...)."""
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    os_, ns_ = old.get("status") or {}, new.get("status") or {}
    return (
        old.get("spec") == new.get("spec")
        and om.get("labels") == nm.get("labels")
        and om.get("annotations") == nm.get("annotations")
        and bool(om.get("deletionTimestamp")) == bool(nm.get("deletionTimestamp"))
        and os_.get("phase") == ns_.get("phase")
        and os_.get("nodeName") == ns_.get("nodeName")
        and os_.get("allocatable") == ns_.get("allocatable")
    )


def _priority(pod: PodInfo, key: str) -> int:
    raw = ((pod.obj.get("metadata") or {}).get("annotations") or {}).get(key)
    try:
        return int(raw) if raw is not None else 0
    except ValueError:
        return 0
