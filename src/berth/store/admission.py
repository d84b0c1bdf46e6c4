"""Admission on pod creation, as the API server's built-in plugins do it.

* Priority: ``spec.priority`` from ``priorityClassName`` (or the ``globalDefault`` PriorityClass);
  an unknown class name refuses the pod. A second ``globalDefault`` PriorityClass is refused (created, or
  another class marked so), as kube's Priority plugin refuses it.
* Defaults the scheduler relies on: ``schedulerName``, ``terminationGracePeriodSeconds``,
  ``restartPolicy``, ``preemptionPolicy``, ``status.phase: Pending``.
* NamespaceAutoProvision: a namespaced object's namespace is created on first use (not by a dry run).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from berth.api.contracts import Store
from berth.api.errors import Forbidden, NotFound
from berth.api.kinds import lookup_kind
from berth.api.validation import SYSTEM_PRIORITY_CLASSES
from berth.store.memory import admits_kinds, status_blind

PRIORITY_CLASS_KEY = ("scheduling.k8s.io", "PriorityClass")
NAMESPACE_KEY = ("", "Namespace")

SYSTEM_PRIORITY_CLASS_DESCRIPTIONS: dict[str, str] = {
    "system-node-critical": "Used for system critical pods that must not be moved from their current node.",
    "system-cluster-critical": (
        "Used for system critical pods that must run in the cluster, but can be moved to another node if "
        "necessary."
    ),
}


def create_system_priority_classes(store: Store) -> None:
    """Create the built-in PriorityClasses that are missing, as kube-apiserver's bootstrap does when it starts."""
    for name, description in SYSTEM_PRIORITY_CLASS_DESCRIPTIONS.items():
        if _exists(store, name):
            continue  # a restarted server finds what an earlier start made
        store.create(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": SYSTEM_PRIORITY_CLASSES[name],
                "description": description,
                "preemptionPolicy": "PreemptLowerPriority",
            }
        )


def _exists(store: Store, priority_class: str) -> bool:
    try:
        store.get(PRIORITY_CLASS_KEY, "", priority_class)
    except NotFound:
        return False
    return True


def _resolve_priority(store: Store, pod: dict[str, Any]) -> None:
    spec = pod.setdefault("spec", {})
    name = pod["metadata"]["name"]
    class_name = spec.get("priorityClassName")
    value: int
    policy = "PreemptLowerPriority"
    if class_name:
        if class_name in SYSTEM_PRIORITY_CLASSES:
            value = SYSTEM_PRIORITY_CLASSES[class_name]
        else:
            try:
                pc = store.get(PRIORITY_CLASS_KEY, "", class_name)
            except NotFound:
                raise Forbidden(
                    f'pods "{name}" is forbidden: no PriorityClass with name {class_name} was found'
                ) from None
            value = int(pc.get("value", 0))
            policy = pc.get("preemptionPolicy") or policy
    else:
        items, _ = store.list(PRIORITY_CLASS_KEY)
        defaults = [pc for pc in items if pc.get("globalDefault")]
        if defaults:
            pc = min(defaults, key=lambda p: int(p.get("value", 0)))
            spec["priorityClassName"] = pc["metadata"]["name"]
            value = int(pc.get("value", 0))
            policy = pc.get("preemptionPolicy") or policy
        else:
            value = 0
    given = spec.get("priority")
    if given is not None and given != value:
        raise Forbidden(
            f'pods "{name}" is forbidden: the integer value of priority ({given}) must not be provided in pod '
            f"spec; priority admission controller computed {value} from the given PriorityClass name"
        )
    spec["priority"] = value
    spec.setdefault("preemptionPolicy", policy)


def _admit_priority_class(store: Store, operation: str, pc: dict[str, Any]) -> None:
    """At most one ``globalDefault`` PriorityClass: refuse creating another, or marking another one so."""
    if pc.get("globalDefault") is not True:
        return
    items, _ = store.list(PRIORITY_CLASS_KEY)
    defaults = [c for c in items if c.get("globalDefault") is True]
    if not defaults:
        return
    # as the pods' default: the lowest value when a race left several
    current = min(defaults, key=lambda c: (int(c.get("value", 0)), c["metadata"]["name"]))["metadata"]["name"]
    name = pc["metadata"]["name"]
    if operation == "CREATE" or current != name:
        raise Forbidden.of(
            "priorityclasses",
            "scheduling.k8s.io",
            name,
            f"PriorityClass {current} is already marked as default. Only one default can exist",
        )


def _default_pod(pod: dict[str, Any]) -> None:
    spec = pod.setdefault("spec", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("restartPolicy", "Always")
    status = pod.setdefault("status", {})
    status.setdefault("phase", "Pending")


def pod_admission(
    store: Store,
) -> Callable[[str, dict[str, Any], dict[str, Any] | None], dict[str, Any]]:
    """The admission function of kube's Priority plugin: pods' priority resolution and scheduling defaults, and
    the one ``globalDefault`` PriorityClass."""

    @admits_kinds("Pod", "PriorityClass")
    @status_blind  # pod creates and PriorityClass writes (no status subresource): never a status write
    def admit(operation: str, obj: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        if obj.get("kind") == "PriorityClass" and obj.get("apiVersion") == "scheduling.k8s.io/v1":
            _admit_priority_class(store, operation, obj)
            return obj
        if operation != "CREATE" or obj.get("kind") != "Pod" or obj.get("apiVersion") != "v1":
            return obj
        _default_pod(obj)
        _resolve_priority(store, obj)
        return obj

    return admit


def namespace_autoprovision(
    store: Store,
) -> Callable[[str, dict[str, Any], dict[str, Any] | None], dict[str, Any]]:
    """The admission function that creates a missing namespace for a namespaced object."""
    known: set[str] = set()

    @status_blind  # creates only
    def admit(operation: str, obj: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        if operation != "CREATE" or getattr(store, "in_dry_run", False):
            return obj  # kube's NamespaceAutoProvision creates nothing for a dry run
        try:
            info = lookup_kind(obj.get("apiVersion", ""), obj.get("kind", ""))
        except KeyError:
            return obj
        if not info.namespaced:
            return obj
        ns = (obj.get("metadata") or {}).get("namespace") or "default"
        if ns in known:
            return obj
        try:
            store.get(NAMESPACE_KEY, "", ns)
        except NotFound:
            store.create(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": ns},
                    "spec": {"finalizers": ["kubernetes"]},
                    "status": {"phase": "Active"},
                }
            )
        known.add(ns)
        return obj

    return admit
