"""Spread constraints, a plugin with a fake client for the PodTopologySpread tests, run through
PreFilter/Filter and PreScore/Score/NormalizeScore like the framework does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from berth.api.errors import NotFound
from berth.scheduler.framework import CycleState, NodeTable, PodInfo, Status
from berth.scheduler.plugins.podtopologyspread import PodTopologySpread, new

FOO = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
BAR = {"matchExpressions": [{"key": "bar", "operator": "Exists"}]}


def spread(
    max_skew: int,
    key: str,
    when: str = "DoNotSchedule",
    selector: Mapping[str, Any] | None = FOO,
    **extra: Any,
) -> dict[str, Any]:
    """A TopologySpreadConstraint (extra: minDomains, nodeAffinityPolicy, nodeTaintsPolicy, matchLabelKeys)."""
    out: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if selector is not None:
        out["labelSelector"] = dict(selector)
    out.update(extra)
    return out


class FakeClient:
    """Objects by (group, kind) key, namespace and name."""

    def __init__(self, objs: Iterable[Mapping[str, Any]] = ()) -> None:
        self.objs: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        for o in objs:
            group = o["apiVersion"].split("/")[0] if "/" in o["apiVersion"] else ""
            meta = o["metadata"]
            self.objs[(group, o["kind"], meta.get("namespace", "default"), meta["name"])] = dict(o)

    def get(self, key: tuple[str, str], namespace: str, name: str) -> dict[str, Any]:
        """The object, or NotFound."""
        try:
            return self.objs[(key[0], key[1], namespace, name)]
        except KeyError:
            raise NotFound(f'{key[1]} "{name}" not found') from None

    def list(self, key: tuple[str, str], namespace: str | None = None, **kw: Any) -> tuple[list[Any], str]:
        """Objects of a kind in a namespace."""
        out = [o for (g, k, ns, _), o in self.objs.items() if (g, k) == key and ns in (namespace, None)]
        return out, "1"


class FakeHandle:
    """A handle with a client and nominated pods per node."""

    def __init__(self, objs: Iterable[Mapping[str, Any]] = ()) -> None:
        self.client = FakeClient(objs)
        self.nominated: dict[str, list[PodInfo]] = {}

    def nominated_pods(self, node_name: str) -> list[PodInfo]:
        """Pods nominated to the node."""
        return list(self.nominated.get(node_name, ()))


def plugin(
    args: Mapping[str, Any] | None = None, objs: Iterable[Mapping[str, Any]] = ()
) -> PodTopologySpread:
    """A PodTopologySpread with the given args and objects in its client."""
    return new(args or {}, FakeHandle(objs))  # type: ignore[arg-type]


def run_filter(pl: PodTopologySpread, p: PodInfo, t: NodeTable) -> tuple[Status, dict[str, Status]]:
    """PreFilter status and, per node, the batched Filter status (checked against the per-node form)."""
    state = CycleState()
    _, pre = pl.pre_filter(state, p, t)
    if not pre.is_success():
        return pre, {}
    v = pl.filter_nodes(state, p, t)
    out: dict[str, Status] = {}
    for i in range(t.size):
        s = v.status_of(i)
        assert pl.filter(state, p, t.info(i)) == s
        out[t.names[i]] = s
    return pre, out


def run_score(
    pl: PodTopologySpread, p: PodInfo, t: NodeTable, feasible: Sequence[str] | None = None
) -> tuple[Status, dict[str, int], dict[str, int]]:
    """PreScore status, raw and normalised scores of the feasible nodes (batched, checked per node)."""
    names = list(feasible) if feasible is not None else list(t.names)
    idx = np.array([t.index[n] for n in names], dtype=np.int64)
    state = CycleState()
    s = pl.pre_score(state, p, t, idx)
    if not s.is_success():
        return s, {}, {}
    raw = pl.score_nodes(state, p, t, idx)
    per_node = [pl.score(state, p, t.info(int(i))) for i in idx]
    assert raw.tolist() == per_node
    norm = pl.normalize_scores(state, p, raw)
    return s, dict(zip(names, raw.tolist(), strict=True)), dict(zip(names, norm.tolist(), strict=True))
