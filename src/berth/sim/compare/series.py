"""The series one run of ``berth compare --report-html`` records and ships back with its outcome: small enough
for 60 runs to travel from worker processes (at most about `MAX_POINTS` points a series).

* A scenario: the `Timeline`'s samples every ``--sample`` of virtual time (``x``, seconds): cluster utilisation
  per resource (requested / allocatable, None while nothing of it is allocatable), pending pods, scheduled pods
  (cumulative) and preemption victims (cumulative, the ``preemptions`` metric), every ``stride``-th sample when
  the run has more than `MAX_POINTS` samples (the runs of one workload sample the same times: 0 to its end).
* A trace: the per-arrival GPU allocation, arrived and fragmentation ratios (``berth trace openb``'s), at every
  ``stride``-th arrival (``x``, the arrival number, from 1). The stride is the workload's, the same in every
  run, so that the runs of one workload share their points.

Without ``--report-html`` nothing here runs.
"""

from __future__ import annotations

import math
from typing import Any

MAX_POINTS = 500
"""About the most points of one run's series."""

Series = dict[str, Any]


def stride(points: int) -> int:
    """Keep every stride-th of ``points`` points: at most `MAX_POINTS` of them."""
    return max(1, math.ceil(points / MAX_POINTS))


def timeline_series(timeline: Any) -> Series:
    """The series of a scenario run from its finished `berth.sim.timeline.Timeline`."""
    keep = range(
        0, len(timeline.time), stride(len(timeline.time))
    )  # the same count in every run: 0 to the end
    utilisation: dict[str, list[float | None]] = {}
    for r in timeline.resources:
        req, alloc = timeline.requested[r], timeline.allocatable[r]
        if any(alloc):
            utilisation[r] = [req[i] / alloc[i] if alloc[i] else None for i in keep]
    return {
        "x": [timeline.time[i] for i in keep],
        "utilisation": utilisation,
        "pending": [timeline.pending[i] for i in keep],
        "scheduled": [timeline.scheduled[i] for i in keep],
        "preemptions": [timeline.victims[i] for i in keep],
    }


def trace_series(result: Any, every: int) -> Series:
    """The series of a trace replay (a `berth.sim.traces.replay.ReplayResult`) at every ``every``-th arrival."""
    keep = range(every - 1, len(result.series_allocation), every)
    return {
        "x": [i + 1 for i in keep],
        "allocation": [result.series_allocation[i] for i in keep],
        "arrived": [result.series_arrived[i] for i in keep],
        "fragmentation": [result.series_fragmentation[i] for i in keep],
    }


__all__ = ["MAX_POINTS", "Series", "stride", "timeline_series", "trace_series"]
