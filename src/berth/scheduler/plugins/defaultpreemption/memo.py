"""Reusing a node's victim choice, within one dry run, for nodes that look the same to the filters.

Two nodes whose filter verdicts follow from the same arithmetic (equal ``Handle.dry_run_key``) and whose
potential victims, in reprieve order, have the same requests and PDB standing get the same victims by
position: kube's per-node algorithm would take the same steps on both.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import NamedTuple

from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import Code, Status
from berth.scheduler.plugins.defaultpreemption.pdb import Budget, split_by_pdb_violation
from berth.scheduler.plugins.defaultpreemption.victims import (
    StartTimes,
    Victims,
    by_importance,
    is_candidate_victim,
)

_REQ_KEY = "berth/request-key"

Outcome = tuple[Victims | None, Status]


def request_key(pod: PodInfo) -> Hashable:
    """The pod's requests as a hashable value (computed once per pod)."""
    key = pod.extra.get(_REQ_KEY)
    if key is None:
        key = pod.extra[_REQ_KEY] = tuple(sorted(pod.requests.items()))
    return key


def request_signature(pods: Iterable[PodInfo]) -> tuple[Hashable, ...]:
    """The requests of ``pods`` in order, as a hashable value."""
    keys = []
    for p in pods:
        key = p.extra.get(_REQ_KEY)
        keys.append(key if key is not None else request_key(p))
    return tuple(keys)


class Lookup(NamedTuple):
    """A node's memo key with its potential victims in reprieve order (PDB-violating ones first)."""

    key: Hashable
    violating: Sequence[PodInfo]
    fine: Sequence[PodInfo]
    start: StartTimes


class VictimMemo:
    """Victim choices of one dry run, by node look-alike key."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[Hashable, tuple[tuple[tuple[bool, int], ...] | None, int, Status]] = {}

    def lookup(
        self,
        node_key: Hashable | None,
        preemptor: PodInfo,
        node_pods: Iterable[PodInfo],
        budgets: Sequence[Budget],
        start: StartTimes,
        ordered: Sequence[PodInfo] | None = None,
        signature: tuple[Hashable, ...] | None = None,
    ) -> Lookup | None:
        """The lookup of a node (None when the filters give no node key); ``ordered``, when given, is the
        node's potential victims already in reprieve order and ``signature`` their ``request_signature``."""
        if node_key is None:
            return None
        if ordered is None:
            ordered = by_importance((p for p in node_pods if is_candidate_victim(p, preemptor)), start)
        if not budgets:
            sig = signature if signature is not None else request_signature(ordered)
            return Lookup((node_key, (), sig), (), ordered, start)
        violating, fine = split_by_pdb_violation(ordered, budgets)
        key = (node_key, request_signature(violating), request_signature(fine))
        return Lookup(key, violating, fine, start)

    def get(self, lookup: Lookup | None) -> Outcome | None:
        """The remembered outcome for a look-alike node, mapped onto this node's pods (None: not seen)."""
        if lookup is None:
            return None
        hit = self._seen.get(lookup.key)
        if hit is None:
            return None
        positions, num_violating, status = hit
        if positions is None:
            return None, status
        violating, fine = lookup.violating, lookup.fine
        if not violating:  # every position is (False, i)
            return Victims(tuple([fine[i] for _, i in positions]), num_violating), status
        pods = [(violating if v else fine)[i] for v, i in positions]
        if fine:
            pods = by_importance(pods, lookup.start)
        return Victims(tuple(pods), num_violating), status

    def put(self, lookup: Lookup | None, outcome: Outcome) -> None:
        """Remember ``outcome`` (computed on the node of ``lookup``) for look-alike nodes."""
        victims, status = outcome
        if lookup is None or status.code == Code.ERROR:
            return  # errors name their node
        if victims is None:
            self._seen[lookup.key] = (None, 0, status)
            return
        where = {p.uid: (True, i) for i, p in enumerate(lookup.violating)}
        where.update({p.uid: (False, i) for i, p in enumerate(lookup.fine)})
        positions = tuple(where[p.uid] for p in victims.pods)
        self._seen[lookup.key] = (positions, victims.num_pdb_violations, status)
