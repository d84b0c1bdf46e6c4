"""/metrics of a control plane: kube-scheduler's metric names with exact values after small Simulation runs,
and Berth's reservation and ElasticQuota gauges."""

from __future__ import annotations

from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families

from berth.controlplane.metrics import metrics_registry, render_metrics
from berth.sim.engine import Simulation
from berth.sim.scenario import Plan, Step
from builders import make_node, make_pod, scheduler_config

Obj = dict[str, Any]
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
PROFILE = "default-scheduler"
DURATION = "scheduler_scheduling_attempt_duration_seconds"
# kube's ExponentialBuckets(0.001, 2, 15) as Go writes the bounds
DURATION_BOUNDS = [f"{0.001 * 2**i:g}" for i in range(15)] + ["+Inf"]


def scrape(sim: Simulation) -> tuple[Samples, dict[str, str]]:
    """Render the plane's metrics and parse them back: every sample by (name, sorted labels), and the type
    of every family."""
    body, content_type = render_metrics(sim)
    assert content_type == CONTENT_TYPE_LATEST
    samples: Samples = {}
    types: dict[str, str] = {}
    for family in text_string_to_metric_families(body.decode()):
        types[family.name] = family.type
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples, types


def value(samples: Samples, name: str, /, **labels: str) -> float:
    """One sample's value."""
    return samples[(name, tuple(sorted(labels.items())))]


def buckets(samples: Samples, name: str, /, **labels: str) -> dict[str, float]:
    """A histogram's cumulative bucket counts by ``le``."""
    want = set(labels.items())
    return {
        dict(lbl)["le"]: v
        for (n, lbl), v in samples.items()
        if n == name + "_bucket" and want <= set(lbl) and len(lbl) == len(want) + 1
    }


def pc(name: str, value: int) -> Obj:
    """A PriorityClass."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def test_attempts_pending_queues_and_types() -> None:
    sim = Simulation()
    for n in ("n1", "n2"):
        sim.store.create(make_node(n).obj())
    sim.store.create(make_pod("a").req(cpu="1").obj())
    sim.store.create(make_pod("b").req(cpu="1").obj())
    sim.store.create(make_pod("big").req(cpu="100").obj())  # fits no node
    sim.store.create(make_pod("held").req(cpu="1").gate("wait").obj())  # never tried
    sim.run_until_idle()

    samples, types = scrape(sim)
    assert types["scheduler_schedule_attempts"] == "counter"
    assert types[DURATION] == "histogram"
    assert types["scheduler_pending_pods"] == "gauge"
    assert types["scheduler_preemption_attempts"] == "counter"
    assert types["scheduler_preemption_victims"] == "histogram"
    assert types["scheduler_pod_scheduling_attempts"] == "histogram"

    attempts = "scheduler_schedule_attempts_total"
    assert value(samples, attempts, result="scheduled", profile=PROFILE) == 2
    assert value(samples, attempts, result="unschedulable", profile=PROFILE) == 1
    assert value(samples, attempts, result="error", profile=PROFILE) == 0
    # every configured profile is listed, also when it scheduled nothing
    assert value(samples, attempts, result="scheduled", profile="koord-scheduler") == 0
    for result, n in (("scheduled", 2), ("unschedulable", 1), ("error", 0)):
        assert value(samples, DURATION + "_count", result=result, profile=PROFILE) == n
        hist = buckets(samples, DURATION, result=result, profile=PROFILE)
        assert list(hist) == DURATION_BOUNDS
        assert hist["+Inf"] == n
        assert list(hist.values()) == sorted(hist.values())
    assert value(samples, DURATION + "_sum", result="error", profile=PROFILE) == 0
    assert value(samples, DURATION + "_sum", result="scheduled", profile=PROFILE) > 0

    pending = "scheduler_pending_pods"
    assert {q: value(samples, pending, queue=q) for q in ("active", "backoff", "unschedulable", "gated")} == {
        "active": 0,
        "backoff": 0,
        "unschedulable": 1,
        "gated": 1,
    }
    # DefaultPreemption's PostFilter ran for the pod that fit nowhere (it found nothing to preempt)
    assert value(samples, "scheduler_preemption_attempts_total") == 1
    assert value(samples, "scheduler_preemption_victims_count") == 0
    assert buckets(samples, "scheduler_pod_scheduling_attempts") == {
        "1": 2,
        "2": 2,
        "4": 2,
        "8": 2,
        "16": 2,
        "+Inf": 2,
    }
    assert value(samples, "scheduler_pod_scheduling_attempts_sum") == 2


def test_preemption_victims_and_attempts_per_pod() -> None:
    sim = Simulation()
    sim.store.create(pc("high", 1000))
    sim.store.create(make_node("n1").obj())
    for name in ("v1", "v2"):
        sim.store.create(make_pod(name).req(cpu="2").obj())
    sim.run_until_idle()
    sim.store.create(make_pod("hp").req(cpu="3").priority_class("high").obj())
    sim.advance(120.0)  # the victims terminate, hp is retried and binds

    hp = sim.store.get(("", "Pod"), "default", "hp")
    assert hp["spec"].get("nodeName") == "n1"
    samples, _ = scrape(sim)
    assert value(samples, "scheduler_preemption_attempts_total") == 1
    # both victims on the one node: one observation of 2
    assert buckets(samples, "scheduler_preemption_victims") == {
        "1": 0,
        "2": 1,
        "4": 1,
        "8": 1,
        "16": 1,
        "32": 1,
        "64": 1,
        "+Inf": 1,
    }
    assert value(samples, "scheduler_preemption_victims_sum") == 2
    assert value(samples, "scheduler_schedule_attempts_total", result="scheduled", profile=PROFILE) == 3
    assert value(samples, "scheduler_schedule_attempts_total", result="unschedulable", profile=PROFILE) == 1
    # v1 and v2 at their first attempt, hp at its second
    assert buckets(samples, "scheduler_pod_scheduling_attempts")["1"] == 2
    assert buckets(samples, "scheduler_pod_scheduling_attempts")["2"] == 3
    assert value(samples, "scheduler_pod_scheduling_attempts_sum") == 4
    assert value(samples, "scheduler_pending_pods", queue="unschedulable") == 0


def reservation(name: str, cpu: str = "2", memory: str = "1Gi") -> Obj:
    """A Reservation of ``cpu`` and ``memory`` for pods labelled app=web."""
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"namespace": "default"},
                "spec": {
                    "schedulerName": "koord-scheduler",
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
                },
            },
            "owners": [{"labelSelector": {"matchLabels": {"app": "web"}}}],
            "ttl": "1h",
            "allocateOnce": False,  # stays Available with its owner
        },
    }


def quota(ns: str, group: str, min_: Obj, max_: Obj | None) -> Obj:
    """An ElasticQuota named after its namespace."""
    spec: Obj = {"min": min_}
    if max_ is not None:
        spec["max"] = max_
    return {
        "apiVersion": f"{group}/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": f"{ns}-quota", "namespace": ns},
        "spec": spec,
    }


def test_reservation_and_quota_gauges() -> None:
    sim = Simulation()
    sim.store.create(make_node("n1").obj())
    sim.store.create(reservation("r1"))
    sim.store.create(reservation("r2-too-big", cpu="64"))
    sim.store.create(quota("team-a", "scheduling.x-k8s.io", {"cpu": "1", "memory": "1Gi"}, {"cpu": "2500m"}))
    sim.store.create(quota("team-b", "scheduling.sigs.k8s.io", {"cpu": "0"}, None))
    sim.advance(1.0)
    sim.store.create(
        make_pod("web").label(app="web").req(cpu="500m", memory="256Mi").scheduler("koord-scheduler").obj()
    )
    sim.store.create(make_pod("job").ns("team-a").req(cpu="750m").obj())
    sim.advance(60.0)

    samples, types = scrape(sim)
    assert types["berth_reservations"] == "gauge"
    phases = {
        p: value(samples, "berth_reservations", phase=p)
        for p in ("Pending", "Available", "Waiting", "Succeeded", "Failed")
    }
    assert phases == {"Pending": 1, "Available": 1, "Waiting": 0, "Succeeded": 0, "Failed": 0}
    assert value(samples, "berth_reservation_allocatable", name="r1", node="n1", resource="cpu") == 2
    assert value(samples, "berth_reservation_allocatable", name="r1", node="n1", resource="memory") == 2**30
    assert value(samples, "berth_reservation_allocated", name="r1", node="n1", resource="cpu") == 0.5
    assert (
        value(samples, "berth_reservation_allocated", name="r1", node="n1", resource="memory") == 256 * 2**20
    )
    assert not any(
        n.startswith("berth_reservation_alloc") and ("name", "r2-too-big") in lbl for n, lbl in samples
    )

    def eq(metric: str, ns: str, resource: str) -> float:
        return value(
            samples, f"berth_elasticquota_{metric}", namespace=ns, name=f"{ns}-quota", resource=resource
        )

    assert eq("min", "team-a", "cpu") == 1
    assert eq("min", "team-a", "memory") == 2**30
    assert eq("max", "team-a", "cpu") == 2.5
    assert eq("used", "team-a", "cpu") == 0.75
    assert eq("min", "team-b", "cpu") == 0
    assert not any(n == "berth_elasticquota_max" and ("namespace", "team-b") in lbl for n, lbl in samples)


def test_registry_bound_to_the_plane_follows_it() -> None:
    sim = Simulation()
    registry = metrics_registry(sim, process=False)
    first, _ = render_metrics(registry)
    assert b'scheduler_pending_pods{queue="active"} 0.0' in first
    assert b"process_" not in first
    sim.store.create(make_pod("a").req(cpu="1").obj())
    sim.run_until_idle()  # no nodes: unschedulable
    body, _ = render_metrics(registry)
    assert (
        b'scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"} 1.0' in body
    )
    assert b'scheduler_pending_pods{queue="unschedulable"} 1.0' in body
    assert b"process_cpu_seconds_total" in render_metrics(sim)[0]


def test_gang_pods_held_at_permit_count_once_when_bound() -> None:
    config = scheduler_config(
        {
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]},
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
        }
    )
    sim = Simulation(config=config)
    sim.store.create(make_node("n1").obj())
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"minMember": 3},
    }
    pods = [make_pod(f"g-{i}").pod_group("g").req(cpu="1").obj() for i in range(3)]
    sim.run(Plan([Step(0.0, [group, *pods])], 30.0), until=30.0)
    assert all(
        sim.store.get(("", "Pod"), "default", p["metadata"]["name"])["spec"].get("nodeName") for p in pods
    )
    samples, _ = scrape(sim)
    # the first two waited at Permit until the third came; each counts once, as scheduled
    assert value(samples, "scheduler_schedule_attempts_total", result="scheduled", profile=PROFILE) == 3
    assert value(samples, "scheduler_schedule_attempts_total", result="unschedulable", profile=PROFILE) == 0
    assert value(samples, DURATION + "_count", result="scheduled", profile=PROFILE) == 3
    assert value(samples, "scheduler_pod_scheduling_attempts_count") == 3
