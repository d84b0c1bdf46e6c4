"""Warnings for pending pods that no scheduler profile serves (Berth's addition: kube-scheduler is silent).

A pod whose ``spec.schedulerName`` names none of the profiles waits forever unless some other scheduler binds
it. In ``berth simulate`` and ``berth serve`` there usually is no other scheduler, so the scheduler says so
once per pod: one Warning Event ``NoSchedulerProfile`` on the pod, naming the scheduler name and the profiles
there are. A pod warned about before (an Event already in the store, e.g. after a restart) is not warned again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from berth.api.contracts import Recorder, Store

__all__ = ["COMPONENT", "REASON", "UnservedPods", "unserved_message"]

REASON = "NoSchedulerProfile"
COMPONENT = "berth-scheduler"
EVENT_KEY = ("", "Event")


def unserved_message(scheduler_name: str, profiles: Iterable[str]) -> str:
    """The Event's message for a pod asking for ``scheduler_name`` when only ``profiles`` are served."""
    served = ", ".join(f'"{p}"' for p in profiles)
    return (
        f'no scheduler profile is named "{scheduler_name}" (the profiles are {served}): '
        "the pod stays Pending until a scheduler of that name binds it"
    )


class UnservedPods:
    """Records one Warning Event per pending pod whose schedulerName no profile serves."""

    def __init__(self, store: Store, events: Recorder, profiles: Iterable[str]) -> None:
        """Warn through `events` about pods of `store`; `profiles` are the scheduler names that are served."""
        self.store = store
        self.events = events
        self.profiles = tuple(profiles)
        self._warned: set[str] = set()

    def pending(self, pod: Mapping[str, Any]) -> None:
        """A pending pod (no nodeName) that no profile serves was seen: warn about it unless already done."""
        meta = pod.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        if uid in self._warned or meta.get("deletionTimestamp"):
            return
        self._warned.add(uid)
        earlier, _ = self.store.list(
            EVENT_KEY,
            str(meta.get("namespace") or "default"),
            field_selector=f"involvedObject.uid={uid},reason={REASON}",
        )
        if earlier:
            return
        name = (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
        self.events.event(
            pod, "Warning", REASON, unserved_message(str(name), self.profiles), component=COMPONENT
        )

    def forget(self, uid: str) -> None:
        """The pod is gone or bound: nothing more to remember about it."""
        self._warned.discard(uid)
