"""Scheduler profiles from KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1; v1beta3, v1beta2 and
v1beta1 are read with a deprecation warning and converted, see `config_versions`).

The document is decoded strictly, as kube-scheduler's codec does: unknown fields are refused
(``strict decoding error: unknown field "percentageOfNodeToScore"``), see `config_schema`.

Merging follows kube-scheduler: a profile's plugin sets are merged over the default plugins
(``"*"`` in ``disabled`` drops every default of that point, an enabled default is reconfigured in
place, other enabled plugins are appended); ``multiPoint`` plugins are then expanded into every
extension point they implement, with explicit per-point settings taking precedence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from berth.scheduler.framework.config_schema import EXTENSION_POINTS, strict_decoding_error, unknown_fields
from berth.scheduler.framework.config_versions import (
    API_VERSIONS,
    removed_plugin_errors,
    rules,
    unsupported_message,
)
from berth.scheduler.framework.extender_config import (
    ExtenderConfig,
    ExtenderConfigError,
    ignored_by_scheduler,
    parse_extenders,
)

KIND = "KubeSchedulerConfiguration"


class ConfigError(ValueError):
    """An invalid scheduler configuration (names the field and the value)."""


@dataclass(frozen=True, slots=True)
class PluginRef:
    """A plugin named in a plugin set, with its score weight (0 = unset)."""

    name: str
    weight: int = 0


@dataclass(slots=True)
class PluginSet:
    """Enabled and disabled plugins of one extension point."""

    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ProfileConfig:
    """One profile as written, merged with the defaults (not yet expanded)."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: dict[str, PluginSet]
    plugin_args: dict[str, dict[str, Any]]


@dataclass(slots=True)
class SchedulerConfig:
    """The whole configuration: global settings and the profiles."""

    percentage_of_nodes_to_score: int | None
    pod_initial_backoff_seconds: float
    pod_max_backoff_seconds: float
    profiles: list[ProfileConfig]
    extenders: list[ExtenderConfig] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Notices for the user (a deprecated apiVersion), to print on stderr."""


DEFAULT_MULTIPOINT: tuple[PluginRef, ...] = (
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeUnschedulable"),
    PluginRef("NodeName"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("VolumeRestrictions"),
    PluginRef("NodeVolumeLimits"),
    PluginRef("VolumeBinding"),
    PluginRef("VolumeZone"),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    # Reservation before DefaultPreemption: its PostFilter reasons come first, as in koord-scheduler's profile
    PluginRef("Reservation", 5000),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
)

# Without a configuration file Berth serves kube's default profile and Koordinator's ``koord-scheduler``
# (same plugins), so manifests written for either scheduler run unchanged.
DEFAULT_PROFILE_NAMES = ("default-scheduler", "koord-scheduler")

# Extension-point spellings found in published configurations that mean a real point.
POINT_ALIASES = {"reservation": "reserve"}


def _refs(items: Any, path: str) -> list[PluginRef]:
    if items is None:
        return []
    if not isinstance(items, list):
        raise ConfigError(f"{path}: Invalid value: {items!r}: must be a list")
    out = []
    for i, it in enumerate(items):
        if not isinstance(it, Mapping) or not isinstance(it.get("name"), str) or not it["name"]:
            raise ConfigError(f"{path}[{i}].name: Required value")
        weight = it.get("weight", 0) or 0
        if not isinstance(weight, int) or weight < 0:
            raise ConfigError(
                f"{path}[{i}].weight: Invalid value: {weight!r}: must be a non-negative integer"
            )
        out.append(PluginRef(it["name"], weight))
    return out


def _merge_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    disabled = set(custom.disabled)
    custom_index = {p.name: i for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for p in default.enabled:
            if p.name in disabled:
                continue
            if p.name in custom_index:
                idx = custom_index[p.name]
                p = custom.enabled[idx]
                replaced.add(idx)
            enabled.append(p)
    for i, p in enumerate(custom.enabled):
        if i not in replaced:
            enabled.append(p)
    return PluginSet(enabled, list(custom.disabled))


def _percentage(value: Any, path: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100:
        raise ConfigError(f"{path}: Invalid value: {value!r}: not in valid range [0-100]")
    return value


def default_plugin_sets(weights: Mapping[str, int] | None = None) -> dict[str, PluginSet]:
    """The default plugin sets (everything in multiPoint, as kube's v1 defaults); ``weights`` overrides
    default score weights (an older version's)."""
    sets = {p: PluginSet() for p in EXTENSION_POINTS}
    over = weights or {}
    sets["multiPoint"] = PluginSet(
        [PluginRef(r.name, over.get(r.name, r.weight)) for r in DEFAULT_MULTIPOINT]
    )
    return sets


def read_config_document(path: Path) -> dict[str, Any]:
    """The KubeSchedulerConfiguration document of the file at ``path``, not yet parsed; ConfigError (without
    the file's name, which the caller says as it names its option) when it cannot be read, is not YAML or is
    not an object."""
    try:
        text = path.read_text()
    except OSError as e:
        raise ConfigError(str(e.strerror)) from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"invalid YAML: {e}") from None
    if not isinstance(doc, dict):
        raise ConfigError("expected a KubeSchedulerConfiguration object")
    return doc


def parse_config(doc: Mapping[str, Any] | None, *, source: str = "scheduler config") -> SchedulerConfig:
    """Parse a KubeSchedulerConfiguration document (None gives the default configuration).

    Errors do not repeat ``source``: the caller names the file once."""
    explicit = doc is not None
    doc = doc or {"apiVersion": API_VERSIONS[0], "kind": KIND}
    api_version = doc.get("apiVersion")
    if doc.get("kind") != KIND or api_version not in API_VERSIONS:
        raise ConfigError(unsupported_message(api_version, doc.get("kind")))
    strict = unknown_fields(doc, str(api_version))
    if strict:
        raise ConfigError(strict_decoding_error(strict))
    version = rules(str(api_version))
    removed = removed_plugin_errors(doc.get("profiles"), version.api_version)
    if removed:
        raise ConfigError("; ".join(removed))
    warnings = [version.deprecation] if version.deprecation else []
    global_pct = _percentage(doc.get("percentageOfNodesToScore"), "percentageOfNodesToScore")
    initial = doc.get("podInitialBackoffSeconds", 1)
    maximum = doc.get("podMaxBackoffSeconds", 10)
    if doc.get("profiles"):
        profiles_doc = doc["profiles"]
    elif explicit:
        profiles_doc = [{"schedulerName": "default-scheduler"}]
    else:
        profiles_doc = [{"schedulerName": n} for n in DEFAULT_PROFILE_NAMES]
    profiles: list[ProfileConfig] = []
    seen: set[str] = set()
    for i, prof in enumerate(profiles_doc):
        path = f"profiles[{i}]"
        name = prof.get("schedulerName") or "default-scheduler"
        if name in seen:
            raise ConfigError(f'{path}.schedulerName: Duplicate value: "{name}"')
        seen.add(name)
        custom = {POINT_ALIASES.get(k, k): v for k, v in (prof.get("plugins") or {}).items()}
        unknown = set(custom) - set(EXTENSION_POINTS) - {"multiPoint"}
        if unknown:
            bad = sorted(unknown)[0]
            raise ConfigError(f'{path}.plugins.{bad}: Unsupported value: "{bad}"')
        merged: dict[str, PluginSet] = {}
        for point, dflt in default_plugin_sets(version.default_weights).items():
            c = custom.get(point) or {}
            cset = PluginSet(
                _refs(c.get("enabled"), f"{path}.plugins.{point}.enabled"),
                [r.name for r in _refs(c.get("disabled"), f"{path}.plugins.{point}.disabled")],
            )
            merged[point] = _merge_set(dflt, cset)
        args: dict[str, dict[str, Any]] = {}
        for j, pc in enumerate(prof.get("pluginConfig") or []):
            pname = pc.get("name")
            if not pname:
                raise ConfigError(f"{path}.pluginConfig[{j}].name: Required value")
            if pname in args:
                raise ConfigError(f'{path}.pluginConfig[{j}].name: Duplicate value: "{pname}"')
            a = pc.get("args") or {}
            if not isinstance(a, Mapping):
                raise ConfigError(f"{path}.pluginConfig[{j}].args: Invalid value: must be an object")
            args[pname] = {k: v for k, v in a.items() if k not in ("apiVersion", "kind")}
        pct = _percentage(prof.get("percentageOfNodesToScore"), f"{path}.percentageOfNodesToScore")
        profiles.append(ProfileConfig(name, pct, merged, args))
    try:
        extenders = parse_extenders(doc.get("extenders"))
    except ExtenderConfigError as e:
        raise ConfigError(str(e)) from None
    ignored = ignored_by_scheduler(extenders)
    if ignored:  # as kube's buildExtenders: the extenders' ignored resources replace NodeResourcesFit's
        for prof in profiles:
            prof.plugin_args.setdefault("NodeResourcesFit", {})["ignoredResources"] = list(ignored)
    return SchedulerConfig(global_pct, float(initial), float(maximum), profiles, extenders, warnings)


def expand_plugins(
    profile: ProfileConfig, implements: Mapping[str, Sequence[str]]
) -> tuple[dict[str, list[str]], dict[str, int]]:
    """Expand multiPoint into per-point ordered plugin lists and score weights.

    ``implements`` maps a plugin name to the extension points its object implements.
    """
    points: dict[str, list[str]] = {}
    weights: dict[str, int] = {}
    multi = profile.plugins["multiPoint"]
    multi_disabled = set(multi.disabled)
    for point in EXTENSION_POINTS:
        pset = profile.plugins[point]
        specific = [p.name for p in pset.enabled]
        if point == "score":
            for p in pset.enabled:
                weights[p.name] = p.weight or 1
        disabled = set(pset.disabled)
        if "*" in disabled:
            points[point] = specific
            continue
        override: list[str] = []
        from_multi: list[str] = []
        for ref in multi.enabled:
            if ref.name in multi_disabled:
                continue
            if point not in implements.get(ref.name, ()):
                continue
            if ref.name in disabled:
                continue
            if ref.name in specific:
                override.append(ref.name)
                continue
            if ref.name in from_multi:
                raise ConfigError(f'plugin "{ref.name}" already registered as "{point}"')
            from_multi.append(ref.name)
            if point == "score":
                weights[ref.name] = ref.weight or 1
        ordered = override + from_multi + [n for n in specific if n not in override]
        points[point] = ordered
    return points, weights
