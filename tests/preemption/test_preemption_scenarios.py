"""DefaultPreemption end to end: a Simulation with PriorityClasses, bound pods and one preemptor."""

from __future__ import annotations

from typing import Any

import pytest
from preemption_helpers import classes, events, get_pod, nominated, pdb, scheduled_message, simulate, victims

from berth.sim.scenario import Plan
from builders import make_node, make_pod

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
        [make_node("n1").capacity(cpu="8", memory="8Gi").obj()],
        [
            make_pod("low-a").req(memory="2Gi").priority_class("p10").node("n1").obj(),
            make_pod("low-b").req(memory="2Gi").priority_class("p10").node("n1").obj(),
            make_pod("mid").req(memory="4Gi").priority_class("p100").node("n1").obj(),
        ],
        [],
        make_pod("big").req(memory="4Gi").priority_class("p1000").obj(),
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
        [
            make_pod("p1").req(cpu="1").priority_class("p1").node("n1").obj(),
            make_pod("p2").req(cpu="1").priority_class("p2").node("n1").obj(),
        ],
        [
            make_pod("p3").req(cpu="1").priority_class("p3").node("n1").obj(),
            make_pod("p4").req(cpu="1").priority_class("p4").node("n1").obj(),
        ],
        make_pod("x").req(cpu="2").priority_class("p10").obj(),
        ["p1", "p2"],
        id="reprieve-highest-priority-first",
    ),
    pytest.param(
        [
            make_pod("a").req(cpu="2").priority_class("p5").node("n1").obj(),
            make_pod("b").req(cpu="1").priority_class("p4").node("n1").obj(),
            make_pod("c").req(cpu="1").priority_class("p3").node("n1").obj(),
        ],
        [],
        make_pod("x").req(cpu="2").priority_class("p10").obj(),
        ["b", "c"],
        id="keeps-the-more-important-pod-even-if-more-victims",
    ),
    pytest.param(
        [make_pod("old").req(cpu="2").priority_class("p5").node("n1").obj()],
        [make_pod("new").req(cpu="2").priority_class("p5").node("n1").obj()],
        make_pod("x").req(cpu="2").priority_class("p10").obj(),
        ["new"],
        id="equal-priority-the-later-started-goes",
    ),
    pytest.param(
        [make_pod("old").req(cpu="2").priority_class("p5").node("n1").obj()],
        [
            make_pod("new").req(cpu="2").label(app="db").priority_class("p5").node("n1").obj(),
            pdb("db", {"app": "db"}, healthy=1, allowed=0),
        ],
        make_pod("x").req(cpu="2").priority_class("p10").obj(),
        ["old"],
        id="pdb-violating-pod-is-reprieved-first",
    ),
    pytest.param(
        [make_pod("old").req(cpu="2").priority_class("p5").node("n1").obj()],
        [
            make_pod("new").req(cpu="2").label(app="db").priority_class("p5").node("n1").obj(),
            pdb("db", {"app": "db"}, healthy=1, allowed=1),
        ],
        make_pod("x").req(cpu="2").priority_class("p10").obj(),
        ["new"],
        id="pdb-with-allowance-does-not-protect",
    ),
    pytest.param(
        [
            make_pod("same").req(cpu="2").priority_class("p10").node("n1").obj(),
            make_pod("higher").req(cpu="1").priority_class("p50").node("n1").obj(),
            make_pod("low").req(cpu="1").priority_class("p0").node("n1").obj(),
        ],
        [],
        make_pod("x").req(cpu="1").priority_class("p10").obj(),
        ["low"],
        id="only-lower-priority-pods-are-victims",
    ),
    pytest.param(
        [
            make_pod("a").req(cpu="1").priority_class("p-5").node("n1").obj(),
            make_pod("b").req(cpu="2").priority_class("p0").node("n1").obj(),
            make_pod("c").req(cpu="1").priority_class("p0").node("n1").obj(),
        ],
        [],
        make_pod("x").req(cpu="3").priority_class("p1").obj(),
        ["a", "b"],
        id="a-smaller-pod-is-reprieved-after-a-bigger-one-goes",
    ),
]


@pytest.mark.parametrize(("early", "late", "preemptor", "expected"), VICTIM_CASES)
def test_victims_on_one_node(
    early: list[dict[str, Any]], late: list[dict[str, Any]], preemptor: dict[str, Any], expected: list[str]
) -> None:
    sim = run_case([make_node("n1").capacity(cpu="4").obj()], early, late, preemptor)
    assert victims(sim) == expected
    assert nominated(sim, preemptor["metadata"]["name"]) == "n1"


NODE_CASES = [
    pytest.param(
        [
            make_pod("a").req(cpu="3").label(app="db").priority_class("p1").node("n1").obj(),
            pdb("db", {"app": "db"}, healthy=1, allowed=0),
        ],
        [make_pod("b").req(cpu="3").priority_class("p5").node("n2").obj()],
        "n2",
        ["b"],
        id="fewest-pdb-violations",
    ),
    pytest.param(
        [make_pod("a").req(cpu="3").priority_class("p5").node("n1").obj()],
        [make_pod("b").req(cpu="3").priority_class("p3").node("n2").obj()],
        "n2",
        ["b"],
        id="lowest-highest-victim-priority",
    ),
    pytest.param(
        [
            make_pod("a1").req(cpu="2").priority_class("p3").node("n1").obj(),
            make_pod("a2").req(cpu="2").priority_class("p3").node("n1").obj(),
        ],
        [
            make_pod("b1").req(cpu="2").priority_class("p3").node("n2").obj(),
            make_pod("b2").req(cpu="2").priority_class("p1").node("n2").obj(),
        ],
        "n2",
        ["b1", "b2"],
        id="smallest-sum-of-priorities",
    ),
    pytest.param(
        [
            make_pod("a1").req(cpu="2").priority_class("p3").node("n1").obj(),
            make_pod("a2").req(cpu="2").priority_class("p3").node("n1").obj(),
        ],
        [make_pod("b").req(cpu="4").priority_class("p3").node("n2").obj()],
        "n2",
        ["b"],
        id="fewest-victims",
    ),
    pytest.param(
        [make_pod("a").req(cpu="3").priority_class("p3").node("n1").obj()],
        [make_pod("late").req(cpu="3").priority_class("p3").node("n2").obj()],
        "n2",
        ["late"],
        id="latest-start-of-top-victims",
    ),
    pytest.param(
        [
            make_pod("a").req(cpu="3").priority_class("p3").node("n1").obj(),
            make_pod("block").req(cpu="4").priority_class("p1000").node("n2").obj(),
        ],
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
            [make_node("n1").capacity(cpu="4").obj(), make_node("n2").capacity(cpu="4").obj()],
            early,
            late,
            make_pod("x").req(cpu="4").priority_class("p100").obj(),
            seed=seed,
        )
        assert nominated(sim, "x") == node_name
        assert victims(sim) == sorted(expected)


def test_all_tied_nodes_first_after_the_random_offset() -> None:
    chosen = set()
    for seed in range(8):
        sim = run_case(
            [make_node("n1").capacity(cpu="2").obj(), make_node("n2").capacity(cpu="2").obj()],
            [
                make_pod("a").req(cpu="2").priority_class("p1").node("n1").obj(),
                make_pod("b").req(cpu="2").priority_class("p1").node("n2").obj(),
            ],
            [],
            make_pod("x").req(cpu="2").priority_class("p100").obj(),
            seed=seed,
        )
        chosen.add(nominated(sim, "x"))
        assert len(victims(sim)) == 1
    assert chosen == {"n1", "n2"}
