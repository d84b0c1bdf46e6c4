"""Plugin args, the system default constraints (selector from the owning ReplicaSet) and the count index."""

from __future__ import annotations

from typing import Any

import pytest
from pts_helpers import node, plugin, pod, run_score, spread, table

from berth.scheduler.framework import Code, ConfigError, NodeTable
from berth.scheduler.plugins.podtopologyspread import parse_args
from berth.scheduler.plugins.podtopologyspread.counts import CountIndex

HOST = "kubernetes.io/hostname"
RS = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "web-1", "namespace": "default"},
    "spec": {"selector": {"matchLabels": {"app": "web"}}},
}
OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "u1", "controller": True}


ZONE = "topology.kubernetes.io/zone"


def hn(name: str, zone: str | None = None) -> dict[str, Any]:
    labels = {HOST: name} if zone is None else {HOST: name, ZONE: zone}
    return node(name, labels=labels, node_label=False)


def web(name: str, node_name: str | None = None) -> Any:
    return pod(name, labels={"app": "web"}, node_name=node_name, owner=OWNER)


def test_system_defaults_with_replicaset_owner_nodes_without_zone() -> None:
    # kube's "system defaulting, nodes don't have zone": spread as 4/3/2/1 on hostname (maxSkew 3)
    nodes = [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")]
    existing = [
        web(f"{n}-{i}", n)
        for n, k in (("node-a", 4), ("node-b", 3), ("node-c", 2), ("node-d", 1))
        for i in range(k)
    ]
    s, raw, norm = run_score(plugin(objs=[RS]), web("p"), table(nodes, existing))
    assert s.is_success()
    assert norm == {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}
    # hostname weight log(4 + 2); zone constraint skipped (no zone label) but nodes are not ignored
    assert raw == {"node-a": 9, "node-b": 7, "node-c": 6, "node-d": 4}


def test_system_defaults_zone_and_hostname() -> None:
    nodes = [hn("node-a", "z1"), hn("node-b", "z1"), hn("node-x", "z2"), hn("node-y")]
    existing = [web("a1", "node-a"), web("a2", "node-a"), web("x1", "node-x")]
    _, raw, norm = run_score(plugin(objs=[RS]), web("p"), table(nodes, existing))
    # hostname: log(4 + 2) * 2/0/1/0 + 2; zone over z1, z2 and "" (node-y): log(3 + 2) * 2/2/1/- + 4
    assert raw == {"node-a": 13, "node-b": 9, "node-x": 9, "node-y": 2}
    assert norm == {"node-a": 15, "node-b": 46, "node-x": 46, "node-y": 100}


def test_system_defaults_skip_pods_without_an_owner_or_with_a_missing_one() -> None:
    t = table([hn("node-a", "z1"), hn("node-b", "z1")])
    pl = plugin(objs=[RS])
    assert run_score(pl, pod("bare", labels={"app": "web"}), t)[0].code == Code.SKIP
    ghost = dict(OWNER, name="gone")
    assert run_score(pl, pod("orphan", labels={"app": "web"}, owner=ghost), t)[0].code == Code.SKIP
    job = dict(OWNER, kind="Job", apiVersion="batch/v1")
    assert run_score(pl, pod("job", labels={"app": "web"}, owner=job), t)[0].code == Code.SKIP
    # a pod with its own (hard only) constraints gets no default soft ones
    own = pod("own", labels={"app": "web"}, owner=OWNER, constraints=[spread(1, "zone")])
    assert run_score(pl, own, t)[0].code == Code.SKIP


def test_list_defaulting_requires_all_topology_keys() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}],
    }
    nodes = [hn("node-a", "z1"), hn("node-b")]
    _, raw, norm = run_score(plugin(args, [RS]), web("p"), table(nodes, [web("a1", "node-a")]))
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
        ({"bogus": 1}, 'PodTopologySpread: unknown field "bogus"'),
    ],
)
def test_bad_args(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_args(args)
    assert str(e.value) == message


def test_count_index_follows_pod_changes_incrementally() -> None:
    sel = plugin().constraints(pod(labels={"foo": ""}, constraints=[spread(1, "zone")])).hard[0].selector
    t: NodeTable = table([node("node-a", "z1"), node("node-b", "z1"), node("node-c", "z2")])
    index = CountIndex()
    assert index.counts(t, "default", sel).tolist() == [0, 0, 0]
    a1 = pod("a1", labels={"foo": ""}, node_name="node-a")
    t.add_pod(0, a1)
    t.add_pod(2, pod("c1", labels={"foo": ""}, node_name="node-c"))
    t.add_pod(2, pod("c2", labels={"bar": ""}, node_name="node-c"))
    t.add_pod(1, pod("b1", labels={"foo": ""}, namespace="other", node_name="node-b"))
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
    t.add_pod(0, pod("b2", labels={"foo": ""}, node_name="node-b"))
    assert index.counts(t, "default", sel).tolist() == [1, 0]
    assert index.counts(t, "other", sel).tolist() == [1, 0]
