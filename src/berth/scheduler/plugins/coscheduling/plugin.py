"""Coscheduling: gang scheduling of a PodGroup's pods through Permit (scheduler-plugins' plugin).

Members of a group are sorted together (QueueSort), refused early when the group cannot start
(PreFilter), held at Permit until ``minMember`` of them are assumed and then allowed all together, or
rejected all together (timeout, PostFilter, Unreserve), so that a gang is placed whole or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from berth.api.podgroup import POD_GROUP_KIND, POD_GROUP_LABEL
from berth.api.quantity import format_resource
from berth.api.timestamps import unix_seconds
from berth.scheduler.framework import (
    ClusterEvent,
    Code,
    CycleState,
    Handle,
    NodeStatusMap,
    NodeTable,
    PodInfo,
    PostFilterResult,
    PreFilterResult,
    Status,
)
from berth.scheduler.plugins.coscheduling.args import NAME, CoschedulingArgs
from berth.scheduler.plugins.coscheduling.groups import GroupIndex, GroupState

SUCCESS = Status()
WAIT = Status(Code.WAIT)
DEFAULT_WAIT_SECONDS = 60.0  # scheduler-plugins' DefaultWaitTime
PERMITTED_TTL_FALLBACK = 3.0  # go-cache's default expiration of the permitted-group cache

MSG_NOT_FOUND = "PodGroup not found"
MSG_NO_GROUP = "can not find pod group"
MSG_REJECT_POST_FILTER = "optimistic rejection in PostFilter"
MSG_REJECT_UNRESERVE = "rejection in Unreserve"


def _epoch_of(handle: Handle) -> float:
    """Unix seconds of clock time 0, read from the cluster's timestamps."""
    stamp = handle.client.timestamp(0.0)
    parsed = unix_seconds(stamp)
    if parsed is None:
        raise ValueError(f"the store's timestamp {stamp!r} is not RFC 3339")
    return parsed


class Coscheduling:
    """Gang scheduling: QueueSort, PreFilter, PostFilter, Reserve/Unreserve and Permit over PodGroups."""

    name = NAME

    def __init__(self, args: CoschedulingArgs, handle: Handle) -> None:
        self.args = args
        self._handle = handle
        self._clock = handle.clock
        self.index = GroupIndex(_epoch_of(handle))
        self._backoff: dict[str, float] = {}  # full group name -> end of its backoff (clock time)
        self._permitted: dict[str, float] = {}  # groups whose minResources check passed -> expiry
        self._rejecting: set[str] = set()  # groups whose waiting members are being rejected now

    # ----- informers ------------------------------------------------------------------------
    def watched_kinds(self) -> tuple[str, ...]:
        """Pods (members) and PodGroups."""
        return ("Pod", POD_GROUP_KIND)

    def on_object_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """Keep the gang index current."""
        if obj.get("kind") == POD_GROUP_KIND:
            self.index.on_pod_group(type_, obj)
        else:
            self.index.on_pod(type_, obj)

    def events_to_register(self) -> list[ClusterEvent]:
        """A new pod (a missing member) or a new or changed PodGroup may let a rejected member through."""
        return [
            ClusterEvent("Pod", frozenset({"Add"})),
            ClusterEvent(POD_GROUP_KIND, frozenset({"Add", "Update"})),
        ]

    # ----- helpers --------------------------------------------------------------------------
    def _group(self, pod: PodInfo) -> tuple[str, GroupState | None]:
        """The pod's full group name ("" without the label) and the gang if its PodGroup exists."""
        name = pod.labels.get(POD_GROUP_LABEL)
        if not name:
            return "", None
        full = f"{pod.namespace}/{name}"
        g = self.index.get(full)
        if g is None or g.spec is None:
            return full, None
        return full, g

    def _reject_waiting(self, pod: PodInfo, full: str, message: str) -> None:
        """Reject every waiting member of the group ``full`` (once, even when called re-entrantly)."""
        if full in self._rejecting:
            return
        self._rejecting.add(full)
        try:
            name = full.partition("/")[2]
            for w in self._handle.iterate_waiting_pods():
                other = w.pod
                if other.namespace == pod.namespace and other.labels.get(POD_GROUP_LABEL) == name:
                    w.reject(NAME, message)
        finally:
            self._rejecting.discard(full)

    # ----- QueueSort ------------------------------------------------------------------------
    def sort_key(self, pod: PodInfo, enqueued_at: float) -> tuple[int, float, str]:
        """Higher priority first, then the group's creation time (a lone pod's enqueue time), then
        ``<namespace>/<name>`` of the pod."""
        created = enqueued_at
        name = pod.labels.get(POD_GROUP_LABEL)
        if name:
            g = self.index.get(f"{pod.namespace}/{name}")
            if g is not None and g.created_at is not None:
                created = g.created_at
        return (-pod.priority, created, pod.key)

    def less(self, a: PodInfo, a_enqueued: float, b: PodInfo, b_enqueued: float) -> bool:
        """scheduler-plugins' Less: whether ``a`` should be popped before ``b``."""
        return self.sort_key(a, a_enqueued) < self.sort_key(b, b_enqueued)

    # ----- PreFilter ------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Refuse (UnschedulableAndUnresolvable) a member of a backed-off group, of a group with fewer
        than minMember pods, or of a group whose minResources the cluster's free resources cannot cover."""
        full, g = self._group(pod)
        if g is None or g.spec is None:
            return None, SUCCESS
        spec = g.spec
        now = self._clock.now()
        until = self._backoff.get(full)
        if until is not None:
            if now <= until:  # go-cache keeps an entry up to and including its expiration instant
                return None, _unresolvable(f"podGroup {full} failed recently")
            del self._backoff[full]
        count = len(g.members)
        if count < spec.min_member:
            return None, _unresolvable(
                f"pre-filter pod {pod.name} cannot find enough sibling pods, "
                f"current pods number: {count}, minMember of group: {spec.min_member}"
            )
        if spec.min_resources is None:
            return None, SUCCESS
        expires = self._permitted.get(full)
        if expires is not None and now <= expires:
            return None, SUCCESS
        gap = resource_gap(table, g, spec.min_resources, spec.min_member)
        if gap:
            return None, _unresolvable("resource gap: " + format_resource_map(gap))
        ttl = float(self.args.permit_waiting_time_seconds) or PERMITTED_TTL_FALLBACK
        self._permitted[full] = now + ttl
        return None, SUCCESS

    # ----- PostFilter -----------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeStatusMap
    ) -> tuple[PostFilterResult | None, Status]:
        """Reject the group's waiting members when too many members are still missing for the quorum."""
        full, g = self._group(pod)
        if g is None or g.spec is None:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE, (MSG_NO_GROUP,))
        min_member = g.spec.min_member
        assigned = g.assigned_except(pod.uid)
        if assigned >= min_member:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        # a small gap (at most podGroupRejectPercentage of minMember): later members may still close it
        if (min_member - assigned) * 100 <= self.args.pod_group_reject_percentage * min_member:
            return PostFilterResult(), Status(Code.UNSCHEDULABLE)
        self._reject_waiting(pod, full, MSG_REJECT_POST_FILTER)
        backoff = self.args.pod_group_backoff_seconds
        if backoff > 0 and len(g.members) >= min_member:
            self._backoff[full] = self._clock.now() + backoff
        self._permitted.pop(full, None)
        return PostFilterResult(), Status(
            Code.UNSCHEDULABLE,
            (f"PodGroup {full} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter",),
        )

    # ----- Reserve --------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Count the member as assigned (kube's snapshot holds assumed pods)."""
        name = pod.labels.get(POD_GROUP_LABEL)
        if name:
            self.index.assume(f"{pod.namespace}/{name}", pod.uid, node_name)
        return SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Release the member and reject every other waiting member of its group."""
        name = pod.labels.get(POD_GROUP_LABEL)
        if not name:
            return
        full = f"{pod.namespace}/{name}"
        self.index.unassume(full, pod.uid)
        _, g = self._group(pod)
        if g is None:
            return
        self._reject_waiting(pod, full, MSG_REJECT_UNRESERVE)
        self._permitted.pop(full, None)

    # ----- Permit ---------------------------------------------------------------------------
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]:
        """Allow the member and every waiting sibling once minMember members are assigned; else Wait
        (for :meth:`wait_seconds`), and when it is the first assigned member have its siblings still in
        the unschedulable pool or backoffQ tried now (scheduler-plugins' ActivateSiblings), so that the
        quorum can form before the timeout."""
        full, g = self._group(pod)
        if not full:
            return SUCCESS, 0.0
        if g is None or g.spec is None:
            return Status(Code.UNSCHEDULABLE, (MSG_NOT_FOUND,)), 0.0
        spec = g.spec
        if g.assigned_except(pod.uid) + 1 >= spec.min_member:
            name = spec.name
            for w in self._handle.iterate_waiting_pods():
                other = w.pod
                if other.namespace == pod.namespace and other.labels.get(POD_GROUP_LABEL) == name:
                    w.allow(NAME)
            return SUCCESS, 0.0
        if g.assigned_except(pod.uid) == 0:
            # only the group's first assigned member wakes its siblings (scheduler-plugins issue 682)
            self._handle.activate_pods([u for u in g.members if u != pod.uid])
        return WAIT, self.wait_seconds(spec.schedule_timeout_seconds)

    def wait_seconds(self, schedule_timeout_seconds: int | None) -> float:
        """How long a member waits at Permit (scheduler-plugins' Permit with GetWaitTimeDuration): a set
        PodGroup timeout wins unless it is 0; without one, the plugin arg unless it is 0, else 60 s; a
        PodGroup timeout of 0 falls back to the plugin arg as it is (0 included)."""
        configured = float(self.args.permit_waiting_time_seconds)
        if schedule_timeout_seconds is not None:
            return float(schedule_timeout_seconds) if schedule_timeout_seconds != 0 else configured
        return configured or DEFAULT_WAIT_SECONDS


def _unresolvable(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))


def resource_gap(
    table: NodeTable, group: GroupState, min_resources: Mapping[str, int], min_member: int
) -> dict[str, int]:
    """What of ``min_resources`` (plus ``pods``: ``min_member``) the nodes' free resources cannot cover,
    not counting the group's own placed members as used (scheduler-plugins' CheckClusterResource)."""
    request = dict(min_resources)
    request["pods"] = min_member
    n = table.size
    if n == 0:
        return request
    rows: list[int] = []
    members: list[PodInfo] = []
    for uid, node in group.assigned.items():
        row = table.index.get(node)
        if row is None:
            continue
        p = table.pods[row].get(uid)
        if p is not None:
            rows.append(row)
            members.append(p)
    gap: dict[str, int] = {}
    for resource, want in request.items():
        if resource == "pods":
            free = table.alloc("pods") - table.pod_count[:n]
        else:
            free = table.alloc(resource) - table.req(resource)
        if rows:
            free = free.copy()
            back = [1 if resource == "pods" else p.requests.get(resource, 0) for p in members]
            np.add.at(free, rows, back)
        running = np.cumsum(free)
        # the upstream loop subtracts node by node and drops a resource once it is covered
        if want - int(running.max()) <= 0:
            continue
        gap[resource] = want - int(running[-1])
    return gap


def format_resource_map(amounts: Mapping[str, int]) -> str:
    """A ResourceList as Go's ``%v`` prints a map: ``map[cpu:2 pods:3]`` (keys sorted)."""
    items = " ".join(f"{k}:{format_resource(k, v)}" for k, v in sorted(amounts.items()))
    return f"map[{items}]"


__all__ = ["Coscheduling", "format_resource_map", "resource_gap"]
