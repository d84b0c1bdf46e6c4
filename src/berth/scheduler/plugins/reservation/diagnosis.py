"""Why an owner pod could not use its reservations: Koordinator's per-node diagnosis and PostFilter reasons.

For every node holding reservations the pod may consider (its required node affinity admits the node),
each Available reservation whose owners match the pod is counted once under the first check it fails,
in Koordinator's order (the requested name, ``unschedulable``, taints, reservation affinity, exact
match). The reasons the Reservation plugin's PostFilter adds to the FitError are then built from these
counts exactly as Koordinator's ``makePostFilterReasons`` builds them: ``"2 Reservation(s) is
unschedulable"``, ``"1 Reservation(s) for node reason that Insufficient cpu"``, ``"3 Reservation(s)
matched owner total"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from berth.api.reservation import ReservationAffinity
from berth.api.taints import Taint, Toleration
from berth.scheduler.framework.nodetable import IntArray, NodeTable
from berth.scheduler.framework.plugin import NodeStatusMap
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import Status
from berth.scheduler.plugins.reservation.model import ReservationIndex, ReservationInfo

REASON_PREFIX = "Reservation(s) "
NAME_MATCHED = "exactly matches the requested reservation name"
NAME_UNMATCHED = "didn't match the requested reservation name"
AFFINITY_UNMATCHED = "didn't match affinity rules"
UNSCHEDULABLE = "is unschedulable"
NOT_EXACT_MATCHED = "is not exact matched"
UNTOLERATED_TAINT = "had untolerated taint "


@dataclass(slots=True)
class Diagnosis:
    """Per node row, the reservations whose owners match the pod, counted under the first check each failed
    (Koordinator's nodeDiagnosisState), and the untolerated taints over all nodes."""

    owner_matched: IntArray
    name_matched: IntArray
    name_unmatched: IntArray
    unschedulable: IntArray
    affinity_unmatched: IntArray
    not_exact_matched: IntArray
    taints_unmatched: IntArray
    taint_reasons: dict[str, int] = field(default_factory=dict)

    @classmethod
    def empty(cls, n: int) -> Diagnosis:
        """No reservation counted on any of ``n`` rows."""
        z = np.zeros(n, dtype=np.int64)
        return cls(z, z.copy(), z.copy(), z.copy(), z.copy(), z.copy(), z.copy())

    @property
    def matched(self) -> IntArray:
        """Owner-matched reservations that passed every check, per row (Koordinator's remaining unmatched)."""
        out: IntArray = (
            self.owner_matched
            - self.name_unmatched
            - self.unschedulable
            - self.affinity_unmatched
            - self.not_exact_matched
            - self.taints_unmatched
        )
        return out


def exact_match(requests: Mapping[str, int], allocatable: Mapping[str, int], names: tuple[str, ...]) -> bool:
    """Koordinator's ExactMatchReservation: each named resource is requested exactly as reserved (or by neither)."""
    for rn in names:
        in_r, in_p = rn in allocatable, rn in requests
        if not in_r or not in_p:
            return not in_r and not in_p
        if allocatable[rn] != requests[rn]:
            return False
    return True


def untolerated_taint(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> Taint | None:
    """The first of ``taints`` that none of ``tolerations`` tolerates."""
    for taint in taints:
        if not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None


def taint_key(taint: Taint) -> str:
    """Koordinator's getDiagnosisTaintKey: ``{key: value}``."""
    return f"{{{taint.key}: {taint.value}}}"


def refusal(
    info: ReservationInfo,
    pod: PodInfo,
    affinity: ReservationAffinity | None,
    exact: tuple[str, ...] | None,
    node_labels: Mapping[str, str],
) -> str:
    """Why an owner-matched reservation cannot take ``pod``, in Koordinator's words after "Reservation(s) "
    (``is unschedulable``, ``had untolerated taint {key: value}``, ...); "" when it can."""
    if affinity is not None and affinity.name:
        if affinity.name != info.name:
            return NAME_UNMATCHED
        if exact is not None and not exact_match(pod.requests, info.allocatable, exact):
            return NOT_EXACT_MATCHED
    if info.unschedulable:
        return UNSCHEDULABLE
    if info.taints:
        tolerations = pod.tolerations + (affinity.tolerations if affinity is not None else ())
        taint = untolerated_taint(info.taints, tolerations)
        if taint is not None:
            return UNTOLERATED_TAINT + taint_key(taint)
    if (
        affinity is not None
        and not affinity.name
        and not affinity.matches(info.name, {**node_labels, **info.labels})
    ):
        return AFFINITY_UNMATCHED
    if exact is not None and not exact_match(pod.requests, info.allocatable, exact):
        return NOT_EXACT_MATCHED
    return ""


def diagnose(
    index: ReservationIndex,
    table: NodeTable,
    pod: PodInfo,
    affinity: ReservationAffinity | None,
    exact: tuple[str, ...] | None,
) -> Diagnosis:
    """Count, per node row, the Available reservations whose owners match ``pod`` by the first check each
    fails (nodes the pod's required node affinity excludes are left out, as Koordinator leaves them)."""
    n = table.size
    out = Diagnosis.empty(n)
    if not index.items:
        return out
    group_ok = np.fromiter(
        (g.matches(pod.obj) for g in index.groups), dtype=np.bool_, count=len(index.groups)
    )
    if not group_ok.any():
        return out
    owners = group_ok[index.group_of] & index.available
    rows = index.rows
    required = pod.required_node_affinity
    if required.node_selector_labels or required.required is not None:
        admitted = np.zeros(n, dtype=np.bool_)
        for row in np.unique(rows[owners]).tolist():
            admitted[row] = required.matches(table.labels[row], table.names[row])
        owners &= admitted[rows]
    ks = np.flatnonzero(owners)
    if ks.size == 0:
        return out
    # the bucket of each owner-matched reservation: 0 matched, then the counters below in this order
    bucket = np.zeros(ks.size, dtype=np.int64)
    counters = (
        out.name_matched,
        out.name_unmatched,
        out.not_exact_matched,
        out.unschedulable,
        out.taints_unmatched,
        out.affinity_unmatched,
    )
    simple = affinity is None and exact is None
    if simple:
        bucket[index.unschedulable[ks]] = 4
        if index.any_taints:
            for j in np.flatnonzero(index.has_taints[ks] & (bucket == 0)).tolist():
                info = index.items[int(ks[j])]
                taint = untolerated_taint(info.taints, pod.tolerations)
                if taint is not None:
                    bucket[j] = 5
                    key = taint_key(taint)
                    out.taint_reasons[key] = out.taint_reasons.get(key, 0) + 1
    else:
        codes = {
            NAME_UNMATCHED: 2,
            NOT_EXACT_MATCHED: 3,
            UNSCHEDULABLE: 4,
            AFFINITY_UNMATCHED: 6,
        }
        named = affinity is not None and bool(affinity.name)
        for j, k in enumerate(ks.tolist()):
            info = index.items[k]
            why = refusal(info, pod, affinity, exact, table.labels[int(rows[k])])
            if not why:
                bucket[j] = 1 if named else 0
            elif why.startswith(UNTOLERATED_TAINT):
                bucket[j] = 5
                key = why.removeprefix(UNTOLERATED_TAINT)
                out.taint_reasons[key] = out.taint_reasons.get(key, 0) + 1
            else:
                bucket[j] = codes[why]
    np.add.at(out.owner_matched, rows[ks], 1)
    for code, counter in enumerate(counters, start=1):
        sel = bucket == code
        if sel.any():
            np.add.at(counter, rows[ks[sel]], 1)
    return out


def node_reason_counts(
    matched: IntArray, names: Sequence[str], statuses: NodeStatusMap, index: Mapping[str, int] | None = None
) -> dict[str, int]:
    """Koordinator's reasonsByNode: on each node where ``matched`` reservations were left, the node's Filter
    reasons (not the "Reservation(s) ..." ones, each of which takes one reservation off), counted once per
    reservation left. ``names``/``index``: the rows' node names and their name-to-row map (when it is the
    one ``statuses`` lists its rows by, the statuses are read by row)."""
    rows = np.flatnonzero(matched > 0)
    groups: list[tuple[Status | None, IntArray]] = []
    by_rows = statuses.rows
    if (
        statuses.statuses
        or by_rows is None
        or by_rows.index is not index
        or by_rows.codes.size < matched.size
    ):
        per: dict[Status, list[int]] = {}
        for r in rows.tolist():
            per.setdefault(statuses.get(names[r]), []).append(int(matched[r]))
        groups = [(st, np.asarray(v, dtype=np.int64)) for st, v in per.items()]
    else:
        codes = by_rows.codes[rows]
        unlisted = codes < 0
        if unlisted.any():
            groups.append((statuses.absent, matched[rows[unlisted]]))
        for c in np.unique(codes[~unlisted]).tolist():
            groups.append((by_rows.statuses[c], matched[rows[codes == c]]))
    out: dict[str, int] = {}
    for st, left in groups:
        if st is None:
            continue
        own = sum(1 for r in st.reasons if r.startswith(REASON_PREFIX))
        remain = int(np.maximum(left - own, 0).sum())
        if remain <= 0:
            continue
        for reason in st.reasons:
            if not reason.startswith(REASON_PREFIX):
                out[reason] = out.get(reason, 0) + remain
    return out


def post_filter_reasons(diagnosis: Diagnosis, has_affinity: bool, by_node: Mapping[str, int]) -> list[str]:
    """Koordinator's makePostFilterReasons: the counts by cause, the other plugins' reasons on nodes where a
    matching reservation was left (``by_node``, see node_reason_counts), and the owner-matched total
    (nothing when no reservation's owners match and the pod has no reservation affinity)."""
    owner_total = int(diagnosis.owner_matched.sum())
    if owner_total <= 0 and not has_affinity:
        return []
    reasons: list[str] = []
    for counter, text in (
        (diagnosis.name_matched, NAME_MATCHED),
        (diagnosis.name_unmatched, NAME_UNMATCHED),
        (diagnosis.affinity_unmatched, AFFINITY_UNMATCHED),
        (diagnosis.unschedulable, UNSCHEDULABLE),
        (diagnosis.not_exact_matched, NOT_EXACT_MATCHED),
    ):
        count = int(counter.sum())
        if count > 0:
            reasons.append(f"{count} {REASON_PREFIX}{text}")
    for key, count in sorted(diagnosis.taint_reasons.items()):
        reasons.append(f"{count} {REASON_PREFIX}{UNTOLERATED_TAINT}{key}")
    for reason, count in sorted(by_node.items()):
        reasons.append(f"{count} {REASON_PREFIX}for node reason that {reason}")
    reasons.append(f"{owner_total} {REASON_PREFIX}matched owner total")
    return reasons


__all__ = [
    "REASON_PREFIX",
    "Diagnosis",
    "diagnose",
    "exact_match",
    "node_reason_counts",
    "post_filter_reasons",
    "refusal",
    "taint_key",
    "untolerated_taint",
]
