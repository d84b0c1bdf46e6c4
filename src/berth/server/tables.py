"""Server-side printing: objects as the ``metav1.Table`` kube-apiserver answers to
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``.

The columns and cells are ``berth.api.printers``' (shared with ``berth simulate -o table|wide``): kube's
printer columns for built-in kinds, the CRDs' ``additionalPrinterColumns`` for Koordinator's and
scheduler-plugins' kinds. As kube-apiserver does, every row carries the cells of every column, wide
(priority 1) ones included; kubectl shows those with ``-o wide``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from berth.api.errors import BadRequest
from berth.api.kinds import KindInfo
from berth.api.printers import Column, server_columns
from berth.server.media import JSON_RANGES, accepted

__all__ = ["INCLUDE_OBJECT", "TABLE_VERSIONS", "negotiate_table", "table_content_type", "table_for"]

INCLUDE_OBJECT = ("None", "Metadata", "Object")
"""The values of the ``includeObject`` query parameter: what each row's ``object`` holds."""

TABLE_VERSIONS = ("v1", "v1beta1")
"""The ``meta.k8s.io`` versions of Table the server answers (kubectl asks for v1, then v1beta1)."""

_POD_ROW_CONDITIONS = {
    "Succeeded": [
        {
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }
    ],
    "Failed": [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}],
}


def negotiate_table(accept: str) -> str | None:
    """The Table version (``"v1"`` or ``"v1beta1"``) the Accept header asks for, or None when it asks for none.

    The first media range naming ``as=Table`` in group ``meta.k8s.io`` that the server can write (JSON, or any
    type) wins; a range for another representation listed before it (``application/json`` alone) means the
    client prefers the plain object, as kube-apiserver reads it.
    """
    for media, params in accepted(accept):
        if media not in JSON_RANGES:
            continue
        if params.get("as") != "Table":
            if "as" not in params and "g" not in params:
                return None
            continue
        if params.get("g") == "meta.k8s.io" and params.get("v") in TABLE_VERSIONS:
            return params["v"]
    return None


def table_content_type(version: str = "v1") -> str:
    """The Content-Type of a Table response."""
    return f"application/json;as=Table;v={version};g=meta.k8s.io"


def _row_object(obj: Mapping[str, Any], include_object: str, version: str) -> Any:
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": obj.get("metadata") or {},
    }


def _row(
    obj: Mapping[str, Any],
    kind: KindInfo,
    columns: Sequence[Column],
    now: datetime,
    include_object: str,
    version: str,
) -> dict[str, Any]:
    row: dict[str, Any] = {"cells": [c.cell(obj, now) for c in columns]}
    if kind.group == "" and kind.kind == "Pod":
        conditions = _POD_ROW_CONDITIONS.get(str((obj.get("status") or {}).get("phase", "")))
        if conditions is not None:
            row["conditions"] = [dict(c) for c in conditions]
    row["object"] = _row_object(obj, include_object, version)
    return row


def table_for(
    objects: Sequence[Mapping[str, Any]],
    kind: KindInfo,
    *,
    now: datetime,
    include_object: str = "Metadata",
    version: str = "v1",
    no_headers: bool = False,
    list_meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``metav1.Table`` of `objects` (all of `kind`), with ages counted to `now`.

    ``include_object`` is the ``includeObject`` query parameter: ``Metadata`` (the default; each row's object
    is a ``PartialObjectMetadata``), ``Object`` (the whole object) or ``None``; anything else is a BadRequest,
    as kube-apiserver answers. ``version`` is the Table's ``meta.k8s.io`` version, ``no_headers`` drops the
    column definitions (``TableOptions.noHeaders``), ``list_meta`` is the list's metadata (resourceVersion,
    continue, remainingItemCount) to carry over.
    """
    if include_object not in INCLUDE_OBJECT:
        raise BadRequest(f'includeObject must be one of "None", "Metadata", "Object", not "{include_object}"')
    if version not in TABLE_VERSIONS:
        raise BadRequest(f'Table version must be one of "v1", "v1beta1", not "{version}"')
    columns = server_columns(kind)
    return {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": dict(list_meta or {}),
        "columnDefinitions": None if no_headers else [c.definition() for c in columns],
        "rows": [_row(o, kind, columns, now, include_object, version) for o in objects],
    }
