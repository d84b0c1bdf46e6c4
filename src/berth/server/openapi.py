"""OpenAPI v3 documents of the served kinds, as kube-apiserver publishes them under ``/openapi/v3``.

``/openapi/v3`` lists one document per group-version (``api/v1``, ``apis/apps/v1``, ...); each document
holds the resource paths with their operations. kubectl reads them to learn that a kind's PATCH takes the
``fieldValidation`` query parameter, and then leaves validation to the server (``--validate=strict``, its
default) instead of downloading OpenAPI v2 schemas to validate on the client. Object schemas are open
(``x-kubernetes-preserve-unknown-fields``): the API server validates bodies itself.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from berth.api.kinds import KindInfo
from berth.server.discovery import served_kinds

__all__ = ["document", "root"]

_QUERY_PARAMETERS = ("dryRun", "fieldManager", "fieldValidation", "pretty")


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _gvk(k: KindInfo) -> dict[str, str]:
    return {"group": k.group, "version": k.version, "kind": k.kind}


def _operation(k: KindInfo, action: str, verb_id: str) -> dict[str, Any]:
    params = [
        {"name": p, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
        for p in _QUERY_PARAMETERS
    ]
    if action not in ("patch", "put", "post"):
        params = [p for p in params if p["name"] in ("dryRun", "pretty")]
    ref = {"$ref": f"#/components/schemas/{_schema_name(k)}"}
    return {
        "operationId": f"{verb_id}{k.kind}",
        "parameters": params,
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": _gvk(k),
    }


def _schema_name(k: KindInfo) -> str:
    group = k.group or "core"
    return f"{group}.{k.version}.{k.kind}"


def _paths(k: KindInfo) -> dict[str, Any]:
    prefix = f"/apis/{k.group}/{k.version}" if k.group else f"/api/{k.version}"
    scope = f"{prefix}/namespaces/{{namespace}}/{k.plural}" if k.namespaced else f"{prefix}/{k.plural}"
    item = f"{scope}/{{name}}"
    paths: dict[str, Any] = {
        scope: {"get": _operation(k, "list", "list"), "post": _operation(k, "post", "create")},
        item: {
            "get": _operation(k, "get", "read"),
            "put": _operation(k, "put", "replace"),
            "patch": _operation(k, "patch", "patch"),
            "delete": _operation(k, "delete", "delete"),
        },
    }
    if k.has_status:
        paths[f"{item}/status"] = {
            "get": _operation(k, "get", "readStatus"),
            "put": _operation(k, "put", "replaceStatus"),
            "patch": _operation(k, "patch", "patchStatus"),
        }
    return paths


@functools.cache
def document(group: str, version: str) -> dict[str, Any] | None:
    """The OpenAPI v3 document of one group-version (None when it is not served)."""
    kinds = [k for k in served_kinds() if k.group == group and k.version == version]
    if not kinds:
        return None
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for k in kinds:
        paths.update(_paths(k))
        schemas[_schema_name(k)] = {
            "type": "object",
            "x-kubernetes-group-version-kind": [_gvk(k)],
            "x-kubernetes-preserve-unknown-fields": True,
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


@functools.cache
def root() -> dict[str, Any]:
    """``/openapi/v3``: the path of every group-version's document, with a hash of its content."""
    out: dict[str, Any] = {}
    seen: set[tuple[str, str]] = set()
    for k in served_kinds():
        if (k.group, k.version) in seen:
            continue
        seen.add((k.group, k.version))
        doc = document(k.group, k.version)
        digest = hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest().upper()[:128]
        path = _gv_path(k.group, k.version)
        out[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": out}
