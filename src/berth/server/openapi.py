"""OpenAPI v3 documents of the served kinds, as kube-apiserver publishes them under ``/openapi/v3``.

``/openapi/v3`` lists one document per group-version (``api/v1``, ``apis/apps/v1``, ...); each document
holds the resource paths with their operations and, under ``components.schemas``, the schemas of the
group-version's kinds, their Lists and everything they refer to (`berth.server.openapi_schemas`: kube's
definition names, types, required fields, patch and list extensions, descriptions). ``kubectl explain``
reads them; kubectl also learns from them that a kind's PATCH takes the ``fieldValidation`` query parameter,
and then leaves validation to the server (``--validate=strict``, its default) instead of validating on the
client.

No PATCH operation declares a ``requestBody``: ``kubectl apply`` would then compute strategic merge
patches from these schemas; without it, kubectl keeps its compiled-in patch strategies (the same tags
`berth.api.patches` follows).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from berth.api.kinds import KindInfo
from berth.server import openapi_schemas
from berth.server.discovery import served_kinds

__all__ = ["Subresource", "document", "root", "subresources"]

_QUERY_PARAMETERS = ("dryRun", "fieldManager", "fieldValidation", "pretty")
_META = "io.k8s.apimachinery.pkg.apis.meta.v1"


@dataclass(frozen=True, slots=True)
class Subresource:
    """A subresource whose body is another kind (``pods/binding`` takes a Binding)."""

    parent: KindInfo
    name: str
    group: str
    version: str
    kind: str
    actions: tuple[str, ...]
    """``post`` (binding, eviction) or ``get``/``put``/``patch`` (scale)."""

    @property
    def definition(self) -> str:
        """The definition of the subresource's body."""
        name = openapi_schemas.definition_name(self.group, self.version, self.kind)
        assert name is not None, self.kind
        return name


def subresources(k: KindInfo) -> tuple[Subresource, ...]:
    """The subresources of a served kind that carry a kind of their own (status aside)."""
    if (k.group, k.kind) == ("", "Pod"):
        return (
            Subresource(k, "binding", "", "v1", "Binding", ("post",)),
            Subresource(k, "eviction", "policy", "v1", "Eviction", ("post",)),
        )
    if (k.group, k.kind) in (("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet")):
        return (Subresource(k, "scale", "autoscaling", "v1", "Scale", ("get", "put", "patch")),)
    return ()


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": openapi_schemas.COMPONENTS + name}


def _operation(
    action: str, operation_id: str, schema: str, gvk: dict[str, str], body: str | None = None
) -> dict[str, Any]:
    params = [
        {"name": p, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
        for p in _QUERY_PARAMETERS
    ]
    if action not in ("patch", "put", "post"):
        params = [p for p in params if p["name"] in ("dryRun", "pretty")]
    op: dict[str, Any] = {"operationId": operation_id, "parameters": params}
    if body is not None:
        op["requestBody"] = {"content": {"*/*": {"schema": _ref(body)}}, "required": True}
    op["responses"] = {
        "200": {"description": "OK", "content": {"application/json": {"schema": _ref(schema)}}}
    }
    op["x-kubernetes-action"] = action
    op["x-kubernetes-group-version-kind"] = gvk
    return op


def _paths(k: KindInfo) -> Iterator[tuple[str, dict[str, Any]]]:
    prefix = f"/apis/{k.group}/{k.version}" if k.group else f"/api/{k.version}"
    scope = f"{prefix}/namespaces/{{namespace}}/{k.plural}" if k.namespaced else f"{prefix}/{k.plural}"
    item = f"{scope}/{{name}}"
    name, listed = openapi_schemas.kind_definition(k), openapi_schemas.list_definition(k)
    gvk = _gvk(k.group, k.version, k.kind)
    yield (
        scope,
        {
            "get": _operation("list", f"list{k.kind}", listed, gvk),
            "post": _operation("post", f"create{k.kind}", name, gvk, body=name),
        },
    )
    yield (
        item,
        {
            "get": _operation("get", f"read{k.kind}", name, gvk),
            "put": _operation("put", f"replace{k.kind}", name, gvk, body=name),
            "patch": _operation("patch", f"patch{k.kind}", name, gvk),
            "delete": _operation("delete", f"delete{k.kind}", name, gvk),
        },
    )
    if k.has_status:
        yield (
            f"{item}/status",
            {
                "get": _operation("get", f"read{k.kind}Status", name, gvk),
                "put": _operation("put", f"replace{k.kind}Status", name, gvk, body=name),
                "patch": _operation("patch", f"patch{k.kind}Status", name, gvk),
            },
        )
    for sub in subresources(k):
        yield f"{item}/{sub.name}", _subresource_item(sub)


_VERBS = {"get": "read", "put": "replace", "patch": "patch", "post": "create"}


def _subresource_item(sub: Subresource) -> dict[str, Any]:
    gvk = _gvk(sub.group, sub.version, sub.kind)
    item: dict[str, Any] = {}
    for action in sub.actions:
        body = sub.definition if action in ("put", "post") else None
        op_id = f"{_VERBS[action]}{sub.parent.kind}{sub.name.capitalize()}"
        item[action] = _operation(action, op_id, sub.definition, gvk, body=body)
    return item


def _roots(kinds: list[KindInfo]) -> Iterator[str]:
    """The definitions a group-version's document starts from (its closure is the document's schemas)."""
    yield from (f"{_META}.Status", f"{_META}.DeleteOptions", openapi_schemas.PATCH)
    for k in kinds:
        yield openapi_schemas.kind_definition(k)
        yield openapi_schemas.list_definition(k)
        yield from (sub.definition for sub in subresources(k))


@functools.cache
def document(group: str, version: str) -> dict[str, Any] | None:
    """The OpenAPI v3 document of one group-version (None when it is not served)."""
    kinds = [k for k in served_kinds() if k.group == group and k.version == version]
    if not kinds:
        return None
    paths: dict[str, Any] = {}
    for k in kinds:
        for path, item in _paths(k):
            paths.setdefault(path, item)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": openapi_schemas.closure(_roots(kinds))},
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
