"""Per-cycle state of InterPodAffinity: topology-domain counts for Filter, domain scores for Score.

Domain arrays are indexed by the integer code of a topology value in the NodeTable's label column of that
key, with one extra trailing zero so that rows lacking the key (code -1) read 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from berth.api.podaffinity import PodAffinityTerms
from berth.scheduler.framework import NodeTable, PodInfo
from berth.scheduler.framework.nodetable import IntArray, LabelColumn
from berth.scheduler.plugins.interpodaffinity.terms import (
    existing_term_matches,
    part_matches,
    part_of,
    pod_terms,
)


class FilterState:
    """What Filter needs: per topology key, how many relevant pods each domain holds.

    ``affinity``: pods matching all the incoming pod's required affinity terms; ``anti``: pods matching one
    of its required anti-affinity terms; ``existing``: placed pods whose required anti-affinity terms
    select the incoming pod. Immutable once written: AddPod/RemovePod write an updated copy.
    """

    __slots__ = (
        "affinity",
        "affinity_empty",
        "affinity_keys",
        "anti",
        "anti_keys",
        "existing",
        "namespace_labels",
        "pod",
        "self_match",
        "table",
        "terms",
    )

    def __init__(
        self,
        pod: PodInfo,
        terms: PodAffinityTerms,
        table: NodeTable,
        affinity: dict[str, IntArray],
        anti: dict[str, IntArray],
        existing: dict[str, IntArray],
        namespace_labels: Callable[[], Mapping[str, str]],
    ) -> None:
        self.pod = pod
        self.terms = terms
        self.table = table
        self.affinity = affinity
        self.anti = anti
        self.existing = existing
        self.namespace_labels = namespace_labels
        self.affinity_keys = tuple(dict.fromkeys(t.topology_key for t in terms.required_affinity))
        self.anti_keys = tuple(dict.fromkeys(t.topology_key for t in terms.required_anti_affinity))
        self.affinity_empty = not any(bool(d.any()) for d in affinity.values())
        self.self_match = bool(terms.required_affinity) and all(
            part_matches(part_of(t), pod.namespace, pod.labels) for t in terms.required_affinity
        )

    def count(self, domains: dict[str, IntArray], key: str, value: str) -> int:
        """The count of domain ``key=value`` in ``domains`` (0 when unknown)."""
        arr = domains.get(key)
        if arr is None:
            return 0
        code = self.table.label_column(key).vocab.get(value)
        return 0 if code is None else int(arr[code])

    def updated(self, other: PodInfo, labels: Mapping[str, str], sign: int) -> FilterState:
        """A copy as if ``other`` were added (sign 1) to or removed (sign -1) from a node with ``labels``."""
        affinity = dict(self.affinity)
        anti = dict(self.anti)
        existing = dict(self.existing)
        for t in pod_terms(other).required_anti_affinity:
            if existing_term_matches(t, self.pod, self.namespace_labels):
                self._bump(existing, t.topology_key, labels, sign)
        req = self.terms.required_affinity
        if req and all(part_matches(part_of(t), other.namespace, other.labels) for t in req):
            for key in self.affinity_keys:
                self._bump(affinity, key, labels, sign)
        for t in self.terms.required_anti_affinity:
            if part_matches(part_of(t), other.namespace, other.labels):
                self._bump(anti, t.topology_key, labels, sign)
        return FilterState(self.pod, self.terms, self.table, affinity, anti, existing, self.namespace_labels)

    def _bump(self, domains: dict[str, IntArray], key: str, labels: Mapping[str, str], sign: int) -> None:
        value = labels.get(key)
        if value is None:
            return
        col: LabelColumn = self.table.label_column(key)
        code = col.vocab.get(value)
        if code is None:
            return
        arr = domains.get(key)
        out: IntArray = np.zeros(len(col.vocab) + 1, dtype=np.int64) if arr is None else arr.copy()
        out[code] += sign
        domains[key] = out


class ScoreState:
    """The raw score of every row, and per topology key the score of each domain (for the per-node form)."""

    __slots__ = ("domains", "scores", "table")

    def __init__(self, table: NodeTable, scores: IntArray, domains: dict[str, IntArray]) -> None:
        self.table = table
        self.scores = scores
        self.domains = domains

    def score_of(self, labels: Mapping[str, str]) -> int:
        """The sum over topology keys of the score of the node's domain."""
        total = 0
        for key, arr in self.domains.items():
            value = labels.get(key)
            if value is None:
                continue
            code = self.table.label_column(key).vocab.get(value)
            if code is not None:
                total += int(arr[code])
        return total
