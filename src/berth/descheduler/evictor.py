"""The descheduler's PodEvictor: one per cycle, shared by every profile, applying the policy's limits.

As upstream's ``PodEvictor.EvictPod``: the total limit is checked first, then the pod's node's, then its
namespace's; a pod within the limits is evicted through the eviction API (``Store.evict``, so
PodDisruptionBudgets and Berth's disruption rate limit apply) with the policy's ``gracePeriodSeconds``. A
refusal (429 TooManyRequests, NotFound for a pod already gone, any other API error) skips the pod and counts
nothing. Each
eviction records a Normal Event on the pod: reason = the eviction's reason, else the plugin's name; action
``Descheduled``; message ``pod eviction from NODE node by sigs.k8s.io/descheduler``.

A profile that enables an ``evict`` plugin (Koordinator's ``MigrationController``) hands the pod to a
`Migrate` callback instead: a PodMigrationJob that holds the new place before the old pod goes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from berth.api.contracts import Recorder, Store
from berth.api.errors import StatusError
from berth.descheduler.framework import EvictOutcome

__all__ = ["COMPONENT", "Eviction", "Limits", "Migrate", "PodEvictor", "ProfileEvictor"]

Obj = dict[str, Any]
COMPONENT = "sigs.k8s.io/descheduler"
Migrate = Callable[[Obj, str, str], "str | None"]
"""Route an eviction through a PodMigrationJob: called with the pod, the plugin asking and the reason; returns
None once the job exists, else why the pod cannot be migrated now (the eviction is then refused)."""
Filter = Callable[[Obj], bool]


@dataclass(frozen=True)
class Limits:
    """The policy's eviction limits for one cycle (None: unlimited)."""

    per_node: int | None = None
    per_namespace: int | None = None
    total: int | None = None


@dataclass(frozen=True)
class Eviction:
    """One pod the cycle evicted: where it was, who asked and why."""

    namespace: str
    name: str
    node: str
    plugin: str
    profile: str
    reason: str
    migrated: bool = False


class PodEvictor:
    """Counts and performs the cycle's evictions against `store`."""

    def __init__(
        self,
        store: Store,
        recorder: Recorder | None,
        limits: Limits,
        *,
        grace_period_seconds: int | None = None,
        notify_failures: bool = False,
    ) -> None:
        """`recorder` gets the Descheduled events (None: no events); with `notify_failures` also a Warning
        ``EvictionFailed`` event for every eviction refused or over a limit
        (``evictionFailureEventNotification``)."""
        self.store = store
        self.recorder = recorder
        self.limits = limits
        self.grace_period_seconds = grace_period_seconds
        self.notify_failures = notify_failures
        self.per_node: dict[str, int] = {}
        self.per_namespace: dict[str, int] = {}
        self.evictions: list[Eviction] = []
        self._evicted: set[tuple[str, str]] = set()

    @property
    def total(self) -> int:
        """Pods evicted in this cycle."""
        return len(self.evictions)

    def node_limit_reached(self, node: str) -> bool:
        """Whether the node's limit leaves no eviction."""
        limit = self.limits.per_node
        return limit is not None and self.per_node.get(node, 0) >= limit

    def total_limit_reached(self) -> bool:
        """Whether the total limit leaves no eviction."""
        limit = self.limits.total
        return limit is not None and self.total >= limit

    def evict(
        self, pod: Obj, *, plugin: str, profile: str, reason: str = "", migrate: Migrate | None = None
    ) -> EvictOutcome:
        """Evict the pod (or hand it to `migrate`) within the limits."""
        meta = pod["metadata"]
        namespace, name = str(meta.get("namespace") or ""), str(meta["name"])
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        limits = self.limits
        if self.total_limit_reached():
            return self._failed(
                pod, node, EvictOutcome.TOTAL_LIMIT, f"total eviction limit exceeded ({limits.total})"
            )
        if node and self.node_limit_reached(node):
            return self._failed(
                pod, node, EvictOutcome.NODE_LIMIT, f"node eviction limit exceeded ({limits.per_node})"
            )
        ns_limit = limits.per_namespace
        if ns_limit is not None and self.per_namespace.get(namespace, 0) >= ns_limit:
            return self._failed(
                pod, node, EvictOutcome.NAMESPACE_LIMIT, f"namespace eviction limit exceeded ({ns_limit})"
            )
        if (namespace, name) in self._evicted:
            return EvictOutcome.REFUSED
        if migrate is not None:
            why = migrate(pod, plugin, reason or plugin)
            if why is not None:
                return self._failed(pod, node, EvictOutcome.REFUSED, why)
        else:
            try:
                self.store.evict(namespace, name, grace_period_seconds=self.grace_period_seconds)
            except StatusError as e:
                # 429 (a budget, the rate limit), a pod already gone, or any other refusal (a pod under two
                # budgets: 500): upstream logs "Error evicting pod" and goes on with the next pod
                return self._failed(pod, node, EvictOutcome.REFUSED, str(e))
        self._evicted.add((namespace, name))
        if node:
            self.per_node[node] = self.per_node.get(node, 0) + 1
        self.per_namespace[namespace] = self.per_namespace.get(namespace, 0) + 1
        self.evictions.append(Eviction(namespace, name, node, plugin, profile, reason, migrate is not None))
        if self.recorder is not None:
            self.recorder.event(
                pod,
                "Normal",
                reason or plugin or "NotSet",
                f"pod eviction from {node} node by {COMPONENT}",
                action="Descheduled",
                component=COMPONENT,
            )
        return EvictOutcome.EVICTED

    def _failed(self, pod: Obj, node: str, outcome: EvictOutcome, why: str) -> EvictOutcome:
        """Tell of a failed eviction (when asked to) and return its outcome."""
        if self.notify_failures and self.recorder is not None:
            self.recorder.event(
                pod,
                "Warning",
                "EvictionFailed",
                f"pod eviction from {node} node by {COMPONENT} failed: {why}",
                action="Descheduled",
                component=COMPONENT,
            )
        return outcome


class ProfileEvictor:
    """The `framework.Evictor` of one profile: its filters over the shared `PodEvictor`."""

    def __init__(
        self,
        pod_evictor: PodEvictor,
        profile: str,
        filters: list[Filter],
        pre_eviction_filters: list[Filter],
        migrate: Migrate | None = None,
    ) -> None:
        """`filters` / `pre_eviction_filters` are the profile's evictor plugins' checks, in order."""
        self.pod_evictor = pod_evictor
        self.profile = profile
        self.filters = filters
        self.pre_eviction_filters = pre_eviction_filters
        self.migrate = migrate

    def filter(self, pod: Obj) -> bool:
        """All filter plugins allow the pod."""
        return all(f(pod) for f in self.filters)

    def pre_eviction_filter(self, pod: Obj) -> bool:
        """All preEvictionFilter plugins allow the pod."""
        return all(f(pod) for f in self.pre_eviction_filters)

    def evict(self, pod: Obj, plugin: str, reason: str = "") -> EvictOutcome:
        """Evict through the shared evictor (limits summed over every profile of the cycle)."""
        return self.pod_evictor.evict(
            pod, plugin=plugin, profile=self.profile, reason=reason, migrate=self.migrate
        )

    def node_limit_reached(self, node_name: str) -> bool:
        """The shared per-node limit."""
        return self.pod_evictor.node_limit_reached(node_name)

    def total_limit_reached(self) -> bool:
        """The shared total limit."""
        return self.pod_evictor.total_limit_reached()

    def evicted_from(self, node_name: str) -> int:
        """Pods evicted from the node so far in this cycle."""
        return self.pod_evictor.per_node.get(node_name, 0)
