"""The ``fieldValidation`` of a create, update or patch, as kube-apiserver applies it to unknown fields.

``Strict`` refuses the request: a create or update with 400 BadRequest (``Pod in version "v1" cannot be handled
as a Pod: strict decoding error: unknown field "spec.nodeSelecter"``, kube's ``transformDecodeError``), a patch
with 422 Invalid on ``patch`` (the patch as Go prints a map for a strategic merge patch, the patched object's
JSON for the other patch types, as kube's patcher words it). ``Warn`` (the default when the parameter is absent)
answers with one ``Warning`` per field (``unknown field "spec.nodeSelecter"``), ``Ignore`` with none; either
way the unknown fields are dropped, never stored. The fields are found by `berth.server.strictdecode`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from berth.api.errors import BadRequest, Invalid
from berth.api.patches import PatchField, Schema
from berth.server.strictdecode import (
    PathPart,
    UnknownField,
    strict_decoding_error,
    unknown_fields,
    without_unknown_fields,
)

__all__ = [
    "decode_applied",
    "decode_body",
    "decode_patched",
    "field_validation",
    "go_value",
    "warning_header",
]

Obj = dict[str, Any]


def field_validation(query: Mapping[str, Sequence[str]]) -> str:
    """``Strict``, ``Warn`` or ``Ignore``: the request's first ``fieldValidation`` (``Warn`` when absent or
    empty, as kube defaults it; other values are refused earlier, with the options)."""
    values = query.get("fieldValidation")
    return (values[0] if values else "") or "Warn"


def decode_body(obj: Obj, directive: str, kind: str, warnings: list[str]) -> Obj:
    """The body of a create or update with its unknown fields handled as `directive` says; `kind` is the kind
    the path serves."""
    fields = unknown_fields(obj)
    if not fields:
        return obj
    if directive == "Strict":
        version = str(obj.get("apiVersion") or "").rpartition("/")[2]
        raise BadRequest(
            f'{obj.get("kind") or kind} in version "{version}" cannot be handled as a {kind}: '
            f"{strict_decoding_error(fields)}"
        )
    if directive == "Warn":
        warnings.extend(str(f) for f in fields)
    return without_unknown_fields(obj, fields)


def decode_patched(
    patched: Any, directive: str, warnings: list[str], shown: Callable[[], str], *, by_path: bool = False
) -> Any:
    """The result of a patch with its unknown fields handled as `directive` says; `shown()` is the value kube's
    Invalid error shows for the patch; `by_path` orders the fields by path (as kube's unstructured converter
    reports them after a strategic merge patch) instead of as they come. Anything but an object is returned as
    is (checked later)."""
    if not isinstance(patched, dict):
        return patched
    fields = unknown_fields(patched)
    if not fields:
        return patched
    if by_path:
        fields = sorted(fields, key=lambda f: f.field_path)
    if directive == "Strict":
        message = f"Invalid value: {json.dumps(shown(), ensure_ascii=False)}: {strict_decoding_error(fields)}"
        raise Invalid.of("", "", "", [("patch", message)])
    if directive == "Warn":
        warnings.extend(str(f) for f in fields)
    return without_unknown_fields(patched, fields)


def _typed_path(obj: Any, path: Sequence[PathPart], schema: Schema) -> str:
    """A field path as structured-merge-diff prints it: ``.spec.containers[name="c"].resource`` (items of an
    associative list named by their merge key, other items by index)."""
    out: list[str] = []
    fields: Schema = schema
    current: PatchField | None = None
    value: Any = obj
    for part in path:
        if isinstance(part, int):
            key = current.merge_key if current is not None and current.merges else ""
            item = value[part] if isinstance(value, list) and part < len(value) else None
            if key and isinstance(item, dict) and key in item:
                out.append(f"[{key}={json.dumps(item[key], ensure_ascii=False)}]")
            else:
                out.append(f"[{part}]")
            value = item
            fields = current.fields if current is not None else {}
            current = None
        else:
            out.append(f".{part}")
            value = value.get(part) if isinstance(value, dict) else None
            current = fields.get(part)
            fields = current.fields if current is not None else {}
    return "".join(out)


def decode_applied(config: Obj, schema: Schema) -> Obj:
    """The configuration of a server-side apply, refused when it has unknown fields (whatever the
    fieldValidation: kube's field manager cannot type it) with the field manager's message; kube answers
    that with a 500, Berth with a 400 BadRequest, as bad input."""
    fields: list[UnknownField] = unknown_fields(config)
    if not fields:
        return config
    lines = [f"{_typed_path(config, f.path, schema)}: field not declared in schema" for f in fields]
    errors = lines[0] if len(lines) == 1 else "\n".join(["errors:", *(f"  {line}" for line in lines)])
    meta = config.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    group, _, version = str(config.get("apiVersion") or "").rpartition("/")
    who = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}; {group}/{version}, Kind={config.get('kind')}"
    raise BadRequest(f"failed to create typed patch object ({who}): {errors}")


def go_value(value: Any) -> str:
    """`value` (decoded JSON) as Go's ``%+v`` prints it: ``map[k:v k2:[a b]]`` with sorted keys."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    return str(value)


def warning_header(text: str) -> str:
    """A ``Warning`` response header value (RFC 7234, as kube writes it): ``299 - "<text>"``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'
