"""batch/v1 Job: well-known names, the API server's defaults and generated selector, and validation.

As kube-apiserver: `default_job` applies batch/v1's defaults (``completions``/``parallelism`` 1 when both are
absent, ``backoffLimit`` 6, ``completionMode: NonIndexed``, ``suspend: false``, ``manualSelector: false``,
``podReplacementPolicy: TerminatingOrFailed``); `generate_selector` is the registry's PrepareForCreate for a Job
without ``manualSelector: true``: the template gets the labels ``batch.kubernetes.io/controller-uid``,
``controller-uid`` (the Job's uid), ``batch.kubernetes.io/job-name`` and ``job-name``, and the selector matches
the uid; `validate_job` is ValidateJob (ValidateGeneratedSelector and the spec's rules).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from berth.api.checks import Context, format_value
from berth.api.labels import LabelSelectorError, compile_label_selector
from berth.api.podspec import validate_pod_spec

__all__ = [
    "COMPLETION_INDEX",
    "CONTROLLER_UID_LABEL",
    "DEFAULT_BACKOFF_LIMIT",
    "INDEXED",
    "JOB_NAME_LABEL",
    "LEGACY_CONTROLLER_UID_LABEL",
    "LEGACY_JOB_NAME_LABEL",
    "MAX_INDEXED_PARALLELISM",
    "NON_INDEXED",
    "default_job",
    "generate_selector",
    "job_update_causes",
    "validate_job",
    "validate_job_spec",
]

CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL = "job-name"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
"""The annotation (and label) holding an Indexed Job pod's completion index."""

NON_INDEXED = "NonIndexed"
INDEXED = "Indexed"
COMPLETION_MODES = (NON_INDEXED, INDEXED)
DEFAULT_BACKOFF_LIMIT = 6
MAX_INDEXED_PARALLELISM = 100_000
"""Completions and parallelism of an Indexed Job are at most this (kube's maxParallelismForIndexedJob)."""
_PLACEHOLDER_UID = "00000000-0000-4000-8000-000000000000"
"""Stands for the uid the API server will give a Job read from a manifest, while it is validated."""
RESTART_POLICIES = ("OnFailure", "Never")
POD_REPLACEMENT_POLICIES = ("TerminatingOrFailed", "Failed")


def default_job(job: dict[str, Any]) -> None:
    """batch/v1 SetDefaults_Job, in place; also the Job's labels from its template's when it has none."""
    spec = job.get("spec")
    if not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = DEFAULT_BACKOFF_LIMIT
    if spec.get("completionMode") is None:
        spec["completionMode"] = NON_INDEXED
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    if spec.get("podReplacementPolicy") is None:
        policy = "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
        spec["podReplacementPolicy"] = policy
    _labels_from_template(job)


def _labels_from_template(job: dict[str, Any]) -> None:
    """A Job without labels takes its template's (kube's defaulting shares the template's label map)."""
    meta = job.get("metadata")
    template = (job.get("spec") or {}).get("template")
    if not isinstance(meta, dict) or not isinstance(template, dict):
        return
    labels = (template.get("metadata") or {}).get("labels")
    if isinstance(labels, dict) and labels and not meta.get("labels"):
        meta["labels"] = dict(labels)


def generate_selector(job: dict[str, Any]) -> None:
    """The registry's generateSelector, in place, for a Job that has a uid and no ``manualSelector: true``."""
    spec = job.get("spec")
    meta = job.get("metadata")
    if not isinstance(spec, dict) or not isinstance(meta, dict) or spec.get("manualSelector") is True:
        return
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    tmeta = template.get("metadata")
    if not isinstance(tmeta, dict):
        tmeta = template["metadata"] = {}
    labels = tmeta.get("labels")
    if not isinstance(labels, dict):
        labels = tmeta["labels"] = {}
    name, uid = str(meta.get("name") or ""), str(meta.get("uid") or "")
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, name)
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, uid)
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        selector = spec["selector"] = {}
    match = selector.get("matchLabels")
    if not isinstance(match, dict):
        match = selector["matchLabels"] = {}
    match.setdefault(CONTROLLER_UID_LABEL, uid)
    if not meta.get("labels") and labels:
        meta["labels"] = dict(labels)


# -- validation ---------------------------------------------------------------------------------------------


def _non_negative(path: str, value: object, ctx: Context) -> int | None:
    if value is None:
        return None
    number = ctx.integer(path, value)
    if number < 0:
        ctx.invalid(path, number, "must be greater than or equal to 0")
    return number


def _has_label(labels: Mapping[str, Any], key: str, expected: str, ctx: Context) -> None:
    """ValidateHasLabel on the pod template's labels."""
    path = f"spec.template.metadata.labels[{key}]"
    actual = labels.get(key)
    if actual is None:
        ctx.required(path, f"must be '{expected}'")
    if actual != expected:
        ctx.invalid(path, actual, f"must be '{expected}'")


def _generated_selector(job: Mapping[str, Any], spec: Mapping[str, Any], ctx: Context, shown: object) -> None:
    """ValidateGeneratedSelector: a generated selector and labels name this Job's uid and name (`shown`: the
    selector as the user wrote it, for the message)."""
    if spec.get("manualSelector") is True or spec.get("selector") is None:
        return
    meta = job.get("metadata") or {}
    uid, name = str(meta.get("uid") or ""), str(meta.get("name") or "")
    if not uid:
        ctx.required("metadata.uid")
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    _has_label(labels, CONTROLLER_UID_LABEL, uid, ctx)
    _has_label(labels, JOB_NAME_LABEL, name, ctx)
    _has_label(labels, LEGACY_CONTROLLER_UID_LABEL, uid, ctx)
    _has_label(labels, LEGACY_JOB_NAME_LABEL, name, ctx)
    try:
        selector = compile_label_selector(spec.get("selector"))
    except LabelSelectorError:
        return
    if not selector.matches({CONTROLLER_UID_LABEL: uid, JOB_NAME_LABEL: name}):
        ctx.invalid("spec.selector", shown, "`selector` not auto-generated")


def validate_job_spec(prefix: str, spec: Mapping[str, Any], ctx: Context) -> None:
    """validateJobSpec: counts, deadlines, completion mode and the pod template (restartPolicy OnFailure or
    Never), with field paths under `prefix` (``spec`` of a Job, ``spec.jobTemplate.spec`` of a CronJob)."""
    parallelism = _non_negative(f"{prefix}.parallelism", spec.get("parallelism"), ctx)
    completions = _non_negative(f"{prefix}.completions", spec.get("completions"), ctx)
    _non_negative(f"{prefix}.activeDeadlineSeconds", spec.get("activeDeadlineSeconds"), ctx)
    _non_negative(f"{prefix}.backoffLimit", spec.get("backoffLimit"), ctx)
    _non_negative(f"{prefix}.ttlSecondsAfterFinished", spec.get("ttlSecondsAfterFinished"), ctx)
    for flag in ("suspend", "manualSelector"):
        value = spec.get(flag)
        if value is not None and not isinstance(value, bool):
            ctx.invalid(f"{prefix}.{flag}", value, "must be a boolean")
    mode = spec.get("completionMode")
    if mode is not None and mode not in COMPLETION_MODES:
        ctx.not_supported(f"{prefix}.completionMode", mode, COMPLETION_MODES)
    if mode == INDEXED:
        if completions is None:
            ctx.required(f"{prefix}.completions", f"when completion mode is {INDEXED}")
        limit = f"must be less than or equal to {MAX_INDEXED_PARALLELISM} when completion mode is {INDEXED}"
        if completions > MAX_INDEXED_PARALLELISM:
            ctx.invalid(f"{prefix}.completions", completions, limit)
        if parallelism is not None and parallelism > MAX_INDEXED_PARALLELISM:
            ctx.invalid(f"{prefix}.parallelism", parallelism, limit)
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None and replacement not in POD_REPLACEMENT_POLICIES:
        ctx.not_supported(f"{prefix}.podReplacementPolicy", replacement, POD_REPLACEMENT_POLICIES)
    template = ctx.mapping(f"{prefix}.template", spec.get("template"))
    tmeta = ctx.mapping(f"{prefix}.template.metadata", template.get("metadata"))
    if tmeta.get("labels") is not None:
        ctx.label_map(f"{prefix}.template.metadata.labels", tmeta.get("labels"))
    for k, v in ctx.mapping(f"{prefix}.template.metadata.annotations", tmeta.get("annotations")).items():
        if not isinstance(v, str):
            ctx.invalid(f"{prefix}.template.metadata.annotations[{k}]", v, "must be a string")
    validate_pod_spec(f"{prefix}.template.spec", template.get("spec"), ctx)
    pod_spec = ctx.mapping(f"{prefix}.template.spec", template.get("spec"))
    restart = pod_spec.get("restartPolicy") or "Always"  # a pod template's default
    if restart not in RESTART_POLICIES:
        ctx.not_supported(f"{prefix}.template.spec.restartPolicy", restart, RESTART_POLICIES)


def _go_string_map(value: object) -> str:
    """A label map as Go's ``%#v`` prints it (keys sorted)."""
    if not isinstance(value, Mapping):
        return "map[string]string(nil)"
    items = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(value.items()))
    return f"map[string]string{{{items}}}"


def validate_job(obj: Mapping[str, Any], ctx: Context) -> None:
    """ValidateJob: the generated selector, then the spec (selector required, matching the template).

    A Job not yet created (a manifest read from a file: no uid) is validated as the API server will see it,
    with its defaults and generated selector."""
    meta = obj.get("metadata")
    shown = (obj.get("spec") or {}).get("selector") if isinstance(obj.get("spec"), Mapping) else None
    if isinstance(meta, Mapping) and not meta.get("uid") and isinstance(obj.get("spec"), Mapping):
        as_created = copy.deepcopy(dict(obj))
        as_created["metadata"]["uid"] = _PLACEHOLDER_UID
        default_job(as_created)
        generate_selector(as_created)
        obj = as_created
    spec = ctx.mapping("spec", obj.get("spec"))
    _generated_selector(obj, spec, ctx, shown)
    validate_job_spec("spec", spec, ctx)
    raw = spec.get("selector")
    if raw is None:
        ctx.required("spec.selector")
    try:
        selector = compile_label_selector(ctx.mapping("spec.selector", raw))
    except LabelSelectorError as e:
        detail = "not a valid selector operator" if e.path.endswith(".operator") else e.message
        ctx.invalid(f"spec.selector.{e.path}" if e.path else "spec.selector", e.value, detail)
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if not selector.matches(labels if isinstance(labels, Mapping) else {}):
        ctx.fail(
            "spec.template.metadata.labels",
            labels,
            f"Invalid value: {_go_string_map(labels)}: `selector` does not match template `labels`",
        )


_IMMUTABLE = (
    "selector",
    "completionMode",
    "podFailurePolicy",
    "backoffLimitPerIndex",
    "managedBy",
    "successPolicy",
)


def job_update_causes(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[tuple[str, str]]:
    """ValidateJobSpecUpdate's (field, message) causes for changing `old` into `new`: ``completions`` (but for
    an Indexed Job scaled with ``parallelism`` equal to it), the selector, the completion mode and the other
    immutable fields may not change, nor the template (unless the Job is suspended and never started)."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    causes: list[tuple[str, str]] = []

    def immutable(field: str) -> None:
        causes.append(
            (f"spec.{field}", f"Invalid value: {format_value(spec.get(field))}: field is immutable")
        )

    if spec.get("completions") != old_spec.get("completions"):
        if spec.get("completionMode") != INDEXED or old_spec.get("completionMode") != INDEXED:
            immutable("completions")
        elif spec.get("completions") != spec.get("parallelism"):
            causes.append(
                (
                    "spec.completions",
                    f"Invalid value: {format_value(spec.get('completions'))}: can only be modified in tandem with "
                    "spec.parallelism",
                )
            )
    for field in _IMMUTABLE:
        if spec.get(field) != old_spec.get(field):
            immutable(field)
    never_started = old_spec.get("suspend") is True and not (old.get("status") or {}).get("startTime")
    if spec.get("template") != old_spec.get("template") and not never_started:
        immutable("template")
    return causes
