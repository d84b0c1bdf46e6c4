"""The DeleteOptions of a DELETE (one object or a collection), read as kube-apiserver reads them.

With a body, the options come from it (JSON, or protobuf decoded to the same dict); without one, from the query
(``propagationPolicy``, ``orphanDependents``). Preconditions (``uid``, ``resourceVersion``) only come in a body.
A field of the wrong type is a 400; ``ValidateDeleteOptions`` failures (an unsupported ``propagationPolicy``,
``orphanDependents`` together with a policy) are a 422 Invalid of ``DeleteOptions.meta.k8s.io``. The legacy
``orphanDependents`` becomes the policy it means (`berth.api.deletion.effective_propagation`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.api.deletion import delete_option_causes, effective_propagation
from berth.api.errors import BadRequest, Invalid

__all__ = ["DeleteOptions", "delete_options"]

Query = Mapping[str, Sequence[str]]


@dataclass(frozen=True, slots=True)
class DeleteOptions:
    """What a delete asks for besides its grace period and dry run."""

    propagation: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    orphan_dependents: bool | None = None
    """The legacy ``orphanDependents`` as sent (an explicit false asks for a 202 when the object stays)."""


def _type_error(field: str, value: object, go_type: str) -> BadRequest:
    kind = {bool: "bool", int: "number", float: "number", str: "string", list: "array", dict: "object"}
    shown = kind.get(type(value), "value")
    return BadRequest(f"json: cannot unmarshal {shown} into Go struct field {field} of type {go_type}")


def _string(value: object, field: str, go_type: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _type_error(field, value, go_type)


def _query_bool(values: Sequence[str]) -> bool:
    """Kube's query conversion of a bool: false only for ``0`` or ``false`` (any case)."""
    if not values:
        return False
    return not (values[0] == "0" or values[0].lower() == "false")


def delete_options(query: Query, body: Mapping[str, Any], has_body: bool) -> DeleteOptions:
    """The propagation policy and preconditions of a delete; raises BadRequest (400) or Invalid (422)."""
    policy: str | None
    orphan: bool | None
    uid = resource_version = None
    if has_body:
        policy = _string(
            body.get("propagationPolicy"), "DeleteOptions.propagationPolicy", "v1.DeletionPropagation"
        )
        raw_orphan = body.get("orphanDependents")
        if raw_orphan is not None and not isinstance(raw_orphan, bool):
            raise _type_error("DeleteOptions.orphanDependents", raw_orphan, "bool")
        orphan = raw_orphan
        pre = body.get("preconditions")
        if pre is not None:
            if not isinstance(pre, Mapping):
                raise _type_error("DeleteOptions.preconditions", pre, "v1.Preconditions")
            uid = _string(pre.get("uid"), "Preconditions.uid", "types.UID") or None
            resource_version = _string(pre.get("resourceVersion"), "Preconditions.resourceVersion", "string")
    else:
        values = query.get("propagationPolicy")
        policy = values[0] if values else None
        orphan_values = query.get("orphanDependents")
        orphan = _query_bool(orphan_values) if orphan_values is not None else None
    causes = delete_option_causes(policy, orphan)
    if causes:
        raise Invalid.of("DeleteOptions", "meta.k8s.io", "", causes)
    return DeleteOptions(effective_propagation(policy, orphan), uid, resource_version, orphan)
