"""Validation of a pod spec (containers, resources, tolerations, affinity, spread constraints), as the
API server validates Pods and the pod templates of workloads and Reservations."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from berth.api.checks import (
    Context,
    dns_label_cached,
    label_value_cached,
    qualified_name_cached,
    subdomain_cached,
)
from berth.api.labels import LabelSelectorError, compile_label_selector
from berth.api.nodeselector import parse_int64
from berth.api.taints import TAINT_EFFECTS

__all__ = ["validate_pod_spec"]

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
        name = c.get("name")
        if type(name) is not str:
            name = ctx.string(f"{cpath}.name", name)
        if not name:
            ctx.required(f"{cpath}.name")
        errs = dns_label_cached(name)
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
        errs = subdomain_cached(values[0])
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
        errs = dns_label_cached(name)
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


_ENCODE = msgspec.json.Encoder().encode


def validate_pod_spec(path: str, value: object, ctx: Context) -> None:
    """Validate a PodSpec at *path* (also used for pod templates by other kinds); one whose JSON encoding is in
    ``ctx.valid_pod_specs`` is valid (only plain JSON values come with that set)."""
    known = ctx.valid_pod_specs
    if known is None:
        _validate_pod_spec(path, value, ctx)
        return
    key = _ENCODE(value)  # tells plain JSON values apart exactly
    if key not in known:
        _validate_pod_spec(path, value, ctx)
        known.add(key)


def _validate_pod_spec(path: str, value: object, ctx: Context) -> None:
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
        v = spec.get(field_name)
        if v is None:
            continue
        v = ctx.string(f"{path}.{field_name}", v)
        if v:
            errs = subdomain_cached(v)
            if errs:
                ctx.invalid(f"{path}.{field_name}", v, errs[0])
    if spec.get("priority") is not None:
        ctx.integer(f"{path}.priority", spec.get("priority"))
    pp = spec.get("preemptionPolicy")
    if pp is not None and pp not in ("PreemptLowerPriority", "Never"):
        ctx.not_supported(f"{path}.preemptionPolicy", pp, ("Never", "PreemptLowerPriority"))
    if spec.get("topologySpreadConstraints") is not None:
        _validate_spread(f"{path}.topologySpreadConstraints", spec.get("topologySpreadConstraints"), ctx)
    gates = spec.get("schedulingGates")
    if gates is not None:
        for i, g in enumerate(ctx.sequence(f"{path}.schedulingGates", gates)):
            gpath = f"{path}.schedulingGates[{i}]"
            gname = ctx.string(f"{gpath}.name", ctx.mapping(gpath, g).get("name"))
            errs = qualified_name_cached(gname)
            if errs:
                ctx.invalid(f"{gpath}.name", gname, errs[0])
