"""Properties of the descheduler (issue 12, "Checked by"), on random clusters and policies:

1. No eviction breaks a PodDisruptionBudget: in every cycle, the evictions that debit a budget (kube's
   eviction rules: a Running pod not being deleted that is Ready, or not Ready while the budget is not
   ``AlwaysAllow`` and not already ``currentHealthy >= desiredHealthy > 0``) number at most the budget's
   ``status.disruptionsAllowed`` read just before the cycle, and the Ready pods evicted never take the budget
   below its desired healthy count (computed here from the spec, independently of the status).
2. The policy's limits are never exceeded: per cycle, summed over every profile, the pods evicted from each
   node, from each namespace and in all stay within ``maxNoOfPodsToEvictPerNode`` / ``PerNamespace`` /
   ``Total``, and each profile's LowNodeUtilization evicts at most its ``evictionLimits.node`` per node.
   In both, what the cycle reports as evicted is exactly what the store shows: the pods that were not being
   deleted before the cycle and are being deleted (or gone) after it.
3. The re-placing dry run predicts the real cycle: `plan_descheduling` on a snapshot equals `berth simulate`
   on the same objects with the same seed, whose first cycle runs at the snapshot's "now": the same
   evictions in the same order, each replacement with the same name on the same node, the same utilisation
   after.

Each example is derandomized (no example database), so the runs are reproducible.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from property_strategies import (
    ALL_STRATEGIES,
    BALANCING,
    PDB,
    POD,
    SETTLE_SECONDS,
    Cluster,
    PodSet,
    Snapshot,
    Workload,
    app_name,
    budget_object,
    clusters,
    load,
    node_object,
    policies,
    settle_budgets,
    snapshot_objects,
    snapshots,
    start,
    workload_object,
)

from berth.api.conditions import is_pod_ready
from berth.api.labels import compile_label_selector
from berth.api.watch import WatchEvent
from berth.descheduler.cycle import CycleResult
from berth.descheduler.evictor import Eviction
from berth.descheduler.policy import Policy
from berth.sim.deschedule import SETTLE_SECONDS as PLAN_SETTLE_SECONDS
from berth.sim.deschedule import node_usage, plan_descheduling
from berth.sim.engine import Simulation
from berth.sim.scenario import Plan, Step
from berth.store.memory import DEFAULT_EPOCH

Obj = dict[str, Any]
Key = tuple[str, str]


def examples(count: int) -> settings:
    """Hypothesis settings for `count` reproducible examples: derandomized, no example database, no
    deadline (a simulated run takes tens of milliseconds), no explain phase."""
    return settings(
        max_examples=count,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    )


def key(obj: Mapping[str, Any]) -> Key:
    """(namespace, name) of an object."""
    return (str(obj["metadata"].get("namespace") or ""), str(obj["metadata"]["name"]))


def terminating(pod: Mapping[str, Any]) -> bool:
    """The pod is being deleted."""
    return bool(pod["metadata"].get("deletionTimestamp"))


def phase(pod: Mapping[str, Any]) -> str:
    """The pod's phase (Pending when unset, as the eviction API reads it)."""
    return str((pod.get("status") or {}).get("phase") or "Pending")


# ----- one simulated run with every cycle recorded --------------------------------------------------------


@dataclass(frozen=True)
class Cycle:
    """One descheduling cycle of a simulation: the pods and budgets just before it, what it reported, and
    the pods it took away according to the store (not being deleted before, being deleted or gone after)."""

    pods: Mapping[Key, Obj]
    budgets: tuple[Obj, ...]
    evictions: tuple[Eviction, ...]
    disrupted: frozenset[Key]


def run_cycles(cluster: Cluster, policy: Policy, interval: float, cycles: int) -> list[Cycle]:
    """Start `cluster`, then run the simulation with `policy` every `interval` seconds for `cycles` cycles,
    recording each cycle (the simulation's own cycle, wrapped)."""
    sim = start(cluster)
    begin = sim.clock.now()
    sim.enable_descheduler(policy, interval)
    descheduler = sim.descheduler
    assert descheduler is not None
    run_cycle = descheduler.run_cycle
    recorded: list[Cycle] = []

    def recording(now: float) -> CycleResult:
        before = {key(p): p for p in sim.store.list(POD)[0]}
        budgets = tuple(sim.store.list(PDB)[0])
        result = run_cycle(now)
        after = {key(p): p for p in sim.store.list(POD)[0]}
        disrupted = frozenset(
            k for k, p in before.items() if not terminating(p) and (k not in after or terminating(after[k]))
        )
        recorded.append(Cycle(before, budgets, result.evictions, disrupted))
        return result

    descheduler.run_cycle = recording  # type: ignore[method-assign]
    sim.advance(begin + interval * cycles)
    assert len(recorded) == cycles
    return recorded


def check_reported(cycle: Cycle) -> None:
    """The cycle's reported evictions are distinct and are exactly the pods it took away."""
    count = len(cycle.evictions)
    event(f"evictions in a cycle: {'0' if not count else '1-3' if count <= 3 else '4+'}")
    reported = [(e.namespace, e.name) for e in cycle.evictions]
    assert len(set(reported)) == len(reported)
    assert set(reported) == cycle.disrupted
    for e in cycle.evictions:
        assert e.node == cycle.pods[(e.namespace, e.name)]["spec"].get("nodeName")


# ----- 1. budgets ------------------------------------------------------------------------------------------


def desired_healthy(spec: Mapping[str, Any], replicas: int) -> int:
    """The healthy pods a budget demands of a workload of `replicas` (kube's rules: an int minAvailable as
    is; a percentage of the controller's scale, rounded up; maxUnavailable subtracted from the scale)."""
    if "maxUnavailable" in spec:
        value = spec["maxUnavailable"]
        unavailable = math.ceil(int(value[:-1]) * replicas / 100) if isinstance(value, str) else int(value)
        return max(0, replicas - unavailable)
    value = spec["minAvailable"]
    return math.ceil(int(value[:-1]) * replicas / 100) if isinstance(value, str) else int(value)


def debits(pod: Mapping[str, Any], budget: Mapping[str, Any]) -> bool:
    """Whether evicting `pod` debits `budget` (the only budget matching it), as the eviction API decides:
    terminal, Pending and terminating pods never do; a Ready pod always does; a pod that is not Ready does
    unless the budget is AlwaysAllow or already has ``currentHealthy >= desiredHealthy > 0``."""
    if phase(pod) in ("Succeeded", "Failed", "Pending") or terminating(pod):
        return False
    if is_pod_ready(pod):
        return True
    status = budget.get("status") or {}
    current, desired = int(status.get("currentHealthy") or 0), int(status.get("desiredHealthy") or 0)
    always = (budget.get("spec") or {}).get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
    return not (always or current >= desired > 0)


def check_budgets(cycle: Cycle, replicas: Mapping[Key, int]) -> None:
    """Property 1 over one cycle (`replicas`: each budget's workload size, by the budget's key)."""
    for budget in cycle.budgets:
        selector = compile_label_selector(budget["spec"]["selector"])
        namespace = key(budget)[0]
        covered = [
            p
            for k, p in cycle.pods.items()
            if k[0] == namespace and selector.matches(p["metadata"].get("labels") or {})
        ]
        evicted = [p for p in covered if key(p) in cycle.disrupted]
        status = budget.get("status") or {}
        allowed = int(status.get("disruptionsAllowed") or 0)
        debited = [p for p in evicted if debits(p, budget)]
        healthy = [p for p in evicted if is_pod_ready(p) and phase(p) == "Running"]
        assert len(debited) <= allowed, (budget["metadata"]["name"], status, [key(p) for p in debited])
        assert len(healthy) <= allowed
        desired = desired_healthy(budget["spec"], replicas[key(budget)])
        assert int(status.get("desiredHealthy") or 0) == desired
        assert len(healthy) <= max(0, int(status.get("currentHealthy") or 0) - desired)
        if debited and len(debited) == allowed:
            event("a budget's allowance used up")
        if len(evicted) > len(debited):
            event("a budget's pod evicted without a debit")


@examples(100)
@given(
    cluster=clusters(),
    doc=policies(),
    interval=st.sampled_from([20.0, 60.0]),
    cycles=st.integers(1, 3),
)
def test_no_eviction_breaks_a_pod_disruption_budget(
    cluster: Cluster, doc: Obj, interval: float, cycles: int
) -> None:
    replicas = {
        key(pdb): w.replicas
        for i, w in enumerate(cluster.workloads)
        if (pdb := budget_object(i, w)) is not None
    }
    for cycle in run_cycles(cluster, load(doc), interval, cycles):
        check_reported(cycle)
        check_budgets(cycle, replicas)


# ----- 2. limits -------------------------------------------------------------------------------------------


def check_limits(cycle: Cycle, policy: Policy) -> None:
    """Property 2 over one cycle."""
    nodes = Counter(str(cycle.pods[k]["spec"].get("nodeName")) for k in cycle.disrupted)
    namespaces = Counter(k[0] for k in cycle.disrupted)
    limits = policy.limits
    if limits.per_node is not None:
        assert max(nodes.values(), default=0) <= limits.per_node, nodes
        if limits.per_node in nodes.values():
            event("per-node limit reached")
    if limits.per_namespace is not None:
        assert max(namespaces.values(), default=0) <= limits.per_namespace, namespaces
        if limits.per_namespace in namespaces.values():
            event("per-namespace limit reached")
    if limits.total is not None:
        assert len(cycle.disrupted) <= limits.total
        if len(cycle.disrupted) == limits.total:
            event("total limit reached")
    for profile in policy.profiles:
        args = profile.args.get("LowNodeUtilization")
        if args is None or args.eviction_limits is None or args.eviction_limits.node is None:
            continue
        by_lnu = Counter(
            e.node for e in cycle.evictions if e.profile == profile.name and e.plugin == "LowNodeUtilization"
        )
        assert max(by_lnu.values(), default=0) <= args.eviction_limits.node, (profile.name, by_lnu)
        if args.eviction_limits.node in by_lnu.values():
            event("LowNodeUtilization evictionLimits.node reached")


@st.composite
def limited_policies(draw: st.DrawFn) -> Obj:
    """A policy from `policies` (every other one balancing only: LowNodeUtilization and RemoveDuplicates,
    which the deschedule strategies would otherwise starve of the limits) with each of the three limits
    set more often than not."""
    doc = draw(policies(draw(st.sampled_from([ALL_STRATEGIES, BALANCING]))))
    for field, top in (
        ("maxNoOfPodsToEvictPerNode", 3),
        ("maxNoOfPodsToEvictPerNamespace", 4),
        ("maxNoOfPodsToEvictTotal", 6),
    ):
        if field not in doc and draw(st.integers(0, 3)):
            doc[field] = draw(st.integers(0, top) if draw(st.integers(0, 5)) == 0 else st.integers(1, top))
    return doc


@examples(100)
@given(
    cluster=clusters(),
    doc=limited_policies(),
    interval=st.sampled_from([20.0, 60.0]),
    cycles=st.integers(1, 2),
)
def test_the_policy_limits_are_never_exceeded(
    cluster: Cluster, doc: Obj, interval: float, cycles: int
) -> None:
    policy = load(doc)
    for cycle in run_cycles(cluster, policy, interval, cycles):
        check_reported(cycle)
        check_limits(cycle, policy)


# ----- 3. the dry run --------------------------------------------------------------------------------------

INTERVAL = 300.0
"""The simulation's descheduling interval: its first cycle runs at the snapshot's "now"."""


def replacements(
    evictions: list[Eviction], originals: Mapping[Key, Obj], added: list[Obj], final: Mapping[Key, Obj]
) -> list[tuple[str, str, str | None] | None]:
    """For each eviction, in order, the pod its controller created next (the replacements of one
    controller taken in creation order) and the node it is on at the end, or None when no controller
    recreated it."""

    def controller(pod: Mapping[str, Any]) -> str | None:
        for ref in pod["metadata"].get("ownerReferences") or ():
            if ref.get("controller"):
                return str(ref["uid"])
        return None

    queues: dict[str, list[Obj]] = {}
    for pod in added:
        uid = controller(pod)
        if uid is not None:
            queues.setdefault(uid, []).append(pod)
    out: list[tuple[str, str, str | None] | None] = []
    for e in evictions:
        queue = queues.get(controller(originals[(e.namespace, e.name)]) or "", [])
        if not queue:
            out.append(None)
            continue
        k = key(queue.pop(0))
        node = final[k]["spec"].get("nodeName") if k in final else None
        out.append((k[0], k[1], str(node) if node else None))
    return out


def simulate(objects: list[Obj], policy: Policy, seed: int) -> tuple[Simulation, list[Eviction], list[Obj]]:
    """`berth simulate` of `objects` with `policy` every `INTERVAL` (seed `seed`), run until the first cycle's
    evicted pods are gone and the control plane has had `PLAN_SETTLE_SECONDS` more, as the dry run runs; the
    evictions and every pod created after the objects were loaded, in creation order."""
    sim = Simulation(seed=seed)
    sim.enable_descheduler(policy, INTERVAL)
    loaded = {key(o) for o in objects if o["kind"] == "Pod"}
    added: list[Obj] = []

    def follow(ev: WatchEvent) -> None:
        if ev.type == "ADDED" and ev.object.get("kind") == "Pod" and key(ev.object) not in loaded:
            added.append(ev.object)

    sim.store.subscribe(follow)
    sim.run(Plan([Step(0.0, copy.deepcopy(objects))]), until=INTERVAL)
    evictions = [e for _, e in sim.descheduled]
    grace = 0.0
    if evictions:
        grace = float(policy.grace_period_seconds) if policy.grace_period_seconds is not None else 30.0
    sim.advance(INTERVAL + grace + PLAN_SETTLE_SECONDS)
    return sim, evictions, added


@examples(60)
@given(snap=snapshots(), doc=policies(), seed=st.integers(0, 3))
def test_the_dry_run_predicts_the_simulated_cycle(snap: Snapshot, doc: Obj, seed: int) -> None:
    now = DEFAULT_EPOCH + timedelta(seconds=INTERVAL)
    objects = settle_budgets(snapshot_objects(snap, now))
    policy = load(doc)
    plan = plan_descheduling(copy.deepcopy(objects), policy, now=now, seed=seed)

    sim, evictions, added = simulate(objects, policy, seed)
    assert [(e.namespace, e.name, e.node, e.plugin) for e in plan.evictions] == [
        (e.namespace, e.name, e.node, e.plugin) for e in evictions
    ]
    originals = {key(o): o for o in objects if o["kind"] == "Pod"}
    final_pods = sim.store.list(POD)[0]
    final = {key(p): p for p in final_pods}
    real = replacements(evictions, originals, added, final)
    assert [e.replacement for e in plan.evictions] == real
    event(f"dry run evictions: {'0' if not evictions else '1-3' if len(evictions) <= 3 else '4+'}")
    for e, r in zip(evictions, real, strict=True):
        event(
            "a replacement stays Pending"
            if r is not None and r[2] is None
            else "a replacement lands on another node"
            if r is not None and r[2] != e.node
            else "a replacement lands on the same node"
        )
    nodes = sim.store.list(("", "Node"))[0]
    after = node_usage(nodes, final_pods, plan.resources)
    assert {n.name: dict(n.after) for n in plan.nodes} == after


# ----- regressions -----------------------------------------------------------------------------------------


def test_a_pod_under_two_budgets_is_skipped_and_the_cycle_goes_on() -> None:
    """Upstream's PodEvictor returns any eviction error to the strategy, which logs it and goes on to the
    next pod; the eviction API answers 500 for a pod matched by two budgets, so app0's pods stay and app1's
    (no budget) are still evicted, in the same cycle."""
    sim = Simulation(seed=0)
    for i in range(2):
        sim.store.create(node_object(i, 4))
    for i in range(2):
        sim.store.create(workload_object(i, Workload("Deployment", "default", 2, 100, None, False)))
    for name, bound in (("a", {"minAvailable": 1}), ("b", {"maxUnavailable": 1})):
        sim.store.create(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": name},
                "spec": {"selector": {"matchLabels": {"app": app_name(0)}}, **bound},
            }
        )
    sim.advance(SETTLE_SECONDS)
    app1 = sorted(
        p["metadata"]["name"] for p in sim.store.list(POD)[0] if p["metadata"]["labels"]["app"] == "app1"
    )
    policy = load(
        {
            "apiVersion": "descheduler/v1alpha2",
            "kind": "DeschedulerPolicy",
            "profiles": [
                {
                    "name": "p",
                    "pluginConfig": [{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 5}}],
                    "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}},
                }
            ],
        }
    )
    sim.enable_descheduler(policy, 60.0)
    sim.advance(70.0)
    assert sorted(e.name for _, e in sim.descheduled) == app1


DRY_RUN_ORDER = Snapshot(
    node_cpus=(2, 1),
    tainted=(False, False),
    sets=(
        PodSet("default", 1000, nodes=(0,), ages=(400,), not_ready=(), bound=None),
        PodSet("default", 1000, nodes=(0,), ages=(4000,), not_ready=(), bound=None),
    ),
)
"""n0 (2 cpu) holds rs0-0 (400 s old) and rs1-0 (4000 s old), 1 cpu each; n1 (1 cpu) is empty."""


def test_the_dry_run_re_places_in_eviction_order() -> None:
    """PodLifeTime (60 s) evicts rs1-0 then rs0-0 (oldest first). A running control plane sees the evictions
    in that order: rs1's replacement is created first and takes n1's single free cpu, rs0's waits for n0 to
    empty. The dry run must predict the same (its controllers must not see the evictions in name order)."""
    now = DEFAULT_EPOCH + timedelta(seconds=INTERVAL)
    objects = settle_budgets(snapshot_objects(DRY_RUN_ORDER, now))
    policy = load(
        {
            "apiVersion": "descheduler/v1alpha2",
            "kind": "DeschedulerPolicy",
            "profiles": [
                {
                    "name": "p",
                    "pluginConfig": [{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 60}}],
                    "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}},
                }
            ],
        }
    )
    sim, evictions, added = simulate(objects, policy, 0)
    final = {key(p): p for p in sim.store.list(POD)[0]}
    originals = {key(o): o for o in objects if o["kind"] == "Pod"}
    assert [(e.name, e.node) for e in evictions] == [("rs1-0", "n0"), ("rs0-0", "n0")]
    real = replacements(evictions, originals, added, final)
    assert [(r[1][:4], r[2]) for r in real if r is not None] == [("rs1-", "n1"), ("rs0-", "n0")]
    plan = plan_descheduling(copy.deepcopy(objects), policy, now=now, seed=0)
    assert [(e.name, e.replacement) for e in plan.evictions] == [
        (e.name, r) for e, r in zip(evictions, real, strict=True)
    ]
