"""Small helpers shared by the plugins: args decoding with kube-style field errors, Go integer maths."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from berth.scheduler.framework import ConfigError
from berth.scheduler.framework.nodetable import IntArray


def fmt_value(value: object) -> str:
    """A value as apimachinery's field errors print it (strings quoted)."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def invalid(plugin: str, path: str, value: object, detail: str) -> ConfigError:
    """A field.Invalid error: ``<plugin>: <path>: Invalid value: <value>: <detail>``."""
    return ConfigError(f"{plugin}: {path}: Invalid value: {fmt_value(value)}: {detail}")


def unsupported(plugin: str, path: str, value: object, supported: Iterable[str]) -> ConfigError:
    """A field.NotSupported error listing the supported values."""
    listed = ", ".join(f'"{s}"' for s in supported)
    return ConfigError(f"{plugin}: {path}: Unsupported value: {fmt_value(value)}: supported values: {listed}")


def required(plugin: str, path: str, detail: str = "") -> ConfigError:
    """A field.Required error."""
    return ConfigError(f"{plugin}: {path}: Required value" + (f": {detail}" if detail else ""))


def check_fields(plugin: str, path: str, args: Mapping[str, Any], known: Iterable[str]) -> None:
    """Reject unknown fields as kube's strict args decoding does (``decoding args for plugin X: strict decoding
    error: unknown field "path"``), with a "did you mean" when one known field is close."""
    allowed = set(known)
    for k in args:
        if k not in allowed:
            where = f"{path}.{k}" if path else str(k)
            near = difflib.get_close_matches(str(k), sorted(allowed), n=1, cutoff=0.75)
            hint = f' (did you mean "{near[0]}"?)' if near else ""
            raise ConfigError(
                f'decoding args for plugin {plugin}: strict decoding error: unknown field "{where}"{hint}'
            )


def as_mapping(plugin: str, path: str, value: Any) -> Mapping[str, Any]:
    """``value`` as an object (None reads as empty)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise invalid(plugin, path, value, "must be an object")
    return value


def as_list(plugin: str, path: str, value: Any) -> list[Any]:
    """``value`` as a list (None reads as empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise invalid(plugin, path, value, "must be a list")
    return value


def as_int(plugin: str, path: str, value: Any) -> int:
    """``value`` as an integer (bools and floats with a fraction rejected)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid(plugin, path, value, "must be an integer")
    if isinstance(value, float) and not value.is_integer():
        raise invalid(plugin, path, value, "must be an integer")
    return int(value)


def as_str(plugin: str, path: str, value: Any) -> str:
    """``value`` as a string."""
    if not isinstance(value, str):
        raise invalid(plugin, path, value, "must be a string")
    return value


def go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_div_vec(a: IntArray, b: int) -> IntArray:
    """Go's integer division of an array by a positive divisor (truncates toward zero)."""
    out: IntArray = np.where(a < 0, -((-a) // b), a // b)
    return out


def go_round(x: float) -> int:
    """Go's math.Round (half away from zero) for a finite float."""
    t = float(int(x))
    frac = x - t
    if frac >= 0.5:
        return int(t) + 1
    if frac <= -0.5:
        return int(t) - 1
    return int(t)


def is_extended_resource(name: str) -> bool:
    """kube's IsExtendedResourceName: a domain-prefixed name outside kubernetes.io (not ``requests.*``)."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def is_scalar_resource(name: str) -> bool:
    """kube's IsScalarResourceName: extended, hugepages-*, kubernetes.io/-prefixed or attachable-volumes-*."""
    return (
        is_extended_resource(name)
        or name.startswith("hugepages-")
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )
