"""Incremental per-node-row counts of pods, kept across scheduling cycles.

* A *matcher* (namespaces + label selector, or an AND of several) has a vector: how many pods on each row
  it selects. The incoming pod's terms read these instead of walking every pod of the cluster.
* The *existing terms* index groups the (anti-)affinity terms carried by pods already placed: per distinct
  term, how many pods on each row carry it. Each cycle only the distinct terms are tested against the
  incoming pod.

Both follow the NodeTable's change log: only rows whose pods changed since the last cycle are re-examined
(by diffing the row's pods against a snapshot); a table whose rows moved is re-read in full.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from berth.api.podaffinity import AffinityTerm, PodAffinityTerms
from berth.scheduler.framework import NodeTable, PodInfo
from berth.scheduler.framework.nodetable import IntArray
from berth.scheduler.plugins.interpodaffinity.terms import MatcherKey, pod_terms

MAX_MATCHERS = 256
IDLE_CYCLES = 20_000  # a matcher unused for this many cycles is dropped when a new one is made


class Counts:
    """A per-row count vector and its total."""

    __slots__ = ("rows", "total")

    def __init__(self, capacity: int) -> None:
        self.rows: IntArray = np.zeros(capacity, dtype=np.int64)
        self.total = 0


class Matcher:
    """Per-row number of pods selected by every part of ``key``."""

    __slots__ = ("key", "last_used", "rows")

    def __init__(self, key: MatcherKey, capacity: int) -> None:
        self.key = key
        self.rows: IntArray = np.zeros(capacity, dtype=np.int64)
        self.last_used = 0

    def matches(self, pod: PodInfo) -> bool:
        """Whether ``pod`` is selected."""
        ns = pod.namespace
        labels = pod.labels
        for names, every, selector in self.key:
            if not (every or ns in names) or not selector.matches(labels):
                return False
        return True


TermKey = Any  # AffinityTerm, or (AffinityTerm, signed weight) for preferred terms


class PodIndex:
    """Matchers and existing-pod terms over the rows of one NodeTable."""

    def __init__(self) -> None:
        self.table: NodeTable | None = None
        self.tick = 0
        self.matchers: dict[MatcherKey, Matcher] = {}
        # required anti-affinity / required affinity / preferred (term, ±weight) of placed pods
        self.anti: dict[AffinityTerm, Counts] = {}
        self.hard: dict[AffinityTerm, Counts] = {}
        self.preferred: dict[tuple[AffinityTerm, int], Counts] = {}
        self._cap = 0
        self._layout = -1
        self._epoch = -1
        self._pos = 0
        self._names: list[str] = []
        self._snap: list[dict[str, PodInfo]] = []

    # ----- keeping up with the table ---------------------------------------------------------
    def sync(self, table: NodeTable) -> None:
        """Bring every count up to date with ``table``."""
        self.tick += 1
        if table is not self.table:
            self._rebuild(table)
            return
        if table.layout != self._layout:
            old = len(self._names)
            if table.size < old or table.names[:old] != self._names:
                self._rebuild(table)
                return
            self._names = list(table.names)
            self._snap.extend({} for _ in range(table.size - old))
            self._ensure_capacity(table.size)
            self._layout = table.layout
        rows = table.rows_changed_since(self._epoch, self._pos)
        if rows is None:
            self._rebuild(table)
            return
        self._pos = len(table.change_log)
        if not rows:
            return
        snap = self._snap
        if max(rows) >= len(snap):
            # a node added and removed again since the last sync left rows in the log that no longer exist
            self._rebuild(table)
            return
        pods = table.pods
        for r in set(rows):
            old_pods = snap[r]
            cur = pods[r]
            for uid, p in old_pods.items():
                if cur.get(uid) is not p:
                    self._apply(r, p, -1)
            for uid, p in cur.items():
                if old_pods.get(uid) is not p:
                    self._apply(r, p, 1)
            snap[r] = dict(cur)

    def _rebuild(self, table: NodeTable) -> None:
        self.table = table
        self._layout = table.layout
        self._epoch = table.change_epoch
        self._pos = len(table.change_log)
        self._names = list(table.names)
        self._snap = [dict(p) for p in table.pods]
        self._cap = 0
        self._ensure_capacity(table.size)
        self.anti.clear()
        self.hard.clear()
        self.preferred.clear()
        for m in self.matchers.values():
            m.rows[:] = 0
        matchers = list(self.matchers.values())
        for r, row_pods in enumerate(self._snap):
            for p in row_pods.values():
                terms = pod_terms(p)
                if not terms.empty:
                    self._apply_terms(r, terms, 1)
                for m in matchers:
                    if m.matches(p):
                        m.rows[r] += 1

    def _ensure_capacity(self, size: int) -> None:
        if size <= self._cap:
            return
        cap = max(64, size + size // 4)

        def grow(a: IntArray) -> IntArray:
            out: IntArray = np.zeros(cap, dtype=np.int64)
            out[: len(a)] = a
            return out

        for m in self.matchers.values():
            m.rows = grow(m.rows)
        for c in (*self.anti.values(), *self.hard.values(), *self.preferred.values()):
            c.rows = grow(c.rows)
        self._cap = cap

    def _apply(self, row: int, pod: PodInfo, sign: int) -> None:
        for m in self.matchers.values():
            if m.matches(pod):
                m.rows[row] += sign
        terms = pod_terms(pod)
        if not terms.empty:
            self._apply_terms(row, terms, sign)

    def _apply_terms(self, row: int, terms: PodAffinityTerms, sign: int) -> None:
        for t in terms.required_anti_affinity:
            _bump(self.anti, t, row, sign, self._cap)
        for t in terms.required_affinity:
            _bump(self.hard, t, row, sign, self._cap)
        for w in terms.preferred_affinity:
            _bump(self.preferred, (w.term, w.weight), row, sign, self._cap)
        for w in terms.preferred_anti_affinity:
            _bump(self.preferred, (w.term, -w.weight), row, sign, self._cap)

    # ----- reading -----------------------------------------------------------------------------
    def counts(self, key: MatcherKey) -> IntArray:
        """Per-row number of pods matching ``key`` (live rows only; call after ``sync``)."""
        m = self.matchers.get(key)
        if m is None:
            m = self._new_matcher(key)
        m.last_used = self.tick
        assert self.table is not None
        return m.rows[: self.table.size]

    def _new_matcher(self, key: MatcherKey) -> Matcher:
        if len(self.matchers) >= MAX_MATCHERS:
            idle = [k for k, m in self.matchers.items() if self.tick - m.last_used > IDLE_CYCLES]
            if not idle:
                oldest = min(self.matchers.values(), key=lambda m: m.last_used)
                idle = [oldest.key]
            for k in idle:
                del self.matchers[k]
        m = Matcher(key, self._cap)
        for r, row_pods in enumerate(self._snap):
            c = 0
            for p in row_pods.values():
                if m.matches(p):
                    c += 1
            if c:
                m.rows[r] = c
        self.matchers[key] = m
        return m


def _bump(d: dict[Any, Counts], key: Any, row: int, sign: int, cap: int) -> None:
    c = d.get(key)
    if c is None:
        c = d[key] = Counts(cap)
    c.rows[row] += sign
    c.total += sign
    if c.total == 0:
        del d[key]
