"""The Reservation plugins of one scheduler's profiles keep the reservations once (as Koordinator's one
reservation cache per scheduler): the same ReservationInfo objects, owners, usage and virtual pod, kept by one
of the instances; each instance keeps its own profile's Pending reservations and nomination caches. Instances
whose plugin args differ keep separate states. An owner's binding sets the virtual pod once, changing its
requests in place."""

from __future__ import annotations

from typing import Any

import pytest
from rsv_helpers import KOORD, allocated_to, container, get, node_of, reservation, rsv_status

from berth.api.manifest import Manifest
from berth.scheduler.cache import SchedulerCache
from berth.scheduler.framework.config import parse_config
from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.nodetable import NodeTable
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.plugins.reservation.model import SharedReservations
from berth.scheduler.plugins.reservation.plugin import Reservation
from berth.sim.engine import Simulation

Obj = dict[str, Any]
CONFIG_API = "kubescheduler.config.k8s.io/v1"


def node(name: str, cpu: str = "4") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "20"}},
    }


def owner(name: str, cpu: str, scheduler: str = "default-scheduler", uid: str = "") -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "labels": {"app": "a"}}
    if uid:
        meta["uid"] = uid
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"schedulerName": scheduler, "containers": [container(cpu, "1Gi")]},
    }


def run(objs: list[Obj], until: float, config: Obj | None = None) -> Simulation:
    sim = Simulation(config=parse_config(config) if config is not None else None)
    sim.run_manifests([Manifest(o, "test") for o in objs], until=until)
    return sim


def plugins(sim: Simulation) -> tuple[Reservation, Reservation]:
    fws = sim.scheduler.frameworks
    a, b = fws["default-scheduler"].plugins["Reservation"], fws[KOORD].plugins["Reservation"]
    assert isinstance(a, Reservation) and isinstance(b, Reservation)
    return a, b


def reservation_uid(sim: Simulation, name: str) -> str:
    return str(get(sim, "Reservation", name)["metadata"]["uid"])


def test_default_profiles_share_one_state_followed_by_one_instance() -> None:
    sim = run([node("n0"), reservation("r0", cpu="2", node_name="n0", allocate_once=False)], until=5.0)
    a, b = plugins(sim)
    assert a.shared is b.shared and a.index is b.index
    assert (a.follows_events, b.follows_events) == (True, False)
    uid = reservation_uid(sim, "r0")
    assert list(a.index.infos) == [uid]
    assert a.pending == {} and b.pending == {}  # r0 (koord-scheduler's) was scheduled and left Pending


def test_one_owner_binding_counts_the_virtual_pod_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counted: list[tuple[str, int]] = []  # (pod uid, cpu) of every pod counted on a node row
    add_pod = NodeTable.add_pod

    def recording(self: NodeTable, i: int, pod: PodInfo) -> None:
        counted.append((pod.uid, pod.requests.get("cpu", 0)))
        add_pod(self, i, pod)

    monkeypatch.setattr(NodeTable, "add_pod", recording)
    sim = run(
        [node("n0"), reservation("r0", cpu="2", node_name="n0", allocate_once=False)],
        until=5.0,
    )
    uid = reservation_uid(sim, "r0")
    # the reserve pod assumed in its cycle, then the virtual pod once (it was twice, once per profile)
    assert [c for c in counted if c[0] == uid] == [(uid, 2000), (uid, 2000)]
    counted.clear()
    sim.run_manifests([Manifest(owner("a0", "500m"), "test")], until=10.0)
    assert node_of(sim, "a0") == "n0" and allocated_to(sim, "a0") == "r0"
    # Reserve changes the virtual pod's requests once; the binding event changes nothing more (the other
    # profile's instance used to set it again)
    assert [c for c in counted if c[0] == uid] == [(uid, 1500)]
    table = sim.scheduler.cache.table
    row = table.index["n0"]
    assert int(table.requested["cpu"][row]) == 2000  # the owner's 500m and the 1500m still reserved
    assert int(table.pod_count[row]) == 2


def test_virtual_pod_is_changed_in_place() -> None:
    sim = run([node("n0"), reservation("r0", cpu="2", node_name="n0", allocate_once=False)], until=5.0)
    uid = reservation_uid(sim, "r0")
    cache = sim.scheduler.cache
    before = cache.pod(uid)
    assert before is not None and before.requests["cpu"] == 2000
    sim.run_manifests([Manifest(owner("a0", "500m"), "test"), Manifest(owner("a1", "1"), "test")], until=10.0)
    after = cache.pod(uid)
    assert after is before
    # 2 cpu / 2Gi reserved, 1.5 cpu / 2Gi allocated
    assert (after.requests, after.nonzero_cpu, after.nonzero_memory) == ({"cpu": 500}, 500, 0)
    assert after.extra["reservation"]["metadata"]["uid"] == uid
    assert rsv_status(sim, "r0")["phase"] == "Available"


def test_a_reserve_in_one_profile_is_seen_by_the_other_at_once() -> None:
    sim = run([node("n0"), reservation("r0", cpu="2", node_name="n0", allocate_once=False)], until=5.0)
    a, b = plugins(sim)
    table = sim.scheduler.cache.table
    uid = reservation_uid(sim, "r0")
    row = table.index["n0"]

    def freed_for(plugin: Reservation, name: str, scheduler: str) -> int:
        """The cpu the pod's PreFilter frees on n0 (its nominee's remainder)."""
        state = CycleState()
        pod = PodInfo(owner(name, "250m", scheduler, uid=f"uid-{name}"))
        _, status = plugin.pre_filter(state, pod, table)
        assert status.is_success()
        return -int(state.overlay[-1].requested["cpu"][row])

    assert freed_for(b, "p0", KOORD) == 2000
    state = CycleState()
    first = PodInfo(owner("first", "500m", uid="uid-first"))
    assert a.pre_filter(state, first, table)[1].is_success()
    assert a.reserve(state, first, "n0").is_success()
    # before the binding's event: the koord-scheduler profile sees what default-scheduler's Reserve took
    k = b.index.position[uid]
    assert int(b.index.rem["cpu"][k]) == 1500
    assert freed_for(b, "p1", KOORD) == 1500
    assert freed_for(a, "p2", "default-scheduler") == 1500
    assert b.index.infos[uid].owners == {"uid-first": {"cpu": 500, "memory": 1 << 30}}
    a.unreserve(state, first, "n0")
    assert freed_for(b, "p3", KOORD) == 2000
    vp = sim.scheduler.cache.pod(uid)
    assert vp is not None and vp.requests["cpu"] == 2000


def test_profiles_with_different_args_keep_separate_states() -> None:
    config = {
        "apiVersion": CONFIG_API,
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": "default-scheduler"},
            {
                "schedulerName": KOORD,
                "pluginConfig": [
                    {"name": "Reservation", "args": {"preAllocationConfig": {"enableClusterMode": True}}}
                ],
            },
        ],
    }
    sim = run(
        [node("n0"), reservation("r0", cpu="2", node_name="n0", allocate_once=False), owner("a0", "500m")],
        until=5.0,
        config=config,
    )
    a, b = plugins(sim)
    assert a.shared is not b.shared and a.index is not b.index
    assert (a.follows_events, b.follows_events) == (True, True)
    uid = reservation_uid(sim, "r0")
    ia, ib = a.index.infos[uid], b.index.infos[uid]
    assert ia is not ib
    # each instance followed the owner on its own; the virtual pod agrees with both
    assert ia.owners == ib.owners and len(ia.owners) == 1
    vp = sim.scheduler.cache.pod(uid)
    assert vp is not None and vp.requests["cpu"] == 1500


def test_profiles_with_equal_explicit_args_share() -> None:
    args = {"preAllocationConfig": {"enableClusterMode": True}}
    config = {
        "apiVersion": CONFIG_API,
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": name, "pluginConfig": [{"name": "Reservation", "args": args}]}
            for name in ("default-scheduler", KOORD)
        ],
    }
    sim = run([node("n0"), reservation("r0", cpu="2", node_name="n0")], until=5.0, config=config)
    a, b = plugins(sim)
    assert a.shared is b.shared
    assert isinstance(a.shared, SharedReservations)


def test_each_profile_keeps_its_own_pending_reservations() -> None:
    # both nodes too small: the reservations stay Pending, each with the profile its template names
    sim = run(
        [
            node("n0", cpu="1"),
            reservation("mine-a", cpu="2", scheduler="default-scheduler"),
            reservation("mine-b", cpu="2"),
        ],
        until=5.0,
    )
    a, b = plugins(sim)
    assert [p["metadata"]["name"] for p in a.pending.values()] == ["mine-a"]
    assert [p["metadata"]["name"] for p in b.pending.values()] == ["mine-b"]
    assert a.index.infos == {}


def test_cache_resize_pod() -> None:
    cache = SchedulerCache()
    cache.set_node(node("n0"))
    pod = PodInfo(owner("v", "1", uid="v"))
    assert cache.set_pod(pod, "n0") is False
    assert cache.set_pod(pod, "n0") is True
    table = cache.table
    assert cache.resize_pod("v", "n1", {"cpu": 300}, 300, 0) is None
    assert cache.resize_pod("other", "n0", {"cpu": 300}, 300, 0) is None
    assert cache.resize_pod("v", "n0", {"cpu": 300}, 300, 7) is pod
    assert (int(table.requested["cpu"][0]), int(table.requested["memory"][0])) == (300, 0)
    assert (int(table.nonzero_cpu[0]), int(table.nonzero_memory[0]), int(table.pod_count[0])) == (300, 7, 1)
    # a pod of a node that is gone: changed, counted with its new requests when the node returns
    cache.remove_node("n0")
    assert cache.resize_pod("v", "n0", {"cpu": 100}, 100, 0) is pod
    cache.set_node(node("n0"))
    row = cache.table.index["n0"]
    assert (int(cache.table.requested["cpu"][row]), int(cache.table.pod_count[row])) == (100, 1)
