"""Waiting pods: pods a Permit plugin holds between their scheduling cycle and their binding cycle.

A ``Waiting`` pod (kube's waitingPod) is reserved on its node and waits for every holding plugin to allow
it, or for one to reject it or to time out (a clock timer per plugin). Plugins reach it through the
framework handle (``get_waiting_pod``, ``iterate_waiting_pods``); when it is decided, its ``finish``
callback (the binding cycle's) binds it or undoes its reservation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.api.duration import go_duration
from berth.clock import Clock
from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.runtime import Framework
from berth.scheduler.framework.status import SUCCESS, Code, Status
from berth.scheduler.queue import QueuedPod


@dataclass(slots=True)
class Waiting:
    """A pod held at Permit by one or more plugins."""

    finish: Callable[[Waiting, Status], None]  # called once, with SUCCESS or the rejection
    fw: Framework
    state: CycleState
    pod: PodInfo
    node_name: str
    qp: QueuedPod
    cycle: int
    pending: dict[str, Any] = field(default_factory=dict)  # plugin → timer
    done: bool = False
    started: float = 0.0  # perf_counter() at the start of its attempt

    def pending_plugins(self) -> list[str]:
        """The plugins still holding the pod, sorted."""
        return sorted(self.pending)

    def allow(self, plugin: str) -> None:
        """``plugin`` lets the pod go; the last one to do so finishes the wait."""
        timer = self.pending.pop(plugin, None)
        if timer is not None:
            timer.cancel()
        if not self.pending and not self.done:
            self.done = True
            self.finish(self, SUCCESS)

    def reject(self, plugin: str, message: str) -> None:
        """``plugin`` rejects the pod: the wait ends Unschedulable (once)."""
        if self.done:
            return
        self.done = True
        for t in self.pending.values():
            t.cancel()
        self.pending.clear()
        self.finish(self, Status(Code.UNSCHEDULABLE, (message,), plugin))

    def start_timers(self, clock: Clock, waits: Mapping[str, float]) -> None:
        """Hold the pod for each plugin of ``waits`` at most its timeout (seconds)."""
        for plugin, timeout in waits.items():
            self.pending[plugin] = clock.call_later(timeout, _timeout_cb(self, plugin, timeout))


def _timeout_cb(w: Waiting, plugin: str, timeout: float) -> Callable[[], None]:
    def fire() -> None:
        w.pending.pop(plugin, None)
        w.reject(plugin, f"rejected due to timeout after waiting {go_duration(timeout)} at plugin {plugin}")

    return fire
