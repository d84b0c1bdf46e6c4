"""Node taints and pod tolerations (k8s.io/api/core/v1 ``Toleration.ToleratesTaint`` semantics)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "EFFECT_NO_EXECUTE",
    "EFFECT_NO_SCHEDULE",
    "EFFECT_PREFER_NO_SCHEDULE",
    "TAINT_EFFECTS",
    "Taint",
    "Toleration",
    "find_untolerated",
    "parse_taints",
    "parse_tolerations",
    "tolerates_all",
]

EFFECT_NO_SCHEDULE = "NoSchedule"
EFFECT_PREFER_NO_SCHEDULE = "PreferNoSchedule"
EFFECT_NO_EXECUTE = "NoExecute"
TAINT_EFFECTS = (EFFECT_NO_SCHEDULE, EFFECT_PREFER_NO_SCHEDULE, EFFECT_NO_EXECUTE)


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint: ``key=value:effect``."""

    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        """Render like kubectl: ``key=value:effect`` (``key:effect`` when the value is empty)."""
        if self.value:
            return f"{self.key}={self.value}:{self.effect}"
        return f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod toleration; ``operator`` is ``Equal`` (the default, also for ``""``) or ``Exists``."""

    key: str
    operator: str
    value: str
    effect: str
    toleration_seconds: int | None

    def tolerates(self, taint: Taint) -> bool:
        """Whether this toleration tolerates *taint*.

        An empty effect matches every effect; an empty key (with ``Exists``) matches every key;
        ``Equal`` (or an empty operator) compares values, ``Exists`` ignores them; any other
        operator tolerates nothing.
        """
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        op = self.operator
        if op == "Exists":
            return True
        if op in ("", "Equal"):
            return self.value == taint.value
        return False


def _str(d: Mapping[str, Any], key: str) -> str:
    v = d.get(key)
    return "" if v is None else str(v)


def parse_taints(items: list[dict[str, Any]] | None) -> tuple[Taint, ...]:
    """Build taints from ``node.spec.taints`` (a missing value or effect reads as ``""``)."""
    if not items:
        return ()
    return tuple(Taint(_str(t, "key"), _str(t, "value"), _str(t, "effect")) for t in items)


_TOLERATIONS_SEEN: dict[tuple[tuple[tuple[str, Any], ...], ...], tuple[Toleration, ...]] = {}
"""Tolerations built before, by their items' fields (many pods carry the same few lists)."""


def _tolerations_key(items: list[dict[str, Any]]) -> tuple[tuple[tuple[str, Any], ...], ...] | None:
    """The items' fields in order, when every value is a plain string or integer (then equal keys mean equal
    tolerations); None otherwise (built afresh)."""
    parts = []
    for t in items:
        if type(t) is not dict:
            return None
        for v in t.values():
            tv = type(v)
            if tv is not str and tv is not int:
                return None
        parts.append(tuple(t.items()))
    return tuple(parts)


def parse_tolerations(items: list[dict[str, Any]] | None) -> tuple[Toleration, ...]:
    """Build tolerations from ``pod.spec.tolerations`` (missing strings read as ``""``)."""
    if not items:
        return ()
    key = _tolerations_key(items)
    if key is None:
        return _build_tolerations(items)
    out = _TOLERATIONS_SEEN.get(key)
    if out is None:
        out = _build_tolerations(items)
        if len(_TOLERATIONS_SEEN) >= 1024:
            _TOLERATIONS_SEEN.clear()
        _TOLERATIONS_SEEN[key] = out
    return out


def _build_tolerations(items: list[dict[str, Any]]) -> tuple[Toleration, ...]:
    out = []
    for t in items:
        seconds = t.get("tolerationSeconds")
        out.append(
            Toleration(
                _str(t, "key"),
                _str(t, "operator"),
                _str(t, "value"),
                _str(t, "effect"),
                None if seconds is None else int(seconds),
            )
        )
    return tuple(out)


def tolerates_all(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    """Whether any of *tolerations* tolerates *taint* (kube's ``TolerationsTolerateTaint``)."""
    return any(t.tolerates(taint) for t in tolerations)


def find_untolerated(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: frozenset[str]
) -> Taint | None:
    """Return the first taint whose effect is in *effects* and that no toleration tolerates, else None."""
    for taint in taints:
        if taint.effect in effects and not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None
