"""The JSON summary of a simulation run (``berth simulate --report``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from berth.sim.engine import RunResult


def build_report(result: RunResult, objects: Sequence[Mapping[str, Any]], *, seed: int) -> dict[str, Any]:
    """Counts of pods by outcome, scheduling attempts, virtual and wall time, throughput."""
    pods = [o for o in objects if o.get("kind") == "Pod"]
    bound = sum(1 for p in pods if (p.get("spec") or {}).get("nodeName"))
    phases: dict[str, int] = {}
    for p in pods:
        ph = (p.get("status") or {}).get("phase") or "Pending"
        phases[ph] = phases.get(ph, 0) + 1
    pending = len(pods) - bound
    loop = result.scheduling_seconds
    return {
        "seed": seed,
        "virtualSeconds": result.virtual_seconds,
        "pods": {
            "total": len(pods),
            "scheduled": result.scheduled,
            "bound": bound,
            "unschedulable": pending,
            "byPhase": dict(sorted(phases.items())),
        },
        "schedulingAttempts": result.attempts,
        "failedAttempts": result.unschedulable_attempts,
        "errorAttempts": result.errors,
        "wallSeconds": round(result.wall_seconds, 6),
        "schedulingLoopSeconds": round(loop, 6),
        "podsScheduledPerWallSecond": round(result.scheduled / loop, 1) if loop > 0 else None,
    }
