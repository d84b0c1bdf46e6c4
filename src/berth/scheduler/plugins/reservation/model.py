"""The Reservation plugin's view of reservations: one ReservationInfo each, and a columnar index over them.

An Available reservation holds its node's resources through a virtual pod whose requests are the
reservation's unallocated remainder (``max(0, allocatable - allocated)`` per resource); its owners are
counted on the node like any pod. So a reservation and its owners together never hold more than
``max(allocatable, allocated)``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from berth.api.reservation import (
    LABEL_RESERVATION_ORDER,
    OwnerMatcher,
    allocate_policy,
    allocated_annotation_value,
    compile_owners,
    is_allocate_once,
    reservation_requests,
)
from berth.api.taints import Taint, parse_taints
from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.framework.podinfo import PodInfo

RESERVATION_KIND = "Reservation"
ANNOTATION_RESTRICTED_OPTIONS = "scheduling.koordinator.sh/reservation-restricted-options"
ANNOTATION_RESERVE_POD = "scheduling.koordinator.sh/reserve-pod"
ANNOTATION_RESERVATION_NAME = "scheduling.koordinator.sh/reservation-name"
ANNOTATION_RESERVATION_NODE = "scheduling.koordinator.sh/reservation-node"
LABEL_POD_PRIORITY = "koordinator.sh/priority"
MAX_INT32 = 2147483647
POLICY_CODES = {"": 0, "Aligned": 1, "Restricted": 2}

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


def _order(labels: Mapping[str, str]) -> int:
    raw = labels.get(LABEL_RESERVATION_ORDER)
    if raw is None:
        return 0
    try:
        value = int(raw)
    except ValueError:
        return 0
    return value if value > 0 else 0


def _restricted_names(obj: Mapping[str, Any], allocatable: Mapping[str, int]) -> tuple[str, ...]:
    names = tuple(sorted(r for r, v in allocatable.items() if v))
    raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_RESTRICTED_OPTIONS)
    if not raw:
        return names
    try:
        wanted = set((json.loads(raw) or {}).get("resources") or [])
    except (ValueError, AttributeError):
        return names
    picked = tuple(n for n in names if n in wanted)
    return picked or names


def reserve_pod_object(reservation: Mapping[str, Any]) -> dict[str, Any]:
    """The fake pod Koordinator schedules for a reservation, built from its template."""
    meta = reservation.get("metadata") or {}
    spec = reservation.get("spec") or {}
    template = spec.get("template") or {}
    tmeta = dict(template.get("metadata") or {})
    pspec = dict(template.get("spec") or {})
    labels = {**(tmeta.get("labels") or {}), **(meta.get("labels") or {})}
    annotations = {**(tmeta.get("annotations") or {}), **(meta.get("annotations") or {})}
    annotations[ANNOTATION_RESERVE_POD] = "true"
    annotations[ANNOTATION_RESERVATION_NAME] = meta.get("name", "")
    if pspec.get("nodeName"):
        annotations[ANNOTATION_RESERVATION_NODE] = pspec["nodeName"]
        pspec.pop("nodeName")
    node = (reservation.get("status") or {}).get("nodeName")
    if node:
        pspec["nodeName"] = node
    if pspec.get("priority") is None:
        raw = labels.get(LABEL_POD_PRIORITY)
        try:
            pspec["priority"] = int(raw) if raw is not None else MAX_INT32
        except ValueError:
            pspec["priority"] = MAX_INT32
    pspec["schedulerName"] = pspec.get("schedulerName") or "default-scheduler"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": meta.get("uid", ""),
            "namespace": tmeta.get("namespace") or "default",
            "uid": meta.get("uid", ""),
            "labels": labels,
            "annotations": annotations,
            "creationTimestamp": meta.get("creationTimestamp"),
        },
        "spec": pspec,
    }


def reserve_pod_info(reservation: Mapping[str, Any]) -> PodInfo:
    """The reserve pod compiled for scheduling (kind "Reservation" so the scheduler routes its outcome)."""
    info = PodInfo(reserve_pod_object(reservation))
    info.kind = RESERVATION_KIND
    info.extra["reservation"] = reservation
    return info


class ReservationInfo:
    """One Available (or Waiting) reservation as the plugin tracks it."""

    __slots__ = (
        "allocatable",
        "allocate_once",
        "allocated_annotation",
        "labels",
        "matcher",
        "name",
        "node",
        "obj",
        "order",
        "owners",
        "phase",
        "policy",
        "pre_allocation",
        "reserve_pod",
        "restricted_names",
        "taints",
        "uid",
        "unschedulable",
    )

    def __init__(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        self.obj = obj
        self.uid: str = meta.get("uid", "")
        self.name: str = meta.get("name", "")
        self.node: str = status.get("nodeName") or ""
        self.phase: str = status.get("phase") or "Pending"
        self.labels: Mapping[str, str] = meta.get("labels") or {}
        self.order = _order(self.labels)
        self.matcher: OwnerMatcher = compile_owners(spec.get("owners"))
        self.policy: str = allocate_policy(obj)
        self.allocate_once: bool = is_allocate_once(obj)
        self.unschedulable: bool = bool(spec.get("unschedulable")) or bool(meta.get("deletionTimestamp"))
        self.taints: tuple[Taint, ...] = tuple(
            t for t in parse_taints(spec.get("taints")) if t.effect in ("NoSchedule", "NoExecute")
        )
        self.pre_allocation: bool = bool(spec.get("preAllocation"))
        self.allocatable: dict[str, int] = reservation_requests(obj)
        self.restricted_names = _restricted_names(obj, self.allocatable)
        self.owners: dict[str, dict[str, int]] = {}
        self.reserve_pod = reserve_pod_info(obj)
        self.allocated_annotation = allocated_annotation_value(self.name, self.uid)

    def refresh(self, obj: Mapping[str, Any]) -> None:
        """Take a newer version of the object, keeping the owners tracked so far."""
        owners = self.owners
        self.__init__(obj)  # type: ignore[misc]
        self.owners = owners

    @property
    def available(self) -> bool:
        """Whether new owners may allocate it (Available, not consumed by allocateOnce)."""
        return self.phase == "Available" and not (self.allocate_once and bool(self.owners))

    def allocated(self) -> dict[str, int]:
        """Sum of the owners' requests over the reserved resources."""
        out: dict[str, int] = {}
        for req in self.owners.values():
            for r, v in req.items():
                out[r] = out.get(r, 0) + v
        return out

    def remainder(self, allocated: Mapping[str, int] | None = None) -> dict[str, int]:
        """Reserved but not yet allocated, per resource (never negative); ``allocated`` if given is
        ``allocated()``."""
        used = self.allocated() if allocated is None else allocated
        return {r: max(0, v - used.get(r, 0)) for r, v in self.allocatable.items()}

    def masked(self, requests: Mapping[str, int]) -> dict[str, int]:
        """``requests`` limited to the resources this reservation holds."""
        return {r: v for r, v in requests.items() if r in self.allocatable and v}

    def held(self, allocated: Mapping[str, int] | None = None) -> tuple[dict[str, int], int, int]:
        """What the virtual pod requests: (requests, non-zero cpu, non-zero memory) of the remainder
        (``allocated`` if given is ``allocated()``)."""
        rem = self.remainder(allocated)
        return {r: v for r, v in rem.items() if v and r != "pods"}, rem.get("cpu", 0), rem.get("memory", 0)

    def virtual_pod(self, allocated: Mapping[str, int] | None = None) -> PodInfo:
        """The pod that holds the remainder on the node (``allocated`` if given is ``allocated()``)."""
        pod = self.reserve_pod.copy()
        pod.requests, pod.nonzero_cpu, pod.nonzero_memory = self.held(allocated)
        pod.extra["reservation"] = self.obj
        return pod


class ReservationIndex:
    """Columnar arrays over the tracked reservations, rebuilt when the set or the node layout changes."""

    def __init__(self) -> None:
        self.infos: dict[str, ReservationInfo] = {}
        self._dirty = True
        self._layout = -1
        self.items: list[ReservationInfo] = []
        self.rows: IntArray = np.zeros(0, dtype=np.int64)
        self.groups: list[OwnerMatcher] = []
        self.group_of: IntArray = np.zeros(0, dtype=np.int64)
        self.usable: BoolArray = np.zeros(0, dtype=np.bool_)
        self.unusable = 0  # how many of ``usable`` are False
        self.available: BoolArray = np.zeros(0, dtype=np.bool_)  # Available, not consumed by allocateOnce
        self.unschedulable: BoolArray = np.zeros(0, dtype=np.bool_)
        self.by_name: dict[str, int] = {}
        self.has_taints: BoolArray = np.zeros(0, dtype=np.bool_)
        self.order: IntArray = np.zeros(0, dtype=np.int64)
        self.policy: IntArray = np.zeros(0, dtype=np.int64)
        self.name_rank: IntArray = np.zeros(0, dtype=np.int64)
        self.alloc: dict[str, IntArray] = {}
        self.used: dict[str, IntArray] = {}
        self.position: dict[str, int] = {}
        self.any_taints = False
        self.usage_log: list[int] = []  # reservation indices whose usage changed since the last rebuild
        self.epoch = 0  # bumped on every rebuild
        self.k_of_row: IntArray = np.zeros(0, dtype=np.int64)
        self.all_k: IntArray = np.zeros(0, dtype=np.int64)
        # per node name: active reservations with the Default policy and with Aligned/Restricted
        self.policy_counts: dict[str, list[int]] = {}
        self._nodes_with: tuple[set[str], set[str]] = (set(), set())  # nodes holding Default / other policies
        self.unique_rows = True
        self.row_order: IntArray = np.zeros(0, dtype=np.int64)  # argsort of rows
        self.rem: dict[str, IntArray] = {}
        self.has_ports: BoolArray = np.zeros(0, dtype=np.bool_)
        self.any_ports = False
        self.any_order = False
        self.any_restricted = False
        self._node_version = -1
        self._node_alloc: dict[str, IntArray] = {}

    def mark_dirty(self) -> None:
        """The set of reservations (or their flags) changed."""
        self._dirty = True

    def count_policy(self, info: ReservationInfo, sign: int) -> None:
        """Add (1) or remove (-1) ``info`` from its node's allocate-policy counts."""
        counts = self.policy_counts.setdefault(info.node, [0, 0])
        slot = 0 if info.policy == "" else 1
        counts[slot] += sign
        if counts[slot] > 0:
            self._nodes_with[slot].add(info.node)
        else:
            self._nodes_with[slot].discard(info.node)
        if counts == [0, 0]:
            del self.policy_counts[info.node]

    def conflicting_nodes(self, policy: str) -> set[str]:
        """Nodes whose reservations a new reservation with ``policy`` may not join."""
        return self._nodes_with[1 if policy == "" else 0]

    def update_usage(self, info: ReservationInfo, allocated: Mapping[str, int] | None = None) -> None:
        """Refresh one reservation's allocated amounts (and usability) in place (``allocated`` if given is
        ``info.allocated()``)."""
        if self._dirty:
            return
        k = self.position.get(info.uid)
        if k is None:
            return
        used = info.allocated() if allocated is None else allocated
        rem, alloc = self.rem, self.alloc
        for r, col in self.used.items():
            v = used.get(r, 0)
            col[k] = v
            a = int(alloc[r][k])
            rem[r][k] = a - v if a > v else 0
        available = info.available
        usable = available and not info.unschedulable
        if usable != bool(self.usable[k]):
            self.unusable += -1 if usable else 1
            self.usable[k] = usable
        self.available[k] = available
        self.usage_log.append(k)

    def ensure(self, table: NodeTable) -> None:
        """Rebuild the arrays if needed."""
        if not self._dirty and self._layout == table.layout:
            return
        items = sorted((i for i in self.infos.values() if i.node in table.index), key=lambda i: i.name)
        self.items = items
        self.position = {info.uid: k for k, info in enumerate(items)}
        n = len(items)
        self.rows = np.fromiter((table.index[i.node] for i in items), dtype=np.int64, count=n)
        self.unique_rows = bool(np.unique(self.rows).size == n)
        self.row_order = np.argsort(self.rows, kind="stable")
        groups: dict[str, int] = {}
        self.groups = []
        gid = np.zeros(n, dtype=np.int64)
        for k, info in enumerate(items):
            g = groups.get(info.matcher.signature)
            if g is None:
                g = groups[info.matcher.signature] = len(self.groups)
                self.groups.append(info.matcher)
            gid[k] = g
        self.group_of = gid
        self.available = np.fromiter((i.available for i in items), dtype=np.bool_, count=n)
        self.unschedulable = np.fromiter((i.unschedulable for i in items), dtype=np.bool_, count=n)
        self.usable = self.available & ~self.unschedulable
        self.unusable = n - int(np.count_nonzero(self.usable))
        self.by_name = {i.name: k for k, i in enumerate(items)}
        self.has_taints = np.fromiter((bool(i.taints) for i in items), dtype=np.bool_, count=n)
        self.any_taints = bool(self.has_taints.any())
        self.order = np.fromiter((i.order for i in items), dtype=np.int64, count=n)
        self.policy = np.fromiter((POLICY_CODES.get(i.policy, 0) for i in items), dtype=np.int64, count=n)
        self.name_rank = np.arange(n, dtype=np.int64)
        resources = sorted({r for i in items for r in i.allocatable})
        self.alloc = {
            r: np.fromiter((i.allocatable.get(r, 0) for i in items), dtype=np.int64, count=n)
            for r in resources
        }
        usage = [i.allocated() for i in items]
        self.used = {r: np.fromiter((u.get(r, 0) for u in usage), dtype=np.int64, count=n) for r in resources}
        self.rem = {r: np.maximum(self.alloc[r] - self.used[r], 0) for r in resources}
        self.has_ports = np.fromiter((bool(i.reserve_pod.host_ports) for i in items), dtype=np.bool_, count=n)
        self.any_ports = bool(self.has_ports.any())
        self.any_order = bool((self.order > 0).any())
        self.any_restricted = bool((self.policy == 2).any())
        self._node_version = -1
        self.all_k = np.arange(n, dtype=np.int64)
        self.k_of_row = np.full(table.size, -1, dtype=np.int64)
        if self.unique_rows:
            self.k_of_row[self.rows] = np.arange(n, dtype=np.int64)
        self.usage_log = []
        self.epoch += 1
        self._dirty = False
        self._layout = table.layout

    def remainder(self, r: str) -> IntArray:
        """Unallocated amount of resource ``r`` per reservation (never negative)."""
        out = self.rem.get(r)
        if out is None:
            return np.zeros(len(self.items), dtype=np.int64)
        return out

    def node_alloc(self, r: str, table: NodeTable) -> IntArray:
        """Allocatable of resource ``r`` on each reservation's node (cached until a node changes)."""
        if self._node_version != table.node_version:
            self._node_alloc = {}
            self._node_version = table.node_version
        out = self._node_alloc.get(r)
        if out is None:
            out = self._node_alloc[r] = table.alloc(r)[self.rows]
        return out


class SharedReservations:
    """What the Reservation plugins of one scheduler keep once for all its profiles, as Koordinator's
    reservation cache: the tracked reservations with their owners and usage (the index; their virtual pods
    are on the scheduler's node table), and the one plugin instance that follows the events for them.

    The instances that share it keep per profile only what is theirs: the Pending reservations they
    schedule and their nomination caches (read against ``index.epoch`` and ``index.usage_log``).
    """

    __slots__ = ("follower", "index")

    def __init__(self) -> None:
        self.index = ReservationIndex()
        self.follower: object | None = None

    def claim(self, plugin: object) -> bool:
        """Whether ``plugin`` (the first instance to ask) is the one that applies the reservation and pod
        events to the shared state; the others see its result and apply none."""
        if self.follower is None:
            self.follower = plugin
        return self.follower is plugin
