"""apps/v1 ``DaemonSet`` validation (kube's ``ValidateDaemonSetSpec``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.checks import Context
from berth.api.podtemplate import default_rolling_update, non_negative, validate_selector_and_template

__all__ = ["default_daemon_set", "validate_daemon_set"]

_STRATEGIES = ("OnDelete", "RollingUpdate")


def validate_daemon_set(obj: Mapping[str, Any], ctx: Context) -> None:
    """Validate a DaemonSet; raises through `ctx` on the first problem."""
    spec = ctx.mapping("spec", obj.get("spec"))
    validate_selector_and_template(
        spec, ctx, empty_selector="empty selector is not valid for daemonset.", kind="DaemonSet"
    )
    non_negative("spec.minReadySeconds", spec.get("minReadySeconds"), ctx)
    non_negative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"), ctx)
    strategy = ctx.mapping("spec.updateStrategy", spec.get("updateStrategy"))
    kind = strategy.get("type")
    if kind not in (None, "", *_STRATEGIES):
        ctx.not_supported("spec.updateStrategy.type", kind, _STRATEGIES)


def default_daemon_set(obj: dict[str, Any]) -> None:
    """apps/v1 SetDefaults_DaemonSet (in place): updateStrategy RollingUpdate with maxUnavailable 1 and
    maxSurge 0, revisionHistoryLimit 10."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    default_rolling_update(spec, {"maxUnavailable": 1, "maxSurge": 0})
    spec.setdefault("revisionHistoryLimit", 10)
