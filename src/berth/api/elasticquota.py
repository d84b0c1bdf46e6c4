"""scheduler-plugins' ``ElasticQuota`` (``scheduling.x-k8s.io/v1alpha1``, also ``scheduling.sigs.k8s.io``):
reading spec.min / spec.max as scheduler amounts, and validation.

spec.min and spec.max are ResourceLists; a resource missing from min counts as a min of 0, a resource
missing from max (or no max at all) is unbounded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.checks import Context, format_value
from berth.api.errors import QuantityError
from berth.api.quantity import format_resource, resource_amount

__all__ = ["ELASTIC_QUOTA_GROUPS", "format_resource_list", "quota_limits", "validate_elastic_quota"]

ELASTIC_QUOTA_GROUPS = ("scheduling.x-k8s.io", "scheduling.sigs.k8s.io")


def _amounts(value: object) -> dict[str, int]:
    """A ResourceList as scheduler amounts (cpu in milli-units); malformed entries are skipped."""
    if not isinstance(value, Mapping):
        return {}
    out: dict[str, int] = {}
    for k, v in value.items():
        if not isinstance(k, str) or not isinstance(v, str | int | float) or isinstance(v, bool):
            continue
        try:
            out[k] = resource_amount(k, v)
        except (QuantityError, ValueError, TypeError):
            continue
    return out


def quota_limits(obj: Mapping[str, Any]) -> tuple[dict[str, int], dict[str, int] | None]:
    """(min, max) of an ElasticQuota as scheduler amounts; max is None when spec.max is absent."""
    spec = obj.get("spec") or {}
    raw_max = spec.get("max")
    return _amounts(spec.get("min")), (None if raw_max is None else _amounts(raw_max))


def format_resource_list(amounts: Mapping[str, int]) -> dict[str, str]:
    """Scheduler amounts back to a ResourceList (keys sorted)."""
    return {r: format_resource(r, amounts[r]) for r in sorted(amounts)}


def _check_min_within_max(
    ctx: Context, spec: Mapping[str, Any], low: Mapping[str, int], high: Mapping[str, int]
) -> None:
    """Refuse a resource whose spec.min exceeds its spec.max, in kube's field-error words (the first such
    resource in name order). A resource absent from spec.max is unbounded, so any min is within it."""
    for resource in sorted(low.keys() & high.keys()):
        if low[resource] > high[resource]:
            given = spec["min"][resource]
            ctx.invalid(
                f"spec.min.{resource}",
                given if isinstance(given, str) else format_value(given),
                f"must be less than or equal to spec.max.{resource}",
            )


def validate_elastic_quota(obj: Mapping[str, Any], ctx: Context) -> None:
    """Validate an ElasticQuota (the CRD schema: spec.min / spec.max / status.used are ResourceLists) and
    that no resource's spec.min is above its spec.max."""
    spec = ctx.mapping("spec", obj.get("spec"))
    low = ctx.resource_list("spec.min", spec.get("min"))
    high = ctx.resource_list("spec.max", spec.get("max"))
    _check_min_within_max(ctx, spec, low, high)
    status = ctx.mapping("status", obj.get("status"))
    ctx.resource_list("status.used", status.get("used"))
