"""Filter cases after kube's interpodaffinity filtering_test.go, with exact reasons and codes."""

from __future__ import annotations

from typing import Any

import pytest
from ipa_helpers import HOST, REGION, ZONE, plugin, run_filter, term

from berth.scheduler.framework import CycleState
from builders import expr, make_node, make_pod, make_table

OK = ("", "")
AFF = ("UNSCHEDULABLE_AND_UNRESOLVABLE", "node(s) didn't match pod affinity rules")
ANTI = ("UNSCHEDULABLE", "node(s) didn't match pod anti-affinity rules")
EXISTING = ("UNSCHEDULABLE", "node(s) didn't satisfy existing pods anti-affinity rules")
SEC = {"service": "securityscan"}

N1 = make_node("n1").label(region="r1", zone="z11").obj()
N2 = make_node("n2").label(region="r1", zone="z12").obj()
N3 = make_node("n3").label(region="r2", zone="z21").obj()
N4 = make_node("n4").label(zone="z22").obj()  # no region label

CASES: list[Any] = [
    pytest.param(make_pod("in").info(), {}, [OK, OK, OK, OK], id="no terms, empty cluster"),
    pytest.param(
        make_pod("in")
        .pod_affinity(term(REGION, exprs=[expr("service", "In", "securityscan", "value2")]))
        .info(),
        {"n1": [make_pod("e").label(SEC).info()]},
        [OK, OK, AFF, AFF],
        id="affinity In matches a pod in the region; a node without the key fails",
    ),
    pytest.param(
        make_pod("in")
        .pod_affinity(term(REGION, exprs=[expr("service", "NotIn", "securityscan3", "value3")]))
        .info(),
        {"n1": [make_pod("e").label(SEC).info()]},
        [OK, OK, AFF, AFF],
        id="affinity NotIn",
    ),
    pytest.param(
        make_pod("in").pod_affinity(term(REGION, SEC, namespaces=["DiffNameSpace"])).info(),
        {"n1": [make_pod("e").label(SEC).info()]},
        [AFF, AFF, AFF, AFF],
        id="affinity in another namespace matches nothing (and the pod is not in it)",
    ),
    pytest.param(
        make_pod("in").pod_affinity(term(REGION, {"service": "antivirusscan"})).info(),
        {"n1": [make_pod("e").label(SEC).info()]},
        [AFF, AFF, AFF, AFF],
        id="affinity selector matches no pod",
    ),
    pytest.param(
        make_pod("in")
        .pod_affinity(
            term(REGION, exprs=[expr("service", "Exists"), expr("wrongkey", "DoesNotExist")]),
            term(
                REGION,
                exprs=[expr("service", "In", "securityscan"), expr("service", "NotIn", "WrongValue")],
            ),
        )
        .info(),
        {"n1": [make_pod("e").label(SEC).info()]},
        [OK, OK, AFF, AFF],
        id="several terms, all matched by one pod",
    ),
    pytest.param(
        make_pod("in")
        .pod_affinity(term(REGION, exprs=[expr("service", "Exists"), expr("service", "In", "WrongValue")]))
        .info(),
        {"n1": [make_pod("e").label(SEC).info()]},
        [AFF, AFF, AFF, AFF],
        id="requirements are ANDed",
    ),
    pytest.param(
        make_pod("in")
        .pod_affinity(term(REGION, SEC))
        .pod_anti_affinity(term(ZONE, {"service": "antivirusscan"}))
        .info(),
        {"n1": [make_pod("e").label(SEC).info()]},
        [OK, OK, AFF, AFF],
        id="affinity and anti-affinity both satisfied",
    ),
    pytest.param(
        make_pod("in").pod_affinity(term(REGION, SEC)).pod_anti_affinity(term(ZONE, SEC)).info(),
        {"n1": [make_pod("e").label(SEC).info()]},
        [ANTI, OK, AFF, AFF],
        id="affinity satisfied, anti-affinity not in the same zone",
    ),
    pytest.param(
        make_pod("in").label(app="web").pod_affinity(term(REGION, SEC)).info(),
        {"n1": [make_pod("e").label(SEC).pod_anti_affinity(term(ZONE, {"app": "web"})).info()]},
        [EXISTING, OK, AFF, AFF],
        id="symmetry: the existing pod's anti-affinity rejects its zone",
    ),
    pytest.param(
        make_pod("in").label(app="web").info(),
        {"n1": [make_pod("e").label(SEC).pod_anti_affinity(term(REGION, {"app": "web"})).info()]},
        [EXISTING, EXISTING, OK, OK],
        id="symmetry without own terms: the whole region is rejected",
    ),
    pytest.param(
        make_pod("in").label(app="web").info(),
        {
            "n1": [
                make_pod("e")
                .label(SEC)
                .pod_anti_affinity(term(REGION, exprs=[expr("app", "NotIn", "web")]))
                .info()
            ]
        },
        [OK, OK, OK, OK],
        id="symmetry term not selecting the incoming pod",
    ),
    pytest.param(
        make_pod("in").label(SEC).pod_affinity(term(REGION, SEC)).info(),
        {},
        [OK, OK, OK, AFF],
        id="first pod of a group matches its own term (nodes need the key)",
    ),
    pytest.param(
        make_pod("in").label(service="other").pod_affinity(term(REGION, SEC)).info(),
        {},
        [AFF, AFF, AFF, AFF],
        id="no matching pod and the pod does not match its own term",
    ),
    pytest.param(
        make_pod("in").label(SEC).pod_affinity(term(REGION, SEC)).info(),
        {"n3": [make_pod("e").label(SEC).info()]},
        [AFF, AFF, OK, AFF],
        id="once one pod matches, the first-pod rule no longer applies",
    ),
    pytest.param(
        make_pod("in").label(SEC).pod_affinity(term(REGION, SEC), term(ZONE, SEC)).info(),
        {"n1": [make_pod("e").label(SEC).info()]},
        [OK, AFF, AFF, AFF],
        id="two topology keys must both hold matching pods",
    ),
    pytest.param(
        make_pod("in").pod_affinity(term(REGION, SEC, nil_selector=True)).info(),
        {"n1": [make_pod("e").label(SEC).info()]},
        [AFF, AFF, AFF, AFF],
        id="nil label selector selects nothing",
    ),
    pytest.param(
        make_pod("in").pod_anti_affinity(term(HOST, {})).info(),
        {"n2": [make_pod("e").label(x="y").info()], "n3": [make_pod("f").ns("other").info()]},
        [OK, ANTI, OK, OK],
        id="empty selector selects every pod of the namespace",
    ),
    pytest.param(
        make_pod("in").pod_anti_affinity(term(HOST, {}, ns_selector={})).info(),
        {"n2": [make_pod("e").info()], "n3": [make_pod("f").ns("other").info()]},
        [OK, ANTI, ANTI, OK],
        id="empty namespaceSelector selects every namespace",
    ),
    pytest.param(
        make_pod("in").pod_anti_affinity(term(HOST, {}, ns_selector={"matchLabels": {"team": "a"}})).info(),
        {"n1": [make_pod("e").ns("ns-a").info()], "n2": [make_pod("f").ns("ns-b").info()]},
        [ANTI, OK, OK, OK],
        id="namespaceSelector picks namespaces by their labels",
    ),
    pytest.param(
        make_pod("in").ns("ns-a").label(app="db").info(),
        {
            "n1": [
                make_pod("e")
                .ns("ns-b")
                .pod_anti_affinity(term(ZONE, {"app": "db"}, ns_selector={"matchLabels": {"team": "a"}}))
                .info()
            ],
            "n3": [
                make_pod("f")
                .ns("ns-b")
                .pod_anti_affinity(term(ZONE, {"app": "db"}, ns_selector={"matchLabels": {"team": "b"}}))
                .info()
            ],
        },
        [EXISTING, OK, OK, OK],
        id="existing pod's namespaceSelector is matched against the incoming pod's namespace labels",
    ),
    pytest.param(
        make_pod("in").label(app="web").pod_anti_affinity(term(HOST, {"app": "web"})).info(),
        {"n1": [make_pod("e").label(app="web").pod_anti_affinity(term(HOST, {"app": "web"})).info()]},
        [ANTI, OK, OK, OK],
        id="hostname spreading: the pod's own anti-affinity reported first",
    ),
]


@pytest.mark.parametrize(("incoming", "placed", "expected"), CASES)
def test_filter(incoming: Any, placed: Any, expected: list[tuple[str, str]]) -> None:
    pl = plugin({"ns-a": {"team": "a"}, "ns-b": {"team": "b"}, "default": {}, "other": {}})
    assert run_filter(pl, incoming, make_table([N1, N2, N3, N4], placed)) == expected


def test_prefilter_skips_without_terms_or_matching_existing_anti_affinity() -> None:
    pl = plugin()
    tbl = make_table([N1], {"n1": [make_pod("e").pod_anti_affinity(term(HOST, {"app": "x"})).info()]})
    _, s = pl.pre_filter(CycleState(), make_pod("in").label(app="web").info(), tbl)
    assert s.code.name == "SKIP"
    _, s = pl.pre_filter(CycleState(), make_pod("in2").label(app="x").info(), tbl)
    assert s.is_success()


def test_remove_and_add_pod_update_the_cycle_state_only() -> None:
    pl = plugin()
    victim = make_pod("victim").label(app="web").info()
    tbl = make_table([N1, N2], {"n1": [victim]})
    incoming = make_pod("in").label(app="web").pod_anti_affinity(term(HOST, {"app": "web"})).info()
    state = CycleState()
    pl.pre_filter(state, incoming, tbl)
    assert not pl.filter(state, incoming, tbl.info(0)).is_success()
    clone = state.clone()
    pl.remove_pod(clone, incoming, victim, tbl.info(0))
    assert pl.filter(clone, incoming, tbl.info(0)).is_success()
    assert pl.filter_nodes(clone, incoming, tbl).passed.tolist() == [True, True]
    # the original state is untouched
    assert pl.filter_nodes(state, incoming, tbl).passed.tolist() == [False, True]
    pl.add_pod(clone, incoming, make_pod("other").label(app="web").info(), tbl.info(1))
    assert pl.filter_nodes(clone, incoming, tbl).passed.tolist() == [True, False]


def test_match_label_keys_are_merged_into_the_selector() -> None:
    pl = plugin()
    t = dict(term(HOST, {"app": "web"}), matchLabelKeys=["version"])
    incoming = make_pod("in").label(app="web", version="v2").pod_anti_affinity(t).info()
    tbl = make_table(
        [N1, N2],
        {
            "n1": [make_pod("a").label(app="web", version="v1").info()],
            "n2": [make_pod("b").label(app="web", version="v2").info()],
        },
    )
    assert run_filter(pl, incoming, tbl) == [OK, ANTI]
    t2 = dict(term(HOST, {"app": "web"}), mismatchLabelKeys=["version"])
    incoming2 = make_pod("in2").label(app="web", version="v2").pod_anti_affinity(t2).info()
    assert run_filter(pl, incoming2, tbl) == [ANTI, OK]
