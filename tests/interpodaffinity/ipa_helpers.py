"""Builders and runners for the InterPodAffinity tests (kube's MakePod/MakeNode style)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from berth.api.labels import Selector
from berth.scheduler.framework import Code, CycleState, NodeTable, PodInfo
from berth.scheduler.plugins.interpodaffinity import InterPodAffinity, parse_args

_uid = itertools.count()
ZONE = "zone"
REGION = "region"
HOST = "kubernetes.io/hostname"


def node(name: str, **labels: str) -> dict[str, Any]:
    """A Node with the given labels (keyword ``hostname`` maps to kubernetes.io/hostname)."""
    lbl = {(HOST if k == "hostname" else k): v for k, v in labels.items()}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": lbl},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


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


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    """A label selector requirement."""
    d: dict[str, Any] = {"key": key, "operator": op}
    if values:
        d["values"] = list(values)
    return d


def weighted(weight: int, t: Mapping[str, Any]) -> dict[str, Any]:
    """A WeightedPodAffinityTerm."""
    return {"weight": weight, "podAffinityTerm": dict(t)}


def pod(
    name: str = "p",
    labels: Mapping[str, str] | None = None,
    *,
    namespace: str = "default",
    affinity: Sequence[Mapping[str, Any]] = (),
    anti: Sequence[Mapping[str, Any]] = (),
    pref_affinity: Sequence[Mapping[str, Any]] = (),
    pref_anti: Sequence[Mapping[str, Any]] = (),
    priority: int | None = None,
) -> PodInfo:
    """A compiled pod with the given pod (anti-)affinity terms."""
    aff: dict[str, Any] = {}
    if affinity or pref_affinity:
        pa: dict[str, Any] = {}
        if affinity:
            pa["requiredDuringSchedulingIgnoredDuringExecution"] = [dict(t) for t in affinity]
        if pref_affinity:
            pa["preferredDuringSchedulingIgnoredDuringExecution"] = [dict(t) for t in pref_affinity]
        aff["podAffinity"] = pa
    if anti or pref_anti:
        pa = {}
        if anti:
            pa["requiredDuringSchedulingIgnoredDuringExecution"] = [dict(t) for t in anti]
        if pref_anti:
            pa["preferredDuringSchedulingIgnoredDuringExecution"] = [dict(t) for t in pref_anti]
        aff["podAntiAffinity"] = pa
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if aff:
        spec["affinity"] = aff
    if priority is not None:
        spec["priority"] = priority
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}-{next(_uid)}"}
    if labels:
        meta["labels"] = dict(labels)
    return PodInfo({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


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


def table(
    nodes: Sequence[Mapping[str, Any]], placed: Mapping[str, Sequence[PodInfo]] | None = None
) -> NodeTable:
    """A NodeTable with pods placed on nodes by name."""
    t = NodeTable(capacity=4)
    for n in nodes:
        t.set_node(n)
    for name, pods in (placed or {}).items():
        for p in pods:
            t.add_pod(t.index[name], p)
    return t


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
