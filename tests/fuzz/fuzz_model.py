"""A cluster driven through random scenarios: the actions, their parameter spaces and the driver.

An action is ``(name, params)`` with JSON values only, so a scenario is a plain list that can be generated from
a seed (`scenario_actions`), drawn by hypothesis (`action_strategy`), shrunk, written to a JSON file and replayed
(`replay`). Parameters never name objects directly: ``pick`` is an integer resolved at apply time against the
objects that exist then (sorted by name, taken modulo their count), so every action list is valid whatever came
before it, and an action with nothing to act on is a no-op.

`Cluster` owns one `Simulation` (virtual clock) in one of three scheduler configurations (`MODES`): ``default``
(kube's default profile plus ``koord-scheduler``), ``capacity`` (examples/elasticquota-scheduler-config.yaml:
CapacityScheduling at every point, its PostFilter in place of DefaultPreemption) and ``gang``
(examples/gang-scheduler-config.yaml: Coscheduling). Every action is followed by running the cluster to the
current instant (every timer due now, and what it sets off), so the invariants are checked on a settled cluster.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
import random
import subprocess
import sys
import traceback
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from fuzz_invariants import Monitor, Violation, check_all

from berth.api.errors import StatusError
from berth.api.podgroup import POD_GROUP_LABEL
from berth.api.wellknown import ANNOTATION_DURATION, ANNOTATION_STARTUP
from berth.descheduler.drain import DrainError, cordon, drain, uncordon
from berth.scheduler.framework.config import SchedulerConfig, parse_config
from berth.sim.engine import Simulation

Obj = dict[str, Any]
Action = tuple[str, dict[str, Any]]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODES = ("default", "capacity", "gang")
APPS = ("a", "b", "c")
ZONES = ("z0", "z1", "z2")
DEDICATED = "dedicated"
SSD = "disk"
KOORD = "koord-scheduler"
PRIORITY_CLASSES: dict[str, tuple[int, str | None]] = {
    "low": (100, None),
    "mid": (1000, None),
    "high": (100000, None),
    "polite": (5000, "Never"),
}
NAMESPACES = {
    "default": ("default", "team"),
    "capacity": ("default", "q0", "q1", "q2"),
    "gang": ("default", "team"),
}
QUOTA_NAMESPACES = ("q0", "q1", "q2")

POD = ("", "Pod")
NODE = ("", "Node")
RS = ("apps", "ReplicaSet")
DEPLOY = ("apps", "Deployment")
PDB = ("policy", "PodDisruptionBudget")
RESERVATION = ("scheduling.koordinator.sh", "Reservation")
EQ = ("scheduling.x-k8s.io", "ElasticQuota")
PODGROUP = ("scheduling.x-k8s.io", "PodGroup")

# ----- the parameter spaces --------------------------------------------------------------------------------

PICK = tuple(range(8))
POD_SHAPE: dict[str, tuple[Any, ...]] = {
    "cpu": (0, 100, 250, 500, 1000, 1500, 2500),
    "mem": (0, 128, 256, 512, 1024, 3072),
    "prio": (None, None, "low", "mid", "high", "polite"),
    "app": (None, 0, 1, 2),
    "affinity": (0, 0, 1, 2, 3, 4, 5),
    "spread": (0, 0, 1, 2, 3),
    "tolerate": (False, False, True),
    "startup": (0, 0, 2),
    "duration": (None, None, None, 20, 200),
    "grace": (0, 3, 30),
    "koord": (False, False, True),
}
SPACES: dict[str, dict[str, tuple[Any, ...]]] = {
    "add_node": {
        "cpu": (1, 2, 4, 8),
        "mem": (2, 4, 8, 16),
        "pods": (3, 6, 16, 110),
        "zone": (0, 1, 2),
        "taint": (False, False, True),
        "ssd": (False, True),
    },
    "cordon": {"pick": PICK},
    "uncordon": {"pick": PICK},
    "drain": {"pick": PICK, "force": (False, True), "timeout": (None, 30, 300), "grace": (None, 0, 5)},
    "delete_node": {"pick": PICK},
    "restore_node": {"pick": PICK},
    "relabel_node": {"pick": PICK, "zone": (0, 1, 2), "ssd": (False, True)},
    "create_pod": {"ns": PICK, "count": (1, 1, 2, 3), "gated": (False, False, False, True), **POD_SHAPE},
    "ungate": {"pick": PICK},
    "delete_pod": {"pick": PICK, "grace": (None, None, 0)},
    "relabel_pod": {"pick": PICK, "app": (None, 0, 1, 2)},
    "create_workload": {
        "kind": ("Deployment", "ReplicaSet"),
        "replicas": (0, 1, 2, 3, 5),
        "ns": PICK,
        **POD_SHAPE,
    },
    "scale": {"pick": PICK, "replicas": (0, 1, 2, 4, 6)},
    "rollout": {"pick": PICK},
    "delete_workload": {"pick": PICK},
    "create_reservation": {
        "cpu": (250, 500, 1000, 2000),
        "mem": (256, 512, 1024, 2048),
        "app": (0, 1, 2),
        "allocate_once": (None, True, False),
        "policy": (None, None, "Aligned", "Restricted"),
        "pre_allocation": (False, False, False, True),
        "ttl": ("0", "30s", "10m", "1h"),
        "node": (None, None, 0, 1, 2),
        "koord": (False, True),
    },
    "delete_reservation": {"pick": PICK},
    "create_pdb": {
        "pick": PICK,
        "bound": (
            ("minAvailable", 1),
            ("minAvailable", 2),
            ("maxUnavailable", 1),
            ("minAvailable", "50%"),
            ("maxUnavailable", "34%"),
        ),
    },
    "delete_pdb": {"pick": PICK},
    "evict": {"pick": PICK, "covered": (False, True, True), "grace": (None, 0)},
    "advance": {"seconds": (1, 1, 3, 10, 30, 120, 400)},
    "create_gang": {
        "ns": PICK,
        "size": (1, 2, 3, 4, 5),
        "min_member": (1, 2, 3, 5),
        "cpu": (250, 500, 1000, 2000),
        "prio": (None, "low", "high"),
        "timeout": (None, 5, 30),
        "missing": (0, 0, 0, 1),
    },
    "create_quota": {
        "ns": (0, 1, 2),
        "min_cpu": (0, 1, 2, 4),
        "max_cpu": (1, 2, 4, 8),
        "min_mem": (0, 2, 4),
        "max_mem": (2, 4, 8, 16),
    },
    "raise_quota": {"pick": PICK, "cpu": (0, 1, 2), "mem": (0, 2, 4)},
    "delete_quota": {"pick": PICK},
    "delete_podgroup": {"pick": PICK},
}
WEIGHTS: dict[str, int] = {
    "add_node": 6,
    "cordon": 1,
    "uncordon": 1,
    "drain": 2,
    "delete_node": 1,
    "restore_node": 1,
    "relabel_node": 1,
    "create_pod": 10,
    "ungate": 1,
    "delete_pod": 3,
    "relabel_pod": 2,
    "create_workload": 4,
    "scale": 3,
    "rollout": 1,
    "delete_workload": 1,
    "create_reservation": 4,
    "delete_reservation": 1,
    "create_pdb": 3,
    "delete_pdb": 1,
    "evict": 5,
    "advance": 6,
    "create_gang": 5,
    "create_quota": 4,
    "raise_quota": 1,
    "delete_quota": 1,
    "delete_podgroup": 1,
}
MODE_ONLY = {
    "create_gang": "gang",
    "delete_podgroup": "gang",
    "create_quota": "capacity",
    "raise_quota": "capacity",
    "delete_quota": "capacity",
}


def action_names(mode: str) -> list[str]:
    """The actions that mean something in ``mode`` (gangs only with Coscheduling, quotas only with
    CapacityScheduling)."""
    return [a for a in SPACES if MODE_ONLY.get(a, mode) == mode]


def random_action(rng: random.Random, mode: str) -> Action:
    """One action drawn with `WEIGHTS`, each parameter uniformly from its space."""
    names = action_names(mode)
    name = rng.choices(names, weights=[WEIGHTS[n] for n in names])[0]
    return name, {k: rng.choice(v) for k, v in SPACES[name].items()}


def scenario_actions(seed: int, *, min_steps: int = 15, max_steps: int = 60) -> tuple[str, list[Action]]:
    """The mode and the actions of seeded scenario ``seed``: two to four nodes first (and, with
    CapacityScheduling, up to three ElasticQuotas), then random actions."""
    rng = random.Random(seed)
    mode = MODES[seed % len(MODES)]
    actions: list[Action] = []
    for _ in range(rng.randint(2, 4)):
        actions.append(("add_node", {k: rng.choice(v) for k, v in SPACES["add_node"].items()}))
    if mode == "capacity":
        for _ in range(rng.randint(0, 3)):
            actions.append(("create_quota", {k: rng.choice(v) for k, v in SPACES["create_quota"].items()}))
    actions.extend(random_action(rng, mode) for _ in range(rng.randint(min_steps, max_steps)))
    return mode, actions


# ----- configurations ----------------------------------------------------------------------------------------


@cache
def _example_config(name: str) -> Obj:
    doc: Obj = yaml.safe_load((EXAMPLES / name).read_text())
    return doc


def config_for(mode: str) -> SchedulerConfig | None:
    """The scheduler configuration of ``mode`` (None: Berth's default, which also serves koord-scheduler)."""
    if mode == "capacity":
        return parse_config(_example_config("elasticquota-scheduler-config.yaml"))
    if mode == "gang":
        return parse_config(_example_config("gang-scheduler-config.yaml"))
    if mode != "default":
        raise ValueError(f"unknown mode {mode!r}")
    return None


# ----- object builders ----------------------------------------------------------------------------------------


def _resources(cpu: int, mem: int) -> Obj:
    requests: Obj = {}
    if cpu:
        requests["cpu"] = f"{cpu}m"
    if mem:
        requests["memory"] = f"{mem}Mi"
    return {"requests": requests} if requests else {}


_AFFINITIES: tuple[Obj | str | None, ...] = (
    None,
    {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z0", "z1"]}
                        ]
                    }
                ]
            }
        }
    },
    {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": SSD, "operator": "Exists"}]}]
            }
        }
    },
    {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 10,
                    "preference": {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z2"]}
                        ]
                    },
                }
            ]
        }
    },
    {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "topology.kubernetes.io/zone", "operator": "NotIn", "values": ["z2"]}
                        ]
                    }
                ]
            }
        }
    },
    "anti",  # required pod anti-affinity per hostname against the pod's own app (filled in by the builder)
)


def _affinity(variant: int, app: str | None) -> Obj | None:
    chosen = _AFFINITIES[variant]
    if isinstance(chosen, dict):
        return copy.deepcopy(chosen)
    if chosen is None:
        return None
    if app is None:
        return None
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _spread(variant: int, app: str | None) -> list[Obj]:
    if variant == 0 or app is None:
        return []
    key, skew, when = {
        1: ("topology.kubernetes.io/zone", 1, "DoNotSchedule"),
        2: ("kubernetes.io/hostname", 1, "ScheduleAnyway"),
        3: ("kubernetes.io/hostname", 2, "DoNotSchedule"),
    }[variant]
    return [
        {
            "maxSkew": skew,
            "topologyKey": key,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": app}},
        }
    ]


def pod_template(shape: Mapping[str, Any], labels: Mapping[str, str], *, mode: str) -> Obj:
    """``{"metadata": ..., "spec": ...}`` of a pod of ``shape`` (see `POD_SHAPE`)."""
    app = None if shape["app"] is None else APPS[shape["app"]]
    meta_labels = dict(labels)
    if app is not None:
        meta_labels["app"] = app
    annotations: dict[str, str] = {}
    if shape["startup"]:
        annotations[ANNOTATION_STARTUP] = f"{shape['startup']}s"
    if shape["duration"] is not None:
        annotations[ANNOTATION_DURATION] = f"{shape['duration']}s"
    spec: Obj = {
        "containers": [
            {"name": "c", "image": "busybox", "resources": _resources(shape["cpu"], shape["mem"])}
        ],
        "terminationGracePeriodSeconds": shape["grace"],
    }
    if shape["prio"] is not None:
        spec["priorityClassName"] = shape["prio"]
    if shape["koord"] and mode == "default":
        spec["schedulerName"] = KOORD
    affinity = _affinity(shape["affinity"], app)
    if affinity:
        spec["affinity"] = affinity
    spread = _spread(shape["spread"], app)
    if spread:
        spec["topologySpreadConstraints"] = spread
    if shape["tolerate"]:
        spec["tolerations"] = [
            {"key": DEDICATED, "operator": "Equal", "value": "special", "effect": "NoSchedule"}
        ]
    meta: Obj = {"labels": meta_labels}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec}


def _shape(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: params[k] for k in POD_SHAPE}


def _pick(items: Sequence[Any], pick: int) -> Any:
    return items[pick % len(items)] if items else None


def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


# ----- the driver -------------------------------------------------------------------------------------------------


class Cluster:
    """One simulated cluster, the actions applied to it so far, and its invariant checks."""

    def __init__(self, mode: str, seed: int = 0) -> None:
        self.mode = mode
        self.seed = seed
        self.sim = Simulation(config=config_for(mode), seed=seed)
        self.store = self.sim.store
        self.monitor = Monitor(self.sim, gangs=mode == "gang")
        self.actions: list[Action] = []
        self.refused: Counter[str] = Counter()  # API refusals of the actions' requests, by reason
        self.done: Counter[str] = Counter()  # actions that did something, by name
        self._names = {k: itertools.count() for k in ("n", "p", "d", "rs", "r", "pdb", "g")}
        # namespaces that have had a pod (a quota made there now could start over its max)
        self._populated: set[str] = set()
        self._deleted_nodes: dict[str, Obj] = {}  # name -> the node as it was created
        for name, (value, policy) in PRIORITY_CLASSES.items():
            pc: Obj = {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            }
            if policy:
                pc["preemptionPolicy"] = policy
            self.store.create(pc)
        self.settle()

    # ----- running ------------------------------------------------------------------------------------------------
    def settle(self) -> None:
        """Run everything due at the current instant."""
        self.sim.advance(self.sim.clock.now())

    def apply(self, action: Action) -> None:
        """Apply one action, then settle."""
        name, params = action
        self.actions.append((name, dict(params)))
        self.monitor.begin_step(len(self.actions), name)
        did = getattr(self, f"_do_{name}")(**params)
        if did is not False:
            self.done[name] += 1
        self.settle()

    def check(self) -> list[Violation]:
        """Every invariant on the settled cluster, plus what the monitor saw during the last step."""
        return check_all(self.sim, self.monitor, mode=self.mode)

    def now(self) -> float:
        return self.sim.clock.now()

    # ----- helpers ----------------------------------------------------------------------------------------------
    def _next(self, kind: str) -> str:
        return f"{kind}{next(self._names[kind])}"

    def _create(self, obj: Obj) -> bool:
        try:
            self.store.create(obj)
        except StatusError as e:
            self.refused[f"create {obj['kind']}: {e.reason}"] += 1
            return False
        return True

    def _names_of(self, key: tuple[str, str]) -> list[tuple[str, str]]:
        items = self.store.list(key)[0]
        return sorted((o["metadata"].get("namespace") or "", o["metadata"]["name"]) for o in items)

    def _ns(self, pick: int) -> str:
        spaces = NAMESPACES[self.mode]
        return spaces[pick % len(spaces)]

    def _node_names(self) -> list[str]:
        return [n for _, n in self._names_of(NODE)]

    # ----- nodes ------------------------------------------------------------------------------------------------
    def _do_add_node(self, cpu: int, mem: int, pods: int, zone: int, taint: bool, ssd: bool) -> bool:
        name = self._next("n")
        labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[zone]}
        if ssd:
            labels[SSD] = "ssd"
        res = {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": str(pods)}
        node: Obj = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": {},
            "status": {"capacity": dict(res), "allocatable": dict(res)},
        }
        if taint:
            node["spec"]["taints"] = [{"key": DEDICATED, "value": "special", "effect": "NoSchedule"}]
        return self._create(node)

    def _do_restore_node(self, pick: int) -> bool:
        """Create again a node deleted earlier (its pods may still be bound to it)."""
        present = set(self._node_names())
        chosen = _pick(sorted(n for n in self._deleted_nodes if n not in present), pick)
        if chosen is None:
            return False
        return self._create(self._deleted_nodes[chosen])

    def _do_relabel_node(self, pick: int, zone: int, ssd: bool) -> bool:
        node = _pick(self._node_names(), pick)
        if node is None:
            return False
        labels = {"topology.kubernetes.io/zone": ZONES[zone], SSD: "ssd" if ssd else None}
        self.store.patch(NODE, "", node, {"metadata": {"labels": labels}})
        return True

    def _do_cordon(self, pick: int) -> bool:
        node = _pick(self._node_names(), pick)
        if node is None:
            return False
        cordon(self.store, node)
        return True

    def _do_uncordon(self, pick: int) -> bool:
        node = _pick(self._node_names(), pick)
        if node is None:
            return False
        uncordon(self.store, node)
        return True

    def _do_drain(self, pick: int, force: bool, timeout: int | None, grace: int | None) -> bool:
        node = _pick(self._node_names(), pick)
        if node is None:
            return False
        try:
            drain(self.store, self.sim.clock, node, force=force, timeout=timeout, grace_period_seconds=grace)
        except DrainError:
            self.refused["drain: pods without a controller"] += 1
        return True

    def _do_delete_node(self, pick: int) -> bool:
        node = _pick(self._node_names(), pick)
        if node is None:
            return False
        gone = self.store.delete(NODE, "", node)
        kept = {k: gone["metadata"][k] for k in ("name", "labels") if k in gone["metadata"]}
        self._deleted_nodes[node] = {**gone, "metadata": kept}
        return True

    # ----- pods ---------------------------------------------------------------------------------------------------
    def _pod_object(self, name: str, ns: str, template: Obj) -> Obj:
        meta = {**template["metadata"], "name": name, "namespace": ns}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": dict(template["spec"])}

    def _do_create_pod(self, ns: int, count: int, gated: bool, **shape: Any) -> bool:
        namespace = self._ns(ns)
        self._populated.add(namespace)
        template = pod_template(shape, {}, mode=self.mode)
        if gated:
            template["spec"]["schedulingGates"] = [{"name": "example.com/gate"}]
        ok = False
        for _ in range(count):
            ok = self._create(self._pod_object(self._next("p"), namespace, template)) or ok
        return ok

    def _do_ungate(self, pick: int) -> bool:
        gated = [
            (p["metadata"]["namespace"], p["metadata"]["name"])
            for p in self.store.list(POD)[0]
            if (p.get("spec") or {}).get("schedulingGates")
        ]
        chosen = _pick(sorted(gated), pick)
        if chosen is None:
            return False
        try:
            self.store.patch(POD, chosen[0], chosen[1], {"spec": {"schedulingGates": None}})
        except StatusError as e:
            self.refused[f"ungate: {e.reason}"] += 1
        return True

    def _do_delete_pod(self, pick: int, grace: int | None) -> bool:
        chosen = _pick(self._names_of(POD), pick)
        if chosen is None:
            return False
        try:
            self.store.delete(POD, chosen[0], chosen[1], grace_period_seconds=grace)
        except StatusError as e:
            self.refused[f"delete pod: {e.reason}"] += 1
        return True

    def _covered_pods(self) -> list[tuple[str, str]]:
        """Pods some PodDisruptionBudget selects (by its ``app`` label, in its namespace)."""
        budgets = {
            (b["metadata"]["namespace"], b["spec"]["selector"]["matchLabels"]["app"])
            for b in self.store.list(PDB)[0]
        }
        return sorted(
            (p["metadata"]["namespace"], p["metadata"]["name"])
            for p in self.store.list(POD)[0]
            if (p["metadata"]["namespace"], (p["metadata"].get("labels") or {}).get("app")) in budgets
        )

    def _do_relabel_pod(self, pick: int, app: int | None) -> bool:
        chosen = _pick(self._names_of(POD), pick)
        if chosen is None:
            return False
        patch = {"metadata": {"labels": {"app": None if app is None else APPS[app]}}}
        try:
            self.store.patch(POD, chosen[0], chosen[1], patch)
        except StatusError as e:
            self.refused[f"relabel pod: {e.reason}"] += 1
        return True

    def _do_evict(self, pick: int, covered: bool, grace: int | None) -> bool:
        chosen = _pick(self._covered_pods() if covered else self._names_of(POD), pick)
        if chosen is None:
            return False
        try:
            self.store.evict(chosen[0], chosen[1], grace_period_seconds=grace)
        except StatusError as e:
            self.refused[f"evict: {e.reason}"] += 1
        return True

    # ----- workloads ----------------------------------------------------------------------------------------------
    def _do_create_workload(self, kind: str, replicas: int, ns: int, **shape: Any) -> bool:
        namespace = self._ns(ns)
        self._populated.add(namespace)
        name = self._next("d" if kind == "Deployment" else "rs")
        template = pod_template(shape, {"workload": name}, mode=self.mode)
        obj = {
            "apiVersion": "apps/v1",
            "kind": kind,
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"workload": name}},
                "template": template,
            },
        }
        return self._create(obj)

    def _workloads(self) -> list[tuple[tuple[str, str], str, str]]:
        out = [(DEPLOY, ns, n) for ns, n in self._names_of(DEPLOY)]
        out += [
            (RS, o["metadata"]["namespace"], o["metadata"]["name"])
            for o in self.store.list(RS)[0]
            if not any(r.get("controller") for r in o["metadata"].get("ownerReferences") or ())
        ]
        return sorted(out, key=lambda t: (t[1], t[2]))

    def _do_scale(self, pick: int, replicas: int) -> bool:
        chosen = _pick(self._workloads(), pick)
        if chosen is None:
            return False
        key, ns, name = chosen
        try:
            self.store.patch(key, ns, name, {"spec": {"replicas": replicas}})
        except StatusError as e:
            self.refused[f"scale: {e.reason}"] += 1
        return True

    def _do_rollout(self, pick: int) -> bool:
        deployments = self._names_of(DEPLOY)
        chosen = _pick(deployments, pick)
        if chosen is None:
            return False
        ns, name = chosen
        rev = str(len(self.actions))
        patch = {"spec": {"template": {"metadata": {"annotations": {"fuzz/revision": rev}}}}}
        try:
            self.store.patch(DEPLOY, ns, name, patch)
        except StatusError as e:
            self.refused[f"rollout: {e.reason}"] += 1
        return True

    def _do_delete_workload(self, pick: int) -> bool:
        chosen = _pick(self._workloads(), pick)
        if chosen is None:
            return False
        key, ns, name = chosen
        try:
            self.store.delete(key, ns, name)
        except StatusError as e:
            self.refused[f"delete workload: {e.reason}"] += 1
        return True

    # ----- reservations -------------------------------------------------------------------------------------------
    def _do_create_reservation(
        self,
        cpu: int,
        mem: int,
        app: int,
        allocate_once: bool | None,
        policy: str | None,
        pre_allocation: bool,
        ttl: str,
        node: int | None,
        koord: bool,
    ) -> bool:
        tspec: Obj = {
            "containers": [{"name": "c", "image": "busybox", "resources": _resources(cpu, mem)}],
        }
        if koord and self.mode == "default":
            tspec["schedulerName"] = KOORD
        if node is not None:
            nodes = self._node_names()
            if nodes:
                tspec["nodeName"] = _pick(nodes, node)
        spec: Obj = {
            "template": {"metadata": {"namespace": "default"}, "spec": tspec},
            "owners": [{"labelSelector": {"matchLabels": {"app": APPS[app]}}}],
            "ttl": ttl,
        }
        if allocate_once is not None:
            spec["allocateOnce"] = allocate_once
        if policy is not None:
            spec["allocatePolicy"] = policy
        if pre_allocation:
            spec["preAllocation"] = True
        obj = {
            "apiVersion": "scheduling.koordinator.sh/v1alpha1",
            "kind": "Reservation",
            "metadata": {"name": self._next("r")},
            "spec": spec,
        }
        return self._create(obj)

    def _do_delete_reservation(self, pick: int) -> bool:
        chosen = _pick(self._names_of(RESERVATION), pick)
        if chosen is None:
            return False
        self.store.delete(RESERVATION, "", chosen[1])
        return True

    # ----- budgets ------------------------------------------------------------------------------------------------
    def _do_create_pdb(self, pick: int, bound: Sequence[Any]) -> bool:
        """A budget over the ``app`` of an existing pod, in its namespace."""
        apps = sorted(
            {
                (p["metadata"]["namespace"], p["metadata"]["labels"]["app"])
                for p in self.store.list(POD)[0]
                if "app" in (p["metadata"].get("labels") or {})
            }
        )
        chosen = _pick(apps, pick)
        if chosen is None:
            return False
        field, value = bound
        obj = {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": self._next("pdb"), "namespace": chosen[0]},
            "spec": {"selector": {"matchLabels": {"app": chosen[1]}}, field: value},
        }
        return self._create(obj)

    def _do_delete_pdb(self, pick: int) -> bool:
        chosen = _pick(self._names_of(PDB), pick)
        if chosen is None:
            return False
        self.store.delete(PDB, chosen[0], chosen[1])
        return True

    # ----- time -----------------------------------------------------------------------------------------------------
    def _do_advance(self, seconds: int) -> bool:
        self.sim.advance(self.now() + seconds)
        return True

    # ----- gangs ------------------------------------------------------------------------------------------------------
    def _do_create_gang(
        self,
        ns: int,
        size: int,
        min_member: int,
        cpu: int,
        prio: str | None,
        timeout: int | None,
        missing: int,
    ) -> bool:
        if self.mode != "gang":
            return False
        namespace = self._ns(ns)
        self._populated.add(namespace)
        name = self._next("g")
        spec: Obj = {"minMember": min(min_member, size)}
        if timeout is not None:
            spec["scheduleTimeoutSeconds"] = timeout
        ok = self._create(
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": name, "namespace": namespace},
                "spec": spec,
            }
        )
        shape = {**{k: v[0] for k, v in POD_SHAPE.items()}, "cpu": cpu, "mem": 256, "prio": prio, "grace": 0}
        for _ in range(size - missing):
            template = pod_template(shape, {POD_GROUP_LABEL: name}, mode=self.mode)
            ok = self._create(self._pod_object(self._next("p"), namespace, template)) or ok
        return ok

    # ----- quotas -------------------------------------------------------------------------------------------------------
    def _do_create_quota(self, ns: int, min_cpu: int, max_cpu: int, min_mem: int, max_mem: int) -> bool:
        namespace = QUOTA_NAMESPACES[ns]
        if self.mode != "capacity" or namespace in self._populated:
            return False
        self._populated.add(namespace)  # one quota per namespace, made before any of its pods
        obj = {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {"name": "quota", "namespace": namespace},
            "spec": {
                "min": {"cpu": str(min_cpu), "memory": f"{min_mem}Gi"},
                "max": {"cpu": str(max(min_cpu, max_cpu)), "memory": f"{max(min_mem, max_mem)}Gi"},
            },
        }
        return self._create(obj)

    def _do_raise_quota(self, pick: int, cpu: int, mem: int) -> bool:
        """Raise a quota's max (a lower max could leave it over max with no scheduler at fault)."""
        chosen = _pick(self._names_of(EQ), pick)
        if chosen is None:
            return False
        quota = self.store.get(EQ, chosen[0], chosen[1])
        spec = quota["spec"]
        cpu_max = int(spec["max"]["cpu"]) + cpu
        mem_max = int(spec["max"]["memory"].removesuffix("Gi")) + mem
        patch = {"spec": {"max": {"cpu": str(cpu_max), "memory": f"{mem_max}Gi"}}}
        self.store.patch(EQ, chosen[0], chosen[1], patch)
        return True

    def _do_delete_quota(self, pick: int) -> bool:
        chosen = _pick(self._names_of(EQ), pick)
        if chosen is None:
            return False
        self.store.delete(EQ, chosen[0], chosen[1])
        return True

    def _do_delete_podgroup(self, pick: int) -> bool:
        chosen = _pick(self._names_of(PODGROUP), pick)
        if chosen is None:
            return False
        self.store.delete(PODGROUP, chosen[0], chosen[1])
        return True


def run(
    mode: str, actions: Sequence[Action], *, seed: int = 0, check_every_step: bool = True
) -> tuple[Cluster, list[tuple[int, Violation]]]:
    """Apply ``actions`` to a new cluster, checking after every step (or only at the end); returns the cluster
    and the violations found, each with the number of the step after which it was seen (1-based)."""
    cluster = Cluster(mode, seed)
    found: list[tuple[int, Violation]] = []
    for i, action in enumerate(actions, 1):
        try:
            cluster.apply(action)
        except Exception as e:  # a crash inside Berth: the cluster cannot go on
            found.append((i, crash_violation(e)))
            break
        if check_every_step or i == len(actions):
            found.extend((i, v) for v in cluster.check())
    return cluster, found


def crash_violation(e: BaseException) -> Violation:
    """``crash``: an exception escaped a Berth component; named by its type, message and innermost Berth frame."""
    where = ""
    for frame in traceback.extract_tb(e.__traceback__):
        if "/berth/" in frame.filename:
            where = f" at {frame.filename.split('/src/')[-1]}:{frame.lineno} ({frame.name})"
    return Violation("crash", f"{type(e).__name__}: {e}{where}")


def final_state(cluster: Cluster) -> list[Obj]:
    """Every stored object (the state two runs of the same scenario must agree on)."""
    return cluster.sim.objects()


def determinism_message(kinds: Sequence[str]) -> str:
    """The description of a determinism violation: the kinds whose final objects differ."""
    return f"two runs of the same scenario in processes with other string-hash seeds differ in: {', '.join(kinds)}"


def determinism_violation(
    mode: str, actions: Sequence[Action], first: Cluster, *, seed: int = 0, across_processes: bool = False
) -> Violation | None:
    """Run the scenario again from scratch, in this process (or, ``across_processes``, in two fresh interpreters
    with different string-hash seeds); a violation naming the first difference when the final states differ."""
    if across_processes:
        here = state_digest(first)
        kinds: set[str] = set()
        for h in (0, 1):
            kinds.update(digest_difference(here, digest_in_subprocess(mode, actions, seed=seed, hash_seed=h)))
        if kinds:
            return Violation("determinism", determinism_message(sorted(kinds)))
        return None
    second, _ = run(mode, actions, seed=seed, check_every_step=False)
    a, b = final_state(first), final_state(second)
    if a == b:
        return None
    for x, y in itertools.zip_longest(a, b):
        if x != y:
            what = x or y
            assert what is not None
            ident = f"{what['kind']} {what['metadata'].get('namespace') or ''}/{what['metadata']['name']}"
            return Violation("determinism", f"two runs of the same scenario differ first at {ident}")
    return Violation("determinism", "two runs of the same scenario differ")


# ----- shrinking ----------------------------------------------------------------------------------------------------


def first_violation(
    mode: str, actions: Sequence[Action], *, seed: int = 0, invariant: str | None = None
) -> tuple[int, Violation] | None:
    """The first violation (of ``invariant``, when given) running ``actions``, with its step; None if none."""
    cluster = Cluster(mode, seed)
    for i, action in enumerate(actions, 1):
        try:
            cluster.apply(action)
        except Exception as e:
            v = crash_violation(e)
            return (i, v) if invariant in (None, v.invariant) else None
        for v in cluster.check():
            if invariant in (None, v.invariant):
                return i, v
    if invariant == "determinism":
        v2 = determinism_violation(mode, actions, cluster, seed=seed, across_processes=True)
        return None if v2 is None else (len(actions), v2)
    return None


def shrink(
    mode: str, actions: Sequence[Action], invariant: str, *, seed: int = 0, budget: int = 400
) -> list[Action]:
    """A shorter, simpler action list still breaking ``invariant``: drop what follows the failing step, then
    chunks and single actions (ddmin-like), then set each parameter to the first (simplest) value of its
    space; at most ``budget`` runs."""
    runs = 0

    def fails(candidate: Sequence[Action]) -> int | None:
        nonlocal runs
        runs += 1
        hit = first_violation(mode, candidate, seed=seed, invariant=invariant)
        return None if hit is None else hit[0]

    hit = fails(actions)
    if hit is None:
        return list(actions)
    current = list(actions[:hit]) if invariant != "determinism" else list(actions)
    chunk = max(1, len(current) // 2)
    while chunk >= 1 and runs < budget:
        i = 0
        changed = False
        while i < len(current) and runs < budget:
            candidate = current[:i] + current[i + chunk :]
            step = fails(candidate) if candidate else None
            if step is not None:
                current = candidate[:step] if invariant != "determinism" else candidate
                changed = True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    for idx in range(len(current)):
        name, params = current[idx]
        for key, space in SPACES.get(name, {}).items():
            if runs >= budget or params.get(key) == space[0]:
                continue
            simpler = (name, {**params, key: space[0]})
            candidate = [*current[:idx], simpler, *current[idx + 1 :]]
            if fails(candidate) is not None:
                current = candidate
                params = simpler[1]
    return current


# ----- determinism across processes -----------------------------------------------------------------------------------


def state_digest(cluster: Cluster) -> dict[str, str]:
    """SHA-256 of the final objects (canonical JSON), per kind."""
    by_kind: dict[str, list[Obj]] = {}
    for o in final_state(cluster):
        by_kind.setdefault(str(o.get("kind")), []).append(o)
    return {
        kind: hashlib.sha256(
            json.dumps(objs, sort_keys=True, separators=(",", ":"), default=str).encode()
        ).hexdigest()
        for kind, objs in sorted(by_kind.items())
    }


def digest_difference(a: Mapping[str, str], b: Mapping[str, str]) -> list[str]:
    """The kinds whose objects differ between two `state_digest`s."""
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def digest_in_subprocess(
    mode: str, actions: Sequence[Action], *, seed: int = 0, hash_seed: int = 1
) -> dict[str, str]:
    """`state_digest` of the scenario run in a fresh interpreter with ``PYTHONHASHSEED=hash_seed`` (so set
    and dict orders that depend on string hashing differ from this process's)."""
    here = Path(__file__).resolve().parent
    code = (
        "import json, sys\n"
        f"sys.path[:0] = [{str(here)!r}, {str(here.parent)!r}]\n"
        "from fuzz_model import run, state_digest\n"
        "mode, actions, seed = json.load(sys.stdin)\n"
        "cluster, _ = run(mode, [tuple(a) for a in actions], seed=seed, check_every_step=False)\n"
        "print(json.dumps(state_digest(cluster)))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed)}
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps([mode, [list(a) for a in actions], seed]),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    digest: dict[str, str] = json.loads(out.stdout)
    return digest
