"""The simulation engine: embedded store, virtual clock, scheduler, kubelet and the event loop.

Everything runs single-threaded: store writes are buffered as watch events and dispatched to the
components; the scheduler works while it has pods in activeQ; then the clock jumps to the next timer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from berth.api.errors import StatusError
from berth.api.kinds import lookup_kind
from berth.api.manifest import Manifest
from berth.clock import SimClock
from berth.controlplane.plane import ControlPlane, install_admission
from berth.descheduler.drain import DrainError, DrainResult, cordon, drain, failure_lines, uncordon
from berth.scheduler.framework.config import SchedulerConfig
from berth.scheduler.framework.registry import Registry
from berth.sim.scenario import ObjectRef, Plan, Step, build_plan
from berth.store import MemoryStore

DEFAULT_TAIL = 600.0
WATCH_HISTORY = 1024
"""Store events kept for resuming watches: nothing in a simulation resumes a watch from an old revision, and a
long history would keep every superseded version of every object alive (a watch from a revision older than the
kept ones gets ResourceExpired and relists, as after an etcd compaction)."""


@dataclass(slots=True)
class RunResult:
    """What a finished run reports."""

    virtual_seconds: float
    wall_seconds: float
    scheduling_seconds: float
    attempts: int
    scheduled: int
    unschedulable_attempts: int
    errors: int


class Simulation(ControlPlane):
    """An in-process cluster on a virtual clock: the control plane plus the steps of a Scenario."""

    def __init__(
        self, *, config: SchedulerConfig | None = None, seed: int = 0, registry: Registry | None = None
    ) -> None:
        clock = SimClock()
        store = MemoryStore(clock=clock, seed=seed, history_size=WATCH_HISTORY)
        install_admission(store)
        super().__init__(store, clock, config=config, seed=seed, registry=registry)
        self.warn_unserved()
        self.clock: SimClock = clock
        self.drains: list[DrainResult] = []
        self.step_errors: list[str] = []
        self.on_step: Callable[[Step], None] | None = None
        self.on_tick: Callable[[], None] | None = None  # told of every jump of the virtual clock (progress)

    # ----- applying steps ------------------------------------------------------------------
    def apply_step(self, step: Step) -> None:
        """Create, delete and patch the objects of one step."""
        for obj in step.create:
            try:
                self.store.create(obj, keep_identity=True)
            except StatusError as e:
                self._refused(step, e)
        for ref in step.delete:
            try:
                self.store.delete(_key(ref), ref.namespace or _default_ns(ref), ref.name)
            except StatusError as e:
                self._refused(step, e)
        for ref, patch in step.patch:
            key = _key(ref)
            ns = ref.namespace or _default_ns(ref)
            body = {k: v for k, v in patch.items() if k != "status"}
            try:
                if body:
                    self.store.patch(key, ns, ref.name, body)
                if "status" in patch:
                    self.store.patch(key, ns, ref.name, {"status": patch["status"]}, subresource="status")
            except StatusError as e:
                self._refused(step, e)
        self._node_steps(step)
        if self.on_step is not None:
            self.on_step(step)

    def _node_steps(self, step: Step) -> None:
        """Cordon, uncordon and drain nodes as ``kubectl cordon/uncordon/drain`` would."""
        for node in step.cordon:
            try:
                cordon(self.store, node)
            except StatusError as e:
                self._refused(step, e)
        for node in step.uncordon:
            try:
                uncordon(self.store, node)
            except StatusError as e:
                self._refused(step, e)
        for spec in step.drain:
            try:
                drain(
                    self.store,
                    self.clock,
                    spec.node,
                    timeout=spec.timeout,
                    force=spec.force,
                    grace_period_seconds=spec.grace_period_seconds,
                    prefer_avoid=spec.prefer_avoid_pods,
                    ignore_daemonsets=spec.ignore_daemonsets,
                    delete_emptydir_data=spec.delete_emptydir_data,
                    pod_selector=spec.pod_selector,
                    on_done=self._drain_done,
                )
            except DrainError as e:
                self.step_errors.append(
                    f'at {step.at:g}s: error: unable to drain node "{spec.node}" due to error: {e}, '
                    "continuing command..."
                )
            except StatusError as e:
                self._refused(step, e)

    def _drain_done(self, result: DrainResult) -> None:
        """Keep a finished drain's result; a failed one is reported like kubectl reports it: the pods still on
        the node, each with what held it (the PodDisruptionBudget causes of its last refused eviction, Berth's
        addition), then the drain's error."""
        self.drains.append(result)
        if not result.ok:
            lines = failure_lines(result)
            if lines:
                self.step_errors.append(f"at {result.finished:g}s: {lines[0]}")
                for ref, line in zip(result.pending, lines[1:], strict=True):
                    held = result.blocked.get(ref)
                    self.step_errors.append(f"{line} (blocked: {'; '.join(held)})" if held else line)
            self.step_errors.append(
                f'at {result.finished:g}s: error: unable to drain node "{result.node}" due to error: '
                f"{result.error}, continuing command..."
            )

    def _refused(self, step: Step, e: StatusError) -> None:
        """The API refused a step's request; the run goes on, as kubectl apply would for that object."""
        self.step_errors.append(f"at {step.at:g}s: Error from server ({e.reason}): {e}")

    # ----- the loop ------------------------------------------------------------------------
    def advance(self, until: float) -> None:
        """Run to virtual time ``until``: every timer due by then, and everything it sets off."""
        while True:
            self.run_until_idle()
            nxt = self.clock.peek()
            if nxt is None or nxt > until:
                break
            self.clock.step()
            if self.on_tick is not None:
                self.on_tick()
        self.clock.run(until=until)  # advances the time; nothing left to run before ``until``
        self.run_until_idle()

    def run(self, plan: Plan, until: float | None = None) -> RunResult:
        """Run ``plan`` to ``until`` (default: the plan's own end, else 10 minutes after its last step)."""
        end = run_end(plan, until)
        for step in plan.steps:
            self.clock.call_at(step.at, _bound(self.apply_step, step), -1)
        t0 = time.perf_counter()
        self.advance(end)
        wall = time.perf_counter() - t0
        st = self.scheduler.stats
        return RunResult(end, wall, st.loop_seconds, st.attempts, st.scheduled, st.unschedulable, st.errors)

    def run_manifests(self, manifests: Sequence[Manifest], until: float | None = None) -> RunResult:
        """Build the plan from loaded manifests and run it."""
        return self.run(build_plan(manifests), until)

    def objects(self) -> list[dict[str, Any]]:
        """Every object in the store, sorted by kind, namespace, name."""
        return self.store.all_objects()


def run_end(plan: Plan, until: float | None = None) -> float:
    """The virtual time a run of ``plan`` ends at: ``until``, else the plan's own end, else 10 minutes after
    its last step."""
    end = until if until is not None else plan.until
    return plan.last_step_at + DEFAULT_TAIL if end is None else end


def _bound(fn: Callable[[Step], None], step: Step) -> Callable[[], None]:
    return lambda: fn(step)


def _key(ref: ObjectRef) -> tuple[str, str]:
    group = ref.api_version.rsplit("/", 1)[0] if "/" in ref.api_version else ""
    return (group, ref.kind)


def _default_ns(ref: ObjectRef) -> str:
    try:
        return "default" if lookup_kind(ref.api_version, ref.kind).namespaced else ""
    except KeyError:
        return ""
