"""PATCH bodies as kubectl sends them: RFC 6902 JSON patch and Kubernetes' strategic merge patch.

Pure functions over wire-form (JSON-decoded) objects; neither input is modified. Errors are the
`StatusError`s kube-apiserver answers with:

* JSON patch (``application/json-patch+json``): a body that is not a list of operations is 400 BadRequest;
  an operation that does not apply (a failed ``test``, a missing path, a bad index) is 422 with kube's
  generic message "the server rejected our request due to an error in our request" and the json-patch
  library's wording in the cause (e.g. ``testing value /metadata/labels/a failed: test failed``).
  Like kube's json-patch v4, ``replace`` of a missing object member adds it, negative array indices count
  from the end and ``test`` of a missing member against ``null`` succeeds.
* Strategic merge patch (``application/strategic-merge-patch+json``): `strategic_merge_patch` follows
  apimachinery's ``strategicpatch.StrategicMergeMapPatch``: lists whose field has the ``merge`` patch strategy
  merge by their merge key (lists of scalars as sets), every other list is replaced, ``null`` deletes a key,
  and the directives ``$patch: replace|delete`` (maps and list items), ``$retainKeys``,
  ``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>`` are honoured. `smp_schema` gives the
  per-field strategies of the built-in kinds (from k8s.io/api's ``patchStrategy``/``patchMergeKey`` tags);
  custom resources have none, and kube refuses the content type for them with 415 (`UnsupportedMediaType`).

Fields a schema does not list behave as kube's atomic fields: maps merge recursively, lists are replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.api.checks import schema_type
from berth.api.errors import BadRequest, RequestEntityTooLarge, StatusError
from berth.api.kinds import all_kinds, is_builtin_group

__all__ = [
    "APPLY_PATCH",
    "JSON_PATCH",
    "MAX_JSON_PATCH_OPERATIONS",
    "MERGE_PATCH",
    "STRATEGIC_MERGE_PATCH",
    "PatchField",
    "PatchRejected",
    "copy_json",
    "json_patch",
    "smp_schema",
    "strategic_merge_patch",
]

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

MAX_JSON_PATCH_OPERATIONS = 10000
"""kube-apiserver's limit on the operations of one JSON patch (more is 413)."""

Obj = dict[str, Any]


# --------------------------------------------------------------------------------------------------- errors


class PatchRejected(StatusError):
    """422 with reason Invalid, as ``apierrors.NewGenericServerResponse(422, ...)`` builds it for a patch
    that does not apply; the patch library's own message is the single cause."""

    reason = "Invalid"
    code = 422

    def __init__(self, detail: str) -> None:
        """`detail` is the patch library's message (kept in ``.detail`` and in the Status causes)."""
        super().__init__("the server rejected our request due to an error in our request")
        self.detail = detail

    def details(self) -> dict[str, Any]:
        """StatusDetails with one ``UnexpectedServerResponse`` cause carrying the detail."""
        out = super().details()
        out["causes"] = [{"reason": "UnexpectedServerResponse", "message": self.detail}]
        return out


# ----------------------------------------------------------------------------------------- JSON helpers


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists and scalars), faster than copy.deepcopy."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


def _json_equal(a: Any, b: Any) -> bool:
    """Structural JSON equality (unlike ``==``, ``true`` is not ``1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict) and a.keys() == b.keys() and all(_json_equal(v, b[k]) for k, v in a.items())
        )
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, (int, float)):
        return isinstance(b, (int, float)) and a == b
    return type(a) is type(b) and bool(a == b)


def _go(value: Any) -> str:
    """Go's ``%v`` of a JSON value (for error messages worded like apimachinery's)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# ------------------------------------------------------------------------------------------- JSON patch


def _decode_token(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _index(container: list[Any], key: str, *, size: int | None = None) -> int:
    """An array index as json-patch v4 reads it (negative counts from the end); ValueError if bad."""
    try:
        idx = int(key, 10)
    except ValueError:
        raise ValueError(f'strconv.Atoi: parsing "{key}": invalid syntax') from None
    n = len(container) if size is None else size
    if idx >= n or idx < -n:
        raise ValueError(f"Unable to access invalid index: {idx}: invalid index referenced")
    return idx + n if idx < 0 else idx


def _find(doc: Any, path: str) -> tuple[Any, str] | None:
    """The container of the member `path` points at and the member's (decoded) key; None if missing."""
    if not path.startswith("/"):
        return None
    tokens = path.split("/")[1:]
    node = doc
    for token in tokens[:-1]:
        key = _decode_token(token)
        if isinstance(node, dict):
            node = node.get(key)
        elif isinstance(node, list):
            try:
                node = node[_index(node, key)]
            except ValueError:
                return None
        else:
            return None
        if not isinstance(node, (dict, list)):
            return None
    return node, _decode_token(tokens[-1])


def _get(container: Any, key: str) -> Any:
    """The member `key` of `container` (None when an object lacks it); ValueError for a bad array index."""
    if isinstance(container, dict):
        return container.get(key)
    return container[_index(container, key)]


def _add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
    elif key == "-":
        container.append(value)
    else:
        container.insert(_index(container, key, size=len(container) + 1), value)


def _remove(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        if key not in container:
            raise ValueError(f"Unable to remove nonexistent key: {key}: missing value")
        return container.pop(key)
    return container.pop(_index(container, key))


def _op_string(op: Mapping[str, Any], name: str) -> str | None:
    value = op.get(name)
    return value if isinstance(value, str) else None


def _apply_op(doc: Any, op: Mapping[str, Any]) -> Any:
    """Apply one operation to `doc` in place (a replaced root is returned); ValueError when it does not apply."""
    kind = op.get("op") if isinstance(op.get("op"), str) else "unknown"
    path = _op_string(op, "path")
    if kind not in ("add", "remove", "replace", "move", "copy", "test"):
        raise ValueError(f"Unexpected kind: {kind}")
    if path is None:
        raise ValueError(f"{kind} operation failed to decode path: missing value")
    value = op.get("value")
    if kind == "test":
        if path == "":
            if _json_equal(doc, value):
                return doc
            raise ValueError(f"testing value {path} failed: test failed")
        found = _find(doc, path)
        if found is None:
            raise ValueError(f"test operation does not apply: is missing path: {path}: missing value")
        try:
            current = _get(*found)
        except ValueError as e:
            raise ValueError(f"error in test for path: '{path}': {e}") from None
        if _json_equal(current, value):
            return doc
        raise ValueError(f"testing value {path} failed: test failed")
    if kind == "replace" and path == "":
        if not isinstance(value, (dict, list)):
            raise ValueError("replace operation value must be object or array: <nil>")
        return copy_json(value)
    if kind in ("move", "copy"):
        source = _op_string(op, "from")
        if source is None:
            raise ValueError(f"{kind} operation failed to decode from: missing value")
        found = _find(doc, source)
        if found is None:
            raise ValueError(
                f"{kind} operation does not apply: doc is missing from path: {source}: missing value"
            )
        try:
            value = _remove(*found) if kind == "move" else copy_json(_get(*found))
        except ValueError as e:
            where = f"for path: '{found[1]}'" if kind == "move" else f"for from: '{source}'"
            raise ValueError(f"error in {kind} {where}: {e}") from None
        found = _find(doc, path)
        if found is None:
            raise ValueError(
                f"{kind} operation does not apply: doc is missing destination path: {path}: missing value"
            )
        try:
            _add(*found, value)
        except ValueError as e:
            prefix = (
                f"error in move for path: '{path}'"
                if kind == "move"
                else "error while adding value during copy"
            )
            raise ValueError(f"{prefix}: {e}") from None
        return doc
    found = _find(doc, path)
    if found is None:
        sep = '"' if kind != "replace" else ""
        raise ValueError(
            f"{kind} operation does not apply: doc is missing path: {sep}{path}{sep}: missing value"
        )
    container, key = found
    try:
        if kind == "add":
            _add(container, key, copy_json(value))
        elif kind == "remove":
            _remove(container, key)
        else:  # replace
            if isinstance(container, list):
                try:
                    idx = _index(container, key)
                except ValueError:
                    raise ValueError(
                        f"replace operation does not apply: doc is missing key: {path}: missing value"
                    ) from None
                container[idx] = copy_json(value)
            else:
                container[key] = copy_json(value)
    except ValueError as e:
        if str(e).startswith("replace operation"):
            raise
        verb = "remove" if kind == "replace" else kind  # json-patch v4's wording for replace
        raise ValueError(f"error in {verb} for path: '{path}': {e}") from None
    return doc


def json_patch(doc: Obj, operations: Any) -> Any:
    """Apply an RFC 6902 JSON patch (the decoded request body) to `doc` and return the result.

    `doc` is not modified. A body that is not a list of operation objects is BadRequest; more than
    `MAX_JSON_PATCH_OPERATIONS` operations is RequestEntityTooLarge; an operation that does not apply is
    `PatchRejected` (422). The result may be any JSON value when the patch replaces the root.
    """
    if not isinstance(operations, list):
        raise BadRequest(
            f"json: cannot unmarshal {_json_type(operations)} into Go value of type jsonpatch.Patch"
        )
    for op in operations:
        if not isinstance(op, dict):
            raise BadRequest(
                f"json: cannot unmarshal {_json_type(op)} into Go value of type jsonpatch.Operation"
            )
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise RequestEntityTooLarge.of(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
            f"got {len(operations)}"
        )
    result: Any = copy_json(doc)
    for op in operations:
        try:
            result = _apply_op(result, op)
        except ValueError as e:
            raise PatchRejected(str(e)) from None
    return result


_GO_JSON_TYPES = {"boolean": "bool", "integer": "number"}


def _json_type(value: Any) -> str:
    """The value's type as Go's encoding/json names it in an unmarshal error."""
    kind = schema_type(value)
    return _GO_JSON_TYPES.get(kind, kind)


# ------------------------------------------------------------------------------- strategic merge patch

_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
_SET_ELEMENT_ORDER = "$setElementOrder"

_ERR_PRIMITIVE_LIST = "invalid patch format of primitive list"
_ERR_RETAIN_KEYS = "invalid patch format of retainKeys"
_ERR_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list"
_ERR_LIST_OF_LISTS = "lists of lists are not supported"


@dataclass(frozen=True, slots=True)
class PatchField:
    """How a strategic merge patch treats one field: its ``patchStrategy`` tag (``merge``, ``replace``,
    ``retainKeys``, ``merge,retainKeys`` or empty), its ``patchMergeKey`` and the schema of its value
    (of its items, for a list)."""

    strategy: str = ""
    merge_key: str = ""
    fields: Mapping[str, PatchField] = field(default_factory=dict)

    @property
    def strategies(self) -> tuple[str, ...]:
        """The strategies of the tag, ``retainKeys`` included."""
        return tuple(s for s in self.strategy.split(",") if s)

    @property
    def merges(self) -> bool:
        """Lists: merged (by merge key, or as a set of scalars) rather than replaced."""
        return "merge" in self.strategies

    @property
    def replaces(self) -> bool:
        """Maps: replaced wholesale rather than merged."""
        return "replace" in self.strategies


Schema = Mapping[str, PatchField]
_NONE = PatchField()


def _sub(schema: Schema, key: str) -> PatchField:
    return schema.get(key, _NONE)


def _bad(message: str) -> StatusError:
    return BadRequest(message)


def _reject(message: str) -> StatusError:
    return PatchRejected(message)


def strategic_merge_patch(original: Obj, patch: Obj, schema: Schema) -> Obj:
    """Apply a strategic merge patch to `original` (neither is modified) with the field `schema` of its kind.

    Malformed directives are BadRequest ("invalid patch format of ..."), lists of lists and a patch that
    contradicts its ``$retainKeys`` are 422, as kube-apiserver answers.
    """
    if not isinstance(patch, dict):
        raise _bad("invalid JSON document")
    return _merge_map(copy_json(original), copy_json(patch), schema)


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """`value` without ``$``-directives; False when `value` itself is a directive item (to be dropped)."""
    if isinstance(value, dict):
        if _DIRECTIVE in value:
            return None, False
        out: Obj = {}
        for k, v in value.items():
            if k.startswith("$"):
                continue
            v2, keep = _remove_directives(v)
            if keep:
                out[k] = v2
        return out, True
    if isinstance(value, list):
        items = []
        for v in value:
            v2, keep = _remove_directives(v)
            if keep:
                items.append(v2)
        return items, True
    return value, True


def _discard_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _discard_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_discard_nulls(v) for v in value]
    return value


def _new_value(value: Any) -> tuple[Any, bool]:
    """A patch value taken as is (no counterpart in the original): nulls and directives dropped."""
    return _remove_directives(_discard_nulls(value))


def _merge_map(original: Obj, patch: Obj, schema: Schema) -> Obj:
    if _DIRECTIVE in patch:
        directive = patch.pop(_DIRECTIVE)
        if directive == "replace":
            return dict(_new_value(patch)[0])
        if directive == "delete":
            return {}
        raise _bad(f"unknown patch type: {_go(directive)} in map: {_go(patch)}")
    _apply_retain_keys(original, patch)
    _apply_set_element_order(original, patch, schema)
    for k, pv in list(patch.items()):
        is_delete_list = False
        if k.startswith(_DELETE_FROM_PRIMITIVE_LIST):
            k = _directive_key(k, _DELETE_FROM_PRIMITIVE_LIST, _ERR_PRIMITIVE_LIST)
            is_delete_list = True
        if pv is None:
            original.pop(k, None)
            continue
        ov: Any = original.get(k)
        if k not in original or type(ov) is not type(pv) or not isinstance(pv, (dict, list)):
            if not is_delete_list:
                value, keep = _new_value(pv)
                if keep:
                    original[k] = value
                else:
                    original.pop(k, None)
            continue
        f = _sub(schema, k)
        if isinstance(pv, dict):
            original[k] = dict(_new_value(pv)[0]) if f.replaces else _merge_map(ov, pv, f.fields)
        else:
            original[k] = _merge_list_field(ov, pv, f, is_delete_list)
    return original


def _directive_key(key: str, prefix: str, error: str) -> str:
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        raise _bad(error)
    return rest


def _apply_retain_keys(original: Obj, patch: Obj) -> None:
    if _RETAIN_KEYS not in patch:
        return
    retain = patch.pop(_RETAIN_KEYS)
    if not isinstance(retain, list):
        raise _bad(_ERR_RETAIN_KEYS)
    for k, v in patch.items():
        if v is None or k.startswith((_DELETE_FROM_PRIMITIVE_LIST, _SET_ELEMENT_ORDER)):
            continue
        if k not in retain:
            raise _bad(_ERR_RETAIN_KEYS)
    for k in list(original):
        if k not in retain:
            del original[k]


def _apply_set_element_order(original: Obj, patch: Obj, schema: Schema) -> None:
    for key in [k for k in patch if k.startswith(_SET_ELEMENT_ORDER)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise _bad(f"expected a []interface {{}}, but received a {_go_type(order)}")
        name = _directive_key(key, _SET_ELEMENT_ORDER, _ERR_SET_ELEMENT_ORDER)
        in_original, in_patch = name in original, name in patch
        original_list: Any = original.get(name)
        patch_list: Any = patch.get(name)
        for value in (original_list if in_original else [], patch_list if in_patch else []):
            if not isinstance(value, list):
                raise _bad(f"expected a []interface {{}}, but received a {_go_type(value)}")
        f = _sub(schema, name)
        _check_order(patch_list if in_patch else [], order, f.merge_key)
        if in_original and not in_patch:
            merged = list(original_list or [])
        elif in_patch and not in_original:
            merged = list(_new_value(patch_list)[0])
        elif in_original and in_patch:
            merged = _merge_list_field(original_list, patch_list, f, False)
        else:
            continue
        is_map = _element_kind_is_map(original_list or [], patch_list or [], f.merge_key)
        patch_items, server_only = _partition(merged, order, f.merge_key if is_map else "")
        original[name] = _normalize_order(
            patch_items, server_only, order, original_list or [], f.merge_key if is_map else ""
        )
        patch.pop(name, None)


def _go_type(value: Any) -> str:
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if value is None:
        return "<nil>"
    return "float64"


def _element_kind_is_map(a: list[Any], b: list[Any], merge_key: str) -> bool:
    for v in (*a, *b):
        return isinstance(v, dict)
    return bool(merge_key)


def _check_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """apimachinery's validatePatchWithSetOrderList: the patch items keep the order list's relative order."""
    if not order or not patch_list:
        return
    items = patch_list
    if merge_key:
        for v in patch_list:
            if not isinstance(v, dict):
                raise _bad(f"expected a map[string]interface {{}}, but received a {_go_type(v)}")
        items = [v for v in patch_list if v.get(_DIRECTIVE) != "delete"]
    i = j = 0
    while i < len(items) and j < len(order):
        if isinstance(items[i], dict) and _DIRECTIVE in items[i]:
            i += 1
            continue
        if _same_key(items[i], order[j], merge_key):
            i += 1
        j += 1
    if i < len(items) and j >= len(order):
        raise _bad(
            f"The order in patch list:\n{_go(patch_list)}\n doesn't match {_SET_ELEMENT_ORDER} list:\n{_go(order)}\n"
        )


def _same_key(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _json_equal(left, right)
    for side in (left, right):
        if not isinstance(side, dict):
            raise _bad(f"expected a map[string]interface {{}}, but received a {_go_type(side)}")
        if merge_key not in side:
            raise _bad(_no_merge_key(side, merge_key))
    return _json_equal(left[merge_key], right[merge_key])


def _no_merge_key(item: Obj, merge_key: str) -> str:
    return f"map: {_go(item)} does not contain declared merge key: {merge_key}"


def _merge_list_field(
    original: list[Any], patch: list[Any], f: PatchField, is_delete_list: bool
) -> list[Any]:
    if f.merges or is_delete_list:
        return _merge_list(original, patch, f, is_delete_list)
    return list(_new_value(patch)[0])


def _merge_list(original: list[Any], patch: list[Any], f: PatchField, is_delete_list: bool) -> list[Any]:
    if not original and not patch:
        return original
    is_map = _check_element_types(original, patch)
    merge_key = f.merge_key
    if not is_map:
        if is_delete_list:
            return [v for v in original if not any(_json_equal(v, p) for p in patch)]
        merged: list[Any] = []
        for v in (*original, *patch):
            if not any(_json_equal(v, m) for m in merged):
                merged.append(v)
        merge_key = ""
    else:
        if not merge_key:
            raise _bad("cannot merge lists without merge key")
        original, patch = _merge_special_items(original, patch, merge_key)
        merged = _merge_items(original, patch, merge_key, f.fields)
    patch_items, server_only = _partition(merged, patch, merge_key)
    return _normalize_order(patch_items, server_only, patch, original, merge_key)


def _check_element_types(*lists: list[Any]) -> bool:
    """True for lists of maps; 422 for lists of lists, 400 for mixed element types."""
    first: type | None = None
    for items in lists:
        for v in items:
            t = dict if isinstance(v, dict) else list if isinstance(v, list) else object
            if t is list:
                raise _reject(_ERR_LIST_OF_LISTS)
            if first is None:
                first = t
            elif first is not t:
                raise _bad(f"list element types are not identical: {_go(list(lists))}")
    return first is dict


def _merge_special_items(
    original: list[Any], patch: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    """Apply the ``$patch`` items of a merging list of maps: deletions and ``replace``."""
    plain: list[Any] = []
    replace = False
    for v in patch:
        if _DIRECTIVE not in v:
            plain.append(v)
            continue
        directive = v[_DIRECTIVE]
        if directive == "delete":
            if merge_key not in v:
                raise _bad(_no_merge_key(v, merge_key))
            original = [o for o in original if not _json_equal(o.get(merge_key), v[merge_key])]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise _bad("merging lists cannot yet be specified in the patch")
        else:
            raise _bad(f"unknown patch type: {_go(directive)} in map: {_go(v)}")
    if replace:
        return [_new_value(v)[0] for v in plain], []
    return original, plain


def _merge_items(original: list[Any], patch: list[Any], merge_key: str, schema: Schema) -> list[Any]:
    merged = list(original)
    for v in patch:
        if merge_key not in v:
            raise _bad(_no_merge_key(v, merge_key))
        for i, o in enumerate(merged):
            if not isinstance(o, dict):
                raise _bad(f"value for key {i} is not a map")
            if merge_key in o and _json_equal(o[merge_key], v[merge_key]):
                merged[i] = _merge_map(o, v, schema)
                break
        else:
            merged.append(_new_value(v)[0])
    return merged


def _key_of(item: Any, merge_key: str) -> Any:
    return item.get(merge_key) if merge_key and isinstance(item, dict) else item


def _position(items: list[Any], item: Any, merge_key: str) -> int:
    wanted = _key_of(item, merge_key)
    for i, v in enumerate(items):
        if _json_equal(_key_of(v, merge_key), wanted):
            return i
    return -1


def _partition(merged: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    """(items of `merged` present in `by`, the others), compared by merge key for maps."""
    inside: list[Any] = []
    outside: list[Any] = []
    for v in merged:
        if merge_key and (not isinstance(v, dict) or merge_key not in v):
            raise _bad(_no_merge_key(v if isinstance(v, dict) else {}, merge_key))
        (inside if _position(by, v, merge_key) >= 0 else outside).append(v)
    return inside, outside


def _sort_by(items: list[Any], order: list[Any], merge_key: str) -> list[Any]:
    keep = [v for v in items if not (isinstance(v, dict) and v.get(_DIRECTIVE) == "delete")]
    deleted = [v for v in items if isinstance(v, dict) and v.get(_DIRECTIVE) == "delete"]

    def rank(v: Any) -> int:
        i = _position(order, v, merge_key)
        return i if i >= 0 else len(order)

    return sorted(keep, key=rank) + deleted


def _normalize_order(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
) -> list[Any]:
    """apimachinery's normalizeElementOrder: patch items in patch order, server-only items in live order,
    interleaved by their positions in the live list (patch items first where that says nothing)."""
    right = _sort_by(patch_items, patch_order, merge_key)
    left = _sort_by(server_only, server_order, merge_key)
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _position(server_order, left[i], merge_key)
            ri = _position(server_order, right[j], merge_key)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


# ------------------------------------------------------------------------------- built-in kinds' schemas


def _merge(key: str = "", fields: Schema | None = None, strategy: str = "merge") -> PatchField:
    return PatchField(strategy, key, fields or {})


def _struct(fields: Schema, strategy: str = "") -> PatchField:
    return PatchField(strategy, "", fields)


_CONDITIONS: Schema = {"conditions": _merge("type")}
_OBJECT_META = _struct({"ownerReferences": _merge("uid"), "finalizers": _merge()})
_CONTAINER: Schema = {
    "ports": _merge("containerPort"),
    "env": _merge("name"),
    "volumeMounts": _merge("mountPath"),
    "volumeDevices": _merge("devicePath"),
}
_POD_SPEC = _struct(
    {
        "volumes": _merge("name", strategy="merge,retainKeys"),
        "initContainers": _merge("name", _CONTAINER),
        "containers": _merge("name", _CONTAINER),
        "ephemeralContainers": _merge("name", _CONTAINER),
        "imagePullSecrets": _merge("name"),
        "hostAliases": _merge("ip"),
        "topologySpreadConstraints": _merge("topologyKey"),
        "schedulingGates": _merge("name"),
        "resourceClaims": _merge("name", strategy="merge,retainKeys"),
    }
)
_POD_STATUS = _struct(
    {
        "conditions": _merge("type"),
        "hostIPs": _merge("ip"),
        "podIPs": _merge("ip"),
        "resourceClaimStatuses": _merge("name", strategy="merge,retainKeys"),
    }
)
_POD_TEMPLATE = _struct({"metadata": _OBJECT_META, "spec": _POD_SPEC})
_WORKLOAD_STATUS = _struct(_CONDITIONS)

_SCHEMAS: dict[tuple[str, str], Schema] = {
    ("", "Pod"): {"metadata": _OBJECT_META, "spec": _POD_SPEC, "status": _POD_STATUS},
    ("", "Node"): {
        "metadata": _OBJECT_META,
        "spec": _struct({"podCIDRs": _merge()}),
        "status": _struct({"conditions": _merge("type"), "addresses": _merge("type")}),
    },
    ("", "Namespace"): {"metadata": _OBJECT_META, "status": _struct(_CONDITIONS)},
    ("", "Event"): {"metadata": _OBJECT_META},
    ("apps", "ReplicaSet"): {
        "metadata": _OBJECT_META,
        "spec": _struct({"template": _POD_TEMPLATE}),
        "status": _WORKLOAD_STATUS,
    },
    ("apps", "Deployment"): {
        "metadata": _OBJECT_META,
        "spec": _struct({"template": _POD_TEMPLATE, "strategy": _struct({}, "retainKeys")}),
        "status": _WORKLOAD_STATUS,
    },
    ("policy", "PodDisruptionBudget"): {
        "metadata": _OBJECT_META,
        "spec": _struct({"selector": _struct({}, "replace")}),
        "status": _struct(_CONDITIONS),
    },
    ("scheduling.k8s.io", "PriorityClass"): {"metadata": _OBJECT_META},
    ("coordination.k8s.io", "Lease"): {"metadata": _OBJECT_META},
    ("apps", "StatefulSet"): {
        "metadata": _OBJECT_META,
        "spec": _struct({"template": _POD_TEMPLATE, "updateStrategy": _struct({}, "retainKeys")}),
        "status": _WORKLOAD_STATUS,
    },
    ("apps", "DaemonSet"): {
        "metadata": _OBJECT_META,
        "spec": _struct({"template": _POD_TEMPLATE}),
        "status": _WORKLOAD_STATUS,
    },
    ("", "Service"): {
        "metadata": _OBJECT_META,
        "spec": _struct({"ports": _merge("port")}),
        "status": _struct(_CONDITIONS),
    },
}
_STORED_KIND: Schema = {"metadata": _OBJECT_META}
"""The schema of a built-in kind Berth stores as given: only its metadata's patch tags are Berth's."""


def smp_schema(group: str, kind: str) -> Schema | None:
    """The strategic-merge-patch field schema of a built-in kind; None for custom resources (kube refuses
    strategic merge patches for them)."""
    schema = _SCHEMAS.get((group, kind))
    if (
        schema is None
        and is_builtin_group(group)
        and any(k.group == group and k.kind == kind for k in all_kinds())
    ):
        return _STORED_KIND
    return schema
