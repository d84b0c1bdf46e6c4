"""apps/v1 ``StatefulSet``: its well-known names and its validation (kube's ``ValidateStatefulSetSpec``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.checks import Context
from berth.api.podtemplate import default_rolling_update, non_negative, validate_selector_and_template

__all__ = [
    "ORDERED_READY",
    "PARALLEL",
    "POD_INDEX_LABEL",
    "POD_NAME_LABEL",
    "REVISION_LABEL",
    "default_stateful_set",
    "validate_stateful_set",
]

ORDERED_READY = "OrderedReady"
"""podManagementPolicy (the default): create pods in order, each once the previous is Running and Ready;
delete in reverse order."""
PARALLEL = "Parallel"
"""podManagementPolicy: create and delete pods without waiting for one another."""
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
"""apps.StatefulSetPodNameLabel: the pod's own name, so a Service can select one pod."""
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
"""apps.PodIndexLabel: the pod's ordinal."""
REVISION_LABEL = "controller-revision-hash"
"""apps.ControllerRevisionHashLabelKey: the revision of the template the pod was made from."""

_POLICIES = (ORDERED_READY, PARALLEL)
_STRATEGIES = ("OnDelete", "RollingUpdate")


def validate_stateful_set(obj: Mapping[str, Any], ctx: Context) -> None:
    """Validate a StatefulSet; raises through `ctx` on the first problem."""
    spec = ctx.mapping("spec", obj.get("spec"))
    policy = spec.get("podManagementPolicy")
    if policy not in (None, "", *_POLICIES):
        ctx.not_supported("spec.podManagementPolicy", policy, _POLICIES)
    strategy = ctx.mapping("spec.updateStrategy", spec.get("updateStrategy"))
    kind = strategy.get("type")
    if kind not in (None, "", *_STRATEGIES):
        ctx.not_supported("spec.updateStrategy.type", kind, _STRATEGIES)
    rolling = strategy.get("rollingUpdate")
    if rolling is not None:
        if kind == "OnDelete":
            ctx.invalid(
                "spec.updateStrategy.rollingUpdate",
                rolling,
                "only allowed for updateStrategy 'RollingUpdate'",
            )
        rolling = ctx.mapping("spec.updateStrategy.rollingUpdate", rolling)
        non_negative("spec.updateStrategy.rollingUpdate.partition", rolling.get("partition"), ctx)
    non_negative("spec.replicas", spec.get("replicas"), ctx)
    non_negative("spec.minReadySeconds", spec.get("minReadySeconds"), ctx)
    ordinals = ctx.mapping("spec.ordinals", spec.get("ordinals"))
    non_negative("spec.ordinals.start", ordinals.get("start"), ctx)
    validate_selector_and_template(
        spec, ctx, empty_selector="empty selector is invalid for statefulset", kind="StatefulSet"
    )


def default_stateful_set(obj: dict[str, Any]) -> None:
    """apps/v1 SetDefaults_StatefulSet (in place): replicas 1, podManagementPolicy OrderedReady, updateStrategy
    RollingUpdate with partition 0, revisionHistoryLimit 10, the claims' retention policy Retain/Retain."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("replicas", 1)
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = ORDERED_READY
    default_rolling_update(spec, {"partition": 0})
    spec.setdefault("revisionHistoryLimit", 10)
    policy = spec.get("persistentVolumeClaimRetentionPolicy")
    if not isinstance(policy, dict):
        policy = spec["persistentVolumeClaimRetentionPolicy"] = {}
    for field in ("whenDeleted", "whenScaled"):
        if not policy.get(field):
            policy[field] = "Retain"
