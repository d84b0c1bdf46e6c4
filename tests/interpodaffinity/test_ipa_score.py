"""Score cases after kube's interpodaffinity scoring_test.go: raw sums per topology domain and min-max scaling."""

from __future__ import annotations

from typing import Any

import pytest
from ipa_helpers import HOST, REGION, ZONE, plugin, run_score, term, weighted

from berth.scheduler.plugins.interpodaffinity import parse_args
from builders import make_node, make_pod, make_table

N1 = make_node("n1").label(region="r1", zone="z11").obj()
N2 = make_node("n2").label(region="r1", zone="z12").obj()
N3 = make_node("n3").label(region="r2", zone="z21").obj()
N4 = make_node("n4").label(zone="z22").obj()  # no region label
S1 = {"security": "S1"}
S2 = {"security": "S2"}
WEB = {"app": "web"}

EXISTING_TERMS = {
    "n1": [make_pod("e1").pod_affinity(term(ZONE, WEB)).info()],
    "n2": [make_pod("e2").preferred_pod_anti_affinity(weighted(4, term(REGION, WEB))).info()],
    "n3": [make_pod("e3").preferred_pod_affinity(weighted(7, term(REGION, WEB))).info()],
}

CASES: list[Any] = [
    pytest.param({}, make_pod("in").info(), {}, None, id="nothing to score: Skip"),
    pytest.param(
        {},
        make_pod("in").preferred_pod_affinity(weighted(5, term(REGION, S1))).info(),
        {
            "n1": [make_pod("a").label(S1).info()],
            "n2": [make_pod("b").label(S2).info()],
            "n4": [make_pod("c").label(S1).info()],
        },
        ([5, 5, 0, 0], [100, 100, 0, 0]),
        id="preferred affinity scores the whole region of a matching pod",
    ),
    pytest.param(
        {},
        make_pod("in")
        .preferred_pod_affinity(weighted(3, term(ZONE, S2)))
        .preferred_pod_anti_affinity(weighted(5, term(REGION, S1)))
        .info(),
        {
            "n1": [make_pod("a").label(S1).info()],
            "n2": [make_pod("b").label(S2).info()],
            "n4": [make_pod("c").label(S1).info()],
        },
        ([-5, -2, 0, 0], [0, 60, 100, 100]),
        id="negative scores are scaled from the minimum",
    ),
    pytest.param(
        {},
        make_pod("in").label(WEB).info(),
        EXISTING_TERMS,
        ([-3, -4, 7, 0], [9, 0, 100, 36]),
        id="existing pods' required affinity (hard weight 1) and preferred terms",
    ),
    pytest.param(
        {"hardPodAffinityWeight": 0},
        make_pod("in").label(WEB).info(),
        EXISTING_TERMS,
        ([-4, -4, 7, 0], [0, 0, 100, 36]),
        id="hardPodAffinityWeight 0 ignores existing required affinity",
    ),
    pytest.param(
        {"hardPodAffinityWeight": 10},
        make_pod("in").label(WEB).info(),
        EXISTING_TERMS,
        ([6, -4, 7, 0], [90, 0, 100, 36]),
        id="hardPodAffinityWeight 10",
    ),
    pytest.param(
        {"ignorePreferredTermsOfExistingPods": True},
        make_pod("in").label(WEB).info(),
        EXISTING_TERMS,
        None,
        id="ignorePreferredTermsOfExistingPods skips a pod without preferred terms",
    ),
    pytest.param(
        {"ignorePreferredTermsOfExistingPods": True},
        make_pod("in").label(WEB).preferred_pod_affinity(weighted(1, term(HOST, S1))).info(),
        {**EXISTING_TERMS, "n4": [make_pod("c").label(S1).info()]},
        ([-3, -4, 7, 1], [9, 0, 100, 45]),
        id="with its own preferred terms, existing pods' terms still count",
    ),
    pytest.param(
        {},
        make_pod("in")
        .preferred_pod_affinity(weighted(2, term(HOST, S1)))
        .preferred_pod_anti_affinity(weighted(2, term(HOST, S1)))
        .info(),
        {"n1": [make_pod("a").label(S1).info()]},
        ([0, 0, 0, 0], [0, 0, 0, 0]),
        id="contributions cancelling out still score (all equal: 0)",
    ),
    pytest.param(
        {},
        make_pod("in").preferred_pod_affinity(weighted(5, term(REGION, S1))).info(),
        {"n4": [make_pod("c").label(S1).info()]},
        None,
        id="matching pods only on nodes without the key: Skip",
    ),
    pytest.param(
        {},
        make_pod("in")
        .preferred_pod_affinity(weighted(10, term(HOST, {}, ns_selector={"matchLabels": {"team": "a"}})))
        .info(),
        {"n2": [make_pod("a").ns("ns-a").info()], "n3": [make_pod("b").ns("ns-b").info()]},
        ([0, 10, 0, 0], [0, 100, 0, 0]),
        id="namespaceSelector of a preferred term",
    ),
    pytest.param(
        {},
        make_pod("in").preferred_pod_affinity(weighted(1, term(HOST, S1))).info(),
        {
            "n1": [make_pod("a").label(S1).info()],
            "n2": [make_pod("b").label(S1).info(), make_pod("c").label(S1).info()],
            "n3": [make_pod(f"d{i}").label(S1).info() for i in range(3)],
        },
        ([1, 2, 3, 0], [33, 66, 100, 0]),
        id="counts of matching pods, truncated scaling",
    ),
]


@pytest.mark.parametrize(("args", "incoming", "placed", "expected"), CASES)
def test_score(args: dict[str, Any], incoming: Any, placed: Any, expected: Any) -> None:
    pl = plugin({"ns-a": {"team": "a"}, "ns-b": {"team": "b"}}, **args)
    assert run_score(pl, incoming, make_table([N1, N2, N3, N4], placed)) == expected


def test_args_defaults_and_validation() -> None:
    a = parse_args({})
    assert (a.hard_pod_affinity_weight, a.ignore_preferred_terms_of_existing_pods) == (1, False)
    with pytest.raises(Exception) as e:
        parse_args({"hardPodAffinityWeight": 101})
    assert (
        str(e.value)
        == "InterPodAffinity: hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"
    )
    with pytest.raises(Exception) as e:
        parse_args({"bogus": 1})
    assert (
        str(e.value)
        == 'decoding args for plugin InterPodAffinity: strict decoding error: unknown field "bogus"'
    )
