"""DefaultPreemption's parts: args, PDB grouping, victim selection, node choice, messages, dry run."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from berth.scheduler.framework import ConfigError, CycleState, NodeStatusMap, NodeTable, PodInfo, Status
from berth.scheduler.framework.status import Code
from berth.scheduler.plugins.defaultpreemption import (
    Budget,
    Candidate,
    DefaultPreemption,
    DefaultPreemptionArgs,
    StartTimes,
    Victims,
    parse_default_preemption_args,
    pick_one_node,
    potential_rows,
    select_victims_on_node,
    split_by_pdb_violation,
)
from berth.scheduler.plugins.defaultpreemption.messages import fit_error
from berth.scheduler.plugins.defaultpreemption.plugin import terminating_by_preemption, with_condition
from builders import make_pod

T0 = 1_704_067_200.0  # 2024-01-01T00:00:00Z


def mk(
    name: str,
    prio: int = 0,
    cpu: int = 1,
    *,
    start: int | None = 0,
    labels: Mapping[str, str] | None = None,
    kind: str = "Pod",
    ns: str = "default",
) -> PodInfo:
    """The compact row notation of these tables: the PodInfo of a pod of priority ``prio`` asking ``cpu`` whole
    cpus, started ``start`` seconds after T0 (None: not started), of pseudo-pod ``kind``."""
    started = None if start is None else f"2024-01-01T00:{start // 60:02d}:{start % 60:02d}Z"
    pod = make_pod(name).ns(ns).uid(f"uid-{name}").label(labels).req(cpu=str(cpu)).priority(prio)
    info = pod.start_time(started).info()
    info.kind = kind
    return info


def start_times() -> StartTimes:
    return StartTimes(lambda: T0 + 3600)


def cpu_fit(capacity: int, pods: Sequence[PodInfo], preemptor: PodInfo) -> Any:
    """A fits_without function: the preemptor fits when the cpu of the remaining pods leaves room."""

    def fits(removed: Sequence[PodInfo]) -> Status:
        gone = {p.uid for p in removed}
        used = sum(p.requests.get("cpu", 0) for p in pods if p.uid not in gone)
        if used + preemptor.requests["cpu"] <= capacity * 1000:
            return Status()
        return Status(Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit")

    return fits


def budget(
    match: Mapping[str, str] | None, allowed: int, *, ns: str = "default", disrupted: Sequence[str] = ()
) -> Budget:
    spec: dict[str, Any] = {} if match is None else {"selector": {"matchLabels": dict(match)}}
    return Budget(
        {
            "metadata": {"name": "b", "namespace": ns},
            "spec": spec,
            "status": {"disruptionsAllowed": allowed, "disruptedPods": dict.fromkeys(disrupted, "t")},
        }
    )


# ----- args ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, DefaultPreemptionArgs(10, 100, False)),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 5},
            DefaultPreemptionArgs(0, 5, False),
        ),
        (
            {"minCandidateNodesPercentage": 100, "reservePreemptedResources": True},
            DefaultPreemptionArgs(100, 100, True),
        ),
    ],
)
def test_args(args: dict[str, Any], expected: DefaultPreemptionArgs) -> None:
    assert parse_default_preemption_args(args) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"minCandidateNodesPercentage": 101},
            "DefaultPreemption: minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
        ),
        (
            {"minCandidateNodesAbsolute": -1},
            "DefaultPreemption: minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
        ),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "DefaultPreemption: [minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
            "minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same "
            "time as minCandidateNodesPercentage]",
        ),
        (
            {"minCandidateNodesPercentage": "ten"},
            'DefaultPreemption: minCandidateNodesPercentage: Invalid value: "ten": must be an integer',
        ),
        (
            {"reservePreemptedResources": "yes"},
            'DefaultPreemption: reservePreemptedResources: Invalid value: "yes": must be a boolean',
        ),
        (
            {"minCandidates": 1},
            'decoding args for plugin DefaultPreemption: strict decoding error: unknown field "minCandidates"',
        ),
    ],
)
def test_bad_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_default_preemption_args(args)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("pct", "absolute", "nodes", "expected"),
    [
        (10, 100, 5000, 500),
        (10, 100, 500, 100),
        (10, 100, 50, 50),
        (50, 0, 7, 3),
        (0, 3, 10, 3),
        (100, 1, 4, 4),
    ],
)
def test_num_candidates(pct: int, absolute: int, nodes: int, expected: int) -> None:
    assert DefaultPreemptionArgs(pct, absolute).num_candidates(nodes) == expected


# ----- PDBs ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("budgets", "violating"),
    [
        ([], []),
        ([budget({"app": "db"}, 0)], ["a", "b"]),
        ([budget({"app": "db"}, 1)], ["b"]),
        ([budget({"app": "db"}, 2)], []),
        ([budget({"app": "db"}, 0, disrupted=["a"])], ["b"]),
        ([budget({"app": "db"}, 0, ns="other")], []),
        ([budget(None, 0)], []),  # a nil selector matches nothing
        ([budget({}, 0)], []),  # an empty selector matches nothing here
        ([budget({"app": "db"}, 1), budget({"tier": "x"}, 5)], ["b"]),
    ],
)
def test_split_by_pdb_violation(budgets: list[Budget], violating: list[str]) -> None:
    pods = [
        mk("a", labels={"app": "db", "tier": "x"}),
        mk("b", labels={"app": "db"}),
        mk("c", labels={"app": "web"}),
        mk("d"),
    ]
    v, nv = split_by_pdb_violation(pods, budgets)
    assert [p.name for p in v] == violating
    assert [p.name for p in nv] == [p.name for p in pods if p.name not in violating]


# ----- victims on one node -------------------------------------------------------------------------------

VICTIM_TABLE = [
    # (pods on a 4-cpu node, preemptor, budgets, victims, pdb violations, status)
    ([mk("a", 1), mk("b", 2), mk("c", 3), mk("d", 4)], mk("x", 10, 2), [], ["b", "a"], 0, ""),
    ([mk("a", 5, 2), mk("b", 4), mk("c", 3)], mk("x", 10, 2), [], ["b", "c"], 0, ""),
    ([mk("old", 5, 2, start=0), mk("new", 5, 2, start=30)], mk("x", 10, 2), [], ["new"], 0, ""),
    ([mk("new", 5, 2, start=30), mk("old", 5, 2, start=0)], mk("x", 10, 2), [], ["new"], 0, ""),
    ([mk("unstarted", 5, 2, start=None), mk("old", 5, 2, start=0)], mk("x", 10, 2), [], ["unstarted"], 0, ""),
    (
        [mk("old", 5, 2, start=0), mk("new", 5, 2, start=30, labels={"app": "db"})],
        mk("x", 10, 2),
        [budget({"app": "db"}, 0)],
        ["old"],
        0,
        "",
    ),
    (
        [mk("a", 5, 2, labels={"app": "db"}), mk("b", 4, 2, labels={"app": "db"})],
        mk("x", 10, 4),
        [budget({"app": "db"}, 0)],
        ["a", "b"],
        2,
        "",
    ),
    (
        [mk("a", 5, 2, labels={"app": "db"}), mk("b", 4, 2)],
        mk("x", 10, 3),
        [budget({"app": "db"}, 0)],
        ["a", "b"],
        1,
        "",
    ),
    ([mk("same", 10, 2), mk("higher", 50, 1), mk("low", 0, 1)], mk("x", 10, 1), [], ["low"], 0, ""),
    ([mk("high", 100, 3), mk("low", 0, 1)], mk("x", 50, 2), [], [], 0, "Insufficient cpu"),
    ([mk("high", 100, 4)], mk("x", 50, 2), [], [], 0, "No preemption victims found for incoming pod"),
    (
        [mk("r", 0, 4, kind="Reservation")],
        mk("x", 50, 2),
        [],
        [],
        0,
        "No preemption victims found for incoming pod",
    ),
]


@pytest.mark.parametrize(("pods", "preemptor", "budgets", "expected", "violations", "failure"), VICTIM_TABLE)
def test_select_victims_on_node(
    pods: list[PodInfo],
    preemptor: PodInfo,
    budgets: list[Budget],
    expected: list[str],
    violations: int,
    failure: str,
) -> None:
    victims, status = select_victims_on_node(
        preemptor, pods, cpu_fit(4, pods, preemptor), budgets, start_times()
    )
    if failure:
        assert victims is None and status.message == failure
        return
    assert status.is_success() and victims is not None
    assert [p.name for p in victims.pods] == expected
    assert victims.num_pdb_violations == violations


# ----- node choice ---------------------------------------------------------------------------------------


def cand(node: str, *pods: PodInfo, violations: int = 0) -> Candidate:
    return Candidate(node, Victims(tuple(pods), violations))


PICK_TABLE = [
    ([cand("n1", mk("a", 1), violations=1), cand("n2", mk("b", 9))], "n2"),
    ([cand("n1", mk("a", 5)), cand("n2", mk("b", 3))], "n2"),
    ([cand("n1", mk("a", 3), mk("b", 3)), cand("n2", mk("c", 3), mk("d", 1))], "n2"),
    ([cand("n1", mk("a", 3), mk("b", 1)), cand("n2", mk("c", 3))], "n2"),
    # equal sums with a priority of -2^31 (which adds 0): fewer victims wins
    ([cand("n1", mk("a", 3), mk("b", -(2**31))), cand("n2", mk("c", 3))], "n2"),
    ([cand("n1", mk("a", 3, start=10)), cand("n2", mk("c", 3, start=20))], "n2"),
    # the earliest start among the highest-priority victims counts, lower ones do not
    (
        [cand("n1", mk("a", 3, start=10), mk("b", 1, start=50)), cand("n2", mk("c", 3, start=5), mk("d", 1))],
        "n1",
    ),
    (
        [
            cand("n1", mk("a", 3, start=10), mk("a2", 3, start=40)),
            cand("n2", mk("c", 3, start=20), mk("d", 3, start=20)),
        ],
        "n2",
    ),
    ([cand("n1", mk("a", 3)), cand("n2", mk("c", 3)), cand("n3", mk("e", 3))], "n1"),
    ([cand("n3", mk("a", 3)), cand("n1", mk("c", 3))], "n3"),
    ([cand("solo", mk("a", 999), violations=3)], "solo"),
]


@pytest.mark.parametrize(("candidates", "expected"), PICK_TABLE)
def test_pick_one_node(candidates: list[Candidate], expected: str) -> None:
    best = pick_one_node(candidates, start_times())
    assert best is not None and best.node == expected


def test_pick_none() -> None:
    assert pick_one_node([], start_times()) is None


# ----- messages and small helpers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "statuses", "expected"),
    [
        (3, {}, "0/3 nodes are available: 3 Preemption is not helpful for scheduling."),
        (
            12,
            {
                f"n{i}": Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("No preemption victims found for incoming pod",)
                )
                for i in range(10)
            },
            "0/12 nodes are available: 10 No preemption victims found for incoming pod, "
            "2 Preemption is not helpful for scheduling.",
        ),
        (
            2,
            {
                "a": Status(Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory")),
                "b": Status(Code.UNSCHEDULABLE, ("Insufficient cpu",)),
            },
            "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.",
        ),
    ],
)
def test_fit_error(n: int, statuses: dict[str, Status], expected: str) -> None:
    absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Preemption is not helpful for scheduling",))
    assert fit_error(n, statuses, absent) == expected


def _table(n: int) -> NodeTable:
    table = NodeTable(capacity=4)
    for i in range(n):
        table.set_node(
            {"metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}}
        )
    return table


UNSCHED = Status(Code.UNSCHEDULABLE, ("Insufficient cpu",))
UNRES = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("taint",))


@pytest.mark.parametrize(
    ("statuses", "rows"),
    [
        (NodeStatusMap({"n3": UNSCHED, "n0": UNSCHED, "n1": UNRES, "gone": UNSCHED}), [0, 3]),
        (NodeStatusMap({}, absent=UNSCHED), [0, 1, 2, 3]),
        (NodeStatusMap({"n2": UNRES}, absent=UNSCHED), [0, 1, 3]),
        (NodeStatusMap({"n2": UNSCHED}, absent=UNRES), [2]),
        (NodeStatusMap({}), []),
    ],
)
def test_potential_rows(statuses: NodeStatusMap, rows: list[int]) -> None:
    assert potential_rows(_table(4), statuses) == rows


NEW = {
    "type": "DisruptionTarget",
    "status": "True",
    "lastProbeTime": None,
    "lastTransitionTime": "t2",
    "reason": "R",
    "message": "m",
}


@pytest.mark.parametrize(
    ("conditions", "changed", "transition"),
    [
        ([], True, "t2"),
        ([{**NEW, "lastTransitionTime": "t1"}], False, "t1"),
        ([{**NEW, "lastTransitionTime": "t1", "message": "old"}], True, "t1"),
        ([{**NEW, "lastTransitionTime": "t1", "status": "False"}], True, "t2"),
    ],
)
def test_with_condition(conditions: list[dict[str, Any]], changed: bool, transition: str) -> None:
    out, did = with_condition([{"type": "Ready", "status": "True"}, *conditions], dict(NEW))
    assert did is changed
    assert out[0] == {"type": "Ready", "status": "True"}
    assert out[1]["lastTransitionTime"] == transition and out[1]["message"] == "m"


@pytest.mark.parametrize(
    ("deleting", "conditions", "expected"),
    [
        (True, [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}], True),
        (False, [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}], False),
        (True, [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}], False),
        (True, [{"type": "DisruptionTarget", "status": "False", "reason": "PreemptionByScheduler"}], False),
        (True, [], False),
    ],
)
def test_terminating_by_preemption(deleting: bool, conditions: list[dict[str, Any]], expected: bool) -> None:
    meta: dict[str, Any] = {"name": "p"}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:30Z"
    assert terminating_by_preemption({"metadata": meta, "status": {"conditions": conditions}}) is expected


# ----- the dry run's offset and early stop ---------------------------------------------------------------


class _Client:
    def get(self, key: tuple[str, str], namespace: str, name: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "namespace": namespace}, "spec": {}, "status": {}}

    def list(self, key: tuple[str, str], namespace: str | None = None, **kw: Any) -> tuple[list[Any], str]:
        return [], "1"


class _Handle:
    """Just enough of a Handle for the dry run: a table, a cpu filter, an rng."""

    def __init__(self, table: NodeTable, seed: int) -> None:
        self.table = table
        self.rng = random.Random(seed)
        self.client = _Client()
        self.evaluated: list[str] = []

    def node_table(self) -> NodeTable:
        return self.table

    def dry_run_key(self, state: CycleState, pod: PodInfo, node: str) -> None:
        return None  # every node is evaluated on its own here

    def dry_run_keys(self, state: CycleState, pod: PodInfo, rows: Sequence[int]) -> list[None]:
        return [None] * len(rows)

    def filter_with_changes(
        self,
        state: CycleState,
        pod: PodInfo,
        node: str,
        removed: Sequence[PodInfo] = (),
    ) -> Status:
        row = self.table.index[node]
        if not self.evaluated or self.evaluated[-1] != node:
            self.evaluated.append(node)
        gone = {p.uid for p in removed}
        used = sum(p.requests["cpu"] for p in self.table.pods[row].values() if p.uid not in gone)
        ok = used + pod.requests["cpu"] <= 4000
        return Status() if ok else Status(Code.UNSCHEDULABLE, ("Insufficient cpu",))


@pytest.mark.parametrize(
    ("nodes", "pct", "absolute", "seed", "evaluated"),
    [(300, 10, 100, 0, 100), (300, 50, 10, 1, 150), (30, 10, 100, 2, 30), (8, 0, 3, 3, 3)],
)
def test_dry_run_offset_and_early_stop(
    nodes: int, pct: int, absolute: int, seed: int, evaluated: int
) -> None:
    table = _table(nodes)
    for i in range(nodes):
        table.add_pod(i, mk(f"low-{i}", 0, 4))
    handle = _Handle(table, seed)
    plugin = DefaultPreemption(DefaultPreemptionArgs(pct, absolute), handle)  # type: ignore[arg-type]
    preemptor = mk("x", 100, 2)
    offset = random.Random(seed).randrange(nodes)
    candidates, failed, errors = plugin.dry_run(
        CycleState(),
        preemptor,
        table,
        list(range(nodes)),
        [],
        offset,
        plugin.args.num_candidates(nodes),
        start_times(),
    )
    assert len(candidates) == evaluated and not failed and not errors
    assert [c.node for c in candidates] == [f"n{(offset + i) % nodes}" for i in range(evaluated)]
    assert handle.evaluated == [c.node for c in candidates]


class _KeyedHandle(_Handle):
    """A handle whose node keys are the free cpu of each node, so dry-run outcomes can be remembered."""

    def dry_run_keys(self, state: CycleState, pod: PodInfo, rows: Sequence[int]) -> list[Any]:  # type: ignore[override]
        return [4000 - sum(p.requests["cpu"] for p in self.table.pods[r].values()) for r in rows]


def _dry_run(plugin: DefaultPreemption, table: NodeTable, preemptor: PodInfo) -> list[Candidate]:
    candidates, failed, errors = plugin.dry_run(
        CycleState(), preemptor, table, list(range(table.size)), [], 0, table.size, start_times()
    )
    assert not failed and not errors
    return candidates


def test_dry_run_outcomes_are_remembered_until_the_nodes_pods_change() -> None:
    table = _table(3)
    for i, sizes in enumerate(([1, 1, 1, 1], [2, 2], [1, 3])):
        for j, cpu in enumerate(sizes):
            table.add_pod(i, mk(f"low-{i}-{j}", 0, cpu, start=j))
    handle = _KeyedHandle(table, 0)
    plugin = DefaultPreemption(DefaultPreemptionArgs(100, 100), handle)  # type: ignore[arg-type]
    preemptor = mk("x", 100, 2)
    first = _dry_run(plugin, table, preemptor)
    assert handle.evaluated == ["n0", "n1", "n2"]
    assert [(c.node, [p.name for p in c.victims.pods]) for c in first] == [
        ("n0", ["low-0-2", "low-0-3"]),
        ("n1", ["low-1-1"]),
        ("n2", ["low-2-1"]),
    ]
    handle.evaluated.clear()
    again = _dry_run(plugin, table, preemptor)
    assert handle.evaluated == [] and all(a is b for a, b in zip(again, first, strict=True))
    table.remove_pod(1, table.pods[1]["uid-low-1-0"])
    table.add_pod(1, mk("low-1-2", 0, 1, start=5))
    changed = _dry_run(plugin, table, preemptor)
    assert handle.evaluated == ["n1"]
    assert [(c.node, [p.name for p in c.victims.pods]) for c in changed][1] == ("n1", ["low-1-2"])
    assert pick_one_node(changed, start_times()) is changed[1]


def test_remembered_dry_run_outcomes_are_per_preemptor_request() -> None:
    # the keyed handle's node keys ignore the preemptor; its requests tell the outcomes apart
    table = _table(2)
    for i, sizes in enumerate(([1, 1, 1, 1], [2, 2])):
        for j, cpu in enumerate(sizes):
            table.add_pod(i, mk(f"low-{i}-{j}", 0, cpu, start=j))
    plugin = DefaultPreemption(DefaultPreemptionArgs(100, 100), _KeyedHandle(table, 0))  # type: ignore[arg-type]
    _dry_run(plugin, table, mk("small", 100, 1))
    big = [(c.node, [p.name for p in c.victims.pods]) for c in _dry_run(plugin, table, mk("big", 100, 3))]
    assert big == [("n0", ["low-0-1", "low-0-2", "low-0-3"]), ("n1", ["low-1-0", "low-1-1"])]
