"""PriorityClasses, PDBs, a Simulation run and its readers for the DefaultPreemption scenario tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from berth.scheduler.framework.config import SchedulerConfig
from berth.scheduler.framework.registry import Registry
from berth.sim.engine import Simulation
from berth.sim.scenario import Plan, Step
from builders import scheduler_config

Obj = dict[str, Any]
POD = ("", "Pod")
PDB = ("policy", "PodDisruptionBudget")


def pc(name: str, value: int) -> Obj:
    """A PriorityClass."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def classes(*values: int) -> list[Obj]:
    """PriorityClasses named ``p<value>`` for each value."""
    return [pc(f"p{v}", v) for v in values]


def pdb(name: str, match: Mapping[str, str], *, healthy: int, allowed: int) -> Obj:
    """A PodDisruptionBudget over ``healthy`` ready pods that allows ``allowed`` disruptions.

    spec.minAvailable agrees with the status (so a disruption controller computes the same); the API
    ignores status on create, so :func:`simulate` writes it through the status subresource.
    """
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": dict(match)}, "minAvailable": healthy - allowed},
        "status": {
            "disruptionsAllowed": allowed,
            "currentHealthy": healthy,
            "desiredHealthy": healthy - allowed,
            "expectedPods": healthy,
            "observedGeneration": 1,
        },
    }


def preemption_config(
    args: Mapping[str, Any] | None = None, extra: Mapping[str, Any] | None = None
) -> SchedulerConfig:
    """A KubeSchedulerConfiguration with DefaultPreemption ``args`` on the default profile."""
    return scheduler_config(
        plugin_args=None if args is None else {"DefaultPreemption": args}, **(extra or {})
    )


def simulate(
    timeline: Sequence[tuple[float, Sequence[Obj]]],
    *,
    until: float,
    config: Any = None,
    seed: int = 0,
    registry: Registry | None = None,
) -> Simulation:
    """Create each batch of objects at its time and run to ``until``.

    PodDisruptionBudgets get their given status written right after they are created.
    """
    sim = Simulation(config=config, seed=seed, registry=registry)
    steps = []
    for t, objs in timeline:
        steps.append(Step(t, [dict(o) for o in objs]))
        budgets = [o for o in objs if o["kind"] == "PodDisruptionBudget"]
        if budgets:
            sim.clock.call_at(t, lambda budgets=budgets: _write_pdb_status(sim, budgets), 0)
    sim.run(Plan(steps), until=until)
    assert not sim.step_errors, sim.step_errors
    return sim


def _write_pdb_status(sim: Simulation, budgets: Sequence[Obj]) -> None:
    for b in budgets:
        sim.store.patch(PDB, "default", b["metadata"]["name"], {"status": b["status"]}, subresource="status")


def get_pod(sim: Simulation, name: str) -> Obj | None:
    """The pod ``name`` (None when gone)."""
    for o in sim.store.list(POD, "default")[0]:
        if o["metadata"]["name"] == name:
            return o
    return None


def victims(sim: Simulation) -> list[str]:
    """Names of the pods the scheduler preempted (DisruptionTarget PreemptionByScheduler), sorted."""
    out = []
    for o in sim.store.list(POD, "default")[0]:
        for c in (o.get("status") or {}).get("conditions") or []:
            if c.get("type") == "DisruptionTarget" and c.get("reason") == "PreemptionByScheduler":
                out.append(o["metadata"]["name"])
    return sorted(out)


def nominated(sim: Simulation, name: str) -> str:
    """status.nominatedNodeName of pod ``name`` ("" when unset)."""
    p = get_pod(sim, name)
    assert p is not None
    return str((p.get("status") or {}).get("nominatedNodeName") or "")


def scheduled_message(sim: Simulation, name: str) -> str:
    """The PodScheduled condition message of pod ``name``."""
    p = get_pod(sim, name)
    assert p is not None
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled":
            return str(c.get("message") or "")
    return ""


def events(sim: Simulation, reason: str) -> list[tuple[str, str]]:
    """(involved object name, message) of the Events with ``reason``, in creation order."""
    sim.events.flush()
    evs = [o for o in sim.store.list(("", "Event"))[0] if o.get("reason") == reason]
    evs.sort(key=lambda e: int(e["metadata"].get("resourceVersion") or 0))
    return [(e["involvedObject"]["name"], e["message"]) for e in evs]
