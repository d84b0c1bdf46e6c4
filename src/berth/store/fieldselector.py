"""Field selectors (``?fieldSelector=``): ``metadata.name``, ``metadata.namespace``, ``spec.nodeName``,
``spec.schedulerName``, ``status.phase`` and an Event's ``involvedObject.*``, ``reason``, ``type``, ``source``
and ``reportingComponent``, with ``=``, ``==``, ``!=``, comma-ANDed (apimachinery fields.Parse)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from berth.api.errors import BadRequest

__all__ = ["SUPPORTED_FIELDS", "FieldSelector", "compile_field_selector"]

_Getter = Callable[[Mapping[str, Any]], str]


def _nested(section: str, field: str) -> _Getter:
    def get(obj: Mapping[str, Any]) -> str:
        part = obj.get(section)
        if not part:
            return ""
        value = part.get(field)
        return value if isinstance(value, str) else ("" if value is None else str(value))

    return get


SUPPORTED_FIELDS: dict[str, _Getter] = {
    "metadata.name": _nested("metadata", "name"),
    "metadata.namespace": _nested("metadata", "namespace"),
    "spec.nodeName": _nested("spec", "nodeName"),
    "spec.schedulerName": _nested("spec", "schedulerName"),
    "status.phase": _nested("status", "phase"),
    # an Event's fields (kubectl describe lists an object's events with these)
    "involvedObject.kind": _nested("involvedObject", "kind"),
    "involvedObject.namespace": _nested("involvedObject", "namespace"),
    "involvedObject.name": _nested("involvedObject", "name"),
    "involvedObject.uid": _nested("involvedObject", "uid"),
    "involvedObject.apiVersion": _nested("involvedObject", "apiVersion"),
    "involvedObject.resourceVersion": _nested("involvedObject", "resourceVersion"),
    "involvedObject.fieldPath": _nested("involvedObject", "fieldPath"),
    "reason": lambda obj: str(obj.get("reason") or ""),
    "reportingComponent": lambda obj: str(obj.get("reportingComponent") or ""),
    "type": lambda obj: str(obj.get("type") or ""),
    "source": _nested("source", "component"),
}
"""Field label → value getter (absent fields read as "")."""

_OPERATORS = ("!=", "==", "=")


class FieldSelector:
    """A compiled field selector: an AND of (field, value, negated) terms."""

    __slots__ = ("_terms", "terms")

    def __init__(self, terms: tuple[tuple[str, str, bool], ...]) -> None:
        """`terms` are (field label, value, negated) triples; fields must be in `SUPPORTED_FIELDS`."""
        self.terms = terms
        self._terms = tuple((SUPPORTED_FIELDS[f], v, neg) for f, v, neg in terms)

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether the object satisfies every term."""
        for get, value, negated in self._terms:  # noqa: SIM110 - hot path
            if (get(obj) == value) is negated:
                return False
        return True

    def is_everything(self) -> bool:
        """True when there are no terms."""
        return not self.terms

    def exact(self, field: str) -> str | None:
        """The value required by an ``=`` term on `field`, if any (lets callers use an index)."""
        for f, v, neg in self.terms:
            if f == field and not neg:
                return v
        return None

    def __str__(self) -> str:
        """Canonical string form (terms sorted)."""
        return ",".join(f"{f}{'!=' if neg else '='}{_escape(v)}" for f, v, neg in self.terms)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _split_terms(s: str) -> list[str]:
    """Split on commas not escaped by a backslash."""
    terms: list[str] = []
    start, i, n = 0, 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == ",":
            terms.append(s[start:i])
            start = i + 1
        i += 1
    terms.append(s[start:])
    return terms


def _unescape(value: str) -> str:
    out: list[str] = []
    i, n = 0, len(value)
    while i < n:
        c = value[i]
        if c == "\\":
            if i + 1 >= n or value[i + 1] not in "\\,=":
                raise BadRequest(f"invalid field selector: invalid escape sequence: {value[i : i + 2]}")
            out.append(value[i + 1])
            i += 2
            continue
        if c in ",=":
            raise BadRequest(f"invalid field selector: unescaped character in value: {c}")
        out.append(c)
        i += 1
    return "".join(out)


@lru_cache(maxsize=1024)
def compile_field_selector(s: str) -> FieldSelector:
    """Parse a field selector string ("" selects everything); raises BadRequest."""
    terms: list[tuple[str, str, bool]] = []
    for part in sorted(_split_terms(s)):
        if not part:
            continue
        for i in range(len(part)):
            op = next((o for o in _OPERATORS if part.startswith(o, i)), None)
            if op is not None:
                lhs, rhs = part[:i], part[i + len(op) :]
                break
        else:
            raise BadRequest(f"invalid selector: '{s}'; can't understand '{part}'")
        field = lhs.strip()
        if field not in SUPPORTED_FIELDS:
            raise BadRequest(f"field label not supported: {field}")
        terms.append((field, _unescape(rhs), op == "!="))
    return FieldSelector(tuple(terms))
