"""Node selectors and node affinity, compiled from pod specs (component-helpers ``nodeaffinity``).

Requirements that kube would fail to parse (bad operator, wrong number of values, invalid label
key/value, non-integer ``Gt``/``Lt`` value, a ``matchFields`` operator other than ``In``/``NotIn``)
make their term match nothing, as kube's lazy-error node selector does; validation reports them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from berth.api.names import label_value_errors, qualified_name_errors

__all__ = [
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "PreferredTerm",
    "RequiredNodeAffinity",
    "compile_node_selector",
    "compile_preferred_terms",
    "parse_int64",
    "preferred_score",
    "required_node_affinity",
]

_INT_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
FIELD_METADATA_NAME = "metadata.name"


def parse_int64(text: str) -> int | None:
    """Parse *text* like Go's ``strconv.ParseInt(text, 10, 64)``; None when it is not an int64."""
    if not _INT_RE.fullmatch(text):
        return None
    v = int(text)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


@dataclass(frozen=True, slots=True)
class NodeSelectorRequirement:
    """One ``key operator values`` requirement (``In NotIn Exists DoesNotExist Gt Lt``)."""

    key: str
    operator: str
    values: tuple[str, ...]
    _value_set: frozenset[str] = field(init=False, repr=False, compare=False)
    _bound: int | None = field(init=False, repr=False, compare=False)
    _label_ok: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Precompute the value set, the Gt/Lt bound and whether kube could parse it as a label requirement."""
        object.__setattr__(self, "_value_set", frozenset(self.values))
        op, n = self.operator, len(self.values)
        bound = parse_int64(self.values[0]) if op in ("Gt", "Lt") and n == 1 else None
        object.__setattr__(self, "_bound", bound)
        if op in ("In", "NotIn"):
            ok = n > 0 and not any(label_value_errors(v) for v in self.values)
        elif op in ("Exists", "DoesNotExist"):
            ok = n == 0
        elif op in ("Gt", "Lt"):
            ok = bound is not None
        else:
            ok = False
        object.__setattr__(self, "_label_ok", ok and not qualified_name_errors(self.key))

    @property
    def label_parse_ok(self) -> bool:
        """Whether kube can turn this into a label-selector requirement (else its term matches nothing)."""
        return self._label_ok

    @property
    def field_parse_ok(self) -> bool:
        """Whether kube can turn this into a node field-selector requirement (In/NotIn, one value)."""
        return self.operator in ("In", "NotIn") and len(self.values) == 1

    def matches_labels(self, labels: Mapping[str, str]) -> bool:
        """Whether *labels* satisfy this requirement (false for requirements kube cannot parse)."""
        if not self._label_ok:
            return False
        op = self.operator
        if op == "In":
            v = labels.get(self.key)
            return v is not None and v in self._value_set
        if op == "NotIn":
            v = labels.get(self.key)
            return v is None or v not in self._value_set
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        v = labels.get(self.key)
        if v is None:
            return False
        n = parse_int64(v)
        if n is None or self._bound is None:
            return False
        return n > self._bound if op == "Gt" else n < self._bound

    def matches_field(self, node_name: str) -> bool:
        """Whether the node's fields satisfy this ``matchFields`` requirement (only metadata.name is set)."""
        if not self.field_parse_ok:
            return False
        actual = node_name if self.key == FIELD_METADATA_NAME else ""
        return (actual == self.values[0]) == (self.operator == "In")


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """A term: all ``matchExpressions`` (labels) and all ``matchFields`` must match; empty matches nothing."""

    match_expressions: tuple[NodeSelectorRequirement, ...]
    match_fields: tuple[NodeSelectorRequirement, ...]
    _ok: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Precompute whether the term is usable (non-empty and parseable)."""
        ok = bool(self.match_expressions or self.match_fields)
        ok = ok and all(r.label_parse_ok for r in self.match_expressions)
        ok = ok and all(r.field_parse_ok for r in self.match_fields)
        object.__setattr__(self, "_ok", ok)

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Whether a node with *labels* and *node_name* satisfies the term."""
        if not self._ok:
            return False
        for r in self.match_expressions:
            if not r.matches_labels(labels):
                return False
        return all(r.matches_field(node_name) for r in self.match_fields)


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """A node selector: its terms are ORed; no terms matches nothing."""

    terms: tuple[NodeSelectorTerm, ...]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Whether any term matches the node."""
        return any(t.matches(labels, node_name) for t in self.terms)


@dataclass(frozen=True, slots=True)
class PreferredTerm:
    """A weighted preferred node-affinity term."""

    weight: int
    term: NodeSelectorTerm


def _requirement(d: Mapping[str, Any]) -> NodeSelectorRequirement:
    values = d.get("values") or ()
    return NodeSelectorRequirement(
        str(d.get("key") or ""), str(d.get("operator") or ""), tuple(str(v) for v in values)
    )


def compile_term(d: Mapping[str, Any] | None) -> NodeSelectorTerm:
    """Compile one ``NodeSelectorTerm`` dict."""
    d = d or {}
    return NodeSelectorTerm(
        tuple(_requirement(r) for r in d.get("matchExpressions") or ()),
        tuple(_requirement(r) for r in d.get("matchFields") or ()),
    )


def compile_node_selector(d: Mapping[str, Any] | None) -> NodeSelector | None:
    """Compile a ``NodeSelector`` dict (``{nodeSelectorTerms: [...]}``); None stays None."""
    if d is None:
        return None
    return NodeSelector(tuple(compile_term(t) for t in d.get("nodeSelectorTerms") or ()))


def compile_preferred_terms(items: list[dict[str, Any]] | None) -> tuple[PreferredTerm, ...]:
    """Compile ``preferredDuringSchedulingIgnoredDuringExecution``; zero-weight and empty terms are dropped."""
    out = []
    for item in items or ():
        weight = int(item.get("weight") or 0)
        term = compile_term(item.get("preference"))
        if weight == 0 or not (term.match_expressions or term.match_fields):
            continue
        out.append(PreferredTerm(weight, term))
    return tuple(out)


def preferred_score(terms: Sequence[PreferredTerm], labels: Mapping[str, str], node_name: str) -> int:
    """Sum of the weights of the preferred terms the node matches (NodeAffinity's raw score)."""
    return sum(t.weight for t in terms if t.term.matches(labels, node_name))


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """What the NodeAffinity filter checks: ``spec.nodeSelector`` AND required node affinity."""

    node_selector_labels: Mapping[str, str] | None
    required: NodeSelector | None

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Whether the node satisfies both the nodeSelector map and the required affinity."""
        sel = self.node_selector_labels
        if sel:
            for k, v in sel.items():
                if labels.get(k) != v:
                    return False
        return self.required is None or self.required.matches(labels, node_name)


_NO_REQUIREMENTS = RequiredNodeAffinity(None, None)


def required_node_affinity(pod: Mapping[str, Any]) -> RequiredNodeAffinity:
    """Compile the pod's required node constraints (``nodeSelector`` + required node affinity)."""
    spec = pod.get("spec") or {}
    ns = spec.get("nodeSelector")
    if not ns and not spec.get("affinity"):
        return _NO_REQUIREMENTS  # the usual pod (immutable: shared)
    labels = {str(k): str(v) for k, v in ns.items()} if ns else None
    na = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    return RequiredNodeAffinity(
        labels, compile_node_selector(na.get("requiredDuringSchedulingIgnoredDuringExecution"))
    )
