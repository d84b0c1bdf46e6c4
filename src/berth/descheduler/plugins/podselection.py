"""Which pods a descheduler strategy looks at, and the small pod facts the strategies share.

Upstream's strategies take ``namespaces: {include: [...], exclude: [...]}`` (at most one of the two) and a
``labelSelector`` in their args and turn them into a pod filter (``podutil.Options``); `read_pod_selection`
reads and validates both into a `PodSelection`. Also here, as in upstream's ``podutil`` and ``utils``: the
pods that count as being on a node (`is_active`: not Succeeded or Failed), `is_terminating`, the pod's QoS
class (`pod_qos`), the order ``SortPodsBasedOnPriorityLowToHigh`` (`sort_by_priority_low_to_high`), the
containers' statuses and what they tell (`container_statuses`, `state_reasons`, `exit_codes`), and
`LabelIndex`, which narrows "the pods of these namespaces matching this selector" to a few dict look-ups.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.api.labels import Selector
from berth.api.quantity import nano_value
from berth.descheduler.args import ArgsReader

__all__ = [
    "EVERY_POD",
    "PREFER_NO_EVICTION",
    "QOS_BEST_EFFORT",
    "QOS_BURSTABLE",
    "QOS_GUARANTEED",
    "LabelIndex",
    "PodSelection",
    "container_statuses",
    "exit_codes",
    "is_active",
    "is_terminating",
    "pod_qos",
    "read_pod_selection",
    "sort_by_priority_low_to_high",
    "spec_priority",
    "state_reasons",
]

Obj = dict[str, Any]

PREFER_NO_EVICTION = "descheduler.alpha.kubernetes.io/prefer-no-eviction"
"""The soft no-eviction annotation (upstream's ``SoftNoEvictionAnnotationKey``)."""
QOS_BEST_EFFORT = "BestEffort"
QOS_BURSTABLE = "Burstable"
QOS_GUARANTEED = "Guaranteed"
_QOS_RANK = {QOS_BEST_EFFORT: 0, QOS_BURSTABLE: 1, QOS_GUARANTEED: 2}
_QOS_RESOURCES = ("cpu", "memory")


@dataclass(frozen=True)
class PodSelection:
    """The pods a strategy considers: by namespace (include or exclude) and by label selector."""

    include: frozenset[str] = frozenset()
    """Only pods of these namespaces (empty: every namespace)."""
    exclude: frozenset[str] = frozenset()
    """No pod of these namespaces."""
    label_selector: Selector | None = None
    """Only pods whose labels match (None: every pod)."""

    def matches(self, pod: Mapping[str, Any]) -> bool:
        """Whether the pod is selected (upstream's ``podutil.Options`` filter, without the evictor)."""
        meta = pod.get("metadata") or {}
        if self.include or self.exclude:
            namespace = str(meta.get("namespace") or "")
            if self.include and namespace not in self.include:
                return False
            if namespace in self.exclude:
                return False
        return self.label_selector is None or self.label_selector.matches(meta.get("labels") or {})

    def allows_namespace(self, namespace: str) -> bool:
        """Whether pods of the namespace can be selected at all."""
        if self.include and namespace not in self.include:
            return False
        return namespace not in self.exclude


EVERY_POD = PodSelection()
"""The selection of every pod (no namespace or label restriction)."""


def read_pod_selection(reader: ArgsReader, *, label_selector: bool = True) -> PodSelection:
    """Read ``namespaces`` (and ``labelSelector`` unless `label_selector` is False) from a plugin's args.

    As upstream's validation: setting both ``namespaces.include`` and ``namespaces.exclude`` is an error, and
    so is a label selector that does not compile.
    """
    namespaces = reader.child("namespaces")
    include = namespaces.strings("include")
    exclude = namespaces.strings("exclude")
    namespaces.finish()
    if include and exclude:
        raise reader.error("namespaces", "only one of Include/Exclude namespaces can be set")
    selector = reader.label_selector("labelSelector") if label_selector else None
    return PodSelection(frozenset(include), frozenset(exclude), selector)


def is_active(pod: Mapping[str, Any]) -> bool:
    """Whether the pod counts as on its node: not Succeeded or Failed (upstream's ``ListPodsOnANode``)."""
    phase = (pod.get("status") or {}).get("phase")
    return phase != "Succeeded" and phase != "Failed"


def is_terminating(pod: Mapping[str, Any]) -> bool:
    """Whether the pod is being deleted (``metadata.deletionTimestamp`` is set)."""
    return (pod.get("metadata") or {}).get("deletionTimestamp") is not None


def container_statuses(
    pod: Mapping[str, Any], *, init: bool = False, ephemeral: bool = False
) -> list[Mapping[str, Any]]:
    """``status.containerStatuses``, then ``initContainerStatuses`` with `init` and
    ``ephemeralContainerStatuses`` with `ephemeral`."""
    status = pod.get("status") or {}
    out: list[Mapping[str, Any]] = list(status.get("containerStatuses") or ())
    if init:
        out += status.get("initContainerStatuses") or ()
    if ephemeral:
        out += status.get("ephemeralContainerStatuses") or ()
    return out


def state_reasons(
    statuses: Iterable[Mapping[str, Any]], states: tuple[str, ...] = ("waiting", "terminated")
) -> list[str]:
    """The non-empty reasons of the container statuses' `states` (``state.waiting``, ``state.terminated``)."""
    out: list[str] = []
    for cs in statuses:
        state = cs.get("state") or {}
        for which in states:
            got = state.get(which)
            if got is not None and got.get("reason"):
                out.append(str(got["reason"]))
    return out


def exit_codes(statuses: Iterable[Mapping[str, Any]]) -> list[int]:
    """The exit codes of the terminated container statuses."""
    out: list[int] = []
    for cs in statuses:
        terminated = (cs.get("state") or {}).get("terminated")
        if terminated is not None:
            out.append(int(terminated.get("exitCode") or 0))
    return out


def pod_qos(pod: Mapping[str, Any]) -> str:
    """The pod's QoS class: ``status.qosClass`` when set, else computed as the kubelet does from the cpu and
    memory requests and limits of its containers and init containers."""
    given = (pod.get("status") or {}).get("qosClass")
    if given:
        return str(given)
    spec = pod.get("spec") or {}
    requests: dict[str, int] = {}  # nano-units
    limits: dict[str, int] = {}
    guaranteed = True
    for container in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]:
        resources = container.get("resources") or {}
        for name, value in (resources.get("requests") or {}).items():
            if name in _QOS_RESOURCES:
                amount = nano_value(value)
                if amount > 0:
                    requests[name] = requests.get(name, 0) + amount
        found: set[str] = set()
        for name, value in (resources.get("limits") or {}).items():
            if name in _QOS_RESOURCES:
                amount = nano_value(value)
                if amount > 0:
                    found.add(name)
                    limits[name] = limits.get(name, 0) + amount
        if not found.issuperset(_QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return QOS_BEST_EFFORT
    if guaranteed:
        for name, req in requests.items():
            if limits.get(name) != req:
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return QOS_GUARANTEED
    return QOS_BURSTABLE


def spec_priority(pod: Mapping[str, Any]) -> int | None:
    """``spec.priority`` (None when unset)."""
    priority = (pod.get("spec") or {}).get("priority")
    return None if priority is None else int(priority)


def sort_by_priority_low_to_high(
    pods: Iterable[Obj], priority: Callable[[Obj], int | None] = spec_priority
) -> list[Obj]:
    """The pods ordered as upstream's ``SortPodsBasedOnPriorityLowToHigh``: without a priority first, then
    by priority ascending; equal priorities by QoS class (BestEffort, Burstable, Guaranteed; an unknown
    ``status.qosClass`` as Burstable), and within one class the pods without the prefer-no-eviction annotation
    first. Ties keep their order. `priority` gives a pod's priority (default: ``spec.priority``)."""

    def key(pod: Obj) -> tuple[int, int, int, int]:
        value = priority(pod)
        annotations = (pod.get("metadata") or {}).get("annotations") or {}
        return (
            0 if value is None else 1,
            0 if value is None else value,
            _QOS_RANK.get(pod_qos(pod), 1),
            1 if PREFER_NO_EVICTION in annotations else 0,
        )

    return sorted(pods, key=key)


class LabelIndex:
    """Pods grouped by namespace and by label, to find the pods of some namespaces matching a selector
    without testing every pod."""

    def __init__(self, pods: Iterable[Obj]) -> None:
        """Index `pods` (kept in their order)."""
        self.by_namespace: dict[str, list[Obj]] = {}
        self._by_label: dict[str, dict[tuple[str, str], list[Obj]]] = {}
        for pod in pods:
            meta = pod.get("metadata") or {}
            namespace = str(meta.get("namespace") or "")
            self.by_namespace.setdefault(namespace, []).append(pod)
            labels = self._by_label.setdefault(namespace, {})
            for item in (meta.get("labels") or {}).items():
                labels.setdefault(item, []).append(pod)

    def _candidates(self, namespace: str, selector: Selector) -> Sequence[Obj]:
        """The pods of the namespace that may match: the smallest bucket of one of the selector's equality
        requirements, else every pod of the namespace."""
        labels = self._by_label.get(namespace)
        if not labels:
            return ()
        best: Sequence[Obj] | None = None
        for req in selector.requirements:
            if req.canonical_operator in ("=", "==", "in") and len(req.values) == 1:
                bucket = labels.get((req.key, req.values[0]), ())
                if best is None or len(bucket) < len(best):
                    best = bucket
        return self.by_namespace.get(namespace, ()) if best is None else best

    def matching(self, namespaces: Iterable[str], selector: Selector) -> list[Obj]:
        """The pods of `namespaces` whose labels match `selector`, namespace by namespace in index order."""
        if selector.is_nothing():
            return []
        out: list[Obj] = []
        for namespace in namespaces:
            for pod in self._candidates(namespace, selector):
                if selector.matches((pod.get("metadata") or {}).get("labels") or {}):
                    out.append(pod)
        return out
