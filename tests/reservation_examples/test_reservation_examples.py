"""examples/reservation: the Koordinator guide's Reservation examples run through ``berth simulate``, and
the pre-allocation candidate choice they rely on."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from berth.api.manifest import Manifest
from berth.api.resources import pod_requests
from berth.cli import app
from berth.scheduler.framework.config import parse_config
from berth.scheduler.plugins.reservation.plugin import ReservationArgs
from berth.sim.engine import Simulation
from builders import make_node, make_pod

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "reservation"
CONFIG = EXAMPLES / "06-scheduler-config.yaml"
ALLOCATED = "scheduling.koordinator.sh/reservation-allocated"
PRE_ALLOCATABLE = "pod.koordinator.sh/is-pre-allocatable"
PRIORITY = "pod.koordinator.sh/pre-allocatable-priority"
T0 = "2024-01-01T00:00:00Z"

Obj = dict[str, Any]


# ----- running the examples -------------------------------------------------------------------------
@cache
def _run(paths: tuple[str, ...], args: tuple[str, ...]) -> str:
    result = CliRunner().invoke(app, ["simulate", *paths, "-o", "json", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


class Out:
    """The objects printed by one ``berth simulate -o json`` run."""

    def __init__(self, stdout: str) -> None:
        doc = json.loads(stdout)
        assert doc["kind"] == "List"
        self.items: list[Obj] = doc["items"]

    def find(self, kind: str, name: str) -> Obj | None:
        """The object of ``kind`` named ``name`` (None when absent)."""
        for o in self.items:
            if o["kind"] == kind and o["metadata"]["name"] == name:
                return o
        return None

    def get(self, kind: str, name: str) -> Obj:
        """Like find, but the object must exist."""
        o = self.find(kind, name)
        assert o is not None, f"{kind} {name} not in output"
        return o

    def pods(self) -> dict[str, Obj]:
        """Pods by name."""
        return {o["metadata"]["name"]: o for o in self.items if o["kind"] == "Pod"}

    def allocated_pods(self) -> list[str]:
        """Pods carrying the reservation-allocated annotation, in the order it was written to them."""
        pods = [p for p in self.pods().values() if ALLOCATED in (p["metadata"].get("annotations") or {})]
        pods.sort(key=lambda p: int(p["metadata"]["resourceVersion"]))
        return [p["metadata"]["name"] for p in pods]

    def reservation_events(self, name: str) -> list[tuple[str, str, str]]:
        """(type, reason, message) of the events about reservation ``name``."""
        return [
            (e["type"], e["reason"], e["message"])
            for e in self.items
            if e["kind"] == "Event" and e["involvedObject"]["name"] == name
        ]


def simulate(example: str, *args: str) -> Out:
    """Run ``berth simulate examples/reservation/<example> -o json <args>``."""
    return Out(_run((str(EXAMPLES / example),), args))


def annotation(name: str, uid: str) -> str:
    return json.dumps({"name": name, "uid": uid}, separators=(",", ":"))


def condition(type_: str, status: str, reason: str, at: str) -> Obj:
    return {"type": type_, "status": status, "reason": reason, "lastProbeTime": at, "lastTransitionTime": at}


def owners(out: Out, *names: str) -> list[Obj]:
    """currentOwners as the controller writes them (sorted by uid)."""
    pods = out.pods()
    refs = [{"namespace": "default", "name": n, "uid": pods[n]["metadata"]["uid"]} for n in names]
    return sorted(refs, key=lambda r: r["uid"])


# ----- 01 quick start ---------------------------------------------------------------------------------
def test_quick_start_reservation_is_available_before_the_pod() -> None:
    out = simulate("01-quick-start", "--until", "20s")
    status = out.get("Reservation", "reservation-demo")["status"]
    assert status == {
        "phase": "Available",
        "allocatable": {"cpu": "500m", "memory": "800Mi"},
        "nodeName": "node-1",
        "conditions": [
            condition("Scheduled", "True", "Scheduled", T0),
            condition("Ready", "True", "Available", T0),
        ],
    }
    assert out.find("Pod", "pod-demo-0") is None


def test_quick_start_pod_allocates_the_reservation() -> None:
    out = simulate("01-quick-start")
    res = out.get("Reservation", "reservation-demo")
    pod = out.get("Pod", "pod-demo-0")
    assert pod["spec"]["nodeName"] == res["status"]["nodeName"] == "node-1"
    assert pod["metadata"]["annotations"][ALLOCATED] == annotation("reservation-demo", res["metadata"]["uid"])
    status = res["status"]
    assert status["allocatable"] == {"cpu": "500m", "memory": "800Mi"}
    assert status["allocated"] == {"cpu": "200m", "memory": "400Mi"}
    assert status["currentOwners"] == owners(out, "pod-demo-0")
    # allocateOnce defaults to true: the first owner uses the reservation up
    assert status["phase"] == "Succeeded"
    assert out.reservation_events("reservation-demo") == [
        ("Normal", "Scheduled", "Successfully assigned reservation-demo to node-1")
    ]


# ----- 02 multiple owners -----------------------------------------------------------------------------
def test_multiple_owners_reservation_is_pinned_to_node_1() -> None:
    out = simulate("02-multiple-owners", "--until", "20s")
    status = out.get("Reservation", "reservation-demo-big")["status"]
    assert (status["phase"], status["nodeName"]) == ("Available", "node-1")
    assert status["allocatable"] == {"cpu": "6", "memory": "20Gi"}
    assert sorted(out.pods()) == ["system-load"]


def test_multiple_owners_deployment_pods_share_the_reservation() -> None:
    out = simulate("02-multiple-owners")
    res = out.get("Reservation", "reservation-demo-big")
    rs = next(o for o in out.items if o["kind"] == "ReplicaSet")
    pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
    apps = {n: p for n, p in out.pods().items() if n != "system-load"}
    assert len(apps) == 2
    for name, p in apps.items():
        assert re.fullmatch(rf"app-demo-{pod_hash}-[a-z0-9]{{5}}", name), name
        assert p["spec"]["nodeName"] == "node-1"
        assert p["metadata"]["annotations"][ALLOCATED] == annotation(
            "reservation-demo-big", res["metadata"]["uid"]
        )
    status = res["status"]
    assert status["phase"] == "Available"  # allocateOnce: false
    assert status["allocated"] == {"cpu": "4", "memory": "20Gi"}
    assert status["currentOwners"] == owners(out, *apps)
    # node-1 holds 780m/1216Mi + 2x(2 cpu/10Gi) of pods + the reservation's unallocated 2 cpu/0: within allocatable
    on_node = [p for p in out.pods().values() if p["spec"].get("nodeName") == "node-1"]
    cpu = sum(pod_requests(p).get("cpu", 0) for p in on_node) + (6000 - 4000)
    memory = sum(pod_requests(p).get("memory", 0) for p in on_node) + 0
    assert (cpu, memory) == (6780, 1216 * 2**20 + 20 * 2**30)
    assert cpu <= 7800 and memory <= 28629692 * 1024


# ----- 03 pre-allocation, Default mode ------------------------------------------------------------------
def test_pre_allocation_default_waits_on_the_owner_pod() -> None:
    out = simulate("03-pre-allocation-default", "--until", "20s")
    res = out.get("Reservation", "reservation-prealloc")
    uid = res["metadata"]["uid"]
    assert res["status"] == {
        "phase": "Waiting",
        "allocatable": {"cpu": "500m", "memory": "800Mi"},
        "nodeName": "node-0",
        "conditions": [condition("Scheduled", "True", "Scheduled", "2024-01-01T00:00:10Z")],
        "allocated": {"cpu": "1", "memory": "2Gi"},
        "currentOwners": owners(out, "my-app-old"),
    }
    assert out.allocated_pods() == ["my-app-old"]
    assert out.get("Pod", "my-app-old")["metadata"]["annotations"][ALLOCATED] == annotation(
        "reservation-prealloc", uid
    )
    assert out.reservation_events("reservation-prealloc") == [
        ("Normal", "Scheduled", "Successfully assigned reservation-prealloc to node-0")
    ]


def test_pre_allocation_default_available_once_the_pod_terminates() -> None:
    # deleted at 1m, the pod holds its resources through its 30 s grace period: still Waiting
    terminating = simulate("03-pre-allocation-default", "--until", "1m10s")
    assert terminating.get("Pod", "my-app-old")["metadata"]["deletionTimestamp"] == "2024-01-01T00:01:30Z"
    status = terminating.get("Reservation", "reservation-prealloc")["status"]
    assert (status["phase"], status["currentOwners"]) == ("Waiting", owners(terminating, "my-app-old"))
    out = simulate("03-pre-allocation-default", "--until", "1m40s")
    status = out.get("Reservation", "reservation-prealloc")["status"]
    assert status == {
        "phase": "Available",
        "allocatable": {"cpu": "500m", "memory": "800Mi"},
        "nodeName": "node-0",
        "conditions": [
            condition("Scheduled", "True", "Scheduled", "2024-01-01T00:00:10Z"),
            condition("Ready", "True", "Available", "2024-01-01T00:01:30Z"),
        ],
    }


def test_pre_allocation_default_new_owner_lands_in_the_reservation() -> None:
    out = simulate("03-pre-allocation-default")
    res = out.get("Reservation", "reservation-prealloc")
    assert sorted(out.pods()) == ["my-app-new", "other-0", "other-1"]
    new = out.get("Pod", "my-app-new")
    assert new["spec"]["nodeName"] == "node-0"
    assert new["metadata"]["annotations"][ALLOCATED] == annotation(
        "reservation-prealloc", res["metadata"]["uid"]
    )
    status = res["status"]
    assert status["allocated"] == {"cpu": "500m", "memory": "800Mi"}
    assert status["currentOwners"] == owners(out, "my-app-new")
    assert status["phase"] == "Succeeded"


# ----- 04 pre-allocation, Cluster mode ------------------------------------------------------------------
def test_pre_allocation_cluster_takes_the_highest_priority_pod() -> None:
    out = simulate("04-pre-allocation-cluster", "--until", "20s")
    res = out.get("Reservation", "reservation-cluster-mode")
    status = res["status"]
    assert (status["phase"], status["nodeName"]) == ("Waiting", "node-0")
    assert status["conditions"] == [condition("Scheduled", "True", "Scheduled", "2024-01-01T00:00:10Z")]
    assert status["allocated"] == {"cpu": "2", "memory": "4Gi"}
    assert status["currentOwners"] == owners(out, "batch-job-1")
    assert out.allocated_pods() == ["batch-job-1"]
    assert out.get("Pod", "batch-job-1")["metadata"]["annotations"][ALLOCATED] == annotation(
        "reservation-cluster-mode", res["metadata"]["uid"]
    )


def test_pre_allocation_cluster_available_then_allocated() -> None:
    mid = simulate("04-pre-allocation-cluster", "--until", "1m40s")
    status = mid.get("Reservation", "reservation-cluster-mode")["status"]
    assert status["phase"] == "Available"
    assert status["conditions"][1] == condition("Ready", "True", "Available", "2024-01-01T00:01:30Z")
    assert "currentOwners" not in status and "allocated" not in status
    out = simulate("04-pre-allocation-cluster")
    res = out.get("Reservation", "reservation-cluster-mode")
    assert sorted(out.pods()) == ["batch-job-low", "critical-app-0", "web-0"]
    app_pod = out.get("Pod", "critical-app-0")
    assert app_pod["spec"]["nodeName"] == "node-0"
    assert app_pod["metadata"]["annotations"][ALLOCATED] == annotation(
        "reservation-cluster-mode", res["metadata"]["uid"]
    )
    assert res["status"]["allocated"] == {"cpu": "2", "memory": "4Gi"}
    assert res["status"]["currentOwners"] == owners(out, "critical-app-0")
    assert res["status"]["phase"] == "Succeeded"


# ----- 05 pre-allocation, multiple pods -----------------------------------------------------------------
def test_pre_allocation_multiple_takes_both_jobs_in_priority_order() -> None:
    out = simulate("05-pre-allocation-multiple", "--until", "20s")
    res = out.get("Reservation", "reservation-multi-pods")
    status = res["status"]
    assert (status["phase"], status["nodeName"]) == ("Waiting", "node-0")
    assert status["allocated"] == {"cpu": "2", "memory": "4Gi"}
    assert status["currentOwners"] == owners(out, "batch-job-1", "batch-job-2")
    assert out.allocated_pods() == ["batch-job-1", "batch-job-2"]  # written in priority order: 100, then 90
    value = annotation("reservation-multi-pods", res["metadata"]["uid"])
    for name in ("batch-job-1", "batch-job-2"):
        assert out.get("Pod", name)["metadata"]["annotations"][ALLOCATED] == value


def test_pre_allocation_multiple_waits_for_every_pod() -> None:
    out = simulate("05-pre-allocation-multiple", "--until", "1m40s")
    status = out.get("Reservation", "reservation-multi-pods")["status"]
    assert status["phase"] == "Waiting"
    assert status["allocated"] == {"cpu": "1", "memory": "2Gi"}
    assert status["currentOwners"] == owners(out, "batch-job-2")
    assert sorted(out.pods()) == ["batch-job-2", "batch-job-3"]
    later = simulate("05-pre-allocation-multiple", "--until", "2m40s")
    status = later.get("Reservation", "reservation-multi-pods")["status"]
    assert status["phase"] == "Available"
    assert status["conditions"] == [
        condition("Scheduled", "True", "Scheduled", "2024-01-01T00:00:10Z"),
        condition("Ready", "True", "Available", "2024-01-01T00:02:30Z"),
    ]


def test_pre_allocation_multiple_owner_lands_in_the_reservation() -> None:
    out = simulate("05-pre-allocation-multiple")
    res = out.get("Reservation", "reservation-multi-pods")
    assert sorted(out.pods()) == ["batch-job-3", "high-priority-app-0"]
    app_pod = out.get("Pod", "high-priority-app-0")
    assert app_pod["spec"]["nodeName"] == "node-0"
    assert app_pod["metadata"]["annotations"][ALLOCATED] == annotation(
        "reservation-multi-pods", res["metadata"]["uid"]
    )
    assert res["status"]["allocated"] == {"cpu": "2", "memory": "4Gi"}
    assert res["status"]["currentOwners"] == owners(out, "high-priority-app-0")
    assert res["status"]["phase"] == "Succeeded"


# ----- 06 scheduler configuration -----------------------------------------------------------------------
def test_scheduler_config_is_the_guides_and_parses() -> None:
    doc = yaml.safe_load(CONFIG.read_text())
    profile = doc["profiles"][0]
    assert profile["plugins"] == {"reservation": {"enabled": [{"name": "Reservation"}]}}
    assert profile["pluginConfig"][0]["args"]["kind"] == "ReservationArgs"
    config = parse_config(doc, source=str(CONFIG))
    assert [p.scheduler_name for p in config.profiles] == ["koord-scheduler"]
    assert ReservationArgs.parse(config.profiles[0].plugin_args["Reservation"]) == ReservationArgs(
        enable_cluster_mode=True,
        cluster_label_key=PRE_ALLOCATABLE,
        cluster_priority_annotation_key=PRIORITY,
        prefer_no_pre_allocated_pods=True,
    )


@pytest.mark.parametrize(
    ("example", "reservation", "chosen"),
    [
        ("04-pre-allocation-cluster", "reservation-cluster-mode", ["batch-job-1"]),
        ("05-pre-allocation-multiple", "reservation-multi-pods", ["batch-job-1", "batch-job-2"]),
    ],
)
def test_scheduler_config_loads_in_simulate(example: str, reservation: str, chosen: list[str]) -> None:
    out = simulate(example, "--until", "20s", "--scheduler-config", str(CONFIG))
    status = out.get("Reservation", reservation)["status"]
    assert (status["phase"], status["nodeName"]) == ("Waiting", "node-0")
    assert out.allocated_pods() == chosen


def test_scheduler_config_cluster_mode_applies_to_reservations_without_a_mode() -> None:
    """enableClusterMode: reservation-prealloc names no mode, so only labelled pods count and there are none."""
    out = simulate("03-pre-allocation-default", "--until", "20s", "--scheduler-config", str(CONFIG))
    status = out.get("Reservation", "reservation-prealloc")["status"]
    message = "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory."
    assert status["phase"] == "Pending"
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("Scheduled", "False", "Unschedulable", message)
    ]
    assert out.allocated_pods() == []


def test_readme_lists_every_example() -> None:
    readme = (EXAMPLES / "README.md").read_text()
    names = sorted(p.name for p in EXAMPLES.iterdir() if p.name != "README.md")
    assert names == [
        "01-quick-start",
        "02-multiple-owners",
        "03-pre-allocation-default",
        "04-pre-allocation-cluster",
        "05-pre-allocation-multiple",
        "06-scheduler-config.yaml",
    ]
    for name in names:
        assert name in readme


# ----- candidate choice ---------------------------------------------------------------------------------
def job(name: str, node: str, cpu: int, priority: str | None = None, *, key: str = PRE_ALLOCATABLE) -> Obj:
    """A running pod labelled pre-allocatable (``key``) with an optional priority annotation."""
    return (
        make_pod(name)
        .label({key: "true"})
        .annotate({PRIORITY: priority} if priority else None)
        .node(node)
        .req(cpu=str(cpu), memory=f"{cpu}Gi")
        .obj()
    )


def _reservation(cpu: int, policy: Obj | None) -> Obj:
    spec: Obj = {
        "preAllocation": True,
        "template": {
            "metadata": {"namespace": "default"},
            "spec": {
                "schedulerName": "koord-scheduler",
                "containers": [
                    {
                        "name": "placeholder",
                        "resources": {"requests": {"cpu": str(cpu), "memory": f"{cpu}Gi"}},
                    }
                ],
            },
        },
        "owners": [{"labelSelector": {"matchLabels": {"app": "owner"}}}],
        "ttl": "1h",
    }
    if policy is not None:
        spec["preAllocationPolicy"] = policy
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": "r"},
        "spec": spec,
    }


def choose(
    cluster: list[Obj], cpu: int, policy: Obj | None, args: Obj | None
) -> tuple[str, str | None, list[str]]:
    """Create the cluster, then at 1s a pre-allocating reservation of ``cpu`` (and as many Gi); report
    (phase, node, pre-allocated pods in the order they were annotated)."""
    config = None
    if args is not None:
        config = parse_config(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": "koord-scheduler",
                        "pluginConfig": [{"name": "Reservation", "args": {"preAllocationConfig": args}}],
                    }
                ],
            }
        )
    scenario = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "choice"},
        "spec": {"steps": [{"at": "1s", "create": [_reservation(cpu, policy)]}]},
    }
    sim = Simulation(config=config)
    sim.run_manifests([Manifest(o, "test") for o in [*cluster, scenario]], until=3.0)
    objs = sim.objects()
    res = next(o for o in objs if o["kind"] == "Reservation")
    status = res.get("status") or {}
    taken = [o for o in objs if o["kind"] == "Pod" and ALLOCATED in (o["metadata"].get("annotations") or {})]
    for p in taken:
        assert p["metadata"]["annotations"][ALLOCATED] == annotation("r", res["metadata"]["uid"])
    taken.sort(key=lambda p: int(p["metadata"]["resourceVersion"]))
    return status.get("phase", "Pending"), status.get("nodeName"), [p["metadata"]["name"] for p in taken]


CLUSTER = {"mode": "Cluster"}
MULTIPLE = {"mode": "Cluster", "enableMultiple": True}
OWNER = {"app": "owner"}

CHOICE_CASES = [
    # single: the first pod by priority that covers the whole shortfall on its own
    pytest.param(
        [
            make_node("n").capacity(cpu="4", memory="4Gi").obj(),
            job("small", "n", 1, "100"),
            job("big", "n", 3, "50"),
        ],
        2,
        CLUSTER,
        None,
        ("Waiting", "n", ["big"]),
        id="single-first-that-covers",
    ),
    pytest.param(
        [
            make_node("n").capacity(cpu="4", memory="4Gi").obj(),
            job("low", "n", 2, "10"),
            job("high", "n", 2, "20"),
        ],
        2,
        CLUSTER,
        None,
        ("Waiting", "n", ["high"]),
        id="single-higher-priority-first",
    ),
    pytest.param(
        [
            make_node("n").capacity(cpu="4", memory="4Gi").obj(),
            job("job-b", "n", 2, "5"),
            job("job-a", "n", 2, "5"),
        ],
        2,
        CLUSTER,
        None,
        ("Waiting", "n", ["job-a"]),
        id="single-tie-by-name",
    ),
    pytest.param(
        [
            make_node("n").capacity(cpu="6", memory="6Gi").obj(),
            job("job-b", "n", 2),
            job("job-a", "n", 2, "not-a-number"),
            job("job-c", "n", 2, "1"),
        ],
        2,
        CLUSTER,
        None,
        ("Waiting", "n", ["job-c"]),
        id="single-missing-or-bad-priority-is-0",
    ),
    pytest.param(
        [
            make_node("n").capacity(cpu="4", memory="4Gi").obj(),
            job("a", "n", 1, "3"),
            job("b", "n", 1, "2"),
            job("c", "n", 2, "1"),
        ],
        2,
        CLUSTER,
        None,
        ("Waiting", "n", ["c"]),
        id="single-skips-pods-too-small",
    ),
    pytest.param(
        [make_node("n").capacity(cpu="2", memory="2Gi").obj(), job("a", "n", 1, "3"), job("b", "n", 1, "2")],
        2,
        CLUSTER,
        None,
        ("Pending", None, []),
        id="single-none-big-enough",
    ),
    # enableMultiple: pods in priority order until they cover the shortfall
    pytest.param(
        [
            make_node("n").capacity(cpu="3", memory="3Gi").obj(),
            job("p10", "n", 1, "10"),
            job("p30", "n", 1, "30"),
            job("p20", "n", 1, "20"),
        ],
        2,
        MULTIPLE,
        None,
        ("Waiting", "n", ["p30", "p20"]),
        id="multiple-priority-order",
    ),
    pytest.param(
        [
            make_node("n").capacity(cpu="3", memory="3Gi").obj(),
            job("b", "n", 1),
            job("c", "n", 1),
            job("a", "n", 1),
        ],
        2,
        MULTIPLE,
        None,
        ("Waiting", "n", ["a", "b"]),
        id="multiple-tie-by-name",
    ),
    pytest.param(
        [
            make_node("n").capacity(cpu="4", memory="4Gi").obj(),
            job("a", "n", 1, "3"),
            job("b", "n", 1, "2"),
            job("c", "n", 1, "1"),
        ],
        2,
        MULTIPLE,
        None,
        ("Waiting", "n", ["a"]),
        id="multiple-counts-free-capacity",
    ),
    pytest.param(
        [
            make_node("n").capacity(cpu="4", memory="4Gi").obj(),
            job("a", "n", 1, "3"),
            job("b", "n", 1, "2"),
            job("c", "n", 2, "1"),
        ],
        2,
        MULTIPLE,
        None,
        ("Waiting", "n", ["a", "b"]),
        id="multiple-stops-once-covered",
    ),
    pytest.param(
        [
            make_node("n").capacity(cpu="2", memory="2Gi").obj(),
            job("a", "n", 1),
            make_pod("plain").node("n").req(cpu="1", memory="1Gi").obj(),
        ],
        2,
        MULTIPLE,
        None,
        ("Pending", None, []),
        id="multiple-not-enough-in-total",
    ),
    # enough free capacity: nothing to pre-allocate
    pytest.param(
        [make_node("n").capacity(cpu="4", memory="4Gi").obj(), job("a", "n", 1, "100")],
        2,
        MULTIPLE,
        None,
        ("Available", "n", []),
        id="free-node-needs-no-pods",
    ),
    # Default mode: candidates are the pods matching the owners, not the pre-allocatable label
    pytest.param(
        [
            make_node("n").capacity(cpu="2", memory="2Gi").obj(),
            job("labelled", "n", 1, "100"),
            make_pod("mine").label(OWNER).node("n").req(cpu="1", memory="1Gi").obj(),
        ],
        1,
        None,
        None,
        ("Waiting", "n", ["mine"]),
        id="default-mode-owners",
    ),
    pytest.param(
        [
            make_node("n").capacity(cpu="2", memory="2Gi").obj(),
            job("labelled", "n", 1, "100"),
            make_pod("mine").label(OWNER).node("n").req(cpu="1", memory="1Gi").obj(),
        ],
        1,
        {"mode": "Default"},
        {"enableClusterMode": True},
        ("Waiting", "n", ["mine"]),
        id="explicit-default-mode-wins-over-args",
    ),
    pytest.param(
        [
            make_node("n").capacity(cpu="2", memory="2Gi").obj(),
            job("labelled", "n", 1, "100"),
            make_pod("mine").label(OWNER).node("n").req(cpu="1", memory="1Gi").obj(),
        ],
        1,
        None,
        {"enableClusterMode": True},
        ("Waiting", "n", ["labelled"]),
        id="args-cluster-mode",
    ),
    # label and annotation keys from the plugin args
    pytest.param(
        [
            make_node("n").capacity(cpu="2", memory="2Gi").obj(),
            job("default-key", "n", 1, "100"),
            job("custom-key", "n", 1, key="example.com/spare"),
        ],
        1,
        CLUSTER,
        {"clusterLabelKey": "example.com/spare"},
        ("Waiting", "n", ["custom-key"]),
        id="label-key-arg",
    ),
    pytest.param(
        [
            make_node("n").capacity(cpu="2", memory="2Gi").obj(),
            make_pod("a")
            .label({PRE_ALLOCATABLE: "true"})
            .annotate({"example.com/rank": "1", PRIORITY: "9"})
            .node("n")
            .req(cpu="1", memory="1Gi")
            .obj(),
            make_pod("b")
            .label({PRE_ALLOCATABLE: "true"})
            .annotate({"example.com/rank": "2", PRIORITY: "1"})
            .node("n")
            .req(cpu="1", memory="1Gi")
            .obj(),
        ],
        1,
        CLUSTER,
        {"clusterPriorityAnnotationKey": "example.com/rank"},
        ("Waiting", "n", ["b"]),
        id="priority-annotation-key-arg",
    ),
    pytest.param(
        [
            make_node("n").capacity(cpu="2", memory="2Gi").obj(),
            make_pod("a").label({PRE_ALLOCATABLE: "false"}).node("n").req(cpu="1", memory="1Gi").obj(),
            job("b", "n", 1),
        ],
        1,
        CLUSTER,
        None,
        ("Waiting", "n", ["b"]),
        id="label-must-be-true",
    ),
]


@pytest.mark.parametrize(("cluster", "cpu", "policy", "args", "expected"), CHOICE_CASES)
def test_pre_allocation_candidate_choice(
    cluster: list[Obj],
    cpu: int,
    policy: Obj | None,
    args: Obj | None,
    expected: tuple[str, str | None, list[str]],
) -> None:
    assert choose(cluster, cpu, policy, args) == expected


@pytest.mark.parametrize(
    ("prefer", "expected"),
    [
        (False, ("Waiting", "full", ["spare"])),
        (True, ("Available", "free", [])),
    ],
)
def test_prefer_no_pre_allocated_pods(prefer: bool, expected: tuple[str, str | None, list[str]]) -> None:
    """``full`` looks emptier once its pre-allocatable pod counts as freed; the preference picks ``free``."""
    cluster = [
        make_node("full").capacity(cpu="4", memory="4Gi").obj(),
        job("spare", "full", 4),
        make_node("free").capacity(cpu="4", memory="4Gi").obj(),
        make_pod("busy").node("free").req(cpu="1", memory="1Gi").obj(),
    ]
    assert choose(cluster, 2, CLUSTER, {"preferNoPreAllocatedPods": prefer}) == expected
