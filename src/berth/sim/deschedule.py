"""A descheduling cycle on a copy of a cluster, with the re-placing dry run (descheduler#1584).

`load_snapshot` puts a cluster's objects, as they were read (uids, creationTimestamps and status kept), into
an embedded store whose time is the snapshot's "now". `plan_descheduling` starts the control plane on it
(which first does what a running cluster does at that instant: the controllers' first syncs, the scheduler's
pending pods), runs one cycle of the policy there, evicting on the copy, then lets the controllers recreate
what they own and the scheduler place it, on a virtual clock until every evicted pod's grace period has
passed, and reports each move with the utilisation before and after as a `DeschedulingPlan`
(``berth.dev/v1alpha1``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from berth.api.contracts import Store
from berth.api.errors import NotFound
from berth.api.resources import node_allocatable, pod_requests
from berth.api.watch import WatchEvent
from berth.clock import SimClock
from berth.controlplane.plane import ControlPlane, install_admission
from berth.descheduler.cycle import Descheduler
from berth.descheduler.evictor import COMPONENT, Eviction
from berth.descheduler.policy import Policy
from berth.descheduler.setup import migration_args, migration_factory
from berth.scheduler.framework.config import SchedulerConfig
from berth.store import MemoryStore
from berth.store.events import EventRecorder

__all__ = [
    "PLAN_API_VERSION",
    "PLAN_KIND",
    "DeschedulingPlan",
    "NodeUsage",
    "PlannedEviction",
    "load_snapshot",
    "node_usage",
    "plan_descheduling",
    "plan_from_evictions",
    "read_cluster",
    "run_live_cycle",
]

Obj = dict[str, Any]
PLAN_API_VERSION = "berth.dev/v1alpha1"
PLAN_KIND = "DeschedulingPlan"
SETTLE_SECONDS = 10.0
"""Virtual time given to the controllers and the scheduler after the last evicted pod's grace period."""

_ORDER = {"Namespace": 0, "PriorityClass": 1, "Node": 2, "Deployment": 3, "ReplicaSet": 4}
_BASIC = ("cpu", "memory", "pods")


@dataclass(frozen=True)
class PlannedEviction:
    """One eviction and what replaced the pod: None when no controller recreates it; the replacement's node
    is None while it stays Pending."""

    namespace: str
    name: str
    node: str
    plugin: str
    replacement: tuple[str, str, str | None] | None

    def to_dict(self) -> dict[str, Any]:
        """The plan's JSON form of this eviction."""
        rep = self.replacement
        return {
            "pod": {"namespace": self.namespace, "name": self.name},
            "node": self.node,
            "plugin": self.plugin,
            "replacement": None if rep is None else {"namespace": rep[0], "name": rep[1], "node": rep[2]},
        }


@dataclass(frozen=True)
class NodeUsage:
    """A node's requested fraction of allocatable per resource, before and after the cycle."""

    name: str
    before: Mapping[str, float]
    after: Mapping[str, float]


@dataclass(frozen=True)
class DeschedulingPlan:
    """What a cycle would do (or did): the evictions and every node's utilisation before and after."""

    evictions: tuple[PlannedEviction, ...]
    nodes: tuple[NodeUsage, ...]
    resources: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The ``DeschedulingPlan`` document."""
        return {
            "apiVersion": PLAN_API_VERSION,
            "kind": PLAN_KIND,
            "evictions": [e.to_dict() for e in self.evictions],
            "nodes": [{"name": n.name, "before": dict(n.before), "after": dict(n.after)} for n in self.nodes],
        }

    def to_table(self) -> str:
        """The plan for people: the evictions, then the nodes' utilisation (percent) before → after."""
        lines: list[str] = []
        if self.evictions:
            rows = [("NAMESPACE", "POD", "NODE", "PLUGIN", "REPLACEMENT", "NEW NODE")]
            for e in self.evictions:
                rep = e.replacement
                rows.append(
                    (
                        e.namespace,
                        e.name,
                        e.node,
                        e.plugin,
                        "<none>" if rep is None else rep[1],
                        "<none>" if rep is None else (rep[2] or "<pending>"),
                    )
                )
            lines.extend(_columns(rows))
        else:
            lines.append("No pods would be evicted.")
        lines.append("")
        header = ("NODE", *(r.upper() for r in self.resources))
        rows2: list[tuple[str, ...]] = [header]
        for n in self.nodes:
            cells = [n.name]
            for r in self.resources:
                b, a = n.before.get(r, 0.0), n.after.get(r, 0.0)
                cells.append(
                    f"{b * 100:.0f}%" if round(b, 4) == round(a, 4) else f"{b * 100:.0f}%->{a * 100:.0f}%"
                )
            rows2.append(tuple(cells))
        lines.extend(_columns(rows2))
        return "\n".join(lines) + "\n"


def _columns(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def load_snapshot(
    objects: Iterable[Obj], *, now: datetime, seed: int = 0, validated: bool = False
) -> tuple[MemoryStore, SimClock]:
    """An embedded store holding `objects` as they were (identity and status kept), its time at `now`;
    `validated`: their loader validated them already."""
    clock = SimClock()
    store = MemoryStore(clock=clock, seed=seed, epoch=now)
    store.load(sorted(objects, key=lambda o: _ORDER.get(str(o.get("kind")), 9)), validated=validated)
    return store, clock


Requests = Callable[[Obj], Mapping[str, int]]
"""A pod's requests (cpu in milli-units)."""


class _Requests:
    """Pod requests computed once per pod object (before and after share most pods: the store's objects are
    immutable, an unchanged pod is the same object)."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[Obj, Mapping[str, int]]] = {}

    def __call__(self, pod: Obj) -> Mapping[str, int]:
        got = self._by_id.get(id(pod))
        if got is None or got[0] is not pod:
            got = (pod, pod_requests(pod))
            self._by_id[id(pod)] = got
        return got[1]


def _account(out: dict[str, dict[str, int]], pod: Obj, sign: int, requests: Requests) -> None:
    """Add (sign 1) or take away (-1) a pod's requests on its node, if it holds resources there."""
    node = (pod.get("spec") or {}).get("nodeName")
    if not node or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return
    row = out.setdefault(str(node), {})
    row["pods"] = row.get("pods", 0) + sign
    for r, v in requests(pod).items():
        row[r] = row.get(r, 0) + sign * v


def _requested(pods: Iterable[Obj], requests: Requests) -> dict[str, dict[str, int]]:
    """Requests summed per node over the pods that hold resources (assigned, not finished)."""
    out: dict[str, dict[str, int]] = {}
    for p in pods:
        _account(out, p, 1, requests)
    return out


def node_usage(
    nodes: Sequence[Obj], pods: Iterable[Obj], resources: Sequence[str], requests: Requests | None = None
) -> dict[str, dict[str, float]]:
    """Per node name: requested / allocatable for each resource (0 where the node has none)."""
    requested = _requested(pods, requests or _Requests())
    out: dict[str, dict[str, float]] = {}
    for node in nodes:
        name = str(node["metadata"]["name"])
        alloc = node_allocatable(node)
        used = requested.get(name, {})
        out[name] = {r: (round(used.get(r, 0) / alloc[r], 6) if alloc.get(r) else 0.0) for r in resources}
    return out


def _resources(pods: Iterable[Obj], requests: Requests) -> tuple[str, ...]:
    extended = {r for p in pods for r in requests(p) if r not in _BASIC}
    return (*_BASIC, *sorted(extended))


def plan_from_evictions(
    evictions: Sequence[Eviction],
    nodes: Sequence[Obj],
    before_pods: Sequence[Obj],
    replacements: Mapping[tuple[str, str], tuple[str, str, str | None] | None],
    placed: Sequence[Obj] = (),
    requests: Requests | None = None,
) -> DeschedulingPlan:
    """Assemble the plan from a cycle's evictions: utilisation before (`before_pods`) and after (the same
    without the evicted pods, with the `placed` replacements); `requests` may be a cache the caller has."""
    requests = requests or _Requests()
    evicted = {(e.namespace, e.name) for e in evictions}
    removed = [
        p for p in before_pods if (p["metadata"].get("namespace"), p["metadata"].get("name")) in evicted
    ]
    resources = _resources([*before_pods, *placed], requests)
    before_sums = _requested(before_pods, requests)
    after_sums = {node: dict(row) for node, row in before_sums.items()}
    for pod, sign in [*((p, -1) for p in removed), *((p, 1) for p in placed)]:
        _account(after_sums, pod, sign, requests)
    planned = tuple(
        PlannedEviction(e.namespace, e.name, e.node, e.plugin, replacements.get((e.namespace, e.name)))
        for e in evictions
    )
    usage = []
    for n in sorted(nodes, key=lambda n: str(n["metadata"]["name"])):
        name = str(n["metadata"]["name"])
        alloc = node_allocatable(n)
        usage.append(
            NodeUsage(
                name,
                _fractions(before_sums.get(name, {}), alloc, resources),
                _fractions(after_sums.get(name, {}), alloc, resources),
            )
        )
    return DeschedulingPlan(planned, tuple(usage), resources)


def _fractions(
    used: Mapping[str, int], alloc: Mapping[str, int], resources: Sequence[str]
) -> dict[str, float]:
    return {r: (round(used.get(r, 0) / alloc[r], 6) if alloc.get(r) else 0.0) for r in resources}


def _controller_uid(pod: Mapping[str, Any]) -> str | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return str(ref.get("uid") or "") or None
    return None


def plan_descheduling(
    objects: Sequence[Obj],
    policy: Policy,
    *,
    now: datetime,
    config: SchedulerConfig | None = None,
    seed: int = 0,
    validated: bool = False,
) -> DeschedulingPlan:
    """Run one cycle of `policy` on a copy of `objects` at `now` and re-place what it evicts (`validated`:
    the objects' loader validated them already)."""
    store, clock = load_snapshot(objects, now=now, seed=seed, validated=validated)
    migration = migration_args(policy)
    install_admission(store)
    # a copy of a cluster, possibly partial (manifests, lists taken one kind at a time): an owner missing from it
    # is not a reason to collect its dependents, so no garbage collector runs on it
    plane = ControlPlane(
        store, clock, config=config, seed=seed, migration=migration, garbage_collection=False
    )
    plane.replay()
    # the control plane catches up with the snapshot first (what a running cluster does at that instant: its
    # controllers' first syncs are due now), so the cycle's evictions reach it in eviction order, as they
    # would reach a running one
    _run(plane, clock, 0.0)
    before_pods, _ = store.list(("", "Pod"))
    nodes, _ = store.list(("", "Node"))
    descheduler = Descheduler(
        store, policy, recorder=EventRecorder(store, component=COMPONENT), migrate=migration_factory(store)
    )
    result = descheduler.run_cycle(now.timestamp())
    if not result.evictions:
        plane.close()
        return plan_from_evictions((), nodes, before_pods, {}, requests=result.view.requests)
    added: list[Obj] = []

    def follow(ev: WatchEvent) -> None:
        if ev.type == "ADDED" and ev.object.get("kind") == "Pod":
            added.append(ev.object)

    unfollow = store.subscribe(follow)
    evicted = {(e.namespace, e.name) for e in result.evictions}
    grace = max(
        (
            _grace(p, policy.grace_period_seconds)
            for p in before_pods
            if (p["metadata"].get("namespace"), p["metadata"].get("name")) in evicted
        ),
        default=0.0,
    )
    end = grace + SETTLE_SECONDS
    if migration is not None and result.evictions:
        # a migration reserves first: its eviction waits for the Reservation (bounded by the job's TTL)
        end += migration.default_job_ttl
    _run(plane, clock, end)
    plane.close()
    unfollow()
    final_pods, _ = store.list(("", "Pod"))
    current = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in final_pods}
    by_owner: dict[str, list[Obj]] = {}
    for pod in added:
        uid = _controller_uid(pod)
        if uid is not None:
            by_owner.setdefault(uid, []).append(pod)
    originals = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in before_pods}
    replacements: dict[tuple[str, str], tuple[str, str, str | None] | None] = {}
    placed: list[Obj] = []
    for e in result.evictions:
        uid = _controller_uid(originals[(e.namespace, e.name)])
        queue = by_owner.get(uid or "", [])
        if not queue:
            replacements[(e.namespace, e.name)] = None
            continue
        new = queue.pop(0)
        key = (str(new["metadata"]["namespace"]), str(new["metadata"]["name"]))
        final = current.get(key, new)
        placed.append(final)
        node = (final.get("spec") or {}).get("nodeName")
        replacements[(e.namespace, e.name)] = (key[0], key[1], str(node) if node else None)
    # after: the cluster as it was, without the evicted pods, with their replacements where they landed
    # (whatever else the controllers and the scheduler did meanwhile is not the cycle's doing)
    return plan_from_evictions(
        result.evictions, nodes, before_pods, replacements, placed, result.view.requests
    )


def _run(plane: ControlPlane, clock: SimClock, until: float) -> None:
    """Run the control plane and every timer due by virtual time `until`."""
    while True:
        plane.run_until_idle()
        nxt = clock.peek()
        if nxt is None or nxt > until:
            return
        clock.step()


def _grace(pod: Obj, policy_grace: int | None) -> float:
    if policy_grace is not None:
        return float(policy_grace)
    value = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    return float(value) if value is not None else 30.0


_CLUSTER_KINDS: tuple[tuple[str, str], ...] = (
    ("", "Namespace"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("", "Node"),
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("", "Pod"),
    ("policy", "PodDisruptionBudget"),
    ("scheduling.koordinator.sh", "Reservation"),
    ("scheduling.x-k8s.io", "ElasticQuota"),
    ("scheduling.x-k8s.io", "PodGroup"),
)


def read_cluster(store: Store) -> list[Obj]:
    """The objects a cycle and its re-placing need, read from `store` (kinds it does not serve are skipped)."""
    out: list[Obj] = []
    for key in _CLUSTER_KINDS:
        try:
            items, _ = store.list(key)
        except NotFound:
            continue
        out.extend(items)
    return out


def run_live_cycle(
    store: Store,
    policy: Policy,
    *,
    now: datetime,
    dry_run: bool,
    config: SchedulerConfig | None = None,
    seed: int = 0,
) -> DeschedulingPlan:
    """One cycle against a live cluster: with `dry_run` on a copy of it (nothing written there), else for
    real; a real cycle reports no replacements (they come later, from the cluster's own controllers)."""
    if dry_run:
        return plan_descheduling(
            read_cluster(store), policy, now=now, config=config, seed=seed, validated=True
        )
    pods, _ = store.list(("", "Pod"))
    nodes, _ = store.list(("", "Node"))
    result = Descheduler(
        store, policy, recorder=EventRecorder(store, component=COMPONENT), migrate=migration_factory(store)
    ).run_cycle(now.timestamp())
    return plan_from_evictions(result.evictions, nodes, pods, {})
