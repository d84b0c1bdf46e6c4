"""PreFilter/Filter against kube's filtering_test.go cases, plus AddPod/RemovePod and nominated pods."""

from __future__ import annotations

from typing import Any

import pytest
from pts_helpers import BAR, FOO, plugin, run_filter, spread

from berth.scheduler.framework import Code, CycleState, PodInfo
from berth.scheduler.plugins.podtopologyspread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
)
from builders import make_node, make_pod, make_table

OK, SKEW, LABEL = "ok", "skew", "label"


def verdicts(nodes: list[dict[str, Any]], existing: list[Any], p: Any, args: Any = None) -> dict[str, str]:
    pre, out = run_filter(plugin(args), p, make_table(nodes, existing))
    assert pre.is_success()
    names = {Code.SUCCESS: OK, Code.UNSCHEDULABLE: SKEW, Code.UNSCHEDULABLE_AND_UNRESOLVABLE: LABEL}
    for s in out.values():
        if s.code == Code.UNSCHEDULABLE:
            assert s.reasons == (ERR_REASON_CONSTRAINTS_NOT_MATCH,)
        if s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            assert s.reasons == (ERR_REASON_NODE_LABEL_NOT_MATCH,)
    return {n: names[s.code] for n, s in out.items()}


def four_nodes() -> list[dict[str, Any]]:
    return [
        make_node("node-a").label(zone="zone1", node="node-a").obj(),
        make_node("node-b").label(zone="zone1", node="node-b").obj(),
        make_node("node-x").label(zone="zone2", node="node-x").obj(),
        make_node("node-y").label(zone="zone2", node="node-y").obj(),
    ]


def on(
    node_name: str,
    n: int,
    labels: dict[str, str] | None = None,
    *,
    ns: str = "default",
    terminating: bool = False,
) -> list[PodInfo]:
    """``n`` pods labelled ``labels`` (default foo="") bound to ``node_name``."""
    pods = [
        make_pod(f"{node_name}-{i}").ns(ns).label({"foo": ""} if labels is None else labels) for i in range(n)
    ]
    return [(p.terminating() if terminating else p).node(node_name).info() for p in pods]


FOO_POD = {"foo": ""}


def test_no_existing_pods_all_fit() -> None:
    p = make_pod().label(FOO_POD).spread(spread(1, "zone")).info()
    assert set(verdicts(four_nodes(), [], p).values()) == {OK}
    p2 = make_pod().label(bar="").spread(spread(1, "zone")).info()  # does not match itself
    assert set(verdicts(four_nodes(), [], p2).values()) == {OK}


def test_zone_skew_3_2() -> None:
    existing = on("node-a", 2) + on("node-b", 1) + on("node-y", 2)
    p = make_pod().label(FOO_POD).spread(spread(1, "zone")).info()
    assert verdicts(four_nodes(), existing, p) == {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": OK}


def test_other_namespaces_and_terminating_pods_do_not_count() -> None:
    existing = on("node-a", 2, ns="ns1") + on("node-a", 1, terminating=True) + on("node-x", 1)
    p = make_pod().label(FOO_POD).spread(spread(1, "zone")).info()
    # zone1 counts 0, zone2 counts 1: zone2 nodes would reach skew 2
    assert verdicts(four_nodes(), existing, p) == {"node-a": OK, "node-b": OK, "node-x": SKEW, "node-y": SKEW}


def test_missing_topology_label_is_unresolvable() -> None:
    nodes = [
        make_node("node-a").label(zone="zone1", node="node-a").obj(),
        make_node("node-b").label(node="node-b").obj(),
        make_node("node-x").label(zone="zone2", node="node-x").obj(),
    ]
    existing = on("node-a", 1) + on("node-b", 2) + on("node-x", 1)
    p = make_pod().label(FOO_POD).spread(spread(1, "zone")).info()
    # node-b's pods do not count (it has no zone): 1/1
    assert verdicts(nodes, existing, p) == {"node-a": OK, "node-b": LABEL, "node-x": OK}
    p_rack = make_pod().label(FOO_POD).spread(spread(1, "rack")).info()
    assert set(verdicts(nodes, existing, p_rack).values()) == {LABEL}


@pytest.mark.parametrize(
    ("skew", "self_match", "want"),
    [
        (1, True, {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": SKEW}),
        (2, True, {"node-a": SKEW, "node-b": OK, "node-x": OK, "node-y": SKEW}),
        (1, False, {"node-a": SKEW, "node-b": OK, "node-x": OK, "node-y": SKEW}),
    ],
)
def test_node_spread_2_1_0_3(skew: int, self_match: bool, want: dict[str, str]) -> None:
    existing = on("node-a", 2) + on("node-b", 1) + on("node-y", 3)
    p = make_pod().label(FOO_POD if self_match else {"bar": ""}).spread(spread(skew, "node")).info()
    assert verdicts(four_nodes(), existing, p) == want


def test_first_failing_constraint_decides_the_reason() -> None:
    # only node-a and node-x carry a rack label, so only they count for both constraints
    nodes = [
        make_node("node-a").label(zone="zone1", node="node-a", rack="r1").obj(),
        make_node("node-b").label(zone="zone1", node="node-b").obj(),
        make_node("node-x").label(zone="zone2", node="node-x", rack="r2").obj(),
        make_node("node-y").label(zone="zone2", node="node-y").obj(),
    ]
    existing = on("node-a", 2) + on("node-b", 3)
    p = make_pod().label(FOO_POD).spread(spread(1, "zone"), spread(1, "rack")).info()
    # zone: 2/0 -> zone1 fails on skew first, even on node-b that lacks the rack label
    assert verdicts(nodes, existing, p) == {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": LABEL}
    # when no node carries every key, no domain exists: the global minimum is 0 and only labels matter
    p2 = make_pod().label(FOO_POD).spread(spread(1, "zone"), spread(1, "shelf")).info()
    assert set(verdicts(nodes, existing, p2).values()) == {LABEL}


def test_two_constraints_with_different_selectors() -> None:
    existing = (
        on("node-a", 1, FOO_POD) + on("node-b", 1, {"bar": ""}) + on("node-y", 2, {"foo": "", "bar": ""})
    )
    p = (
        make_pod()
        .label(foo="", bar="")
        .spread(spread(1, "zone", selector=FOO), spread(1, "node", selector=BAR))
        .info()
    )
    # zone (foo): 1/2 -> zone2 fails; node (bar): 0/1/0/2 -> node-b and node-y fail
    assert verdicts(four_nodes(), existing, p) == {
        "node-a": OK,
        "node-b": SKEW,
        "node-x": SKEW,
        "node-y": SKEW,
    }


@pytest.mark.parametrize(
    ("min_domains", "want"),
    [
        (None, {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": OK}),
        (2, {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": OK}),
        # 2 domains < minDomains 3: the global minimum is 0, so zone2 (1 pod) reaches skew 2 too
        (3, {"node-a": SKEW, "node-b": SKEW, "node-x": SKEW, "node-y": SKEW}),
    ],
)
def test_min_domains(min_domains: int | None, want: dict[str, str]) -> None:
    existing = on("node-a", 2) + on("node-x", 1)
    extra = {} if min_domains is None else {"minDomains": min_domains}
    p = make_pod().label(FOO_POD).spread(spread(1, "zone", **extra)).info()
    assert verdicts(four_nodes(), existing, p) == want


def test_node_affinity_policy() -> None:
    # the pod only wants zone1 nodes and node-y; zone2's pods live on node-x
    nodes = [
        make_node("node-a").label(zone="zone1", node="node-a", ok="1").obj(),
        make_node("node-b").label(zone="zone1", node="node-b", ok="1").obj(),
        make_node("node-x").label(zone="zone2", node="node-x").obj(),
        make_node("node-y").label(zone="zone2", node="node-y", ok="1").obj(),
    ]
    existing = on("node-a", 1) + on("node-x", 3)
    honor = make_pod().label(FOO_POD).spread(spread(1, "zone")).node_selector(ok="1").info()
    # Honor: node-x does not count, zone2 has 0 -> zone1 nodes reach skew 2
    assert verdicts(nodes, existing, honor) == {"node-a": SKEW, "node-b": SKEW, "node-x": OK, "node-y": OK}
    ignore = (
        make_pod()
        .label(FOO_POD)
        .spread(spread(1, "zone", nodeAffinityPolicy="Ignore"))
        .node_selector(ok="1")
        .info()
    )
    assert verdicts(nodes, existing, ignore) == {"node-a": OK, "node-b": OK, "node-x": SKEW, "node-y": SKEW}


def test_node_taints_policy() -> None:
    taint = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    nodes = [
        make_node("node-a").label(zone="zone1", node="node-a").obj(),
        make_node("node-x").label(zone="zone2", node="node-x").obj(),
        make_node("node-z").label(zone="zone3", node="node-z").taints(*taint).obj(),
    ]
    existing = on("node-a", 1) + on("node-x", 1)
    ignore = make_pod().label(FOO_POD).spread(spread(1, "zone")).info()
    # Ignore (default): zone3 is a domain with 0 pods -> zone1/zone2 reach skew 2
    assert verdicts(nodes, existing, ignore) == {"node-a": SKEW, "node-x": SKEW, "node-z": OK}
    honor = make_pod().label(FOO_POD).spread(spread(1, "zone", nodeTaintsPolicy="Honor")).info()
    # Honor: zone3 is no domain, the minimum is 1; Filter still passes node-z (TaintToleration rejects it)
    assert verdicts(nodes, existing, honor) == {"node-a": OK, "node-x": OK, "node-z": OK}
    tolerating = (
        make_pod()
        .label(FOO_POD)
        .spread(spread(1, "zone", nodeTaintsPolicy="Honor"))
        .tolerations({"key": "dedicated", "operator": "Exists"})
        .info()
    )
    assert verdicts(nodes, existing, tolerating) == {"node-a": SKEW, "node-x": SKEW, "node-z": OK}


def test_match_label_keys_narrow_the_selector() -> None:
    # two revisions of the same app; only the incoming pod's revision counts
    existing = on("node-a", 2, {"foo": "", "rev": "1"}) + on("node-x", 1, {"foo": "", "rev": "2"})
    plain = make_pod().label(foo="", rev="2").spread(spread(1, "zone")).info()
    assert verdicts(four_nodes(), existing, plain) == {
        "node-a": SKEW,
        "node-b": SKEW,
        "node-x": OK,
        "node-y": OK,
    }
    keyed = make_pod().label(foo="", rev="2").spread(spread(1, "zone", matchLabelKeys=["rev"])).info()
    assert verdicts(four_nodes(), existing, keyed) == {
        "node-a": OK,
        "node-b": OK,
        "node-x": SKEW,
        "node-y": SKEW,
    }


def test_null_selector_matches_nothing() -> None:
    existing = on("node-a", 5)
    p = make_pod().label(FOO_POD).spread(spread(1, "zone", selector=None)).info()
    assert set(verdicts(four_nodes(), existing, p).values()) == {OK}


def test_pods_without_hard_constraints_skip_filter() -> None:
    t = make_table(four_nodes())
    for p in (
        make_pod().info(),
        make_pod().label(FOO_POD).spread(spread(1, "zone", "ScheduleAnyway")).info(),
    ):
        pre, _ = run_filter(plugin(), p, t)
        assert pre.code == Code.SKIP


def test_list_defaulting_applies_hard_default_constraints_to_owned_pods() -> None:
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
    }
    args = {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
    }
    existing = on("node-a", 2, {"app": "web"})
    p = make_pod().label({"app": "web", "pod-template-hash": "x"}).owner("ReplicaSet", "web", "u1").info()
    pl = plugin(args, [rs])
    pre, out = run_filter(pl, p, make_table(four_nodes(), existing))
    assert pre.is_success()
    assert {n: s.code for n, s in out.items()} == {
        "node-a": Code.UNSCHEDULABLE,
        "node-b": Code.UNSCHEDULABLE,
        "node-x": Code.SUCCESS,
        "node-y": Code.SUCCESS,
    }
    # a pod with its own constraints ignores the defaults; a bare pod gets none
    assert (
        run_filter(pl, make_pod().label(app="web").info(), make_table(four_nodes(), existing))[0].code
        == Code.SKIP
    )


def test_remove_and_add_pod_update_the_state_copy() -> None:
    existing = on("node-a", 2) + on("node-x", 1)
    t = make_table(four_nodes(), existing)
    pl = plugin()
    p = make_pod().label(FOO_POD).spread(spread(1, "zone")).info()
    state = CycleState()
    pl.pre_filter(state, p, t)
    a = t.info(t.index["node-a"])
    assert pl.filter(state, p, a).code == Code.UNSCHEDULABLE
    dry = state.clone()
    victims = list(a.pods.values())
    for v in victims:
        assert pl.remove_pod(dry, p, v, a).is_success()
    assert pl.filter(dry, p, a).is_success()  # zone1 0, zone2 1
    assert pl.filter_nodes(dry, p, t).status_of(t.index["node-x"]).code == Code.UNSCHEDULABLE
    assert pl.filter(state, p, a).code == Code.UNSCHEDULABLE  # the original state is untouched
    pl.add_pod(dry, p, victims[0], a)
    assert pl.filter(dry, p, a).is_success()  # 1 + 1 - 1 <= 1
    pl.add_pod(dry, p, victims[1], a)
    assert pl.filter(dry, p, a).code == Code.UNSCHEDULABLE
    other_ns = make_pod("o").ns("other").label(FOO_POD).info()
    pl.remove_pod(dry, p, other_ns, a)  # another namespace: no change
    assert pl.filter(dry, p, a).code == Code.UNSCHEDULABLE


def test_nominated_pods_count_on_their_node() -> None:
    existing = on("node-a", 1) + on("node-x", 1)
    t = make_table(four_nodes(), existing)
    pl = plugin()
    p = make_pod().label(FOO_POD).spread(spread(1, "zone")).priority(10).info()
    # a higher-priority pod nominated to node-x: with it, zone2 has 2 -> node-x fails (2 + 1 - 1 > 1)
    pl.handle.nominated["node-x"] = [make_pod("nom").label(FOO_POD).priority(100).info()]  # type: ignore[attr-defined]
    state = CycleState()
    pl.pre_filter(state, p, t)
    x = t.index["node-x"]
    assert pl.filter(state, p, t.info(x)).code == Code.UNSCHEDULABLE
    assert pl.filter(state, p, t.info(t.index["node-y"])).is_success()  # only the nominated node sees it
    # lower-priority nominated pods are not counted
    pl.handle.nominated["node-x"] = [make_pod("nom").label(FOO_POD).priority(1).info()]  # type: ignore[attr-defined]
    assert pl.filter(state, p, t.info(x)).is_success()


def test_invalid_selector_is_an_error() -> None:
    bad = {"matchExpressions": [{"key": "foo", "operator": "Bogus"}]}
    p = make_pod().label(FOO_POD).spread(spread(1, "zone", selector=bad)).info()
    pre, _ = run_filter(plugin(), p, make_table(four_nodes()))
    assert pre.code == Code.ERROR
    assert pre.reasons[0].startswith("get constraints from pod: matchExpressions[0].operator")
