"""Strict decoding: the fields of an object that its kind's schema does not know.

kube-apiserver decodes a body strictly (``fieldValidation=Strict``, what kubectl sends by default) and refuses
``strict decoding error: unknown field "spec.nodeSelecter"``; with ``Warn`` or ``Ignore`` it drops the unknown
fields. This module finds those fields with one schema source for every caller (``berth simulate`` and
``berth serve``): the built-in kinds' field tables of `berth.server.protobuf_schema` (``MESSAGES``: JSON names,
maps, lists, inlined structs) and the custom kinds' structural schemas of `berth.server.openapi_crds`
(``x-kubernetes-preserve-unknown-fields`` honoured, ``metadata`` read as ObjectMeta), plus Berth's own
``Scenario`` (whose ``create`` steps hold objects of their own kinds, checked by those kinds' schemas).

Each kind's schema is compiled once into a small field tree (per object: the known names as a frozenset and the
children worth descending into); :func:`unknown_fields` walks an object with it, in document order, and names
each unknown field by its path as kube does (``spec.containers[0].resource``), with a close known name when
exactly one is close. :func:`without_unknown_fields` is the object with them dropped (copy on write).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from berth.server.openapi_crds import SCHEMAS
from berth.server.protobuf_schema import KINDS, MESSAGES

__all__ = [
    "CleanFields",
    "UnknownField",
    "has_schema",
    "strict_decoding_error",
    "unknown_fields",
    "without_unknown_fields",
]

PathPart = str | int

_OPAQUE: Final = frozenset({"RawExtension", "FieldsV1"})
"""Special types that hold arbitrary JSON (never checked)."""


class _Struct:
    """An object with a fixed set of field names; ``open`` objects also keep unknown fields."""

    __slots__ = ("children", "known", "names", "open")

    def __init__(self) -> None:
        self.known: frozenset[str] = frozenset()
        self.names: tuple[str, ...] = ()
        self.children: dict[str, _Node] = {}
        self.open = False


class _List:
    """A list whose items are checked by ``item``."""

    __slots__ = ("item",)

    def __init__(self, item: _Node) -> None:
        self.item = item


class _Map:
    """A map (string keys) whose values are checked by ``value``."""

    __slots__ = ("value",)

    def __init__(self, value: _Node) -> None:
        self.value = value


class _Embedded:
    """A whole object checked by the schema of its own apiVersion and kind (a Scenario's ``create`` items)."""

    __slots__ = ()


class _PatchStep:
    """A Scenario ``patch`` item: a reference plus a merge patch checked by the referenced kind's schema."""

    __slots__ = ()


_Node = _Struct | _List | _Map | _Embedded | _PatchStep


@dataclass(frozen=True, slots=True)
class UnknownField:
    """One field the schema does not know: its path from the object root and, when exactly one known field of
    the same object is close, that field's name (``suggestion``)."""

    path: tuple[PathPart, ...]
    suggestion: str | None = None

    @property
    def field_path(self) -> str:
        """The path as kube prints it: ``spec.containers[0].resource``."""
        return render_path(self.path)

    def __str__(self) -> str:
        """kube's strict decoding message for the field: ``unknown field "spec.nodeSelecter"``."""
        return f'unknown field "{self.field_path}"'

    def hint(self) -> str:
        """The message with Berth's did-you-mean, when there is one."""
        if self.suggestion is None:
            return str(self)
        near = render_path((*self.path[:-1], self.suggestion))
        return f'{self} (did you mean "{near}"?)'


def render_path(path: Sequence[PathPart]) -> str:
    """``("spec", "containers", 0, "resource")`` → ``spec.containers[0].resource``."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        else:
            out.append(f".{part}" if out else part)
    return "".join(out)


def strict_decoding_error(fields: Sequence[UnknownField], *, hints: bool = False) -> str:
    """apimachinery's ``strict decoding error: unknown field "a", unknown field "b"`` (with Berth's
    did-you-mean after each field when `hints`)."""
    return "strict decoding error: " + ", ".join(f.hint() if hints else str(f) for f in fields)


# --- compiling the schemas ----------------------------------------------------------------------------------

_STRUCTS: dict[str, _Struct] = {}


def _type_node(type_name: str) -> _Node | None:
    """The node of a field type of the protobuf tables (None: nothing to check inside)."""
    if type_name.startswith("[]"):
        item = _type_node(type_name[2:])
        return None if item is None else _List(item)
    if type_name.startswith("{}"):
        value = _type_node(type_name[2:])
        return None if value is None else _Map(value)
    if type_name in _OPAQUE or type_name not in MESSAGES:
        return None
    return _message(type_name)


def _message(name: str) -> _Struct:
    """The compiled node of a message of `MESSAGES` (recursive types share one node)."""
    if name in _STRUCTS:
        return _STRUCTS[name]
    node = _Struct()
    _STRUCTS[name] = node
    names: list[str] = []
    children: dict[str, _Node] = {}
    for json_name, type_name, flags in MESSAGES[name].values():
        if "i" in flags:  # an embedded struct: its fields are the parent's
            inlined = _type_node(type_name)
            if isinstance(inlined, _Struct):
                names.extend(inlined.names)
                children.update(inlined.children)
            continue
        names.append(json_name)
        child = _type_node(type_name)
        if child is not None:
            children[json_name] = child
    node.names = tuple(names)
    node.known = frozenset(names)
    node.children = children
    return node


_TYPE_META: Final = ("apiVersion", "kind")


def _builtin(message: str) -> _Struct:
    """A top-level built-in kind: its message's fields plus the inlined TypeMeta."""
    inner = _message(message)
    node = _Struct()
    node.names = (*_TYPE_META, *inner.names)
    node.known = frozenset(node.names)
    node.children = inner.children
    return node


def _schema_node(schema: Mapping[str, Any]) -> _Node | None:
    """The node of a structural (OpenAPI v3) schema (None: nothing to check inside)."""
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        node = _Struct()
        node.open = preserve
        node.names = tuple(properties)
        node.known = frozenset(node.names)
        node.children = {
            k: c for k, c in ((k, _schema_node(v)) for k, v in properties.items()) if c is not None
        }
        return node
    if preserve:
        return None
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, Mapping):
        item = _schema_node(items)
        return None if item is None else _List(item)
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        value = _schema_node(extra)
        return None if value is None else _Map(value)
    if schema.get("type") == "object" and extra is None:
        node = _Struct()  # an object with no properties: every field is unknown
        return node
    return None


def _custom(schema: Mapping[str, Any]) -> _Struct:
    """A top-level custom kind: its CRD schema plus apiVersion, kind and metadata (ObjectMeta)."""
    node = _schema_node(schema)
    assert isinstance(node, _Struct)
    meta = _message("meta.ObjectMeta")
    top = _Struct()
    top.open = node.open
    top.names = (*_TYPE_META, "metadata", *node.names)
    top.known = frozenset(top.names)
    top.children = {"metadata": meta, **node.children}
    return top


def _scenario() -> _Struct:
    """Berth's Scenario (berth.dev/v1alpha1): timed steps whose ``create`` items are objects of their own kinds
    and whose ``patch`` items are merge patches of the kind they name."""
    drain = _Struct()
    drain.names = ("node", "timeout", "force", "gracePeriodSeconds", "preferAvoidPods")
    drain.known = frozenset(drain.names)
    step = _Struct()
    step.names = ("at", "create", "delete", "patch", "drain", "cordon", "uncordon")
    step.known = frozenset(step.names)
    ref = _Struct()
    ref.names = ("apiVersion", "kind", "namespace", "name")
    ref.known = frozenset(ref.names)
    step.children = {
        "create": _List(_Embedded()),
        "delete": _List(ref),
        "patch": _List(_PatchStep()),
        "drain": _List(drain),  # a single drain object is walked as a one-item list
    }
    spec = _Struct()
    spec.names = ("until", "steps")
    spec.known = frozenset(spec.names)
    spec.children = {"steps": _List(step)}
    top = _Struct()
    meta = _message("meta.ObjectMeta")
    top.names = (*_TYPE_META, "metadata", "spec")
    top.known = frozenset(top.names)
    top.children = {"metadata": meta, "spec": spec}
    return top


_KINDS: dict[tuple[str, str], _Struct | None] = {}
_SCENARIO: Final = ("berth.dev/v1alpha1", "Scenario")


def _kind_node(api_version: str, kind: str) -> _Struct | None:
    """The compiled tree of a kind (None for a kind without a schema), compiled on first use."""
    key = (api_version, kind)
    if key in _KINDS:
        return _KINDS[key]
    node: _Struct | None = None
    if key == _SCENARIO:
        node = _scenario()
    elif key in KINDS:
        node = _builtin(KINDS[key])
    else:
        group, _, version = api_version.rpartition("/")
        schema = SCHEMAS.get((group, version, kind))
        if schema is not None:
            node = _custom(schema)
    _KINDS[key] = node
    return node


def has_schema(api_version: str, kind: str) -> bool:
    """Whether unknown fields of this kind can be found (it has a field table or a structural schema)."""
    return _kind_node(api_version, kind) is not None


# --- walking objects -----------------------------------------------------------------------------------------


def _suggestion(name: str, node: _Struct) -> str | None:
    """The one known field close to `name` (same name in another case first), else None."""
    folded = [n for n in node.names if n.lower() == name.lower()]
    if len(folded) == 1:
        return folded[0]
    close = difflib.get_close_matches(name, node.names, n=2, cutoff=0.8)
    return close[0] if len(close) == 1 else None


def _walk(node: _Node, value: Any, path: tuple[PathPart, ...], out: list[UnknownField]) -> None:
    if isinstance(node, _Struct):
        if not isinstance(value, dict):
            return
        children = node.children
        known = node.known
        for k, v in value.items():
            child = children.get(k)
            if child is not None:
                if v is not None:
                    _walk(child, v, (*path, k), out)
            elif k not in known and not node.open:
                out.append(UnknownField((*path, k), _suggestion(str(k), node)))
    elif isinstance(node, _List):
        if isinstance(value, list):
            item = node.item
            for i, v in enumerate(value):
                if v is not None:
                    _walk(item, v, (*path, i), out)
        elif isinstance(value, dict):  # a single drain step written as an object
            _walk(node.item, value, path, out)
    elif isinstance(node, _Map):
        if isinstance(value, dict):
            for k, v in value.items():
                if v is not None:
                    _walk(node.value, v, (*path, k), out)
    elif isinstance(node, _Embedded):
        if isinstance(value, dict):
            _walk_object(value, path, out)
    elif isinstance(value, dict):  # _PatchStep
        _walk_patch_step(value, path, out)


_PATCH_STEP_FIELDS: Final = ("apiVersion", "kind", "namespace", "name", "patch")
_PATCH_STEP: Final = _Struct()
_PATCH_STEP.names = _PATCH_STEP_FIELDS
_PATCH_STEP.known = frozenset(_PATCH_STEP_FIELDS)


def _walk_patch_step(value: dict[str, Any], path: tuple[PathPart, ...], out: list[UnknownField]) -> None:
    _walk(_PATCH_STEP, value, path, out)
    target = _kind_node(str(value.get("apiVersion")), str(value.get("kind")))
    patch = value.get("patch")
    if target is not None and isinstance(patch, dict):
        _walk(target, patch, (*path, "patch"), out)


def _walk_object(obj: Mapping[str, Any], path: tuple[PathPart, ...], out: list[UnknownField]) -> None:
    node = _kind_node(str(obj.get("apiVersion")), str(obj.get("kind")))
    if node is not None:
        _walk(node, obj, path, out)


_ENCODE = msgspec.json.Encoder().encode

CleanFields = set[tuple[object, bytes]]
"""Top-level fields (but metadata) found without unknown fields, by the node of their schema and their JSON
encoding (see `unknown_fields`)."""


def unknown_fields(obj: Mapping[str, Any], *, clean: CleanFields | None = None) -> list[UnknownField]:
    """The fields of `obj` its kind's schema does not know, in document order (none for a kind without a
    schema).

    `clean` is only for an object of plain JSON values (str, int, float, bool, None, list, dict with str keys,
    as msgspec decodes JSON), where the JSON encoding of a value tells it from every other value: a top-level
    field other than metadata that is in `clean` is not walked again (the many pods of a file share a spec),
    and those found without unknown fields are added to it.
    """
    out: list[UnknownField] = []
    node = _kind_node(str(obj.get("apiVersion")), str(obj.get("kind")))
    if node is None:
        return out
    if clean is None or not isinstance(obj, dict):
        _walk(node, obj, (), out)
        return out
    for k, v in obj.items():  # _walk's _Struct case, with `clean` for the fields
        child = node.children.get(k)
        if child is None:
            if k not in node.known and not node.open:
                out.append(UnknownField((k,), _suggestion(str(k), node)))
        elif v is None:
            continue
        elif k == "metadata":  # has a name of its own: never seen before
            _walk(child, v, (k,), out)
        else:
            key = (child, _ENCODE(v))
            if key not in clean:
                found = len(out)
                _walk(child, v, (k,), out)
                if len(out) == found:
                    clean.add(key)
    return out


def without_unknown_fields(obj: dict[str, Any], fields: Sequence[UnknownField]) -> dict[str, Any]:
    """`obj` with `fields` removed; containers on their paths are copied, nothing of `obj` is changed."""
    if not fields:
        return obj
    root: dict[str, Any] = dict(obj)
    copied: set[int] = {id(root)}
    for field in fields:
        parent: Any = root
        for part in field.path[:-1]:
            child = parent[part]
            if id(child) not in copied:
                child = dict(child) if isinstance(child, dict) else list(child)
                copied.add(id(child))
                parent[part] = child
            parent = child
        parent.pop(field.path[-1], None)
    return root
