"""Printing objects as kubectl does: JSON/YAML lists and per-kind tables."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec
import yaml

from berth.api.kinds import lookup_kind

Row = list[str]


def as_list(objects: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A ``v1 List`` of the objects."""
    return {"apiVersion": "v1", "kind": "List", "items": list(objects), "metadata": {"resourceVersion": ""}}


def to_json(objects: Sequence[Mapping[str, Any]]) -> str:
    """The objects as one indented JSON ``List`` (as ``kubectl get -o json``)."""
    return msgspec.json.format(msgspec.json.encode(as_list(objects)), indent=4).decode() + "\n"


def to_yaml(objects: Sequence[Mapping[str, Any]]) -> str:
    """The objects as one YAML ``List``."""
    return str(yaml.safe_dump(as_list(objects), sort_keys=False, default_flow_style=False))


def _parse_time(ts: str | None) -> datetime | None:
    if not ts:
        return None
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


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


def _age(obj: Mapping[str, Any], now: datetime) -> str:
    t = _parse_time((obj.get("metadata") or {}).get("creationTimestamp"))
    return "<unknown>" if t is None else human_duration((now - t).total_seconds())


def pod_status_text(pod: Mapping[str, Any]) -> str:
    """The STATUS column of ``kubectl get pods``."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    if meta.get("deletionTimestamp"):
        return "Terminating"
    phase = status.get("phase") or "Pending"
    if phase == "Succeeded":
        return "Completed"
    if phase == "Failed":
        return status.get("reason") or "Error"
    if phase == "Pending":
        for c in status.get("conditions") or []:
            if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
                return "SchedulingGated"
    return str(status.get("reason") or phase)


def _pod_ready(pod: Mapping[str, Any]) -> str:
    containers = (pod.get("spec") or {}).get("containers") or []
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    ready = sum(1 for c in statuses if c.get("ready"))
    return f"{ready}/{len(containers)}"


def _node_status(node: Mapping[str, Any]) -> str:
    spec = node.get("spec") or {}
    conds = (node.get("status") or {}).get("conditions") or []
    ready = "Ready"
    for c in conds:
        if c.get("type") == "Ready" and c.get("status") != "True":
            ready = "NotReady"
    if spec.get("unschedulable"):
        ready += ",SchedulingDisabled"
    return ready


def _roles(node: Mapping[str, Any]) -> str:
    labels = (node.get("metadata") or {}).get("labels") or {}
    roles = sorted(
        k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and "/" in k
    )
    return ",".join(roles) or "<none>"


Columns = tuple[list[str], Callable[[Mapping[str, Any], datetime], Row]]


def _pod_columns(wide: bool) -> Columns:
    head = ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "NODE"]
    if wide:
        head += ["NOMINATED NODE", "PRIORITY"]

    def row(p: Mapping[str, Any], now: datetime) -> Row:
        meta, spec, status = p.get("metadata") or {}, p.get("spec") or {}, p.get("status") or {}
        r = [
            meta.get("namespace", ""),
            meta.get("name", ""),
            _pod_ready(p),
            pod_status_text(p),
            str(sum(int(c.get("restartCount", 0)) for c in status.get("containerStatuses") or [])),
            _age(p, now),
            spec.get("nodeName") or "<none>",
        ]
        if wide:
            r += [status.get("nominatedNodeName") or "<none>", str(spec.get("priority", 0))]
        return r

    return head, row


def _node_columns(wide: bool) -> Columns:
    head = ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    if wide:
        head += ["TAINTS"]

    def row(n: Mapping[str, Any], now: datetime) -> Row:
        info = (n.get("status") or {}).get("nodeInfo") or {}
        r = [n["metadata"]["name"], _node_status(n), _roles(n), _age(n, now), info.get("kubeletVersion", "")]
        if wide:
            taints = (n.get("spec") or {}).get("taints") or []
            r.append(
                ",".join(
                    f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect')}"
                    for t in taints
                )
                or "<none>"
            )
        return r

    return head, row


def _event_columns(wide: bool) -> Columns:
    head = ["NAMESPACE", "LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]

    def row(e: Mapping[str, Any], now: datetime) -> Row:
        last = _parse_time(e.get("lastTimestamp"))
        inv = e.get("involvedObject") or {}
        return [
            (e.get("metadata") or {}).get("namespace", ""),
            human_duration((now - last).total_seconds()) if last else "<unknown>",
            e.get("type", ""),
            e.get("reason", ""),
            f"{str(inv.get('kind', '')).lower()}/{inv.get('name', '')}",
            e.get("message", ""),
        ]

    return head, row


def _pc_columns(wide: bool) -> Columns:
    head = ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]

    def row(o: Mapping[str, Any], now: datetime) -> Row:
        return [
            o["metadata"]["name"],
            str(o.get("value", 0)),
            str(bool(o.get("globalDefault"))).lower(),
            _age(o, now),
            o.get("preemptionPolicy") or "PreemptLowerPriority",
        ]

    return head, row


def _ns_columns(wide: bool) -> Columns:
    def row(o: Mapping[str, Any], now: datetime) -> Row:
        return [o["metadata"]["name"], (o.get("status") or {}).get("phase", "Active"), _age(o, now)]

    return ["NAME", "STATUS", "AGE"], row


def _generic_columns(namespaced: bool) -> Columns:
    head = (["NAMESPACE"] if namespaced else []) + ["NAME", "AGE"]

    def row(o: Mapping[str, Any], now: datetime) -> Row:
        meta = o.get("metadata") or {}
        return ([meta.get("namespace", "")] if namespaced else []) + [meta.get("name", ""), _age(o, now)]

    return head, row


def _cell(value: object) -> str:
    """A CRD printer column's cell: a missing value prints as an empty cell, as kubectl does."""
    return "" if value is None else str(value)


def _reservation_columns(wide: bool) -> Columns:
    """Koordinator's printer columns (a missing value prints as an empty cell, as kubectl does for CRDs)."""

    def row(o: Mapping[str, Any], now: datetime) -> Row:
        spec, status = o.get("spec") or {}, o.get("status") or {}
        return [
            (o.get("metadata") or {}).get("name", ""),
            _cell(status.get("phase")),
            _age(o, now),
            _cell(status.get("nodeName")),
            _cell(spec.get("ttl")),
            _cell(spec.get("expires")),
        ]

    return ["NAME", "PHASE", "AGE", "NODE", "TTL", "EXPIRES"], row


# the cells of a table row taken from the object's spec and status
SpecStatusCells = Callable[[Mapping[str, Any], Mapping[str, Any]], Row]


def _namespaced_columns(
    head: list[str],
    cells: SpecStatusCells,
    wide: tuple[list[str], Callable[[Mapping[str, Any]], Row]] | None = None,
) -> Columns:
    """Columns NAMESPACE, NAME, ``head``..., AGE, with the ``head`` cells read by ``cells`` from the object's
    spec and status; ``wide`` adds columns (their heads and cells) after AGE."""
    extra_head, extra = wide if wide is not None else ([], None)

    def row(o: Mapping[str, Any], now: datetime) -> Row:
        meta, spec, status = o.get("metadata") or {}, o.get("spec") or {}, o.get("status") or {}
        r = [meta.get("namespace", ""), meta.get("name", ""), *cells(spec, status), _age(o, now)]
        return r + extra(o) if extra is not None else r

    return ["NAMESPACE", "NAME", *head, "AGE", *extra_head], row


def _format_selector(sel: Mapping[str, Any] | None) -> str:
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


def _workload_wide(o: Mapping[str, Any]) -> Row:
    spec = o.get("spec") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    return [
        ",".join(str(c.get("name", "")) for c in containers),
        ",".join(str(c.get("image", "")) for c in containers),
        _format_selector(spec.get("selector")),
    ]


_WORKLOAD_WIDE = (["CONTAINERS", "IMAGES", "SELECTOR"], _workload_wide)


def _rs_columns(wide: bool) -> Columns:
    return _namespaced_columns(
        ["DESIRED", "CURRENT", "READY"],
        lambda spec, status: [
            str(spec.get("replicas", 1)),
            str(status.get("replicas", 0)),
            str(status.get("readyReplicas", 0)),
        ],
        _WORKLOAD_WIDE if wide else None,
    )


def _deployment_columns(wide: bool) -> Columns:
    return _namespaced_columns(
        ["READY", "UP-TO-DATE", "AVAILABLE"],
        lambda spec, status: [
            f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
            str(status.get("updatedReplicas", 0)),
            str(status.get("availableReplicas", 0)),
        ],
        _WORKLOAD_WIDE if wide else None,
    )


def _pdb_columns(wide: bool) -> Columns:
    """kubectl's PodDisruptionBudget columns (an unset bound prints as N/A)."""

    def bound(value: object) -> str:
        return "N/A" if value is None else str(value)

    return _namespaced_columns(
        ["MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS"],
        lambda spec, status: [
            bound(spec.get("minAvailable")),
            bound(spec.get("maxUnavailable")),
            str(status.get("disruptionsAllowed", 0)),
        ],
    )


def _elastic_quota_columns(wide: bool) -> Columns:
    """ElasticQuota columns: USED and MAX print the ResourceLists as JSON (a CRD printer column of a map)."""

    def cell(value: object) -> str:
        return "" if not value else json.dumps(value, separators=(",", ":"), sort_keys=True)

    return _namespaced_columns(
        ["USED", "MAX"], lambda spec, status: [cell(status.get("used")), cell(spec.get("max"))]
    )


def _pod_group_columns(wide: bool) -> Columns:
    """scheduler-plugins' PodGroup printer columns (a missing value prints as an empty cell)."""
    return _namespaced_columns(
        ["PHASE", "MINMEMBER", "RUNNING", "SUCCEEDED", "FAILED"],
        lambda spec, status: [
            _cell(status.get("phase")),
            _cell(spec.get("minMember")),
            *(_cell(status.get(k)) for k in ("running", "succeeded", "failed")),
        ],
    )


TABLES: dict[str, Callable[[bool], Columns]] = {
    "PodGroup": _pod_group_columns,
    "ElasticQuota": _elastic_quota_columns,
    "PodDisruptionBudget": _pdb_columns,
    "ReplicaSet": _rs_columns,
    "Deployment": _deployment_columns,
    "Reservation": _reservation_columns,
    "Node": _node_columns,
    "Pod": _pod_columns,
    "Event": _event_columns,
    "PriorityClass": _pc_columns,
    "Namespace": _ns_columns,
}

ORDER = ["Namespace", "PriorityClass", "Node", "Pod", "Deployment", "ReplicaSet", "Event"]


def render_table(head: list[str], rows: list[Row]) -> str:
    """Columns padded as kubectl prints them (three spaces between columns)."""
    widths = [len(h) for h in head]
    for r in rows:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))
    lines = []
    for r in [head, *rows]:
        lines.append("   ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip())
    return "\n".join(lines) + "\n"


def to_tables(objects: Sequence[Mapping[str, Any]], now_ts: str, *, wide: bool = False) -> str:
    """One kubectl-style table per kind, separated by blank lines."""
    now = _parse_time(now_ts) or datetime.now(UTC)
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for o in objects:
        by_kind.setdefault(str(o.get("kind", "")), []).append(o)
    kinds = sorted(by_kind, key=lambda k: (ORDER.index(k) if k in ORDER else len(ORDER), k))
    parts = []
    for kind in kinds:
        items = by_kind[kind]
        if kind in TABLES:
            head, row = TABLES[kind](wide)
        else:
            try:
                namespaced = lookup_kind(str(items[0].get("apiVersion", "")), kind).namespaced
            except KeyError:
                namespaced = bool((items[0].get("metadata") or {}).get("namespace"))
            head, row = _generic_columns(namespaced)
        if kind == "Event":
            items = sorted(
                items, key=lambda e: (e.get("lastTimestamp") or "", (e.get("metadata") or {}).get("name", ""))
            )
        parts.append(render_table(head, [row(o, now) for o in items]))
    return "\n".join(parts)
