"""The OpenAPI v2 (Swagger 2.0) document of the served kinds, as kube-apiserver publishes it at ``/openapi/v2``.

kubectl 1.27 and 1.28 validate ``kubectl create -f`` (``--validate=strict``, the default) with OpenAPI v2:
they GET ``/openapi/v2`` with ``Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`` and
parse the body as gnostic's ``openapi_v2.Document`` protobuf. When a kind's PATCH operation (found by its
``x-kubernetes-group-version-kind`` extension) declares the ``fieldValidation`` query parameter, kubectl
leaves validation to the server; otherwise it validates the object against the definition carrying the kind
in its own ``x-kubernetes-group-version-kind`` list. Every PATCH here declares ``fieldValidation``; the
definitions are the real schemas of `berth.server.openapi_schemas` (kube's names; custom kinds converted as
apiextensions-apiserver publishes CRD schemas in v2), which ``kubectl explain --output
plaintext-openapiv2`` reads.

No operation declares ``consumes``: ``kubectl apply`` would then compute strategic merge patches from these
definitions; without it, kubectl keeps its compiled-in types (the same patch tags Berth follows).

`document_v2_json` is the Swagger JSON (``Accept: application/json``); `document_v2_protobuf` the same
document as gnostic protobuf (message and field numbers from gnostic-models ``openapiv2/OpenAPIv2.proto``),
written by the small encoder below. `endpoint` is the Starlette handler of ``/openapi/v2`` (and of the
pre-1.10 ``/swagger-2.0.0.pb-v1`` that client-go falls back to).
"""

from __future__ import annotations

import functools
import hashlib
import json
import struct
from collections.abc import Iterable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from berth.api.kinds import KindInfo
from berth.server import openapi_schemas
from berth.server.discovery import served_kinds
from berth.server.media import JSON_RANGES, accepted
from berth.server.openapi import Subresource, subresources
from berth.server.protobuf import varint

__all__ = [
    "JSON_CONTENT_TYPE",
    "PROTOBUF_CONTENT_TYPE",
    "PROTOBUF_CONTENT_TYPES",
    "document_v2_json",
    "document_v2_protobuf",
    "endpoint",
    "negotiate",
]

PROTOBUF_CONTENT_TYPE = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
"""The ``Content-Type`` of the protobuf document (gnostic's ``openapi_v2.Document``), as kube-apiserver
sends it: client-go parses a response's media type with Go's ``mime.ParseMediaType``, which refuses the
``@`` of the spelling clients ask for."""
PROTOBUF_CONTENT_TYPES = ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf", PROTOBUF_CONTENT_TYPE)
"""The media types an ``Accept`` may name for the protobuf document (client-go asks for the ``@v1.0`` one)."""
JSON_CONTENT_TYPE = "application/json"
"""The media type of the Swagger JSON document."""

_PATCH_DEFINITION = openapi_schemas.PATCH
_GVK = "x-kubernetes-group-version-kind"


# --- the Swagger JSON document ------------------------------------------------------------------------


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": openapi_schemas.DEFINITIONS + name}


def _query(name: str, description: str) -> dict[str, Any]:
    return {"uniqueItems": True, "type": "string", "description": description, "name": name, "in": "query"}


_PRETTY = _query("pretty", "If 'true', then the output is pretty printed.")
_DRY_RUN = _query("dryRun", "When present, indicates that modifications should not be persisted.")
_FIELD_MANAGER = _query("fieldManager", "A name associated with the actor or entity making these changes.")
_FIELD_VALIDATION = _query(
    "fieldValidation",
    "Instructs the server on how to handle objects in the request containing unknown or duplicate fields: "
    "Ignore, Warn or Strict.",
)


def _body(name: str) -> dict[str, Any]:
    return {"name": "body", "in": "body", "required": True, "schema": _ref(name)}


def _operation(
    k: KindInfo, action: str, verb_id: str, schema: str, gvk: dict[str, str], kind: str | None = None
) -> dict[str, Any]:
    """One operation of `k`'s paths; `schema` is the definition of its body and response, `kind` the kind
    named in its description and operationId (the subresource's, or `k`'s)."""
    params: list[dict[str, Any]] = []
    if action in ("post", "put"):
        params = [_body(schema), _DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
    elif action == "patch":
        params = [_body(_PATCH_DEFINITION), _DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
    elif action == "delete":
        params = [_DRY_RUN]
    named = kind or k.kind
    op_id = f"{verb_id}{'Namespaced' if k.namespaced else ''}{named}"
    return {
        "description": f"{verb_id} the specified {named}",
        "produces": ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"],
        "schemes": ["https"],
        "tags": [f"{(k.group or 'core').replace('.', '')}_{k.version}"],
        "operationId": op_id,
        "parameters": params,
        "responses": {
            "200": {"description": "OK", "schema": _ref(schema)},
            "401": {"description": "Unauthorized"},
        },
        "x-kubernetes-action": action,
        _GVK: gvk,
    }


def _path_parameter(name: str) -> dict[str, Any]:
    return {
        "uniqueItems": True,
        "type": "string",
        "description": f"{name} of the object" if name == "name" else "object name and auth scope",
        "name": name,
        "in": "path",
        "required": True,
    }


def _paths(k: KindInfo) -> dict[str, Any]:
    prefix = f"/apis/{k.group}/{k.version}" if k.group else f"/api/{k.version}"
    scope = f"{prefix}/namespaces/{{namespace}}/{k.plural}" if k.namespaced else f"{prefix}/{k.plural}"
    item = f"{scope}/{{name}}"
    scope_params = [_path_parameter("namespace")] if k.namespaced else []
    item_params = [_path_parameter("name"), *scope_params, _PRETTY]
    name, listed = openapi_schemas.kind_definition(k), openapi_schemas.list_definition(k)
    gvk = _gvk(k.group, k.version, k.kind)
    paths: dict[str, Any] = {
        scope: {
            "get": _operation(k, "list", "list", listed, gvk),
            "post": _operation(k, "post", "create", name, gvk),
            "parameters": [*scope_params, _PRETTY],
        },
        item: {
            "get": _operation(k, "get", "read", name, gvk),
            "put": _operation(k, "put", "replace", name, gvk),
            "delete": _operation(k, "delete", "delete", name, gvk),
            "patch": _operation(k, "patch", "patch", name, gvk),
            "parameters": item_params,
        },
    }
    if k.has_status:
        paths[f"{item}/status"] = {
            "get": _operation(k, "get", "read", name, gvk) | {"operationId": f"read{k.kind}Status"},
            "put": _operation(k, "put", "replace", name, gvk) | {"operationId": f"replace{k.kind}Status"},
            "patch": _operation(k, "patch", "patch", name, gvk) | {"operationId": f"patch{k.kind}Status"},
            "parameters": item_params,
        }
    for sub in subresources(k):
        paths[f"{item}/{sub.name}"] = {**_subresource_operations(k, sub), "parameters": item_params}
    return paths


_VERBS = {"get": "read", "put": "replace", "patch": "patch", "post": "create"}


def _subresource_operations(k: KindInfo, sub: Subresource) -> dict[str, Any]:
    gvk = _gvk(sub.group, sub.version, sub.kind)
    named = f"{k.kind}{sub.name.capitalize()}"
    return {
        action: _operation(k, action, _VERBS[action], sub.definition, gvk, kind=named)
        for action in sub.actions
    }


@functools.cache
def _document() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for k in served_kinds():
        for path, item in _paths(k).items():
            paths.setdefault(path, item)
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": dict(sorted(paths.items())),
        "definitions": openapi_schemas.definitions_v2(),
    }


def document_v2_json() -> dict[str, Any]:
    """``/openapi/v2`` as Swagger JSON (cached: treat it as read-only)."""
    return _document()


# --- gnostic protobuf ---------------------------------------------------------------------------------
# Field numbers are gnostic-models' openapiv2/OpenAPIv2.proto (package openapi.v2).

_VARINT, _FIXED64, _LEN = 0, 1, 2


def _msg(number: int, payload: bytes) -> bytes:
    """A length-delimited field (embedded message, string): written even when empty (presence)."""
    return varint(number << 3 | _LEN) + varint(len(payload)) + payload


def _str(number: int, text: str) -> bytes:
    """A proto3 string field: omitted when empty."""
    return _msg(number, text.encode()) if text else b""


def _strs(number: int, texts: Iterable[str]) -> bytes:
    return b"".join(_msg(number, t.encode()) for t in texts)


def _bool(number: int, value: bool) -> bytes:
    return varint(number << 3 | _VARINT) + b"\x01" if value else b""


def _vendor_extensions(number: int, obj: Mapping[str, Any]) -> bytes:
    """``repeated NamedAny`` of the ``x-`` keys: NamedAny{1 name, 2 Any{2 yaml}} (JSON is YAML)."""
    out = bytearray()
    for key, value in obj.items():
        if key.startswith("x-"):
            yaml_text = json.dumps(value, separators=(", ", ": ")) + "\n"
            out += _msg(number, _str(1, key) + _msg(2, _str(2, yaml_text)))
    return bytes(out)


def _any(number: int, value: Any) -> bytes:
    """An ``Any`` field: Any{2 yaml} (JSON is YAML)."""
    return _msg(number, _str(2, json.dumps(value) + "\n"))


def _int64(number: int, value: int) -> bytes:
    return varint(number << 3 | _VARINT) + varint(value)


def _double(number: int, value: float) -> bytes:
    return varint(number << 3 | _FIXED64) + struct.pack("<d", value)


def _schema(s: Mapping[str, Any]) -> bytes:
    """Schema: 1 _ref, 2 format, 4 description, 5 default, 9 minimum, 13 pattern, 15 min_items,
    18 min_properties, 19 required, 20 enum, 21 additionalProperties, 22 type, 23 items, 25 properties,
    31 vendor_extension."""
    out = bytearray(
        _str(1, s.get("$ref", "")) + _str(2, s.get("format", "")) + _str(4, s.get("description", ""))
    )
    if "default" in s:
        out += _any(5, s["default"])
    if "minimum" in s:
        out += _double(9, float(s["minimum"]))
    out += _str(13, s.get("pattern", ""))
    if "minItems" in s:
        out += _int64(15, s["minItems"])
    if "minProperties" in s:
        out += _int64(18, s["minProperties"])
    out += _strs(19, s.get("required", ()))
    out += b"".join(_any(20, value) for value in s.get("enum", ()))
    extra = s.get("additionalProperties")
    if isinstance(extra, bool):
        out += _msg(21, _bool(2, True) if extra else varint(2 << 3 | _VARINT) + b"\x00")
    elif isinstance(extra, Mapping):
        out += _msg(21, _msg(1, _schema(extra)))
    if "type" in s:
        types = [s["type"]] if isinstance(s["type"], str) else s["type"]
        out += _msg(22, _strs(1, types))
    if "items" in s:
        out += _msg(23, _msg(1, _schema(s["items"])))
    if "properties" in s:
        named = (_msg(1, _str(1, name) + _msg(2, _schema(sub))) for name, sub in s["properties"].items())
        out += _msg(25, b"".join(named))
    out += _vendor_extensions(31, s)
    return bytes(out)


def _parameter(p: Mapping[str, Any]) -> bytes:
    """ParametersItem{1 Parameter{1 BodyParameter | 2 NonBodyParameter{3 query | 4 path sub-schema}}}."""
    where = p["in"]
    if where == "body":
        body = (
            _str(2, p["name"])
            + _str(3, where)
            + _bool(4, p.get("required", False))
            + _msg(5, _schema(p["schema"]))
        )
        return _msg(1, _msg(1, body))
    if where == "query":
        # QueryParameterSubSchema: 1 required, 2 in, 3 description, 4 name, 6 type, 20 unique_items.
        sub = (
            _bool(1, p.get("required", False))
            + _str(2, where)
            + _str(3, p.get("description", ""))
            + _str(4, p["name"])
            + _str(6, p.get("type", ""))
            + _bool(20, p.get("uniqueItems", False))
        )
        return _msg(1, _msg(2, _msg(3, sub)))
    if where == "path":
        # PathParameterSubSchema: 1 required, 2 in, 3 description, 4 name, 5 type, 19 unique_items.
        sub = (
            _bool(1, p.get("required", False))
            + _str(2, where)
            + _str(3, p.get("description", ""))
            + _str(4, p["name"])
            + _str(5, p.get("type", ""))
            + _bool(19, p.get("uniqueItems", False))
        )
        return _msg(1, _msg(2, _msg(4, sub)))
    raise ValueError(f"unsupported parameter location {where!r}")


def _responses(responses: Mapping[str, Any]) -> bytes:
    """Responses{1 NamedResponseValue{1 name, 2 ResponseValue{1 Response{1 description, 2 SchemaItem{1}}}}}."""
    out = bytearray()
    for code, r in responses.items():
        response = _str(1, r.get("description", ""))
        if "schema" in r:
            response += _msg(2, _msg(1, _schema(r["schema"])))
        out += _msg(1, _str(1, code) + _msg(2, _msg(1, response)))
    return bytes(out)


def _operation_pb(op: Mapping[str, Any]) -> bytes:
    """Operation: 1 tags, 3 description, 5 operation_id, 6 produces, 7 consumes, 8 parameters, 9 responses,
    10 schemes, 13 vendor_extension."""
    return (
        _strs(1, op.get("tags", ()))
        + _str(3, op.get("description", ""))
        + _str(5, op.get("operationId", ""))
        + _strs(6, op.get("produces", ()))
        + _strs(7, op.get("consumes", ()))
        + b"".join(_msg(8, _parameter(p)) for p in op.get("parameters", ()))
        + _msg(9, _responses(op.get("responses", {})))
        + _strs(10, op.get("schemes", ()))
        + _vendor_extensions(13, op)
    )


_PATH_ITEM_FIELDS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def _path_item(item: Mapping[str, Any]) -> bytes:
    """PathItem: 2 get, 3 put, 4 post, 5 delete, 6 options, 7 head, 8 patch, 9 parameters, 10 vendor_extension."""
    out = bytearray()
    for verb, number in _PATH_ITEM_FIELDS.items():
        if verb in item:
            out += _msg(number, _operation_pb(item[verb]))
    out += b"".join(_msg(9, _parameter(p)) for p in item.get("parameters", ()))
    out += _vendor_extensions(10, item)
    return bytes(out)


def _document_pb(doc: Mapping[str, Any]) -> bytes:
    """Document: 1 swagger, 2 Info{1 title, 2 version}, 8 Paths{2 NamedPathItem{1 name, 2 PathItem}},
    9 Definitions{1 NamedSchema{1 name, 2 Schema}}, 16 vendor_extension."""
    info = doc.get("info", {})
    paths = b"".join(
        _msg(2, _str(1, name) + _msg(2, _path_item(item))) for name, item in doc.get("paths", {}).items()
    )
    definitions = b"".join(
        _msg(1, _str(1, name) + _msg(2, _schema(s))) for name, s in doc.get("definitions", {}).items()
    )
    return (
        _str(1, doc.get("swagger", ""))
        + _msg(2, _str(1, info.get("title", "")) + _str(2, info.get("version", "")))
        + _msg(8, paths)
        + _msg(9, definitions)
        + _vendor_extensions(16, doc)
    )


@functools.cache
def document_v2_protobuf() -> bytes:
    """``/openapi/v2`` as gnostic's ``openapi_v2.Document`` protobuf (cached)."""
    return _document_pb(_document())


@functools.cache
def _etags() -> tuple[str, str]:
    return (
        '"' + hashlib.sha512(document_v2_protobuf()).hexdigest().upper()[:64] + '"',
        '"' + hashlib.sha512(json.dumps(_document(), sort_keys=True).encode()).hexdigest().upper()[:64] + '"',
    )


# --- HTTP ---------------------------------------------------------------------------------------------


def negotiate(accept: str) -> str | None:
    """The media type to answer an ``Accept`` header with: `PROTOBUF_CONTENT_TYPE` when one of
    `PROTOBUF_CONTENT_TYPES` is asked for, else `JSON_CONTENT_TYPE` when JSON is acceptable (or no Accept at all), else None (406)."""
    media = [m for m, _ in accepted(accept)]
    for m in media:
        if m in PROTOBUF_CONTENT_TYPES:
            return PROTOBUF_CONTENT_TYPE
    if not accept.strip() or JSON_RANGES & set(media):
        return JSON_CONTENT_TYPE
    return None


async def endpoint(request: Request) -> Response:
    """The Starlette handler of ``/openapi/v2``: protobuf or JSON by ``Accept`` (406 otherwise)."""
    media = negotiate(request.headers.get("accept", ""))
    if media is None:
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f"the server could not produce the requested media type ({request.headers['accept']})",
            "reason": "NotAcceptable",
            "code": 406,
        }
        return JSONResponse(status, status_code=406)
    pb_etag, json_etag = _etags()
    if media == JSON_CONTENT_TYPE:
        return JSONResponse(document_v2_json(), headers={"ETag": json_etag})
    return Response(document_v2_protobuf(), media_type=media, headers={"ETag": pb_etag})
