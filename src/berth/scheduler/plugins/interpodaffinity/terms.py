"""A pod's compiled (anti-)affinity terms, cached on the PodInfo, and the incoming pod's namespace merging."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from berth.api.labels import Selector, nothing
from berth.api.podaffinity import (
    EMPTY_TERMS,
    AffinityTerm,
    PodAffinityTerms,
    WeightedAffinityTerm,
    compile_pod_affinity,
)
from berth.scheduler.framework import PodInfo

NAME = "InterPodAffinity"

# what a matcher tests on a pod: (namespaces, every namespace?, label selector); a tuple of them is an AND
MatcherPart = tuple[frozenset[str], bool, Selector]
MatcherKey = tuple[MatcherPart, ...]


_COMPILED: dict[Any, PodAffinityTerms] = {}
_COMPILED_MAX = 4096


def _compile(pod: PodInfo) -> PodAffinityTerms:
    aff = pod.affinity
    sections = (aff.get("podAffinity"), aff.get("podAntiAffinity"))
    if not sections[0] and not sections[1]:
        return EMPTY_TERMS
    # pods made from one template have equal wire forms, hence equal reprs (a different key order only
    # misses the cache); label-key lists make the result depend on the pod's labels too
    text = repr(sections)
    key = (pod.namespace, text, frozenset(pod.labels.items()) if "LabelKeys" in text else None)
    terms = _COMPILED.get(key)
    if terms is None:
        try:
            terms = compile_pod_affinity(aff, pod.namespace, pod.labels)
        except (ValueError, TypeError):  # unreachable for validated pods: treat as no terms
            terms = EMPTY_TERMS
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        _COMPILED[key] = terms
    return terms


def pod_terms(pod: PodInfo) -> PodAffinityTerms:
    """The pod's terms, compiled once and kept in ``pod.extra`` (EMPTY_TERMS when it has none).

    Pods made from one template share the compiled terms (a cache keyed by the wire form's repr)."""
    terms: PodAffinityTerms | None = pod.extra.get(NAME)
    if terms is None:
        terms = _compile(pod) if pod.affinity else EMPTY_TERMS
        pod.extra[NAME] = terms
    return terms


def merge_namespaces(term: AffinityTerm, list_namespaces: Callable[[Selector], list[str]]) -> AffinityTerm:
    """kube's mergeAffinityTermNamespacesIfNotEmpty: a namespace selector with requirements is replaced by
    the names of the namespaces it selects now (``{}`` keeps selecting every namespace, nil none)."""
    sel = term.namespace_selector
    if sel.is_nothing() or sel.is_everything():
        return term
    names = term.namespaces | frozenset(list_namespaces(sel))
    return AffinityTerm(names, nothing(), term.selector, term.topology_key)


def merge_all(terms: PodAffinityTerms, list_namespaces: Callable[[Selector], list[str]]) -> PodAffinityTerms:
    """The incoming pod's terms with every namespace selector merged (the same object when none has one)."""

    def needs(t: AffinityTerm) -> bool:
        s = t.namespace_selector
        return not (s.is_nothing() or s.is_everything())

    if not any(needs(t) for t in terms.required_affinity + terms.required_anti_affinity) and not any(
        needs(w.term) for w in terms.preferred_affinity + terms.preferred_anti_affinity
    ):
        return terms
    return PodAffinityTerms(
        tuple(merge_namespaces(t, list_namespaces) for t in terms.required_affinity),
        tuple(merge_namespaces(t, list_namespaces) for t in terms.required_anti_affinity),
        tuple(
            WeightedAffinityTerm(w.weight, merge_namespaces(w.term, list_namespaces))
            for w in terms.preferred_affinity
        ),
        tuple(
            WeightedAffinityTerm(w.weight, merge_namespaces(w.term, list_namespaces))
            for w in terms.preferred_anti_affinity
        ),
    )


def part_of(term: AffinityTerm) -> MatcherPart:
    """The matcher part of a merged incoming term (its namespace selector is everything or nothing)."""
    return (term.namespaces, term.all_namespaces, term.selector)


def part_matches(part: MatcherPart, namespace: str, labels: Mapping[str, str]) -> bool:
    """Whether a pod in ``namespace`` with ``labels`` satisfies one matcher part."""
    names, every, selector = part
    return (every or namespace in names) and selector.matches(labels)


def existing_term_matches(
    term: AffinityTerm, pod: PodInfo, namespace_labels: Callable[[], Mapping[str, str]]
) -> bool:
    """Whether an existing pod's term selects the incoming ``pod`` (namespace labels fetched only if needed)."""
    if pod.namespace in term.namespaces:
        return term.selector.matches(pod.labels)
    sel = term.namespace_selector
    if sel.is_nothing():
        return False
    if not sel.is_everything() and not sel.matches(namespace_labels()):
        return False
    return term.selector.matches(pod.labels)
