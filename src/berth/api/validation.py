"""Validation of wire-form objects, with apimachinery ``field.Error``-style messages.

:func:`validate_object` checks the apiVersion/kind is known, the metadata, and then runs the
kind's validator from :data:`KIND_VALIDATORS` (keyed by ``(group, kind)``; register more with
:func:`register_validator`). Each kind owns its rules: the core kinds' validators are here (a pod spec's in
`berth.api.podspec`), the custom kinds' in their own modules (`berth.api.reservation`, `elasticquota`,
`podgroup`, `podmigrationjob`), all written over `berth.api.checks.Context`. The first problem found raises
:class:`InvalidObjectError`.
Namespace defaulting is the caller's job; errors name namespaced objects ``"<ns or default>/<name>"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from berth.api.checks import (
    Context,
    dns_label_cached,
    label_value_cached,
    qualified_name_cached,
)
from berth.api.cronjob import validate_cron_job
from berth.api.daemonset import validate_daemon_set
from berth.api.elasticquota import validate_elastic_quota
from berth.api.errors import InvalidObjectError
from berth.api.job import validate_job
from berth.api.kinds import KindInfo, UnknownKindError, lookup_kind
from berth.api.labels import LabelSelectorError, compile_label_selector
from berth.api.names import dns1123_subdomain_errors
from berth.api.podgroup import validate_pod_group
from berth.api.podmigrationjob import validate_pod_migration_job
from berth.api.podspec import validate_pod_spec
from berth.api.podtemplate import non_negative, validate_selector_and_template
from berth.api.reservation import validate_reservation
from berth.api.service import validate_service
from berth.api.statefulset import validate_stateful_set
from berth.api.taints import TAINT_EFFECTS

__all__ = [
    "KIND_VALIDATORS",
    "KindValidator",
    "register_validator",
    "validate_object",
]

HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


KindValidator = Callable[[Mapping[str, Any], Context], None]
"""A per-kind validator: inspects the object and raises through the Context."""

KIND_VALIDATORS: dict[tuple[str, str], KindValidator] = {}
"""Per-kind validators keyed by (API group, kind); the group is ``""`` for core."""


def register_validator(group: str, kind: str, validator: KindValidator) -> None:
    """Install (or replace) the validator for (group, kind)."""
    KIND_VALIDATORS[(group, kind)] = validator


# -- metadata ----------------------------------------------------------------------------------


def _validate_metadata(obj: Mapping[str, Any], info: KindInfo, ctx: Context) -> None:
    md = ctx.mapping("metadata", obj.get("metadata"))
    name = md.get("name")
    if name is None or name == "":
        ctx.required("metadata.name")
    if not isinstance(name, str):
        ctx.invalid("metadata.name", name, "must be a string")
    # names are mostly unique: a cache would only miss (and a miss costs more than the check)
    errs = dns_label_cached(name) if info.kind == "Namespace" else dns1123_subdomain_errors(name)
    if errs:
        ctx.invalid("metadata.name", name, errs[0])
    ns = md.get("namespace")
    if ns is not None and ns != "":
        if not isinstance(ns, str):
            ctx.invalid("metadata.namespace", ns, "must be a string")
        errs = dns_label_cached(ns)
        if errs:
            ctx.invalid("metadata.namespace", ns, errs[0])
    if md.get("labels") is not None:
        ctx.label_map("metadata.labels", md.get("labels"))
    ann = md.get("annotations")
    if ann is not None:
        for k, v in ctx.mapping("metadata.annotations", ann).items():
            if not isinstance(k, str) or qualified_name_cached(k):
                errs = qualified_name_cached(k) if isinstance(k, str) else ("must be a string",)
                ctx.invalid("metadata.annotations", k, errs[0])
            if not isinstance(v, str):
                ctx.invalid(f"metadata.annotations[{k}]", v, "must be a string")


def validate_object(
    obj: Mapping[str, Any], *, source: str | None = None, valid_pod_specs: set[bytes] | None = None
) -> None:
    """Validate one object; raise :class:`InvalidObjectError` naming the field on the first problem.

    `valid_pod_specs` is only for an object of plain JSON values (str, int, float, bool, None, list, dict with
    str keys, as msgspec decodes JSON): there the JSON encoding of a value tells it from every other value, so
    a pod spec whose encoding is in the set is valid and is not checked again; the encodings of the pod specs
    found valid are added to it.
    """
    if type(obj) is not dict and not isinstance(obj, Mapping):
        raise InvalidObjectError(
            "Object", "", "<root>", obj, "Invalid value: must be an object", source=source
        )
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    md = obj.get("metadata")
    if type(md) is not dict and not isinstance(md, Mapping):
        md = None
    raw_name = md.get("name") if md is not None else None
    name = raw_name if isinstance(raw_name, str) else ""
    ctx = Context(kind if isinstance(kind, str) and kind else "Object", name, source, valid_pod_specs)
    if not api_version:
        ctx.required("apiVersion")
    if not kind:
        ctx.required("kind")
    try:
        info = lookup_kind(str(api_version), str(kind))
    except UnknownKindError:
        ctx.fail("apiVersion/kind", (api_version, kind), f'Unsupported value: "{api_version}, Kind={kind}"')
    if info.namespaced:
        ns = md.get("namespace") if md is not None else None
        ctx.name = f"{ns if isinstance(ns, str) and ns else 'default'}/{name}"
    _validate_metadata(obj, info, ctx)
    validator = KIND_VALIDATORS.get((info.group, info.kind))
    if validator is not None:
        validator(obj, ctx)


def _validate_pod(obj: Mapping[str, Any], ctx: Context) -> None:
    validate_pod_spec("spec", obj.get("spec"), ctx)


# -- Node --------------------------------------------------------------------------------------


def _validate_node(obj: Mapping[str, Any], ctx: Context) -> None:
    spec = ctx.mapping("spec", obj.get("spec"))
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(ctx.sequence("spec.taints", spec.get("taints"))):
        tpath = f"spec.taints[{i}]"
        t = ctx.mapping(tpath, t)
        key = ctx.string(f"{tpath}.key", t.get("key"))
        if not key:
            ctx.required(f"{tpath}.key")
        errs = qualified_name_cached(key)
        if errs:
            ctx.invalid(f"{tpath}.key", key, errs[0])
        val = ctx.string(f"{tpath}.value", t.get("value"))
        errs = label_value_cached(val)
        if errs:
            ctx.invalid(f"{tpath}.value", val, errs[0])
        effect = ctx.string(f"{tpath}.effect", t.get("effect"))
        if not effect:
            ctx.required(f"{tpath}.effect")
        if effect not in TAINT_EFFECTS:
            ctx.not_supported(f"{tpath}.effect", effect, TAINT_EFFECTS)
        if (key, effect) in seen:
            ctx.duplicate(tpath, f"{key}:{effect}", "taints must be unique by key and effect pair")
        seen.add((key, effect))
    if spec.get("unschedulable") is not None and not isinstance(spec.get("unschedulable"), bool):
        ctx.invalid("spec.unschedulable", spec.get("unschedulable"), "must be a boolean")
    status = ctx.mapping("status", obj.get("status"))
    for part in ("capacity", "allocatable"):
        if status.get(part) is not None:
            ctx.resource_list(f"status.{part}", status.get(part))


# -- PriorityClass -----------------------------------------------------------------------------


def _validate_priority_class(obj: Mapping[str, Any], ctx: Context) -> None:
    value = obj.get("value")
    if value is None:
        ctx.required("value")
    value = ctx.integer("value", value)
    name = str((obj.get("metadata") or {}).get("name") or "")
    gd = obj.get("globalDefault")
    if gd is not None and not isinstance(gd, bool):
        ctx.invalid("globalDefault", gd, "must be a boolean")
    if name.startswith("system-"):
        expected = SYSTEM_PRIORITY_CLASSES.get(name)
        if expected is None or expected != value or gd:
            ctx.forbidden(
                "metadata.name",
                "priority class names with 'system-' prefix are reserved for system use only",
            )
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        ctx.forbidden(
            "value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
        )
    pp = obj.get("preemptionPolicy")
    if pp is not None and pp not in ("PreemptLowerPriority", "Never"):
        ctx.not_supported("preemptionPolicy", pp, ("Never", "PreemptLowerPriority"))


register_validator("", "Pod", _validate_pod)
register_validator("", "Node", _validate_node)
register_validator("scheduling.k8s.io", "PriorityClass", _validate_priority_class)


register_validator("scheduling.koordinator.sh", "Reservation", validate_reservation)
register_validator("scheduling.koordinator.sh", "PodMigrationJob", validate_pod_migration_job)


for _eq_group in ("scheduling.x-k8s.io", "scheduling.sigs.k8s.io"):
    register_validator(_eq_group, "ElasticQuota", validate_elastic_quota)
    register_validator(_eq_group, "PodGroup", validate_pod_group)


# -- apps/v1 ReplicaSet, Deployment -------------------------------------------------------------

_PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)


def _validate_workload_template(spec: Mapping[str, Any], ctx: Context) -> None:
    """Selector (required, non-empty, matching the template labels) and the pod template of a ReplicaSet or
    Deployment (kube's messages name both "deployment" and "ReplicaSet" for either)."""
    validate_selector_and_template(
        spec,
        ctx,
        empty_selector="empty selector is invalid for deployment",
        kind="ReplicaSet",
        deadline_forbidden=False,
    )


def _validate_replica_set(obj: Mapping[str, Any], ctx: Context) -> None:
    spec = ctx.mapping("spec", obj.get("spec"))
    non_negative("spec.replicas", spec.get("replicas"), ctx)
    non_negative("spec.minReadySeconds", spec.get("minReadySeconds"), ctx)
    _validate_workload_template(spec, ctx)


def _int_or_percent(path: str, value: object, ctx: Context) -> int | None:
    """Validate an IntOrString that must be >= 0 / a percent; returns the number (None when absent)."""
    if value is None:
        return None
    if isinstance(value, str):
        if not value.endswith("%") or not value[:-1].isdigit():
            ctx.invalid(path, value, _PERCENT_MSG)
        return int(value[:-1])
    if type(value) is not int:
        ctx.invalid(path, value, "must be an integer or percentage (e.g '5%')")
    non_negative(path, value, ctx)
    return value


def _validate_strategy(spec: Mapping[str, Any], ctx: Context) -> None:
    strategy = ctx.mapping("spec.strategy", spec.get("strategy"))
    kind = strategy.get("type", "RollingUpdate")
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            ctx.forbidden(
                "spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"
            )
    elif kind == "RollingUpdate":
        ru = ctx.mapping("spec.strategy.rollingUpdate", rolling)
        path = "spec.strategy.rollingUpdate"
        unavailable = _int_or_percent(f"{path}.maxUnavailable", ru.get("maxUnavailable", "25%"), ctx)
        surge = _int_or_percent(f"{path}.maxSurge", ru.get("maxSurge", "25%"), ctx)
        if unavailable == 0 and surge == 0:
            ctx.invalid(
                f"{path}.maxUnavailable", ru.get("maxUnavailable"), "may not be 0 when `maxSurge` is 0"
            )
        mu = ru.get("maxUnavailable")
        if isinstance(mu, str) and unavailable is not None and unavailable > 100:
            ctx.invalid(f"{path}.maxUnavailable", mu, "must not be greater than 100%")
    else:
        ctx.not_supported("spec.strategy", kind, ("Recreate", "RollingUpdate"))


def _validate_deployment(obj: Mapping[str, Any], ctx: Context) -> None:
    spec = ctx.mapping("spec", obj.get("spec"))
    non_negative("spec.replicas", spec.get("replicas"), ctx)
    _validate_workload_template(spec, ctx)
    _validate_strategy(spec, ctx)
    non_negative("spec.minReadySeconds", spec.get("minReadySeconds"), ctx)
    non_negative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"), ctx)
    pds = spec.get("progressDeadlineSeconds")
    if pds is not None:
        non_negative("spec.progressDeadlineSeconds", pds, ctx)
        if pds <= (spec.get("minReadySeconds") or 0):
            ctx.invalid("spec.progressDeadlineSeconds", pds, "must be greater than minReadySeconds")


register_validator("apps", "ReplicaSet", _validate_replica_set)
register_validator("apps", "Deployment", _validate_deployment)
register_validator("apps", "StatefulSet", validate_stateful_set)
register_validator("apps", "DaemonSet", validate_daemon_set)
register_validator("", "Service", validate_service)
register_validator("batch", "Job", validate_job)
register_validator("batch", "CronJob", validate_cron_job)


# -- policy/v1 PodDisruptionBudget --------------------------------------------------------------

_UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")
_MAX_DISRUPTIONS_ANNOTATION = "berth.dev/max-disruptions"


def _validate_pdb_int_or_percent(path: str, value: object, ctx: Context) -> None:
    """ValidatePositiveIntOrPercent and IsNotMoreThan100Percent."""
    number = _int_or_percent(path, value, ctx)
    if isinstance(value, str) and number is not None and number > 100:
        ctx.invalid(path, value, "must not be greater than 100%")


def _validate_pdb(obj: Mapping[str, Any], ctx: Context) -> None:
    """ValidatePodDisruptionBudgetSpec, plus Berth's ``berth.dev/max-disruptions`` annotation ("N/DURATION")."""
    from berth.api.wellknown import parse_duration

    spec = ctx.mapping("spec", obj.get("spec"))
    min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
    if min_available is not None and max_unavailable is not None:
        ctx.invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set")
    if min_available is not None:
        _validate_pdb_int_or_percent("spec.minAvailable", min_available, ctx)
    if max_unavailable is not None:
        _validate_pdb_int_or_percent("spec.maxUnavailable", max_unavailable, ctx)
    raw = spec.get("selector")
    if raw is not None:
        try:
            compile_label_selector(ctx.mapping("spec.selector", raw))
        except LabelSelectorError as e:
            detail = "not a valid selector operator" if e.path.endswith(".operator") else e.message
            ctx.invalid(f"spec.selector.{e.path}" if e.path else "spec.selector", e.value, detail)
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in _UNHEALTHY_POD_EVICTION_POLICIES:
        ctx.not_supported("spec.unhealthyPodEvictionPolicy", policy, _UNHEALTHY_POD_EVICTION_POLICIES)
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    limit = annotations.get(_MAX_DISRUPTIONS_ANNOTATION)
    if limit is not None:
        count, _, window = str(limit).partition("/")
        try:
            ok = count.isdigit() and parse_duration(window) > 0
        except ValueError:
            ok = False
        if not ok:
            ctx.invalid(
                f"metadata.annotations[{_MAX_DISRUPTIONS_ANNOTATION}]",
                limit,
                'must be N/DURATION with a positive Go duration (e.g. "1/1h")',
            )


register_validator("policy", "PodDisruptionBudget", _validate_pdb)
