"""The control plane hands each store event to the components that follow its kind, in a fixed order (the
scheduler, the kubelet, then the controllers), skipping the controllers left out and following a component that
is replaced."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.watch import WatchEvent
from berth.clock import SimClock
from berth.controlplane.plane import ControlPlane
from berth.store import MemoryStore

COMPONENTS = (
    "kubelet",
    "reservations",
    "workloads",
    "disruption",
    "podgc",
    "garbagecollector",
    "podgroups",
    "elasticquotas",
    "migration",
    "statefulsets",
    "daemonsets",
    "batch",
)


class _Recorder:
    """A component that logs the events it is given."""

    def __init__(self, name: str, log: list[tuple[str, str, str]], kinds: set[str] | None = None) -> None:
        self.name = name
        self.log = log
        self.kinds = kinds or set()

    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        self.log.append((self.name, type_, str(obj.get("kind"))))

    def watched_kinds(self) -> set[str]:
        return {"Pod", "Node", *self.kinds}


def _plane(log: list[tuple[str, str, str]], **kwargs: Any) -> ControlPlane[MemoryStore]:
    plane = ControlPlane(MemoryStore(clock=SimClock()), SimClock(), **kwargs)
    plane.scheduler = _Recorder("scheduler", log, {"Reservation"})  # type: ignore[assignment]
    for name in COMPONENTS:
        if getattr(plane, name) is not None:
            setattr(plane, name, _Recorder(name, log))
    return plane


def _deliver(plane: ControlPlane[MemoryStore], type_: str, kind: str, api_version: str = "v1") -> None:
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    plane._pending.append(WatchEvent(type_, obj, (api_version.rpartition("/")[0], kind), 1))
    plane._dispatch()


def test_each_kind_goes_to_its_followers_in_order() -> None:
    log: list[tuple[str, str, str]] = []
    plane = _plane(log)
    cases = {
        "Pod": [
            "scheduler",
            "kubelet",
            "reservations",
            "workloads",
            "disruption",
            "podgc",
            "garbagecollector",
            "podgroups",
            "elasticquotas",
            "migration",
            "statefulsets",
            "daemonsets",
            "batch",
        ],
        "Node": ["scheduler", "kubelet", "reservations", "podgc", "garbagecollector", "daemonsets"],
        "Reservation": ["scheduler", "reservations", "garbagecollector", "migration"],
        "ReplicaSet": ["workloads", "disruption", "garbagecollector"],
        "Deployment": ["workloads", "disruption", "garbagecollector"],
        "PodDisruptionBudget": ["disruption", "garbagecollector"],
        "StatefulSet": ["disruption", "garbagecollector", "statefulsets"],
        "DaemonSet": ["garbagecollector", "daemonsets"],
        "Job": ["garbagecollector", "batch"],
        "CronJob": ["garbagecollector", "batch"],
        "PodGroup": ["garbagecollector", "podgroups"],
        "ElasticQuota": ["garbagecollector", "elasticquotas"],
        "PodMigrationJob": ["garbagecollector", "migration"],
        "ConfigMap": ["garbagecollector"],
        "Event": [],
    }
    for kind, expected in cases.items():
        log.clear()
        _deliver(plane, "MODIFIED", kind)
        assert log == [(name, "MODIFIED", kind) for name in expected], kind


def test_controllers_left_out_are_not_called() -> None:
    log: list[tuple[str, str, str]] = []
    plane = _plane(log, controllers=("reservation", "podgc"), kubelet=False)
    _deliver(plane, "ADDED", "Pod")
    assert log == [("scheduler", "ADDED", "Pod"), ("reservations", "ADDED", "Pod"), ("podgc", "ADDED", "Pod")]
    log.clear()
    _deliver(plane, "DELETED", "ReplicaSet")
    assert log == []


def test_a_replaced_component_gets_the_events() -> None:
    log: list[tuple[str, str, str]] = []
    plane = _plane(log, controllers=("podmigrationjob",), kubelet=False)
    _deliver(plane, "ADDED", "PodMigrationJob")
    assert log == [("migration", "ADDED", "PodMigrationJob")]
    log.clear()
    plane.migration = _Recorder("new-migration", log)  # type: ignore[assignment]
    _deliver(plane, "ADDED", "PodMigrationJob")
    assert log == [("new-migration", "ADDED", "PodMigrationJob")]
