"""Server-side apply (``application/apply-patch+yaml``) as kube-apiserver's field manager does it.

Pure functions over wire-form objects, modelled on structured-merge-diff's ``Updater.Apply``:

* The applied configuration is merged into the live object: maps merge, scalars are replaced, lists merge
  by their keys when they are associative (the built-in kinds' strategic-merge-patch merge keys; lists of
  scalars with the ``merge`` strategy are sets) and are otherwise atomic (custom kinds: every list).
  Maps marked ``replace`` (and label selectors) are atomic.
* Field ownership is recorded per manager in ``metadata.managedFields`` in kube's ``FieldsV1`` format
  (``f:<field>``, ``k:<json key>``, ``v:<json value>``, ``i:<index>``, ``.`` for a node that is owned
  itself and has owned children), with operation ``Apply`` for appliers.
* Fields the manager applied before and no longer applies are removed unless another manager owns them.
* Changing a field another manager owns is a conflict (409 `ApplyConflict`, worded like kube's) unless
  forced, which takes the field from the other manager.
* An object with no managedFields at all is first owned entirely by ``before-first-apply`` (operation
  Update), as kube's skip-non-applied manager does.

Not modelled: version conversion of managed sets and field validation of the applied configuration.
(Non-apply writes record their ownership through ``berth.server.fieldmanager``.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from berth.api.errors import BadRequest, StatusError
from berth.api.patches import PatchField, Schema, copy_json, smp_schema

__all__ = [
    "BEFORE_FIRST_APPLY",
    "ApplyConflict",
    "apply_schema",
    "decode_fields",
    "encode_fields",
    "field_set",
    "server_side_apply",
]

Obj = dict[str, Any]
Path = tuple[str, ...]
"""A field path as FieldsV1 path elements (``("f:spec", "f:containers", 'k:{"name":"c"}')``)."""

BEFORE_FIRST_APPLY = "before-first-apply"
"""The manager owning every field of an object first applied to without managedFields."""

_STRIPPED: frozenset[Path] = frozenset(
    {("f:apiVersion",), ("f:kind",), ("f:metadata",)}
    | {
        ("f:metadata", f"f:{name}")
        for name in (
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        )
    }
)
"""kube's strip-meta manager: paths never recorded as owned."""

_SERVER_META = ("uid", "resourceVersion", "creationTimestamp", "generation", "selfLink", "managedFields")

_ATOMIC = PatchField("replace")
_LIST_KEYS: Mapping[str, tuple[tuple[str, Any], ...]] = {
    "ports": (("containerPort", None), ("protocol", "TCP")),
    "topologySpreadConstraints": (("topologyKey", None), ("whenUnsatisfiable", None)),
}
"""Associative lists whose kube list-map keys are more than the strategic-merge-patch merge key
(with each key field's default)."""


# ---------------------------------------------------------------------------------------------- schema


def _with_atomic_selector(schema: Schema) -> Schema:
    spec = schema.get("spec")
    if spec is None:
        return schema
    fields = {**spec.fields, "selector": _ATOMIC}
    return {**schema, "spec": PatchField(spec.strategy, spec.merge_key, fields)}


def apply_schema(group: str, kind: str) -> Schema:
    """The apply schema of a kind: the strategic-merge-patch schema of a built-in kind (workload label
    selectors atomic); empty (maps granular, lists atomic) for custom kinds."""
    schema = smp_schema(group, kind)
    if schema is None:
        return {}
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"):
        return _with_atomic_selector(schema)
    return schema


def _child(f: PatchField, name: str) -> PatchField:
    return f.fields.get(name) or PatchField()


def _list_mode(f: PatchField, name: str) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """("map", keys) for an associative list, ("set", ()) for a set of scalars, ("atomic", ()) otherwise."""
    if not f.merges:
        return "atomic", ()
    if f.merge_key:
        return "map", _LIST_KEYS.get(name) or ((f.merge_key, None),)
    return "set", ()


def _item_element(item: Any, mode: str, keys: tuple[tuple[str, Any], ...]) -> str:
    if mode == "map" and isinstance(item, dict):
        key = {k: item.get(k, default) for k, default in keys if item.get(k, default) is not None}
        return "k:" + json.dumps(key, sort_keys=True, separators=(",", ":"))
    return "v:" + json.dumps(item, sort_keys=True, separators=(",", ":"))


# ---------------------------------------------------------------------------------------- field sets


def _visit(value: Any, f: PatchField, name: str, path: Path, out: set[Path]) -> None:
    if isinstance(value, dict):
        if f.replaces:
            out.add(path)
            return
        for k, v in value.items():
            _visit(v, _child(f, k), k, (*path, f"f:{k}"), out)
    elif isinstance(value, list):
        mode, keys = _list_mode(f, name)
        if mode == "atomic":
            out.add(path)
            return
        for item in value:
            item_path = (*path, _item_element(item, mode, keys))
            out.add(item_path)
            if mode == "map" and isinstance(item, dict):
                for k, v in item.items():
                    _visit(v, _child(f, k), k, (*item_path, f"f:{k}"), out)
    else:
        out.add(path)


def _leaf_paths(obj: Mapping[str, Any], schema: Schema) -> set[Path]:
    out: set[Path] = set()
    _visit(dict(obj), PatchField(fields=schema), "", (), out)
    return out


def field_set(obj: Mapping[str, Any], schema: Schema, *, status: bool = False) -> set[Path]:
    """The paths `obj` sets (leaves, list items, atomic values), kube's stripped metadata excluded; only
    the status (``status=True``) or everything but it."""
    out = _leaf_paths(obj, schema)
    return {p for p in out if p not in _STRIPPED and (p[:1] == ("f:status",)) == status}


def _element_key(element: str) -> tuple[int, str]:
    return ("fkvi".find(element[0]) if element != "." else -1, element)


def encode_fields(paths: Iterable[Path]) -> Obj:
    """A set of paths as a FieldsV1 tree (``.`` marks a member that also has members below it)."""
    tree: Obj = {}
    members: set[Path] = set(paths)
    for path in sorted(members):
        node = tree
        for element in path:
            node = node.setdefault(element, {})

    def mark(node: Obj, path: Path) -> Obj:
        out: Obj = {}
        if node and path in members:
            out["."] = {}
        for element in sorted(node, key=_element_key):
            out[element] = mark(node[element], (*path, element))
        return out

    return mark(tree, ())


def decode_fields(tree: Any) -> set[Path]:
    """The set of paths of a FieldsV1 tree."""
    out: set[Path] = set()

    def walk(node: Any, path: Path) -> None:
        if not isinstance(node, dict):
            return
        if path and (not node or "." in node):
            out.add(path)
        for element, child in node.items():
            if element != ".":
                walk(child, (*path, element))

    walk(tree, ())
    return out


def _path_string(path: Path) -> str:
    """structured-merge-diff's ``Path.String()``: ``.spec.containers[name="c"].image``."""
    parts: list[str] = []
    for element in path:
        kind, text = element[0], element[2:]
        if kind == "f":
            parts.append("." + text)
        elif kind == "k":
            key = json.loads(text)
            parts.append("[" + ",".join(f"{k}={json.dumps(key[k])}" for k in sorted(key)) + "]")
        elif kind == "v":
            parts.append(f"[={text}]")
        else:
            parts.append(f"[{text}]")
    return "".join(parts)


# ------------------------------------------------------------------------------------------ navigation

_MISSING = object()


def _step(node: Any, element: str, f: PatchField, name: str) -> tuple[Any, int | str | None]:
    """The child of `node` an element names and its index or key in `node` (_MISSING when absent)."""
    kind, text = element[0], element[2:]
    if kind == "f":
        if isinstance(node, dict) and text in node:
            return node[text], text
        return _MISSING, None
    if not isinstance(node, list):
        return _MISSING, None
    if kind == "i":
        idx = int(text)
        return (node[idx], idx) if 0 <= idx < len(node) else (_MISSING, None)
    _, keys = _list_mode(f, name)
    for i, item in enumerate(node):
        if _item_element(item, "map" if kind == "k" else "set", keys) == element:
            return item, i
    return _MISSING, None


def _resolve(obj: Any, path: Path, schema: Schema) -> Any:
    node, f, name = obj, PatchField(fields=schema), ""
    for element in path:
        node, _ = _step(node, element, f, name)
        if node is _MISSING:
            return _MISSING
        if element.startswith("f:"):
            name = element[2:]
            f = _child(f, name)
    return node


def _is_key_field(path: Path) -> bool:
    """Whether `path` is a key field of an associative-list item (removed only with its item)."""
    if len(path) < 2 or not path[-2].startswith("k:"):
        return False
    return path[-1][2:] in json.loads(path[-2][2:])


def _remove(obj: Obj, path: Path, schema: Schema, keep: set[Path]) -> None:
    """Remove the value at `path` from `obj`; containers it leaves empty go too unless owned."""
    trail: list[tuple[Any, int | str]] = []
    node: Any = obj
    f, name = PatchField(fields=schema), ""
    for element in path:
        child, where = _step(node, element, f, name)
        if child is _MISSING or where is None:
            return
        trail.append((node, where))
        node = child
        if element.startswith("f:"):
            name = element[2:]
            f = _child(f, name)
    for depth in range(len(trail) - 1, -1, -1):
        container, where = trail[depth]
        del container[where]
        if container or depth == 0 or path[:depth] in keep:
            return


# -------------------------------------------------------------------------------------------- merging


def _merge(live: Any, applied: Any, f: PatchField, name: str) -> Any:
    if isinstance(live, dict) and isinstance(applied, dict) and not f.replaces:
        out = dict(live)
        for k, v in applied.items():
            out[k] = _merge(live[k], v, _child(f, k), k) if k in live else copy_json(v)
        return out
    if isinstance(live, list) and isinstance(applied, list):
        mode, keys = _list_mode(f, name)
        if mode != "atomic":
            return _merge_list(live, applied, f, mode, keys)
    return copy_json(applied)


def _merge_list(
    live: list[Any], applied: list[Any], f: PatchField, mode: str, keys: tuple[tuple[str, Any], ...]
) -> list[Any]:
    """structured-merge-diff's associative-list merge: applied items in applied order, live-only items
    kept in place between them."""
    lhs = [(_item_element(v, mode, keys), v) for v in live]
    rhs = [(_item_element(v, mode, keys), v) for v in applied]
    lhs_by = dict(lhs)
    rhs_by = dict(rhs)
    shared = [e for e, _ in rhs if e in lhs_by]
    out: list[Any] = []
    merged: set[str] = set()

    def item(element: str) -> Any:
        if element in lhs_by and mode == "map":
            return _merge(lhs_by[element], rhs_by[element], f, "")
        return copy_json(rhs_by[element])

    li = ri = 0
    while li < len(lhs) or ri < len(rhs):
        if li < len(lhs) and ri < len(rhs):
            element = lhs[li][0]
            if element == rhs[ri][0]:
                merged.add(element)
                out.append(item(element))
                li += 1
                ri += 1
                if shared and shared[0] == element:
                    shared.pop(0)
                continue
            if element in rhs_by and shared and shared[0] != element:
                li += 1
                continue
        if li < len(lhs):
            element = lhs[li][0]
            if element not in rhs_by:
                out.append(copy_json(lhs[li][1]))
                li += 1
                continue
            if element in merged:
                li += 1
                continue
        if ri < len(rhs):
            element = rhs[ri][0]
            merged.add(element)
            out.append(item(element))
            ri += 1
            if shared and shared[0] == element:
                shared.pop(0)
    return out


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


# ------------------------------------------------------------------------------------------ conflicts


class ApplyConflict(StatusError):
    """409 Conflict of an apply changing fields other managers own, worded as kube's NewApplyConflict."""

    reason = "Conflict"
    code = 409

    def __init__(self, conflicts: list[tuple[str, Path]]) -> None:
        """`conflicts` are (printed manager, path) pairs."""
        self.conflicts = conflicts
        if len(conflicts) == 1:
            manager, path = conflicts[0]
            message = f"Apply failed with 1 conflict: conflict with {manager}: {_path_string(path)}"
        else:
            lines: list[str] = []
            for manager in sorted({m for m, _ in conflicts}):
                lines.append(f"conflicts with {manager}:")
                lines.extend(f"- {_path_string(p)}" for m, p in conflicts if m == manager)
            message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
        super().__init__(message)

    def details(self) -> dict[str, Any]:
        """StatusDetails with one FieldManagerConflict cause per conflicting field."""
        return {
            "causes": [
                {"reason": "FieldManagerConflict", "message": f"conflict with {m}", "field": _path_string(p)}
                for m, p in self.conflicts
            ]
        }


def _print_manager(entry: Mapping[str, Any]) -> str:
    name = json.dumps(str(entry.get("manager") or ""))
    if entry.get("operation") == "Update":
        return f"{name} using {entry.get('apiVersion') or ''}"
    return name


# ------------------------------------------------------------------------------------------------ apply

_Identity = tuple[str, str, str, str]


def _identity(entry: Mapping[str, Any]) -> _Identity:
    operation = str(entry.get("operation") or "")
    version = "" if operation == "Apply" else str(entry.get("apiVersion") or "")
    return (str(entry.get("manager") or ""), operation, version, str(entry.get("subresource") or ""))


def _sort_entries(entries: list[Obj]) -> list[Obj]:
    """kube's order of managedFields entries: by operation, time, manager, apiVersion, subresource."""
    return sorted(
        entries,
        key=lambda e: (
            str(e.get("operation") or ""),
            str(e.get("time") or ""),
            str(e.get("manager") or ""),
            str(e.get("apiVersion") or ""),
            str(e.get("subresource") or ""),
        ),
    )


def _prepared(applied: Obj, status: bool) -> Obj:
    meta = applied.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise BadRequest("metadata.managedFields must be nil")
    out: Obj = _drop_nulls(applied)
    out["metadata"] = {k: v for k, v in (out.get("metadata") or {}).items() if k not in _SERVER_META}
    if status:
        return {k: v for k, v in out.items() if k in ("apiVersion", "kind", "metadata", "status")}
    out.pop("status", None)
    return out


def server_side_apply(
    live: Obj | None,
    applied: Obj,
    *,
    schema: Schema,
    manager: str,
    force: bool,
    now: str,
    subresource: str = "",
) -> tuple[Obj, bool]:
    """Apply `applied` (apiVersion, kind and metadata.name/namespace already checked) for `manager`.

    Returns the object to write (the new object when `live` is None) with its managedFields, and whether
    anything changed (False: `live` as it is). Raises `ApplyConflict` when other managers own changed
    fields and `force` is false; BadRequest when the configuration carries managedFields.
    """
    on_status = subresource == "status"
    config = _prepared(applied, on_status)
    api_version = str(config.get("apiVersion") or "")
    me: Obj = {"manager": manager, "operation": "Apply", "apiVersion": api_version, "time": now}
    if subresource:
        me["subresource"] = subresource
    mine = field_set(config, schema, status=on_status)
    if live is None:
        created = copy_json(config)
        me.update(fieldsType="FieldsV1", fieldsV1=encode_fields(mine))
        created["metadata"]["managedFields"] = [me]
        return created, True

    entries: list[Obj] = [dict(e) for e in live.get("metadata", {}).get("managedFields") or []]
    sets: dict[_Identity, set[Path]] = {_identity(e): decode_fields(e.get("fieldsV1")) for e in entries}
    if not entries:
        first: Obj = {
            "manager": BEFORE_FIRST_APPLY,
            "operation": "Update",
            "apiVersion": str(live.get("apiVersion") or ""),
            "time": now,
        }
        entries = [first]
        sets = {_identity(first): field_set(live, schema)}
    my_id = _identity(me)
    last = sets.pop(my_id, set())
    entries = [e for e in entries if _identity(e) != my_id]
    before = {k: set(v) for k, v in sets.items()}

    body = {k: v for k, v in config.items() if k != "metadata"}
    root = PatchField(fields=schema)
    merged: Obj = _merge(copy_json({k: v for k, v in live.items() if k != "metadata"}), body, root, "")
    live_meta = {k: v for k, v in live.get("metadata", {}).items() if k != "managedFields"}
    merged["metadata"] = _merge(
        copy_json(live_meta), config["metadata"], _child(root, "metadata"), "metadata"
    )

    others: set[Path] = set().union(*sets.values()) if sets else set()
    keep = mine | others
    for path in sorted(last - keep, key=lambda p: (len(p), p)):
        if not _is_key_field(path) and not any(p[: len(path)] == path and p != path for p in keep):
            _remove(merged, path, schema, keep)

    values = _leaf_paths(merged, schema)
    conflicts: list[tuple[str, Path]] = []
    by_id = {_identity(e): e for e in entries}
    for ident, owned in sets.items():
        for path in sorted(owned, key=lambda p: [_element_key(e) for e in p]):
            new = _resolve(merged, path, schema)
            if new is _MISSING:
                continue
            old = _resolve(live, path, schema)
            if old is _MISSING or (path in values and path[-1].startswith("f:") and old != new):
                conflicts.append((_print_manager(by_id[ident]), path))
                owned.discard(path)
    if conflicts and not force:
        raise ApplyConflict(conflicts)
    for owned in sets.values():
        for path in [p for p in owned if _resolve(merged, p, schema) is _MISSING]:
            owned.discard(path)

    out_entries: list[Obj] = []
    for entry in entries:
        owned = sets[_identity(entry)]
        if not owned:
            continue
        if owned != before[_identity(entry)] or "fieldsV1" not in entry:
            entry.update(fieldsType="FieldsV1", fieldsV1=encode_fields(owned))
        out_entries.append(entry)
    live_entries = live.get("metadata", {}).get("managedFields") or []
    previous = next((e for e in live_entries if _identity(e) == my_id), None)
    unchanged = (
        merged == {**live, "metadata": live_meta}
        and previous is not None
        and decode_fields(previous.get("fieldsV1")) == mine
        and len(out_entries) + 1 == len(live_entries)
        and all(sets[_identity(e)] == before[_identity(e)] for e in out_entries)
    )
    if unchanged:
        return live, False
    if mine:
        me.update(fieldsType="FieldsV1", fieldsV1=encode_fields(mine))
        out_entries.append(me)
    merged["metadata"]["managedFields"] = _sort_entries(out_entries)
    return merged, True
