"""CapacityScheduling: scheduler-plugins' ElasticQuota plugin (PreFilter, PostFilter, Reserve).

PreFilter refuses a pod (Unschedulable, so preemption may run) when its namespace's quota would exceed
max with the pod and the equal-or-higher-priority nominated pods of that namespace, or when the total
used of all quotas would exceed the total of all min with the pod, those nominated pods and the nominated
pods of quotas still within their min; a pod that borrows (its quota over min with it) may not take the
unused min of other quotas whose pending pods would fit in it. Reserve / Unreserve count the pod in its
quota; bound pods are followed through Pod events, quotas through ElasticQuota events. Namespaces without
a quota are not governed. PostFilter is quota-aware preemption (see ``preemption``), which keeps to the
same rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from berth.api.elasticquota import quota_limits
from berth.api.resources import pod_requests
from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.framework.plugin import (
    ClusterEvent,
    Handle,
    NodeStatusMap,
    PostFilterResult,
    PreFilterResult,
)
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import SUCCESS, Code, Status
from berth.scheduler.plugins.capacityscheduling.preemption import QuotaPreemption
from berth.scheduler.plugins.capacityscheduling.quota import (
    Amounts,
    PendingDemand,
    PreFilterState,
    QuotaBook,
    QuotaInfo,
    add_into,
)

NAME = "CapacityScheduling"
STATE_KEY = "PreFilter" + NAME
_TERMINAL = ("Succeeded", "Failed")


def over_max_message(pod: PodInfo, quota_namespace: str) -> str:
    """The PreFilter refusal when the pod's quota would exceed its max."""
    return (
        f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because ElasticQuota "
        f"{quota_namespace} is more than Max"
    )


def over_min_message(pod: PodInfo) -> str:
    """The PreFilter refusal when the total used of all quotas would exceed the total min."""
    return (
        f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because total ElasticQuota used is more "
        "than min"
    )


@dataclass(frozen=True, slots=True)
class _Nominated:
    priority: int
    requests: Amounts


class CapacityScheduling:
    """The CapacityScheduling plugin (one QuotaBook per profile)."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self.book = QuotaBook()
        self._assigned: dict[str, dict[str, Amounts]] = {}  # namespace -> uid -> requests of bound pods
        self._where: dict[str, str] = {}  # uid of a bound pod -> namespace
        self._nominated: dict[str, dict[str, _Nominated]] = {}  # ns -> uid -> a nominated, unbound pod
        self._nominated_sum: dict[str, dict[str, int]] = {}  # ns -> summed requests of its nominated pods
        self._pending = PendingDemand()  # pending pods of every namespace
        # ns -> node -> number of the namespace's counted (reserved or bound) pods on it; uid -> (ns, node)
        self._on_nodes: dict[str, dict[str, int]] = {}
        self._placed: dict[str, tuple[str, str]] = {}
        self._preemption = QuotaPreemption(handle, self.book, self.nodes_of)

    # ----- PreFilter -----------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Refuse the pod when its quota would exceed max, or the quotas together their total min."""
        request = pod.requests
        book = self.book
        if pod.kind != "Pod" or pod.namespace not in book.infos:
            state.write(STATE_KEY, PreFilterState(request, request, request))
            return None, SUCCESS
        in_quota = dict(request)
        total = dict(request)
        for ns, pods in self._nominated.items():
            if ns == pod.namespace:
                for uid, n in pods.items():
                    if uid != pod.uid and n.priority >= pod.priority:
                        add_into(in_quota, n.requests)
                        add_into(total, n.requests)
            elif ns in book.infos and not book.used_over_min(ns):
                add_into(total, self._nominated_sum[ns])
        guarded: dict[str, int] | None = None
        if book.used_over_min_with(pod.namespace, in_quota):
            # borrowing: only the min other quotas leave unused and no pending pod of theirs wants (the
            # quota-aware preemption keeps to the same rule, so PostFilter frees what PreFilter asks for)
            wanted = self.wanted_min_of_others(pod.namespace)
            if wanted:
                add_into(wanted, total)
                guarded = wanted
        state.write(STATE_KEY, PreFilterState(request, in_quota, total, guarded))
        if book.used_over_max_with(pod.namespace, in_quota):
            return None, Status(Code.UNSCHEDULABLE, (over_max_message(pod, pod.namespace),))
        if book.aggregated_over_min_with(total):
            return None, Status(Code.UNSCHEDULABLE, (over_min_message(pod),))
        if guarded is not None and book.aggregated_over_min_with(guarded):
            return None, Status(Code.UNSCHEDULABLE, (over_min_message(pod),))
        return None, SUCCESS

    def wanted_min_of_others(self, namespace: str) -> dict[str, int]:
        """The unused min (min - used - nominated) of the quotas other than ``namespace`` that have a
        pending pod fitting in it: borrowers may not take it."""
        book = self.book
        governed = book.governed
        wanted: dict[str, int] = {}
        for ns, q in book.infos.items():
            if ns == namespace:
                continue
            nominated = self._nominated_sum.get(ns, {})
            room = {r: q.min.get(r, 0) - q.used.get(r, 0) - nominated.get(r, 0) for r in q.min}
            if not any(v > 0 for v in room.values()):
                continue
            if self._pending.fits_in(ns, room, governed):
                for r, v in room.items():
                    if v > 0:
                        wanted[r] = wanted.get(r, 0) + v
        return wanted

    # ----- PostFilter ----------------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeStatusMap
    ) -> tuple[PostFilterResult | None, Status]:
        """Quota-aware preemption."""
        pfs = state.get(STATE_KEY)
        if not isinstance(pfs, PreFilterState):
            return None, Status(Code.UNSCHEDULABLE, ("not eligible due to failed to read from cycleState",))
        return self._preemption.preempt(state, pod, statuses, pfs)

    # ----- Reserve -------------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Count the pod in its namespace's quota."""
        if pod.kind == "Pod":
            self.book.add_pod(pod.namespace, pod.uid, pod.requests)
            self._place(pod.uid, pod.namespace, node_name)
        return SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Stop counting the pod (its binding failed or it was rejected)."""
        if pod.kind == "Pod" and pod.uid not in self._where:
            self.book.remove_pod(pod.namespace, pod.uid)
            self._unplace(pod.uid)

    def nodes_of(self, namespace: str) -> Iterable[str]:
        """The nodes running (or reserved for) counted pods of ``namespace``."""
        return self._on_nodes.get(namespace, {}).keys()

    def _place(self, uid: str, namespace: str, node: str) -> None:
        if uid in self._placed:
            return
        self._placed[uid] = (namespace, node)
        nodes = self._on_nodes.setdefault(namespace, {})
        nodes[node] = nodes.get(node, 0) + 1

    def _unplace(self, uid: str) -> None:
        placed = self._placed.pop(uid, None)
        if placed is None:
            return
        namespace, node = placed
        nodes = self._on_nodes[namespace]
        if nodes[node] <= 1:
            del nodes[node]
        else:
            nodes[node] -= 1

    # ----- events --------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEvent]:
        """Pods leaving free quota; any quota change may admit pods."""
        return [ClusterEvent("Pod", frozenset({"Delete"})), ClusterEvent("ElasticQuota")]

    def watched_kinds(self) -> tuple[str, ...]:
        """Pods (bound ones count in quotas; nominated ones in PreFilter) and ElasticQuotas."""
        return ("Pod", "ElasticQuota")

    def on_object_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """Follow one Pod or ElasticQuota change."""
        kind = obj.get("kind")
        if kind == "Pod":
            self._on_pod(type_, obj)
        elif kind == "ElasticQuota":
            self._on_quota(type_, obj)

    def _on_pod(self, type_: str, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        ns = str(meta.get("namespace") or "default")
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        if type_ == "DELETED" or status.get("phase") in _TERMINAL:
            self._pending.remove(uid)
            self._drop_nomination(ns, uid)
            where = self._where.pop(uid, None)
            if where is not None:
                self._assigned.get(where, {}).pop(uid, None)
            self.book.remove_pod(ns, uid)
            self._unplace(uid)
            return
        if spec.get("nodeName"):
            self._pending.remove(uid)
            self._drop_nomination(ns, uid)
            if uid not in self._where:
                requests = pod_requests(obj)
                self._where[uid] = ns
                self._assigned.setdefault(ns, {})[uid] = requests
                self.book.add_pod(ns, uid, requests)
                self._place(uid, ns, str(spec["nodeName"]))
            if meta.get("deletionTimestamp"):
                self.book.mark_leaving(ns, uid)
            return
        if status.get("nominatedNodeName"):
            self._pending.remove(uid)
            prio = spec.get("priority")
            nominated = _Nominated(int(prio) if prio is not None else 0, pod_requests(obj))
            self._drop_nomination(ns, uid)
            self._nominated.setdefault(ns, {})[uid] = nominated
            add_into(self._nominated_sum.setdefault(ns, {}), nominated.requests)
        else:
            self._drop_nomination(ns, uid)
            if uid not in self._pending and not meta.get("deletionTimestamp"):
                self._pending.add(ns, uid, pod_requests(obj))

    def _drop_nomination(self, ns: str, uid: str) -> None:
        pods = self._nominated.get(ns)
        if pods is None:
            return
        gone = pods.pop(uid, None)
        if gone is None:
            return
        if pods:
            add_into(self._nominated_sum[ns], gone.requests, -1)
        else:
            del self._nominated[ns]
            del self._nominated_sum[ns]

    def _on_quota(self, type_: str, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        ns = str(meta.get("namespace") or "default")
        name = str(meta.get("name") or "")
        book = self.book
        existing = book.infos.get(ns)
        if existing is not None and existing.name != name:
            return  # only one ElasticQuota per namespace is honoured: the first one seen
        if type_ == "DELETED":
            if existing is not None:
                del book.infos[ns]
                book.refresh()
            return
        min_, max_ = quota_limits(obj)
        if existing is not None:
            existing.min = min_
            existing.max = max_
        else:
            info = QuotaInfo(ns, name, min_, max_)
            for uid, requests in self._assigned.get(ns, {}).items():
                info.add_pod(uid, requests)
            book.infos[ns] = info
        book.refresh()
