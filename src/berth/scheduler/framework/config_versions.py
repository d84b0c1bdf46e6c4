"""The KubeSchedulerConfiguration versions Berth reads, and how the older ones convert to v1.

``kubescheduler.config.k8s.io/v1`` is current. ``v1beta3`` has v1's shape and v1's default plugins (v1 was
v1beta3 promoted, in Kubernetes 1.25). ``v1beta2`` (and the ``v1beta1`` of the seeds' examples) have no
``multiPoint``: their defaults are per extension point, which is the same as v1's default plugins at every
point they implement, but with the score weights of their time: every default score plugin 1 except
PodTopologySpread 2 (v1beta3 raised TaintToleration to 3 and NodeAffinity, InterPodAffinity to 2).

What cannot convert: ``v1beta1`` plugins that ``v1beta2`` removed (NodeResourcesLeastAllocated,
NodeResourcesMostAllocated, RequestedToCapacityRatio, NodeLabel, ServiceAffinity) are refused with the v1
replacement named. The defaults are those of kube 1.28 and later for every version: the cloud volume-limit
plugins (EBSLimits, GCEPDLimits, AzureDiskLimits) are left to NodeVolumeLimits, and SelectorSpread and
NodePreferAvoidPods are not default plugins (kube removed them from the defaults in 1.24); naming a plugin
Berth does not have is refused when the profile is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

GROUP = "kubescheduler.config.k8s.io"
V1 = f"{GROUP}/v1"
V1BETA3 = f"{GROUP}/v1beta3"
V1BETA2 = f"{GROUP}/v1beta2"
V1BETA1 = f"{GROUP}/v1beta1"
API_VERSIONS = (V1, V1BETA3, V1BETA2, V1BETA1)
"""Every version Berth reads, newest first."""

DEPRECATED: Mapping[str, str] = {
    V1BETA3: "KubeSchedulerConfiguration v1beta3 is deprecated in v1.26, will be removed in v1.29",
    V1BETA2: "KubeSchedulerConfiguration v1beta2 is deprecated in v1.25, will be removed in v1.28",
    V1BETA1: "KubeSchedulerConfiguration v1beta1 is deprecated in v1.22, will be removed in v1.23",
}
"""kube-scheduler's own notice for each deprecated version (v1beta2/v1beta3: its loadConfig's wording)."""

PER_POINT_WEIGHTS: Mapping[str, int] = {
    "TaintToleration": 1,
    "NodeAffinity": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 1,
    "NodeResourcesFit": 1,
    "NodeResourcesBalancedAllocation": 1,
    "ImageLocality": 1,
}
"""The default score weights of v1beta2 and v1beta1 (kube's v1beta2 getDefaultPlugins)."""

REMOVED_IN_V1BETA2: Mapping[str, str] = {
    "NodeResourcesLeastAllocated": 'NodeResourcesFit with scoringStrategy type "LeastAllocated"',
    "NodeResourcesMostAllocated": 'NodeResourcesFit with scoringStrategy type "MostAllocated"',
    "RequestedToCapacityRatio": 'NodeResourcesFit with scoringStrategy type "RequestedToCapacityRatio"',
    "NodeLabel": "NodeAffinity (with addedAffinity)",
    "ServiceAffinity": "InterPodAffinity",
}
"""v1beta1 plugins that v1beta2 removed, with what replaces them."""


@dataclass(frozen=True, slots=True)
class VersionRules:
    """How one version reads: its default score weights (overriding v1's) and whether it is deprecated."""

    api_version: str
    default_weights: Mapping[str, int]
    deprecation: str | None


def rules(api_version: str) -> VersionRules:
    """The reading rules of a supported ``api_version``."""
    weights = PER_POINT_WEIGHTS if api_version in (V1BETA2, V1BETA1) else {}
    return VersionRules(api_version, weights, DEPRECATED.get(api_version))


def unsupported_message(api_version: Any, kind: Any) -> str:
    """The error for a document that is not a KubeSchedulerConfiguration of a version Berth reads."""
    got = f"{api_version}/{kind}"
    listed = ", ".join(f'"{v}/KubeSchedulerConfiguration"' for v in API_VERSIONS)
    return f'apiVersion/kind: Unsupported value: "{got}": supported values: {listed}'


def removed_plugin_errors(profiles: Any, api_version: str) -> list[str]:
    """Errors for plugins a v1beta1 profile enables that v1beta2 removed (none for later versions)."""
    if api_version != V1BETA1 or not isinstance(profiles, list):
        return []
    errors: list[str] = []
    for i, prof in enumerate(profiles):
        if not isinstance(prof, Mapping):
            continue
        plugins = prof.get("plugins") or {}
        if not isinstance(plugins, Mapping):
            continue
        for point, pset in plugins.items():
            if not isinstance(pset, Mapping):
                continue
            for j, ref in enumerate(pset.get("enabled") or []):
                name = ref.get("name") if isinstance(ref, Mapping) else None
                if isinstance(name, str) and name in REMOVED_IN_V1BETA2:
                    errors.append(
                        f'profiles[{i}].plugins.{point}.enabled[{j}].name: Invalid value: "{name}": '
                        f"removed in {V1BETA2}, cannot be converted; use {REMOVED_IN_V1BETA2[name]}"
                    )
    return errors
