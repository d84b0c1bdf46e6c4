"""JSON merge patch (RFC 7386) over wire-form objects."""

from __future__ import annotations

from typing import Any

from berth.store.objcopy import copy_object

__all__ = ["merge_patch"]


def _copy_value(value: Any) -> Any:
    if isinstance(value, dict):
        return copy_object(value)
    if isinstance(value, list):
        return copy_object({"v": value})["v"]
    return value


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return _copy_value(patch)
    result: dict[str, Any] = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = _merge(result.get(k), v)
    return result


def merge_patch(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Apply `patch` to `target` (neither is modified); null deletes a key, non-objects replace.

    Unpatched subtrees of the result are shared with `target`; patched values are private copies.
    """
    out: dict[str, Any] = _merge(target, patch)
    return out
