"""API discovery documents, as kube-apiserver serves them, computed from ``berth.api.kinds``.

* ``/api`` (``APIVersions``), ``/apis`` (``APIGroupList``), ``/apis/{group}`` (``APIGroup``),
* ``/api/v1`` and ``/apis/{group}/{version}`` (``APIResourceList``: every resource with its verbs, short names,
  categories and storage version hash, then its subresources as ``resource/subresource`` entries),
* aggregated discovery (``APIGroupDiscoveryList`` in ``apidiscovery.k8s.io`` ``v2``, and ``v2beta1`` that
  kubectl up to 1.29 asks for) for ``/api`` and ``/apis``.

Built-in kinds are described as kube's own registry describes them (verbs sorted, ``responseKind`` group and
version empty when they are the resource's own), Koordinator's and scheduler-plugins' kinds as
apiextensions-apiserver describes a CRD (its verb order, ``responseKind`` fully qualified). Groups come in
kube's priority order (apps, policy, scheduling.k8s.io, coordination.k8s.io), then the CRD groups in
``berth.api.kinds`` order, so that a name two groups share (``elasticquotas``, ``eq``) resolves in kubectl to
the group Berth prefers. Every function is pure and cached: treat the documents returned as read-only.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Mapping
from typing import Any

from berth.api.kinds import BUILTIN_GROUPS, KindInfo, all_kinds
from berth.server.media import JSON_RANGES, accepted

__all__ = [
    "AGGREGATED_VERSIONS",
    "aggregated",
    "aggregated_content_type",
    "api_group",
    "api_group_list",
    "api_versions",
    "negotiate_aggregated",
    "resource_list",
    "served_kinds",
    "storage_version_hash",
]

AGGREGATED_VERSIONS = ("v2", "v2beta1")
"""The ``apidiscovery.k8s.io`` versions of the aggregated document served (kubectl 1.30+ asks for v2)."""

_BUILTIN_GROUPS = BUILTIN_GROUPS
"""Groups kube-apiserver itself serves, in its group priority order (after the core group)."""

_NOT_SERVED = frozenset({"berth.dev"})
"""Groups of ``berth.api.kinds`` that are input formats of ``berth simulate``, not API resources."""

_CATEGORIES: Mapping[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): ("all",),
    ("apps", "replicasets"): ("all",),
    ("apps", "deployments"): ("all",),
    ("apps", "statefulsets"): ("all",),
    ("apps", "daemonsets"): ("all",),
    ("", "services"): ("all",),
    ("", "replicationcontrollers"): ("all",),
    ("autoscaling", "horizontalpodautoscalers"): ("all",),
    ("batch", "jobs"): ("all",),
    ("batch", "cronjobs"): ("all",),
}

_BUILTIN_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
_CRD_VERBS = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")
_SUBRESOURCE_VERBS = ("get", "patch", "update")


def served_kinds() -> tuple[KindInfo, ...]:
    """The kinds the API serves: every kind ``berth.api.kinds`` registers but ``berth simulate``'s Scenario."""
    return tuple(k for k in all_kinds() if k.group not in _NOT_SERVED)


def _is_builtin(group: str) -> bool:
    return group in _BUILTIN_GROUPS


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """kube's ``storageVersionHash``: the first 8 bytes of SHA-256 of ``group/version/kind``, base64."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


@functools.cache
def _group_versions() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each served group with its versions, in discovery order (the core group first)."""
    order: dict[str, list[str]] = {}
    for k in served_kinds():
        versions = order.setdefault(k.group, [])
        if k.version not in versions:
            versions.append(k.version)

    def rank(group: str) -> tuple[int, int]:
        if _is_builtin(group):
            return (0, _BUILTIN_GROUPS.index(group))
        return (1, list(order).index(group))

    return tuple((g, tuple(order[g])) for g in sorted(order, key=rank))


def _kinds_of(group: str, version: str) -> tuple[KindInfo, ...]:
    return tuple(k for k in served_kinds() if k.group == group and k.version == version)


def _group_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


# ---- what each resource offers ----------------------------------------------------------------------------------


def _subresources(k: KindInfo) -> list[tuple[str, str, str, str, tuple[str, ...]]]:
    """Each subresource of a kind: (name, group, version, kind, verbs); group and version as the legacy
    APIResource carries them (empty: the parent's)."""
    subs: list[tuple[str, str, str, str, tuple[str, ...]]] = []
    if k.group == "" and k.kind == "Pod":
        subs.append(("binding", "", "", "Binding", ("create",)))
        subs.append(("eviction", "policy", "v1", "Eviction", ("create",)))
    if k.group == "apps" and k.kind in ("ReplicaSet", "Deployment", "StatefulSet"):
        subs.append(("scale", "autoscaling", "v1", "Scale", _SUBRESOURCE_VERBS))
    if k.has_status:
        subs.append(("status", "", "", k.kind, _SUBRESOURCE_VERBS))
    return sorted(subs)


def _legacy_resources(group: str, version: str) -> list[dict[str, Any]]:
    builtin = _is_builtin(group)
    out: list[dict[str, Any]] = []
    for k in _kinds_of(group, version):
        r: dict[str, Any] = {
            "name": k.plural,
            "singularName": k.singular,
            "namespaced": k.namespaced,
            "kind": k.kind,
            "verbs": list(_BUILTIN_VERBS if builtin else _CRD_VERBS),
        }
        if k.short_names:
            r["shortNames"] = list(k.short_names)
        categories = _CATEGORIES.get((group, k.plural))
        if categories:
            r["categories"] = list(categories)
        r["storageVersionHash"] = storage_version_hash(group, version, k.kind)
        out.append(r)
        for name, sub_group, sub_version, sub_kind, verbs in _subresources(k):
            s: dict[str, Any] = {"name": f"{k.plural}/{name}", "singularName": "", "namespaced": k.namespaced}
            if sub_group:
                s["group"] = sub_group
                s["version"] = sub_version
            s["kind"] = sub_kind
            s["verbs"] = list(verbs)
            out.append(s)
    return sorted(out, key=lambda r: str(r["name"]))


def _response_kind(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def _aggregated_resources(group: str, version: str) -> list[dict[str, Any]]:
    builtin = _is_builtin(group)
    out: list[dict[str, Any]] = []
    for k in sorted(_kinds_of(group, version), key=lambda k: k.plural):
        # kube's own registry leaves group and version out of a kind in the resource's own group version;
        # apiextensions-apiserver names them for a CRD's
        own_group, own_version = ("", "") if builtin else (group, version)
        r: dict[str, Any] = {
            "resource": k.plural,
            "responseKind": _response_kind(own_group, own_version, k.kind),
            "scope": "Namespaced" if k.namespaced else "Cluster",
            "singularResource": k.singular,
            "verbs": list(_BUILTIN_VERBS if builtin else _CRD_VERBS),
        }
        if k.short_names:
            r["shortNames"] = list(k.short_names)
        categories = _CATEGORIES.get((group, k.plural))
        if categories:
            r["categories"] = list(categories)
        subs = []
        for name, sub_group, sub_version, sub_kind, verbs in _subresources(k):
            if not sub_group:
                sub_group, sub_version = own_group, own_version
            subs.append(
                {
                    "subresource": name,
                    "responseKind": _response_kind(sub_group, sub_version, sub_kind),
                    "verbs": list(verbs),
                }
            )
        if subs:
            r["subresources"] = subs
        out.append(r)
    return out


# ---- the documents --------------------------------------------------------------------------------------------


@functools.cache
def api_versions(server_address: str = "") -> dict[str, Any]:
    """``/api``: the ``APIVersions`` of the core group (``serverAddressByClientCIDRs`` names `server_address`
    for every client when given, as kube-apiserver names its advertised address)."""
    cidrs = [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}] if server_address else []
    return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": cidrs}


def _api_group(group: str, versions: tuple[str, ...]) -> dict[str, Any]:
    entries = [{"groupVersion": _group_version(group, v), "version": v} for v in versions]
    return {"name": group, "versions": entries, "preferredVersion": dict(entries[0])}


@functools.cache
def api_group_list() -> dict[str, Any]:
    """``/apis``: the ``APIGroupList`` of every named group, each with its preferred version."""
    groups = [_api_group(g, versions) for g, versions in _group_versions() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


@functools.cache
def api_group(group: str) -> dict[str, Any] | None:
    """``/apis/{group}``: the ``APIGroup``, or None for a group not served."""
    for g, versions in _group_versions():
        if g and g == group:
            return {"kind": "APIGroup", "apiVersion": "v1", **_api_group(g, versions)}
    return None


@functools.cache
def resource_list(group: str, version: str) -> dict[str, Any] | None:
    """``/api/v1`` (group ``""``) or ``/apis/{group}/{version}``: the ``APIResourceList``, or None for a group
    version not served. As kube-apiserver writes it, the core group's list has no ``apiVersion``."""
    if not _kinds_of(group, version):
        return None
    doc: dict[str, Any] = {"kind": "APIResourceList"}
    if group:
        doc["apiVersion"] = "v1"
    doc["groupVersion"] = _group_version(group, version)
    doc["resources"] = _legacy_resources(group, version)
    return doc


@functools.cache
def aggregated(path: str, version: str = "v2") -> dict[str, Any]:
    """The aggregated discovery document (``APIGroupDiscoveryList``) of ``/api`` (the core group) or ``/apis``
    (every named group), in ``apidiscovery.k8s.io`` `version` (``v2`` or ``v2beta1``)."""
    if path not in ("/api", "/apis"):
        raise ValueError(f"aggregated discovery is served at /api and /apis, not {path}")
    if version not in AGGREGATED_VERSIONS:
        raise ValueError(f"aggregated discovery versions are {AGGREGATED_VERSIONS}, not {version}")
    items = []
    for group, versions in _group_versions():
        if bool(group) != (path == "/apis"):
            continue
        metadata: dict[str, Any] = {"name": group} if group else {}
        metadata["creationTimestamp"] = None
        items.append(
            {
                "metadata": metadata,
                "versions": [
                    {"version": v, "resources": _aggregated_resources(group, v), "freshness": "Current"}
                    for v in versions
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{version}",
        "metadata": {},
        "items": items,
    }


def aggregated_content_type(version: str = "v2") -> str:
    """The Content-Type of an aggregated discovery response (clients check it before reading the body)."""
    return f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"


def negotiate_aggregated(accept: str) -> str | None:
    """The aggregated discovery version (``"v2"`` or ``"v2beta1"``) the Accept header asks for first, or None
    when it asks for the legacy documents (a plain ``application/json`` listed first, or no aggregated range
    the server writes: JSON only)."""
    for media, params in accepted(accept):
        if media not in JSON_RANGES:
            continue
        if params.get("as") == "APIGroupDiscoveryList" and params.get("g") == "apidiscovery.k8s.io":
            if params.get("v") in AGGREGATED_VERSIONS:
                return params["v"]
            continue
        if "as" not in params:
            return None
    return None
