"""The fields of KubeSchedulerConfiguration, per version, for strict decoding.

kube-scheduler decodes its configuration file with a strict codec: a field the version's Go types do not
declare is an error, reported as ``strict decoding error: unknown field "profiles[0].plugin"`` (all unknown
fields of the file, joined by ", "). Field names are matched exactly (case-sensitively), as
sigs.k8s.io/json's strict mode does. `unknown_fields` walks a document with the field tree of its version
and returns those entries, each with a "did you mean" when one known field of the same object is close.

Plugin ``args`` are not walked here: each plugin decodes its own args strictly.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework.extender_config import EXTENDER_FIELDS, MANAGED_FIELDS, TLS_FIELDS

# A field tree: field name -> subtree for an object, ("list", subtree) for a list of objects, None for a leaf.
Tree = Mapping[str, Any]

_LEADER_ELECTION: Tree = dict.fromkeys(
    (
        "leaderElect",
        "leaseDuration",
        "renewDeadline",
        "retryPeriod",
        "resourceLock",
        "resourceName",
        "resourceNamespace",
    )
)
_CLIENT_CONNECTION: Tree = dict.fromkeys(("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"))
_PLUGIN: Tree = dict.fromkeys(("name", "weight"))
_PLUGIN_SET: Tree = {"enabled": ("list", _PLUGIN), "disabled": ("list", _PLUGIN)}
_PLUGIN_CONFIG: Tree = dict.fromkeys(("name", "args"))
_EXTENDER: Tree = {
    **dict.fromkeys(EXTENDER_FIELDS),
    "tlsConfig": dict.fromkeys(TLS_FIELDS),
    "managedResources": ("list", dict.fromkeys(MANAGED_FIELDS)),
}

EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
"""The extension points a profile's ``plugins`` names (v1's, besides ``multiPoint``)."""

# Extension points of each version's Plugins (v1beta2 gained preEnqueue in 1.26; multiPoint came with v1beta3).
_POINTS_V1BETA1 = EXTENSION_POINTS[1:]
_POINTS_V1BETA2 = EXTENSION_POINTS
_POINTS_V1BETA3 = (*_POINTS_V1BETA2, "multiPoint")

# Berth reads Koordinator's published spelling ``reservation`` as ``reserve``.
_POINT_ALIASES = ("reservation",)


def _tree(points: tuple[str, ...], *, profile_percentage: bool, old_top: bool, delay_cache: bool) -> Tree:
    plugins = {p: _PLUGIN_SET for p in (*points, *_POINT_ALIASES)}
    profile: dict[str, Any] = {
        "schedulerName": None,
        "plugins": plugins,
        "pluginConfig": ("list", _PLUGIN_CONFIG),
    }
    if profile_percentage:
        profile["percentageOfNodesToScore"] = None
    top: dict[str, Any] = {
        "apiVersion": None,
        "kind": None,
        "parallelism": None,
        "leaderElection": _LEADER_ELECTION,
        "clientConnection": _CLIENT_CONNECTION,
        "enableProfiling": None,
        "enableContentionProfiling": None,
        "percentageOfNodesToScore": None,
        "podInitialBackoffSeconds": None,
        "podMaxBackoffSeconds": None,
        "profiles": ("list", profile),
        "extenders": ("list", _EXTENDER),
    }
    if old_top:  # removed in v1beta3
        top["healthzBindAddress"] = None
        top["metricsBindAddress"] = None
    if delay_cache:
        top["delayCacheUntilActive"] = None
    return top


TREES: Mapping[str, Tree] = {
    "kubescheduler.config.k8s.io/v1": _tree(
        _POINTS_V1BETA3, profile_percentage=True, old_top=False, delay_cache=True
    ),
    "kubescheduler.config.k8s.io/v1beta3": _tree(
        _POINTS_V1BETA3, profile_percentage=True, old_top=False, delay_cache=False
    ),
    "kubescheduler.config.k8s.io/v1beta2": _tree(
        _POINTS_V1BETA2, profile_percentage=False, old_top=True, delay_cache=False
    ),
    "kubescheduler.config.k8s.io/v1beta1": _tree(
        _POINTS_V1BETA1, profile_percentage=False, old_top=True, delay_cache=False
    ),
}
"""The field tree of each KubeSchedulerConfiguration version Berth reads."""


def _hint(name: str, known: Mapping[str, Any]) -> str:
    near = difflib.get_close_matches(name, [k for k in known if k not in _POINT_ALIASES], n=2, cutoff=0.75)
    if len(near) == 1 or (near and name.lower() == near[0].lower()):
        return f' (did you mean "{near[0]}"?)'
    return ""


def _walk(value: Any, tree: Any, path: str, out: list[str]) -> None:
    if isinstance(tree, tuple):  # a list of objects
        if isinstance(value, list):
            for i, item in enumerate(value):
                _walk(item, tree[1], f"{path}[{i}]", out)
        return
    if not isinstance(tree, Mapping) or not isinstance(value, Mapping):
        return  # a leaf, or a type error left to the field's own check
    for key, sub in value.items():
        name = str(key)
        where = f"{path}.{name}" if path else name
        if name not in tree:
            out.append(f'unknown field "{where}"{_hint(name, tree)}')
        elif sub is not None:
            _walk(sub, tree[name], where, out)


def unknown_fields(doc: Mapping[str, Any], api_version: str) -> list[str]:
    """The strict-decoding errors of ``doc`` read as ``api_version``: one ``unknown field "<path>"`` entry per
    field the version does not declare, in document order (plugin ``args`` are left to the plugins)."""
    out: list[str] = []
    _walk(doc, TREES[api_version], "", out)
    return out


def strict_decoding_error(entries: list[str]) -> str:
    """kube's aggregate message for strict-decoding errors (``strict decoding error: <e1>, <e2>``)."""
    return "strict decoding error: " + ", ".join(entries)
