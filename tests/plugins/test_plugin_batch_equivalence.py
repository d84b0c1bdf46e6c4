"""Property: on random tables, every plugin's batched form equals its per-node form (statuses and scores)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plugin_helpers import new_state

from berth.scheduler.framework import NodeTable, PodInfo, default_normalize
from berth.scheduler.plugins import default_registry
from builders import host_port, make_node, make_pod, make_table, taint, toleration

GPU = "example.com/gpu"
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
LABELS = {"zone": ("z1", "z2", "z3"), "tier": ("a", "b"), "num": ("1", "5", "10", "x", "-3")}
PORTS = ("TCP/0.0.0.0/80", "TCP/10.0.0.1/80", "UDP/0.0.0.0/80", "TCP/10.0.0.2/443", "TCP//443")

taints_st = st.lists(
    st.builds(
        taint,
        st.sampled_from(("k1", "k2", "dedicated")),
        st.sampled_from(("", "v1", "v2")),
        st.sampled_from(EFFECTS),
    ),
    max_size=3,
)
tolerations_st = st.lists(
    st.builds(
        toleration,
        st.sampled_from(("", "k1", "k2", "node.kubernetes.io/unschedulable")),
        st.sampled_from(("", "Equal", "Exists")),
        st.sampled_from(("", "v1", "v2")),
        st.sampled_from(("", *EFFECTS)),
    ).filter(lambda t: not (t.get("operator") == "Exists" and t.get("value"))),
    max_size=3,
)
labels_st = st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in LABELS.items()})


def _ports(specs: list[str]) -> list[dict[str, Any]]:
    out = []
    for s in specs:
        proto, ip, port = s.split("/")
        out.append(host_port(int(port), ip, proto))
    return out


def _requests() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "cpu": st.sampled_from(("0", "100m", "500m", "1", "2500m", "6")),
            "memory": st.integers(0, 9000),
            GPU: st.integers(0, 3),
            "ephemeral-storage": st.integers(0, 60),
        },
    )


@st.composite
def pod_st(draw: st.DrawFn, name: str) -> PodInfo:
    reqs = draw(_requests())
    return (
        make_pod(name)
        .req(reqs)
        .ports(*_ports(draw(st.lists(st.sampled_from(PORTS), max_size=2, unique=True))))
        .info()
    )


requirement_st = st.one_of(
    st.builds(
        lambda k, op, vs: {"key": k, "operator": op, "values": list(vs)},
        st.sampled_from(("zone", "tier")),
        st.sampled_from(("In", "NotIn")),
        st.lists(st.sampled_from(("z1", "z2", "a")), min_size=1, max_size=2),
    ),
    st.builds(
        lambda k, op, vs: {"key": k, "operator": op, "values": list(vs)},
        st.sampled_from(tuple(LABELS)),
        st.sampled_from(("In", "NotIn")),
        st.lists(st.sampled_from(("z1", "z2", "a", "5", "x")), min_size=1, max_size=2),
    ),
    st.builds(
        lambda k, op: {"key": k, "operator": op},
        st.sampled_from(tuple(LABELS)),
        st.sampled_from(("Exists", "DoesNotExist")),
    ),
    st.builds(
        lambda op, v: {"key": "num", "operator": op, "values": [v]},
        st.sampled_from(("Gt", "Lt")),
        st.sampled_from(("0", "5", "x")),
    ),
    st.just({"key": "zone", "operator": "Bogus"}),
)
field_st = st.builds(
    lambda op, v: {"key": "metadata.name", "operator": op, "values": [v]},
    st.sampled_from(("In", "NotIn")),
    st.sampled_from(("n0", "n1", "n2", "zz")),
)
term_st = st.fixed_dictionaries(
    {},
    optional={
        "matchExpressions": st.lists(requirement_st, max_size=2),
        "matchFields": st.lists(field_st, max_size=1),
    },
)


@st.composite
def candidate(draw: st.DrawFn) -> PodInfo:
    reqs = draw(_requests())
    affinity: dict[str, Any] = {}
    node_aff: dict[str, Any] = {}
    if draw(st.booleans()):
        node_aff["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": draw(st.lists(term_st, max_size=2))
        }
    if draw(st.booleans()):
        node_aff["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "preference": t}
            for w, t in draw(st.lists(st.tuples(st.integers(1, 100), term_st), max_size=3))
        ]
    if node_aff:
        affinity["nodeAffinity"] = node_aff
    return (
        make_pod("cand")
        .req(reqs)
        .tolerations(*draw(tolerations_st))
        .node_selector(draw(st.fixed_dictionaries({}, optional={"zone": st.sampled_from(LABELS["zone"])})))
        .affinity(affinity)
        .ports(*_ports(draw(st.lists(st.sampled_from(PORTS), max_size=2, unique=True))))
        .node(draw(st.sampled_from((None, None, "n1", "zz"))))
        .info()
    )


@st.composite
def tables(draw: st.DrawFn) -> NodeTable:
    n = draw(st.integers(1, 9))
    nodes = []
    for i in range(n):
        extra: dict[str, Any] = {}
        if draw(st.booleans()):
            extra[GPU] = draw(st.integers(0, 4))
        if draw(st.booleans()):
            extra["ephemeral-storage"] = draw(st.integers(0, 100))
        nodes.append(
            make_node(f"n{i}")
            .capacity(
                extra,
                cpu=draw(st.sampled_from((None, "0", "1", "2", "4", "8"))),
                memory=draw(st.one_of(st.none(), st.integers(0, 20000))),
                pods=draw(st.sampled_from((None, 0, 1, 3, 10))),
            )
            .label(draw(labels_st))
            .taints(*draw(taints_st))
            .unschedulable(draw(st.booleans()))
            .obj()
        )
    placed: dict[str, list[PodInfo]] = {}
    for j in range(draw(st.integers(0, 6))):
        placed.setdefault(f"n{draw(st.integers(0, n - 1))}", []).append(draw(pod_st(f"e{j}")))
    table = make_table(nodes, placed)
    if n > 1 and draw(st.booleans()):
        table.remove_node(f"n{draw(st.integers(0, n - 1))}")
    return table


ARGS: dict[str, list[dict[str, Any]]] = {
    "NodeAffinity": [
        {},
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 7, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}
                ],
            }
        },
    ],
    "NodeResourcesFit": [
        {},
        {"ignoredResources": [GPU]},
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 3}, {"name": "memory"}, {"name": GPU}],
            }
        },
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": [
                    {"name": "cpu"},
                    {"name": "memory", "weight": 2},
                    {"name": "ephemeral-storage"},
                    {"name": GPU},
                ],
                "requestedToCapacityRatio": {
                    "shape": [
                        {"utilization": 0, "score": 10},
                        {"utilization": 30, "score": 7},
                        {"utilization": 100, "score": 1},
                    ]
                },
            }
        },
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "ephemeral-storage"}, {"name": GPU, "weight": 5}],
            }
        },
    ],
    "NodeResourcesBalancedAllocation": [
        {},
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": GPU}, {"name": "ephemeral-storage"}]},
    ],
}
PLUGINS = (
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "NodeResourcesBalancedAllocation",
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables(), pod=candidate(), data=st.data())
def test_batched_equals_per_node(table: NodeTable, pod: PodInfo, data: st.DataObject) -> None:
    registry = default_registry()
    idx = np.array(data.draw(st.permutations(range(table.size))), dtype=np.int64)[
        : data.draw(st.integers(0, table.size))
    ]
    for name in PLUGINS:
        factory = registry.get(name)
        assert factory is not None
        for args in ARGS.get(name, [{}]):
            plugin = factory(args, None)  # type: ignore[arg-type]
            state = new_state()
            if hasattr(plugin, "pre_filter"):
                plugin.pre_filter(state, pod, table)
            if hasattr(plugin, "filter"):
                verdicts = plugin.filter_nodes(state, pod, table)
                assert len(verdicts.passed) == table.size
                for i in range(table.size):
                    assert verdicts.status_of(i) == plugin.filter(state, pod, table.info(i)), (name, args, i)
            if hasattr(plugin, "score"):
                if plugin.pre_score(state, pod, table, idx).is_skip():
                    continue
                batched = plugin.score_nodes(state, pod, table, idx)
                single = np.array([plugin.score(state, pod, table.info(int(i))) for i in idx], dtype=np.int64)
                assert batched.dtype == np.int64
                assert batched.tolist() == single.tolist(), (name, args)
                if hasattr(plugin, "normalize_scores"):
                    assert (
                        plugin.normalize_scores(state, pod, batched).tolist()
                        == default_normalize(single, reverse=name == "TaintToleration").tolist()
                    )
