"""The CustomResourceDefinitions of the custom kinds Berth serves (Reservation, PodMigrationJob, ElasticQuota,
PodGroup), as a real cluster needs them installed before `berth run` can use those kinds.

Each is an ``apiextensions.k8s.io/v1`` CustomResourceDefinition named ``<plural>.<group>``: the kind's
names and short names, its scope, one served and stored version with the structural schema the server
publishes (`berth.server.openapi_crds`), the ``status`` subresource and the printer columns
`berth.api.printers` serves for it (Name is implicit in a CRD, so it is not listed).
"""

from __future__ import annotations

from typing import Any

from berth.api.kinds import KindInfo, all_kinds
from berth.api.printers import server_columns
from berth.server.openapi_crds import SCHEMAS

__all__ = ["custom_resource_definitions"]

_CRD_API_VERSION = "apiextensions.k8s.io/v1"


def _printer_columns(info: KindInfo) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for column in server_columns(info):
        if not column.json_path:
            continue  # Name: every CRD has it
        entry: dict[str, Any] = {"name": column.name, "type": column.type, "jsonPath": column.json_path}
        if column.description:
            entry["description"] = column.description
        if column.priority:
            entry["priority"] = column.priority
        out.append(entry)
    if [c["jsonPath"] for c in out] == [".metadata.creationTimestamp"]:
        return []  # Name and Age only: what a CRD without printer columns shows
    return out


def _definition(info: KindInfo) -> dict[str, Any]:
    schema = SCHEMAS[(info.group, info.version, info.kind)]
    properties = {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        **schema.get("properties", {}),
    }
    version: dict[str, Any] = {
        "name": info.version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {**schema, "type": "object", "properties": properties}},
    }
    if info.has_status:
        version["subresources"] = {"status": {}}
    columns = _printer_columns(info)
    if columns:
        version["additionalPrinterColumns"] = columns
    names: dict[str, Any] = {
        "kind": info.kind,
        "listKind": f"{info.kind}List",
        "plural": info.plural,
        "singular": info.singular,
    }
    if info.short_names:
        names["shortNames"] = list(info.short_names)
    return {
        "apiVersion": _CRD_API_VERSION,
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{info.plural}.{info.group}"},
        "spec": {
            "group": info.group,
            "names": names,
            "scope": "Namespaced" if info.namespaced else "Cluster",
            "versions": [version],
        },
    }


def custom_resource_definitions() -> list[dict[str, Any]]:
    """Every CRD Berth serves, in a stable order (by group, then kind)."""
    infos = [k for k in all_kinds() if (k.group, k.version, k.kind) in SCHEMAS]
    return [_definition(info) for info in sorted(infos, key=lambda k: (k.group, k.kind))]
