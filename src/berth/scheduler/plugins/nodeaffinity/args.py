"""NodeAffinityArgs: the scheduler-enforced ``addedAffinity`` of a profile."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.api.nodeselector import (
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredTerm,
    compile_node_selector,
    compile_preferred_terms,
)
from berth.scheduler.plugins.helpers import (
    as_int,
    as_list,
    as_mapping,
    check_fields,
    invalid,
    required,
)

PLUGIN = "NodeAffinity"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_LABEL_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    """Compiled ``addedAffinity``: a required selector every pod must match and extra preferred terms."""

    added_required: NodeSelector | None = None
    added_preferred: tuple[PreferredTerm, ...] = ()


def _check_requirement(path: str, req: NodeSelectorRequirement, field_req: bool) -> None:
    op, n = req.operator, len(req.values)
    if field_req:
        if req.key != "metadata.name":
            raise invalid(PLUGIN, f"{path}.key", req.key, "not a valid field selector key")
        if op not in ("In", "NotIn"):
            raise invalid(PLUGIN, f"{path}.operator", op, "not a valid selector operator")
        if n != 1:
            raise required(
                PLUGIN,
                f"{path}.values",
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )
        return
    if op not in _LABEL_OPS:
        raise invalid(PLUGIN, f"{path}.operator", op, "not a valid selector operator")
    if op in ("In", "NotIn") and n == 0:
        raise required(PLUGIN, f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
    if op in ("Exists", "DoesNotExist") and n:
        raise invalid(
            PLUGIN,
            f"{path}.values",
            list(req.values),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )
    if op in ("Gt", "Lt") and not req.label_parse_ok:
        raise invalid(
            PLUGIN,
            f"{path}.values",
            list(req.values),
            "must be specified single integer value when `operator` is 'Lt' or 'Gt'",
        )
    if not req.label_parse_ok:
        raise invalid(PLUGIN, path, req.key, "not a valid label requirement")


def _check_one(path: str, term: NodeSelectorTerm) -> None:
    for j, r in enumerate(term.match_expressions):
        _check_requirement(f"{path}.matchExpressions[{j}]", r, False)
    for j, r in enumerate(term.match_fields):
        _check_requirement(f"{path}.matchFields[{j}]", r, True)


def _check_terms(path: str, terms: tuple[NodeSelectorTerm, ...]) -> None:
    for i, term in enumerate(terms):
        _check_one(f"{path}[{i}]", term)


def parse_args(args: Mapping[str, Any]) -> NodeAffinityArgs:
    """Build NodeAffinityArgs from a pluginConfig args dict, validated as kube's ValidateNodeAffinityArgs."""
    check_fields(PLUGIN, "", args, ("addedAffinity",))
    aff = as_mapping(PLUGIN, "addedAffinity", args.get("addedAffinity"))
    if not aff:
        return NodeAffinityArgs()
    check_fields(PLUGIN, "addedAffinity", aff, (_REQUIRED, _PREFERRED))
    base = "addedAffinity"
    req_doc = aff.get(_REQUIRED)
    selector: NodeSelector | None = None
    if req_doc is not None:
        req_map = as_mapping(PLUGIN, f"{base}.{_REQUIRED}", req_doc)
        terms_path = f"{base}.{_REQUIRED}.nodeSelectorTerms"
        terms = as_list(PLUGIN, terms_path, req_map.get("nodeSelectorTerms"))
        if not terms:
            raise required(PLUGIN, terms_path, "must have at least one node selector term")
        selector = compile_node_selector(req_map)
        if selector is not None:
            _check_terms(terms_path, selector.terms)
    pref_path = f"{base}.{_PREFERRED}"
    preferred: list[PreferredTerm] = []
    for i, item in enumerate(as_list(PLUGIN, pref_path, aff.get(_PREFERRED))):
        item = as_mapping(PLUGIN, f"{pref_path}[{i}]", item)
        w = as_int(PLUGIN, f"{pref_path}[{i}].weight", item.get("weight", 0))
        if not 1 <= w <= 100:
            raise invalid(PLUGIN, f"{pref_path}[{i}].weight", w, "must be in the range 1-100")
        as_mapping(PLUGIN, f"{pref_path}[{i}].preference", item.get("preference"))
        compiled = compile_preferred_terms([dict(item)])
        for term in compiled:
            _check_one(f"{pref_path}[{i}].preference", term.term)
        preferred.extend(compiled)
    return NodeAffinityArgs(selector, tuple(preferred))
