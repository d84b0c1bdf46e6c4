"""Fast deep copy of wire-form objects (dicts/lists of JSON-like scalars)."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["copy_object"]

_enc = msgspec.msgpack.Encoder()
_dec = msgspec.msgpack.Decoder()


def _slow_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _slow_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_slow_copy(v) for v in value]
    return value


def copy_object(obj: dict[str, Any]) -> dict[str, Any]:
    """A private deep copy of a wire-form object (tuples become lists; other scalars are kept)."""
    try:
        out: dict[str, Any] = _dec.decode(_enc.encode(obj))
        return out
    except (TypeError, ValueError, OverflowError, msgspec.MsgspecError):
        return dict(_slow_copy(obj))
