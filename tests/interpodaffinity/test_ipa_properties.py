"""Properties: batched and per-node forms agree, and both equal a direct transcription of kube's algorithm
(walking every pod), also after pods come and go between cycles (the incremental index)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ipa_helpers import HOST, plugin, run_filter, run_score, term, weighted

from berth.api.podaffinity import AffinityTerm
from berth.scheduler.framework import NodeTable, PodInfo
from berth.scheduler.plugins.interpodaffinity.terms import pod_terms
from builders import expr, make_node, make_pod, make_table

KEYS = ("zone", "region", HOST)
NAMESPACES = {"default": {"team": "a"}, "ns-b": {"team": "b"}, "ns-c": {}}
AFF = "node(s) didn't match pod affinity rules"
ANTI = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"

labels_st = st.fixed_dictionaries({}, optional={"app": st.sampled_from("ab"), "tier": st.sampled_from("xy")})
selector_st = st.one_of(
    st.builds(lambda m: {"match": m}, labels_st),
    st.builds(lambda v: {"exprs": [expr("app", "NotIn", v)]}, st.sampled_from("ab")),
)
term_st = st.builds(
    lambda key, sel, ns: term(key, **sel, **ns),
    st.sampled_from(KEYS),
    selector_st,
    st.sampled_from(
        [{}, {"namespaces": ["ns-b"]}, {"ns_selector": {}}, {"ns_selector": {"matchLabels": {"team": "a"}}}]
    ),
)
weighted_st = st.builds(weighted, st.integers(1, 100), term_st)


@st.composite
def pod_st(draw: st.DrawFn, name: str) -> PodInfo:
    return (
        make_pod(name)
        .label(draw(labels_st))
        .ns(draw(st.sampled_from(sorted(NAMESPACES))))
        .pod_affinity(*draw(st.lists(term_st, max_size=2)))
        .pod_anti_affinity(*draw(st.lists(term_st, max_size=2)))
        .preferred_pod_affinity(*draw(st.lists(weighted_st, max_size=2)))
        .preferred_pod_anti_affinity(*draw(st.lists(weighted_st, max_size=2)))
        .info()
    )


@st.composite
def node_st(draw: st.DrawFn, i: int) -> dict[str, Any]:
    node = make_node(f"n{i}").unlabel(HOST)
    if draw(st.booleans()):
        node.label(zone=draw(st.sampled_from(("z1", "z2", "z3"))))
    if draw(st.booleans()):
        node.label(region=draw(st.sampled_from(("r1", "r2"))))
    if draw(st.integers(0, 4)):
        node.label({HOST: f"h{i}"})
    return node.obj()


# ----- kube's algorithm, transcribed over every pod ----------------------------------------------------
def _matches(t: AffinityTerm, p: PodInfo, ns_labels: Mapping[str, str]) -> bool:
    return t.matches(p.namespace, p.labels, ns_labels)


def _merged(t: AffinityTerm) -> AffinityTerm:
    sel = t.namespace_selector
    if sel.is_nothing() or sel.is_everything():
        return t
    extra = {n for n, lbl in NAMESPACES.items() if sel.matches(lbl)}
    return AffinityTerm(t.namespaces | extra, type(sel)(_nothing=True), t.selector, t.topology_key)


def reference_filter(incoming: PodInfo, tbl: NodeTable) -> list[str]:
    ns_labels = NAMESPACES[incoming.namespace]
    mine = pod_terms(incoming)
    req = [_merged(t) for t in mine.required_affinity]
    anti = [_merged(t) for t in mine.required_anti_affinity]
    existing: dict[tuple[str, str], int] = {}
    aff: dict[tuple[str, str], int] = {}
    anti_c: dict[tuple[str, str], int] = {}
    for i in range(tbl.size):
        labels = tbl.labels[i]
        for p in tbl.pods[i].values():
            for t in pod_terms(p).required_anti_affinity:
                if _matches(t, incoming, ns_labels) and t.topology_key in labels:
                    k = (t.topology_key, labels[t.topology_key])
                    existing[k] = existing.get(k, 0) + 1
            if req and all(_matches(t, p, {}) for t in req):
                for t in req:
                    if t.topology_key in labels:
                        k = (t.topology_key, labels[t.topology_key])
                        aff[k] = aff.get(k, 0) + 1
            for t in anti:
                if _matches(t, p, {}) and t.topology_key in labels:
                    k = (t.topology_key, labels[t.topology_key])
                    anti_c[k] = anti_c.get(k, 0) + 1
    if not existing and not req and not anti:
        return [""] * tbl.size
    self_match = bool(req) and all(_matches(t, incoming, {}) for t in req)
    out = []
    for i in range(tbl.size):
        labels = tbl.labels[i]
        ok, exist = True, True
        for t in req:
            if t.topology_key not in labels:
                ok = False
            elif aff.get((t.topology_key, labels[t.topology_key]), 0) <= 0:
                exist = False
        if not ok or (not exist and not (not aff and self_match)):
            out.append(AFF)
        elif any(anti_c.get((t.topology_key, labels.get(t.topology_key, "\0")), 0) > 0 for t in anti):
            out.append(ANTI)
        elif any(existing.get((k, v), 0) > 0 for k, v in labels.items()):
            out.append(EXISTING)
        else:
            out.append("")
    return out


def reference_score(incoming: PodInfo, tbl: NodeTable, hard: int) -> list[int] | None:
    ns_labels = NAMESPACES[incoming.namespace]
    mine = pod_terms(incoming)
    topo: dict[str, dict[str, int]] = {}

    def process(
        t: AffinityTerm, w: int, p: PodInfo, nsl: Mapping[str, str], labels: Mapping[str, str]
    ) -> None:
        if _matches(t, p, nsl) and t.topology_key in labels:
            d = topo.setdefault(t.topology_key, {})
            d[labels[t.topology_key]] = d.get(labels[t.topology_key], 0) + w

    for i in range(tbl.size):
        labels = tbl.labels[i]
        for p in tbl.pods[i].values():
            for w in mine.preferred_affinity:
                process(_merged(w.term), w.weight, p, {}, labels)
            for w in mine.preferred_anti_affinity:
                process(_merged(w.term), -w.weight, p, {}, labels)
            theirs = pod_terms(p)
            if hard > 0:
                for t in theirs.required_affinity:
                    process(t, hard, incoming, ns_labels, labels)
            for w in theirs.preferred_affinity:
                process(w.term, w.weight, incoming, ns_labels, labels)
            for w in theirs.preferred_anti_affinity:
                process(w.term, -w.weight, incoming, ns_labels, labels)
    if not topo:
        return None
    return [sum(vals.get(tbl.labels[i].get(k, "\0"), 0) for k, vals in topo.items()) for i in range(tbl.size)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(1, 6), hard=st.integers(0, 3))
def test_forms_agree_with_kube_algorithm_across_cycles(data: st.DataObject, n: int, hard: int) -> None:
    tbl = make_table([data.draw(node_st(i)) for i in range(n)])
    pl = plugin(NAMESPACES, hardPodAffinityWeight=hard)
    placed: list[tuple[int, PodInfo]] = []
    for cycle in range(3):
        # pods come and go between cycles; the plugin keeps its index across them
        for j in range(data.draw(st.integers(0, 4))):
            p = data.draw(pod_st(f"p{cycle}-{j}"))
            row = data.draw(st.integers(0, n - 1))
            tbl.add_pod(row, p)
            placed.append((row, p))
        if placed and data.draw(st.booleans()):
            row, p = placed.pop(data.draw(st.integers(0, len(placed) - 1)))
            tbl.remove_pod(row, p)
        incoming = data.draw(pod_st("incoming"))
        got = [reason for _, reason in run_filter(pl, incoming, tbl)]
        assert got == reference_filter(incoming, tbl)
        scores = run_score(pl, incoming, tbl)
        expected = reference_score(incoming, tbl, hard)
        assert (None if scores is None else scores[0]) == expected
        if scores is not None and expected is not None:
            lo, hi = min(expected), max(expected)
            norm = [int(100 * ((s - lo) / (hi - lo))) if hi > lo else 0 for s in expected]
            assert scores[1] == norm


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_index_survives_node_removal_and_addition(data: st.DataObject) -> None:
    tbl = make_table([make_node(f"n{i}").label({HOST: f"h{i}"}, zone=f"z{i % 2}").obj() for i in range(4)])
    pl = plugin(NAMESPACES)
    for j in range(6):
        tbl.add_pod(data.draw(st.integers(0, 3)), data.draw(pod_st(f"p{j}")))
    incoming = data.draw(pod_st("incoming"))
    run_filter(pl, incoming, tbl)
    tbl.remove_node(tbl.names[data.draw(st.integers(0, 3))])
    tbl.set_node(make_node("n9").label({HOST: "h9"}, zone="z1").obj())
    tbl.add_pod(tbl.index["n9"], data.draw(pod_st("late")))
    got = [reason for _, reason in run_filter(pl, incoming, tbl)]
    assert got == reference_filter(incoming, tbl)
    fresh = plugin(NAMESPACES)
    assert run_score(pl, incoming, tbl) == run_score(fresh, incoming, tbl)
