"""Filter cases after kube's interpodaffinity filtering_test.go, with exact reasons and codes."""

from __future__ import annotations

from typing import Any

import pytest
from ipa_helpers import HOST, REGION, ZONE, expr, node, plugin, pod, run_filter, table, term

from berth.scheduler.framework import CycleState

OK = ("", "")
AFF = ("UNSCHEDULABLE_AND_UNRESOLVABLE", "node(s) didn't match pod affinity rules")
ANTI = ("UNSCHEDULABLE", "node(s) didn't match pod anti-affinity rules")
EXISTING = ("UNSCHEDULABLE", "node(s) didn't satisfy existing pods anti-affinity rules")
SEC = {"service": "securityscan"}

N1 = node("n1", region="r1", zone="z11", hostname="n1")
N2 = node("n2", region="r1", zone="z12", hostname="n2")
N3 = node("n3", region="r2", zone="z21", hostname="n3")
N4 = node("n4", zone="z22", hostname="n4")  # no region label

CASES: list[Any] = [
    pytest.param(pod("in"), {}, [OK, OK, OK, OK], id="no terms, empty cluster"),
    pytest.param(
        pod("in", affinity=[term(REGION, exprs=[expr("service", "In", "securityscan", "value2")])]),
        {"n1": [pod("e", SEC)]},
        [OK, OK, AFF, AFF],
        id="affinity In matches a pod in the region; a node without the key fails",
    ),
    pytest.param(
        pod("in", affinity=[term(REGION, exprs=[expr("service", "NotIn", "securityscan3", "value3")])]),
        {"n1": [pod("e", SEC)]},
        [OK, OK, AFF, AFF],
        id="affinity NotIn",
    ),
    pytest.param(
        pod("in", affinity=[term(REGION, SEC, namespaces=["DiffNameSpace"])]),
        {"n1": [pod("e", SEC)]},
        [AFF, AFF, AFF, AFF],
        id="affinity in another namespace matches nothing (and the pod is not in it)",
    ),
    pytest.param(
        pod("in", affinity=[term(REGION, {"service": "antivirusscan"})]),
        {"n1": [pod("e", SEC)]},
        [AFF, AFF, AFF, AFF],
        id="affinity selector matches no pod",
    ),
    pytest.param(
        pod(
            "in",
            affinity=[
                term(REGION, exprs=[expr("service", "Exists"), expr("wrongkey", "DoesNotExist")]),
                term(
                    REGION,
                    exprs=[expr("service", "In", "securityscan"), expr("service", "NotIn", "WrongValue")],
                ),
            ],
        ),
        {"n1": [pod("e", SEC)]},
        [OK, OK, AFF, AFF],
        id="several terms, all matched by one pod",
    ),
    pytest.param(
        pod(
            "in",
            affinity=[term(REGION, exprs=[expr("service", "Exists"), expr("service", "In", "WrongValue")])],
        ),
        {"n1": [pod("e", SEC)]},
        [AFF, AFF, AFF, AFF],
        id="requirements are ANDed",
    ),
    pytest.param(
        pod("in", affinity=[term(REGION, SEC)], anti=[term(ZONE, {"service": "antivirusscan"})]),
        {"n1": [pod("e", SEC)]},
        [OK, OK, AFF, AFF],
        id="affinity and anti-affinity both satisfied",
    ),
    pytest.param(
        pod("in", affinity=[term(REGION, SEC)], anti=[term(ZONE, SEC)]),
        {"n1": [pod("e", SEC)]},
        [ANTI, OK, AFF, AFF],
        id="affinity satisfied, anti-affinity not in the same zone",
    ),
    pytest.param(
        pod("in", {"app": "web"}, affinity=[term(REGION, SEC)]),
        {"n1": [pod("e", SEC, anti=[term(ZONE, {"app": "web"})])]},
        [EXISTING, OK, AFF, AFF],
        id="symmetry: the existing pod's anti-affinity rejects its zone",
    ),
    pytest.param(
        pod("in", {"app": "web"}),
        {"n1": [pod("e", SEC, anti=[term(REGION, {"app": "web"})])]},
        [EXISTING, EXISTING, OK, OK],
        id="symmetry without own terms: the whole region is rejected",
    ),
    pytest.param(
        pod("in", {"app": "web"}),
        {"n1": [pod("e", SEC, anti=[term(REGION, exprs=[expr("app", "NotIn", "web")])])]},
        [OK, OK, OK, OK],
        id="symmetry term not selecting the incoming pod",
    ),
    pytest.param(
        pod("in", SEC, affinity=[term(REGION, SEC)]),
        {},
        [OK, OK, OK, AFF],
        id="first pod of a group matches its own term (nodes need the key)",
    ),
    pytest.param(
        pod("in", {"service": "other"}, affinity=[term(REGION, SEC)]),
        {},
        [AFF, AFF, AFF, AFF],
        id="no matching pod and the pod does not match its own term",
    ),
    pytest.param(
        pod("in", SEC, affinity=[term(REGION, SEC)]),
        {"n3": [pod("e", SEC)]},
        [AFF, AFF, OK, AFF],
        id="once one pod matches, the first-pod rule no longer applies",
    ),
    pytest.param(
        pod("in", SEC, affinity=[term(REGION, SEC), term(ZONE, SEC)]),
        {"n1": [pod("e", SEC)]},
        [OK, AFF, AFF, AFF],
        id="two topology keys must both hold matching pods",
    ),
    pytest.param(
        pod("in", affinity=[term(REGION, SEC, nil_selector=True)]),
        {"n1": [pod("e", SEC)]},
        [AFF, AFF, AFF, AFF],
        id="nil label selector selects nothing",
    ),
    pytest.param(
        pod("in", anti=[term(HOST, {})]),
        {"n2": [pod("e", {"x": "y"}, namespace="default")], "n3": [pod("f", namespace="other")]},
        [OK, ANTI, OK, OK],
        id="empty selector selects every pod of the namespace",
    ),
    pytest.param(
        pod("in", anti=[term(HOST, {}, ns_selector={})]),
        {"n2": [pod("e", namespace="default")], "n3": [pod("f", namespace="other")]},
        [OK, ANTI, ANTI, OK],
        id="empty namespaceSelector selects every namespace",
    ),
    pytest.param(
        pod("in", anti=[term(HOST, {}, ns_selector={"matchLabels": {"team": "a"}})]),
        {"n1": [pod("e", namespace="ns-a")], "n2": [pod("f", namespace="ns-b")]},
        [ANTI, OK, OK, OK],
        id="namespaceSelector picks namespaces by their labels",
    ),
    pytest.param(
        pod("in", {"app": "db"}, namespace="ns-a"),
        {
            "n1": [
                pod(
                    "e",
                    namespace="ns-b",
                    anti=[term(ZONE, {"app": "db"}, ns_selector={"matchLabels": {"team": "a"}})],
                )
            ],
            "n3": [
                pod(
                    "f",
                    namespace="ns-b",
                    anti=[term(ZONE, {"app": "db"}, ns_selector={"matchLabels": {"team": "b"}})],
                )
            ],
        },
        [EXISTING, OK, OK, OK],
        id="existing pod's namespaceSelector is matched against the incoming pod's namespace labels",
    ),
    pytest.param(
        pod("in", {"app": "web"}, anti=[term(HOST, {"app": "web"})]),
        {"n1": [pod("e", {"app": "web"}, anti=[term(HOST, {"app": "web"})])]},
        [ANTI, OK, OK, OK],
        id="hostname spreading: the pod's own anti-affinity reported first",
    ),
]


@pytest.mark.parametrize(("incoming", "placed", "expected"), CASES)
def test_filter(incoming: Any, placed: Any, expected: list[tuple[str, str]]) -> None:
    pl = plugin({"ns-a": {"team": "a"}, "ns-b": {"team": "b"}, "default": {}, "other": {}})
    assert run_filter(pl, incoming, table([N1, N2, N3, N4], placed)) == expected


def test_prefilter_skips_without_terms_or_matching_existing_anti_affinity() -> None:
    pl = plugin()
    tbl = table([N1], {"n1": [pod("e", anti=[term(HOST, {"app": "x"})])]})
    _, s = pl.pre_filter(CycleState(), pod("in", {"app": "web"}), tbl)
    assert s.code.name == "SKIP"
    _, s = pl.pre_filter(CycleState(), pod("in2", {"app": "x"}), tbl)
    assert s.is_success()


def test_remove_and_add_pod_update_the_cycle_state_only() -> None:
    pl = plugin()
    victim = pod("victim", {"app": "web"})
    tbl = table([N1, N2], {"n1": [victim]})
    incoming = pod("in", {"app": "web"}, anti=[term(HOST, {"app": "web"})])
    state = CycleState()
    pl.pre_filter(state, incoming, tbl)
    assert not pl.filter(state, incoming, tbl.info(0)).is_success()
    clone = state.clone()
    pl.remove_pod(clone, incoming, victim, tbl.info(0))
    assert pl.filter(clone, incoming, tbl.info(0)).is_success()
    assert pl.filter_nodes(clone, incoming, tbl).passed.tolist() == [True, True]
    # the original state is untouched
    assert pl.filter_nodes(state, incoming, tbl).passed.tolist() == [False, True]
    pl.add_pod(clone, incoming, pod("other", {"app": "web"}), tbl.info(1))
    assert pl.filter_nodes(clone, incoming, tbl).passed.tolist() == [True, False]


def test_match_label_keys_are_merged_into_the_selector() -> None:
    pl = plugin()
    t = dict(term(HOST, {"app": "web"}), matchLabelKeys=["version"])
    incoming = pod("in", {"app": "web", "version": "v2"}, anti=[t])
    tbl = table(
        [N1, N2],
        {
            "n1": [pod("a", {"app": "web", "version": "v1"})],
            "n2": [pod("b", {"app": "web", "version": "v2"})],
        },
    )
    assert run_filter(pl, incoming, tbl) == [OK, ANTI]
    t2 = dict(term(HOST, {"app": "web"}), mismatchLabelKeys=["version"])
    incoming2 = pod("in2", {"app": "web", "version": "v2"}, anti=[t2])
    assert run_filter(pl, incoming2, tbl) == [ANTI, OK]
