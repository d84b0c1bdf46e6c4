"""Plugin args, the system default constraints (selector from the owning ReplicaSet) and the count index."""

from __future__ import annotations

from typing import Any

import pytest
from pts_helpers import plugin, run_score, spread

from berth.scheduler.framework import Code, ConfigError, NodeTable, PodInfo
from berth.scheduler.plugins.podtopologyspread import parse_args
from berth.scheduler.plugins.podtopologyspread.counts import CountIndex
from builders import make_node, make_pod, make_table

HOST = "kubernetes.io/hostname"
RS = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "web-1", "namespace": "default"},
    "spec": {"selector": {"matchLabels": {"app": "web"}}},
}


ZONE = "topology.kubernetes.io/zone"


def web(name: str, node_name: str | None = None) -> PodInfo:
    """A pod of ReplicaSet web-1 (on ``node_name`` when given)."""
    return make_pod(name).label(app="web").owner("ReplicaSet", "web-1", "u1").node(node_name).info()


def test_system_defaults_with_replicaset_owner_nodes_without_zone() -> None:
    # kube's "system defaulting, nodes don't have zone": spread as 4/3/2/1 on hostname (maxSkew 3)
    nodes = [
        make_node("node-a").obj(),
        make_node("node-b").obj(),
        make_node("node-c").obj(),
        make_node("node-d").obj(),
    ]
    existing = [
        web(f"{n}-{i}", n)
        for n, k in (("node-a", 4), ("node-b", 3), ("node-c", 2), ("node-d", 1))
        for i in range(k)
    ]
    s, raw, norm = run_score(plugin(objs=[RS]), web("p"), make_table(nodes, existing))
    assert s.is_success()
    assert norm == {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}
    # hostname weight log(4 + 2); zone constraint skipped (no zone label) but nodes are not ignored
    assert raw == {"node-a": 9, "node-b": 7, "node-c": 6, "node-d": 4}


def test_system_defaults_zone_and_hostname() -> None:
    nodes = [
        make_node("node-a").zone("z1").obj(),
        make_node("node-b").zone("z1").obj(),
        make_node("node-x").zone("z2").obj(),
        make_node("node-y").obj(),
    ]
    existing = [web("a1", "node-a"), web("a2", "node-a"), web("x1", "node-x")]
    _, raw, norm = run_score(plugin(objs=[RS]), web("p"), make_table(nodes, existing))
    # hostname: log(4 + 2) * 2/0/1/0 + 2; zone over z1, z2 and "" (node-y): log(3 + 2) * 2/2/1/- + 4
    assert raw == {"node-a": 13, "node-b": 9, "node-x": 9, "node-y": 2}
    assert norm == {"node-a": 15, "node-b": 46, "node-x": 46, "node-y": 100}


def test_system_defaults_skip_pods_without_an_owner_or_with_a_missing_one() -> None:
    t = make_table([make_node("node-a").zone("z1").obj(), make_node("node-b").zone("z1").obj()])
    pl = plugin(objs=[RS])
    assert run_score(pl, make_pod("bare").label(app="web").info(), t)[0].code == Code.SKIP
    ghost = make_pod("orphan").label(app="web").owner("ReplicaSet", "gone", "u1").info()
    assert run_score(pl, ghost, t)[0].code == Code.SKIP
    job = make_pod("job").label(app="web").owner("Job", "web-1", "u1").info()
    assert run_score(pl, job, t)[0].code == Code.SKIP
    # a pod with its own (hard only) constraints gets no default soft ones
    own = make_pod("own").label(app="web").owner("ReplicaSet", "web-1", "u1").spread(spread(1, "zone")).info()
    assert run_score(pl, own, t)[0].code == Code.SKIP


def test_list_defaulting_requires_all_topology_keys() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}],
    }
    nodes = [make_node("node-a").zone("z1").obj(), make_node("node-b").obj()]
    _, raw, norm = run_score(plugin(args, [RS]), web("p"), make_table(nodes, [web("a1", "node-a")]))
    assert (raw, norm) == ({"node-a": 1, "node-b": 0}, {"node-a": 100, "node-b": 0})


def test_args() -> None:
    assert parse_args({}).system_defaulted
    listed = parse_args(
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
            ],
        }
    )
    assert not listed.system_defaulted
    assert [(c.max_skew, c.topology_key, c.when_unsatisfiable) for c in listed.default_constraints] == [
        (2, "zone", "DoNotSchedule")
    ]
    assert parse_args({"defaultingType": "List"}).default_constraints == ()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                ]
            },
            'PodTopologySpread: defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
        ),
        (
            {"defaultingType": "Other"},
            'PodTopologySpread: defaultingType: Unsupported value: "Other": supported values: "System", "List"',
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
                ],
            },
            "PodTopologySpread: defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}],
            },
            "PodTopologySpread: defaultConstraints[0].topologyKey: Required value: can not be empty",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}],
            },
            'PodTopologySpread: defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"',
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "zone",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {},
                    }
                ],
            },
            "PodTopologySpread: defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod",
        ),
        (
            {
                "defaultingType": "List",
                "defaultConstraints": [
                    {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                    {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
                ],
            },
            'PodTopologySpread: defaultConstraints[1]: Duplicate value: "{zone, DoNotSchedule}"',
        ),
        (
            {"bogus": 1},
            'decoding args for plugin PodTopologySpread: strict decoding error: unknown field "bogus"',
        ),
    ],
)
def test_bad_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_args(args)
    assert str(e.value) == message


def test_count_index_follows_pod_changes_incrementally() -> None:
    sel = plugin().constraints(make_pod().label(foo="").spread(spread(1, "zone")).info()).hard[0].selector
    t: NodeTable = make_table(
        [
            make_node("node-a").label(zone="z1", node="node-a").obj(),
            make_node("node-b").label(zone="z1", node="node-b").obj(),
            make_node("node-c").label(zone="z2", node="node-c").obj(),
        ]
    )
    index = CountIndex()
    assert index.counts(t, "default", sel).tolist() == [0, 0, 0]
    a1 = make_pod("a1").label(foo="").node("node-a").info()
    t.add_pod(0, a1)
    t.add_pod(2, make_pod("c1").label(foo="").node("node-c").info())
    t.add_pod(2, make_pod("c2").label(bar="").node("node-c").info())
    t.add_pod(1, make_pod("b1").ns("other").label(foo="").node("node-b").info())
    assert index.counts(t, "default", sel).tolist() == [1, 0, 1]
    t.remove_pod(0, a1)
    assert index.counts(t, "default", sel).tolist() == [0, 0, 1]
    # a pod that starts terminating stops counting once its node is reported
    c1 = next(p for p in t.pods[2].values() if p.name == "c1")
    c1.obj = {**c1.obj, "metadata": {**c1.obj["metadata"], "deletionTimestamp": "2024-01-01T00:00:00Z"}}
    index.log.add("node-c")
    assert index.counts(t, "default", sel).tolist() == [0, 0, 0]
    # rows moving (a node removed) rebuilds the vector
    t.remove_node("node-a")
    t.add_pod(0, make_pod("b2").label(foo="").node("node-b").info())
    assert index.counts(t, "default", sel).tolist() == [1, 0]
    assert index.counts(t, "other", sel).tolist() == [1, 0]


def test_count_index_on_a_large_table_counts_through_the_label_index_exactly() -> None:
    import random

    from berth.api.labels import parse_selector
    from berth.scheduler.plugins.podtopologyspread.counts import INDEX_MIN_ROWS, count_matching

    rng = random.Random(5)
    size = INDEX_MIN_ROWS + 88
    t: NodeTable = make_table([make_node(f"n{i}").obj() for i in range(size)])
    index = CountIndex()
    live: list[tuple[int, PodInfo]] = []

    def add(k: int) -> None:
        row = rng.randrange(size)
        ns = rng.choice(["default", "other"])
        pod = make_pod(f"p{k}").ns(ns).label(app=f"a{k % 7}", tier=rng.choice(["web", "db"])).info()
        t.add_pod(row, pod)
        live.append((row, pod))

    def brute(ns: str, text: str) -> list[int]:
        sel = parse_selector(text)
        return [count_matching(pods, ns, sel) for pods in t.pods]

    for k in range(400):
        add(k)
    queries = [
        (ns, f"app=a{a},tier={tier}")
        for ns in ("default", "other")
        for a in range(7)
        for tier in ("web", "db")
    ]
    for ns, text in queries[:10]:  # built from the index as the table stands
        assert index.counts(t, ns, parse_selector(text)).tolist() == brute(ns, text)
    for k in range(400, 700):  # the table changes: pods come and go
        add(k)
        if k % 3 == 0:
            row, pod = live.pop(rng.randrange(len(live)))
            t.remove_pod(row, pod)
    for ns, text in queries:  # old matchers refreshed, new ones built from the caught-up index
        assert index.counts(t, ns, parse_selector(text)).tolist() == brute(ns, text)
    assert sum(index.counts(t, "default", parse_selector("app=a3")).tolist()) == sum(
        brute("default", "app=a3")
    )
