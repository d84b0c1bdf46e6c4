"""``metadata.managedFields`` of non-apply writes made through the API, as kube-apiserver's field manager
records them (``k8s.io/apimachinery/pkg/util/managedfields``; server-side apply is `berth.api.apply`).

A create, update or patch (JSON merge, JSON, strategic merge) by manager *m* compares the object before and
after the write, field by field (structured-merge-diff's ``Compare``: maps by key, associative lists by item
key, atomic values as one leaf), and records an ``Update`` entry for *m*, its ``apiVersion`` and its
``subresource``: the fields it added or changed, joined to what the same entry owned before. Every other
entry loses the fields this write changed or removed, and an entry left with nothing goes. As kube does:

* The manager is ``?fieldManager=`` or, without it, the User-Agent up to its first ``/`` (kubectl's
  ``kubectl/v1.32.4 (linux/amd64) ...`` gives ``kubectl``; kubectl sends ``fieldManager=kubectl-create``,
  ``kubectl-label``, ``kubectl-patch``, ... itself), ``unknown`` when both are empty.
* A create is compared with the kind's empty object (Go's zero value for the built-in kinds, so maps that
  always exist there, like ``spec``, are not owned themselves, and an empty object for custom kinds); an
  update of an object without managedFields records nothing (kube's skip-non-applied manager), so objects
  Berth's own components write stay without them. ``managedFields: []`` (or ``[{}]``) in the request clears
  them; otherwise valid managedFields in the request replace the stored ones as the starting point.
* The status of a kind with a status subresource is not recorded by writes to the main resource; a status
  write records only the status, as its own entry with ``subresource: status``. A ``scale`` write records
  ``spec.replicas`` for its manager (``subresource: scale``, no ``time``, as kube's ScaleHandler leaves it).
* The name, namespace, uid, resourceVersion, generation, creationTimestamp, managedFields, apiVersion and
  kind are never recorded; an entry's ``time`` is renewed only when its manager changed something; beyond
  ten ``Update`` entries the oldest are merged into ``ancient-changes``.

This runs on every write, so it is kept cheap without changing what it records: a create whose request brings
no managedFields is written straight to FieldsV1 as its object is walked; other writes compare only what they
record, skip the top-level (and metadata) fields that are the same JSON on both sides, and keep the FieldsV1
trees of the entries they do not change (when in the form written here), decoding only those they change.

Not modelled: kube's defaulting (its managedFields also list the defaults applied when a body is decoded, such
as a container's ``imagePullPolicy``), version conversion of entries and the admission-time validation of a
request's managedFields beyond decoding them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from operator import itemgetter
from typing import Any

import msgspec

from berth.api.apply import (
    _STRIPPED,
    Path,
    _child,
    _element_key,
    _item_element,
    _list_mode,
    _sort_entries,
    decode_fields,
)
from berth.api.patches import PatchField, Schema

__all__ = [
    "FIELD_MANAGER_MAX_LENGTH",
    "MAX_UPDATE_MANAGERS",
    "manager_or_user_agent",
    "prefix_from_user_agent",
    "record_scale",
    "record_update",
    "validate_field_manager",
]

Obj = dict[str, Any]

FIELD_MANAGER_MAX_LENGTH = 128
"""apimachinery's ``FieldManagerMaxLength`` (bytes)."""
MAX_UPDATE_MANAGERS = 10
"""kube's ``DefaultMaxUpdateManagers``: more ``Update`` entries than this are merged into ``ancient-changes``."""
_ANCIENT = "ancient-changes"
_REPLICAS: Path = ("f:spec", "f:replicas")
_MISSING: Any = object()

_POD_SPEC: Obj = {"containers": None}
_TEMPLATE: Obj = {"metadata": {"creationTimestamp": None}, "spec": _POD_SPEC}
_ZERO: Mapping[tuple[str, str], Obj] = {
    ("", "Pod"): {"spec": _POD_SPEC, "status": {}},
    ("", "Node"): {"spec": {}, "status": {}},
    ("", "Namespace"): {"spec": {}, "status": {}},
    ("", "Event"): {
        "involvedObject": {},
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "eventTime": None,
        "reportingComponent": "",
        "reportingInstance": "",
    },
    ("scheduling.k8s.io", "PriorityClass"): {"value": 0},
    ("policy", "PodDisruptionBudget"): {"spec": {}, "status": {}},
    ("apps", "ReplicaSet"): {"spec": {"selector": None, "template": _TEMPLATE}, "status": {}},
    ("apps", "Deployment"): {
        "spec": {"selector": None, "template": _TEMPLATE, "strategy": {}},
        "status": {},
    },
    ("coordination.k8s.io", "Lease"): {"spec": {}},
}
"""The fields Go's zero value of each built-in kind serializes (``metadata`` aside): what a create is compared
with. Custom kinds start from nothing, as kube's unstructured objects do."""


# ------------------------------------------------------------------------------------------- managers


def prefix_from_user_agent(user_agent: str) -> str:
    """kube's ``prefixFromUserAgent``: the User-Agent up to its first ``/``, without unprintable characters,
    cut to 128 bytes."""
    prefix = user_agent.split("/", 1)[0]
    if prefix.isascii() and prefix.isprintable():  # a byte a character, nothing to drop
        return prefix[:FIELD_MANAGER_MAX_LENGTH]
    out = ""
    size = 0
    for ch in prefix:
        if not ch.isprintable():
            continue
        n = len(ch.encode())
        if size + n > FIELD_MANAGER_MAX_LENGTH:
            break
        out += ch
        size += n
    return out


def manager_or_user_agent(manager: str, user_agent: str) -> str:
    """The manager of a non-apply write: ``fieldManager`` when given, else the User-Agent's program name."""
    return manager or prefix_from_user_agent(user_agent)


_GO_ESCAPES = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t", "\v": r"\v"}


def _go_quote(text: str) -> str:
    """Go's ``strconv.Quote``."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def validate_field_manager(manager: str, path: str = "fieldManager") -> list[tuple[str, str]]:
    """apimachinery's ``ValidateFieldManager``: (field, message) causes for a manager longer than 128 bytes
    or with unprintable characters (positions in bytes, as Go ranges over a string)."""
    causes: list[tuple[str, str]] = []
    if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        causes.append((path, f"Too long: may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"))
    position = 0
    for ch in manager:
        if not ch.isprintable():
            causes.append(
                (
                    path,
                    f"Invalid value: {_go_quote(manager)}: invalid character U+{ord(ch):04X} "
                    f"(at position {position})",
                )
            )
        position += len(ch.encode())
    return causes


# -------------------------------------------------------------------------------------------- compare

_NO_SCHEMA = PatchField()
"""The schema of a field the kind's schema does not describe (maps granular, lists atomic)."""
_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None)})
"""The types of JSON's scalar values: a leaf wherever it is."""
_DUPLICATE: Any = object()
_encode_json = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
"""``json.dumps(value, sort_keys=True, separators=(",", ":"))``, as `berth.api.apply` spells item keys."""
_encode_string = json.encoder.encode_basestring_ascii
_MODES: dict[tuple[str, str, str], tuple[str, tuple[tuple[str, str, Any], ...]]] = {}


def _mode(f: PatchField, name: str) -> tuple[str, tuple[tuple[str, str, Any], ...]]:
    """`berth.api.apply`'s list mode of the list field `name` with schema `f` (cached by the schema's
    strategy and merge key, which decide it), its item key fields in JSON key order, each with its
    JSON-encoded name and default."""
    cache_key = (f.strategy, f.merge_key, name)
    found = _MODES.get(cache_key)
    if found is None:
        mode, keys = _list_mode(f, name)
        found = _MODES[cache_key] = (mode, tuple((k, _encode_string(k), d) for k, d in sorted(keys)))
    return found


def _scalar_json(value: Any) -> str | None:
    """The JSON text of a string, integer or boolean (None for anything else)."""
    kind = type(value)
    if kind is str:
        return _encode_string(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    return None


def _element(item: Any, mode: str, keys: tuple[tuple[str, str, Any], ...]) -> str:
    """`berth.api.apply`'s path element of a list item (``k:`` its key fields as JSON for an associative
    list, ``v:`` its JSON value otherwise), without a JSON encoder for string, integer and boolean keys."""
    if mode == "map" and isinstance(item, dict):
        parts: list[str] = []
        for key, encoded, default in keys:
            value = item.get(key, default)
            if value is None:
                continue
            text = _scalar_json(value)
            if text is None:
                return _item_element(item, mode, tuple((k, d) for k, _, d in keys))
            parts.append(f"{encoded}:{text}")
        return "k:{" + ",".join(parts) + "}"
    text = _scalar_json(item)
    return "v:" + (_encode_json(item) if text is None else text)


def _group(items: list[Any], mode: str, keys: tuple[tuple[str, str, Any], ...]) -> dict[str, Any]:
    """A list's items by path element (in order of first appearance); `_DUPLICATE` for an element more
    than one item has."""
    out: dict[str, Any] = {}
    for item in items:
        element = _element(item, mode, keys)
        out[element] = _DUPLICATE if element in out else item
    return out


def _equal(a: Any, b: Any) -> bool:
    """JSON equality (``True`` is not ``1``)."""
    if a != b:
        return False
    return type(a) is type(b) or json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _maps(lhs: Any, rhs: Any) -> bool:
    """Both present values maps or nulls (`_compare` walks them as maps when one is a map)."""
    return (lhs is None or isinstance(lhs, dict)) and (rhs is None or isinstance(rhs, dict))


def _lists(lhs: Any, rhs: Any) -> bool:
    """Both present values lists or nulls."""
    return (lhs is None or isinstance(lhs, list)) and (rhs is None or isinstance(rhs, list))


def _replaces(f: PatchField) -> bool:
    return bool(f.strategy) and f.replaces


def _one_side(value: Any, f: PatchField, name: str, path: Path, out: set[Path]) -> None:
    """structured-merge-diff's compare walker over a node present on one side only: `path` and every
    path below it go to `out` (the added or the removed paths)."""
    if isinstance(value, dict):
        if value and not _replaces(f):
            _one_side_fields(value, f, path, out)
            if path:
                out.add(path)
            return
    elif isinstance(value, list) and value:
        mode, keys = _mode(f, name)
        if mode != "atomic":
            for element, item in _group(value, mode, keys).items():
                item_path = (*path, element)
                if mode == "map" and item is not _DUPLICATE and isinstance(item, dict):
                    _one_side_fields(item, f, item_path, out)
                out.add(item_path)
            if path:
                out.add(path)
            return
    out.add(path)


def _one_side_fields(value: Obj, f: PatchField, path: Path, out: set[Path]) -> None:
    """`_one_side` over the fields of a map (or of an associative list's item) with schema `f`."""
    fields = f.fields
    for key, child in value.items():
        child_path = (*path, f"f:{key}")
        if type(child) in _SCALARS:
            out.add(child_path)
        else:
            _one_side(child, fields.get(key) or _NO_SCHEMA, key, child_path, out)


def _compare(
    lhs: Any, rhs: Any, f: PatchField, name: str, path: Path, changed: set[Path], removed: set[Path]
) -> None:
    """structured-merge-diff's compare walker over one node (`lhs` or `rhs` _MISSING when absent there):
    leaves are added or modified (`changed`) or `removed`; a map or associative list present on one side
    only is itself added or removed, with everything below it; a null against a non-empty map (or list)
    compares as an empty one, the node itself not changing."""
    if lhs is _MISSING:
        _one_side(rhs, f, name, path, changed)
        return
    if rhs is _MISSING:
        _one_side(lhs, f, name, path, removed)
        return
    if isinstance(lhs, dict) or isinstance(rhs, dict):
        if _maps(lhs, rhs) and not _replaces(f) and (lhs or rhs):
            _compare_fields(lhs or {}, rhs or {}, f, path, changed, removed)
            return
    elif (isinstance(lhs, list) or isinstance(rhs, list)) and _lists(lhs, rhs) and (lhs or rhs):
        mode, keys = _mode(f, name)
        if mode != "atomic":
            _compare_items(lhs or [], rhs or [], f, mode, keys, path, changed, removed)
            return
    if not _equal(lhs, rhs):
        changed.add(path)


def _compare_fields(
    lhs: Obj, rhs: Obj, f: PatchField, path: Path, changed: set[Path], removed: set[Path]
) -> None:
    """`_compare` over the fields of two maps (or of two items of an associative list) with schema `f`."""
    fields = f.fields
    for key, left in lhs.items():
        right = rhs.get(key, _MISSING)
        if type(left) in _SCALARS and type(right) in _SCALARS:
            if left != right or (type(left) is not type(right) and not _equal(left, right)):
                changed.add((*path, f"f:{key}"))
        else:
            _compare(left, right, fields.get(key) or _NO_SCHEMA, key, (*path, f"f:{key}"), changed, removed)
    for key, right in rhs.items():
        if key not in lhs:
            child_path = (*path, f"f:{key}")
            if type(right) in _SCALARS:
                changed.add(child_path)
            else:
                _one_side(right, fields.get(key) or _NO_SCHEMA, key, child_path, changed)


def _compare_items(
    lhs: list[Any],
    rhs: list[Any],
    f: PatchField,
    mode: str,
    keys: tuple[tuple[str, str, Any], ...],
    path: Path,
    changed: set[Path],
    removed: set[Path],
) -> None:
    """`_compare` over the items of two associative lists or sets, matched by path element: an element
    several items have on both sides is a leaf (modified unless the items are equal), on one side only
    added or removed (whatever the other side has)."""
    left_items, right_items = _group(lhs, mode, keys), _group(rhs, mode, keys)
    for element, left in left_items.items():
        item_path = (*path, element)
        right = right_items.get(element, _MISSING)
        if right is _MISSING:
            if mode == "map" and left is not _DUPLICATE and isinstance(left, dict):
                _one_side_fields(left, f, item_path, removed)
            removed.add(item_path)
        elif left is _DUPLICATE:
            if right is not _DUPLICATE:
                removed.add(item_path)
            elif not _equal(_with_element(lhs, element, mode, keys), _with_element(rhs, element, mode, keys)):
                changed.add(item_path)
        elif right is _DUPLICATE:
            changed.add(item_path)
        elif mode == "map" and isinstance(left, dict) and isinstance(right, dict):
            _compare_fields(left, right, f, item_path, changed, removed)
        elif not _equal(left, right):
            changed.add(item_path)
    for element, right in right_items.items():
        if element not in left_items:
            item_path = (*path, element)
            if mode == "map" and right is not _DUPLICATE and isinstance(right, dict):
                _one_side_fields(right, f, item_path, changed)
            changed.add(item_path)


def _with_element(
    items: list[Any], element: str, mode: str, keys: tuple[tuple[str, str, Any], ...]
) -> list[Any]:
    """The items of a list whose path element is `element`, in order."""
    return [item for item in items if _element(item, mode, keys) == element]


_strict_json = json.JSONEncoder(allow_nan=False).encode
_fast_json = msgspec.json.encode


def _same(a: Any, b: Any) -> bool:
    """Whether two values are the same JSON, scalar types included, so that `_compare` finds nothing between
    them: equal, and with equal JSON texts without NaN or infinities (a NaN is not equal to itself there).
    msgspec writes the texts, unless there is a ``null`` (it writes NaN and infinities so too)."""
    if a != b:
        return False
    try:
        text = _fast_json(a)
        if b"null" in text:
            return bool(_strict_json(a) == _strict_json(b))
        return text == _fast_json(b)
    except (TypeError, ValueError, OverflowError, msgspec.MsgspecError):
        return False


def _compare_top(
    lhs: Obj, rhs: Obj, f: PatchField, path: Path, changed: set[Path], removed: set[Path]
) -> None:
    """`_compare` of two objects' top-level fields or metadata (maps with schema `f`, not replaced): a map or
    list that is the `_same` on both sides, as most of an update's are, is not walked."""
    fields = f.fields
    for key, left in lhs.items():
        right = rhs.get(key, _MISSING)
        if right is not _MISSING and type(left) not in _SCALARS and _same(left, right):
            continue
        _compare(left, right, fields.get(key) or _NO_SCHEMA, key, (*path, f"f:{key}"), changed, removed)
    for key, right in rhs.items():
        if key not in lhs:
            _one_side(right, fields.get(key) or _NO_SCHEMA, key, (*path, f"f:{key}"), changed)


# ------------------------------------------------------------------------------------------- entries

_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}
"""FieldsV1 order of path elements by their first character (`berth.api.apply`'s ``_element_key``; any
other character ranks first, -1)."""
_IN_ORDER = frozenset("fkv")
"""First characters of the path elements that plain string order already sorts as FieldsV1 does."""


def _encode_fields(paths: set[Path]) -> Obj:
    """`berth.api.apply.encode_fields` in one pass over the sorted paths: a member's extensions follow it,
    so it gets its ``.`` before its first child; children come in FieldsV1 order (``f:``, ``k:``, ``v:``,
    ``i:``, each by text) as plain order gives it unless a node has other elements, which is re-sorted."""
    out: Obj = {}
    resort: dict[int, Obj] = {}
    previous: Path | None = None
    previous_node = out
    for path in sorted(paths):
        if previous is not None and path[: len(previous)] == previous:
            previous_node["."] = {}
        node = out
        for element in path:
            child = node.get(element)
            if child is None:
                if element[0] not in _IN_ORDER:
                    resort[id(node)] = node
                child = node[element] = {}
            node = child
        previous, previous_node = path, node
    for node in resort.values():
        children = sorted(((k, v) for k, v in node.items() if k != "."), key=lambda kv: _element_key(kv[0]))
        dot = "." in node
        node.clear()
        if dot:
            node["."] = {}
        node.update(children)
    return out


def _canonical(tree: Any, root: bool = True) -> bool:
    """Whether a FieldsV1 tree is exactly what `_encode_fields` makes of the paths `decode_fields` reads
    from it: every value a map, a member with children marked by a leading ``"." : {}`` (never the root, nor
    a node without children), the other elements non-empty strings in FieldsV1 order."""
    if type(tree) is not dict:
        return False
    previous_rank, previous = -2, ""
    for key, child in tree.items():
        if type(child) is not dict:
            return False
        if key == ".":
            if previous_rank != -2 or root or child or len(tree) == 1:
                return False
            previous_rank = -1
            continue
        if type(key) is not str or not key:
            return False
        rank = _RANK.get(key[0], -1)
        if rank < previous_rank or (rank == previous_rank and key <= previous):
            return False
        if child and not _canonical(child, False):
            return False
        previous_rank, previous = rank, key
    return True


def _tree_has(tree: Obj, path: Path) -> bool:
    """Whether `decode_fields` reads `path` (no ``.`` element) from the `_canonical` tree `tree`."""
    node: Any = tree
    for element in path:
        node = node.get(element)
        if node is None:
            return False
    return not node or "." in node


class _Entry:
    """One decoded managedFields entry: its identity fields, time and field set.

    An entry read from a FieldsV1 tree in `_encode_fields`'s form keeps the tree and decodes it only when
    its set is wanted (`fields`); until its set is changed it encodes to that tree, shared, not copied.
    """

    __slots__ = ("_fields", "_tree", "api_version", "manager", "operation", "subresource", "time")

    def __init__(
        self,
        manager: str,
        operation: str,
        api_version: str,
        subresource: str,
        time: Any,
        fields: set[Path] | None,
        tree: Obj | None = None,
    ) -> None:
        self.manager = manager
        self.operation = operation
        self.api_version = api_version
        self.subresource = subresource
        self.time = time
        self._fields = fields
        self._tree = tree

    @property
    def fields(self) -> set[Path]:
        """The paths the entry owns."""
        if self._fields is None:
            self._fields = decode_fields(self._tree)
        return self._fields

    @fields.setter
    def fields(self, paths: set[Path]) -> None:
        self._fields = paths
        self._tree = None

    def owns_any(self, paths: set[Path]) -> bool:
        """Whether the entry owns one of `paths` (none with a ``.`` element)."""
        tree = self._tree
        if tree is None:
            return not self.fields.isdisjoint(paths)
        return any(_tree_has(tree, path) for path in paths)

    def __bool__(self) -> bool:
        """Whether the entry owns anything."""
        return bool(self._tree) if self._tree is not None else bool(self._fields)

    @property
    def identity(self) -> tuple[str, str, str, str]:
        version = "" if self.operation == "Apply" else self.api_version
        return (self.manager, self.operation, version, self.subresource)

    def encode(self) -> Obj:
        out: Obj = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time is not None:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = self._tree if self._tree is not None else _encode_fields(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def _decode(entries: Any) -> dict[tuple[str, str, str, str], _Entry] | None:
    """kube's ``DecodeManagedFields``: None when an entry is not valid (its operation, apiVersion, fieldsType)."""
    if not isinstance(entries, list):
        return None
    out: dict[tuple[str, str, str, str], _Entry] = {}
    for raw in entries:
        if not isinstance(raw, dict):
            return None
        operation = raw.get("operation")
        api_version = raw.get("apiVersion")
        fields_v1 = raw.get("fieldsV1", {})
        if operation not in ("Apply", "Update") or not isinstance(api_version, str) or not api_version:
            return None
        if raw.get("fieldsType") != "FieldsV1" or not isinstance(fields_v1, dict | None):
            return None
        tree = fields_v1 or {}
        canonical = _canonical(tree)
        entry = _Entry(
            str(raw.get("manager") or ""),
            str(operation),
            api_version,
            str(raw.get("subresource") or ""),
            raw.get("time"),
            None if canonical else decode_fields(tree),
            tree if canonical else None,
        )
        out[entry.identity] = entry
    return out


def _is_reset(entries: Any) -> bool:
    """kube's ``isResetManagedFields``: ``[]`` or ``[{}]`` in a request clears managedFields."""
    return isinstance(entries, list) and (entries == [] or entries == [{}])


def _encode(managed: Mapping[tuple[str, str, str, str], _Entry]) -> list[Obj]:
    return _sort_entries([e.encode() for e in managed.values() if e])


def _cap(managed: dict[tuple[str, str, str, str], _Entry]) -> None:
    """kube's cap-managers manager: the oldest ``Update`` entries beyond ten merge into ``ancient-changes``
    (one per apiVersion), which takes the time of the last entry merged into it."""
    updaters = [ident for ident, e in managed.items() if e.operation == "Update"]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda ident: (str(managed[ident].time or ""), _identity_json(managed[ident])))
    first: dict[str, tuple[str, str, str, str]] = {}
    length = len(updaters)
    for ident in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        entry = managed[ident]
        bucket = (_ANCIENT, "Update", entry.api_version, "")
        if entry.api_version not in first:
            first[entry.api_version] = ident
            continue
        if bucket not in managed:
            moved = managed.pop(first[entry.api_version])
            managed[bucket] = _Entry(_ANCIENT, "Update", entry.api_version, "", moved.time, moved.fields)
        ancient = managed[bucket]
        ancient.fields = ancient.fields | entry.fields
        ancient.time = entry.time
        del managed[ident]
        length -= 1


def _identity_json(entry: _Entry) -> str:
    """kube's ``BuildManagerIdentifier``: the entry's identity as compact JSON (the tie-break of `_cap`)."""
    doc: Obj = {"manager": entry.manager, "operation": entry.operation}
    if entry.operation != "Apply":
        doc["apiVersion"] = entry.api_version
    if entry.subresource:
        doc["subresource"] = entry.subresource
    return json.dumps(doc, separators=(",", ":"))


# --------------------------------------------------------------------------------------------- create


class _Fallback(Exception):
    """A create `_created_fields` leaves to the general comparison: a map with keys that are not strings
    (two could give the same path element), a list in the zero object."""


def _created_fields(zero: Obj, new: Obj, meta: Obj, root: PatchField) -> Obj:
    """The FieldsV1 tree of a create without entries to take fields from: what `record_update`'s comparison
    of `new` with the kind's zero object records (kube's stripped paths left out), written as the walk goes.
    What `new` has and `zero` lacks is added with everything below it, in FieldsV1 order; where both have a
    field the comparison goes on as `_compare` does (the zero objects hold only maps, nulls and scalars).
    `zero` and `new` are top-level fields (the metadata aside), `meta` the new metadata."""
    changed: set[Path] = set()
    added: list[tuple[Path, Obj]] = []
    _create_fields(zero, new, root, (), changed, added)
    meta_schema = _child(root, "metadata")
    if meta and _replaces(meta_schema):
        raise _Fallback
    fields = meta_schema.fields
    for key, value in meta.items():
        if type(key) is not str:
            raise _Fallback
        added.append((("f:metadata", "f:" + key), _tree(value, fields.get(key) or _NO_SCHEMA, key)))
    members = [(path, tree) for path, tree in added if path not in _STRIPPED]
    for path, tree in added:
        if path in _STRIPPED and tree:  # kube strips the path itself, not what is below it
            tree.pop(".", None)
            members.append((path, tree))
    members += [(path, {}) for path in changed - _STRIPPED]
    members.sort(key=itemgetter(0))
    out: Obj = {}
    for path, tree in members:  # sorted paths insert every node's children in order (f:, k:, v: elements)
        node = out
        for element in path[:-1]:
            child = node.get(element)
            if child is None:
                child = node[element] = {}
            node = child
        node[path[-1]] = tree
    return out


def _create_fields(
    zero: Obj, new: Obj, f: PatchField, path: Path, changed: set[Path], added: list[tuple[Path, Obj]]
) -> None:
    """`_compare_fields` of the fields of a map of the zero object and of the new one."""
    fields = f.fields
    for key, right in new.items():
        if type(key) is not str:
            raise _Fallback
        child_path = (*path, "f:" + key)
        schema = fields.get(key) or _NO_SCHEMA
        left = zero.get(key, _MISSING)
        if left is _MISSING:
            added.append((child_path, _tree(right, schema, key)))
        elif isinstance(left, dict) or isinstance(right, dict):
            if _maps(left, right) and not _replaces(schema) and (left or right):
                _create_fields(left or {}, right or {}, schema, child_path, changed, added)
            elif not _equal(left, right):
                changed.add(child_path)
        elif left is None and isinstance(right, list) and right:
            mode, keys = _mode(schema, key)
            if mode == "atomic":
                changed.add(child_path)
            else:
                added.extend(
                    ((*child_path, element), tree) for element, tree in _item_trees(right, schema, mode, keys)
                )
        elif isinstance(left, list):
            raise _Fallback
        elif not _equal(left, right):
            changed.add(child_path)


def _tree(value: Any, f: PatchField, name: str) -> Obj:
    """The FieldsV1 tree of a node present on one side only (`_one_side`)."""
    if isinstance(value, dict):
        if value and not _replaces(f):
            out: Obj = {".": {}}
            _tree_fields(value, f, out)
            return out
    elif isinstance(value, list) and value:
        mode, keys = _mode(f, name)
        if mode != "atomic":
            out = {".": {}}
            out.update(_item_trees(value, f, mode, keys))
            return out
    return {}


def _tree_fields(value: Obj, f: PatchField, out: Obj) -> None:
    """The FieldsV1 trees of a map's fields (or an associative list item's), into `out` in order."""
    try:
        keys = sorted(value)
    except TypeError:
        raise _Fallback from None
    fields = f.fields
    for key in keys:
        if type(key) is not str:
            raise _Fallback
        child = value[key]
        out["f:" + key] = {} if type(child) in _SCALARS else _tree(child, fields.get(key) or _NO_SCHEMA, key)


def _item_trees(
    items: list[Any], f: PatchField, mode: str, keys: tuple[tuple[str, str, Any], ...]
) -> list[tuple[str, Obj]]:
    """The path elements and FieldsV1 trees of the items of an associative list or set, in order."""
    out: list[tuple[str, Obj]] = []
    groups = _group(items, mode, keys)
    for element in sorted(groups):
        item = groups[element]
        tree: Obj = {}
        if mode == "map" and item is not _DUPLICATE and isinstance(item, dict) and item:
            tree["."] = {}
            _tree_fields(item, f, tree)
        out.append((element, tree))
    return out


# ---------------------------------------------------------------------------------------------- update


def record_update(
    live: Obj | None,
    new: Obj,
    *,
    manager: str,
    schema: Schema,
    has_status: bool,
    now: str,
    subresource: str = "",
) -> Obj:
    """`new` (a private copy, changed in place and returned) with the managedFields kube's field manager
    gives it when `manager` writes it over `live` (None: a create); `has_status` tells whether the kind has
    a status subresource, `subresource` is ``""`` or ``"status"`` and `now` the time of the write.

    The ``fieldsV1`` of entries the write leaves as they were are those of `live` (or of the request's
    managedFields), shared, not copied, as `new` may share the rest of its values with `live`."""
    meta = new.get("metadata")
    if not isinstance(meta, dict):
        meta = new["metadata"] = {}
    requested = meta.pop("managedFields", None)
    live_entries = (live.get("metadata") or {}).get("managedFields") if live is not None else None
    managed: dict[tuple[str, str, str, str], _Entry] | None
    if subresource:
        managed = _decode(live_entries)
    elif _is_reset(requested):
        managed = {}
    else:
        managed = _decode(requested)
        if not managed:
            managed = _decode(live_entries)
    managed = managed or {}
    if live is not None and not managed:
        return new  # kube's skip-non-applied manager: an object nobody manages stays unmanaged
    api_version = str(new.get("apiVersion") or "")
    key = (api_version.rpartition("/")[0], str(new.get("kind") or ""))
    base = live if live is not None else _ZERO.get(key, {})
    root = PatchField(fields=schema)
    if live is None and not managed and not subresource:
        skipped = ("metadata", "status") if has_status else ("metadata",)
        try:
            tree = _created_fields(
                {k: v for k, v in base.items() if k not in skipped},
                {k: v for k, v in new.items() if k not in skipped},
                meta,
                root,
            )
        except _Fallback:
            pass
        else:
            if tree:
                meta["managedFields"] = [
                    _Entry(manager or "unknown", "Update", api_version, "", now, None, tree).encode()
                ]
            return new
    changed: set[Path] = set()
    removed: set[Path] = set()
    # Only what the write records is compared: a status write records the status only; other writes record
    # everything else, and the status too unless the kind has a status subresource (kube's reset fields).
    if subresource == "status":
        _compare_top(
            {k: v for k, v in base.items() if k == "status"},
            {k: v for k, v in new.items() if k == "status"},
            root,
            (),
            changed,
            removed,
        )
    else:
        skipped = ("metadata", "status") if has_status else ("metadata",)
        _compare_top(
            {k: v for k, v in base.items() if k not in skipped},
            {k: v for k, v in new.items() if k not in skipped},
            root,
            (),
            changed,
            removed,
        )
        live_meta = (base.get("metadata") or {}) if live is not None else {}
        live_meta = {k: v for k, v in live_meta.items() if k != "managedFields"}
        meta_schema = _child(root, "metadata")
        if _replaces(meta_schema):
            _compare(live_meta, meta, meta_schema, "metadata", ("f:metadata",), changed, removed)
        else:
            _compare_top(live_meta, meta, meta_schema, ("f:metadata",), changed, removed)
    for entry in managed.values():
        if entry.owns_any(changed) or entry.owns_any(removed):
            entry.fields = entry.fields - changed - removed
    mine = changed - _STRIPPED
    me = _Entry(manager or "unknown", "Update", api_version, subresource, now, mine)
    if mine:
        previous = managed.get(me.identity)
        if previous is not None:
            me.fields = me.fields | previous.fields
        managed[me.identity] = me
    managed = {ident: e for ident, e in managed.items() if e}
    _cap(managed)
    entries = _encode(managed)
    if entries:
        meta["managedFields"] = entries
    return new


def record_scale(live: Obj, replicas: int, *, manager: str, now: str) -> list[Obj] | None:
    """The managedFields of a workload after `manager` sets its replicas through the ``scale`` subresource
    (kube's ScaleHandler): None when they stay as they are (nobody owned ``spec.replicas``, or it did not
    change); otherwise the owners of ``spec.replicas`` lose it to a ``scale`` entry of `manager`."""
    del now  # kube's ScaleHandler leaves the scale entry without a time
    managed = _decode((live.get("metadata") or {}).get("managedFields"))
    replicas_only = {_REPLICAS}
    if not managed or not any(e.owns_any(replicas_only) for e in managed.values()):
        return None
    if (live.get("spec") or {}).get("replicas") == replicas:
        return None
    api_version = str(live.get("apiVersion") or "")
    for entry in managed.values():
        if entry.owns_any(replicas_only):
            entry.fields = entry.fields - replicas_only
    me = _Entry(manager or "unknown", "Update", api_version, "scale", None, {_REPLICAS})
    managed[me.identity] = me
    return _encode({ident: e for ident, e in managed.items() if e})
