"""Validation of wire-form objects, with apimachinery ``field.Error``-style messages.

:func:`validate_object` checks the apiVersion/kind is known, the metadata, and then runs the
kind's validator from :data:`KIND_VALIDATORS` (keyed by ``(group, kind)``; register more with
:func:`register_validator`). The first problem found raises :class:`InvalidObjectError`.
Namespace defaulting is the caller's job; errors name namespaced objects ``"<ns or default>/<name>"``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any, NoReturn

from berth.api.errors import InvalidObjectError, QuantityError
from berth.api.kinds import KindInfo, UnknownKindError, lookup_kind
from berth.api.labels import LabelSelectorError, compile_label_selector
from berth.api.meta import api_group
from berth.api.names import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
)
from berth.api.nodeselector import parse_int64
from berth.api.quantity import nano_value
from berth.api.taints import TAINT_EFFECTS

__all__ = [
    "KIND_VALIDATORS",
    "Context",
    "KindValidator",
    "format_value",
    "register_validator",
    "validate_object",
]

_INT32_MIN = -(1 << 31)
_INT32_MAX = (1 << 31) - 1
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


def format_value(value: object) -> str:
    """Render a bad value like Go's field.Error does: strings quoted, numbers bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


class Context:
    """The object under validation; its methods raise :class:`InvalidObjectError` for one field."""

    __slots__ = ("kind", "name", "source")

    def __init__(self, kind: str, name: str, source: str | None = None) -> None:
        """Remember the kind, display name (``ns/name`` for namespaced objects) and source."""
        self.kind = kind
        self.name = name
        self.source = source

    def fail(self, path: str, value: object, message: str) -> NoReturn:
        """Raise an InvalidObjectError with a ready-made message."""
        raise InvalidObjectError(self.kind, self.name, path, value, message, source=self.source)

    def required(self, path: str, detail: str = "") -> NoReturn:
        """``<path>: Required value[: detail]``."""
        self.fail(path, None, "Required value" + (f": {detail}" if detail else ""))

    def invalid(self, path: str, value: object, detail: str) -> NoReturn:
        """``<path>: Invalid value: "<value>": <detail>``."""
        self.fail(path, value, f"Invalid value: {format_value(value)}: {detail}")

    def not_supported(self, path: str, value: object, supported: Iterable[str]) -> NoReturn:
        """``<path>: Unsupported value: "<value>": supported values: "A", "B"``."""
        values = ", ".join(f'"{s}"' for s in supported)
        self.fail(path, value, f"Unsupported value: {format_value(value)}: supported values: {values}")

    def forbidden(self, path: str, detail: str) -> NoReturn:
        """``<path>: Forbidden: <detail>``."""
        self.fail(path, None, f"Forbidden: {detail}")

    def duplicate(self, path: str, value: object, detail: str = "") -> NoReturn:
        """``<path>: Duplicate value: "<value>"[: detail]``."""
        self.fail(path, value, f"Duplicate value: {format_value(value)}" + (f": {detail}" if detail else ""))

    # -- typed field helpers -------------------------------------------------------------------
    def mapping(self, path: str, value: object) -> Mapping[str, Any]:
        """Check *value* is an object (or absent, giving ``{}``)."""
        if type(value) is dict:
            return value
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.invalid(path, value, "must be an object")
        return value

    def sequence(self, path: str, value: object) -> list[Any]:
        """Check *value* is a list (or absent, giving ``[]``)."""
        if type(value) is list:
            return value
        if value is None:
            return []
        if not isinstance(value, list):
            self.invalid(path, value, "must be a list")
        return value

    def string(self, path: str, value: object) -> str:
        """Check *value* is a string (or absent, giving ``""``)."""
        if type(value) is str:
            return value
        if value is None:
            return ""
        if not isinstance(value, str):
            self.invalid(path, value, "must be a string")
        return value

    def integer(self, path: str, value: object, lo: int = _INT32_MIN, hi: int = _INT32_MAX) -> int:
        """Check *value* is an integer within [lo, hi]."""
        if type(value) is not int:
            self.invalid(path, value, "must be an integer")
        if not lo <= value <= hi:
            self.invalid(path, value, f"must be between {lo} and {hi}, inclusive")
        return value

    def quantity(self, path: str, value: object, non_negative: bool = True) -> int:
        """Check *value* parses as a quantity (and is >= 0); returns its nano-units."""
        try:
            nano = nano_value(value)
        except (QuantityError, TypeError):
            self.fail(path, value, f'invalid quantity "{value}"')
        if non_negative and nano < 0:
            self.invalid(path, value, "must be greater than or equal to 0")
        return nano

    def resource_list(self, path: str, value: object) -> dict[str, int]:
        """Check a ResourceList (name -> quantity); returns nano-units per resource."""
        rl = self.mapping(path, value)
        out = {}
        for k, v in rl.items():
            if not isinstance(k, str) or qualified_name_cached(k):
                self.invalid(path, k, "must be a standard resource name or a qualified name")
            out[k] = self.quantity(f"{path}.{k}", v)
        return out

    def label_map(self, path: str, value: object) -> Mapping[str, Any]:
        """Check a label map: qualified-name keys, label-value values."""
        labels = self.mapping(path, value)
        for k, v in labels.items():
            if not isinstance(k, str):
                self.invalid(path, k, "must be a string")
            errs = qualified_name_cached(k)
            if errs:
                self.invalid(path, k, errs[0])
            if not isinstance(v, str):
                self.invalid(f"{path}[{k}]", v, "must be a string")
            errs = label_value_cached(v)
            if errs:
                self.invalid(path, v, errs[0])
        return labels


@lru_cache(maxsize=8192)
def qualified_name_cached(value: str) -> tuple[str, ...]:
    """Cached qualified_name_errors (label keys repeat a lot)."""
    return tuple(qualified_name_errors(value))


@lru_cache(maxsize=8192)
def label_value_cached(value: str) -> tuple[str, ...]:
    """Cached label_value_errors."""
    return tuple(label_value_errors(value))


@lru_cache(maxsize=65536)
def _subdomain_cached(value: str) -> tuple[str, ...]:
    return tuple(dns1123_subdomain_errors(value))


@lru_cache(maxsize=8192)
def _label_cached(value: str) -> tuple[str, ...]:
    return tuple(dns1123_label_errors(value))


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
    errs = _label_cached(name) if info.kind == "Namespace" else _subdomain_cached(name)
    if errs:
        ctx.invalid("metadata.name", name, errs[0])
    ns = md.get("namespace")
    if ns is not None and ns != "":
        if not isinstance(ns, str):
            ctx.invalid("metadata.namespace", ns, "must be a string")
        errs = _label_cached(ns)
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


def validate_object(obj: Mapping[str, Any], *, source: str | None = None) -> None:
    """Validate one object; raise :class:`InvalidObjectError` naming the field on the first problem."""
    if not isinstance(obj, Mapping):
        raise InvalidObjectError(
            "Object", "", "<root>", obj, "Invalid value: must be an object", source=source
        )
    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    md = obj.get("metadata")
    raw_name = md.get("name") if isinstance(md, Mapping) else None
    name = raw_name if isinstance(raw_name, str) else ""
    ctx = Context(kind if isinstance(kind, str) and kind else "Object", name, source)
    if not api_version:
        ctx.required("apiVersion")
    if not kind:
        ctx.required("kind")
    try:
        info = lookup_kind(str(api_version), str(kind))
    except UnknownKindError:
        ctx.fail("apiVersion/kind", (api_version, kind), f'Unsupported value: "{api_version}, Kind={kind}"')
    if info.namespaced:
        ns = md.get("namespace") if isinstance(md, Mapping) else None
        ctx.name = f"{ns if isinstance(ns, str) and ns else 'default'}/{name}"
    _validate_metadata(obj, info, ctx)
    validator = KIND_VALIDATORS.get((api_group(info.api_version), info.kind))
    if validator is not None:
        validator(obj, ctx)


# -- Pod ---------------------------------------------------------------------------------------

_TOLERATION_OPERATORS = ("Equal", "Exists")
_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_PROTOCOLS = ("SCTP", "TCP", "UDP")


def _validate_resources(path: str, value: object, ctx: Context) -> None:
    res = ctx.mapping(path, value)
    if not res:
        return
    requests = ctx.resource_list(f"{path}.requests", res.get("requests"))
    limits = ctx.resource_list(f"{path}.limits", res.get("limits"))
    for k, req in requests.items():
        lim = limits.get(k)
        if lim is not None and req > lim:
            ctx.invalid(
                f"{path}.requests.{k}",
                res["requests"][k],
                f"must be less than or equal to {k} limit of {res['limits'][k]}",
            )


def _validate_containers(
    path: str, value: object, ctx: Context, names: set[str], *, init: bool, required: bool
) -> None:
    containers = ctx.sequence(path, value)
    if required and not containers:
        ctx.required(path)
    for i, c in enumerate(containers):
        cpath = f"{path}[{i}]"
        c = ctx.mapping(cpath, c)
        name = ctx.string(f"{cpath}.name", c.get("name"))
        if not name:
            ctx.required(f"{cpath}.name")
        errs = _label_cached(name)
        if errs:
            ctx.invalid(f"{cpath}.name", name, errs[0])
        if name in names:
            ctx.duplicate(f"{cpath}.name", name)
        names.add(name)
        rp = c.get("restartPolicy")
        if rp is not None:
            if not init:
                ctx.forbidden(f"{cpath}.restartPolicy", "may not be set for non-init containers")
            if rp != "Always":
                ctx.not_supported(f"{cpath}.restartPolicy", rp, ("Always",))
        if "resources" in c:
            _validate_resources(f"{cpath}.resources", c["resources"], ctx)
        ports = c.get("ports")
        if ports is not None:
            for j, p in enumerate(ctx.sequence(f"{cpath}.ports", ports)):
                ppath = f"{cpath}.ports[{j}]"
                p = ctx.mapping(ppath, p)
                if p.get("containerPort") is None:
                    ctx.required(f"{ppath}.containerPort")
                ctx.integer(f"{ppath}.containerPort", p.get("containerPort"), 1, 65535)
                if p.get("hostPort") is not None:
                    ctx.integer(f"{ppath}.hostPort", p.get("hostPort"), 0, 65535)
                proto = p.get("protocol")
                if proto is not None and proto not in _PROTOCOLS:
                    ctx.not_supported(f"{ppath}.protocol", proto, _PROTOCOLS)


def _validate_tolerations(path: str, value: object, ctx: Context) -> None:
    for i, t in enumerate(ctx.sequence(path, value)):
        tpath = f"{path}[{i}]"
        t = ctx.mapping(tpath, t)
        key = ctx.string(f"{tpath}.key", t.get("key"))
        op = ctx.string(f"{tpath}.operator", t.get("operator"))
        val = ctx.string(f"{tpath}.value", t.get("value"))
        effect = ctx.string(f"{tpath}.effect", t.get("effect"))
        if key:
            errs = qualified_name_cached(key)
            if errs:
                ctx.invalid(f"{tpath}.key", key, errs[0])
        elif op != "Exists":
            ctx.invalid(
                f"{tpath}.operator",
                op,
                'operator must be Exists when `key` is empty, which means "match all values and all keys"',
            )
        seconds = t.get("tolerationSeconds")
        if seconds is not None:
            ctx.integer(f"{tpath}.tolerationSeconds", seconds, -(1 << 63), (1 << 63) - 1)
            if effect != "NoExecute":
                ctx.invalid(
                    f"{tpath}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"
                )
        if op in ("", "Equal"):
            errs = label_value_cached(val)
            if errs:
                ctx.invalid(f"{tpath}.value", val, errs[0])
        elif op == "Exists":
            if val:
                ctx.invalid(f"{tpath}.operator", val, "value must be empty when `operator` is 'Exists'")
        else:
            ctx.not_supported(f"{tpath}.operator", op, _TOLERATION_OPERATORS)
        if effect and effect not in TAINT_EFFECTS:
            ctx.not_supported(f"{tpath}.effect", effect, TAINT_EFFECTS)


def _validate_requirement(path: str, value: object, ctx: Context, *, fields: bool) -> None:
    r = ctx.mapping(path, value)
    key = ctx.string(f"{path}.key", r.get("key"))
    op = ctx.string(f"{path}.operator", r.get("operator"))
    values = [
        ctx.string(f"{path}.values[{i}]", v)
        for i, v in enumerate(ctx.sequence(f"{path}.values", r.get("values")))
    ]
    if fields:
        if op not in ("In", "NotIn"):
            ctx.invalid(f"{path}.operator", op, "not a valid selector operator")
        if len(values) != 1:
            ctx.required(
                f"{path}.values",
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )
        if key != "metadata.name":
            ctx.invalid(f"{path}.key", key, "not a valid field selector key")
        errs = _subdomain_cached(values[0])
        if errs:
            ctx.invalid(f"{path}.values[0]", values[0], errs[0])
        return
    if op in ("In", "NotIn"):
        if not values:
            ctx.required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            ctx.forbidden(
                f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            ctx.required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")
        if parse_int64(values[0]) is None:
            ctx.invalid(f"{path}.values[0]", values[0], "must be an integer")
    else:
        ctx.invalid(f"{path}.operator", op, "not a valid selector operator")
    if not key:
        ctx.required(f"{path}.key")
    errs = qualified_name_cached(key)
    if errs:
        ctx.invalid(f"{path}.key", key, errs[0])
    if op in ("In", "NotIn"):
        for i, v in enumerate(values):
            errs = label_value_cached(v)
            if errs:
                ctx.invalid(f"{path}.values[{i}]", v, errs[0])


def _validate_term(path: str, value: object, ctx: Context) -> None:
    term = ctx.mapping(path, value)
    for i, r in enumerate(ctx.sequence(f"{path}.matchExpressions", term.get("matchExpressions"))):
        _validate_requirement(f"{path}.matchExpressions[{i}]", r, ctx, fields=False)
    for i, r in enumerate(ctx.sequence(f"{path}.matchFields", term.get("matchFields"))):
        _validate_requirement(f"{path}.matchFields[{i}]", r, ctx, fields=True)


def _validate_node_affinity(path: str, value: object, ctx: Context) -> None:
    na = ctx.mapping(path, value)
    req_path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None:
        terms = ctx.sequence(
            f"{req_path}.nodeSelectorTerms", ctx.mapping(req_path, req).get("nodeSelectorTerms")
        )
        if not terms:
            ctx.required(f"{req_path}.nodeSelectorTerms", "must have at least one node selector term")
        for i, t in enumerate(terms):
            _validate_term(f"{req_path}.nodeSelectorTerms[{i}]", t, ctx)
    pref_path = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, p in enumerate(ctx.sequence(pref_path, na.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        ppath = f"{pref_path}[{i}]"
        p = ctx.mapping(ppath, p)
        weight = p.get("weight")
        if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= 100:
            ctx.invalid(f"{ppath}.weight", weight, "must be in the range 1-100")
        if p.get("preference") is None:
            ctx.required(f"{ppath}.preference")
        _validate_term(f"{ppath}.preference", p.get("preference"), ctx)


def _validate_selector(path: str, value: object, ctx: Context) -> None:
    if value is None:
        return
    sel = ctx.mapping(path, value)
    try:
        compile_label_selector(sel)
    except LabelSelectorError as e:
        ctx.invalid(f"{path}.{e.path}" if e.path else path, e.value, e.message)


def _validate_pod_affinity_term(path: str, value: object, ctx: Context) -> None:
    term = ctx.mapping(path, value)
    _validate_selector(f"{path}.labelSelector", term.get("labelSelector"), ctx)
    _validate_selector(f"{path}.namespaceSelector", term.get("namespaceSelector"), ctx)
    for i, ns in enumerate(ctx.sequence(f"{path}.namespaces", term.get("namespaces"))):
        name = ctx.string(f"{path}.namespaces[{i}]", ns)
        errs = _label_cached(name)
        if errs:
            ctx.invalid(f"{path}.namespace", name, errs[0])
    for field_name in ("matchLabelKeys", "mismatchLabelKeys"):
        for i, k in enumerate(ctx.sequence(f"{path}.{field_name}", term.get(field_name))):
            key = ctx.string(f"{path}.{field_name}[{i}]", k)
            errs = qualified_name_cached(key)
            if errs:
                ctx.invalid(f"{path}.{field_name}[{i}]", key, errs[0])
    key = ctx.string(f"{path}.topologyKey", term.get("topologyKey"))
    if not key:
        ctx.required(f"{path}.topologyKey", "can not be empty")
    errs = qualified_name_cached(key)
    if errs:
        ctx.invalid(f"{path}.topologyKey", key, errs[0])


def _validate_pod_affinity(path: str, value: object, ctx: Context) -> None:
    pa = ctx.mapping(path, value)
    req_path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    for i, t in enumerate(ctx.sequence(req_path, pa.get("requiredDuringSchedulingIgnoredDuringExecution"))):
        _validate_pod_affinity_term(f"{req_path}[{i}]", t, ctx)
    pref_path = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, w in enumerate(ctx.sequence(pref_path, pa.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        wpath = f"{pref_path}[{i}]"
        w = ctx.mapping(wpath, w)
        weight = w.get("weight")
        if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= 100:
            ctx.invalid(f"{wpath}.weight", weight, "must be in the range 1-100")
        _validate_pod_affinity_term(f"{wpath}.podAffinityTerm", w.get("podAffinityTerm"), ctx)


def _validate_spread(path: str, value: object, ctx: Context) -> None:
    seen: set[tuple[str, object]] = set()
    for i, c in enumerate(ctx.sequence(path, value)):
        cpath = f"{path}[{i}]"
        c = ctx.mapping(cpath, c)
        skew = c.get("maxSkew")
        if isinstance(skew, bool) or not isinstance(skew, int) or skew <= 0:
            ctx.invalid(f"{cpath}.maxSkew", skew, "must be greater than zero")
        key = ctx.string(f"{cpath}.topologyKey", c.get("topologyKey"))
        if not key:
            ctx.required(f"{cpath}.topologyKey", "can not be empty")
        errs = qualified_name_cached(key)
        if errs:
            ctx.invalid(f"{cpath}.topologyKey", key, errs[0])
        wu = c.get("whenUnsatisfiable")
        if wu not in ("DoNotSchedule", "ScheduleAnyway"):
            ctx.not_supported(f"{cpath}.whenUnsatisfiable", wu, ("DoNotSchedule", "ScheduleAnyway"))
        md = c.get("minDomains")
        if md is not None:
            ctx.integer(f"{cpath}.minDomains", md, 1)
            if wu != "DoNotSchedule":
                ctx.invalid(
                    f"{cpath}.minDomains", md, "can only use minDomains if whenUnsatisfiable=DoNotSchedule"
                )
        pair = (key, wu)
        if pair in seen:
            ctx.duplicate(f"{cpath}.{{topologyKey, whenUnsatisfiable}}", f"{{{key}, {wu}}}")
        seen.add(pair)
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            v = c.get(policy)
            if v is not None and v not in ("Honor", "Ignore"):
                ctx.not_supported(f"{cpath}.{policy}", v, ("Honor", "Ignore"))
        selector = c.get("labelSelector")
        _validate_selector(f"{cpath}.labelSelector", selector, ctx)
        _validate_match_label_keys(f"{cpath}.matchLabelKeys", c.get("matchLabelKeys"), selector, ctx)


def _validate_match_label_keys(path: str, value: object, selector: object, ctx: Context) -> None:
    """kube's validateMatchLabelKeysInTopologySpread: label keys, not also in the selector, and only with
    a selector."""
    keys = ctx.sequence(path, value)
    if not keys:
        return
    if selector is None:
        ctx.forbidden(path, "must not be specified when labelSelector is not set")
    sel = ctx.mapping("labelSelector", selector)
    in_selector = set(sel.get("matchLabels") or {}) | {
        e.get("key") for e in sel.get("matchExpressions") or () if isinstance(e, Mapping)
    }
    for i, k in enumerate(keys):
        key = ctx.string(f"{path}[{i}]", k)
        errs = qualified_name_cached(key)
        if errs:
            ctx.invalid(f"{path}[{i}]", key, errs[0])
        if key in in_selector:
            ctx.invalid(f"{path}[{i}]", key, "exists in both matchLabelKeys and labelSelector")


def validate_pod_spec(path: str, value: object, ctx: Context) -> None:
    """Validate a PodSpec at *path* (also used for pod templates by other kinds)."""
    spec = ctx.mapping(path, value)
    names: set[str] = set()
    _validate_containers(f"{path}.containers", spec.get("containers"), ctx, names, init=False, required=True)
    if spec.get("initContainers") is not None:
        _validate_containers(
            f"{path}.initContainers", spec.get("initContainers"), ctx, names, init=True, required=False
        )
    if spec.get("overhead") is not None:
        ctx.resource_list(f"{path}.overhead", spec.get("overhead"))
    if spec.get("tolerations") is not None:
        _validate_tolerations(f"{path}.tolerations", spec.get("tolerations"), ctx)
    if spec.get("nodeSelector") is not None:
        ctx.label_map(f"{path}.nodeSelector", spec.get("nodeSelector"))
    affinity = spec.get("affinity")
    if affinity is not None:
        aff = ctx.mapping(f"{path}.affinity", affinity)
        na = aff.get("nodeAffinity")
        if na is not None:
            _validate_node_affinity(f"{path}.affinity.nodeAffinity", na, ctx)
        for kind in ("podAffinity", "podAntiAffinity"):
            if aff.get(kind) is not None:
                _validate_pod_affinity(f"{path}.affinity.{kind}", aff.get(kind), ctx)
    for field_name in ("priorityClassName", "nodeName", "schedulerName"):
        v = ctx.string(f"{path}.{field_name}", spec.get(field_name))
        if v:
            errs = _subdomain_cached(v)
            if errs:
                ctx.invalid(f"{path}.{field_name}", v, errs[0])
    if spec.get("priority") is not None:
        ctx.integer(f"{path}.priority", spec.get("priority"))
    pp = spec.get("preemptionPolicy")
    if pp is not None and pp not in ("PreemptLowerPriority", "Never"):
        ctx.not_supported(f"{path}.preemptionPolicy", pp, ("Never", "PreemptLowerPriority"))
    if spec.get("topologySpreadConstraints") is not None:
        _validate_spread(f"{path}.topologySpreadConstraints", spec.get("topologySpreadConstraints"), ctx)
    for i, g in enumerate(ctx.sequence(f"{path}.schedulingGates", spec.get("schedulingGates"))):
        gname = ctx.string(
            f"{path}.schedulingGates[{i}].name", ctx.mapping(f"{path}.schedulingGates[{i}]", g).get("name")
        )
        errs = qualified_name_cached(gname)
        if errs:
            ctx.invalid(f"{path}.schedulingGates[{i}].name", gname, errs[0])


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


def _validate_reservation(obj: Mapping[str, Any], ctx: Context) -> None:
    # berth.api.reservation imports this module, so it is loaded on first use
    from berth.api.reservation import validate_reservation

    validate_reservation(obj, ctx)


register_validator("scheduling.koordinator.sh", "Reservation", _validate_reservation)


def _validate_elastic_quota(obj: Mapping[str, Any], ctx: Context) -> None:
    # berth.api.elasticquota imports this module, so it is loaded on first use
    from berth.api.elasticquota import validate_elastic_quota

    validate_elastic_quota(obj, ctx)


for _eq_group in ("scheduling.x-k8s.io", "scheduling.sigs.k8s.io"):
    register_validator(_eq_group, "ElasticQuota", _validate_elastic_quota)


# -- apps/v1 ReplicaSet, Deployment -------------------------------------------------------------

_PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)


def _go_string_map(value: object) -> str:
    """A label map as Go's ``%#v`` prints it: ``map[string]string{"a":"b", "c":"d"}`` (keys sorted)."""
    if not isinstance(value, Mapping):
        return "map[string]string(nil)"
    items = ", ".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(value.items()))
    return f"map[string]string{{{items}}}"


def _non_negative(path: str, value: object, ctx: Context) -> None:
    if value is None:
        return
    if type(value) is not int:
        ctx.invalid(path, value, "must be an integer")
    if value < 0:
        ctx.invalid(path, value, "must be greater than or equal to 0")


def _validate_workload_template(spec: Mapping[str, Any], ctx: Context) -> None:
    """Selector (required, non-empty, matching the template labels) and the pod template."""
    from berth.api.labels import LabelSelectorError, compile_label_selector

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
        ctx.invalid("spec.selector", sel_map, "empty selector is invalid for deployment")
    template = ctx.mapping("spec.template", spec.get("template"))
    tmeta = ctx.mapping("spec.template.metadata", template.get("metadata"))
    labels = tmeta.get("labels")
    if not selector.matches(labels if isinstance(labels, Mapping) else {}):
        ctx.fail(
            "spec.template.metadata.labels",
            labels,
            f"Invalid value: {_go_string_map(labels)}: `selector` does not match template `labels`",
        )
    if labels is not None:
        ctx.label_map("spec.template.metadata.labels", labels)
    for k, v in ctx.mapping("spec.template.metadata.annotations", tmeta.get("annotations")).items():
        if not isinstance(v, str):
            ctx.invalid(f"spec.template.metadata.annotations[{k}]", v, "must be a string")
    pod_spec = template.get("spec")
    validate_pod_spec("spec.template.spec", pod_spec, ctx)
    pod_spec = ctx.mapping("spec.template.spec", pod_spec)
    restart = pod_spec.get("restartPolicy")
    if restart is not None and restart != "Always":
        ctx.not_supported("spec.template.spec.restartPolicy", restart, ("Always",))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        ctx.invalid(
            "spec.template.spec.activeDeadlineSeconds",
            pod_spec.get("activeDeadlineSeconds"),
            "activeDeadlineSeconds in ReplicaSet is not Supported",
        )


def _validate_replica_set(obj: Mapping[str, Any], ctx: Context) -> None:
    spec = ctx.mapping("spec", obj.get("spec"))
    _non_negative("spec.replicas", spec.get("replicas"), ctx)
    _non_negative("spec.minReadySeconds", spec.get("minReadySeconds"), ctx)
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
    _non_negative(path, value, ctx)
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
    _non_negative("spec.replicas", spec.get("replicas"), ctx)
    _validate_workload_template(spec, ctx)
    _validate_strategy(spec, ctx)
    _non_negative("spec.minReadySeconds", spec.get("minReadySeconds"), ctx)
    _non_negative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"), ctx)
    pds = spec.get("progressDeadlineSeconds")
    if pds is not None:
        _non_negative("spec.progressDeadlineSeconds", pds, ctx)
        if pds <= (spec.get("minReadySeconds") or 0):
            ctx.invalid("spec.progressDeadlineSeconds", pds, "must be greater than minReadySeconds")


register_validator("apps", "ReplicaSet", _validate_replica_set)
register_validator("apps", "Deployment", _validate_deployment)


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
    from berth.api.labels import LabelSelectorError, compile_label_selector
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


def _validate_pod_group(obj: Mapping[str, Any], ctx: Context) -> None:
    # berth.api.podgroup imports this module (for typing only), so it is loaded on first use
    from berth.api.podgroup import validate_pod_group

    validate_pod_group(obj, ctx)


register_validator("scheduling.x-k8s.io", "PodGroup", _validate_pod_group)
register_validator("scheduling.sigs.k8s.io", "PodGroup", _validate_pod_group)
