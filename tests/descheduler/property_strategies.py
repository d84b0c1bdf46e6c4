"""Hypothesis strategies and cluster builders for the descheduler's property tests (test_properties.py).

* `clusters`: small live clusters (2-6 nodes, Deployments and ReplicaSets of 1-8 replicas in two namespaces,
  PodDisruptionBudgets with minAvailable / maxUnavailable as an int or a percentage, some pods made not Ready,
  some nodes tainted NoSchedule and some empty nodes joining once the workloads run), built in a
  `Simulation` by `start`.
* `policies`: DeschedulerPolicy documents of 1-3 profiles mixing LowNodeUtilization, RemoveDuplicates,
  PodLifeTime and RemovePodsViolatingNodeTaints, with random per-node / per-namespace / total limits and
  LowNodeUtilization ``evictionLimits.node``.
* `snapshots`: a cluster as `berth deschedule` reads it (pods bound by ``spec.nodeName``, ReplicaSet-owned
  through ownerReferences carrying the ReplicaSet's uid, statuses as a kubelet reports them), built by
  `snapshot_objects`; `settle_budgets` gives its budgets the status the disruption controller computes and
  checks the snapshot is a fixed point of the control plane.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from berth.api.conditions import is_pod_ready
from berth.api.timestamps import format_time
from berth.descheduler.policy import Policy, load_policy
from berth.descheduler.registry import builtin_plugins
from berth.sim.engine import Simulation
from builders import make_node

Obj = dict[str, Any]
Bound = tuple[str, int | str]
"""A budget's bound: ("minAvailable" | "maxUnavailable", an int or "N%")."""

POD = ("", "Pod")
NODE = ("", "Node")
PDB = ("policy", "PodDisruptionBudget")
NAMESPACES = ("default", "team-a")
TAINT_KEY = "dedicated"
SETTLE_SECONDS = 5.0
"""Virtual time given to the control plane to place and start the workloads (every pod starts at once)."""

LOW_NODE_UTILIZATION = "LowNodeUtilization"
REMOVE_DUPLICATES = "RemoveDuplicates"
POD_LIFE_TIME = "PodLifeTime"
NODE_TAINTS = "RemovePodsViolatingNodeTaints"


# ----- live clusters ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """A Deployment or a bare ReplicaSet of `replicas` pods requesting `cpu_m` millicores, with an optional
    PodDisruptionBudget over its pods."""

    kind: str
    namespace: str
    replicas: int
    cpu_m: int
    bound: Bound | None
    always_allow: bool


@dataclass(frozen=True)
class Cluster:
    """Nodes (cpu cores each; the first `len(tainted)` exist from the start, the rest join empty once the
    workloads run), which starting nodes get a NoSchedule taint then, the workloads, and which pods (indices
    into the pods sorted by namespace and name, taken modulo their number) are made not Ready."""

    node_cpus: tuple[int, ...]
    tainted: tuple[bool, ...]
    workloads: tuple[Workload, ...]
    not_ready: tuple[int, ...]

    @property
    def late_nodes(self) -> int:
        """How many nodes join after the workloads are placed."""
        return len(self.node_cpus) - len(self.tainted)


bounds: st.SearchStrategy[Bound] = st.one_of(
    st.tuples(st.just("minAvailable"), st.integers(0, 8)),
    st.tuples(st.just("maxUnavailable"), st.integers(0, 3)),
    st.tuples(
        st.sampled_from(["minAvailable", "maxUnavailable"]),
        st.sampled_from([0, 10, 25, 34, 50, 66, 75, 100]).map(lambda p: f"{p}%"),
    ),
)

workloads: st.SearchStrategy[Workload] = st.builds(
    Workload,
    kind=st.sampled_from(["Deployment", "ReplicaSet"]),
    namespace=st.sampled_from(NAMESPACES),
    replicas=st.integers(1, 8),
    cpu_m=st.sampled_from([100, 200, 300, 500, 800]),
    bound=st.none() | bounds,
    always_allow=st.booleans(),
)


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    """A random `Cluster` of 2-6 nodes."""
    total = draw(st.integers(2, 6))
    starting = total if draw(st.integers(0, 3)) == 0 else draw(st.integers(1, total - 1))
    return Cluster(
        node_cpus=tuple(draw(st.lists(st.integers(1, 6), min_size=total, max_size=total))),
        tainted=tuple(draw(st.lists(st.booleans(), min_size=starting, max_size=starting))),
        workloads=tuple(draw(st.lists(workloads, min_size=1, max_size=4))),
        not_ready=tuple(draw(st.lists(st.integers(0, 40), max_size=4))),
    )


def app_name(index: int) -> str:
    """The name (and ``app`` label) of the cluster's `index`-th workload."""
    return f"app{index}"


def workload_object(index: int, w: Workload) -> Obj:
    """The Deployment or ReplicaSet of workload `index`, its pods labelled ``app=<name>``."""
    labels = {"app": app_name(index)}
    return {
        "apiVersion": "apps/v1",
        "kind": w.kind,
        "metadata": {"name": app_name(index), "namespace": w.namespace},
        "spec": {
            "replicas": w.replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": f"{w.cpu_m}m"}}}
                    ]
                },
            },
        },
    }


def budget_object(index: int, w: Workload) -> Obj | None:
    """The PodDisruptionBudget of workload `index` over ``app=<name>`` (None when it has none)."""
    if w.bound is None:
        return None
    spec: Obj = {"selector": {"matchLabels": {"app": app_name(index)}}, w.bound[0]: w.bound[1]}
    if w.always_allow:
        spec["unhealthyPodEvictionPolicy"] = "AlwaysAllow"
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": f"{app_name(index)}-pdb", "namespace": w.namespace},
        "spec": spec,
    }


def node_object(index: int, cpus: int) -> Obj:
    """Node ``n<index>`` with `cpus` cores, 16Gi and room for 12 pods."""
    return make_node(f"n{index}").capacity(cpu=str(cpus), memory="16Gi", pods="12").obj()


def unready(pod: Obj, at: str) -> Obj:
    """`pod` with its Ready and ContainersReady conditions False since `at` (a failing readiness probe)."""
    status = copy.deepcopy(pod.get("status") or {})
    for cond in status.get("conditions") or []:
        if cond.get("type") in ("Ready", "ContainersReady") and cond.get("status") != "False":
            cond.update(status="False", reason="ContainersNotReady", lastTransitionTime=at)
    return {**pod, "status": status}


def start(cluster: Cluster, *, seed: int = 0) -> Simulation:
    """A simulation running `cluster`: the starting nodes and the workloads, placed and started; then the
    taints, the not-Ready pods and the late nodes; then settled again, so that every budget's status is
    current."""
    sim = Simulation(seed=seed)
    store = sim.store
    for i in range(len(cluster.tainted)):
        store.create(node_object(i, cluster.node_cpus[i]))
    for i, w in enumerate(cluster.workloads):
        store.create(workload_object(i, w))
        pdb = budget_object(i, w)
        if pdb is not None:
            store.create(pdb)
    sim.advance(SETTLE_SECONDS)
    for i, tainted in enumerate(cluster.tainted):
        if tainted:
            taint = {"key": TAINT_KEY, "value": "infra", "effect": "NoSchedule"}
            store.patch(NODE, "", f"n{i}", {"spec": {"taints": [taint]}})
    names = sorted((p["metadata"]["namespace"], p["metadata"]["name"]) for p in store.list(POD)[0])
    for index in sorted({i % len(names) for i in cluster.not_ready} if names else ()):
        store.update_status(unready(store.get(POD, *names[index]), store.timestamp()))
    for i in range(len(cluster.tainted), len(cluster.node_cpus)):
        store.create(node_object(i, cluster.node_cpus[i]))
    sim.advance(2 * SETTLE_SECONDS)
    return sim


# ----- policies --------------------------------------------------------------------------------------------


@st.composite
def low_node_utilization_args(draw: st.DrawFn) -> Obj:
    """LowNodeUtilization args: thresholds and targets over cpu and / or pods, sometimes memory too (no pod
    requests memory: 0% used), mostly low thresholds and high targets so that nodes fall on both sides;
    sometimes ``useDeviationThresholds`` (any values) and ``evictionLimits.node``."""
    resources = draw(
        st.sampled_from([["cpu"], ["pods"], ["cpu", "pods"], ["cpu", "memory"], ["cpu", "pods", "memory"]])
    )
    deviation = draw(st.integers(0, 4)) == 0
    low: dict[str, int] = {}
    high: dict[str, int] = {}
    for r in resources:
        if deviation:
            low[r], high[r] = draw(st.integers(0, 5)) * 10, draw(st.integers(0, 5)) * 10
        else:
            low[r] = draw(st.integers(1, 4)) * 10
            high[r] = draw(st.integers(max(low[r] // 10, 3), 8)) * 10
    args: Obj = {"thresholds": low, "targetThresholds": high}
    if deviation:
        args["useDeviationThresholds"] = True
    if draw(st.booleans()):
        args["evictionLimits"] = {"node": draw(st.sampled_from([0, 1, 1, 2, 2, 3]))}
    return args


ALL_STRATEGIES = (LOW_NODE_UTILIZATION, REMOVE_DUPLICATES, POD_LIFE_TIME, NODE_TAINTS)
BALANCING = (LOW_NODE_UTILIZATION, REMOVE_DUPLICATES)


@st.composite
def profiles(draw: st.DrawFn, index: int, pool: tuple[str, ...] = ALL_STRATEGIES) -> Obj:
    """Profile ``p<index>``: a non-empty mix of the strategies of `pool`, DefaultEvictor with or without
    nodeFit."""
    chosen = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True))
    configs: list[Obj] = [{"name": "DefaultEvictor", "args": {"nodeFit": draw(st.booleans())}}]
    deschedule: list[str] = []
    balance: list[str] = []
    for name in chosen:
        if name == LOW_NODE_UTILIZATION:
            configs.append({"name": name, "args": draw(low_node_utilization_args())})
            balance.append(name)
        elif name == REMOVE_DUPLICATES:
            configs.append({"name": name, "args": {}})
            balance.append(name)
        elif name == POD_LIFE_TIME:
            seconds = draw(st.sampled_from([0, 5, 30, 90, 600]))
            configs.append({"name": name, "args": {"maxPodLifeTimeSeconds": seconds}})
            deschedule.append(name)
        else:
            configs.append({"name": name, "args": {}})
            deschedule.append(name)
    plugins: Obj = {}
    if deschedule:
        plugins["deschedule"] = {"enabled": deschedule}
    if balance:
        plugins["balance"] = {"enabled": balance}
    return {"name": f"p{index}", "pluginConfig": configs, "plugins": plugins}


@st.composite
def policies(draw: st.DrawFn, pool: tuple[str, ...] = ALL_STRATEGIES) -> Obj:
    """A DeschedulerPolicy document: 1-3 profiles of the strategies of `pool`, random limits (or none) and
    gracePeriodSeconds."""
    count = draw(st.integers(1, 3))
    doc: Obj = {
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerPolicy",
        "profiles": [draw(profiles(i, pool)) for i in range(count)],
    }
    for field, top in (
        ("maxNoOfPodsToEvictPerNode", 4),
        ("maxNoOfPodsToEvictPerNamespace", 5),
        ("maxNoOfPodsToEvictTotal", 8),
    ):
        value = draw(st.none() | st.integers(0, top))
        if value is not None:
            doc[field] = value
    grace = draw(st.sampled_from([None, 0, 5]))
    if grace is not None:
        doc["gracePeriodSeconds"] = grace
    return doc


def load(doc: Obj) -> Policy:
    """The policy document, validated as ``--policy`` would read it."""
    return load_policy(doc, builtin_plugins(), source="policy.yaml")


# ----- snapshots -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodSet:
    """A ReplicaSet: its namespace, each pod's requested millicores, node (an index into the nodes, taken
    modulo their number) and age in seconds, the pods (indices) that are not Ready, and its budget."""

    namespace: str
    cpu_m: int
    nodes: tuple[int, ...]
    ages: tuple[int, ...]
    not_ready: tuple[int, ...]
    bound: Bound | None


@dataclass(frozen=True)
class Snapshot:
    """Nodes (cores each; tainted or not) and the ReplicaSets on them."""

    node_cpus: tuple[int, ...]
    tainted: tuple[bool, ...]
    sets: tuple[PodSet, ...]


@st.composite
def pod_sets(draw: st.DrawFn) -> PodSet:
    """A `PodSet` of 1-6 pods."""
    size = draw(st.integers(1, 6))
    return PodSet(
        namespace=draw(st.sampled_from(NAMESPACES)),
        cpu_m=draw(st.sampled_from([100, 250, 500, 1000])),
        nodes=tuple(draw(st.lists(st.integers(0, 5), min_size=size, max_size=size))),
        ages=tuple(draw(st.lists(st.sampled_from([20, 400, 4000]), min_size=size, max_size=size))),
        not_ready=tuple(draw(st.lists(st.integers(0, 5), max_size=2))),
        bound=draw(st.none() | bounds),
    )


@st.composite
def snapshots(draw: st.DrawFn) -> Snapshot:
    """A `Snapshot` of 2-5 nodes and 1-4 ReplicaSets."""
    count = draw(st.integers(2, 5))
    return Snapshot(
        node_cpus=tuple(draw(st.lists(st.integers(1, 4), min_size=count, max_size=count))),
        tainted=tuple(draw(st.lists(st.booleans(), min_size=count, max_size=count))),
        sets=tuple(draw(st.lists(pod_sets(), min_size=1, max_size=4))),
    )


def _pod_status(created: str, ready: bool) -> Obj:
    flag = "True" if ready else "False"
    return {
        "phase": "Running",
        "startTime": created,
        "conditions": [
            {"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": created}
            for t, s in (
                ("Initialized", "True"),
                ("Ready", flag),
                ("ContainersReady", flag),
                ("PodScheduled", "True"),
            )
        ],
    }


def snapshot_objects(snap: Snapshot, now: datetime) -> list[Obj]:
    """The snapshot's objects as an API server returns them at `now`: uids and creationTimestamps given,
    pods with the API's defaults, bound and Running; a pod that would not fit its node's free cpu goes to
    the first node where it fits, or is left out (its ReplicaSet's replicas count the pods kept). Budgets
    have no status yet (`settle_budgets` fills it)."""
    objects: list[Obj] = []
    free: list[int] = []
    for i, cpus in enumerate(snap.node_cpus):
        builder = make_node(f"n{i}").capacity(cpu=str(cpus), memory="16Gi", pods="12")
        if snap.tainted[i]:
            builder.taint(TAINT_KEY, "infra", "NoSchedule")
        node_obj = builder.obj()
        node_obj["metadata"].update(uid=f"node-uid-{i}", creationTimestamp="2023-01-01T00:00:00Z")
        objects.append(node_obj)
        free.append(cpus * 1000)
    pods_left = [12] * len(snap.node_cpus)
    for s, ps in enumerate(snap.sets):
        name, uid = f"rs{s}", f"rs-uid-{s}"
        labels = {"app": name}
        template: Obj = {
            "metadata": {"labels": dict(labels)},
            "spec": {
                "containers": [
                    {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": f"{ps.cpu_m}m"}}}
                ],
            },
        }
        pods: list[Obj] = []
        for k, (wanted, age) in enumerate(zip(ps.nodes, ps.ages, strict=True)):
            order = [wanted % len(free), *range(len(free))]
            node = next((n for n in order if free[n] >= ps.cpu_m and pods_left[n] > 0), None)
            if node is None:
                continue
            free[node] -= ps.cpu_m
            pods_left[node] -= 1
            created = format_time(now - timedelta(seconds=age))
            spec = copy.deepcopy(template["spec"])
            spec.update(
                nodeName=f"n{node}",
                schedulerName="default-scheduler",
                terminationGracePeriodSeconds=30,
                restartPolicy="Always",
                priority=0,
                preemptionPolicy="PreemptLowerPriority",
            )
            pods.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"{name}-{k}",
                        "namespace": ps.namespace,
                        "uid": f"{uid}-pod-{k}",
                        "creationTimestamp": created,
                        "labels": dict(labels),
                        "ownerReferences": [
                            {
                                "apiVersion": "apps/v1",
                                "kind": "ReplicaSet",
                                "name": name,
                                "uid": uid,
                                "controller": True,
                                "blockOwnerDeletion": True,
                            }
                        ],
                    },
                    "spec": spec,
                    "status": _pod_status(created, k not in ps.not_ready),
                }
            )
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": name,
                    "namespace": ps.namespace,
                    "uid": uid,
                    "creationTimestamp": "2023-06-01T00:00:00Z",
                },
                "spec": {"replicas": len(pods), "selector": {"matchLabels": labels}, "template": template},
            }
        )
        objects.extend(pods)
        if ps.bound is not None:
            objects.append(
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": f"{name}-pdb", "namespace": ps.namespace, "uid": f"pdb-uid-{s}"},
                    "spec": {"selector": {"matchLabels": labels}, ps.bound[0]: ps.bound[1]},
                }
            )
    return objects


def settle_budgets(objects: list[Obj]) -> list[Obj]:
    """`objects` with each budget's status as the disruption controller computes it over them, as a snapshot
    read from a live cluster carries it. Asserts the objects are a fixed point of the control plane: loaded
    into a simulation, no pod is created, deleted, rebound or changes phase or readiness."""
    sim = Simulation(seed=0)
    for obj in objects:
        sim.store.create(copy.deepcopy(obj), keep_identity=True)
    sim.advance(0.0)

    def shape(pods: list[Obj]) -> set[tuple[str, str, str, str, bool]]:
        return {
            (
                p["metadata"]["namespace"],
                p["metadata"]["name"],
                str(p["spec"].get("nodeName")),
                str((p.get("status") or {}).get("phase")),
                is_pod_ready(p),
            )
            for p in pods
        }

    assert shape(sim.store.list(POD)[0]) == shape([o for o in objects if o["kind"] == "Pod"])
    out: list[Obj] = []
    for obj in objects:
        if obj["kind"] == "PodDisruptionBudget":
            meta = obj["metadata"]
            stored = sim.store.get(PDB, meta["namespace"], meta["name"])
            obj = {**obj, "status": copy.deepcopy(stored["status"])}
        out.append(obj)
    return out
