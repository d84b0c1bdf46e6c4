"""``events.k8s.io/v1`` Events: the same stored objects as ``v1`` Events, in the newer shape.

kube-apiserver keeps one Event resource and serves it in both groups, converting between the two shapes
(``pkg/apis/events/v1/conversion.go``). The conversion only renames top-level fields, so a request of the newer
group is answered by turning it into the same request of the core group (its path, its body, a patch's keys,
a field selector's names) and turning the answer back (an Event, an EventList, watch events; a Status passes
unchanged):

================================  =========================
``events.k8s.io/v1``              ``v1``
================================  =========================
``regarding``                     ``involvedObject``
``note``                          ``message``
``reportingController``           ``reportingComponent``
``deprecatedSource``              ``source``
``deprecatedFirstTimestamp``      ``firstTimestamp``
``deprecatedLastTimestamp``       ``lastTimestamp``
``deprecatedCount``               ``count``
================================  =========================

(``eventTime``, ``series``, ``reportingInstance``, ``action``, ``reason``, ``type``, ``related`` keep their
names.) A create or update through the newer group is validated as kube validates it there
(``ValidateEventCreate`` for ``events.k8s.io/v1``): ``eventTime``, ``reportingController``,
``reportingInstance``, ``action`` and ``reason`` required, ``type`` Normal or Warning, the deprecated fields
unset.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from berth.api.errors import BadRequest, Invalid
from berth.api.patches import JSON_PATCH
from berth.server.media import media_type

if TYPE_CHECKING:
    from berth.server.rest import Request

__all__ = [
    "API_VERSION",
    "GROUP",
    "KEY",
    "convert_answer",
    "core_path",
    "handle",
    "to_core",
    "to_core_fields",
    "to_events_v1",
    "validate_events_v1",
]

GROUP = "events.k8s.io"
API_VERSION = "events.k8s.io/v1"
KEY = (GROUP, "Event")

_TO_CORE: dict[str, str] = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_TO_V1: dict[str, str] = {v: k for k, v in _TO_CORE.items()}
_LIMIT = 128
"""kube's length limit of reportingInstance, action and reason (``ReportingInstanceLengthLimit`` ...)."""
_NOTE_LIMIT = 1024
"""kube's ``NoteLengthLimit``."""

Obj = dict[str, Any]


def _renamed(obj: Mapping[str, Any], names: Mapping[str, str], api_version: str | None) -> Obj:
    out = {names.get(k, k): v for k, v in obj.items()}
    if api_version is not None and "apiVersion" in out:
        out["apiVersion"] = api_version
    return out


def to_core(obj: Mapping[str, Any]) -> Obj:
    """The ``v1`` shape of an ``events.k8s.io/v1`` Event, or of a merge patch of one."""
    return _renamed(obj, _TO_CORE, "v1")


def to_events_v1(obj: Mapping[str, Any]) -> Obj:
    """The ``events.k8s.io/v1`` shape of a ``v1`` Event (``eventTime`` always present, null when unset, as
    kube's type serializes it)."""
    out = _renamed(obj, _TO_V1, API_VERSION)
    out.setdefault("eventTime", None)
    return out


def convert_answer(doc: Obj, convert: Callable[[Mapping[str, Any]], Obj]) -> Obj:
    """A core answer in the newer shape: an Event, or an EventList's items (a Status unchanged)."""
    kind = doc.get("kind")
    if kind == "Event":
        return convert(doc)
    if kind == "EventList":
        return {**doc, "apiVersion": API_VERSION, "items": [convert(i) for i in doc.get("items") or ()]}
    return doc


def core_path(path: str) -> str:
    """The ``v1`` path of an ``events.k8s.io/v1`` path (``/apis/events.k8s.io/v1/namespaces/a/events`` ->
    ``/api/v1/namespaces/a/events``)."""
    prefix = f"/apis/{API_VERSION}"
    return "/api/v1" + path[len(prefix) :] if path.startswith(prefix) else path


def to_core_fields(selector: str) -> str:
    """A field selector over the newer shape's names in the core names (``regarding.name=p`` ->
    ``involvedObject.name=p``)."""
    terms = []
    for term in selector.split(","):
        field = term
        for op in ("!=", "==", "="):
            if op in term:
                field = term.split(op, 1)[0]
                break
        head, dot, rest = field.partition(".")
        renamed = _TO_CORE.get(head.strip(), head.strip()) + dot + rest
        terms.append(renamed + term[len(field) :])
    return ",".join(terms)


def json_patch_to_core(operations: Any) -> Any:
    """An RFC 6902 JSON patch of the newer shape, its paths in the core names."""
    if not isinstance(operations, list):
        return operations
    out = []
    for op in operations:
        if isinstance(op, dict):
            op = dict(op)
            for k in ("path", "from"):
                p = op.get(k)
                if isinstance(p, str) and p.startswith("/"):
                    head, slash, rest = p[1:].partition("/")
                    op[k] = "/" + _TO_CORE.get(head, head) + slash + rest
        out.append(op)
    return out


def validate_events_v1(obj: Mapping[str, Any]) -> None:
    """kube's checks of an Event written through ``events.k8s.io/v1``; Invalid naming every failed field."""
    causes: list[tuple[str, str]] = []

    def required(field: str) -> None:
        if not obj.get(field):
            causes.append((field, "Required value"))

    required("eventTime")
    type_ = obj.get("type") or ""
    if type_ not in ("Normal", "Warning"):
        causes.append(("type", f'Invalid value: "": has invalid value: {type_}'))
    for field in ("deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedCount"):
        if obj.get(field):
            causes.append((field, 'Invalid value: "": needs to be unset'))
    source = obj.get("deprecatedSource") or {}
    if isinstance(source, Mapping) and (source.get("component") or source.get("host")):
        causes.append(("deprecatedSource", 'Invalid value: "": needs to be unset'))
    required("reportingController")
    required("reportingInstance")
    for field in ("reportingInstance", "action", "reason"):
        if field != "reportingInstance":
            required(field)
        value = obj.get(field)
        if isinstance(value, str) and len(value) > _LIMIT:
            causes.append((field, f'Invalid value: "": can have at most {_LIMIT} characters'))
    note = obj.get("note")
    if isinstance(note, str) and len(note) > _NOTE_LIMIT:
        causes.append(("note", f'Invalid value: "": can have at most {_NOTE_LIMIT} characters'))
    if causes:
        name = str((obj.get("metadata") or {}).get("name") or "")
        detail = ", ".join(f"{f}: {m}" for f, m in causes)
        if len(causes) > 1:
            detail = f"[{detail}]"
        raise Invalid(
            f'Event.events.k8s.io "{name}" is invalid: {detail}',
            causes=causes,
            name=name,
            group=GROUP,
            kind="Event",
        )


def _body(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else {}
    except ValueError as e:
        raise BadRequest(f"error decoding the request body: {e}") from None


def handle(dispatch: Callable[[Request], tuple[int, Obj]], req: Request) -> tuple[int, Obj]:
    """Serve `req` (a path of ``events.k8s.io/v1`` Events) as the same request of ``v1`` Events through
    `dispatch`, its answer converted back."""
    method = req.method.upper()
    body = req.body
    if body and method in ("POST", "PUT", "PATCH"):
        doc = _body(body)
        if method == "PATCH":
            patch = json_patch_to_core(doc) if media_type(req.content_type) == JSON_PATCH else doc
            core = patch if not isinstance(patch, dict) else to_core(patch)
        elif isinstance(doc, dict):
            if doc.get("apiVersion", API_VERSION) != API_VERSION:
                raise BadRequest(
                    f"the API version in the data ({doc.get('apiVersion')}) does not match the expected API "
                    f"version ({API_VERSION})"
                )
            validate_events_v1(doc)
            core = to_core({**doc, "apiVersion": API_VERSION})
        else:
            core = doc
        body = json.dumps(core).encode()
    query = dict(req.query)
    fields = query.get("fieldSelector")
    if fields:
        query["fieldSelector"] = [to_core_fields(f) for f in fields]
    code, answer = dispatch(dataclasses.replace(req, path=core_path(req.path), query=query, body=body))
    return code, convert_answer(answer, to_events_v1)
