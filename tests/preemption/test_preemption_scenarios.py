"""DefaultPreemption end to end: a Simulation with PriorityClasses, bound pods and one preemptor."""

from __future__ import annotations

from typing import Any

import pytest
from preemption_helpers import (
    classes,
    events,
    get_pod,
    node,
    nominated,
    pdb,
    pod,
    scheduled_message,
    simulate,
    victims,
)

from berth.sim.scenario import Plan

PRIOS = classes(-5, 0, 1, 2, 3, 4, 5, 10, 50, 100, 200, 1000)


def run_case(
    nodes: list[dict[str, Any]],
    early: list[dict[str, Any]],
    late: list[dict[str, Any]],
    preemptor: dict[str, Any],
    *,
    seed: int = 0,
) -> Any:
    """Nodes and ``early`` pods at t=0, ``late`` pods at t=10 (they start later), the preemptor at t=100."""
    return simulate(
        [(0.0, PRIOS + nodes + early), (10.0, late), (100.0, [preemptor])], until=100.0, seed=seed
    )


def test_seed_example_evicts_the_two_low_priority_pods() -> None:
    sim = run_case(
        [node("n1", cpu="8", memory="8Gi")],
        [
            pod("low-a", memory="2Gi", prio=10, on="n1"),
            pod("low-b", memory="2Gi", prio=10, on="n1"),
            pod("mid", memory="4Gi", prio=100, on="n1"),
        ],
        [],
        pod("big", memory="4Gi", prio=1000),
    )
    assert victims(sim) == ["low-a", "low-b"]
    assert nominated(sim, "big") == "n1"
    assert scheduled_message(sim, "big") == "0/1 nodes are available: 1 Insufficient memory."
    uid = get_pod(sim, "big")["metadata"]["uid"]  # type: ignore[index]
    assert events(sim, "Preempted") == [
        ("low-a", f"Preempted by pod {uid} on node n1"),
        ("low-b", f"Preempted by pod {uid} on node n1"),
    ]
    low_a = get_pod(sim, "low-a")
    assert low_a is not None and low_a["metadata"]["deletionTimestamp"] == "2024-01-01T00:02:10Z"
    cond = next(c for c in low_a["status"]["conditions"] if c["type"] == "DisruptionTarget")
    assert cond == {
        "type": "DisruptionTarget",
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": "2024-01-01T00:01:40Z",
        "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod",
    }
    # the victims terminate after their 30 s grace period; then the preemptor is bound to its node
    sim.run(Plan([]), until=200.0)
    assert get_pod(sim, "low-a") is None and get_pod(sim, "low-b") is None
    assert get_pod(sim, "big")["spec"]["nodeName"] == "n1"  # type: ignore[index]
    assert get_pod(sim, "mid") is not None


VICTIM_CASES = [
    pytest.param(
        [pod("p1", "1", prio=1, on="n1"), pod("p2", "1", prio=2, on="n1")],
        [pod("p3", "1", prio=3, on="n1"), pod("p4", "1", prio=4, on="n1")],
        pod("x", "2", prio=10),
        ["p1", "p2"],
        id="reprieve-highest-priority-first",
    ),
    pytest.param(
        [pod("a", "2", prio=5, on="n1"), pod("b", "1", prio=4, on="n1"), pod("c", "1", prio=3, on="n1")],
        [],
        pod("x", "2", prio=10),
        ["b", "c"],
        id="keeps-the-more-important-pod-even-if-more-victims",
    ),
    pytest.param(
        [pod("old", "2", prio=5, on="n1")],
        [pod("new", "2", prio=5, on="n1")],
        pod("x", "2", prio=10),
        ["new"],
        id="equal-priority-the-later-started-goes",
    ),
    pytest.param(
        [pod("old", "2", prio=5, on="n1")],
        [
            pod("new", "2", prio=5, on="n1", labels={"app": "db"}),
            pdb("db", {"app": "db"}, healthy=1, allowed=0),
        ],
        pod("x", "2", prio=10),
        ["old"],
        id="pdb-violating-pod-is-reprieved-first",
    ),
    pytest.param(
        [pod("old", "2", prio=5, on="n1")],
        [
            pod("new", "2", prio=5, on="n1", labels={"app": "db"}),
            pdb("db", {"app": "db"}, healthy=1, allowed=1),
        ],
        pod("x", "2", prio=10),
        ["new"],
        id="pdb-with-allowance-does-not-protect",
    ),
    pytest.param(
        [
            pod("same", "2", prio=10, on="n1"),
            pod("higher", "1", prio=50, on="n1"),
            pod("low", "1", prio=0, on="n1"),
        ],
        [],
        pod("x", "1", prio=10),
        ["low"],
        id="only-lower-priority-pods-are-victims",
    ),
    pytest.param(
        [pod("a", "1", prio=-5, on="n1"), pod("b", "2", prio=0, on="n1"), pod("c", "1", prio=0, on="n1")],
        [],
        pod("x", "3", prio=1),
        ["a", "b"],
        id="a-smaller-pod-is-reprieved-after-a-bigger-one-goes",
    ),
]


@pytest.mark.parametrize(("early", "late", "preemptor", "expected"), VICTIM_CASES)
def test_victims_on_one_node(
    early: list[dict[str, Any]], late: list[dict[str, Any]], preemptor: dict[str, Any], expected: list[str]
) -> None:
    sim = run_case([node("n1", cpu="4")], early, late, preemptor)
    assert victims(sim) == expected
    assert nominated(sim, preemptor["metadata"]["name"]) == "n1"


NODE_CASES = [
    pytest.param(
        [
            pod("a", "3", prio=1, on="n1", labels={"app": "db"}),
            pdb("db", {"app": "db"}, healthy=1, allowed=0),
        ],
        [pod("b", "3", prio=5, on="n2")],
        "n2",
        ["b"],
        id="fewest-pdb-violations",
    ),
    pytest.param(
        [pod("a", "3", prio=5, on="n1")],
        [pod("b", "3", prio=3, on="n2")],
        "n2",
        ["b"],
        id="lowest-highest-victim-priority",
    ),
    pytest.param(
        [pod("a1", "2", prio=3, on="n1"), pod("a2", "2", prio=3, on="n1")],
        [pod("b1", "2", prio=3, on="n2"), pod("b2", "2", prio=1, on="n2")],
        "n2",
        ["b1", "b2"],
        id="smallest-sum-of-priorities",
    ),
    pytest.param(
        [pod("a1", "2", prio=3, on="n1"), pod("a2", "2", prio=3, on="n1")],
        [pod("b", "4", prio=3, on="n2")],
        "n2",
        ["b"],
        id="fewest-victims",
    ),
    pytest.param(
        [pod("a", "3", prio=3, on="n1")],
        [pod("late", "3", prio=3, on="n2")],
        "n2",
        ["late"],
        id="latest-start-of-top-victims",
    ),
    pytest.param(
        [pod("a", "3", prio=3, on="n1"), pod("block", "4", prio=1000, on="n2")],
        [],
        "n1",
        ["a"],
        id="node-where-it-cannot-fit-is-no-candidate",
    ),
]


@pytest.mark.parametrize(("early", "late", "node_name", "expected"), NODE_CASES)
def test_node_choice(
    early: list[dict[str, Any]], late: list[dict[str, Any]], node_name: str, expected: list[str]
) -> None:
    for seed in (0, 1, 2):  # the dry run starts at a random node; the choice must not depend on it
        sim = run_case(
            [node("n1", cpu="4"), node("n2", cpu="4")], early, late, pod("x", "4", prio=100), seed=seed
        )
        assert nominated(sim, "x") == node_name
        assert victims(sim) == sorted(expected)


def test_all_tied_nodes_first_after_the_random_offset() -> None:
    chosen = set()
    for seed in range(8):
        sim = run_case(
            [node("n1", cpu="2"), node("n2", cpu="2")],
            [pod("a", "2", prio=1, on="n1"), pod("b", "2", prio=1, on="n2")],
            [],
            pod("x", "2", prio=100),
            seed=seed,
        )
        chosen.add(nominated(sim, "x"))
        assert len(victims(sim)) == 1
    assert chosen == {"n1", "n2"}
