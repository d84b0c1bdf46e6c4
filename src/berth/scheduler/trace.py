"""What one scheduling attempt saw: per-node filter verdicts, per-plugin scores and the choice.

``berth explain`` prints these traces, and profiles that enable the ``SchedulingResults`` marker plugin
get them written on their pods as kube-scheduler-simulator's result annotations.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from berth.scheduler.framework import NodeTable, PodInfo, Status
from berth.scheduler.framework.runtime import FilterOutcome, Framework, ScoreOutcome

PASSED = "passed"  # kube-scheduler-simulator's word for a filter a node passed
ANNOTATION_PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
FILTER_RESULT = ANNOTATION_PREFIX + "filter-result"
SCORE_RESULT = ANNOTATION_PREFIX + "score-result"
FINAL_SCORE_RESULT = ANNOTATION_PREFIX + "finalscore-result"
PRE_FILTER_STATUS_RESULT = ANNOTATION_PREFIX + "prefilter-result-status"
SELECTED_NODE = ANNOTATION_PREFIX + "selected-node"
RESULTS_PLUGIN = "SchedulingResults"  # the marker plugin a profile enables to get the annotations


@dataclass(slots=True)
class CycleTrace:
    """One scheduling attempt of one pod, as ``berth explain`` shows it."""

    pod: str
    uid: str
    profile: str
    time: float
    attempt: int
    pre_filter: dict[str, str] = field(default_factory=dict)  # plugin -> "passed" or its rejection
    filter_plugins: list[str] = field(default_factory=list)
    filter: dict[str, dict[str, str]] = field(default_factory=dict)  # node -> plugin -> "passed"/reason
    feasible: list[str] = field(default_factory=list)
    scored: list[str] = field(default_factory=list)  # the feasible nodes that were scored (sampling)
    score_plugins: list[tuple[str, int]] = field(default_factory=list)  # (plugin, weight)
    raw: dict[str, dict[str, int]] = field(default_factory=dict)  # node -> plugin -> raw score
    normalized: dict[str, dict[str, int]] = field(default_factory=dict)  # node -> plugin -> 0..100
    total: dict[str, int] = field(default_factory=dict)  # node -> weighted sum
    selected: str = ""
    note: str = ""  # why scoring was skipped, if it was
    failure: str = ""  # the FailedScheduling message when no node was chosen
    # reservations whose owners match the pod: name, node, result (allocated/matched/refused), reason
    reservations: list[dict[str, str]] = field(default_factory=list)
    explained: bool = False  # a Tracer asked for this attempt

    def final_scores(self) -> dict[str, dict[str, int]]:
        """node -> plugin -> normalised score times the plugin's weight."""
        weights = dict(self.score_plugins)
        return {
            node: {p: v * weights.get(p, 1) for p, v in per.items()} for node, per in self.normalized.items()
        }

    def to_dict(self) -> dict[str, Any]:
        """The trace as plain JSON-ready data."""
        return {
            "pod": self.pod,
            "uid": self.uid,
            "profile": self.profile,
            "time": self.time,
            "attempt": self.attempt,
            "preFilter": self.pre_filter,
            "filterPlugins": self.filter_plugins,
            "filter": self.filter,
            "feasible": self.feasible,
            "scored": self.scored,
            "scorePlugins": [{"name": n, "weight": w} for n, w in self.score_plugins],
            "rawScores": self.raw,
            "normalizedScores": self.normalized,
            "finalScores": self.final_scores(),
            "totalScores": self.total,
            "selected": self.selected,
            "note": self.note,
            "failure": self.failure,
            "reservations": self.reservations,
        }

    def annotations(self) -> dict[str, str]:
        """kube-scheduler-simulator's result annotations (JSON values) for this attempt."""
        out = {
            FILTER_RESULT: _json(self.filter),
            SCORE_RESULT: _json({n: {p: str(v) for p, v in per.items()} for n, per in self.raw.items()}),
            FINAL_SCORE_RESULT: _json(
                {n: {p: str(v) for p, v in per.items()} for n, per in self.final_scores().items()}
            ),
            PRE_FILTER_STATUS_RESULT: _json(self.pre_filter),
        }
        if self.selected:
            out[SELECTED_NODE] = self.selected
        return out


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def record_pre_filter(trace: CycleTrace, fw: Framework, rejection: Status | None) -> None:
    """Fill the PreFilter verdicts: every PreFilter plugin passed, or the ones up to ``rejection``."""
    for name in fw.points.get("preFilter", []):
        if rejection is not None and name == rejection.plugin:
            trace.pre_filter[name] = rejection.message
            return
        trace.pre_filter[name] = PASSED


def record_filters(
    trace: CycleTrace,
    fw: Framework,
    skipped: set[str],
    table: NodeTable,
    candidates: np.ndarray[Any, Any],
    outcome: FilterOutcome,
    narrowed_message: str,
) -> None:
    """Per node, the Filter plugins it passed and the one that rejected it (later ones did not run)."""
    order = [p for p in fw.points.get("filter", []) if p not in skipped]
    trace.filter_plugins = order
    codes = outcome.status_codes
    for row, name in enumerate(table.names):
        if not candidates[row]:
            trace.filter[name] = {"PreFilter": narrowed_message}
            continue
        per: dict[str, str] = {}
        c = int(codes[row])
        failed = outcome.statuses[c] if c >= 0 else None
        for plugin in order:
            if failed is not None and plugin == failed.plugin:
                per[plugin] = failed.message
                break
            per[plugin] = PASSED
        trace.filter[name] = per
    trace.feasible = [table.names[int(i)] for i in np.flatnonzero(outcome.passed)]


def record_scores(trace: CycleTrace, fw: Framework, table: NodeTable, scores: ScoreOutcome) -> None:
    """Raw, normalised and total scores of every scored node."""
    names = [table.names[int(i)] for i in scores.idx]
    trace.scored = names
    plugins = [p for p in scores.raw]
    trace.score_plugins = [(p, fw.weights.get(p, 1)) for p in plugins]
    for k, node in enumerate(names):
        trace.raw[node] = {p: int(scores.raw[p][k]) for p in plugins}
        trace.normalized[node] = {p: int(scores.normalized[p][k]) for p in plugins}
        trace.total[node] = int(scores.total[k])


class Tracer:
    """Collects the traces of the attempts of the pods ``wants`` selects."""

    def __init__(self, wants: Callable[[PodInfo], bool]) -> None:
        self.wants = wants
        self.traces: list[CycleTrace] = []

    def record(self, trace: CycleTrace) -> None:
        """Keep ``trace``."""
        self.traces.append(trace)

    def of(self, pod_key: str) -> Sequence[CycleTrace]:
        """The traces of pod ``namespace/name`` in order."""
        return [t for t in self.traces if t.pod == pod_key]


def without_result_annotations(annotations: Mapping[str, str] | None) -> dict[str, str]:
    """``annotations`` minus the simulator result annotations (they do not make a pod worth retrying)."""
    return {k: v for k, v in (annotations or {}).items() if not k.startswith(ANNOTATION_PREFIX)}


__all__ = [
    "FILTER_RESULT",
    "FINAL_SCORE_RESULT",
    "PASSED",
    "PRE_FILTER_STATUS_RESULT",
    "RESULTS_PLUGIN",
    "SCORE_RESULT",
    "SELECTED_NODE",
    "CycleTrace",
    "Tracer",
    "record_filters",
    "record_pre_filter",
    "record_scores",
    "without_result_annotations",
]
