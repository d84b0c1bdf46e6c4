"""Reading the Events a simulation recorded, for tests."""

from __future__ import annotations

from berth.sim.engine import Simulation

EVENT = ("", "Event")


def warning_events(sim: Simulation) -> list[tuple[str, str, str, str, int, str]]:
    """(kind, name, reason, message, count, component) of every Warning Event recorded so far."""
    sim.events.flush()
    return [
        (
            e["involvedObject"]["kind"],
            e["involvedObject"]["name"],
            e["reason"],
            e["message"],
            e["count"],
            e["source"]["component"],
        )
        for e in sim.store.list(EVENT)[0]
        if e["type"] == "Warning"
    ]
