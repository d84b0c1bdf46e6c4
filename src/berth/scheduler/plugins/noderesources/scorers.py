"""The resource scorers: LeastAllocated, MostAllocated, RequestedToCapacityRatio and balanced allocation.

Each has a scalar form over per-resource lists (one node) and a vector form over per-resource arrays
(many nodes); both follow kube's integer arithmetic exactly (Go division truncates toward zero).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from berth.scheduler.framework import MAX_NODE_SCORE
from berth.scheduler.framework.nodetable import BoolArray, IntArray
from berth.scheduler.plugins.helpers import go_div, go_div_vec, go_round
from berth.scheduler.plugins.noderesources.args import (
    LEAST_ALLOCATED,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    MOST_ALLOCATED,
    ScoringStrategy,
    UtilizationShapePoint,
)

FloatArray = npt.NDArray[np.float64]


def least_requested_score(requested: int, capacity: int) -> int:
    """(capacity - requested) * 100 / capacity; 0 when over capacity."""
    if capacity == 0 or requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


def most_requested_score(requested: int, capacity: int) -> int:
    """requested * 100 / capacity, with requested capped at capacity."""
    if capacity == 0:
        return 0
    return go_div(min(requested, capacity) * MAX_NODE_SCORE, capacity)


# per scored resource, one value per node
PerResource = Sequence[IntArray]


class Scorer:
    """A weighted resource scorer (the ``scorer`` of kube's resourceAllocationScorer)."""

    def score(self, requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
        """Score one node."""
        raise NotImplementedError

    def score_vec(
        self, requested: PerResource, allocatable: PerResource, weights: Sequence[int], size: int
    ) -> IntArray:
        """Score ``size`` nodes at once."""
        raise NotImplementedError


def _no_zero(a: IntArray) -> bool:
    """Whether no row has zero allocatable (the common, mask-free case)."""
    return int(np.count_nonzero(a)) == a.size


def _all_allocatable(allocatable: PerResource) -> bool:
    """Whether every row has non-zero allocatable for every resource."""
    return bool(allocatable) and all(_no_zero(a) for a in allocatable)


class _Accumulator:
    """Weighted per-row sums of resource scores; rows skip resources with zero allocatable."""

    __slots__ = ("const_weight", "row_weight", "total")

    def __init__(self, size: int) -> None:
        self.total = np.zeros(size, dtype=np.int64)
        self.const_weight = 0
        self.row_weight: IntArray | None = None

    def add(self, scores: IntArray, weight: int, valid: BoolArray | None) -> None:
        """Add ``scores * weight`` on the rows where ``valid`` (None: every row); ``scores`` may be reused."""
        if weight != 1:
            scores *= weight
        if valid is None:
            self.total += scores
            self.const_weight += weight
            return
        scores[~valid] = 0
        self.total += scores
        w = valid * weight
        self.row_weight = w if self.row_weight is None else self.row_weight + w

    def weights(self) -> IntArray | None:
        """Per-row weight sums, or None when every row has the same (``const_weight``)."""
        if self.row_weight is None:
            return None
        return self.row_weight + self.const_weight

    def floor_mean(self) -> IntArray:
        """total / weight sum per row (0 where the weight sum is 0)."""
        w = self.weights()
        if w is None:
            if self.const_weight == 0:
                return np.zeros_like(self.total)
            self.total //= self.const_weight
            return self.total
        out: IntArray = np.where(w > 0, self.total // np.maximum(w, 1), 0)
        return out


def _safe(alloc: IntArray) -> IntArray:
    out: IntArray = np.where(alloc == 0, 1, alloc)
    return out


class _WeightedMean(Scorer):
    """The weighted mean, over the resources with non-zero allocatable, of a per-resource score in 0..100
    (kube's leastResourceScorer and mostResourceScorer); the mean is truncated."""

    @staticmethod
    def resource_score(requested: int, capacity: int) -> int:
        """The score of one resource (``capacity`` > 0)."""
        raise NotImplementedError

    @staticmethod
    def resource_percent_vec(requested: IntArray, allocatable: IntArray) -> IntArray:
        """Per node, the non-negative amount whose share of allocatable, in percent, is the resource's score (a
        new array)."""
        raise NotImplementedError

    def score(self, requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
        """Score one node."""
        resource_score = self.resource_score
        total = wsum = 0
        for r, a, w in zip(requested, allocatable, weights, strict=True):
            if a == 0:
                continue
            total += resource_score(r, a) * w
            wsum += w
        return go_div(total, wsum) if wsum else 0

    def score_vec(
        self, requested: PerResource, allocatable: PerResource, weights: Sequence[int], size: int
    ) -> IntArray:
        """Score ``size`` nodes at once."""
        acc = _Accumulator(size)
        for r, a, w in zip(requested, allocatable, weights, strict=True):
            full = _no_zero(a)
            s = self.resource_percent_vec(r, a)
            s *= MAX_NODE_SCORE
            s //= a if full else _safe(a)
            acc.add(s, w, None if full else a != 0)
        return acc.floor_mean()


class LeastAllocated(_WeightedMean):
    """Favors nodes with more free capacity: weighted mean of (1 - requested/allocatable) * 100."""

    resource_score = staticmethod(least_requested_score)

    def score(self, requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
        """Score one node (as the weighted mean of :func:`least_requested_score`, in non-negative integers
        where Go's truncating division is the floor division)."""
        total = wsum = 0
        for r, a, w in zip(requested, allocatable, weights, strict=True):
            if a == 0:
                continue
            if a < 0 or w < 0:
                return super().score(requested, allocatable, weights)
            if r <= a:
                total += (a - r) * MAX_NODE_SCORE // a * w
            wsum += w
        return total // wsum if wsum else 0

    @staticmethod
    def resource_percent_vec(requested: IntArray, allocatable: IntArray) -> IntArray:
        """What is left free: allocatable - requested, 0 when over capacity (kube's explicit 0)."""
        s = allocatable - requested
        np.maximum(s, 0, out=s)
        return s


class MostAllocated(_WeightedMean):
    """Favors fuller nodes: weighted mean of requested/allocatable * 100 (capped at 100)."""

    resource_score = staticmethod(most_requested_score)

    @staticmethod
    def resource_percent_vec(requested: IntArray, allocatable: IntArray) -> IntArray:
        """What is requested, capped at allocatable."""
        out: IntArray = np.minimum(requested, allocatable)
        return out


class RequestedToCapacityRatio(Scorer):
    """A broken-linear function of utilization (shape scores scaled from 0..10 to 0..100)."""

    def __init__(self, shape: Sequence[UtilizationShapePoint]) -> None:
        scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        self.utilization = tuple(p.utilization for p in shape)
        self.scores = tuple(p.score * scale for p in shape)

    def raw(self, p: int) -> int:
        """kube's BuildBrokenLinearFunction at utilization ``p``."""
        u, s = self.utilization, self.scores
        for i in range(len(u)):
            if p <= u[i]:
                if i == 0:
                    return s[0]
                return s[i - 1] + go_div((s[i] - s[i - 1]) * (p - u[i - 1]), u[i] - u[i - 1])
        return s[-1]

    def raw_vec(self, p: IntArray) -> IntArray:
        """Vector form of :meth:`raw`."""
        u, s = self.utilization, self.scores
        out = np.full(p.shape, s[-1], dtype=np.int64)
        for i in range(len(u) - 1, -1, -1):  # the smallest i with p <= u[i] wins
            if i == 0:
                val = np.full(p.shape, s[0], dtype=np.int64)
            else:
                val = s[i - 1] + go_div_vec((s[i] - s[i - 1]) * (p - u[i - 1]), u[i] - u[i - 1])
            out = np.where(p <= u[i], val, out)
        return out

    def resource_score(self, requested: int, capacity: int) -> int:
        """The function at requested/capacity utilization (over capacity counts as full)."""
        if capacity == 0 or requested > capacity:
            return self.raw(MAX_UTILIZATION)
        return self.raw(go_div(requested * MAX_UTILIZATION, capacity))

    def score(self, requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
        """Score one node: rounded weighted mean of the positive resource scores."""
        total = wsum = 0
        for r, a, w in zip(requested, allocatable, weights, strict=True):
            if a == 0:
                continue
            s = self.resource_score(r, a)
            if s > 0:
                total += s * w
                wsum += w
        if wsum == 0:
            return 0
        return go_round(float(total) / float(wsum))

    def score_vec(
        self, requested: PerResource, allocatable: PerResource, weights: Sequence[int], size: int
    ) -> IntArray:
        """Score ``size`` nodes at once: rounded weighted mean of the positive resource scores."""
        total = np.zeros(size, dtype=np.int64)
        wsum = np.zeros(size, dtype=np.int64)
        for r, a, w in zip(requested, allocatable, weights, strict=True):
            valid = a != 0
            util = np.where(r > a, MAX_UTILIZATION, r * MAX_UTILIZATION // _safe(a))
            s = self.raw_vec(util)
            take = valid & (s > 0)
            total += np.where(take, s * w, 0)
            wsum += take * w
        x = total.astype(np.float64) / np.maximum(wsum, 1).astype(np.float64)
        t = np.trunc(x)
        rounded = (t + (x - t >= 0.5)).astype(np.int64)  # values are >= 0: half rounds up, as Go
        out: IntArray = np.where(wsum > 0, rounded, 0)
        return out


def build_scorer(strategy: ScoringStrategy) -> Scorer:
    """The scorer of a NodeResourcesFit scoring strategy."""
    if strategy.type == LEAST_ALLOCATED:
        return LeastAllocated()
    if strategy.type == MOST_ALLOCATED:
        return MostAllocated()
    return RequestedToCapacityRatio(strategy.shape)


def balanced_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """kube's balancedResourceScorer: (1 - std of the capped utilization fractions) * 100, truncated."""
    fractions: list[float] = []
    total = 0.0
    for r, a in zip(requested, allocatable, strict=True):
        if a == 0:
            continue
        f = float(r) / float(a)
        if f > 1:
            f = 1.0
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / float(len(fractions)))
    return int((1 - std) * float(MAX_NODE_SCORE))


def balanced_score_vec(requested: PerResource, allocatable: PerResource, size: int) -> IntArray:
    """Vector form of :func:`balanced_score` (same float operations in the same order)."""
    if len(requested) == 2 and _all_allocatable(allocatable):
        f0 = requested[0] / allocatable[0]
        np.minimum(f0, 1.0, out=f0)
        f1 = requested[1] / allocatable[1]
        np.minimum(f1, 1.0, out=f1)
        f0 -= f1
        f0 /= 2
        np.abs(f0, out=f0)  # std = |f0 - f1| / 2
        np.subtract(1.0, f0, out=f0)
        f0 *= float(MAX_NODE_SCORE)
        fast: IntArray = f0.astype(np.int64)
        return fast
    fracs: list[FloatArray] = []
    valids = []
    total = np.zeros(size, dtype=np.float64)
    count = np.zeros(size, dtype=np.int64)
    first = np.zeros(size, dtype=np.float64)
    second = np.zeros(size, dtype=np.float64)
    for r, a in zip(requested, allocatable, strict=True):
        valid = a != 0
        f = np.minimum(r.astype(np.float64) / _safe(a).astype(np.float64), 1.0)
        f = np.where(valid, f, 0.0)
        total = total + f  # adding 0.0 for skipped resources is exact
        first = np.where(valid & (count == 0), f, first)
        second = np.where(valid & (count == 1), f, second)
        count += valid
        fracs.append(f)
        valids.append(valid)
    std = np.zeros(size, dtype=np.float64)
    two = count == 2
    if two.any():
        std = np.where(two, np.abs((first - second) / 2), std)
    many = count > 2
    if many.any():
        cnt = np.maximum(count, 1).astype(np.float64)
        mean = total / cnt
        acc = np.zeros(size, dtype=np.float64)
        for f, valid in zip(fracs, valids, strict=True):
            d = f - mean
            acc = acc + np.where(valid, d * d, 0.0)
        std = np.where(many, np.sqrt(acc / cnt), std)
    out: IntArray = ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
    return out


class BalancedScorer(Scorer):
    """kube's balancedResourceScorer as a Scorer (the resources' weights, all 1, take no part)."""

    def score(self, requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]) -> int:
        """Score one node: :func:`balanced_score`."""
        return balanced_score(requested, allocatable)

    def score_vec(
        self, requested: PerResource, allocatable: PerResource, weights: Sequence[int], size: int
    ) -> IntArray:
        """Score ``size`` nodes at once: :func:`balanced_score_vec`."""
        return balanced_score_vec(requested, allocatable, size)
