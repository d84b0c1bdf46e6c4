"""Node selector terms evaluated over every row of a NodeTable at once (same answers as the per-node form)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from berth.api.nodeselector import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PreferredTerm
from berth.scheduler.framework import NodeTable
from berth.scheduler.framework.nodetable import BoolArray, IntArray

FIELD_METADATA_NAME = "metadata.name"


def term_usable(term: NodeSelectorTerm) -> bool:
    """Whether the term can match anything: non-empty and every requirement parseable (as kube)."""
    if not (term.match_expressions or term.match_fields):
        return False
    return all(r.label_parse_ok for r in term.match_expressions) and all(
        r.field_parse_ok for r in term.match_fields
    )


def label_requirement_mask(req: NodeSelectorRequirement, table: NodeTable) -> BoolArray:
    """Rows whose labels satisfy ``req`` (a parseable label requirement)."""
    col = table.label_column(req.key)
    op = req.operator
    if op == "In":
        return col.mask_in(req.values)
    if op == "NotIn":
        return np.logical_not(col.mask_in(req.values))
    if op == "Exists":
        return col.mask_exists()
    if op == "DoesNotExist":
        return np.logical_not(col.mask_exists())
    # Gt / Lt and anything else: evaluate once per distinct value; code -1 (absent) reads the last slot
    lut = np.fromiter(
        (req.matches_labels({req.key: v}) for v in col.vocab), dtype=np.bool_, count=len(col.vocab)
    )
    lut = np.append(lut, req.matches_labels({}))
    out: BoolArray = lut[col.codes]
    return out


def field_requirement_mask(req: NodeSelectorRequirement, table: NodeTable) -> BoolArray:
    """Rows whose fields (only metadata.name) satisfy ``req`` (a parseable field requirement)."""
    n = table.size
    want_in = req.operator == "In"
    if req.key != FIELD_METADATA_NAME:
        return np.full(n, req.matches_field(""), dtype=np.bool_)
    out = np.full(n, not want_in, dtype=np.bool_)
    i = table.index.get(req.values[0])
    if i is not None:
        out[i] = want_in
    return out


def term_mask(term: NodeSelectorTerm, table: NodeTable) -> BoolArray:
    """Rows matching ``term`` (all requirements ANDed)."""
    n = table.size
    if not term_usable(term):
        return np.zeros(n, dtype=np.bool_)
    mask = np.ones(n, dtype=np.bool_)
    for r in term.match_expressions:
        mask &= label_requirement_mask(r, table)
    for r in term.match_fields:
        mask &= field_requirement_mask(r, table)
    return mask


def selector_mask(selector: NodeSelector, table: NodeTable) -> BoolArray:
    """Rows matching any term of ``selector`` (no terms: none)."""
    out = np.zeros(table.size, dtype=np.bool_)
    for t in selector.terms:
        out |= term_mask(t, table)
    return out


def labels_mask(labels: Mapping[str, str], table: NodeTable) -> BoolArray:
    """Rows carrying every ``key=value`` of ``labels`` (a pod's spec.nodeSelector)."""
    out = np.ones(table.size, dtype=np.bool_)
    for k, v in labels.items():
        out &= table.label_column(k).mask_in((v,))
    return out


def preferred_scores(terms: Sequence[PreferredTerm], table: NodeTable, idx: IntArray) -> IntArray:
    """Sum of the weights of matched terms for rows ``idx``."""
    out = np.zeros(len(idx), dtype=np.int64)
    for t in terms:
        out += t.weight * term_mask(t.term, table)[idx]
    return out
