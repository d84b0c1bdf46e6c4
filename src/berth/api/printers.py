"""Printer columns: the one definition of every table column Berth prints, with the function computing its cell.

A :class:`Column` is what ``metav1.TableColumnDefinition`` describes (name, type, format, description,
priority) plus the cell function, so the API server's ``metav1.Table`` (``berth.server.tables``) and
``berth simulate -o table|wide`` (``berth.sim.output``) print the same cells. :func:`server_columns` gives
kube-apiserver's columns for a kind (``pkg/printers/internalversion`` for built-ins, the CRD's
``additionalPrinterColumns`` for Koordinator's and scheduler-plugins' kinds); ``berth simulate`` picks its
own selection from the columns defined here.

Cells are typed as the server sends them (``str``, ``int``, ``bool`` or ``None`` for a missing CRD value);
:func:`cell_text` is how kubectl prints one. Ages are computed against a ``now`` passed in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from berth.api.kinds import KindInfo
from berth.api.timestamps import parse_time

__all__ = [
    "AGE",
    "CM_DATA",
    "CONTAINERS",
    "CRONJOB_ACTIVE",
    "CRONJOB_CONTAINERS",
    "CRONJOB_IMAGES",
    "CRONJOB_LAST_SCHEDULE",
    "CRONJOB_SCHEDULE",
    "CRONJOB_SELECTOR",
    "CRONJOB_SUSPEND",
    "CRONJOB_TIMEZONE",
    "DEPLOYMENT_AVAILABLE",
    "DEPLOYMENT_READY",
    "DEPLOYMENT_SELECTOR",
    "DEPLOYMENT_UP_TO_DATE",
    "DS_AVAILABLE",
    "DS_CURRENT",
    "DS_DESIRED",
    "DS_NODE_SELECTOR",
    "DS_READY",
    "DS_SELECTOR",
    "DS_UP_TO_DATE",
    "EQ_AGE",
    "EQ_MAX",
    "EQ_USED",
    "EVENT_COUNT",
    "EVENT_FIRST_SEEN",
    "EVENT_LAST_SEEN",
    "EVENT_MESSAGE",
    "EVENT_NAME",
    "EVENT_OBJECT",
    "EVENT_REASON",
    "EVENT_SOURCE",
    "EVENT_SUBOBJECT",
    "EVENT_TYPE",
    "IMAGES",
    "JOB_COMPLETIONS",
    "JOB_DURATION",
    "JOB_SELECTOR",
    "JOB_STATUS",
    "LEASE_HOLDER",
    "NAME",
    "NAMESPACE",
    "NAMESPACE_STATUS",
    "NODE_EXTERNAL_IP",
    "NODE_INTERNAL_IP",
    "NODE_KERNEL",
    "NODE_OS_IMAGE",
    "NODE_ROLES",
    "NODE_RUNTIME",
    "NODE_STATUS",
    "NODE_TAINTS",
    "NODE_VERSION",
    "PC_GLOBAL_DEFAULT",
    "PC_PREEMPTION_POLICY",
    "PC_VALUE",
    "PDB_ALLOWED",
    "PDB_MAX_UNAVAILABLE",
    "PDB_MIN_AVAILABLE",
    "PG_AGE",
    "PG_FAILED",
    "PG_MIN_MEMBER",
    "PG_PHASE",
    "PG_RUNNING",
    "PG_SUCCEEDED",
    "PMJ_COLUMNS",
    "POD_IP",
    "POD_NODE",
    "POD_NOMINATED_NODE",
    "POD_PRIORITY",
    "POD_READINESS_GATES",
    "POD_READY",
    "POD_RESTARTS",
    "POD_STATUS",
    "RESERVATION_AGE",
    "RESERVATION_EXPIRES",
    "RESERVATION_NODE",
    "RESERVATION_PHASE",
    "RESERVATION_TTL",
    "RS_CURRENT",
    "RS_DESIRED",
    "RS_READY",
    "RS_SELECTOR",
    "STS_READY",
    "SVC_CLUSTER_IP",
    "SVC_EXTERNAL_IP",
    "SVC_PORTS",
    "SVC_SELECTOR",
    "SVC_TYPE",
    "Cell",
    "CellFunction",
    "Column",
    "cell_text",
    "crd_default_columns",
    "format_label_selector",
    "human_duration",
    "object_age",
    "pod_status_text",
    "server_columns",
]

Cell = str | int | bool | None
Obj = Mapping[str, Any]
CellFunction = Callable[[Obj, datetime], Cell]


@dataclass(frozen=True, slots=True)
class Column:
    """One table column: its ``metav1.TableColumnDefinition`` fields and the function computing its cell."""

    name: str
    type: str
    cell: CellFunction
    description: str = ""
    format: str = ""
    priority: int = 0
    json_path: str = ""
    """For a custom resource's column: the JSONPath its CRD's additionalPrinterColumns declares."""

    @property
    def header(self) -> str:
        """The heading kubectl prints (the name in upper case)."""
        return self.name.upper()

    def definition(self) -> dict[str, Any]:
        """The ``metav1.TableColumnDefinition`` (every field present, as the API server sends it)."""
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }

    def text(self, obj: Obj, now: datetime) -> str:
        """The cell as kubectl prints it."""
        return cell_text(self.cell(obj, now))


def cell_text(value: Cell) -> str:
    """A cell as kubectl's table printer writes it: nothing for a missing value, ``true``/``false``, digits."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def human_duration(seconds: float) -> str:
    """kubectl's age format (``HumanDuration``): 45s, 5m30s, 3h, 2d4h, ..."""
    s = int(seconds)
    if s < 0:
        s = 0
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    d = h // 24
    if h < 24 * 8:
        return f"{d}d{h % 24}h" if h % 24 else f"{d}d"
    if h < 24 * 365 * 2:
        return f"{d}d"
    return f"{d // 365}y"


def _since(timestamp: object, now: datetime) -> str:
    """``translateTimestampSince``: the age of a timestamp, ``<unknown>`` when there is none."""
    t = parse_time(timestamp)
    return "<unknown>" if t is None else human_duration((now - t).total_seconds())


def object_age(obj: Obj, now: datetime) -> str:
    """The AGE cell: how long ago the object was created."""
    return _since(_meta(obj).get("creationTimestamp"), now)


def _meta(obj: Obj) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _spec(obj: Obj) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def _status(obj: Obj) -> Mapping[str, Any]:
    return obj.get("status") or {}


def _path(obj: Obj, *keys: str) -> object:
    """The value at a JSON path of plain keys (``.spec.ttl``), None when any step is missing."""
    value: object = obj
    for k in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(k)
    return value


# ---- descriptions (the API's field documentation, as kube's printers quote it) -------------------------------

_NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may "
    "allow a client to request the generation of an appropriate name automatically. Name is primarily intended "
    "for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_CREATED_DOC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. "
    "It is represented in RFC3339 form and is in UTC.  Populated by the system. Read-only. Null for lists. More "
    "info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_NAMESPACE_DOC = (
    'Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the "'
    'default" namespace, but "default" is the canonical representation. Not all objects are required to be '
    "scoped to a namespace - the value of this field for those objects will be empty.  Must be a DNS_LABEL. "
    "Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces"
)
_CONTAINERS_DOC = "Names of each container in the template."
_IMAGES_DOC = "Images referenced by each container in the template."
_ADDRESSES_DOC = (
    "List of addresses reachable to the node. Queried from cloud provider, if available. More info: "
    "https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, "
    "but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers "
    "should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should "
    "assume that addresses can change during the lifetime of a Node. However, there are some exceptions where "
    "this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the "
    "downward API (status.hostIP)."
)


def _crd_doc(json_path: str) -> str:
    """The description of a CRD printer column that declares none."""
    return f"Custom resource definition column (in JSONPath format): {json_path}"


# ---- columns every kind has -----------------------------------------------------------------------------------

NAME = Column("Name", "string", lambda o, now: str(_meta(o).get("name", "")), _NAME_DOC, format="name")
"""The object's name (kube's first column of every table)."""

NAMESPACE = Column("Namespace", "string", lambda o, now: str(_meta(o).get("namespace", "")), _NAMESPACE_DOC)
"""The object's namespace (kubectl adds it itself for ``--all-namespaces``; ``berth simulate`` always shows it)."""

AGE = Column("Age", "string", object_age, _CREATED_DOC)
"""The object's age (a built-in kind's Age column)."""


def _crd_age(description: str = _CREATED_DOC) -> Column:
    """A CRD's Age column (``type: date`` on ``.metadata.creationTimestamp``)."""
    return Column("Age", "date", object_age, description, json_path=".metadata.creationTimestamp")


def _crd_value(value: object) -> Cell:
    """A CRD string column's cell as kube's jsonpath prints it: maps and lists as compact JSON, None if absent."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping | list):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def _crd_integer(value: object) -> Cell:
    """A CRD integer column's cell: the number, None when absent or not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _crd_string(name: str, *path: str, description: str | None = None) -> Column:
    json_path = "." + ".".join(path)
    return Column(
        name,
        "string",
        lambda o, now: _crd_value(_path(o, *path)),
        _crd_doc(json_path) if description is None else description,
        json_path=json_path,
    )


def crd_default_columns() -> tuple[Column, ...]:
    """A CRD without ``additionalPrinterColumns``: Name and Age, as the API server serves it."""
    return (NAME, _crd_age())


# ---- Pod ------------------------------------------------------------------------------------------------------


def pod_status_text(pod: Obj) -> str:
    """The STATUS column of ``kubectl get pods``."""
    meta = _meta(pod)
    status = _status(pod)
    if meta.get("deletionTimestamp"):
        return "Terminating"
    phase = status.get("phase") or "Pending"
    if phase == "Succeeded":
        return "Completed"
    if phase == "Failed":
        return str(status.get("reason") or "Error")
    if phase == "Pending":
        for c in status.get("conditions") or []:
            if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
                return "SchedulingGated"
    for cs in reversed(status.get("containerStatuses") or []):
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason"):  # a container that waits says why (CrashLoopBackOff), as kubectl prints it
            return str(waiting["reason"])
    return str(status.get("reason") or phase)


def _pod_ready(pod: Obj, now: datetime) -> str:
    containers = _spec(pod).get("containers") or []
    statuses = _status(pod).get("containerStatuses") or []
    ready = sum(1 for c in statuses if c.get("ready"))
    return f"{ready}/{len(containers)}"


def _pod_restarts(pod: Obj, now: datetime) -> str:
    return str(sum(int(c.get("restartCount", 0)) for c in _status(pod).get("containerStatuses") or []))


def _pod_ip(pod: Obj, now: datetime) -> str:
    ips = _status(pod).get("podIPs") or []
    ip = (ips[0].get("ip") if ips else None) or ""
    return str(ip) or "<none>"


def _pod_readiness_gates(pod: Obj, now: datetime) -> str:
    gates = _spec(pod).get("readinessGates") or []
    if not gates:
        return "<none>"
    conditions = _status(pod).get("conditions") or []
    true = 0
    for gate in gates:
        for c in conditions:
            if c.get("type") == gate.get("conditionType"):
                true += c.get("status") == "True"
                break
    return f"{true}/{len(gates)}"


POD_READY = Column(
    "Ready", "string", _pod_ready, "The aggregate readiness state of this pod for accepting traffic."
)
POD_STATUS = Column(
    "Status",
    "string",
    lambda p, now: pod_status_text(p),
    "The aggregate status of the containers in this pod.",
)
POD_RESTARTS = Column(
    "Restarts",
    "string",
    _pod_restarts,
    "The number of times the containers in this pod have been restarted and when the last container in this "
    "pod has restarted.",
)
POD_IP = Column(
    "IP",
    "string",
    _pod_ip,
    "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
    priority=1,
)
POD_NODE = Column(
    "Node",
    "string",
    lambda p, now: str(_spec(p).get("nodeName") or "<none>"),
    "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling "
    "by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes "
    "responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod "
    "to be scheduled on a specific node. "
    "https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename",
    priority=1,
)
POD_NOMINATED_NODE = Column(
    "Nominated Node",
    "string",
    lambda p, now: str(_status(p).get("nominatedNodeName") or "<none>"),
    "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled "
    "right away as preemption victims receive their graceful termination periods. This field does not "
    "guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if "
    "other nodes become available sooner. Scheduler may also decide to give the resources on this node to a "
    "higher priority pod that is created after preemption. As a result, this field may be different than "
    "PodSpec.nodeName when the pod is scheduled.",
    priority=1,
)
POD_READINESS_GATES = Column(
    "Readiness Gates",
    "string",
    _pod_readiness_gates,
    "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its "
    'containers are ready AND all conditions specified in the readiness gates have status equal to "True" '
    "More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates",
    priority=1,
)
POD_PRIORITY = Column(
    "Priority",
    "integer",
    lambda p, now: _spec(p).get("priority", 0),
    "The priority value (``berth simulate -o wide``; not one of kube's pod columns).",
    priority=1,
)

# ---- Node -----------------------------------------------------------------------------------------------------


def _node_status(node: Obj, now: datetime) -> str:
    conds = _status(node).get("conditions") or []
    ready = "Ready"
    for c in conds:
        if c.get("type") == "Ready" and c.get("status") != "True":
            ready = "NotReady"
    if _spec(node).get("unschedulable"):
        ready += ",SchedulingDisabled"
    return ready


def _node_roles(node: Obj, now: datetime) -> str:
    labels = _meta(node).get("labels") or {}
    roles = sorted(
        k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and "/" in k
    )
    return ",".join(roles) or "<none>"


def _node_address(kind: str) -> CellFunction:
    def cell(node: Obj, now: datetime) -> str:
        for a in _status(node).get("addresses") or []:
            if a.get("type") == kind:
                return str(a.get("address", ""))
        return "<none>"

    return cell


def _node_info(key: str) -> CellFunction:
    return lambda n, now: str((_status(n).get("nodeInfo") or {}).get(key) or "<unknown>")


def _node_taints(node: Obj, now: datetime) -> str:
    taints = _spec(node).get("taints") or []
    return (
        ",".join(
            f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect')}" for t in taints
        )
        or "<none>"
    )


NODE_STATUS = Column("Status", "string", _node_status, "The status of the node")
NODE_ROLES = Column("Roles", "string", _node_roles, "The roles of the node")
NODE_VERSION = Column(
    "Version",
    "string",
    lambda n, now: str((_status(n).get("nodeInfo") or {}).get("kubeletVersion", "")),
    "Kubelet Version reported by the node.",
)
NODE_INTERNAL_IP = Column("Internal-IP", "string", _node_address("InternalIP"), _ADDRESSES_DOC, priority=1)
NODE_EXTERNAL_IP = Column("External-IP", "string", _node_address("ExternalIP"), _ADDRESSES_DOC, priority=1)
NODE_OS_IMAGE = Column(
    "OS-Image",
    "string",
    _node_info("osImage"),
    "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
    priority=1,
)
NODE_KERNEL = Column(
    "Kernel-Version",
    "string",
    _node_info("kernelVersion"),
    "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
    priority=1,
)
NODE_RUNTIME = Column(
    "Container-Runtime",
    "string",
    _node_info("containerRuntimeVersion"),
    "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
    priority=1,
)
NODE_TAINTS = Column(
    "Taints",
    "string",
    _node_taints,
    "The node's taints (``berth simulate -o wide``; not one of kube's node columns).",
    priority=1,
)

# ---- Namespace, Event, PriorityClass, Lease --------------------------------------------------------------------

NAMESPACE_STATUS = Column(
    "Status",
    "string",
    lambda o, now: str(_status(o).get("phase", "Active")),
    "The status of the namespace",
)


def _event_object(e: Obj, now: datetime) -> str:
    inv = e.get("involvedObject") or {}
    return f"{str(inv.get('kind', '')).lower()}/{inv.get('name', '')}"


def _event_source(e: Obj, now: datetime) -> str:
    source = e.get("source") or {}
    component = source.get("component") or e.get("reportingComponent") or ""
    host = source.get("host") or e.get("reportingInstance") or ""
    return f"{component}, {host}" if host else str(component)


def _event_first_seen(e: Obj, now: datetime) -> str:
    return _since(e.get("firstTimestamp") or e.get("eventTime"), now)


def _event_count(e: Obj, now: datetime) -> int:
    series = e.get("series")
    if series:
        return int(series.get("count", 0))
    return int(e.get("count") or 1)


def _event_last_seen(e: Obj, now: datetime) -> str:
    """kube's printEvent: the series' last observation, else lastTimestamp, else eventTime (an Event written
    through events.k8s.io/v1 has no lastTimestamp)."""
    series = e.get("series")
    if series:
        return _since(series.get("lastObservedTime"), now)
    return _since(e.get("lastTimestamp") or e.get("eventTime"), now)


EVENT_LAST_SEEN = Column(
    "Last Seen",
    "string",
    _event_last_seen,
    "The time at which the most recent occurrence of this event was recorded.",
)
EVENT_TYPE = Column(
    "Type",
    "string",
    lambda e, now: str(e.get("type", "")),
    "Type of this event (Normal, Warning), new types could be added in the future",
)
EVENT_REASON = Column(
    "Reason",
    "string",
    lambda e, now: str(e.get("reason", "")),
    "This should be a short, machine understandable string that gives the reason for the transition into the "
    "object's current status.",
)
EVENT_OBJECT = Column("Object", "string", _event_object, "The object that this event is about.")
EVENT_SUBOBJECT = Column(
    "Subobject",
    "string",
    lambda e, now: str((e.get("involvedObject") or {}).get("fieldPath", "")),
    "If referring to a piece of an object instead of an entire object, this string should contain a valid "
    "JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object "
    'reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where '
    '"name" refers to the name of the container that triggered the event) or if no container name is specified '
    '"spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some '
    "well-defined way of referencing a part of an object.",
    priority=1,
)
EVENT_SOURCE = Column(
    "Source",
    "string",
    _event_source,
    "The component reporting this event. Should be a short machine understandable string.",
    priority=1,
)
EVENT_MESSAGE = Column(
    "Message",
    "string",
    lambda e, now: str(e.get("message", "")),
    "A human-readable description of the status of this operation.",
)
EVENT_FIRST_SEEN = Column(
    "First Seen",
    "string",
    _event_first_seen,
    "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
    priority=1,
)
EVENT_COUNT = Column(
    "Count", "string", _event_count, "The number of times this event has occurred.", priority=1
)
EVENT_NAME = Column(
    "Name", "string", lambda o, now: str(_meta(o).get("name", "")), _NAME_DOC, format="name", priority=1
)

PC_VALUE = Column(
    "Value",
    "integer",
    lambda o, now: o.get("value", 0),
    "value represents the integer value of this priority class. This is the actual priority that pods receive "
    "when they have the name of this class in their pod spec.",
)
PC_GLOBAL_DEFAULT = Column(
    "Global-Default",
    "boolean",
    lambda o, now: bool(o.get("globalDefault")),
    "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods "
    "that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if "
    "more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of "
    "such global default PriorityClasses will be used as the default priority.",
)
PC_PREEMPTION_POLICY = Column(
    "PreemptionPolicy",
    "string",
    lambda o, now: str(o.get("preemptionPolicy") or "PreemptLowerPriority"),
    "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, "
    "PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.",
)

LEASE_HOLDER = Column(
    "Holder",
    "string",
    lambda o, now: str(_spec(o).get("holderIdentity") or ""),
    "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is "
    "used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.",
)

# ---- ReplicaSet, Deployment, PodDisruptionBudget ---------------------------------------------------------------


def format_label_selector(sel: Mapping[str, Any] | None) -> str:
    """metav1.FormatLabelSelector: requirements sorted by key, "<none>" when empty."""
    sel = sel or {}
    reqs = [(k, f"{k}={v}") for k, v in (sel.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin"}
    for e in sel.get("matchExpressions") or ():
        key, op = e.get("key", ""), e.get("operator", "")
        if op in ops:
            reqs.append((key, f"{key} {ops[op]} ({','.join(sorted(e.get('values') or ()))})"))
        else:
            reqs.append((key, key if op == "Exists" else f"!{key}"))
    return ",".join(r for _, r in sorted(reqs, key=lambda kr: kr[0])) or "<none>"


def _template_containers(o: Obj) -> list[Mapping[str, Any]]:
    return list((((_spec(o).get("template") or {}).get("spec")) or {}).get("containers") or [])


CONTAINERS = Column(
    "Containers",
    "string",
    lambda o, now: ",".join(str(c.get("name", "")) for c in _template_containers(o)),
    _CONTAINERS_DOC,
    priority=1,
)
IMAGES = Column(
    "Images",
    "string",
    lambda o, now: ",".join(str(c.get("image", "")) for c in _template_containers(o)),
    _IMAGES_DOC,
    priority=1,
)
RS_SELECTOR = Column(
    "Selector",
    "string",
    lambda o, now: format_label_selector(_spec(o).get("selector")),
    "Selector is a label query over pods that should match the replica count. Label keys and values that must "
    "match in order to be controlled by this replica set. It must match the pod template's labels. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    priority=1,
)
DEPLOYMENT_SELECTOR = Column(
    "Selector",
    "string",
    lambda o, now: format_label_selector(_spec(o).get("selector")),
    "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by "
    "this deployment. It must match the pod template's labels.",
    priority=1,
)
RS_DESIRED = Column(
    "Desired",
    "integer",
    lambda o, now: _spec(o).get("replicas", 1),
    "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and "
    "unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
)
RS_CURRENT = Column(
    "Current",
    "integer",
    lambda o, now: _status(o).get("replicas", 0),
    "Replicas is the most recently observed number of non-terminating pods. More info: "
    "https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
)
RS_READY = Column(
    "Ready",
    "integer",
    lambda o, now: _status(o).get("readyReplicas", 0),
    "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
)
DEPLOYMENT_READY = Column(
    "Ready",
    "string",
    lambda o, now: f"{_status(o).get('readyReplicas', 0)}/{_spec(o).get('replicas', 1)}",
    "Number of the pod with ready state",
)
DEPLOYMENT_UP_TO_DATE = Column(
    "Up-to-date",
    "string",
    lambda o, now: _status(o).get("updatedReplicas", 0),
    "Total number of non-terminating pods targeted by this deployment that have the desired template spec.",
)
DEPLOYMENT_AVAILABLE = Column(
    "Available",
    "string",
    lambda o, now: _status(o).get("availableReplicas", 0),
    "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this "
    "deployment.",
)


# ---- StatefulSet, DaemonSet, Service (kube's printers.go) -------------------------------------------------------


def _format_labels(labels: object) -> str:
    """labels.FormatLabels: ``k=v`` pairs sorted by key, joined by commas; ``<none>`` when empty."""
    if not isinstance(labels, Mapping) or not labels:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


STS_READY = Column(
    "Ready",
    "string",
    lambda o, now: f"{_status(o).get('readyReplicas', 0)}/{_spec(o).get('replicas', 1)}",
    "Number of the pod with ready state",
)
DS_DESIRED = Column(
    "Desired",
    "integer",
    lambda o, now: _status(o).get("desiredNumberScheduled", 0),
    "The total number of nodes that should be running the daemon pod (including nodes correctly running the "
    "daemon pod).",
)
DS_CURRENT = Column(
    "Current",
    "integer",
    lambda o, now: _status(o).get("currentNumberScheduled", 0),
    "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.",
)
DS_READY = Column(
    "Ready",
    "integer",
    lambda o, now: _status(o).get("numberReady", 0),
    "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running "
    "with a Ready Condition.",
)
DS_UP_TO_DATE = Column(
    "Up-to-date",
    "integer",
    lambda o, now: _status(o).get("updatedNumberScheduled", 0),
    "The total number of nodes that are running updated daemon pod",
)
DS_AVAILABLE = Column(
    "Available",
    "integer",
    lambda o, now: _status(o).get("numberAvailable", 0),
    "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running "
    "and available (ready for at least spec.minReadySeconds)",
)
DS_NODE_SELECTOR = Column(
    "Node Selector",
    "string",
    lambda o, now: _format_labels((((_spec(o).get("template") or {}).get("spec")) or {}).get("nodeSelector")),
    "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a "
    "node's labels for the pod to be scheduled on that node.",
)
DS_SELECTOR = Column(
    "Selector",
    "string",
    lambda o, now: format_label_selector(_spec(o).get("selector")),
    "A label query over pods that are managed by the daemon set. Must match in order to be controlled. It must "
    "match the pod template's labels.",
    priority=1,
)


CM_DATA = Column(
    "Data",
    "integer",
    lambda o, now: len(o.get("data") or {}) + len(o.get("binaryData") or {}),
    "Data contains the configuration data.",
)


def _service_external_ip(o: Obj) -> str:
    """kube's getServiceExternalIP."""
    spec = _spec(o)
    kind = spec.get("type") or "ClusterIP"
    external = [str(ip) for ip in spec.get("externalIPs") or ()]
    if kind == "ExternalName":
        return str(spec.get("externalName") or "")
    if kind == "LoadBalancer":
        ingress = (_status(o).get("loadBalancer") or {}).get("ingress") or ()
        ips = [str(i.get("ip") or i.get("hostname") or "") for i in ingress] + external
        return ",".join(ips) if ips else "<pending>"
    return ",".join(external) if external else "<none>"


def _service_ports(o: Obj) -> str:
    """kube's makePortString."""
    out = []
    for p in _spec(o).get("ports") or ():
        protocol = p.get("protocol") or "TCP"
        node_port = p.get("nodePort") or 0
        out.append(f"{p.get('port')}:{node_port}/{protocol}" if node_port else f"{p.get('port')}/{protocol}")
    return ",".join(out) if out else "<none>"


SVC_TYPE = Column(
    "Type",
    "string",
    lambda o, now: str(_spec(o).get("type") or "ClusterIP"),
    "type determines how the Service is exposed: ClusterIP, NodePort, LoadBalancer or ExternalName.",
)
SVC_CLUSTER_IP = Column(
    "Cluster-IP",
    "string",
    lambda o, now: str((_spec(o).get("clusterIPs") or [_spec(o).get("clusterIP") or "<none>"])[0]),
    "clusterIP is the IP address of the service; Berth allocates none (only None, for headless services, or "
    "an address given by the user).",
)
SVC_EXTERNAL_IP = Column(
    "External-IP",
    "string",
    lambda o, now: _service_external_ip(o),
    "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this "
    "service.",
)
SVC_PORTS = Column(
    "Port(s)",
    "string",
    lambda o, now: _service_ports(o),
    "The list of ports that are exposed by this service.",
)
SVC_SELECTOR = Column(
    "Selector",
    "string",
    lambda o, now: _format_labels(_spec(o).get("selector")),
    "Route service traffic to pods with label keys and values matching this selector.",
    priority=1,
)


def _bound(value: object) -> str:
    """A PodDisruptionBudget bound (an int or a percentage); N/A when unset."""
    return "N/A" if value is None else str(value)


PDB_MIN_AVAILABLE = Column(
    "Min Available",
    "string",
    lambda o, now: _bound(_spec(o).get("minAvailable")),
    "The minimum number of pods that must be available.",
)
PDB_MAX_UNAVAILABLE = Column(
    "Max Unavailable",
    "string",
    lambda o, now: _bound(_spec(o).get("maxUnavailable")),
    "The maximum number of pods that may be unavailable.",
)
PDB_ALLOWED = Column(
    "Allowed Disruptions",
    "integer",
    lambda o, now: _status(o).get("disruptionsAllowed", 0),
    "Calculated number of pods that may be disrupted at this time.",
)

# ---- Koordinator: Reservation, PodMigrationJob (their CRDs' additionalPrinterColumns) --------------------------

RESERVATION_PHASE = _crd_string("Phase", "status", "phase", description="The phase of reservation")
RESERVATION_AGE = _crd_age(_crd_doc(".metadata.creationTimestamp"))
RESERVATION_NODE = _crd_string("Node", "status", "nodeName")
RESERVATION_TTL = _crd_string("TTL", "spec", "ttl")
RESERVATION_EXPIRES = _crd_string("Expires", "spec", "expires")

PMJ_COLUMNS = (
    NAME,
    _crd_string("Phase", "status", "phase", description="The phase of PodMigrationJob"),
    _crd_string("Status", "status", "status", description="The status of PodMigrationJob"),
    _crd_age(_crd_doc(".metadata.creationTimestamp")),
    _crd_string("Node", "status", "nodeName"),
    _crd_string("Reservation", "spec", "reservationOptions", "reservationRef", "name"),
    _crd_string("PodNamespace", "spec", "podRef", "namespace"),
    _crd_string("Pod", "spec", "podRef", "name"),
    _crd_string("NewPod", "status", "podRef", "name"),
    _crd_string("TTL", "spec", "ttl"),
)

# ---- scheduler-plugins: ElasticQuota, PodGroup (scheduling.x-k8s.io CRDs' additionalPrinterColumns) -------------


def _resource_list(*path: str) -> CellFunction:
    """A ResourceList column: compact JSON, nothing when empty (scheduler-plugins' Go types omit an empty
    list, so a stored ElasticQuota never carries one)."""
    return lambda o, now: _crd_value(_path(o, *path) or None)


EQ_USED = Column(
    "Used",
    "string",
    _resource_list("status", "used"),
    "Used is the current observed total usage of the resource in the namespace.",
    json_path=".status.used",
)
# scheduler-plugins declares Max as ``type=integer``, which makes kube-apiserver blank every cell of it (the
# value is a map); Berth prints the map as the string column it is.
EQ_MAX = Column(
    "Max",
    "string",
    _resource_list("spec", "max"),
    "Max is the set of desired max limits for each named resource.",
    json_path=".spec.max",
)
EQ_AGE = _crd_age("Age is the time ElasticQuota was created.")

PG_PHASE = _crd_string("Phase", "status", "phase", description="Current phase of PodGroup.")
PG_MIN_MEMBER = Column(
    "MinMember",
    "integer",
    lambda o, now: _crd_integer(_path(o, "spec", "minMember")),
    "MinMember defines the minimal number of members/tasks to run the pod group.",
    json_path=".spec.minMember",
)
PG_RUNNING = _crd_string("Running", "status", "running", description="The number of actively running pods.")
PG_SUCCEEDED = _crd_string(
    "Succeeded", "status", "succeeded", description="The number of pods which reached phase Succeeded."
)
PG_FAILED = _crd_string(
    "Failed", "status", "failed", description="The number of pods which reached phase Failed."
)
PG_AGE = _crd_age("Age is the time PodGroup was created.")

# -- batch/v1 Job and CronJob (kube's printJob / printCronJob) --------------------------------------------------


def _has_condition(obj: Obj, type_: str) -> bool:
    return any(
        c.get("type") == type_ and c.get("status") == "True" for c in _status(obj).get("conditions") or ()
    )


def _job_status(job: Obj, now: datetime) -> str:
    if _has_condition(job, "Complete"):
        return "Complete"
    if _has_condition(job, "Failed"):
        return "Failed"
    if _meta(job).get("deletionTimestamp"):
        return "Terminating"
    for type_ in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _has_condition(job, type_):
            return type_
    return "Running"


def _job_completions(job: Obj, now: datetime) -> str:
    succeeded = _status(job).get("succeeded", 0)
    completions = _spec(job).get("completions")
    if completions is not None:
        return f"{succeeded}/{completions}"
    parallelism = _spec(job).get("parallelism") or 0
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def _job_duration(job: Obj, now: datetime) -> str:
    start = parse_time(_status(job).get("startTime"))
    if start is None:
        return ""
    end = parse_time(_status(job).get("completionTime")) or now
    return human_duration((end - start).total_seconds())


def _job_template_containers(o: Obj) -> list[Mapping[str, Any]]:
    template = ((_spec(o).get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    return list((template.get("spec") or {}).get("containers") or [])


_JOB_SELECTOR_DOC = (
    "A label query over pods that should match the pod count. Normally, the system sets this field for you. "
    "More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"
)
JOB_STATUS = Column("Status", "string", _job_status, "Status of the job.")
JOB_COMPLETIONS = Column(
    "Completions",
    "string",
    _job_completions,
    "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. "
    "However, it may decrease in reaction to scale down of elastic indexed jobs.",
)
JOB_DURATION = Column("Duration", "string", _job_duration, "Time required to complete the job.")
JOB_SELECTOR = Column(
    "Selector",
    "string",
    lambda o, now: format_label_selector(_spec(o).get("selector")),
    _JOB_SELECTOR_DOC,
    priority=1,
)
CRONJOB_SCHEDULE = Column(
    "Schedule",
    "string",
    lambda o, now: str(_spec(o).get("schedule", "")),
    "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
)
CRONJOB_TIMEZONE = Column(
    "Timezone",
    "string",
    lambda o, now: str(_spec(o).get("timeZone") or "<none>"),
    "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.",
)
CRONJOB_SUSPEND = Column(
    "Suspend",
    "boolean",
    lambda o, now: (
        "<unset>" if _spec(o).get("suspend") is None else ("True" if _spec(o)["suspend"] else "False")
    ),
    "This flag tells the controller to suspend subsequent executions, it does not apply to already started "
    "executions.  Defaults to false.",
)
CRONJOB_ACTIVE = Column(
    "Active",
    "integer",
    lambda o, now: len(_status(o).get("active") or ()),
    "A list of pointers to currently running jobs.",
)
CRONJOB_LAST_SCHEDULE = Column(
    "Last Schedule",
    "string",
    lambda o, now: (
        _since(_status(o)["lastScheduleTime"], now) if _status(o).get("lastScheduleTime") else "<none>"
    ),
    "Information when was the last time the job was successfully scheduled.",
)
CRONJOB_CONTAINERS = Column(
    "Containers",
    "string",
    lambda o, now: ",".join(str(c.get("name", "")) for c in _job_template_containers(o)),
    _CONTAINERS_DOC,
    priority=1,
)
CRONJOB_IMAGES = Column(
    "Images",
    "string",
    lambda o, now: ",".join(str(c.get("image", "")) for c in _job_template_containers(o)),
    _IMAGES_DOC,
    priority=1,
)
CRONJOB_SELECTOR = Column(
    "Selector",
    "string",
    lambda o, now: format_label_selector(
        ((_spec(o).get("jobTemplate") or {}).get("spec") or {}).get("selector")
    ),
    _JOB_SELECTOR_DOC,
    priority=1,
)


# ---- the API server's tables ------------------------------------------------------------------------------------

_X_K8S = "scheduling.x-k8s.io"
_KOORD = "scheduling.koordinator.sh"


_SERVER: dict[tuple[str, str], tuple[Column, ...]] = {
    ("", "Pod"): (
        NAME,
        POD_READY,
        POD_STATUS,
        POD_RESTARTS,
        AGE,
        POD_IP,
        POD_NODE,
        POD_NOMINATED_NODE,
        POD_READINESS_GATES,
    ),
    ("", "Node"): (
        NAME,
        NODE_STATUS,
        NODE_ROLES,
        AGE,
        NODE_VERSION,
        NODE_INTERNAL_IP,
        NODE_EXTERNAL_IP,
        NODE_OS_IMAGE,
        NODE_KERNEL,
        NODE_RUNTIME,
    ),
    ("", "Namespace"): (NAME, NAMESPACE_STATUS, AGE),
    ("", "Event"): (
        EVENT_LAST_SEEN,
        EVENT_TYPE,
        EVENT_REASON,
        EVENT_OBJECT,
        EVENT_SUBOBJECT,
        EVENT_SOURCE,
        EVENT_MESSAGE,
        EVENT_FIRST_SEEN,
        EVENT_COUNT,
        EVENT_NAME,
    ),
    ("apps", "ReplicaSet"): (NAME, RS_DESIRED, RS_CURRENT, RS_READY, AGE, CONTAINERS, IMAGES, RS_SELECTOR),
    ("apps", "Deployment"): (
        NAME,
        DEPLOYMENT_READY,
        DEPLOYMENT_UP_TO_DATE,
        DEPLOYMENT_AVAILABLE,
        AGE,
        CONTAINERS,
        IMAGES,
        DEPLOYMENT_SELECTOR,
    ),
    ("policy", "PodDisruptionBudget"): (NAME, PDB_MIN_AVAILABLE, PDB_MAX_UNAVAILABLE, PDB_ALLOWED, AGE),
    ("batch", "Job"): (
        NAME,
        JOB_STATUS,
        JOB_COMPLETIONS,
        JOB_DURATION,
        AGE,
        CONTAINERS,
        IMAGES,
        JOB_SELECTOR,
    ),
    ("batch", "CronJob"): (
        NAME,
        CRONJOB_SCHEDULE,
        CRONJOB_TIMEZONE,
        CRONJOB_SUSPEND,
        CRONJOB_ACTIVE,
        CRONJOB_LAST_SCHEDULE,
        AGE,
        CRONJOB_CONTAINERS,
        CRONJOB_IMAGES,
        CRONJOB_SELECTOR,
    ),
    ("scheduling.k8s.io", "PriorityClass"): (NAME, PC_VALUE, PC_GLOBAL_DEFAULT, AGE, PC_PREEMPTION_POLICY),
    ("coordination.k8s.io", "Lease"): (NAME, LEASE_HOLDER, AGE),
    ("apps", "StatefulSet"): (NAME, STS_READY, AGE, CONTAINERS, IMAGES),
    ("apps", "DaemonSet"): (
        NAME,
        DS_DESIRED,
        DS_CURRENT,
        DS_READY,
        DS_UP_TO_DATE,
        DS_AVAILABLE,
        DS_NODE_SELECTOR,
        AGE,
        CONTAINERS,
        IMAGES,
        DS_SELECTOR,
    ),
    ("", "ConfigMap"): (NAME, CM_DATA, AGE),
    ("", "Service"): (NAME, SVC_TYPE, SVC_CLUSTER_IP, SVC_EXTERNAL_IP, SVC_PORTS, AGE, SVC_SELECTOR),
    (_KOORD, "Reservation"): (
        NAME,
        RESERVATION_PHASE,
        RESERVATION_AGE,
        RESERVATION_NODE,
        RESERVATION_TTL,
        RESERVATION_EXPIRES,
    ),
    (_KOORD, "PodMigrationJob"): PMJ_COLUMNS,
    (_X_K8S, "ElasticQuota"): (NAME, EQ_USED, EQ_MAX, EQ_AGE),
    (_X_K8S, "PodGroup"): (NAME, PG_PHASE, PG_MIN_MEMBER, PG_RUNNING, PG_SUCCEEDED, PG_FAILED, PG_AGE),
}


def server_columns(info: KindInfo) -> tuple[Column, ...]:
    """kube-apiserver's table columns for a kind: its printer's for a built-in, the CRD's printer columns for
    a custom resource (Name and Age when the CRD declares none, as Koordinator's copies of scheduler-plugins'
    ElasticQuota and PodGroup in ``scheduling.sigs.k8s.io``)."""
    return _SERVER.get((info.group, info.kind)) or crd_default_columns()
