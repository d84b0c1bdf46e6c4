"""InterPodAffinity: required pod (anti-)affinity as a filter, preferred terms as a score (kube's plugin)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from berth.api.errors import NotFound
from berth.api.labels import Selector
from berth.scheduler.framework import (
    ClusterEvent,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    NodeTable,
    PodInfo,
    PreFilterResult,
    Status,
    Verdicts,
)
from berth.scheduler.framework.nodetable import BoolArray, IntArray, LabelColumn
from berth.scheduler.framework.plugin import nominated_counted, rows_with_added_pods
from berth.scheduler.plugins.interpodaffinity.args import InterPodAffinityArgs
from berth.scheduler.plugins.interpodaffinity.index import PodIndex
from berth.scheduler.plugins.interpodaffinity.state import FilterState, ScoreState
from berth.scheduler.plugins.interpodaffinity.terms import (
    NAME,
    existing_term_matches,
    merge_all,
    part_of,
    pod_terms,
)

ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME
NAMESPACE_KEY = ("", "Namespace")

_SUCCESS = Status()
_SKIP = Status(Code.SKIP)
_REJECT_AFFINITY = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY,))
_REJECT_ANTI = Status(Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY,))
_REJECT_EXISTING = Status(Code.UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY,))
_STATUSES = (_REJECT_AFFINITY, _REJECT_ANTI, _REJECT_EXISTING)
_NO_STATE = Status(Code.ERROR, (f'reading "{PRE_FILTER_KEY}" from cycleState: not found',))


class _Lazy:
    """A value computed on first use."""

    __slots__ = ("_fn", "_value")

    def __init__(self, fn: Callable[[], Mapping[str, str]]) -> None:
        self._fn = fn
        self._value: Mapping[str, str] | None = None

    def __call__(self) -> Mapping[str, str]:
        if self._value is None:
            self._value = self._fn()
        return self._value


class InterPodAffinity:
    """kube-scheduler's InterPodAffinity over the NodeTable, with counts kept incrementally across cycles."""

    name = NAME

    def __init__(self, args: InterPodAffinityArgs, handle: Handle | None) -> None:
        self.args = args
        self.handle = handle
        self.index = PodIndex()
        self._columns: dict[str, tuple[LabelColumn, BoolArray, bool, Any]] = {}

    # ----- helpers -------------------------------------------------------------------------
    def _list_namespaces(self, selector: Selector) -> list[str]:
        if self.handle is None:
            return []
        objs, _ = self.handle.client.list(NAMESPACE_KEY, label_selector=selector)
        return [str(o["metadata"]["name"]) for o in objs]

    def _namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """The labels of the Namespace object (empty when it does not exist, as kube's snapshot)."""
        if self.handle is None:
            return {}
        try:
            obj = self.handle.client.get(NAMESPACE_KEY, "", namespace)
        except NotFound:
            return {}
        labels: Mapping[str, str] = (obj.get("metadata") or {}).get("labels") or {}
        return labels

    def _domains(self, table: NodeTable, key: str, rows: IntArray) -> IntArray:
        """Per value of label ``key`` (by code, plus a trailing 0), the sum of ``rows`` over its nodes."""
        col = table.label_column(key)
        info = self._columns.get(key)
        if info is None or info[0] is not col:
            valid = col.codes >= 0
            every = bool(valid.all())
            info = (col, valid, every, col.codes if every else col.codes[valid])
            self._columns[key] = info
        size = len(col.vocab) + 1
        if info[2]:
            dom = np.bincount(info[3], weights=rows, minlength=size)
        else:
            dom = np.bincount(info[3], weights=rows[info[1]], minlength=size)
        out: IntArray = dom.astype(np.int64)
        return out

    # ----- filter --------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Count, per topology domain, the pods the incoming pod's required terms select and the placed pods
        whose required anti-affinity selects it; Skip when neither matters."""
        raw = pod_terms(pod)
        index = self.index
        index.sync(table)
        if not index.anti and not raw.required_affinity and not raw.required_anti_affinity:
            return None, _SKIP
        n = table.size
        namespace_labels = _Lazy(lambda: self._namespace_labels(pod.namespace))
        existing_rows: dict[str, IntArray] = {}
        for t, c in index.anti.items():
            if existing_term_matches(t, pod, namespace_labels):
                key = t.topology_key
                prev = existing_rows.get(key)
                existing_rows[key] = c.rows[:n] if prev is None else prev + c.rows[:n]
        existing: dict[str, IntArray] = {}
        for key, rows in existing_rows.items():
            dom = self._domains(table, key, rows)
            if dom.any():
                existing[key] = dom
        if not existing and not raw.required_affinity and not raw.required_anti_affinity:
            return None, _SKIP
        terms = merge_all(raw, self._list_namespaces)
        affinity: dict[str, IntArray] = {}
        if terms.required_affinity:
            rows = index.counts(tuple(part_of(t) for t in terms.required_affinity))
            for t in terms.required_affinity:
                if t.topology_key not in affinity:
                    affinity[t.topology_key] = self._domains(table, t.topology_key, rows)
        anti: dict[str, IntArray] = {}
        for t in terms.required_anti_affinity:
            dom = self._domains(table, t.topology_key, index.counts((part_of(t),)))
            prev = anti.get(t.topology_key)
            anti[t.topology_key] = dom if prev is None else prev + dom
        state.write(
            PRE_FILTER_KEY, FilterState(pod, terms, table, affinity, anti, existing, namespace_labels)
        )
        return None, _SUCCESS

    @property
    def pre_filter_extensions(self) -> InterPodAffinity:
        """AddPod / RemovePod are implemented by the plugin itself."""
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status:
        """Count ``pod_to_add`` on ``node`` in this cycle's state (e.g. a nominated pod)."""
        st: FilterState | None = state.get(PRE_FILTER_KEY)
        if st is not None:
            state.write(PRE_FILTER_KEY, st.updated(pod_to_add, node.labels, 1))
        return _SUCCESS

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status:
        """Stop counting ``pod_to_remove`` on ``node`` in this cycle's state (a preemption victim)."""
        st: FilterState | None = state.get(PRE_FILTER_KEY)
        if st is not None:
            state.write(PRE_FILTER_KEY, st.updated(pod_to_remove, node.labels, -1))
        return _SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Per-node form: affinity first, then the pod's anti-affinity, then existing pods' anti-affinity."""
        st: FilterState | None = state.get(PRE_FILTER_KEY)
        if st is None:
            return _NO_STATE
        return self._with_nominated(st, pod, node, self._check(st, node))

    def _with_nominated(self, st: FilterState, pod: PodInfo, node: NodeInfo, base: Status) -> Status:
        """kube's RunFilterPluginsWithNominatedPods for this plugin: the node must pass with the pods nominated
        to it counted, and without them."""
        nominated = nominated_counted(self.handle, pod, node.name)
        if not nominated or not base.is_success():
            return base
        added = st
        for p in nominated:
            added = added.updated(p, node.labels, 1)
        return self._check(added, node)

    @staticmethod
    def _check(st: FilterState, node: NodeInfo) -> Status:
        labels = node.labels
        if st.affinity_keys:
            pods_exist = True
            for key in st.affinity_keys:
                value = labels.get(key)
                if value is None:
                    return _REJECT_AFFINITY  # every topology key must be on the node
                if st.count(st.affinity, key, value) <= 0:
                    pods_exist = False
            if not pods_exist and not (st.affinity_empty and st.self_match):
                return _REJECT_AFFINITY
        for key in st.anti_keys:
            value = labels.get(key)
            if value is not None and st.count(st.anti, key, value) > 0:
                return _REJECT_ANTI
        for key in st.existing:
            value = labels.get(key)
            if value is not None and st.count(st.existing, key, value) > 0:
                return _REJECT_EXISTING
        return _SUCCESS

    def filter_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        """Batched form over every row."""
        st: FilterState | None = state.get(PRE_FILTER_KEY)
        n = table.size
        if st is None:
            return Verdicts.single(np.zeros(n, dtype=np.bool_), _NO_STATE)
        reject_affinity: BoolArray | None = None
        if st.affinity_keys:
            has_keys = np.ones(n, dtype=np.bool_)
            exist = np.ones(n, dtype=np.bool_)
            for key in st.affinity_keys:
                codes = table.label_column(key).codes
                has_keys &= codes >= 0
                exist &= np.take(st.affinity[key] > 0, codes)
            ok = has_keys if st.affinity_empty and st.self_match else has_keys & exist
            reject_affinity = ~ok
        reject_anti = self._any_positive(table, st.anti, n)
        reject_existing = self._any_positive(table, st.existing, n)
        if reject_affinity is None and reject_anti is None and reject_existing is None:
            return Verdicts.all_pass(n)
        codes_out: IntArray = np.full(n, 2, dtype=np.int64)
        failed = np.zeros(n, dtype=np.bool_)
        for code, mask in ((2, reject_existing), (1, reject_anti), (0, reject_affinity)):
            if mask is not None:
                codes_out[mask] = code
                failed |= mask
        for r in rows_with_added_pods(state, n):
            if failed[r]:
                continue
            s = self._with_nominated(st, pod, table.info(r), _SUCCESS)
            if not s.is_success():
                failed[r] = True
                codes_out[r] = _STATUSES.index(s)
        return Verdicts(~failed, _STATUSES, codes_out)

    @staticmethod
    def _any_positive(table: NodeTable, domains: dict[str, IntArray], n: int) -> BoolArray | None:
        out: BoolArray | None = None
        for key, arr in domains.items():
            hit: BoolArray = np.take(arr > 0, table.label_column(key).codes)
            out = hit if out is None else out | hit
        return out

    # ----- score ---------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, feasible: IntArray) -> Status:
        """Sum, per topology domain, the weights of the preferred terms relating the incoming pod and the placed
        pods (and of placed pods' required affinity, by hardPodAffinityWeight); Skip when nothing applies."""
        if feasible.size == 0:
            return _SKIP
        raw = pod_terms(pod)
        has_constraints = bool(raw.preferred_affinity or raw.preferred_anti_affinity)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return _SKIP
        index = self.index
        index.sync(table)
        hard = self.args.hard_pod_affinity_weight
        if not has_constraints and not index.preferred and not (hard > 0 and index.hard):
            return _SKIP
        n = table.size
        weighted: dict[str, IntArray] = {}
        hits: dict[str, IntArray] = {}

        def add(key: str, rows: IntArray, weight: int) -> None:
            prev = weighted.get(key)
            if prev is None:
                weighted[key] = rows * weight
                hits[key] = rows
            else:
                weighted[key] = prev + rows * weight
                hits[key] = hits[key] + rows

        if has_constraints:
            terms = merge_all(raw, self._list_namespaces)
            for w in terms.preferred_affinity:
                add(w.term.topology_key, index.counts((part_of(w.term),)), w.weight)
            for w in terms.preferred_anti_affinity:
                add(w.term.topology_key, index.counts((part_of(w.term),)), -w.weight)
        namespace_labels = _Lazy(lambda: self._namespace_labels(pod.namespace))
        if hard > 0:
            for t, c in index.hard.items():
                if existing_term_matches(t, pod, namespace_labels):
                    add(t.topology_key, c.rows[:n], hard)
        for (t, weight), c in index.preferred.items():
            if existing_term_matches(t, pod, namespace_labels):
                add(t.topology_key, c.rows[:n], weight)
        scores: IntArray = np.zeros(n, dtype=np.int64)
        domains: dict[str, IntArray] = {}
        for key, rows in weighted.items():
            codes = table.label_column(key).codes
            if not bool(((hits[key] > 0) & (codes >= 0)).any()):
                continue  # no matching pod sits on a node with this key: kube records nothing for it
            dom = self._domains(table, key, rows)
            domains[key] = dom
            scores += np.take(dom, codes)
        if not domains:
            return _SKIP
        state.write(PRE_SCORE_KEY, ScoreState(table, scores, domains))
        return _SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """Per-node form: the sum of the scores of the node's topology domains."""
        st: ScoreState | None = state.get(PRE_SCORE_KEY)
        return 0 if st is None else st.score_of(node.labels)

    def score_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: IntArray) -> IntArray:
        """Batched form over rows ``idx``."""
        st: ScoreState | None = state.get(PRE_SCORE_KEY)
        if st is None:
            return np.zeros(len(idx), dtype=np.int64)
        out: IntArray = st.scores[idx]
        return out

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        """Min-max scaling to 0..100 (all 0 when every score is equal), truncated as kube's float maths."""
        if state.get(PRE_SCORE_KEY) is None or scores.size == 0:
            return scores
        lo = int(scores.min())
        diff = int(scores.max()) - lo
        if diff <= 0:
            return np.zeros_like(scores)
        out: IntArray = (100.0 * ((scores - lo) / float(diff))).astype(np.int64)
        return out

    def events_to_register(self) -> list[ClusterEvent]:
        """Pods coming, going or relabelled, and new or relabelled nodes, may change the verdict."""
        return [
            ClusterEvent("Pod", frozenset({"Add", "Update", "Delete"})),
            ClusterEvent("Node", frozenset({"Add", "Update"})),
        ]
