"""OpenAPI definitions of the built-in kinds Berth stores as given (ConfigMap, Secret, Ingress, Role, ...).

Berth keeps these objects as the user wrote them and runs nothing for them, so it publishes no field schema
of its own for them: each kind gets a definition named as kube names it (``io.k8s.api.core.v1.ConfigMap``,
``io.k8s.api.rbac.v1.Role``) whose ``metadata`` is ObjectMeta and whose other fields are kept as given
(``x-kubernetes-preserve-unknown-fields``), plus its ``<Kind>List``. Kinds with protobuf field tables
(`berth.server.protobuf_schema`) or CRD schemas are described there, not here.
"""

from __future__ import annotations

import functools
from typing import Any

from berth.api.kinds import KindInfo, all_kinds, is_builtin_group
from berth.server.openapi_descriptions import (
    API_VERSION,
    KIND,
    LIST_METADATA,
    OBJECT_METADATA,
    list_items,
    list_text,
)
from berth.server.protobuf_schema import KINDS

__all__ = ["STORED_DESCRIPTION", "stored_definition_name", "stored_definitions", "stored_kinds"]

_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_COMPONENTS = "#/components/schemas/"
STORED_DESCRIPTION = "Stored by Berth as given: only its metadata is checked."
"""The description of a stored kind's definition (what Berth does with it)."""


def _package(group: str) -> str:
    """kube's Go package name of a built-in group (``""`` → ``core``, ``rbac.authorization.k8s.io`` →
    ``rbac``)."""
    return group.split(".")[0] if group else "core"


@functools.cache
def stored_kinds() -> dict[tuple[str, str, str], KindInfo]:
    """(group, version, kind) → KindInfo of every built-in kind without a field table of its own."""
    return {
        (k.group, k.version, k.kind): k
        for k in all_kinds()
        if is_builtin_group(k.group) and (k.api_version, k.kind) not in KINDS
    }


def stored_definition_name(group: str, version: str, kind: str) -> str | None:
    """The definition of a stored kind or its List (``io.k8s.api.core.v1.ConfigMapList``); None for others."""
    kinds = stored_kinds()
    if (group, version, kind) not in kinds and (group, version, kind.removesuffix("List")) not in kinds:
        return None
    return f"io.k8s.api.{_package(group)}.{version}.{kind}"


def _ref(name: str) -> dict[str, Any]:
    return {"allOf": [{"$ref": _COMPONENTS + name}]}


@functools.cache
def stored_definitions() -> dict[str, dict[str, Any]]:
    """Each stored kind's definition and its List's, OpenAPI v3 form."""
    out: dict[str, dict[str, Any]] = {}
    for (group, version, kind), _ in sorted(stored_kinds().items()):
        name = f"io.k8s.api.{_package(group)}.{version}.{kind}"
        out[name] = {
            "description": STORED_DESCRIPTION,
            "type": "object",
            "properties": {
                "apiVersion": {"description": API_VERSION, "type": "string"},
                "kind": {"description": KIND, "type": "string"},
                "metadata": {"description": OBJECT_METADATA, **_ref(f"{_META}.ObjectMeta")},
            },
            "x-kubernetes-preserve-unknown-fields": True,
            "x-kubernetes-group-version-kind": [{"group": group, "version": version, "kind": kind}],
        }
        out[f"{name}List"] = {
            "description": list_text(kind),
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": {"description": API_VERSION, "type": "string"},
                "items": {
                    "description": list_items(kind),
                    "type": "array",
                    "items": {"$ref": _COMPONENTS + name},
                },
                "kind": {"description": KIND, "type": "string"},
                "metadata": {"description": LIST_METADATA, **_ref(f"{_META}.ListMeta")},
            },
            "x-kubernetes-group-version-kind": [{"group": group, "version": version, "kind": f"{kind}List"}],
        }
    return out
