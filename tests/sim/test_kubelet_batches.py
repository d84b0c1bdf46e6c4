"""The simulated kubelet acts on every pod due at the same instant before the scheduler reacts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "preemption"))

from preemption_helpers import simulate

from builders import make_node, make_pod


def _running(name: str) -> dict[str, Any]:
    return make_pod(name).req(cpu="1").annotate({"berth.dev/duration": "10s"}).obj()


def test_pods_finishing_together_free_their_room_at_once() -> None:
    # two 1-CPU pods finish at t=10 on a 2-CPU node; the 2-CPU pod waiting since t=1 is retried once, after
    # both are gone, and binds at t=10
    sim = simulate(
        [
            (0, [make_node("n").capacity(cpu="2").obj(), _running("a"), _running("b")]),
            (1, [make_pod("big").req(cpu="2").obj()]),
        ],
        until=20,
    )
    assert sim.scheduler.stats.attempts == 4  # a, b, big failing at t=1, big binding at t=10
    sim.events.flush()
    scheduled = [
        e["firstTimestamp"]
        for e in sim.store.list(("", "Event"))[0]
        if e["reason"] == "Scheduled" and e["involvedObject"]["name"] == "big"
    ]
    assert scheduled == ["2024-01-01T00:00:10Z"]
