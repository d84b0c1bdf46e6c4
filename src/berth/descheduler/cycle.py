"""One descheduling cycle, as kubernetes-sigs/descheduler's ``runDeschedulerLoop`` runs it.

The cluster is read once (`read_view`); with fewer than two Ready nodes in scope nothing is done ("the
cluster size is 0 or 1 meaning eviction causes service disruption or degradation"). Every profile is built
(its evictor plugins become the filters of its `ProfileEvictor`; a plugin that cannot be built, e.g. a
DefaultEvictor whose ``priorityThreshold.name`` names no PriorityClass, raises PolicyError), then the
Deschedule plugins of every profile run, then the Balance plugins of every profile, all sharing one
`PodEvictor`, so the policy's limits hold over the whole cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from berth.api.contracts import Recorder, Store
from berth.descheduler.args import PolicyError
from berth.descheduler.evictor import Eviction, Migrate, PodEvictor, ProfileEvictor
from berth.descheduler.framework import (
    BALANCE,
    DESCHEDULE,
    FILTER,
    PRE_EVICTION_FILTER,
    BalancePlugin,
    DeschedulePlugin,
    EvictorPlugin,
    Handle,
    Plugin,
    PluginSpec,
)
from berth.descheduler.policy import EVICT, Policy, ProfileConfig
from berth.descheduler.registry import builtin_plugins
from berth.descheduler.view import ClusterView, read_view

__all__ = ["CycleResult", "Descheduler", "MigrateFactory"]

Obj = dict[str, Any]
MigrateFactory = Callable[[str, Any], Migrate]
"""Given an evict plugin's name and its parsed args, the callback that hands a pod to it."""


@dataclass(frozen=True)
class CycleResult:
    """What one cycle did: the evictions, in order, the view it worked on, why it did nothing (`skipped`)
    and the profiles it could not build (`errors`, when the descheduler skips them)."""

    evictions: tuple[Eviction, ...]
    view: ClusterView
    skipped: str = ""
    errors: tuple[str, ...] = ()


@dataclass
class _Profile:
    config: ProfileConfig
    deschedule: list[DeschedulePlugin]
    balance: list[BalancePlugin]


class Descheduler:
    """Runs the policy's profiles over a `Store`."""

    def __init__(
        self,
        store: Store,
        policy: Policy,
        *,
        recorder: Recorder | None = None,
        plugins: Mapping[str, PluginSpec] | None = None,
        migrate: MigrateFactory | None = None,
        skip_unbuildable: bool = False,
    ) -> None:
        """`recorder` gets the Descheduled events; `migrate` serves profiles with an ``evict`` plugin. A
        profile that cannot be built against the cluster (a ``priorityThreshold.name`` naming no
        PriorityClass) raises PolicyError, or with `skip_unbuildable` is left out of that cycle, as the
        running descheduler does ("unable to create a profile")."""
        self.store = store
        self.policy = policy
        self.recorder = recorder
        self.plugins = plugins if plugins is not None else builtin_plugins()
        self.migrate = migrate
        self.skip_unbuildable = skip_unbuildable

    def run_cycle(self, now: float) -> CycleResult:
        """Run every profile once over the cluster as it is; `now` is Unix seconds."""
        view = read_view(self.store, now, self.policy.node_selector)
        if len(view.nodes) <= 1:
            return CycleResult(
                (), view, "the cluster size is 0 or 1 meaning eviction causes service disruption"
            )
        pod_evictor = PodEvictor(
            self.store,
            self.recorder,
            self.policy.limits,
            grace_period_seconds=self.policy.grace_period_seconds,
            notify_failures=self.policy.eviction_failure_event_notification,
        )
        profiles: list[_Profile] = []
        errors: list[str] = []
        prefix = f"{self.policy.source}: " if self.policy.source else ""
        for config in self.policy.profiles:
            try:
                profiles.append(self._build(config, view, pod_evictor))
            except PolicyError as e:
                if not self.skip_unbuildable:
                    raise PolicyError(f"{prefix}{e}") from None
                errors.append(f"{prefix}unable to create a profile: {e}")
        nodes = view.nodes
        for profile in profiles:
            for plugin in profile.deschedule:
                plugin.deschedule(nodes)
        for profile in profiles:
            for bplugin in profile.balance:
                bplugin.balance(nodes)
        return CycleResult(tuple(pod_evictor.evictions), view, errors=tuple(errors))

    def _build(self, config: ProfileConfig, view: ClusterView, pod_evictor: PodEvictor) -> _Profile:
        migrate: Migrate | None = None
        for name in config.enabled(EVICT):
            if self.migrate is None:
                raise RuntimeError(f'profile "{config.name}": no {name} is available here')
            migrate = self.migrate(name, config.args[name])
        evictor = ProfileEvictor(pod_evictor, config.name, [], [], migrate)
        handle = Handle(view, evictor, config.name)
        built: dict[str, Plugin] = {}

        def plugin(name: str) -> Plugin:
            got = built.get(name)
            if got is None:
                got = built[name] = self.plugins[name].build(config.args[name], handle)
            return got

        for name in config.enabled(FILTER):
            p = plugin(name)
            assert isinstance(p, EvictorPlugin)
            evictor.filters.append(p.filter)
        for name in config.enabled(PRE_EVICTION_FILTER):
            p = plugin(name)
            assert isinstance(p, EvictorPlugin)
            evictor.pre_eviction_filters.append(p.pre_eviction_filter)
        deschedule = [plugin(n) for n in config.enabled(DESCHEDULE)]
        balance = [plugin(n) for n in config.enabled(BALANCE)]
        return _Profile(
            config,
            [p for p in deschedule if isinstance(p, DeschedulePlugin)],
            [p for p in balance if isinstance(p, BalancePlugin)],
        )
