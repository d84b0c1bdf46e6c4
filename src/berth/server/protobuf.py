"""Kubernetes' protobuf wire format (``application/vnd.kubernetes.protobuf``) ↔ Berth's wire-form dicts.

kubectl 1.32 and later send some bodies (``kubectl create deployment``, drain's eviction and delete) as
protobuf and do not fall back to JSON. A body is the 4 magic bytes ``k8s\\x00`` followed by a
``runtime.Unknown`` message ``{1: TypeMeta{1 apiVersion, 2 kind}, 2: raw, 3: contentEncoding, 4:
contentType}`` whose ``raw`` is the object's own message from k8s.io/api's ``generated.proto``.

`decode` turns such a body into the dict the same object's JSON would give; `encode` does the reverse for
a client that accepts only protobuf. The field tables live in `berth.server.protobuf_schema`; the small
protobuf reader and writer are here (varint, length-delimited, fixed32/64; no dependency).

Presence follows what Go's JSON encoding of the decoded struct would show: a pointer field that is present
is kept even when zero (``replicas: 0``, ``gracePeriodSeconds: 0``), a value field tagged ``omitempty`` is
dropped when zero (kube's Go marshaller writes every value field, ``namespace: ""`` included), a present
message is kept even when empty (``strategy: {}``), and an empty ``metav1.Time`` is dropped (JSON ``null``).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from berth.api.errors import BadRequest
from berth.server.protobuf_schema import KINDS, MESSAGES, OPTIONS_KINDS

__all__ = [
    "CONTENT_TYPE",
    "MAGIC",
    "ProtobufError",
    "decode",
    "decode_message",
    "encode",
    "encode_message",
    "is_registered",
    "iter_fields",
    "message_for",
    "varint",
]

#: The media type kubectl and client-go use for protobuf bodies.
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
#: The 4 bytes every Kubernetes protobuf body starts with.
MAGIC = b"k8s\x00"

_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5
_MAX_DEPTH = 64
_SCALARS = frozenset({"string", "int32", "int64", "bool", "bytes", "double", "float"})
_VARINT_TYPES = frozenset({"int32", "int64", "bool"})
_GROUP_VERSIONS = frozenset({api_version for api_version, _ in KINDS} | {"meta.k8s.io/v1"})


class ProtobufError(ValueError):
    """Malformed protobuf bytes (truncated varint, length past the end, unsupported wire type, ...)."""


# --- the generic wire-format reader -------------------------------------------------------------------


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ProtobufError("varint longer than 10 bytes")


def iter_fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield ``(field number, wire type, value)`` for each field of one message.

    The value is an int for varint and fixed32/64 fields (fixed ones unsigned, little-endian) and the
    payload bytes for length-delimited ones. Raises `ProtobufError` on malformed input.
    """
    pos = 0
    end = len(buf)
    while pos < end:
        key, pos = _read_varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("field number 0")
        if wire == _VARINT:
            value, pos = _read_varint(buf, pos)
            yield number, wire, value
        elif wire == _LEN:
            size, pos = _read_varint(buf, pos)
            if pos + size > end:
                raise ProtobufError(f"field {number}: length {size} runs past the end of the message")
            yield number, wire, buf[pos : pos + size]
            pos += size
        elif wire == _FIXED64:
            if pos + 8 > end:
                raise ProtobufError(f"field {number}: truncated fixed64")
            yield number, wire, int.from_bytes(buf[pos : pos + 8], "little")
            pos += 8
        elif wire == _FIXED32:
            if pos + 4 > end:
                raise ProtobufError(f"field {number}: truncated fixed32")
            yield number, wire, int.from_bytes(buf[pos : pos + 4], "little")
            pos += 4
        else:
            raise ProtobufError(f"field {number}: unsupported wire type {wire}")


def _signed64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


# --- the generic wire-format writer -------------------------------------------------------------------


def varint(value: int) -> bytes:
    """`value` as a protobuf varint (negative numbers as their 64-bit two's complement)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def _len_field(number: int, payload: bytes) -> bytes:
    return _key(number, _LEN) + varint(len(payload)) + payload


# --- special Kubernetes types -------------------------------------------------------------------------


def _format_time(seconds: int, nanos: int, *, micro: bool) -> str:
    try:
        moment = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise ProtobufError(f"timestamp {seconds} out of range") from exc
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if micro:
        text += f".{nanos // 1000:06d}"
    return text + "Z"


_TIME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$")


def _parse_time(text: str, path: str) -> tuple[int, int]:
    match = _TIME_RE.match(text)
    if match is None:
        raise ProtobufError(f"{path}: {text!r} is not an RFC 3339 time")
    zone = match.group(3)
    base = datetime.fromisoformat(match.group(1).replace("t", "T") + ("+00:00" if zone in "Zz" else zone))
    nanos = int((match.group(2) or "0").ljust(9, "0"))
    return int(base.timestamp()), nanos


def _decode_special(kind: str, data: bytes, depth: int) -> Any:
    fields: dict[int, int | bytes] = {}
    for number, _wire, value in iter_fields(data):
        fields[number] = value
    if kind == "Quantity":
        raw = fields.get(1, b"")
        return _text(raw) if isinstance(raw, bytes) and raw else "0"
    if kind in ("Time", "MicroTime"):
        seconds, nanos = fields.get(1, 0), fields.get(2, 0)
        if not isinstance(seconds, int) or not isinstance(nanos, int):
            raise ProtobufError("Timestamp fields must be varints")
        return _format_time(_signed64(seconds), _signed64(nanos), micro=kind == "MicroTime")
    if kind == "IntOrString":
        if fields.get(1, 0) == 1:
            text = fields.get(3, b"")
            return _text(text) if isinstance(text, bytes) else ""
        int_val = fields.get(2, 0)
        return _signed64(int_val) if isinstance(int_val, int) else 0
    if kind in ("RawExtension", "FieldsV1"):
        raw = fields.get(1, b"")
        if not isinstance(raw, bytes) or not raw:
            return {}
        if raw.startswith(MAGIC):
            return _decode_envelope(raw, None, depth + 1)
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise ProtobufError(f"{kind} holds neither JSON nor a protobuf object") from exc
    raise ProtobufError(f"unsupported special type {kind}")  # pragma: no cover - schema has no others


def _encode_special(kind: str, value: Any, path: str) -> bytes:
    if kind == "Quantity":
        return _len_field(1, str(value).encode())
    if kind in ("Time", "MicroTime"):
        if not isinstance(value, str):
            raise ProtobufError(f"{path}: a time must be a string")
        seconds, nanos = _parse_time(value, path)
        out = _key(1, _VARINT) + varint(seconds)
        if kind == "MicroTime" and nanos:
            out += _key(2, _VARINT) + varint(nanos)
        return out
    if kind == "IntOrString":
        if isinstance(value, str):
            return _key(1, _VARINT) + varint(1) + _len_field(3, value.encode())
        return _key(1, _VARINT) + varint(0) + _key(2, _VARINT) + varint(_as_int(value, path))
    if kind in ("RawExtension", "FieldsV1"):
        if kind == "RawExtension" and isinstance(value, Mapping) and is_registered(value):
            return _len_field(1, encode(value))
        return _len_field(1, json.dumps(value, separators=(",", ":")).encode())
    raise ProtobufError(f"unsupported special type {kind}")  # pragma: no cover


# --- schema-driven decoding ---------------------------------------------------------------------------


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtobufError("a string field is not valid UTF-8") from exc


def _scalar(typ: str, wire: int, value: int | bytes) -> Any:
    if typ == "string" or typ == "bytes":
        if not isinstance(value, bytes):
            raise ProtobufError(f"a {typ} field needs wire type 2, got {wire}")
        return _text(value) if typ == "string" else base64.b64encode(value).decode("ascii")
    if not isinstance(value, int):
        raise ProtobufError(f"a {typ} field needs a numeric wire type, got {wire}")
    if typ in _VARINT_TYPES:
        if wire != _VARINT:
            raise ProtobufError(f"a {typ} field needs wire type 0, got {wire}")
        return value != 0 if typ == "bool" else _signed64(value)
    if typ == "double" and wire == _FIXED64:
        return struct.unpack("<d", value.to_bytes(8, "little"))[0]
    if typ == "float" and wire == _FIXED32:
        return struct.unpack("<f", value.to_bytes(4, "little"))[0]
    raise ProtobufError(f"a {typ} field cannot have wire type {wire}")


def _packed(typ: str, data: bytes) -> list[Any]:
    """Elements of a packed repeated numeric field."""
    out: list[Any] = []
    pos = 0
    while pos < len(data):
        if typ in _VARINT_TYPES:
            value, pos = _read_varint(data, pos)
            out.append(_scalar(typ, _VARINT, value))
        else:
            width, wire = (8, _FIXED64) if typ == "double" else (4, _FIXED32)
            if pos + width > len(data):
                raise ProtobufError("truncated packed field")
            out.append(_scalar(typ, wire, int.from_bytes(data[pos : pos + width], "little")))
            pos += width
    return out


def _is_zero(value: Any) -> bool:
    return value == "" or value is False or (not isinstance(value, bool) and value == 0)


def _omitted(typ: str, flags: str, value: int | bytes, decoded: Any) -> bool:
    """Whether Go's JSON would leave this present field out: a zero omitempty scalar or an empty Time."""
    if typ in ("Time", "MicroTime"):
        return value == b""
    return typ in _SCALARS and not flags and _is_zero(decoded)


def _element(
    typ: str, wire: int, value: int | bytes, path: str, unknown: list[str] | None, depth: int
) -> Any:
    """Decode one (non-repeated, non-map) value of type *typ*."""
    if typ in _SCALARS:
        return _scalar(typ, wire, value)
    if not isinstance(value, bytes):
        raise ProtobufError(f"{path}: a message field needs wire type 2, got {wire}")
    if typ in MESSAGES:
        return _decode(typ, value, path, unknown, depth + 1)
    return _decode_special(typ, value, depth)


def _map_entry(typ: str, data: bytes, path: str, unknown: list[str] | None, depth: int) -> tuple[str, Any]:
    key = ""
    found: tuple[int, int | bytes] | None = None
    for number, wire, value in iter_fields(data):
        if number == 1:
            key = _scalar("string", wire, value)
        elif number == 2:
            found = (wire, value)
    if found is None:
        zero: Any = {"string": "", "bytes": "", "Quantity": "0"}.get(typ, {})
        return key, zero
    return key, _element(typ, found[0], found[1], f"{path}[{key}]", unknown, depth)


def _decode(name: str, data: bytes, path: str, unknown: list[str] | None, depth: int) -> dict[str, Any]:
    if depth > _MAX_DEPTH:
        raise ProtobufError(f"{path or '<root>'}: nesting deeper than {_MAX_DEPTH}")
    table = MESSAGES[name]
    out: dict[str, Any] = {}
    for number, wire, value in iter_fields(data):
        spec = table.get(number)
        if spec is None:
            if unknown is not None:
                unknown.append(f"{path or '<root>'}: {name} field {number} (wire type {wire})")
            continue
        json_name, typ, flags = spec
        here = f"{path}.{json_name}" if path else json_name
        if typ.startswith("[]"):
            item = typ[2:]
            items = out.setdefault(json_name, [])
            if item in _SCALARS and item not in ("string", "bytes") and wire == _LEN:
                assert isinstance(value, bytes)
                items.extend(_packed(item, value))
            else:
                items.append(_element(item, wire, value, f"{here}[{len(items)}]", unknown, depth))
        elif typ.startswith("{}"):
            if not isinstance(value, bytes):
                raise ProtobufError(f"{here}: a map entry needs wire type 2, got {wire}")
            key, entry = _map_entry(typ[2:], value, here, unknown, depth + 1)
            out.setdefault(json_name, {})[key] = entry
        else:
            decoded = _element(typ, wire, value, here, unknown, depth)
            if "i" in flags:
                out.update(decoded)
            elif _omitted(typ, flags, value, decoded):
                out.pop(json_name, None)
            else:
                out[json_name] = decoded
    return out


def decode_message(name: str, data: bytes, unknown: list[str] | None = None) -> dict[str, Any]:
    """Decode the bare message *name* (a key of `MESSAGES`, e.g. ``"apps.Deployment"``) into its JSON dict.

    Field numbers the schema does not know are skipped and, when *unknown* is a list, described there.
    Raises `ProtobufError` on malformed bytes.
    """
    return _decode(name, data, "", unknown, 0)


def message_for(api_version: str, kind: str) -> str | None:
    """The schema message of *kind* in *api_version*, or None when it is not registered."""
    found = KINDS.get((api_version, kind))
    if found is None and api_version in _GROUP_VERSIONS:
        found = OPTIONS_KINDS.get(kind)
    return found


def is_registered(obj: Mapping[str, Any]) -> bool:
    """Whether `encode` can write *obj* (its apiVersion and kind are in the schema)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    return (
        isinstance(api_version, str) and isinstance(kind, str) and message_for(api_version, kind) is not None
    )


def _decode_envelope(body: bytes, unknown: list[str] | None, depth: int) -> dict[str, Any]:
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf prefix k8s\\x00")
    api_version = kind = encoding = content_type = ""
    raw = b""
    for number, wire, value in iter_fields(body[len(MAGIC) :]):
        if number == 1 and isinstance(value, bytes):
            for sub, sub_wire, sub_value in iter_fields(value):
                if sub == 1:
                    api_version = _scalar("string", sub_wire, sub_value)
                elif sub == 2:
                    kind = _scalar("string", sub_wire, sub_value)
        elif number == 2 and isinstance(value, bytes):
            raw = value
        elif number == 3 and isinstance(value, bytes):
            encoding = _text(value)
        elif number == 4 and isinstance(value, bytes):
            content_type = _text(value)
        elif unknown is not None:
            unknown.append(f"<envelope>: runtime.Unknown field {number} (wire type {wire})")
    if encoding:
        raise ProtobufError(f"unsupported contentEncoding {encoding!r}")
    if content_type not in ("", CONTENT_TYPE):
        raise ProtobufError(f"unsupported contentType {content_type!r} inside the protobuf envelope")
    if not kind:
        raise BadRequest("Object 'Kind' is missing in the protobuf body")
    name = message_for(api_version, kind)
    if name is None:
        raise BadRequest(f'no kind "{kind}" is registered for version "{api_version}" in scheme "berth"')
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    obj.update(_decode(name, raw, "", unknown, depth))
    return obj


def decode(body: bytes, unknown: list[str] | None = None) -> dict[str, Any]:
    """Decode a Kubernetes protobuf request body into a wire-form dict (``apiVersion``/``kind`` first).

    Raises `berth.api.errors.BadRequest` for a body without the ``k8s\\x00`` prefix, malformed protobuf,
    or an apiVersion/kind the schema does not know (kube's ``no kind "X" is registered for version "Y"``).
    Unknown field numbers are skipped and, when *unknown* is a list, described there.
    """
    try:
        return _decode_envelope(body, unknown, 0)
    except ProtobufError as exc:
        raise BadRequest(f"unable to decode the protobuf body: {exc}") from exc


# --- schema-driven encoding ---------------------------------------------------------------------------


def _as_int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ProtobufError(f"{path}: {value!r} is not an integer")
    return int(value)


def _encode_element(typ: str, value: Any, path: str, depth: int) -> tuple[int, bytes]:
    """(wire type, bytes after the key) of one value."""
    if typ == "string":
        if not isinstance(value, str):
            raise ProtobufError(f"{path}: {value!r} is not a string")
        data = value.encode()
        return _LEN, varint(len(data)) + data
    if typ == "bytes":
        try:
            data = base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ProtobufError(f"{path}: not base64") from exc
        return _LEN, varint(len(data)) + data
    if typ == "bool":
        if not isinstance(value, bool):
            raise ProtobufError(f"{path}: {value!r} is not a boolean")
        return _VARINT, varint(int(value))
    if typ in ("int32", "int64"):
        return _VARINT, varint(_as_int(value, path))
    if typ == "double":
        return _FIXED64, struct.pack("<d", float(value))
    if typ == "float":
        return _FIXED32, struct.pack("<f", float(value))
    if typ in MESSAGES:
        if not isinstance(value, Mapping):
            raise ProtobufError(f"{path}: {value!r} is not an object")
        data = _encode(typ, value, path, depth + 1)
    else:
        data = _encode_special(typ, value, path)
    return _LEN, varint(len(data)) + data


def _inline_keys(name: str) -> set[str]:
    keys: set[str] = set()
    for json_name, typ, flags in MESSAGES[name].values():
        keys |= _inline_keys(typ) if "i" in flags else {json_name}
    return keys


def _encode(name: str, obj: Mapping[str, Any], path: str, depth: int) -> bytes:
    if depth > _MAX_DEPTH:
        raise ProtobufError(f"{path or '<root>'}: nesting deeper than {_MAX_DEPTH}")
    out = bytearray()
    for number, (json_name, typ, flags) in sorted(MESSAGES[name].items()):
        if "i" in flags:
            part = {k: v for k, v in obj.items() if k in _inline_keys(typ)}
            if part:
                out += _len_field(number, _encode(typ, part, path, depth + 1))
            continue
        value = obj.get(json_name)
        if value is None:
            continue
        here = f"{path}.{json_name}" if path else json_name
        if typ.startswith("[]"):
            if not isinstance(value, list):
                raise ProtobufError(f"{here}: {value!r} is not a list")
            for index, item in enumerate(value):
                wire, data = _encode_element(typ[2:], item, f"{here}[{index}]", depth)
                out += _key(number, wire) + data
        elif typ.startswith("{}"):
            if not isinstance(value, Mapping):
                raise ProtobufError(f"{here}: {value!r} is not an object")
            for key in sorted(value):
                wire, data = _encode_element(typ[2:], value[key], f"{here}[{key}]", depth)
                entry = _len_field(1, str(key).encode()) + _key(2, wire) + data
                out += _len_field(number, entry)
        else:
            wire, data = _encode_element(typ, value, here, depth)
            out += _key(number, wire) + data
    return bytes(out)


def encode_message(name: str, obj: Mapping[str, Any]) -> bytes:
    """Encode *obj* as the bare message *name* (a key of `MESSAGES`); keys the schema lacks are dropped.

    Raises `ProtobufError` when a value has the wrong JSON type for its field.
    """
    return _encode(name, obj, "", 0)


def encode(obj: Mapping[str, Any]) -> bytes:
    """Encode a wire-form object as a Kubernetes protobuf body (``k8s\\x00`` + ``runtime.Unknown``).

    Raises `ProtobufError` when the apiVersion/kind is not in the schema (see `is_registered`) or a value
    has the wrong JSON type for its field.
    """
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    name = message_for(str(api_version), str(kind)) if api_version and kind else None
    if name is None:
        raise ProtobufError(f"no protobuf schema for kind {kind!r} in version {api_version!r}")
    assert isinstance(api_version, str) and isinstance(kind, str)
    type_meta = _len_field(1, api_version.encode()) + _len_field(2, kind.encode())
    raw = _encode(name, obj, "", 0)
    return MAGIC + _len_field(1, type_meta) + _len_field(2, raw) + _len_field(3, b"") + _len_field(4, b"")
