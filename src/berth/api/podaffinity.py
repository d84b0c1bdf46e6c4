"""Pod (anti-)affinity terms: the compiled form of ``spec.affinity.podAffinity`` / ``podAntiAffinity``.

A term selects pods by namespace (a fixed set, or a namespace label selector) and by pod labels, within
a topology domain (the nodes sharing one value of ``topologyKey``). Compilation follows kube-scheduler's
``framework.AffinityTerm``: no ``namespaces`` and no ``namespaceSelector`` means the pod's own namespace;
a nil ``labelSelector`` or ``namespaceSelector`` selects nothing, ``{}`` selects everything.
``matchLabelKeys`` / ``mismatchLabelKeys`` are merged into the label selector from the pod's own labels,
as the API server does when the pod is created.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.api.labels import Requirement, Selector, compile_label_selector

__all__ = [
    "EMPTY_TERMS",
    "AffinityTerm",
    "PodAffinityTerms",
    "WeightedAffinityTerm",
    "compile_pod_affinity",
    "compile_term",
]

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """One compiled PodAffinityTerm (hashable: equal terms compare and hash equal)."""

    namespaces: frozenset[str]
    namespace_selector: Selector  # nothing() when the term has no namespaceSelector
    selector: Selector
    topology_key: str

    def matches(self, namespace: str, labels: Mapping[str, str], namespace_labels: Mapping[str, str]) -> bool:
        """Whether a pod in ``namespace`` with ``labels`` is selected (``namespace_labels``: its namespace's)."""
        if namespace in self.namespaces or self.namespace_selector.matches(namespace_labels):
            return self.selector.matches(labels)
        return False

    @property
    def all_namespaces(self) -> bool:
        """Whether the namespace selector is ``{}`` (every namespace)."""
        return self.namespace_selector.is_everything()


@dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    """A preferred term with its weight (1..100)."""

    weight: int
    term: AffinityTerm


@dataclass(frozen=True, slots=True)
class PodAffinityTerms:
    """All pod (anti-)affinity terms of one pod."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()

    @property
    def empty(self) -> bool:
        """Whether the pod has no pod (anti-)affinity term at all."""
        return not (
            self.required_affinity
            or self.required_anti_affinity
            or self.preferred_affinity
            or self.preferred_anti_affinity
        )


EMPTY_TERMS = PodAffinityTerms()


def _merge_label_keys(term: Mapping[str, Any], pod_labels: Mapping[str, str]) -> Selector:
    """The term's label selector with matchLabelKeys (In) / mismatchLabelKeys (NotIn) applied."""
    raw = term.get("labelSelector")
    selector = compile_label_selector(raw)
    match_keys = term.get("matchLabelKeys") or ()
    mismatch_keys = term.get("mismatchLabelKeys") or ()
    if raw is None or not (match_keys or mismatch_keys):
        return selector  # a nil selector stays "nothing", as the API server leaves it
    extra: list[Requirement] = []
    for key in match_keys:
        if key in pod_labels:
            extra.append(Requirement(key, "In", (pod_labels[key],)))
    for key in mismatch_keys:
        if key in pod_labels:
            extra.append(Requirement(key, "NotIn", (pod_labels[key],)))
    if not extra:
        return selector
    return Selector((*selector.requirements, *extra))


def compile_term(term: Mapping[str, Any], namespace: str, pod_labels: Mapping[str, str]) -> AffinityTerm:
    """Compile one wire-form PodAffinityTerm of a pod in ``namespace`` with ``pod_labels``."""
    names = term.get("namespaces") or ()
    ns_sel_raw = term.get("namespaceSelector")
    namespaces = frozenset((namespace,)) if not names and ns_sel_raw is None else frozenset(names)
    return AffinityTerm(
        namespaces,
        compile_label_selector(ns_sel_raw),
        _merge_label_keys(term, pod_labels),
        str(term.get("topologyKey") or ""),
    )


def _required(
    section: Mapping[str, Any], namespace: str, labels: Mapping[str, str]
) -> tuple[AffinityTerm, ...]:
    return tuple(compile_term(t, namespace, labels) for t in section.get(_REQUIRED) or ())


def _preferred(
    section: Mapping[str, Any], namespace: str, labels: Mapping[str, str]
) -> tuple[WeightedAffinityTerm, ...]:
    return tuple(
        WeightedAffinityTerm(
            int(w.get("weight") or 0), compile_term(w.get("podAffinityTerm") or {}, namespace, labels)
        )
        for w in section.get(_PREFERRED) or ()
    )


def compile_pod_affinity(
    affinity: Mapping[str, Any] | None, namespace: str, labels: Mapping[str, str]
) -> PodAffinityTerms:
    """Compile a pod's ``spec.affinity`` pod (anti-)affinity (EMPTY_TERMS when it has none)."""
    if not affinity:
        return EMPTY_TERMS
    aff = affinity.get("podAffinity") or {}
    anti = affinity.get("podAntiAffinity") or {}
    if not aff and not anti:
        return EMPTY_TERMS
    out = PodAffinityTerms(
        _required(aff, namespace, labels),
        _required(anti, namespace, labels),
        _preferred(aff, namespace, labels),
        _preferred(anti, namespace, labels),
    )
    return EMPTY_TERMS if out.empty else out
