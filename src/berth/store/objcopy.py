"""Fast deep copy of wire-form objects (dicts/lists of JSON-like scalars)."""

from __future__ import annotations

from typing import Any

__all__ = ["copy_object"]

# Containers are copied; scalars (str, int, float, bool, None) are immutable and shared with the original, so a
# copy costs one allocation per dict and list, not one per string (a serialising round trip would allocate
# every key and value again: twice the memory of a large cluster's objects).


def _copy_value(value: Any) -> Any:
    """A private copy of one value of any shape (dict subclasses become dicts, tuples lists)."""
    if isinstance(value, dict):
        return _copy_dict(value)
    if isinstance(value, (list, tuple)):
        return _copy_list(value)
    return value


def _copy_dict(d: dict[Any, Any]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for k, v in d.items():
        t = type(v)
        if t is dict:
            out[k] = _copy_dict(v)
        elif t is list:
            out[k] = _copy_list(v)
        elif t is str or t is int or t is bool or v is None or t is float:
            out[k] = v
        else:
            out[k] = _copy_value(v)
    return out


def _copy_list(items: list[Any] | tuple[Any, ...]) -> list[Any]:
    out: list[Any] = []
    for v in items:
        t = type(v)
        if t is dict:
            out.append(_copy_dict(v))
        elif t is str or t is int or t is bool or v is None or t is float:
            out.append(v)
        else:
            out.append(_copy_value(v))
    return out


def copy_object(obj: dict[str, Any]) -> dict[str, Any]:
    """A private deep copy of a wire-form object (tuples become lists; scalars are shared, being immutable)."""
    return _copy_dict(obj)
