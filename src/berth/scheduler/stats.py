"""The scheduling loop's counters and histograms (what /metrics reports of the scheduler).

``SchedulerStats`` is owned by the Scheduler and updated by the scheduling and binding cycles; the
histograms use kube-scheduler's buckets so that the exported series compare one to one.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

# kube-scheduler's histogram buckets (upper bounds): attempt durations (ExponentialBuckets(0.001, 2, 15)),
# victims per preemption (ExponentialBuckets(1, 2, 7)), attempts per scheduled pod (ExponentialBuckets(1, 2, 5))
ATTEMPT_DURATION_BUCKETS = tuple(0.001 * 2**i for i in range(15))
PREEMPTION_VICTIMS_BUCKETS = tuple(float(2**i) for i in range(7))
POD_ATTEMPTS_BUCKETS = tuple(float(2**i) for i in range(5))


@dataclass(slots=True)
class Histogram:
    """A Prometheus-style histogram kept as plain counts: ``counts[i]`` observations fell in bucket ``i``
    (``bounds[i-1] < v <= bounds[i]``; the last one is ``+Inf``), not cumulative."""

    bounds: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.bounds) + 1)

    def observe(self, value: float) -> None:
        """Count one observation."""
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value

    @property
    def count(self) -> int:
        """Observations so far."""
        return sum(self.counts)


@dataclass(slots=True)
class SchedulerStats:
    """Counters of the scheduling loop."""

    attempts: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    loop_seconds: float = 0.0
    # attempts of pods an idle scheduler took from backoffQ early (SchedulerPopFromBackoffQ), and their time
    early_attempts: int = 0
    early_seconds: float = 0.0
    # for /metrics: attempt durations by (result, profile), result being scheduled, unschedulable or error
    attempt_durations: dict[tuple[str, str], Histogram] = field(default_factory=dict)
    preemption_attempts: int = 0  # runs of a preemption PostFilter
    preemption_victims: Histogram = field(default_factory=lambda: Histogram(PREEMPTION_VICTIMS_BUCKETS))
    pod_attempts: Histogram = field(default_factory=lambda: Histogram(POD_ATTEMPTS_BUCKETS))

    def observe_attempt(self, result: str, profile: str, seconds: float) -> None:
        """Count one finished attempt of ``profile`` ending in ``result`` that took ``seconds``."""
        h = self.attempt_durations.get((result, profile))
        if h is None:
            h = self.attempt_durations[(result, profile)] = Histogram(ATTEMPT_DURATION_BUCKETS)
        h.observe(seconds)
