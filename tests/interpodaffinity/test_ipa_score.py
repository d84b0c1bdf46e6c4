"""Score cases after kube's interpodaffinity scoring_test.go: raw sums per topology domain and min-max scaling."""

from __future__ import annotations

from typing import Any

import pytest
from ipa_helpers import HOST, REGION, ZONE, node, plugin, pod, run_score, table, term, weighted

from berth.scheduler.plugins.interpodaffinity import parse_args

N1 = node("n1", region="r1", zone="z11", hostname="n1")
N2 = node("n2", region="r1", zone="z12", hostname="n2")
N3 = node("n3", region="r2", zone="z21", hostname="n3")
N4 = node("n4", zone="z22", hostname="n4")  # no region label
S1 = {"security": "S1"}
S2 = {"security": "S2"}
WEB = {"app": "web"}

EXISTING_TERMS = {
    "n1": [pod("e1", affinity=[term(ZONE, WEB)])],
    "n2": [pod("e2", pref_anti=[weighted(4, term(REGION, WEB))])],
    "n3": [pod("e3", pref_affinity=[weighted(7, term(REGION, WEB))])],
}

CASES: list[Any] = [
    pytest.param({}, pod("in"), {}, None, id="nothing to score: Skip"),
    pytest.param(
        {},
        pod("in", pref_affinity=[weighted(5, term(REGION, S1))]),
        {"n1": [pod("a", S1)], "n2": [pod("b", S2)], "n4": [pod("c", S1)]},
        ([5, 5, 0, 0], [100, 100, 0, 0]),
        id="preferred affinity scores the whole region of a matching pod",
    ),
    pytest.param(
        {},
        pod("in", pref_affinity=[weighted(3, term(ZONE, S2))], pref_anti=[weighted(5, term(REGION, S1))]),
        {"n1": [pod("a", S1)], "n2": [pod("b", S2)], "n4": [pod("c", S1)]},
        ([-5, -2, 0, 0], [0, 60, 100, 100]),
        id="negative scores are scaled from the minimum",
    ),
    pytest.param(
        {},
        pod("in", WEB),
        EXISTING_TERMS,
        ([-3, -4, 7, 0], [9, 0, 100, 36]),
        id="existing pods' required affinity (hard weight 1) and preferred terms",
    ),
    pytest.param(
        {"hardPodAffinityWeight": 0},
        pod("in", WEB),
        EXISTING_TERMS,
        ([-4, -4, 7, 0], [0, 0, 100, 36]),
        id="hardPodAffinityWeight 0 ignores existing required affinity",
    ),
    pytest.param(
        {"hardPodAffinityWeight": 10},
        pod("in", WEB),
        EXISTING_TERMS,
        ([6, -4, 7, 0], [90, 0, 100, 36]),
        id="hardPodAffinityWeight 10",
    ),
    pytest.param(
        {"ignorePreferredTermsOfExistingPods": True},
        pod("in", WEB),
        EXISTING_TERMS,
        None,
        id="ignorePreferredTermsOfExistingPods skips a pod without preferred terms",
    ),
    pytest.param(
        {"ignorePreferredTermsOfExistingPods": True},
        pod("in", WEB, pref_affinity=[weighted(1, term(HOST, S1))]),
        {**EXISTING_TERMS, "n4": [pod("c", S1)]},
        ([-3, -4, 7, 1], [9, 0, 100, 45]),
        id="with its own preferred terms, existing pods' terms still count",
    ),
    pytest.param(
        {},
        pod("in", pref_affinity=[weighted(2, term(HOST, S1))], pref_anti=[weighted(2, term(HOST, S1))]),
        {"n1": [pod("a", S1)]},
        ([0, 0, 0, 0], [0, 0, 0, 0]),
        id="contributions cancelling out still score (all equal: 0)",
    ),
    pytest.param(
        {},
        pod("in", pref_affinity=[weighted(5, term(REGION, S1))]),
        {"n4": [pod("c", S1)]},
        None,
        id="matching pods only on nodes without the key: Skip",
    ),
    pytest.param(
        {},
        pod("in", pref_affinity=[weighted(10, term(HOST, {}, ns_selector={"matchLabels": {"team": "a"}}))]),
        {"n2": [pod("a", namespace="ns-a")], "n3": [pod("b", namespace="ns-b")]},
        ([0, 10, 0, 0], [0, 100, 0, 0]),
        id="namespaceSelector of a preferred term",
    ),
    pytest.param(
        {},
        pod("in", pref_affinity=[weighted(1, term(HOST, S1))]),
        {
            "n1": [pod("a", S1)],
            "n2": [pod("b", S1), pod("c", S1)],
            "n3": [pod(f"d{i}", S1) for i in range(3)],
        },
        ([1, 2, 3, 0], [33, 66, 100, 0]),
        id="counts of matching pods, truncated scaling",
    ),
]


@pytest.mark.parametrize(("args", "incoming", "placed", "expected"), CASES)
def test_score(args: dict[str, Any], incoming: Any, placed: Any, expected: Any) -> None:
    pl = plugin({"ns-a": {"team": "a"}, "ns-b": {"team": "b"}}, **args)
    assert run_score(pl, incoming, table([N1, N2, N3, N4], placed)) == expected


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
    assert str(e.value) == 'InterPodAffinity: unknown field "bogus"'
