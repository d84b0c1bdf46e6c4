"""RemovePodsViolatingInterPodAntiAffinity (upstream ``pkg/framework/plugins/
removepodsviolatinginterpodantiaffinity``), a Deschedule plugin.

Evicts pods whose required pod anti-affinity is violated: another pod on the cycle's nodes matching one of
the pod's ``requiredDuringSchedulingIgnoredDuringExecution`` anti-affinity terms runs on the same node or on
a node with the same value of the term's topology key. Node by node, pods are tried from the lowest
priority up (upstream's ``SortPodsBasedOnPriorityLowToHigh``); an evicted pod no longer counts against the
pods tried after it, so of two pods that repel each other only one goes.

As upstream, a term's namespaces are its ``namespaces`` list, else the pod's own namespace (its
``namespaceSelector`` is not consulted), and only the pods on the cycle's nodes that the plugin's
``namespaces`` / ``labelSelector`` select are seen at all.

Args (``RemovePodsViolatingInterPodAntiAffinityArgs``): ``namespaces`` (include or exclude), ``labelSelector``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.api.labels import Selector
from berth.api.podaffinity import compile_pod_affinity
from berth.descheduler.args import ArgsReader
from berth.descheduler.framework import DESCHEDULE, Handle, PluginSpec
from berth.descheduler.plugins.eviction_loop import evict_node_by_node, evictor_allows
from berth.descheduler.plugins.podselection import (
    EVERY_POD,
    LabelIndex,
    PodSelection,
    is_active,
    read_pod_selection,
    sort_by_priority_low_to_high,
)

__all__ = [
    "NAME",
    "SPECS",
    "RemovePodsViolatingInterPodAntiAffinity",
    "RemovePodsViolatingInterPodAntiAffinityArgs",
    "parse_args",
]

Obj = dict[str, Any]
NAME = "RemovePodsViolatingInterPodAntiAffinity"


@dataclass(frozen=True)
class RemovePodsViolatingInterPodAntiAffinityArgs:
    """The plugin's args, defaulted and validated."""

    selection: PodSelection = EVERY_POD
    """``namespaces`` and ``labelSelector``: the pods considered (as candidates and as the pods they repel)."""


def parse_args(reader: ArgsReader) -> RemovePodsViolatingInterPodAntiAffinityArgs:
    """Read ``RemovePodsViolatingInterPodAntiAffinityArgs`` (``namespaces``, ``labelSelector``)."""
    selection = read_pod_selection(reader)
    reader.finish()
    return RemovePodsViolatingInterPodAntiAffinityArgs(selection)


_TermKey = tuple[tuple[str, ...], Selector, str]


@dataclass
class _TermIndex:
    """The pods one anti-affinity term selects, by node and by the value of its topology key."""

    by_node: dict[str, list[Obj]]
    by_value: dict[str, list[Obj]]


class RemovePodsViolatingInterPodAntiAffinity:
    """Evicts pods whose required anti-affinity terms match pods in their topology domain."""

    name = NAME

    def __init__(self, args: RemovePodsViolatingInterPodAntiAffinityArgs, handle: Handle) -> None:
        """Build over the profile's handle."""
        self.args = args
        self.handle = handle

    def deschedule(self, nodes: Sequence[Obj]) -> None:
        """Evict the pods of `nodes` that violate their required inter-pod anti-affinity."""
        view = self.handle.view
        evictor = self.handle.evictor
        selection = self.args.selection
        node_map: dict[str, Obj] = {str(n["metadata"]["name"]): n for n in nodes}
        per_node: dict[str, list[Obj]] = {}
        for name in node_map:
            per_node[name] = [p for p in view.pods_on(name) if is_active(p) and selection.matches(p)]
        index = LabelIndex(p for pods in per_node.values() for p in pods)
        terms: dict[_TermKey, _TermIndex] = {}
        evicted: set[int] = set()

        def term_index(key: _TermKey) -> _TermIndex:
            got = terms.get(key)
            if got is None:
                namespaces, selector, topology_key = key
                got = _TermIndex({}, {})
                for other in index.matching(namespaces, selector):
                    node_name = str(other["spec"]["nodeName"])
                    got.by_node.setdefault(node_name, []).append(other)
                    value = (node_map[node_name]["metadata"].get("labels") or {}).get(topology_key)
                    if value is not None:
                        got.by_value.setdefault(value, []).append(other)
                terms[key] = got
            return got

        def violates(pod: Obj) -> bool:
            affinity = (pod.get("spec") or {}).get("affinity") or {}
            raw_terms = (affinity.get("podAntiAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            )
            if not raw_terms:
                return False
            meta = pod["metadata"]
            namespace = str(meta.get("namespace") or "")
            compiled = compile_pod_affinity(affinity, namespace, meta.get("labels") or {})
            node_name = str(pod["spec"]["nodeName"])
            node_labels: Mapping[str, str] = node_map[node_name]["metadata"].get("labels") or {}
            me = meta.get("name")
            for raw, term in zip(raw_terms, compiled.required_anti_affinity, strict=True):
                names = tuple(sorted(set(raw.get("namespaces") or ()))) or (namespace,)
                found = term_index((names, term.selector, term.topology_key))
                value = node_labels.get(term.topology_key)
                near = found.by_node.get(node_name, ()) if value is None else found.by_value.get(value, ())
                for other in near:
                    if id(other) not in evicted and other["metadata"].get("name") != me:
                        return True
            return False

        def violating(pods: list[Obj]) -> Iterator[Obj]:
            # Only pods with anti-affinity terms can violate (or, evicted, change what the others see),
            # so ordering just those gives upstream's sequence of evictions. Each pod is tested after the
            # evictions before it.
            candidates = [p for p in pods if _has_required_anti_affinity(p)]
            for pod in sort_by_priority_low_to_high(candidates):
                if violates(pod) and evictor_allows(evictor, pod):
                    yield pod

        def note_evicted(pod: Obj) -> bool:
            evicted.add(id(pod))
            return True

        evict_node_by_node(
            evictor, NAME, (violating(pods) for pods in per_node.values()), on_evicted=note_evicted
        )


def _has_required_anti_affinity(pod: Obj) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    return bool((affinity.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"))


def _build(args: Any, handle: Handle) -> RemovePodsViolatingInterPodAntiAffinity:
    return RemovePodsViolatingInterPodAntiAffinity(args, handle)


SPECS: tuple[PluginSpec, ...] = (PluginSpec(NAME, frozenset((DESCHEDULE,)), parse_args, _build),)
