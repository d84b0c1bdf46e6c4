"""Structural schemas of the custom kinds Berth serves, as their CRDs define them.

Reservation and PodMigrationJob follow Koordinator's CRDs (``config/crd/bases/
scheduling.koordinator.sh_reservations.yaml`` and ``..._podmigrationjobs.yaml``), ElasticQuota and PodGroup
scheduler-plugins' (``manifests/capacityscheduling/crd.yaml``, ``manifests/coscheduling/crd.yaml``) for
``scheduling.x-k8s.io`` and Koordinator's copies for ``scheduling.sigs.k8s.io`` (whose PodGroup status also
has ``scheduled``). The shapes (types, formats, enums, defaults, ``required``, list and map types, quantities as
int-or-string with kube's pattern, pod templates kept as ``x-kubernetes-preserve-unknown-fields``) are the
CRDs'; the descriptions are Berth's own, on the kinds and the fields people look up.

`SCHEMAS` maps (group, version, kind) to the CRD's ``openAPIV3Schema`` without ``apiVersion``, ``kind`` and
``metadata`` (`berth.server.openapi_schemas` adds them as apiextensions-apiserver does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["QUANTITY_PATTERN", "SCHEMAS"]

Schema = dict[str, Any]

QUANTITY_PATTERN: Final = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)"
    r"|(\.[0-9]+))))?$"
)
"""The pattern controller-gen writes for a ``resource.Quantity`` field."""


def _with(schema: Schema, description: str | None, extra: Mapping[str, Any]) -> Schema:
    out = {"description": description} if description else {}
    return {**out, **schema, **extra}


def _obj(
    properties: Mapping[str, Schema],
    description: str | None = None,
    *,
    required: tuple[str, ...] = (),
    **extra: Any,
) -> Schema:
    out: Schema = {"description": description} if description else {}
    out["type"] = "object"
    if properties:
        out["properties"] = dict(sorted(properties.items()))
    if required:
        out["required"] = list(required)
    return {**out, **{k.replace("_", "-"): v for k, v in extra.items()}}


def _str(description: str | None = None, **extra: Any) -> Schema:
    return _with({"type": "string"}, description, extra)


def _bool(description: str | None = None, **extra: Any) -> Schema:
    return _with({"type": "boolean"}, description, extra)


def _int(fmt: str, description: str | None = None, **extra: Any) -> Schema:
    return _with({"type": "integer", "format": fmt}, description, extra)


def _time(description: str | None = None, **extra: Any) -> Schema:
    return _with({"type": "string", "format": "date-time"}, description, extra)


def _array(items: Schema, description: str | None = None, **extra: Any) -> Schema:
    out = _with({"type": "array", "items": items}, description, {})
    return {**out, **{k.replace("_", "-"): v for k, v in extra.items()}}


_QUANTITY: Schema = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "pattern": QUANTITY_PATTERN,
    "x-kubernetes-int-or-string": True,
}


def _resources(description: str | None = None) -> Schema:
    """A ``corev1.ResourceList``: resource name → quantity."""
    return _with({"type": "object", "additionalProperties": dict(_QUANTITY)}, description, {})


def _object_reference(description: str | None = None) -> Schema:
    """``corev1.ObjectReference`` as controller-gen inlines it."""
    fields = ("apiVersion", "fieldPath", "kind", "name", "namespace", "resourceVersion", "uid")
    return _obj({f: _str() for f in fields}, description, x_kubernetes_map_type="atomic")


def _label_selector(description: str | None = None) -> Schema:
    """``metav1.LabelSelector`` as controller-gen inlines it."""
    requirement = _obj(
        {
            "key": _str(),
            "operator": _str(),
            "values": _array(_str(), x_kubernetes_list_type="atomic"),
        },
        required=("key", "operator"),
    )
    return _obj(
        {
            "matchExpressions": _array(requirement, x_kubernetes_list_type="atomic"),
            "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        description,
        x_kubernetes_map_type="atomic",
    )


def _preserved(description: str) -> Schema:
    """A pod or reservation template: kept whole, validated by Berth as the object it holds."""
    return {"description": description, "x-kubernetes-preserve-unknown-fields": True}


# --- Reservation -------------------------------------------------------------------------------------------

_RESERVATION_OWNER = _obj(
    {
        "controller": _obj(
            {
                "apiVersion": _str(),
                "blockOwnerDeletion": _bool(),
                "controller": _bool(),
                "kind": _str(),
                "name": _str(),
                "namespace": _str(),
                "uid": _str(),
            },
            "Pods whose controlling owner reference matches this one.",
            required=("apiVersion", "kind", "name", "uid"),
            x_kubernetes_map_type="atomic",
        ),
        "labelSelector": _label_selector("Pods whose labels match this selector."),
        "object": _object_reference("One pod, by namespace and name (or uid)."),
    },
    "One kind of pod that may use the reserved resources; the parts given must all match.",
    minProperties=1,
)

RESERVATION: Final[Schema] = _obj(
    {
        "spec": _obj(
            {
                "allocateOnce": _bool(
                    "Whether only the first owner to allocate may use the reservation (true by default).",
                    default=True,
                ),
                "allocatePolicy": _str(
                    "How owners may use the reserved resources beyond them: Aligned or Restricted.",
                    enum=["Aligned", "Restricted"],
                ),
                "expires": _time("When the reservation expires; checked before ttl."),
                "owners": _array(
                    _RESERVATION_OWNER,
                    "The pods allowed to allocate the reserved resources; an owner matching any entry may.",
                    minItems=1,
                ),
                "preAllocation": _bool(
                    "Reserve on a node even when its free resources do not cover the template, by taking over "
                    "the resources of running pods that match the owners."
                ),
                "preAllocationPolicy": _obj(
                    {
                        "enableMultiple": _bool("Allow several pods to be pre-allocated.", default=False),
                        "mode": _str(
                            "Which pods may be pre-allocated: Default (the owners) or Cluster.",
                            default="Default",
                            enum=["Default", "Cluster"],
                        ),
                    },
                    "How pods are chosen for pre-allocation.",
                ),
                "taints": _array(
                    _obj(
                        {
                            "effect": _str(),
                            "key": _str(),
                            "timeAdded": _time(),
                            "value": _str(),
                        },
                        required=("effect", "key"),
                    ),
                    "Taints on the reservation: only owners tolerating them may allocate it.",
                ),
                "template": _preserved(
                    "The pod whose scheduling requirements (resources, affinity, tolerations, node name, ...) "
                    "the reservation is scheduled with, as a pod would be."
                ),
                "ttl": _str(
                    "How long the reservation lives after creation, as a Go duration (24h by default; 0 never "
                    "expires).",
                    default="24h",
                ),
                "unschedulable": _bool("Stop new owners from allocating the reservation."),
            },
            "The resources to reserve, who may use them and for how long.",
            required=("owners", "template"),
        ),
        "status": _obj(
            {
                "allocatable": _resources("The resources reserved on the node."),
                "allocated": _resources("The part of the reserved resources the owners use."),
                "conditions": _array(
                    _obj(
                        {
                            "lastProbeTime": _time(),
                            "lastTransitionTime": _time(),
                            "message": _str(),
                            "reason": _str(),
                            "status": _str(),
                            "type": _str(),
                        }
                    ),
                    "Why the reservation is in its phase (Scheduled, Ready, ...).",
                ),
                "currentOwners": _array(
                    _object_reference(), "The pods currently allocated on the reservation."
                ),
                "nodeName": _str("The node the reservation is scheduled on."),
                "phase": _str(
                    "Pending, Waiting, Available (scheduled), Succeeded (used up) or Failed (expired or lost).",
                    default="Pending",
                ),
            },
            "The reservation's phase, node and resources, written by the scheduler and the controller.",
        ),
    },
    "Resources held on a node for chosen owner pods: scheduled like a pod from its template, then "
    "allocated by the owners when they are scheduled. Cluster-scoped.",
)


# --- PodMigrationJob ---------------------------------------------------------------------------------------

_CONDITION = _obj(
    {
        "lastProbeTime": _time(nullable=True),
        "lastTransitionTime": _time(nullable=True),
        "message": _str(),
        "reason": _str(),
        "status": _str(),
        "type": _str(),
    },
    required=("status", "type"),
)

POD_MIGRATION_JOB: Final[Schema] = _obj(
    {
        "spec": _obj(
            {
                "deleteOptions": _obj(
                    {
                        "apiVersion": _str(),
                        "dryRun": _array(_str(), x_kubernetes_list_type="atomic"),
                        "gracePeriodSeconds": _int("int64"),
                        "ignoreStoreReadErrorWithClusterBreakingPotential": _bool(),
                        "kind": _str(),
                        "orphanDependents": _bool(),
                        "preconditions": _obj({"resourceVersion": _str(), "uid": _str()}),
                        "propagationPolicy": _str(),
                    },
                    "How the migrated pod is evicted or deleted.",
                ),
                "mode": _str("ReservationFirst (reserve, then evict; the default) or EvictDirectly."),
                "paused": _bool("Hold the job until this is false."),
                "podRef": _object_reference("The pod to migrate."),
                "reservationOptions": _obj(
                    {
                        "preemptionOptions": _obj({}, "Whether the reservation may preempt other pods."),
                        "reservationRef": _object_reference("An existing reservation to use."),
                        "template": _preserved("The reservation to create when reservationRef is not set."),
                    },
                    "The reservation that holds room for the pod's replacement.",
                ),
                "ttl": _str("How long the job may run before it fails, as a Go duration."),
            },
            "The pod to move and how.",
            required=("podRef",),
        ),
        "status": _obj(
            {
                "conditions": _array(_CONDITION, "The steps of the migration."),
                "message": _str("Details of the current state."),
                "nodeName": _str("The node the replacement is reserved on."),
                "phase": _str("Pending, Running, Succeeded, Failed or Aborted."),
                "podRef": _object_reference("The replacement pod."),
                "preemptedPodsRef": _array(_object_reference(), "Pods preempted to make room."),
                "preemptedPodsReservation": _array(
                    _obj(
                        {
                            "name": _str(),
                            "namespace": _str(),
                            "nodeName": _str(),
                            "phase": _str(),
                            "podsRef": _array(_object_reference()),
                            "preemptedPodRef": _object_reference(),
                        }
                    ),
                    "Reservations made for the preempted pods.",
                ),
                "reason": _str("Why the job is in its phase, in CamelCase."),
                "status": _str("The current step (e.g. ReservationCreated)."),
            },
            "The progress of the migration, written by the controller.",
        ),
    },
    "Moves one pod: reserves room for it elsewhere, evicts it and lets its replacement land on the "
    "reservation. Cluster-scoped.",
)


# --- ElasticQuota and PodGroup -------------------------------------------------------------------------------

ELASTIC_QUOTA: Final[Schema] = _obj(
    {
        "spec": _obj(
            {
                "max": _resources("The most the namespace's pods may request; unlimited when absent."),
                "min": _resources(
                    "What the namespace is guaranteed; other namespaces may borrow what it leaves."
                ),
            },
            "The guaranteed and the maximum resources of the namespace.",
        ),
        "status": _obj(
            {"used": _resources("What the namespace's pods request now.")},
            "The quota's usage, written by the controller.",
        ),
    },
    "A namespace's resource quota for capacity scheduling: guaranteed min, borrowable up to max.",
)


def _pod_group(*, min_member_minimum: int | None, with_scheduled: bool) -> Schema:
    """scheduler-plugins' PodGroup (minMember at least 1) or Koordinator's copy (no minimum, and a
    ``scheduled`` count in the status)."""
    status: dict[str, Schema] = {
        "failed": _int("int32", "Members that failed."),
        "occupiedBy": _str("The workload that owns the group."),
        "phase": _str("Pending, PreScheduling, Scheduling, Scheduled, Running, Finished or Failed."),
        "running": _int("int32", "Members running."),
        "scheduleStartTime": _time("When the group's scheduling started."),
        "succeeded": _int("int32", "Members that succeeded."),
    }
    if with_scheduled:
        status["scheduled"] = _int("int32", "Members bound to nodes.")
    member = _int("int32", "How many pods must be scheduled together before any of them is bound.")
    if min_member_minimum is not None:
        member["minimum"] = min_member_minimum
    return _obj(
        {
            "spec": _obj(
                {
                    "minMember": member,
                    "minResources": _resources("The resources the whole group needs to start."),
                    "scheduleTimeoutSeconds": _int(
                        "int32", "How long members wait for the rest of the group."
                    ),
                },
                "The group's size and resources.",
            ),
            "status": _obj(status, "The group's phase and member counts, written by the controller."),
        },
        "A gang of pods (labelled scheduling.x-k8s.io/pod-group) scheduled all together or not at all.",
    )


_KOORD = "scheduling.koordinator.sh"
_X_K8S = "scheduling.x-k8s.io"
_SIGS = "scheduling.sigs.k8s.io"

SCHEMAS: Final[Mapping[tuple[str, str, str], Schema]] = {
    (_KOORD, "v1alpha1", "Reservation"): RESERVATION,
    (_KOORD, "v1alpha1", "PodMigrationJob"): POD_MIGRATION_JOB,
    (_X_K8S, "v1alpha1", "ElasticQuota"): ELASTIC_QUOTA,
    (_X_K8S, "v1alpha1", "PodGroup"): _pod_group(min_member_minimum=1, with_scheduled=False),
    (_SIGS, "v1alpha1", "ElasticQuota"): ELASTIC_QUOTA,
    (_SIGS, "v1alpha1", "PodGroup"): _pod_group(min_member_minimum=None, with_scheduled=True),
}
"""(group, version, kind) → the CRD's schema of the object, without apiVersion, kind and metadata."""
