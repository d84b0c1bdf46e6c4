"""Kind identity in the store: `ResourceKey` = (group, kind), and resolving it to kind facts."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from berth.api.watch import ResourceKey

__all__ = [
    "KindInfoLike",
    "KindResolver",
    "KindSpec",
    "ResourceKey",
    "UnknownKind",
    "api_kinds_resolver",
    "group_of",
    "key_of",
    "static_kinds",
]


class UnknownKind(KeyError):
    """The resolver does not know a (group, kind)."""


class KindInfoLike(Protocol):
    """What the store needs to know about a kind (berth.api.kinds.KindInfo satisfies it)."""

    @property
    def group(self) -> str:
        """API group ("" for core)."""
        ...

    @property
    def kind(self) -> str:
        """Kind name, e.g. "Pod"."""
        ...

    @property
    def plural(self) -> str:
        """Resource name used in messages and URLs, e.g. "pods"."""
        ...

    @property
    def namespaced(self) -> bool:
        """Whether objects live in a namespace."""
        ...

    @property
    def has_status(self) -> bool:
        """Whether the kind has a status subresource (status is then ignored by plain updates)."""
        ...


KindResolver = Callable[[str, str], KindInfoLike]
"""Resolves (group, kind) to kind facts; raises KeyError (e.g. `UnknownKind`) for unknown kinds."""


@dataclass(frozen=True, slots=True)
class KindSpec:
    """A minimal kind description for injecting into a store (tests, custom kinds)."""

    group: str
    kind: str
    plural: str
    namespaced: bool
    has_status: bool = True


def group_of(api_version: str) -> str:
    """The group of an apiVersion: "v1" → "", "apps/v1" → "apps"."""
    slash = api_version.find("/")
    return api_version[:slash] if slash >= 0 else ""


def key_of(obj: Mapping[str, Any]) -> ResourceKey:
    """The (group, kind) of a wire-form object, from its apiVersion and kind."""
    return (group_of(obj.get("apiVersion") or ""), obj.get("kind") or "")


def static_kinds(specs: Iterable[KindInfoLike]) -> KindResolver:
    """A resolver over a fixed set of kinds."""
    table: dict[ResourceKey, KindInfoLike] = {(s.group, s.kind): s for s in specs}

    def resolve(group: str, kind: str) -> KindInfoLike:
        try:
            return table[(group, kind)]
        except KeyError:
            raise UnknownKind(f"unknown kind {kind!r} in group {group!r}") from None

    return resolve


_API_TABLE: dict[ResourceKey, KindInfoLike] = {}


def api_kinds_resolver(group: str, kind: str) -> KindInfoLike:
    """Default resolver backed by berth.api.kinds (imported lazily on first use)."""
    if not _API_TABLE:
        from berth.api import kinds as api_kinds  # lazy: the api layer may be built after the store

        for info in api_kinds.all_kinds():
            _API_TABLE.setdefault((info.group, info.kind), info)
    try:
        return _API_TABLE[(group, kind)]
    except KeyError:
        raise UnknownKind(f"unknown kind {kind!r} in group {group!r}") from None
