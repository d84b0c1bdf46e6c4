"""The compiled, immutable form of a pod that plugins read on the hot path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.nodeselector import (
    PreferredTerm,
    RequiredNodeAffinity,
    compile_preferred_terms,
    required_node_affinity,
)
from berth.api.resources import container_ports, pod_requests_and_nonzero
from berth.api.taints import Toleration, parse_tolerations

DEFAULT_SCHEDULER = "default-scheduler"


class PodInfo:
    """A pod compiled once: identity, priority, request vector, tolerations, affinity and ports.

    ``obj`` is the wire-form dict the PodInfo was built from; it must not be mutated.
    """

    __slots__ = (
        "affinity",
        "extra",
        "host_ports",
        "key",
        "kind",
        "labels",
        "name",
        "namespace",
        "node_name",
        "nonzero_cpu",
        "nonzero_memory",
        "obj",
        "preferred_node_terms",
        "priority",
        "requests",
        "required_node_affinity",
        "scheduler_name",
        "scheduling_gates",
        "tolerations",
        "uid",
    )

    def __init__(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        self.obj: Mapping[str, Any] = obj
        self.kind: str = "Pod"  # pseudo pods (e.g. a Reservation's reserve pod) carry their owner's kind
        self.uid: str = meta.get("uid") or ""
        self.namespace: str = meta.get("namespace") or "default"
        self.name: str = meta.get("name") or ""
        self.key: str = f"{self.namespace}/{self.name}"
        self.labels: Mapping[str, str] = meta.get("labels") or {}
        priority = spec.get("priority")
        self.priority: int = int(priority) if priority is not None else 0
        self.requests: dict[str, int]
        self.requests, (self.nonzero_cpu, self.nonzero_memory) = pod_requests_and_nonzero(obj)
        self.tolerations: tuple[Toleration, ...] = parse_tolerations(spec.get("tolerations"))
        self.required_node_affinity: RequiredNodeAffinity = required_node_affinity(obj)
        affinity = spec.get("affinity") or {}
        self.affinity: Mapping[str, Any] = affinity
        node_aff = affinity.get("nodeAffinity") or {}
        self.preferred_node_terms: tuple[PreferredTerm, ...] = compile_preferred_terms(
            node_aff.get("preferredDuringSchedulingIgnoredDuringExecution")
        )
        self.host_ports: tuple[tuple[str, str, int], ...] = container_ports(obj)
        self.node_name: str = spec.get("nodeName") or ""
        self.scheduler_name: str = spec.get("schedulerName") or DEFAULT_SCHEDULER
        self.scheduling_gates: tuple[str, ...] = tuple(
            g.get("name", "") for g in (spec.get("schedulingGates") or ())
        )
        self.extra: dict[str, Any] = {}

    def copy(self) -> PodInfo:
        """A shallow copy (compiled fields shared, ``requests`` and ``extra`` copied) without re-parsing."""
        out = PodInfo.__new__(PodInfo)
        for slot in PodInfo.__slots__:
            setattr(out, slot, getattr(self, slot))
        out.requests = dict(self.requests)
        out.extra = dict(self.extra)
        return out

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"
