"""PodAffinityTerms, a plugin with a fake handle, and Filter/Score runners for the InterPodAffinity tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from berth.api.labels import Selector
from berth.scheduler.framework import Code, CycleState, NodeTable, PodInfo
from berth.scheduler.plugins.interpodaffinity import InterPodAffinity, parse_args

ZONE = "zone"
REGION = "region"
HOST = "kubernetes.io/hostname"


def term(
    key: str = REGION,
    match: Mapping[str, str] | None = None,
    exprs: Sequence[Mapping[str, Any]] | None = None,
    namespaces: Sequence[str] | None = None,
    ns_selector: Mapping[str, Any] | None = None,
    nil_selector: bool = False,
) -> dict[str, Any]:
    """A PodAffinityTerm."""
    t: dict[str, Any] = {"topologyKey": key}
    if not nil_selector:
        sel: dict[str, Any] = {}
        if match:
            sel["matchLabels"] = dict(match)
        if exprs:
            sel["matchExpressions"] = [dict(e) for e in exprs]
        t["labelSelector"] = sel
    if namespaces is not None:
        t["namespaces"] = list(namespaces)
    if ns_selector is not None:
        t["namespaceSelector"] = dict(ns_selector)
    return t


def weighted(weight: int, t: Mapping[str, Any]) -> dict[str, Any]:
    """A WeightedPodAffinityTerm."""
    return {"weight": weight, "podAffinityTerm": dict(t)}


class FakeClient:
    """Namespaces for namespaceSelector lookups."""

    def __init__(self, namespaces: Mapping[str, Mapping[str, str]]) -> None:
        self.ns = {n: {"metadata": {"name": n, "labels": dict(lbl)}} for n, lbl in namespaces.items()}

    def get(self, key: tuple[str, str], namespace: str, name: str) -> dict[str, Any]:
        """A Namespace or KeyError."""
        assert key == ("", "Namespace")
        return self.ns[name]

    def list(
        self, key: tuple[str, str], namespace: str | None = None, *, label_selector: Any = None, **_: Any
    ) -> tuple[list[dict[str, Any]], str]:
        """Namespaces matching ``label_selector``."""
        assert key == ("", "Namespace")
        sel: Selector | None = label_selector
        items = [o for o in self.ns.values() if sel is None or sel.matches(o["metadata"]["labels"])]
        return items, "1"


class FakeHandle:
    """Just a client."""

    def __init__(self, namespaces: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.client = FakeClient(namespaces or {})


def plugin(namespaces: Mapping[str, Mapping[str, str]] | None = None, **args: Any) -> InterPodAffinity:
    """The plugin with args and a fake handle."""
    return InterPodAffinity(parse_args(args), FakeHandle(namespaces))  # type: ignore[arg-type]


def run_filter(pl: InterPodAffinity, incoming: PodInfo, tbl: NodeTable) -> list[tuple[str, str]]:
    """Per node, ("", "") when it passes, else (code name, reason); asserts both forms agree."""
    state = CycleState()
    _, s = pl.pre_filter(state, incoming, tbl)
    if s.code == Code.SKIP:
        return [("", "")] * tbl.size
    assert s.is_success(), s
    v = pl.filter_nodes(state, incoming, tbl)
    out = []
    for i in range(tbl.size):
        per_node = pl.filter(state, incoming, tbl.info(i))
        batched = v.status_of(i)
        assert per_node == batched, (tbl.names[i], per_node, batched)
        out.append(("", "") if per_node.is_success() else (per_node.code.name, per_node.message))
    return out


def run_score(pl: InterPodAffinity, incoming: PodInfo, tbl: NodeTable) -> tuple[list[int], list[int]] | None:
    """(raw, normalised) scores over every node, or None when PreScore skips; asserts both forms agree."""
    state = CycleState()
    idx = np.arange(tbl.size, dtype=np.int64)
    s = pl.pre_score(state, incoming, tbl, idx)
    if s.code == Code.SKIP:
        return None
    assert s.is_success(), s
    raw = pl.score_nodes(state, incoming, tbl, idx)
    per_node = [pl.score(state, incoming, tbl.info(i)) for i in range(tbl.size)]
    assert raw.tolist() == per_node
    return raw.tolist(), pl.normalize_scores(state, incoming, raw).tolist()
