"""Per-node counts of the pods a (namespace, selector) pair matches, kept up to date incrementally.

kube counts matching pods node by node in every PreFilter/PreScore. Here each distinct matcher keeps
one integer per NodeTable row; a lookup replays only the rows whose pods changed since the matcher was
last read (``NodeTable.rows_changed_since``), and the whole vector is rebuilt only when rows move (a
node is added or removed) or the change log was reset. Terminating pods (deletionTimestamp set) are not
counted, as kube skips them; the plugin reports the nodes of pods that start terminating through
``TerminatingLog`` so those rows are recounted too.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from berth.api.labels import Selector
from berth.scheduler.framework import NodeTable, PodInfo
from berth.scheduler.framework.nodetable import IntArray

MAX_MATCHERS = 256  # matchers kept per table at least (least recently used dropped first)
INDEX_MIN_ROWS = 512
"""Tables at least this large count a new matcher through a label index instead of scanning every pod."""
MATCHER_BYTES = 64 * 1024 * 1024
"""Memory the matchers of one table may take: more matchers on smaller tables (a cluster of 500 workloads
re-placing pods cycles through 500 selectors; an LRU smaller than that rebuilds every count from all pods)."""

MatcherKey = tuple[str, Selector]


def is_terminating(pod: PodInfo) -> bool:
    """Whether the pod has a deletionTimestamp (kube's countPodsMatchSelector skips it)."""
    meta = pod.obj.get("metadata")
    return bool(meta and meta.get("deletionTimestamp"))


def count_matching(pods: Mapping[str, PodInfo], namespace: str, selector: Selector) -> int:
    """Pods of ``namespace`` matching ``selector`` among ``pods``, terminating ones left out."""
    n = 0
    for p in pods.values():
        if p.namespace == namespace and selector.matches(p.labels) and not is_terminating(p):
            n += 1
    return n


class TerminatingLog:
    """Names of nodes whose pods started terminating, in order; readers keep an absolute position."""

    __slots__ = ("base", "names")

    def __init__(self) -> None:
        self.names: list[str] = []
        self.base = 0  # entries trimmed from the front so far

    @property
    def end(self) -> int:
        """The absolute position after the last entry."""
        return self.base + len(self.names)

    def since(self, position: int) -> list[str] | None:
        """Entries after absolute ``position`` (None when some were trimmed: recount everything)."""
        if position < self.base:
            return None
        return self.names[position - self.base :]

    def add(self, node_name: str) -> None:
        """Record that a pod on ``node_name`` got a deletionTimestamp."""
        self.names.append(node_name)
        if len(self.names) > 100_000:
            del self.names[:50_000]
            self.base += 50_000


class _Matcher:
    __slots__ = ("counts", "epoch", "log_position", "position")

    def __init__(self, counts: IntArray, epoch: int, position: int, log_position: int) -> None:
        self.counts = counts
        self.epoch = epoch
        self.position = position
        self.log_position = log_position


class _LabelIndex:
    """For each (namespace, label key, value), the rows that hold (or held) a pod with it: a superset of the
    rows where a selector requiring that label can match, kept current from the table's change log (rows
    are only ever added, so a row whose pod left stays a candidate and simply counts 0)."""

    __slots__ = ("epoch", "position", "rows")

    def __init__(self, table: NodeTable) -> None:
        self.rows: dict[tuple[str, str, str], set[int]] = {}
        for r in range(table.size):
            self._add_row(table, r)
        self.epoch = table.change_epoch
        self.position = len(table.change_log)

    def _add_row(self, table: NodeTable, r: int) -> None:
        rows = self.rows
        for p in table.pods[r].values():
            ns = p.namespace
            for k, v in p.labels.items():
                got = rows.get((ns, k, v))
                if got is None:
                    rows[(ns, k, v)] = {r}
                else:
                    got.add(r)

    def catch_up(self, table: NodeTable) -> bool:
        """Add the rows changed since the last look; False when the change log cannot tell (rebuild)."""
        changed = table.rows_changed_since(self.epoch, self.position)
        if changed is None:
            return False
        for r in set(changed):
            self._add_row(table, r)
        self.epoch = table.change_epoch
        self.position = len(table.change_log)
        return True


class MatchCounts:
    """The matchers of one NodeTable."""

    __slots__ = ("_index", "_layout", "_log", "_matchers")

    def __init__(self, table: NodeTable, log: TerminatingLog) -> None:
        self._layout = table.layout
        self._log = log
        self._matchers: OrderedDict[MatcherKey, _Matcher] = OrderedDict()
        self._index: _LabelIndex | None = None

    def __len__(self) -> int:
        return len(self._matchers)

    def counts(self, table: NodeTable, namespace: str, selector: Selector) -> IntArray:
        """Matching pods per row of ``table`` (read-only; valid until the table changes)."""
        if table.layout != self._layout:
            self._matchers.clear()
            self._index = None
            self._layout = table.layout
        key = (namespace, selector)
        m = self._matchers.get(key)
        if m is not None:
            self._matchers.move_to_end(key)
            if self._refresh(table, m, namespace, selector):
                return m.counts
        m = self._matchers[key] = self._build(table, namespace, selector)
        if len(self._matchers) > max(MAX_MATCHERS, MATCHER_BYTES // (8 * max(1, table.size))):
            self._matchers.popitem(last=False)
        return m.counts

    def _refresh(self, table: NodeTable, m: _Matcher, namespace: str, selector: Selector) -> bool:
        """Recount the rows changed since ``m`` was last read; False when a rebuild is needed instead."""
        rows = table.rows_changed_since(m.epoch, m.position)
        names = self._log.since(m.log_position)
        if rows is None or names is None or len(rows) > table.size:
            return False
        recount: set[int] = set(rows)
        index = table.index
        for name in names:
            r = index.get(name)
            if r is not None:
                recount.add(r)
        if recount:
            pods = table.pods
            counts = m.counts
            for r in recount:
                counts[r] = count_matching(pods[r], namespace, selector)
        m.epoch = table.change_epoch
        m.position = len(table.change_log)
        m.log_position = self._log.end
        return True

    def _build(self, table: NodeTable, namespace: str, selector: Selector) -> _Matcher:
        """A matcher counted from scratch: through the label index when the selector requires a label
        value and the table is large (only the rows that ever held such a pod), else by a full scan."""
        if selector.equalities and table.size >= INDEX_MIN_ROWS:
            index = self._fresh_index(table)
            key, value = selector.equalities[0]
            counts = np.zeros(table.size, dtype=np.int64)
            pods = table.pods
            for r in index.rows.get((namespace, key, value), ()):
                counts[r] = count_matching(pods[r], namespace, selector)
            return _Matcher(counts, index.epoch, index.position, self._log.end)
        counts = np.fromiter(
            (count_matching(pods, namespace, selector) for pods in table.pods),
            dtype=np.int64,
            count=table.size,
        )
        return _Matcher(counts, table.change_epoch, len(table.change_log), self._log.end)

    def _fresh_index(self, table: NodeTable) -> _LabelIndex:
        """The label index, brought up to date with the table."""
        index = self._index
        if index is None or not index.catch_up(table):
            index = self._index = _LabelIndex(table)
        return index


class CountIndex:
    """MatchCounts per NodeTable (weakly keyed), sharing one TerminatingLog."""

    __slots__ = ("_by_table", "log")

    def __init__(self) -> None:
        self.log = TerminatingLog()
        self._by_table: weakref.WeakKeyDictionary[NodeTable, MatchCounts] = weakref.WeakKeyDictionary()

    def counts(self, table: NodeTable, namespace: str, selector: Selector) -> IntArray:
        """Pods of ``namespace`` matching ``selector`` on each row of ``table``."""
        mc = self._by_table.get(table)
        if mc is None:
            mc = self._by_table[table] = MatchCounts(table, self.log)
        return mc.counts(table, namespace, selector)
