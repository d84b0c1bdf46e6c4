"""Field checks every kind's validation shares: the `Context` that names the object and field of a
problem, Go-style value formatting, a decoded JSON value's schema type (`schema_type`), a CRD schema's type
check and its message (`is_schema_type`, `schema_type_message`), and cached name checks."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, NoReturn

from berth.api.errors import InvalidObjectError, QuantityError
from berth.api.names import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
)
from berth.api.quantity import nano_value

__all__ = [
    "Context",
    "dns_label_cached",
    "format_value",
    "is_schema_type",
    "label_value_cached",
    "qualified_name_cached",
    "schema_type",
    "schema_type_message",
    "subdomain_cached",
]

_INT32_MIN = -(1 << 31)
_INT32_MAX = (1 << 31) - 1


def format_value(value: object) -> str:
    """Render a bad value like Go's field.Error does: strings quoted, numbers bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def schema_type(value: object) -> str:
    """The JSON schema type of a decoded value (``integer`` and ``number`` apart)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


_SCHEMA_TYPES = {
    "boolean": lambda v: isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, Mapping),
    "array": lambda v: isinstance(v, list),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
}


def is_schema_type(value: object, expected: str) -> bool:
    """Whether the value is of the CRD schema type `expected` (boolean, string, object, array, integer)."""
    return bool(_SCHEMA_TYPES[expected](value))


def schema_type_message(path: str, value: object, expected: str) -> str:
    """The CRD schema's message for a wrongly typed field:
    ``Invalid value: "<actual>": <path> in body must be of type <expected>: "<actual>"``."""
    actual = schema_type(value)
    return f'Invalid value: "{actual}": {path} in body must be of type {expected}: "{actual}"'


class Context:
    """The object under validation; its methods raise :class:`InvalidObjectError` for one field.

    ``valid_pod_specs``, when not None, holds the JSON encodings of pod specs already found valid (see
    `berth.api.validation.validate_object`).
    """

    __slots__ = ("kind", "name", "source", "valid_pod_specs")

    def __init__(
        self, kind: str, name: str, source: str | None = None, valid_pod_specs: set[bytes] | None = None
    ) -> None:
        """Remember the kind, display name (``ns/name`` for namespaced objects), source and valid pod specs."""
        self.kind = kind
        self.name = name
        self.source = source
        self.valid_pod_specs = valid_pod_specs

    def fail(self, path: str, value: object, message: str) -> NoReturn:
        """Raise an InvalidObjectError with a ready-made message."""
        raise InvalidObjectError(self.kind, self.name, path, value, message, source=self.source)

    def required(self, path: str, detail: str = "") -> NoReturn:
        """``<path>: Required value[: detail]``."""
        self.fail(path, None, "Required value" + (f": {detail}" if detail else ""))

    def invalid(self, path: str, value: object, detail: str) -> NoReturn:
        """``<path>: Invalid value: "<value>": <detail>``."""
        self.fail(path, value, f"Invalid value: {format_value(value)}: {detail}")

    def not_supported(self, path: str, value: object, supported: Iterable[str]) -> NoReturn:
        """``<path>: Unsupported value: "<value>": supported values: "A", "B"``."""
        values = ", ".join(f'"{s}"' for s in supported)
        self.fail(path, value, f"Unsupported value: {format_value(value)}: supported values: {values}")

    def forbidden(self, path: str, detail: str) -> NoReturn:
        """``<path>: Forbidden: <detail>``."""
        self.fail(path, None, f"Forbidden: {detail}")

    def duplicate(self, path: str, value: object, detail: str = "") -> NoReturn:
        """``<path>: Duplicate value: "<value>"[: detail]``."""
        self.fail(path, value, f"Duplicate value: {format_value(value)}" + (f": {detail}" if detail else ""))

    # -- typed field helpers -------------------------------------------------------------------
    def mapping(self, path: str, value: object) -> Mapping[str, Any]:
        """Check *value* is an object (or absent, giving ``{}``)."""
        if type(value) is dict:
            return value
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.invalid(path, value, "must be an object")
        return value

    def sequence(self, path: str, value: object) -> list[Any]:
        """Check *value* is a list (or absent, giving ``[]``)."""
        if type(value) is list:
            return value
        if value is None:
            return []
        if not isinstance(value, list):
            self.invalid(path, value, "must be a list")
        return value

    def string(self, path: str, value: object) -> str:
        """Check *value* is a string (or absent, giving ``""``)."""
        if type(value) is str:
            return value
        if value is None:
            return ""
        if not isinstance(value, str):
            self.invalid(path, value, "must be a string")
        return value

    def integer(self, path: str, value: object, lo: int = _INT32_MIN, hi: int = _INT32_MAX) -> int:
        """Check *value* is an integer within [lo, hi]."""
        if type(value) is not int:
            self.invalid(path, value, "must be an integer")
        if not lo <= value <= hi:
            self.invalid(path, value, f"must be between {lo} and {hi}, inclusive")
        return value

    def quantity(self, path: str, value: object, non_negative: bool = True) -> int:
        """Check *value* parses as a quantity (and is >= 0); returns its nano-units."""
        try:
            nano = nano_value(value)
        except (QuantityError, TypeError):
            self.fail(path, value, f'invalid quantity "{value}"')
        if non_negative and nano < 0:
            self.invalid(path, value, "must be greater than or equal to 0")
        return nano

    def resource_list(self, path: str, value: object) -> dict[str, int]:
        """Check a ResourceList (name -> quantity); returns nano-units per resource."""
        rl = self.mapping(path, value)
        out = {}
        for k, v in rl.items():
            if not isinstance(k, str) or qualified_name_cached(k):
                self.invalid(path, k, "must be a standard resource name or a qualified name")
            try:
                nano = nano_value(v)
            except (QuantityError, TypeError):
                nano = -1
            # a good quantity is taken as is; `quantity` raises for the others, naming the field
            out[k] = nano if nano >= 0 else self.quantity(f"{path}.{k}", v)
        return out

    def label_map(self, path: str, value: object) -> Mapping[str, Any]:
        """Check a label map: qualified-name keys, label-value values."""
        labels = self.mapping(path, value)
        for k, v in labels.items():
            if not isinstance(k, str):
                self.invalid(path, k, "must be a string")
            errs = qualified_name_cached(k)
            if errs:
                self.invalid(path, k, errs[0])
            if not isinstance(v, str):
                self.invalid(f"{path}[{k}]", v, "must be a string")
            errs = label_value_cached(v)
            if errs:
                self.invalid(path, v, errs[0])
        return labels


@lru_cache(maxsize=8192)
def qualified_name_cached(value: str) -> tuple[str, ...]:
    """Cached qualified_name_errors (label keys repeat a lot)."""
    return tuple(qualified_name_errors(value))


@lru_cache(maxsize=8192)
def label_value_cached(value: str) -> tuple[str, ...]:
    """Cached label_value_errors."""
    return tuple(label_value_errors(value))


@lru_cache(maxsize=65536)
def subdomain_cached(value: str) -> tuple[str, ...]:
    return tuple(dns1123_subdomain_errors(value))


@lru_cache(maxsize=8192)
def dns_label_cached(value: str) -> tuple[str, ...]:
    return tuple(dns1123_label_errors(value))
