"""PodMigrationJobs run by the migration controller inside a simulated cluster: Koordinator's controller tests
(``pkg/descheduler/controllers/migration/controller_test.go``) as scenarios, through the store only.

Each cluster starts with node-a holding every pod of a Deployment; node-b (when wanted) joins at 5 s, so a
migrated pod has exactly one place to go.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from berth.api.conditions import is_pod_ready
from berth.api.errors import Invalid
from berth.api.watch import WatchEvent
from berth.descheduler.migration import (
    MigrationController,
    MigrationControllerArgs,
    migration_blocker,
    migration_in_flight,
    parse_migration_controller_args,
    request_migration,
)
from berth.sim.engine import Simulation
from berth.store.events import EventRecorder
from builders import make_node, make_pod
from drain.drain_helpers import deployment as drain_deployment

POD = ("", "Pod")
PDB = ("policy", "PodDisruptionBudget")
EVENT = ("", "Event")
PMJ = ("scheduling.koordinator.sh", "PodMigrationJob")
RESERVATION = ("scheduling.koordinator.sh", "Reservation")
ALLOCATED = "scheduling.koordinator.sh/reservation-allocated"

NO_OBJECT_LIMITER = {"objectLimiters": {"workload": {"duration": "0s"}}}


deployment = functools.partial(drain_deployment, cpu="1")
"""A Deployment of pods labelled app=<name>, each requesting one cpu."""


def budget(name: str = "web", app: str = "web", **bounds: Any) -> dict[str, Any]:
    """A PodDisruptionBudget over app=<app> (minAvailable / maxUnavailable as keyword arguments)."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": app}}, **bounds},
    }


def job(name: str, pod: str, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    """A PodMigrationJob written by hand for pod `namespace`/`pod`."""
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "PodMigrationJob",
        "metadata": {"name": name},
        "spec": {"podRef": {"namespace": namespace, "name": pod}, **spec},
    }


class Cluster:
    """A simulation whose migration controller runs with `args`, and watchers of what it does."""

    def __init__(
        self, *objects: dict[str, Any], args: Mapping[str, Any] | None = None, node_b: bool = True
    ) -> None:
        self.sim = Simulation(seed=0)
        self.args = parse_migration_controller_args(args or {}, "test")
        self.sim.migration = MigrationController(
            self.sim.store,
            self.sim.clock,
            self.args,
            recorder=EventRecorder(self.sim.store, "koord-descheduler"),
        )
        self.store = self.sim.store
        self.ready: dict[str, bool] = {}
        self.fewest_ready: int | None = None
        self.evictions: list[tuple[str, str | None, str | None]] = []  # (pod, reservation phase, its node)
        self.store.subscribe(self._watch)
        self.store.create(make_node("node-a").capacity(cpu="4", memory="8Gi").obj())
        for o in objects:
            self.store.create(o)
        self.advance(4.0)
        if node_b:
            self.store.create(make_node("node-b").capacity(cpu="4", memory="8Gi").obj())
        self.advance(5.0)
        self.fewest_ready = sum(self.ready.values())

    def _watch(self, ev: WatchEvent) -> None:
        obj = ev.object
        if obj.get("kind") != "Pod":
            return
        md = obj["metadata"]
        if ev.type == "DELETED":
            self.ready.pop(md["uid"], None)
        else:
            self.ready[md["uid"]] = is_pod_ready(obj)
            if md.get("deletionTimestamp") and not any(e[0] == md["name"] for e in self.evictions):
                reservations = self.store.list(RESERVATION)[0]
                status = reservations[0].get("status") or {} if reservations else {}
                self.evictions.append((md["name"], status.get("phase"), status.get("nodeName")))
        if self.fewest_ready is not None:
            self.fewest_ready = min(self.fewest_ready, sum(self.ready.values()))

    def advance(self, until: float) -> None:
        self.sim.advance(until)

    def pods(self, node: str | None = None) -> list[str]:
        return [
            p["metadata"]["name"]
            for p in self.store.list(POD)[0]
            if node is None or p["spec"].get("nodeName") == node
        ]

    def pod(self, name: str) -> dict[str, Any]:
        return self.store.get(POD, "default", name)

    def job(self, name: str) -> dict[str, Any]:
        return self.store.get(PMJ, "", name)

    def status(self, name: str) -> tuple[str | None, str | None, str | None, str | None]:
        """(phase, status, reason, message) of a job."""
        s = self.job(name).get("status") or {}
        return (s.get("phase"), s.get("status"), s.get("reason"), s.get("message"))

    def conditions(self, name: str) -> list[tuple[str, str, str | None]]:
        return [
            (c["type"], c["status"], c.get("reason"))
            for c in self.job(name)["status"].get("conditions") or []
        ]

    def events(self, kind: str = "PodMigrationJob") -> list[tuple[str, str, str]]:
        """(type, reason, message) of the events about objects of `kind`, oldest first."""
        events = sorted(self.store.list(EVENT)[0], key=lambda e: (e["firstTimestamp"], e["metadata"]["name"]))
        return [(e["type"], e["reason"], e["message"]) for e in events if e["involvedObject"]["kind"] == kind]

    def reservations(self) -> list[dict[str, Any]]:
        return self.store.list(RESERVATION)[0]


# ----- the success path -------------------------------------------------------------------------------------


def test_reservation_first_moves_the_pod_into_its_reservation_without_losing_a_ready_pod() -> None:
    c = Cluster(deployment("web", 3))
    moved = c.pods("node-a")[0]
    c.store.create(job("m1", moved))
    c.advance(6.0)
    reservation = c.reservations()[0]
    uid = c.job("m1")["metadata"]["uid"]
    assert reservation["metadata"]["name"] == uid
    # the replacement already sits in the reservation; the old pod is terminating (30 s of grace)
    assert reservation["status"]["phase"] == "Succeeded"
    assert reservation["status"]["nodeName"] == "node-b"
    assert c.status("m1") == (
        "Running",
        "Eviction",
        "Evicting",
        f'Pod "default/{moved}" evicted from node "node-a" by the reason "NotSet"',
    )
    c.advance(60.0)
    replacement = next(p for p in c.pods("node-b"))
    assert c.status("m1") == (
        "Succeeded",
        "Complete",
        None,
        f'Bind Pod "default/{replacement}" in Reservation "{uid}"',
    )
    assert moved not in c.pods()
    assert len(c.pods("node-a")) == 2
    assert c.pods("node-b") == [replacement]
    assert c.pod(replacement)["metadata"]["annotations"][ALLOCATED] == (
        f'{{"name":"{uid}","uid":"{reservation["metadata"]["uid"]}"}}'
    )
    final = c.job("m1")
    assert final["status"]["nodeName"] == "node-b"
    assert final["status"]["podRef"] == {
        "namespace": "default",
        "name": replacement,
        "uid": c.pod(replacement)["metadata"]["uid"],
    }
    assert final["spec"]["podRef"]["uid"] != ""
    assert c.conditions("m1") == [
        ("ReservationCreated", "True", None),
        ("ReservationScheduled", "True", None),
        ("Eviction", "True", "EvictComplete"),
        ("ReservationBound", "True", None),
        ("BoundPodReady", "True", None),
        ("PodBoundReservation", "True", None),
    ]
    assert c.events() == [
        ("Normal", "ReservationCreated", f'Successfully create Reservation "{uid}"'),
        ("Normal", "ReservationScheduled", f'Assigned Reservation "{uid}" to node "node-b"'),
        ("Normal", "Evicting", f'Pod "default/{moved}" evicted from node "node-a" by the reason "NotSet"'),
        ("Normal", "EvictComplete", f'Pod "default/{moved}" has been evicted'),
        ("Normal", "PodBoundReservation", f'Reservation bound by pod "default/{replacement}"'),
        ("Normal", "BoundPodReady", f'Bind pod "default/{replacement}" is ready'),
        ("Normal", "Complete", f'Bind Pod "default/{replacement}" in Reservation "{uid}"'),
    ]
    assert ("Normal", "Descheduled", 'Pod evicted from node "node-a" by the reason "NotSet"') in c.events(
        "Pod"
    )
    # the pod left only once its reservation held the new place, and the workload never had fewer Ready pods
    assert c.evictions == [(moved, "Available", "node-b")]
    assert c.fewest_ready == 3


def test_the_reservation_is_the_pods_template_owned_by_its_controller_and_kept_off_its_node() -> None:
    c = Cluster(deployment("web", 2))
    moved = c.pods("node-a")[0]
    pod = c.pod(moved)
    c.store.create(job("m1", moved, ttl="10m"))
    c.advance(6.0)
    r = c.reservations()[0]
    owner = pod["metadata"]["ownerReferences"][0]
    assert r["metadata"]["labels"]["app.kubernetes.io/created-by"] == "koord-descheduler"
    assert "scheduling.koordinator.sh/reservation-order" in r["metadata"]["labels"]
    assert r["spec"]["owners"] == [{"controller": {**owner, "namespace": "default"}}]
    assert r["spec"]["allocateOnce"] is True
    assert r["spec"]["ttl"] == "10m0s"
    template = r["spec"]["template"]
    assert template["metadata"]["labels"] == pod["metadata"]["labels"]
    assert "nodeName" not in template["spec"]
    assert template["spec"]["containers"] == pod["spec"]["containers"]
    assert template["spec"]["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-a"]}]}
                ]
            }
        }
    }
    ref = c.job("m1")["spec"]["reservationOptions"]["reservationRef"]
    assert ref == {
        "kind": "Reservation",
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "name": r["metadata"]["name"],
        "uid": r["metadata"]["uid"],
    }


# ----- failures ----------------------------------------------------------------------------------------------


def test_a_reservation_that_stays_pending_times_the_job_out_and_the_pod_stays() -> None:
    c = Cluster(deployment("web", 2), node_b=False)
    moved = c.pods("node-a")[0]
    pod_uid = c.pod(moved)["metadata"]["uid"]
    c.store.create(job("m1", moved, ttl="2m"))
    unschedulable = "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
    c.advance(124.0)
    assert c.status("m1") == ("Running", "ReservationScheduled", "Unschedulable", unschedulable)
    assert [r["status"]["phase"] for r in c.reservations()] == ["Pending"]
    c.advance(125.0)
    assert c.status("m1") == ("Failed", "ReservationScheduled", "Timeout", "Abort job caused by timeout")
    assert c.reservations() == []
    assert c.pod(moved)["metadata"]["uid"] == pod_uid
    assert c.evictions == []
    assert c.events()[-1] == ("Warning", "Timeout", "Abort job caused by timeout")
    assert ("Warning", "Unschedulable", unschedulable) in c.events()


def test_the_default_job_ttl_applies_to_a_job_without_one() -> None:
    c = Cluster(deployment("web", 2), node_b=False, args={"defaultJobTTL": "1m"})
    c.store.create(job("m1", c.pods("node-a")[0]))
    c.advance(64.0)
    assert c.status("m1")[0] == "Running"
    c.advance(65.0)
    assert c.status("m1")[2:] == ("Timeout", "Abort job caused by timeout")


def test_a_ttl_of_zero_never_times_out() -> None:
    c = Cluster(deployment("web", 2), node_b=False)
    c.store.create(job("m1", c.pods("node-a")[0], ttl="0s"))
    c.advance(3600.0)
    assert c.status("m1")[:3] == ("Running", "ReservationScheduled", "Unschedulable")


@pytest.mark.parametrize(
    ("pod_ref", "expected"),
    [
        (
            {"namespace": "default", "name": "ghost"},
            ("Failed", None, "MissingPod", 'Abort job caused by missing Pod "default/ghost"'),
        ),
        ({"name": "ghost"}, ("Failed", None, "InvalidPodRef", "Abort job caused by invalid PodRef")),
    ],
)
def test_a_job_for_no_pod_fails(pod_ref: dict[str, str], expected: tuple[str | None, ...]) -> None:
    c = Cluster(deployment("web", 2))
    c.store.create({**job("m1", "x"), "spec": {"podRef": pod_ref}})
    c.advance(10.0)
    assert c.status("m1") == expected
    assert c.events() == [("Warning", expected[2], expected[3])]
    assert c.reservations() == []


def test_a_pod_gone_before_its_eviction_fails_the_job_and_its_reservation_is_deleted() -> None:
    c = Cluster(deployment("web", 2), budget(minAvailable=2))
    moved = c.pods("node-a")[0]
    c.store.create(job("m1", moved))
    c.advance(10.0)
    assert [r["status"]["phase"] for r in c.reservations()] == ["Available"]
    assert c.status("m1")[:2] == ("Running", "ReservationScheduled")
    c.store.delete(POD, "default", moved, grace_period_seconds=0)
    c.advance(11.0)
    assert c.status("m1")[2:] == ("MissingPod", f'Abort job caused by missing Pod "default/{moved}"')
    assert c.reservations() == []


def test_a_pod_gone_while_its_reservation_is_pending_is_noticed_only_at_the_timeout() -> None:
    # as Koordinator: the job looks at the pod again only once the reservation is scheduled
    c = Cluster(deployment("web", 2), node_b=False)
    moved = c.pods("node-a")[0]
    c.store.create(job("m1", moved, ttl="1m"))
    c.advance(6.0)
    c.store.delete(POD, "default", moved, grace_period_seconds=0)
    c.advance(64.0)
    assert c.status("m1")[:3] == ("Running", "ReservationScheduled", "Unschedulable")
    c.advance(65.0)
    assert c.status("m1")[2:] == ("Timeout", "Abort job caused by timeout")
    assert c.reservations() == []


@pytest.mark.parametrize(
    ("objects", "pod_name", "reason"),
    [
        ([deployment("solo", 1)], None, "a workload of one replica"),
        ([make_pod("bare").req(cpu="1").obj()], "bare", "a pod without a controller"),
        (
            [
                make_pod("critical")
                .req(cpu="1")
                .priority_class("system-cluster-critical")
                # a kind Berth does not serve: the garbage collector leaves the pod be
                .owner("Rollout", api_version="argoproj.io/v1alpha1")
                .obj()
            ],
            "critical",
            "a system-critical pod",
        ),
    ],
)
def test_a_pod_that_may_never_move_fails_the_arbitration(
    objects: list[dict[str, Any]], pod_name: str | None, reason: str
) -> None:
    c = Cluster(*objects)
    name = pod_name or c.pods("node-a")[0]
    c.store.create(job("m1", name))
    c.advance(10.0)
    message = f'Pod "default/{name}" is forbidden to migrate because it does not meet the requirements'
    assert c.status("m1") == ("Failed", None, "ForbiddenMigratePod", message), reason
    assert c.events() == [("Warning", "ForbiddenMigratePod", message)]
    assert c.reservations() == []
    assert c.evictions == []


def test_the_evict_annotation_passes_the_arbitration() -> None:
    pod = make_pod("bare").req(cpu="1").annotate({"descheduler.alpha.kubernetes.io/evict": "true"})
    c = Cluster(pod.obj())
    c.store.create(job("m1", "bare", mode="EvictDirectly"))
    c.advance(60.0)
    assert c.status("m1") == ("Succeeded", "Complete", None, 'Pod "default/bare" has been evicted')
    assert c.pods() == []


def test_a_given_reservation_on_the_pods_own_node_is_refused() -> None:
    c = Cluster(deployment("web", 2), node_b=False)
    moved = c.pods("node-a")[0]
    pod = c.pod(moved)
    c.store.create(
        {
            "apiVersion": "scheduling.koordinator.sh/v1alpha1",
            "kind": "Reservation",
            "metadata": {"name": "mine"},
            "spec": {
                "template": {
                    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
                },
                "owners": [{"controller": {**pod["metadata"]["ownerReferences"][0], "namespace": "default"}}],
            },
        }
    )
    c.advance(6.0)
    c.store.create(job("m1", moved, reservationOptions={"reservationRef": {"name": "mine"}}))
    c.advance(10.0)
    assert c.status("m1")[2:] == (
        "ForbiddenMigratePod",
        'Scheduler assignes the Reservation "mine" on the same node as the Pod',
    )
    # a reservation the job did not create is not its to delete
    assert [r["metadata"]["name"] for r in c.reservations()] == ["mine"]
    assert c.evictions == []


def test_a_missing_given_reservation_fails_the_job() -> None:
    c = Cluster(deployment("web", 2))
    c.store.create(job("m1", c.pods("node-a")[0], reservationOptions={"reservationRef": {"name": "nope"}}))
    c.advance(10.0)
    assert c.status("m1")[2:] == ("MissingReservation", 'Abort job caused by missing Reservation "/nope"')


def test_deleting_a_job_deletes_its_reservation() -> None:
    c = Cluster(deployment("web", 2), node_b=False)
    c.store.create(job("m1", c.pods("node-a")[0]))
    c.advance(6.0)
    assert len(c.reservations()) == 1
    c.store.delete(PMJ, "", "m1")
    c.advance(7.0)
    assert c.reservations() == []


# ----- paused, EvictDirectly, PDBs -------------------------------------------------------------------------


def test_a_paused_job_waits_until_resumed() -> None:
    c = Cluster(deployment("web", 3))
    moved = c.pods("node-a")[0]
    c.store.create(job("m1", moved, paused=True, ttl="1m"))
    c.advance(600.0)
    assert c.status("m1") == (None, None, None, None)
    assert c.reservations() == []
    assert moved in c.pods("node-a")
    c.store.patch(PMJ, "", "m1", {"spec": {"paused": False, "ttl": "0s"}})
    c.advance(700.0)
    assert c.status("m1")[:2] == ("Succeeded", "Complete")
    assert moved not in c.pods()
    assert c.fewest_ready == 3


def test_evict_directly_evicts_and_creates_no_reservation() -> None:
    c = Cluster(deployment("web", 3))
    moved = c.pods("node-a")[0]
    c.store.create(job("m1", moved, mode="EvictDirectly"))
    c.advance(6.0)
    assert c.status("m1")[:3] == ("Running", "Eviction", "Evicting")
    c.advance(60.0)
    assert c.status("m1") == ("Succeeded", "Complete", None, f'Pod "default/{moved}" has been evicted')
    assert c.reservations() == []
    assert moved not in c.pods()
    assert c.conditions("m1") == [("Eviction", "True", "EvictComplete")]


def test_default_job_mode_evict_directly() -> None:
    c = Cluster(deployment("web", 3), args={"defaultJobMode": "EvictDirectly"})
    c.store.create(job("m1", c.pods("node-a")[0]))
    c.advance(60.0)
    assert c.status("m1")[:2] == ("Succeeded", "Complete")
    assert c.reservations() == []


def test_an_eviction_refused_by_a_pdb_is_retried_until_the_budget_allows_it() -> None:
    c = Cluster(deployment("web", 3), budget(minAvailable=3))
    moved = c.pods("node-a")[0]
    c.store.create(job("m1", moved))
    c.advance(20.0)
    assert c.status("m1")[:2] == ("Running", "ReservationScheduled")
    assert c.evictions == []
    refused = (
        "Warning",
        "Evicting",
        f'Failed evict Pod "default/{moved}" caused by error when evicting pod (ignoring) "{moved}": '
        "Cannot evict pod as it would violate the pod's disruption budget.",
    )
    assert refused in c.events()
    c.store.patch(PDB, "default", "web", {"spec": {"minAvailable": 2}})
    c.advance(80.0)
    assert c.status("m1")[:2] == ("Succeeded", "Complete")
    assert [e[0] for e in c.evictions] == [moved]
    assert c.fewest_ready == 3


# ----- limits ------------------------------------------------------------------------------------------------


def test_max_migrating_per_node_keeps_the_second_job_pending_until_the_first_is_done() -> None:
    c = Cluster(deployment("web", 4), args={"maxMigratingPerNode": 1, **NO_OBJECT_LIMITER})
    first, second = c.pods("node-a")[:2]
    c.store.create(job("m1", first))
    c.store.create(job("m2", second))
    c.advance(6.0)
    assert c.status("m1")[0] == "Running"
    assert c.status("m2") == (None, None, None, None)
    assert c.sim.migration.waiting() == {"m2": 'maxMigratingPerNode 1 reached on node "node-a" (1 migrating)'}
    assert c.events()[-1] == (
        "Warning",
        "Requeue",
        'Failed to retriable filter: maxMigratingPerNode 1 reached on node "node-a" (1 migrating)',
    )
    c.advance(120.0)
    assert c.status("m1")[0] == "Succeeded"
    assert c.status("m2")[0] == "Succeeded"
    assert c.fewest_ready == 4


def test_max_migrating_per_workload_defaults_to_one_for_three_replicas() -> None:
    c = Cluster(deployment("web", 3), args=NO_OBJECT_LIMITER)
    first, second = c.pods("node-a")[:2]
    c.store.create(job("m1", first))
    c.store.create(job("m2", second))
    c.advance(6.0)
    assert c.sim.migration.waiting() == {"m2": "maxMigratingPerWorkload 1 reached (1 migrating)"}
    c.advance(35.0)
    assert (c.status("m1")[0], c.status("m2")[0]) == ("Running", None)
    # the first job ends once its old pod is gone (30 s of grace); the second starts at the next arbitration
    c.advance(36.0)
    assert (c.status("m1")[0], c.status("m2")[0]) == ("Succeeded", "Running")
    c.advance(70.0)
    assert c.status("m2")[0] == "Succeeded"
    assert c.fewest_ready == 3


def test_max_migrating_per_namespace() -> None:
    c = Cluster(deployment("web", 4), args={"maxMigratingPerNamespace": 1, "maxMigratingPerWorkload": 3})
    first, second = c.pods("node-a")[:2]
    c.store.create(job("m1", first))
    c.store.create(job("m2", second))
    c.advance(6.0)
    assert c.sim.migration.waiting() == {
        "m2": 'maxMigratingPerNamespace 1 reached in namespace "default" (1 migrating)'
    }


def test_max_unavailable_per_workload_counts_pods_that_are_not_ready() -> None:
    slow = deployment("web", 4)
    slow["spec"]["template"]["metadata"]["annotations"] = {"berth.dev/startup": "1h"}
    c = Cluster(slow, args={"maxUnavailablePerWorkload": 3})
    c.store.create(job("m1", c.pods("node-a")[0]))
    c.advance(6.0)
    assert c.sim.migration.waiting() == {"m1": "maxUnavailablePerWorkload 3 reached (4 unavailable)"}
    assert c.status("m1") == (None, None, None, None)


def test_without_the_arbitration_jobs_start_at_once() -> None:
    args = {"maxMigratingPerNode": 1, "arbitrationArgs": {"enabled": False}, **NO_OBJECT_LIMITER}
    c = Cluster(deployment("web", 4), args=args)
    first, second = c.pods("node-a")[:2]
    c.store.create(job("m1", first))
    c.store.create(job("m2", second))
    c.advance(5.0)
    assert (c.status("m1")[0], c.status("m2")[0]) == ("Running", "Running")
    assert "descheduler.koordinator.sh/passed-arbitration" not in (
        c.job("m1")["metadata"].get("annotations") or {}
    )


def test_a_job_held_by_the_arbitration_times_out() -> None:
    c = Cluster(deployment("web", 4), args={"maxMigratingPerNode": 1, **NO_OBJECT_LIMITER}, node_b=False)
    first, second = c.pods("node-a")[:2]
    c.store.create(job("m1", first, ttl="1h"))
    c.store.create(job("m2", second, ttl="1m"))
    c.advance(66.0)
    assert c.status("m2")[2:] == ("Timeout", "Abort job caused by timeout")
    assert c.sim.migration.waiting() == {}


def test_the_workload_object_limiter_spaces_evictions_of_one_workload() -> None:
    # 4 replicas: maxMigrating 2 per 5 minutes, a burst of 1 — the second eviction waits for the next token
    c = Cluster(deployment("web", 4), args={"maxMigratingPerNode": 4, "maxMigratingPerWorkload": 2})
    first, second = c.pods("node-a")[:2]
    c.store.create(job("m1", first, ttl="1h"))
    c.store.create(job("m2", second, ttl="1h"))
    c.advance(60.0)
    assert [e[0] for e in c.evictions] == [first]
    assert c.status("m2")[0] == "Running"
    c.advance(154.0)
    assert [e[0] for e in c.evictions] == [first]
    c.advance(156.0)
    assert [e[0] for e in c.evictions] == [first, second]


def test_the_evict_rate_limit_spaces_evictions() -> None:
    c = Cluster(
        deployment("web", 4),
        args={"evictQPS": "0.1", "maxMigratingPerNode": 4, "maxMigratingPerWorkload": 3, **NO_OBJECT_LIMITER},
    )
    first, second = c.pods("node-a")[:2]
    c.store.create(job("m1", first, mode="EvictDirectly"))
    c.store.create(job("m2", second, mode="EvictDirectly"))
    c.advance(6.0)
    assert [e[0] for e in c.evictions] == [first]
    assert (
        "Warning",
        "Evicting",
        f'Failed evict Pod "default/{second}" caused by TooManyEvictions',
    ) in c.events()
    c.advance(16.0)
    assert [e[0] for e in c.evictions] == [first, second]


# ----- asking for a migration ------------------------------------------------------------------------------


def test_request_migration_creates_a_job_the_controller_runs() -> None:
    c = Cluster(deployment("web", 3))
    pod = c.pod(c.pods("node-a")[0])
    args = c.args
    assert migration_blocker(c.store, pod, args) is None
    created = request_migration(
        c.store,
        pod,
        args=args,
        reason="node-a is overutilized",
        now=c.store.timestamp(),
        trigger="LowNodeLoad",
    )
    name = created["metadata"]["name"]
    assert created["metadata"]["annotations"] == {
        "koordinator.sh/evict-reason": "node-a is overutilized",
        "koordinator.sh/evict-trigger": "LowNodeLoad",
    }
    assert created["spec"] == {
        "podRef": {"namespace": "default", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]},
        "mode": "ReservationFirst",
        "ttl": "5m0s",
    }
    assert created["status"] == {"phase": "Pending"}
    assert name[14] == "1"  # a time-based (version 1) UUID, as Koordinator names its jobs
    assert migration_in_flight(c.store, pod)
    assert migration_blocker(c.store, pod, args) == "the pod already has a PodMigrationJob"
    c.advance(60.0)
    assert c.status(name)[:2] == ("Succeeded", "Complete")
    assert (
        "Normal",
        "Evicting",
        f'Pod "default/{pod["metadata"]["name"]}" evicted from node "node-a" by the reason "node-a is overutilized"',
    ) in c.events()
    assert not migration_in_flight(c.store, pod)


def test_request_migration_names_never_collide() -> None:
    c = Cluster(deployment("web", 3))
    pods = [c.pod(n) for n in c.pods()]
    args = MigrationControllerArgs(dry_run=True)
    names = {
        request_migration(c.store, p, args=args, reason="r", now=c.store.timestamp())["metadata"]["name"]
        for p in pods * 3
    }
    assert len(names) == 9
    assert c.store.list(PMJ)[0] == []  # dry run: nothing created


def test_migration_blocker_says_why() -> None:
    c = Cluster(deployment("web", 3), make_pod("bare").req(cpu="100m").obj(), args={"maxMigratingPerNode": 1})
    web = [c.pod(n) for n in c.pods("node-a") if n.startswith("web")]
    assert migration_blocker(c.store, c.pod("bare"), c.args) == "pod does not have any ownerRefs"
    other = make_pod("other").req(cpu="100m").scheduler("my-scheduler").owner("ReplicaSet").obj()
    assert migration_blocker(c.store, other, c.args) == (
        "pod.schedulerName=my-scheduler but scheduler of pmj controller assigned is [koord-scheduler default-scheduler]"
    )
    request_migration(c.store, web[0], args=c.args, reason="r", now=c.store.timestamp())
    # outside the arbitration a Pending job counts as migrating
    assert (
        migration_blocker(c.store, web[1], c.args)
        == 'maxMigratingPerNode 1 reached on node "node-a" (1 migrating)'
    )


def test_a_job_refused_by_validation() -> None:
    c = Cluster(deployment("web", 2))
    with pytest.raises(Invalid) as e:
        c.store.create(job("m1", "x", mode="Teleport"))
    assert (
        'spec.mode: Unsupported value: "Teleport": supported values: "ReservationFirst", "EvictDirectly"'
        in str(e.value)
    )


# ----- a scenario file -------------------------------------------------------------------------------------


def test_a_hand_written_job_in_a_scenario_runs(tmp_path: Any) -> None:
    import yaml
    from typer.testing import CliRunner

    from berth.cli import app

    base = [
        make_node("node-a").capacity(cpu="4", memory="8Gi").obj(),
        deployment("web", 2),
    ]
    probe = Simulation(seed=0)
    for o in base:
        probe.store.create(o)
    probe.advance(5.0)
    moved = sorted(p["metadata"]["name"] for p in probe.store.list(POD)[0])[0]
    scenario = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "migrate"},
        "spec": {
            "until": "2m",
            "steps": [
                {"at": "10s", "create": [make_node("node-b").capacity(cpu="4", memory="8Gi").obj()]},
                {"at": "20s", "create": [job("move-web", moved)]},
            ],
        },
    }
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump_all([*base, scenario]))
    result = CliRunner().invoke(app, ["simulate", str(path), "-o", "json", "--seed", "0"])
    assert result.exit_code == 0, result.stdout
    import json

    items = json.loads(result.stdout)["items"]
    pmj = next(o for o in items if o["kind"] == "PodMigrationJob")
    assert pmj["status"]["phase"] == "Succeeded"
    assert pmj["status"]["nodeName"] == "node-b"
    pods = [o for o in items if o["kind"] == "Pod"]
    assert moved not in [p["metadata"]["name"] for p in pods]
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-a", "node-b"]


# ----- the invariant -----------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    replicas=st.integers(min_value=2, max_value=6),
    extra_nodes=st.integers(min_value=0, max_value=3),
    spare_cpu=st.integers(min_value=0, max_value=3),
    pick=st.integers(min_value=0, max_value=5),
    ttl_minutes=st.integers(min_value=1, max_value=5),
)
def test_a_reservation_first_migration_never_leaves_a_workload_with_fewer_ready_pods(
    replicas: int, extra_nodes: int, spare_cpu: int, pick: int, ttl_minutes: int
) -> None:
    """Random clusters: node-a holds the workload, then up to 3 nodes join with 0 to 3 spare cpus each (room for
    zero or more pods); one pod is migrated. Whatever happens, the workload keeps at least the Ready pods it
    had, the pod never leaves before its Reservation is Available elsewhere, and a failed job leaves the pod
    where it was and no Reservation behind."""
    sim = Simulation(seed=0)
    store = sim.store
    ready: dict[str, bool] = {}
    fewest: list[int] = []
    evicted: list[tuple[str | None, str | None]] = []

    def watch(ev: WatchEvent) -> None:
        obj = ev.object
        if obj.get("kind") != "Pod":
            return
        md = obj["metadata"]
        if ev.type == "DELETED":
            ready.pop(md["uid"], None)
        else:
            ready[md["uid"]] = is_pod_ready(obj)
            if md.get("deletionTimestamp") and not evicted:
                rs = store.list(RESERVATION)[0]
                s = rs[0].get("status") or {} if rs else {}
                evicted.append((s.get("phase"), s.get("nodeName")))
        if fewest:
            fewest.append(min(fewest[-1], sum(ready.values())))

    store.subscribe(watch)
    store.create(make_node("node-a").capacity(cpu=str(replicas), memory="64Gi").obj())
    store.create(deployment("web", replicas))
    sim.advance(4.0)
    for i in range(extra_nodes):
        store.create(make_node(f"node-{i}").capacity(cpu=str(spare_cpu), memory="64Gi").obj())
    sim.advance(5.0)
    before = sum(ready.values())
    assert before == replicas
    fewest.append(before)
    names = sorted(p["metadata"]["name"] for p in store.list(POD)[0])
    moved = names[pick % len(names)]
    moved_uid = store.get(POD, "default", moved)["metadata"]["uid"]
    store.create(job("m1", moved, ttl=f"{ttl_minutes}m"))
    sim.advance(5.0 + ttl_minutes * 60 + 60)
    assert min(fewest) >= before
    phase = store.get(PMJ, "", "m1")["status"]["phase"]
    assert phase in ("Succeeded", "Failed")
    for reservation_phase, node in evicted:
        assert reservation_phase == "Available"
        assert node not in (None, "node-a")
    if phase == "Failed":
        assert evicted == []
        assert store.get(POD, "default", moved)["metadata"]["uid"] == moved_uid
        assert store.list(RESERVATION)[0] == []
    else:
        assert evicted != []
        assert sum(ready.values()) == replicas
