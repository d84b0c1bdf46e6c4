"""The framework handle: what the scheduler offers the plugins of one profile (kube's framework.Handle).

Plugins see the scheduler only through this handle (the ``Handle`` protocol of the framework): the clock,
the store, the node table, the waiting pods, events, the queue, nominations, pseudo-pod kinds and the
what-if filters of preemption. The handle reads its owner's parts when a plugin calls, not when it is
made: the frameworks (and so the handles) are built before the queue.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar, cast

from berth.api.contracts import Recorder, Store
from berth.clock import Clock
from berth.scheduler.cache import SchedulerCache
from berth.scheduler.extender import Extenders
from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.framework.plugin import PseudoPodSource
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import SUCCESS, PluginError, Status
from berth.scheduler.nominator import Nominator
from berth.scheduler.queue import SchedulingQueue
from berth.scheduler.waiting import Waiting
from berth.scheduler.whatif import WhatIf

T = TypeVar("T")


class HandleHost(Protocol):
    """The parts of the scheduler a handle reaches for (the Scheduler has them)."""

    clock: Clock
    store: Store
    events: Recorder
    rng: random.Random
    cache: SchedulerCache
    queue: SchedulingQueue
    nominator: Nominator
    waiting: dict[str, Waiting]
    pseudo_sources: dict[tuple[str, str], PseudoPodSource]
    whatif: WhatIf
    extenders: Extenders

    def set_nomination(self, pod: PodInfo, node: str) -> None:
        """Write (or clear, with "") ``pod``'s status.nominatedNodeName and track it."""
        ...


class SchedulerHandle:
    """The framework Handle the scheduler gives the plugins of one profile.

    It implements ``berth.scheduler.framework.plugin.Handle``; each method is documented there.
    """

    def __init__(self, sched: HandleHost, profile: str) -> None:
        self._s = sched
        self.profile_name = profile

    @property
    def clock(self) -> Clock:
        return self._s.clock

    @property
    def client(self) -> Store:
        return self._s.store

    @property
    def rng(self) -> random.Random:
        return self._s.rng

    def node_table(self) -> NodeTable:
        return self._s.cache.table

    def get_waiting_pod(self, uid: str) -> Waiting | None:
        return self._s.waiting.get(uid)

    def iterate_waiting_pods(self) -> Iterable[Waiting]:
        return list(self._s.waiting.values())

    def record_event(
        self, obj: Mapping[str, Any], type_: str, reason: str, message: str, action: str = ""
    ) -> None:
        self._s.events.event(obj, type_, reason, message, action=action, component=self.profile_name)

    def call_later(self, delay: float, fn: Callable[[], None]) -> None:
        self._s.clock.call_later(delay, fn)

    def bind_pod(self, pod: PodInfo, node_name: str, annotations: Mapping[str, str] | None = None) -> None:
        self._s.store.bind(pod.namespace, pod.name, node_name, uid=pod.uid, annotations=annotations)

    def register_pseudo_kind(self, kind: str, source: PseudoPodSource) -> None:
        self._s.pseudo_sources[(self.profile_name, kind)] = source

    def enqueue(self, pod: PodInfo) -> None:
        s = self._s
        if s.cache.is_assumed(pod.uid) or pod.uid in s.waiting:
            return
        if pod.uid in s.queue:
            s.queue.update(pod)
        else:
            s.queue.add(pod)

    def dequeue(self, uid: str) -> None:
        self._s.queue.delete(uid)

    def set_virtual_pod(self, pod: PodInfo, node_name: str) -> None:
        s = self._s
        known = s.cache.set_pod(pod, node_name)
        s.queue.move_all("Pod", "Update" if known else "Add")

    def resize_virtual_pod(
        self, uid: str, node_name: str, requests: dict[str, int], nonzero_cpu: int, nonzero_memory: int
    ) -> PodInfo | None:
        s = self._s
        pod = s.cache.resize_pod(uid, node_name, requests, nonzero_cpu, nonzero_memory)
        if pod is not None:
            s.queue.move_all("Pod", "Update")
        return pod

    def remove_virtual_pod(self, uid: str) -> None:
        s = self._s
        if s.cache.remove_pod(uid) is not None:
            s.queue.move_all("Pod", "Delete")

    def shared(self, key: Hashable, make: Callable[[], T]) -> T:
        kept = self._s.cache.plugin_state
        value = kept.get(key)
        if value is None:
            value = kept[key] = make()
        return cast(T, value)

    def nominated_pods(self, node_name: str) -> list[PodInfo]:
        return list(self._s.nominator.on_node(node_name))

    def filter_with_changes(
        self,
        state: CycleState,
        pod: PodInfo,
        node_name: str,
        removed: Sequence[PodInfo] = (),
    ) -> Status:
        return self._s.whatif.filter_with_changes(self.profile_name, state, pod, node_name, removed)

    def clear_nomination(self, pod: PodInfo) -> None:
        self._s.set_nomination(pod, "")

    def dry_run_key(self, state: CycleState, pod: PodInfo, node_name: str) -> Hashable | None:
        return self._s.whatif.dry_run_key(self.profile_name, state, pod, node_name)

    def dry_run_keys(self, state: CycleState, pod: PodInfo, rows: Sequence[int]) -> list[Hashable | None]:
        return self._s.whatif.dry_run_keys(self.profile_name, state, pod, rows)

    def activate_pods(self, uids: Iterable[str]) -> None:
        self._s.queue.activate(uids)

    def extender_preemption(
        self, pod: PodInfo, victims: Mapping[str, tuple[list[PodInfo], int]]
    ) -> tuple[dict[str, tuple[list[PodInfo], int]] | None, Status]:
        extenders = self._s.extenders
        if not extenders.has_preemption:
            return None, SUCCESS
        try:
            return extenders.process_preemption(pod, dict(victims), self._s.cache.table), SUCCESS
        except PluginError as e:
            return None, e.status
