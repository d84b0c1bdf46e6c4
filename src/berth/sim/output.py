"""Printing objects as kubectl does: JSON/YAML lists and per-kind tables."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TextIO

import msgspec
import yaml

from berth.api import printers as p
from berth.api.kinds import lookup_kind
from berth.api.printers import Column, human_duration, pod_status_text
from berth.api.timestamps import parse_time

__all__ = [
    "ORDER",
    "TABLES",
    "as_list",
    "human_duration",
    "json_chunks",
    "pod_status_text",
    "render_table",
    "to_json",
    "to_tables",
    "to_yaml",
    "write_json",
]

Row = list[str]


def as_list(objects: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A ``v1 List`` of the objects."""
    return {"apiVersion": "v1", "kind": "List", "items": list(objects), "metadata": {"resourceVersion": ""}}


_JSON_ENCODE = msgspec.json.Encoder().encode
_JSON_FORMAT = msgspec.json.format
_CHUNK_ITEMS = 512  # items formatted per chunk written
# a chunk is formatted at once as the items of a one-key object, so that they sit two levels deep as in the
# List; what the items are wrapped in is cut off again
_CHUNK_HEAD = b'{\n    "items": [\n        '
_CHUNK_TAIL = b"\n    ]\n}"


def json_chunks(objects: Sequence[Mapping[str, Any]]) -> Iterator[bytes]:
    """The UTF-8 text of :func:`to_json`, in pieces of a few hundred objects each: the whole text is never
    held at once (a large cluster's listing is hundreds of megabytes)."""
    if not objects:
        yield _JSON_FORMAT(_JSON_ENCODE(as_list(objects)), indent=4) + b"\n"
        return
    yield b'{\n    "apiVersion": "v1",\n    "kind": "List",\n    "items": [\n        '
    for start in range(0, len(objects), _CHUNK_ITEMS):
        text = _JSON_FORMAT(_JSON_ENCODE({"items": list(objects[start : start + _CHUNK_ITEMS])}), indent=4)
        sep = b"" if start == 0 else b",\n        "
        yield sep + text[len(_CHUNK_HEAD) : -len(_CHUNK_TAIL)]
    yield b'\n    ],\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n'


def to_json(objects: Sequence[Mapping[str, Any]]) -> str:
    """The objects as one indented JSON ``List`` (as ``kubectl get -o json``)."""
    return b"".join(json_chunks(objects)).decode()


def write_json(objects: Sequence[Mapping[str, Any]], stream: TextIO) -> None:
    """Write :func:`to_json`'s text to ``stream`` piece by piece (as bytes to its binary buffer when it has one)."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        for chunk in json_chunks(objects):
            stream.write(chunk.decode())
        return
    stream.flush()
    for chunk in json_chunks(objects):
        buffer.write(chunk)
    buffer.flush()


def to_yaml(objects: Sequence[Mapping[str, Any]]) -> str:
    """The objects as one YAML ``List``."""
    return str(yaml.safe_dump(as_list(objects), sort_keys=False, default_flow_style=False))


Columns = tuple[list[str], Callable[[Mapping[str, Any], datetime], Row]]


def _view(columns: Sequence[Column]) -> Columns:
    """A table of the given columns (from ``berth.api.printers``, the definitions the API server prints too):
    their headings and the row function."""

    def row(o: Mapping[str, Any], now: datetime) -> Row:
        return [c.text(o, now) for c in columns]

    return [c.header for c in columns], row


def _views(normal: Sequence[Column], wide: Sequence[Column] = ()) -> Callable[[bool], Columns]:
    """``-o table`` shows ``normal``; ``-o wide`` adds ``wide`` after them."""
    return lambda is_wide: _view([*normal, *wide] if is_wide else normal)


# What ``berth simulate -o table|wide`` shows of each kind: kubectl's columns (with NAMESPACE, as ``kubectl get
# -A`` prints it), plus a few of Berth's own (the pods' node and priority, the nodes' taints).
TABLES: dict[str, Callable[[bool], Columns]] = {
    "PodGroup": _views(
        [p.NAMESPACE, p.NAME, p.PG_PHASE, p.PG_MIN_MEMBER, p.PG_RUNNING, p.PG_SUCCEEDED, p.PG_FAILED, p.AGE]
    ),
    "ElasticQuota": _views([p.NAMESPACE, p.NAME, p.EQ_USED, p.EQ_MAX, p.AGE]),
    "PodDisruptionBudget": _views(
        [p.NAMESPACE, p.NAME, p.PDB_MIN_AVAILABLE, p.PDB_MAX_UNAVAILABLE, p.PDB_ALLOWED, p.AGE]
    ),
    "ReplicaSet": _views(
        [p.NAMESPACE, p.NAME, p.RS_DESIRED, p.RS_CURRENT, p.RS_READY, p.AGE],
        [p.CONTAINERS, p.IMAGES, p.RS_SELECTOR],
    ),
    "Deployment": _views(
        [p.NAMESPACE, p.NAME, p.DEPLOYMENT_READY, p.DEPLOYMENT_UP_TO_DATE, p.DEPLOYMENT_AVAILABLE, p.AGE],
        [p.CONTAINERS, p.IMAGES, p.DEPLOYMENT_SELECTOR],
    ),
    "StatefulSet": _views([p.NAMESPACE, p.NAME, p.STS_READY, p.AGE], [p.CONTAINERS, p.IMAGES]),
    "DaemonSet": _views(
        [
            p.NAMESPACE,
            p.NAME,
            p.DS_DESIRED,
            p.DS_CURRENT,
            p.DS_READY,
            p.DS_UP_TO_DATE,
            p.DS_AVAILABLE,
            p.DS_NODE_SELECTOR,
            p.AGE,
        ],
        [p.CONTAINERS, p.IMAGES, p.DS_SELECTOR],
    ),
    "Service": _views(
        [p.NAMESPACE, p.NAME, p.SVC_TYPE, p.SVC_CLUSTER_IP, p.SVC_EXTERNAL_IP, p.SVC_PORTS, p.AGE],
        [p.SVC_SELECTOR],
    ),
    "Job": _views(
        [p.NAMESPACE, p.NAME, p.JOB_STATUS, p.JOB_COMPLETIONS, p.JOB_DURATION, p.AGE],
        [p.CONTAINERS, p.IMAGES, p.JOB_SELECTOR],
    ),
    "CronJob": _views(
        [
            p.NAMESPACE,
            p.NAME,
            p.CRONJOB_SCHEDULE,
            p.CRONJOB_TIMEZONE,
            p.CRONJOB_SUSPEND,
            p.CRONJOB_ACTIVE,
            p.CRONJOB_LAST_SCHEDULE,
            p.AGE,
        ],
        [p.CRONJOB_CONTAINERS, p.CRONJOB_IMAGES, p.CRONJOB_SELECTOR],
    ),
    "Reservation": _views(
        [p.NAME, p.RESERVATION_PHASE, p.AGE, p.RESERVATION_NODE, p.RESERVATION_TTL, p.RESERVATION_EXPIRES]
    ),
    "PodMigrationJob": _views(p.PMJ_COLUMNS),
    "Node": _views([p.NAME, p.NODE_STATUS, p.NODE_ROLES, p.AGE, p.NODE_VERSION], [p.NODE_TAINTS]),
    "Pod": _views(
        [p.NAMESPACE, p.NAME, p.POD_READY, p.POD_STATUS, p.POD_RESTARTS, p.AGE, p.POD_NODE],
        [p.POD_NOMINATED_NODE, p.POD_PRIORITY],
    ),
    "Event": _views(
        [p.NAMESPACE, p.EVENT_LAST_SEEN, p.EVENT_TYPE, p.EVENT_REASON, p.EVENT_OBJECT, p.EVENT_MESSAGE]
    ),
    "PriorityClass": _views([p.NAME, p.PC_VALUE, p.PC_GLOBAL_DEFAULT, p.AGE, p.PC_PREEMPTION_POLICY]),
    "Namespace": _views([p.NAME, p.NAMESPACE_STATUS, p.AGE]),
}

ORDER = [
    "Namespace",
    "PriorityClass",
    "Node",
    "Pod",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Service",
    "Event",
]


def _generic_columns(namespaced: bool) -> Columns:
    return _view([p.NAMESPACE, p.NAME, p.AGE] if namespaced else [p.NAME, p.AGE])


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
    now = parse_time(now_ts) or datetime.now(UTC)
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
