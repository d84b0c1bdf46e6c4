"""Accessors for object metadata of wire-form (dict) Kubernetes objects."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = [
    "api_group",
    "get_annotations",
    "get_labels",
    "get_name",
    "get_namespace",
    "namespaced_name",
    "object_key",
]

_EMPTY: Mapping[str, str] = MappingProxyType({})


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    md = obj.get("metadata")
    return md if md is not None else _EMPTY


def get_name(obj: Mapping[str, Any]) -> str:
    """``metadata.name`` (``""`` when missing)."""
    return str(_metadata(obj).get("name") or "")


def get_namespace(obj: Mapping[str, Any]) -> str:
    """``metadata.namespace`` (``""`` when missing or cluster-scoped)."""
    return str(_metadata(obj).get("namespace") or "")


def namespaced_name(obj: Mapping[str, Any]) -> str:
    """``"namespace/name"`` for objects with a namespace, else ``"name"``."""
    md = _metadata(obj)
    name = md.get("name") or ""
    ns = md.get("namespace")
    return f"{ns}/{name}" if ns else str(name)


def api_group(api_version: str) -> str:
    """The API group of an apiVersion: ``"v1"`` -> ``""``, ``"apps/v1"`` -> ``"apps"``."""
    group, sep, _ = api_version.rpartition("/")
    return group if sep else ""


def object_key(obj: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """Identity of an object independent of API version: ``(group, kind, namespace, name)``.

    The group is ``""`` for the core group, so ``v1`` and any future core version share keys;
    the namespace is ``""`` for cluster-scoped objects.
    """
    md = _metadata(obj)
    return (
        api_group(str(obj.get("apiVersion") or "")),
        str(obj.get("kind") or ""),
        str(md.get("namespace") or ""),
        str(md.get("name") or ""),
    )


def get_labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.labels`` (an empty read-only mapping when missing; not copied)."""
    labels = _metadata(obj).get("labels")
    return labels if labels else _EMPTY


def get_annotations(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """``metadata.annotations`` (an empty read-only mapping when missing; not copied)."""
    ann = _metadata(obj).get("annotations")
    return ann if ann else _EMPTY
