"""What every pod-making workload kind checks: a non-empty selector that matches its pod template's labels,
and a valid pod template whose pods restart Always (apps/v1 ``ValidatePodTemplateSpecForReplicaSet``-style
rules as kube applies them to StatefulSets and DaemonSets)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from berth.api.checks import Context
from berth.api.labels import LabelSelectorError, compile_label_selector
from berth.api.podspec import validate_pod_spec

__all__ = ["default_rolling_update", "go_string_map", "non_negative", "validate_selector_and_template"]


def go_string_map(value: object) -> str:
    """A label map as Go's ``%#v`` prints it: ``map[string]string{"a":"b"}`` (keys sorted)."""
    if not isinstance(value, Mapping):
        return "map[string]string(nil)"
    items = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(value.items()))
    return f"map[string]string{{{items}}}"


def non_negative(path: str, value: object, ctx: Context) -> None:
    """An optional int32 field that must be >= 0 (``ValidateNonnegativeField``)."""
    if value is None:
        return
    if type(value) is not int:
        ctx.invalid(path, value, "must be an integer")
    if value < 0:
        ctx.invalid(path, value, "must be greater than or equal to 0")


def validate_selector_and_template(
    spec: Mapping[str, Any], ctx: Context, *, empty_selector: str, kind: str, deadline_forbidden: bool = True
) -> None:
    """``spec.selector`` (required, non-empty: `empty_selector` is kube's message), ``spec.template`` whose
    labels the selector matches, a valid pod spec with restartPolicy Always and no activeDeadlineSeconds (kube
    calls one Forbidden, or Invalid for a ReplicaSet's or a Deployment's template: `deadline_forbidden` False)."""
    raw = spec.get("selector")
    if raw is None:
        ctx.required("spec.selector")
    sel_map = ctx.mapping("spec.selector", raw)
    try:
        selector = compile_label_selector(sel_map)
    except LabelSelectorError as e:
        detail = "not a valid selector operator" if e.path.endswith(".operator") else e.message
        ctx.invalid(f"spec.selector.{e.path}" if e.path else "spec.selector", e.value, detail)
    if not sel_map.get("matchLabels") and not sel_map.get("matchExpressions"):
        ctx.invalid("spec.selector", sel_map, empty_selector)
    template = ctx.mapping("spec.template", spec.get("template"))
    tmeta = ctx.mapping("spec.template.metadata", template.get("metadata"))
    labels = tmeta.get("labels")
    if not selector.matches(labels if isinstance(labels, Mapping) else {}):
        ctx.fail(
            "spec.template.metadata.labels",
            labels,
            f"Invalid value: {go_string_map(labels)}: `selector` does not match template `labels`",
        )
    if labels is not None:
        ctx.label_map("spec.template.metadata.labels", labels)
    for k, v in ctx.mapping("spec.template.metadata.annotations", tmeta.get("annotations")).items():
        if not isinstance(v, str):
            ctx.invalid(f"spec.template.metadata.annotations[{k}]", v, "must be a string")
    validate_pod_spec("spec.template.spec", template.get("spec"), ctx)
    pod_spec = ctx.mapping("spec.template.spec", template.get("spec"))
    restart = pod_spec.get("restartPolicy")
    if restart is not None and restart != "Always":
        ctx.not_supported("spec.template.spec.restartPolicy", restart, ("Always",))
    deadline = pod_spec.get("activeDeadlineSeconds")
    if deadline is not None:
        path, why = (
            "spec.template.spec.activeDeadlineSeconds",
            f"activeDeadlineSeconds in {kind} is not Supported",
        )
        if deadline_forbidden:
            ctx.forbidden(path, why)
        ctx.invalid(path, deadline, why)


def default_rolling_update(spec: dict[str, Any], rolling: Mapping[str, Any]) -> None:
    """Default ``spec.updateStrategy`` (in place) as the apps/v1 workload kinds do: type RollingUpdate, and for a
    RollingUpdate strategy the `rolling` fields of ``rollingUpdate`` that are not set."""
    strategy = spec.get("updateStrategy")
    if not isinstance(strategy, dict):
        strategy = spec["updateStrategy"] = {}
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        given = strategy.get("rollingUpdate")
        if not isinstance(given, dict):
            given = strategy["rollingUpdate"] = {}
        for key, value in rolling.items():
            given.setdefault(key, value)
