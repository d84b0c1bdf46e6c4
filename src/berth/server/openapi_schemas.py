"""Object schemas of the served kinds for ``/openapi/v2`` and ``/openapi/v3``, named and shaped as kube-apiserver's.

One source of truth per family of kinds:

* Built-in kinds: the protobuf field tables of `berth.server.protobuf_schema` (every message with its JSON
  field names and types). Each message becomes a definition named as kube names it
  (``core.Pod`` → ``io.k8s.api.core.v1.Pod``, ``meta.ObjectMeta`` →
  ``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``); scalars map to OpenAPI types and formats
  (``int32`` → ``integer``/``int32``, ...), repeated fields to arrays, ``map<string, T>`` to objects with
  ``additionalProperties``, Kubernetes' special types to kube's own definitions (``Quantity``,
  ``IntOrString``, ``Time``, ``MicroTime``, ``RawExtension``, ``FieldsV1``; a ``Duration`` is a string).
  Embedded structs (flag ``i``) are inlined; value fields without ``omitempty`` (flag ``z``) are
  ``required``. Kinds gain ``apiVersion`` and ``kind`` and ``x-kubernetes-group-version-kind``.
* Patch and apply extensions come from Berth's own strategic-merge-patch and apply schemas
  (`berth.api.patches.smp_schema`, `berth.api.apply.apply_schema`), so the documents describe what this
  server does: ``x-kubernetes-patch-strategy`` / ``x-kubernetes-patch-merge-key`` from the patch tags,
  ``x-kubernetes-list-type`` (``map`` with ``x-kubernetes-list-map-keys``, or ``set``) for the lists that
  server-side apply merges, ``x-kubernetes-map-type: atomic`` for the maps it replaces whole.
* Custom kinds (Reservation, PodMigrationJob, ElasticQuota, PodGroup): the structural schemas of
  `berth.server.openapi_crds`, published as kube-apiserver publishes a CRD's schema: definitions named
  after the reversed group (``sh.koordinator.scheduling.v1alpha1.Reservation``), ``metadata`` a reference
  to ObjectMeta, a ``<Kind>List``, and in OpenAPI v2 the schema converted as apiextensions-apiserver does
  (no ``anyOf``/``oneOf``/``allOf``/``not``, no ``properties`` or ``items`` under
  ``x-kubernetes-preserve-unknown-fields``).

Descriptions are Berth's own (`berth.server.openapi_descriptions`). Definitions are built in OpenAPI v3
form (references as ``allOf: [{$ref}]`` for properties, as kube-openapi writes them) and converted for
v2 (``$ref`` beside the description, ``#/definitions/`` references). Every function is cached: treat
the schemas returned as read-only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final

from berth.api.apply import apply_schema
from berth.api.kinds import KindInfo
from berth.api.patches import PatchField, Schema, smp_schema
from berth.server import openapi_crds
from berth.server.openapi_descriptions import (
    API_VERSION,
    DEFINITION_TEXT,
    FIELD_TEXT,
    KIND,
    LIST_METADATA,
    OBJECT_METADATA,
    list_items,
    list_text,
)
from berth.server.openapi_stored import stored_definition_name, stored_definitions
from berth.server.protobuf_schema import KINDS, MESSAGES, OPTIONS_KINDS

__all__ = [
    "COMPONENTS",
    "DEFINITIONS",
    "LIST_MAP_KEYS",
    "PATCH",
    "closure",
    "crd_v2",
    "definition_name",
    "definitions_v2",
    "definitions_v3",
    "kind_definition",
    "list_definition",
    "message_definition",
]

COMPONENTS: Final = "#/components/schemas/"
"""Where OpenAPI v3 references point."""
DEFINITIONS: Final = "#/definitions/"
"""Where OpenAPI v2 (Swagger) references point."""

_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
PATCH: Final = f"{_META}.Patch"
"""The definition of a PATCH request body (an open object)."""
_OBJECT_META = f"{_META}.ObjectMeta"
_LIST_META = f"{_META}.ListMeta"
_GVK = "x-kubernetes-group-version-kind"

_PACKAGES: Mapping[str, str] = {
    "core": "io.k8s.api.core.v1",
    "apps": "io.k8s.api.apps.v1",
    "policy": "io.k8s.api.policy.v1",
    "autoscaling": "io.k8s.api.autoscaling.v1",
    "scheduling": "io.k8s.api.scheduling.v1",
    "coordination": "io.k8s.api.coordination.v1",
    "batch": "io.k8s.api.batch.v1",
    "meta": _META,
}
"""The prefix of `protobuf_schema`'s message names → kube's definition namespace."""

_SCALARS: Mapping[str, Mapping[str, str]] = {
    "string": {"type": "string"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "bool": {"type": "boolean"},
    "bytes": {"type": "string", "format": "byte"},
    "double": {"type": "number", "format": "double"},
    "Duration": {"type": "string"},
}

_SPECIAL: Mapping[str, str] = {
    "Quantity": "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "IntOrString": "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    "Time": f"{_META}.Time",
    "MicroTime": f"{_META}.MicroTime",
    "FieldsV1": f"{_META}.FieldsV1",
    "RawExtension": "io.k8s.apimachinery.pkg.runtime.RawExtension",
}
"""Kubernetes' types with a custom JSON form → their definitions."""

_SPECIAL_V3: Mapping[str, dict[str, Any]] = {
    _SPECIAL["Quantity"]: {"oneOf": [{"type": "string"}, {"type": "number"}]},
    _SPECIAL["IntOrString"]: {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
    _SPECIAL["Time"]: {"type": "string", "format": "date-time"},
    _SPECIAL["MicroTime"]: {"type": "string", "format": "date-time"},
    _SPECIAL["FieldsV1"]: {"type": "object"},
    _SPECIAL["RawExtension"]: {"type": "object"},
    PATCH: {"type": "object"},
}
"""The definitions of the special types in OpenAPI v3 (kube's ``OpenAPIV3OneOfTypes`` where it has them)."""
_SPECIAL_V2: Mapping[str, dict[str, Any]] = {
    _SPECIAL["Quantity"]: {"type": "string"},
    _SPECIAL["IntOrString"]: {"type": "string", "format": "int-or-string"},
}
"""Where OpenAPI v2 differs: one type (Swagger has no ``oneOf``)."""

LIST_MAP_KEYS: Final[Mapping[str, tuple[str, ...]]] = {
    "ports": ("containerPort", "protocol"),
    "topologySpreadConstraints": ("topologyKey", "whenUnsatisfiable"),
}
"""Associative lists keyed by more than their strategic-merge-patch merge key, as server-side apply
(`berth.api.apply`) keys them."""

_REQUIRED: Final[frozenset[tuple[str, str]]] = frozenset(
    {
        ("apps.DeploymentSpec", "selector"),
        ("apps.ReplicaSetSpec", "selector"),
        ("core.ContainerRestartRule", "action"),
        ("core.ContainerRestartRuleOnExitCodes", "operator"),
        ("core.EvictionResponder", "priority"),
        ("core.ImageVolumeStatus", "imageRef"),
        ("core.NodeAllocatableMappedResources", "quantity"),
        ("core.PodCertificateProjection", "keyType"),
        ("core.PodCertificateProjection", "signerName"),
        ("core.ScaleIOVolumeSource", "secretRef"),
    }
)
"""Required fields the table's flags do not show: pointers without ``omitempty`` and ``+required`` fields."""
_OPTIONAL: Final[frozenset[tuple[str, str]]] = frozenset(
    {
        ("core.ContainerImage", "names"),
        ("core.Event", "reportingComponent"),
        ("core.Event", "reportingInstance"),
        ("core.NodeRuntimeHandler", "name"),
        ("core.ProjectedVolumeSource", "sources"),
    }
)
"""Fields without ``omitempty`` (flag ``z``) that k8s.io/api marks ``+optional``: not required."""


# --- names ---------------------------------------------------------------------------------------------


def message_definition(message: str) -> str:
    """kube's definition name of a `protobuf_schema` message (``core.Pod`` → ``io.k8s.api.core.v1.Pod``)."""
    package, _, name = message.partition(".")
    return f"{_PACKAGES[package]}.{name}"


def _crd_prefix(group: str, version: str) -> str:
    """apiextensions-apiserver's definition prefix of a CRD: the group reversed, then the version."""
    return ".".join(reversed(group.split("."))) + f".{version}"


def definition_name(group: str, version: str, kind: str) -> str | None:
    """The definition of a kind (``Pod``, ``PodList``, ``Scale``, ``Reservation``, ...) in a group-version;
    None when Berth has no schema for it."""
    api_version = f"{group}/{version}" if group else version
    message = KINDS.get((api_version, kind))
    if message is not None:
        return message_definition(message)
    base = kind.removesuffix("List")
    if (group, version, base) in openapi_crds.SCHEMAS:
        return f"{_crd_prefix(group, version)}.{kind}"
    return stored_definition_name(group, version, kind)


def kind_definition(k: KindInfo) -> str:
    """The definition of a served kind."""
    name = definition_name(k.group, k.version, k.kind)
    if name is None:
        raise KeyError(f"no schema for {k.api_version} {k.kind}")
    return name


def list_definition(k: KindInfo) -> str:
    """The definition of a served kind's List (``io.k8s.api.core.v1.PodList``)."""
    name = definition_name(k.group, k.version, f"{k.kind}List")
    if name is None:
        raise KeyError(f"no list schema for {k.api_version} {k.kind}")
    return name


# --- fields of the built-in messages ------------------------------------------------------------------


def _fields(message: str) -> Iterator[tuple[str, str, str]]:
    """The JSON fields of a message, embedded structs inlined: (json name, type, flags)."""
    for name, type_, flags in MESSAGES[message].values():
        if "i" in flags:
            yield from _fields(type_)
        else:
            yield name, type_, flags


def _element(type_: str) -> str:
    """The element type of a field type (``[]core.Container`` → ``core.Container``)."""
    return type_.removeprefix("[]").removeprefix("{}")


def _ref(name: str) -> dict[str, str]:
    return {"$ref": COMPONENTS + name}


def _type_schema(type_: str) -> dict[str, Any]:
    """The schema of a value of a field type (an element schema: a bare ``$ref`` for messages)."""
    if type_.startswith("[]"):
        return {"type": "array", "items": _type_schema(type_[2:])}
    if type_.startswith("{}"):
        return {"type": "object", "additionalProperties": _type_schema(type_[2:])}
    if type_ in _SCALARS:
        return dict(_SCALARS[type_])
    if type_ in _SPECIAL:
        return _ref(_SPECIAL[type_])
    return _ref(message_definition(type_))


def _property(type_: str, description: str | None, extensions: Mapping[str, Any]) -> dict[str, Any]:
    """A property: its type schema (a reference wrapped in ``allOf``, as kube-openapi writes a reference
    with siblings), its description and extensions."""
    schema = _type_schema(type_)
    if "$ref" in schema:
        schema = {"allOf": [schema]}
    if description:
        schema = {"description": description, **schema}
    return {**schema, **extensions}


# --- patch and apply extensions ------------------------------------------------------------------------

_Extensions = dict[tuple[str, str], dict[str, Any]]
_Visit = Callable[[str, str, PatchField], dict[str, Any]]


def _walk(message: str, schema: Schema, visit: _Visit, out: _Extensions) -> None:
    """Call ``visit(field_type, json_name, PatchField) -> extensions`` for every field `schema` names in
    `message` (recursing into the fields' messages) and record the extensions under (message, field)."""
    fields = {name: type_ for name, type_, _ in _fields(message)}
    for name, f in schema.items():
        if name not in fields:
            raise KeyError(f"{message} has no field {name!r} (patch schema)")
        type_ = fields[name]
        found: dict[str, Any] = visit(type_, name, f)
        if found:
            known = out.setdefault((message, name), {})
            for key, value in found.items():
                if known.get(key, value) != value:
                    raise ValueError(f"{message}.{name}: conflicting {key} {known[key]!r} and {value!r}")
                known[key] = value
        element = _element(type_)
        if f.fields and element in MESSAGES:
            _walk(element, f.fields, visit, out)


def _patch_extensions(type_: str, name: str, f: PatchField) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if f.merge_key:
        out["x-kubernetes-patch-merge-key"] = f.merge_key
    if f.strategy:
        out["x-kubernetes-patch-strategy"] = f.strategy
    return out


def _apply_extensions(type_: str, name: str, f: PatchField) -> dict[str, Any]:
    if type_.startswith("[]") and f.merges:
        if f.merge_key:
            keys = LIST_MAP_KEYS.get(name, (f.merge_key,))
            return {"x-kubernetes-list-map-keys": list(keys), "x-kubernetes-list-type": "map"}
        return {"x-kubernetes-list-type": "set"}
    if not type_.startswith("[]") and f.replaces:
        return {"x-kubernetes-map-type": "atomic"}
    return {}


@functools.cache
def _extensions() -> _Extensions:
    """(message, json field) → the patch and apply extensions of that field, from every kind's schemas."""
    out: _Extensions = {}
    for (api_version, kind), message in KINDS.items():
        group = api_version.rpartition("/")[0]
        patch = smp_schema(group, kind)
        if patch is not None:
            _walk(message, patch, _patch_extensions, out)
            _walk(message, apply_schema(group, kind), _apply_extensions, out)
    return out


# --- the built-in definitions ---------------------------------------------------------------------------


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


@functools.cache
def _kinds_of_messages() -> dict[str, list[dict[str, str]]]:
    """message → the group-version-kinds it is the schema of."""
    out: dict[str, list[dict[str, str]]] = {}
    for (api_version, kind), message in KINDS.items():
        group, _, version = api_version.rpartition("/")
        out.setdefault(message, []).append(_gvk(group, version, kind))
    group_versions = sorted({(g["group"], g["version"]) for kinds in out.values() for g in kinds})
    out["meta.Status"] = [_gvk("", "v1", "Status")]
    for kind in ("DeleteOptions", "WatchEvent"):
        out[OPTIONS_KINDS[kind]] = [_gvk(g, v, kind) for g, v in group_versions]
    return out


def _has_type_meta(message: str) -> bool:
    return message in _kinds_of_messages() and message != OPTIONS_KINDS["WatchEvent"]


def _message_schema(message: str) -> dict[str, Any]:
    """The OpenAPI v3 definition of one built-in message."""
    texts = FIELD_TEXT.get(message, {})
    extensions = _extensions()
    properties: dict[str, Any] = {}
    required: list[str] = []
    if _has_type_meta(message):
        properties["apiVersion"] = {"description": API_VERSION, "type": "string"}
        properties["kind"] = {"description": KIND, "type": "string"}
    for name, type_, flags in _fields(message):
        description = texts.get(name)
        if description is None and name == "metadata":
            description = LIST_METADATA if type_ == "meta.ListMeta" else OBJECT_METADATA
        if description is None and name == "items" and message.endswith("List"):
            description = list_items(message.rpartition(".")[2].removesuffix("List"))
        properties[name] = _property(type_, description, extensions.get((message, name), {}))
        if ("z" in flags and (message, name) not in _OPTIONAL) or (message, name) in _REQUIRED:
            required.append(name)
    schema: dict[str, Any] = {}
    description = DEFINITION_TEXT.get(message)
    if description is None and message.endswith("List") and message in _kinds_of_messages():
        description = list_text(message.rpartition(".")[2].removesuffix("List"))
    if description:
        schema["description"] = description
    schema["type"] = "object"
    if required:
        schema["required"] = required
    schema["properties"] = dict(sorted(properties.items()))
    if message in _kinds_of_messages():
        schema[_GVK] = _kinds_of_messages()[message]
    return schema


def _references(schema: Any) -> Iterator[str]:
    """The definition names a schema refers to (v3 or v2 form)."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            yield ref.rpartition("/")[2]
        for value in schema.values():
            yield from _references(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _references(value)


def _builtin_roots() -> list[str]:
    return [*KINDS.values(), *OPTIONS_KINDS.values()]


@functools.cache
def _builtin_v3() -> dict[str, dict[str, Any]]:
    """Every built-in message reachable from the kinds, plus the special types, in v3 form."""
    out: dict[str, dict[str, Any]] = {}
    pending = [message_definition(m) for m in _builtin_roots()]
    by_name = {message_definition(m): m for m in MESSAGES}
    while pending:
        name = pending.pop()
        if name in out:
            continue
        if name in _SPECIAL_V3:
            schema = dict(_SPECIAL_V3[name])
            text = DEFINITION_TEXT.get(name)
            out[name] = {"description": text, **schema} if text else schema
            continue
        out[name] = _message_schema(by_name[name])
        pending.extend(_references(out[name]))
    out[PATCH] = {"description": DEFINITION_TEXT[PATCH], **_SPECIAL_V3[PATCH]}
    return out


# --- the custom kinds ------------------------------------------------------------------------------------


def _crd_definitions(
    group: str, version: str, kind: str, body: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """A CRD kind's definition and its List's, in v3 form, as apiextensions-apiserver builds them."""
    prefix = _crd_prefix(group, version)
    name = f"{prefix}.{kind}"
    properties = dict(body.get("properties", {}))
    properties["apiVersion"] = {"description": API_VERSION, "type": "string"}
    properties["kind"] = {"description": KIND, "type": "string"}
    properties["metadata"] = {"description": OBJECT_METADATA, "allOf": [_ref(_OBJECT_META)]}
    definition = {
        **{k: v for k, v in body.items() if k != "properties"},
        "type": "object",
        "properties": dict(sorted(properties.items())),
        _GVK: [_gvk(group, version, kind)],
    }
    listed = {
        "description": list_text(kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"description": API_VERSION, "type": "string"},
            "items": {"description": list_items(kind), "type": "array", "items": _ref(name)},
            "kind": {"description": KIND, "type": "string"},
            "metadata": {"description": LIST_METADATA, "allOf": [_ref(_LIST_META)]},
        },
        _GVK: [_gvk(group, version, f"{kind}List")],
    }
    return {name: definition, f"{name}List": listed}


@functools.cache
def _crd_v3() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for (group, version, kind), body in openapi_crds.SCHEMAS.items():
        out.update(_crd_definitions(group, version, kind, body))
    return out


# --- the documents' definitions ---------------------------------------------------------------------------


@functools.cache
def definitions_v3() -> dict[str, dict[str, Any]]:
    """Every definition, OpenAPI v3 form (references to ``#/components/schemas/``), sorted by name."""
    return dict(sorted({**_builtin_v3(), **_crd_v3(), **stored_definitions()}.items()))


def closure(names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The v3 definitions of `names` and of every definition they refer to, transitively, sorted."""
    every = definitions_v3()
    out: dict[str, dict[str, Any]] = {}
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in out:
            continue
        out[name] = every[name]
        pending.extend(_references(out[name]))
    return dict(sorted(out.items()))


def _v2_refs(schema: Any) -> Any:
    """A v3 schema in v2 form: ``allOf: [{$ref}]`` unwrapped to ``$ref``, references to ``#/definitions/``."""
    if isinstance(schema, list):
        return [_v2_refs(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "allOf" and len(value) == 1 and set(value[0]) == {"$ref"}:
            out["$ref"] = DEFINITIONS + value[0]["$ref"].removeprefix(COMPONENTS)
        elif key == "$ref":
            out["$ref"] = DEFINITIONS + value.removeprefix(COMPONENTS)
        elif key == "properties":
            out[key] = {k: _v2_refs(v) for k, v in value.items()}
        elif key.startswith("x-") or key in ("enum", "default", "required", "example"):
            out[key] = value
        else:
            out[key] = _v2_refs(value)
    return out


_JUNCTORS = ("allOf", "oneOf", "anyOf", "not")


def crd_v2(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A CRD's structural schema as apiextensions-apiserver publishes it in OpenAPI v2
    (``ToStructuralOpenAPIV2``): junctors dropped; a nullable field untyped and without ``properties`` or
    ``items`` (and no longer required by its parent); no ``properties`` or ``items`` under
    ``x-kubernetes-preserve-unknown-fields``; an array left without items untyped."""
    out = {k: v for k, v in schema.items() if k not in _JUNCTORS}
    if out.pop("nullable", False):
        out.pop("type", None)
        out.pop("properties", None)
        out.pop("items", None)
    if out.get("x-kubernetes-preserve-unknown-fields"):
        out.pop("properties", None)
        out.pop("items", None)
    if out.get("type") == "array" and "items" not in out:
        del out["type"]
    if "properties" in out:
        properties = out["properties"]
        nullable = {name for name, sub in properties.items() if sub.get("nullable")}
        out["properties"] = {name: crd_v2(sub) for name, sub in properties.items()}
        if nullable and "required" in out:
            required = [r for r in out["required"] if r not in nullable]
            if required:
                out["required"] = required
            else:
                del out["required"]
    if isinstance(out.get("items"), Mapping):
        out["items"] = crd_v2(out["items"])
    extra = out.get("additionalProperties")
    if isinstance(extra, Mapping):
        out["additionalProperties"] = crd_v2(extra)
        if extra.get("nullable"):
            out.pop("required", None)
    return out


@functools.cache
def definitions_v2() -> dict[str, dict[str, Any]]:
    """Every definition, OpenAPI v2 (Swagger) form (references to ``#/definitions/``), sorted by name."""
    out: dict[str, dict[str, Any]] = {}
    for name, schema in _builtin_v3().items():
        if name in _SPECIAL_V2:
            text = DEFINITION_TEXT.get(name)
            out[name] = {"description": text, **_SPECIAL_V2[name]} if text else dict(_SPECIAL_V2[name])
        else:
            out[name] = _v2_refs(schema)
    for (group, version, kind), body in openapi_crds.SCHEMAS.items():
        out.update({n: _v2_refs(s) for n, s in _crd_definitions(group, version, kind, crd_v2(body)).items()})
    # as apiextensions-apiserver publishes a schema that preserves unknown fields: no properties in v2
    out.update({n: _v2_refs(crd_v2(s)) for n, s in stored_definitions().items()})
    return dict(sorted(out.items()))
