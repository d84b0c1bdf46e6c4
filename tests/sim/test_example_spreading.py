"""examples/spreading through ``berth simulate``: zone spreading, pod anti-affinity and pod affinity."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from conftest import Run

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "spreading")
ZONE = {"a1": "zone-a", "a2": "zone-a", "b1": "zone-b", "b2": "zone-b", "c1": "zone-c", "c2": "zone-c"}


def _app_pods(run: Run, app: str) -> list[dict]:  # type: ignore[type-arg]
    return [o for o in run.objects() if o["kind"] == "Pod" and o["metadata"]["labels"].get("app") == app]


def test_spreading_example(simulate: Callable[..., Run]) -> None:
    run = simulate(None, paths=[EXAMPLE])
    assert run.exit_code == 0, run.stderr
    web = _app_pods(run, "web")
    assert Counter(ZONE[p["spec"]["nodeName"]] for p in web) == {"zone-a": 2, "zone-b": 2, "zone-c": 2}
    agents = _app_pods(run, "agent")
    placed = sorted(p["spec"].get("nodeName", "") for p in agents)
    assert placed == ["", "a1", "a2", "b1", "b2", "c1", "c2"]  # one per node, the seventh cannot go anywhere
    (pending,) = [p for p in agents if not p["spec"].get("nodeName")]
    condition = next(c for c in pending["status"]["conditions"] if c["type"] == "PodScheduled")
    assert condition["message"] == (
        "0/6 nodes are available: 6 node(s) didn't match pod anti-affinity rules. preemption: 0/6 nodes are "
        "available: 6 No preemption victims found for incoming pod."
    )
    # the cache is created before any web pod exists; it is retried as soon as a matching pod is bound
    # (kube's AssignedPodAdded): it moves to backoffQ, and the idle scheduler pops it from there at once
    # (SchedulerPopFromBackoffQ) instead of at the 5-minute flush
    cache = run.get("Pod", "cache")
    assert ZONE[cache["spec"]["nodeName"]] in {"zone-a", "zone-b", "zone-c"}
    reasons = [(e["reason"], e["message"]) for e in run.events("cache")]
    assert reasons[0] == (
        "FailedScheduling",
        "0/6 nodes are available: 6 node(s) didn't match pod affinity rules. preemption: 0/6 nodes are "
        "available: 6 Preemption is not helpful for scheduling.",
    )
    assert reasons[1][0] == "Scheduled"
    scheduled = next(e for e in run.events("cache") if e["reason"] == "Scheduled")
    assert scheduled["firstTimestamp"].endswith("00:00:00Z")
