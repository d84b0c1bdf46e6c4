"""LowNodeUtilization / HighNodeUtilization args: upstream's validation_test.go and defaults_test.go cases,
the strict decoding of the args, and the refusal of metricsUtilization (Berth has no metrics source)."""

from __future__ import annotations

from typing import Any

import pytest

from berth.descheduler.args import PolicyError
from berth.descheduler.plugins.nodeutilization import (
    SPECS,
    EvictableNamespaces,
    EvictionLimits,
    HighNodeUtilizationArgs,
    LowNodeUtilizationArgs,
)

EXT = "example.com/foo"
SPEC = {s.name: s for s in SPECS}


def low(raw: dict[str, Any] | None) -> LowNodeUtilizationArgs:
    got = SPEC["LowNodeUtilization"].read_args(raw, "LowNodeUtilization.args")
    assert isinstance(got, LowNodeUtilizationArgs)
    return got


def high(raw: dict[str, Any] | None) -> HighNodeUtilizationArgs:
    got = SPEC["HighNodeUtilization"].read_args(raw, "HighNodeUtilization.args")
    assert isinstance(got, HighNodeUtilizationArgs)
    return got


def test_specs_are_balance_plugins() -> None:
    assert {s.name: s.points for s in SPECS} == {
        "LowNodeUtilization": frozenset({"balance"}),
        "HighNodeUtilization": frozenset({"balance"}),
    }


# ---- upstream TestValidateLowNodeUtilizationPluginConfig ------------------------------------------------

LOW_INVALID: list[tuple[str, dict[str, Any], str]] = [
    (
        "passing invalid thresholds",
        {"thresholds": {"cpu": 20, "memory": 120}, "targetThresholds": {"cpu": 80, "memory": 80}},
        "LowNodeUtilization.args.thresholds.memory: 120 is out of range 0-100",
    ),
    (
        "thresholds and targetThresholds configured different num of resources",
        {"thresholds": {"cpu": 20, "memory": 20}, "targetThresholds": {"cpu": 80, "memory": 80, "pods": 80}},
        "LowNodeUtilization.args.targetThresholds: thresholds and targetThresholds configured different "
        "resources (thresholds: cpu, memory; targetThresholds: cpu, memory, pods)",
    ),
    (
        "thresholds and targetThresholds configured different resources",
        {"thresholds": {"cpu": 20, "memory": 20}, "targetThresholds": {"cpu": 80, "pods": 80}},
        "LowNodeUtilization.args.targetThresholds: thresholds and targetThresholds configured different "
        "resources (thresholds: cpu, memory; targetThresholds: cpu, pods)",
    ),
    (
        "thresholds' CPU config value is greater than targetThresholds'",
        {"thresholds": {"cpu": 90, "memory": 20}, "targetThresholds": {"cpu": 80, "memory": 80}},
        "LowNodeUtilization.args.thresholds.cpu: 90 is greater than targetThresholds.cpu (80)",
    ),
    (
        "only thresholds configured extended resource",
        {"thresholds": {"cpu": 20, "memory": 20, EXT: 20}, "targetThresholds": {"cpu": 80, "memory": 80}},
        "LowNodeUtilization.args.targetThresholds: thresholds and targetThresholds configured different "
        f"resources (thresholds: cpu, memory, {EXT}; targetThresholds: cpu, memory)",
    ),
    (
        "only targetThresholds configured extended resource",
        {"thresholds": {"cpu": 20, "memory": 20}, "targetThresholds": {"cpu": 80, "memory": 80, EXT: 80}},
        "LowNodeUtilization.args.targetThresholds: thresholds and targetThresholds configured different "
        f"resources (thresholds: cpu, memory; targetThresholds: cpu, memory, {EXT})",
    ),
    (
        "thresholds and targetThresholds configured different extended resources",
        {
            "thresholds": {"cpu": 20, "memory": 20, EXT: 20},
            "targetThresholds": {"cpu": 80, "memory": 80, "example.com/bar": 80},
        },
        "LowNodeUtilization.args.targetThresholds: thresholds and targetThresholds configured different "
        f"resources (thresholds: cpu, memory, {EXT}; targetThresholds: cpu, memory, example.com/bar)",
    ),
    (
        "thresholds' extended resource config value is greater than targetThresholds'",
        {
            "thresholds": {"cpu": 20, "memory": 20, EXT: 90},
            "targetThresholds": {"cpu": 80, "memory": 80, EXT: 20},
        },
        f"LowNodeUtilization.args.thresholds.{EXT}: 90 is greater than targetThresholds.{EXT} (20)",
    ),
    (
        "setting both kubernetes metrics source and metricsserver",
        {
            "thresholds": {"cpu": 20, "memory": 20, EXT: 20},
            "targetThresholds": {"cpu": 80, "memory": 80, EXT: 80},
            "metricsUtilization": {"metricsServer": True, "source": "KubernetesMetrics"},
        },
        'LowNodeUtilization.args.metricsUtilization: it is not allowed to set both "KubernetesMetrics" source '
        "and metricsServer",
    ),
    (
        "missing prometheus query",
        {
            "thresholds": {"cpu": 20, "memory": 20, EXT: 20},
            "targetThresholds": {"cpu": 80, "memory": 80, EXT: 80},
            "metricsUtilization": {"source": "Prometheus"},
        },
        "LowNodeUtilization.args.metricsUtilization.prometheus.query: prometheus query is required when "
        'metrics source is set to "Prometheus"',
    ),
    (
        "prometheus set when source set to kubernetes metrics",
        {
            "thresholds": {"cpu": 20, "memory": 20, EXT: 20},
            "targetThresholds": {"cpu": 80, "memory": 80, EXT: 80},
            "metricsUtilization": {"source": "KubernetesMetrics", "prometheus": {}},
        },
        "LowNodeUtilization.args.metricsUtilization.prometheus: prometheus configuration is not allowed to "
        'set when source is set to "KubernetesMetrics"',
    ),
    # Berth's own refusals and upstream's other rules
    (
        "no thresholds",
        {"targetThresholds": {"cpu": 80}},
        "LowNodeUtilization.args.thresholds: no resource threshold is configured",
    ),
    (
        "no target thresholds",
        {"thresholds": {"cpu": 20}},
        "LowNodeUtilization.args.targetThresholds: no resource threshold is configured",
    ),
    (
        "empty args",
        {},
        "LowNodeUtilization.args.thresholds: no resource threshold is configured",
    ),
    (
        "negative threshold",
        {"thresholds": {"cpu": -1}, "targetThresholds": {"cpu": 80}},
        "LowNodeUtilization.args.thresholds.cpu: -1 is out of range 0-100",
    ),
    (
        "target above 100",
        {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 100.5}},
        "LowNodeUtilization.args.targetThresholds.cpu: 100.5 is out of range 0-100",
    ),
    (
        "evictableNamespaces include",
        {
            "thresholds": {"cpu": 20},
            "targetThresholds": {"cpu": 80},
            "evictableNamespaces": {"include": ["default"]},
        },
        "LowNodeUtilization.args.evictableNamespaces.include: ['default']: only Exclude namespaces can be set, "
        "inclusion is not supported",
    ),
    (
        "a valid kubernetes metrics source is still refused",
        {
            "thresholds": {"cpu": 20},
            "targetThresholds": {"cpu": 80},
            "metricsUtilization": {"source": "KubernetesMetrics"},
        },
        "LowNodeUtilization.args.metricsUtilization: Berth has no metrics source (metrics-server or "
        "Prometheus): node utilization is computed from requested resources only; remove metricsUtilization",
    ),
    (
        "a valid prometheus source is still refused",
        {
            "thresholds": {"MetricResource": 30},
            "targetThresholds": {"MetricResource": 50},
            "metricsUtilization": {
                "source": "Prometheus",
                "prometheus": {"query": "instance:node_cpu:rate:sum"},
            },
        },
        "LowNodeUtilization.args.metricsUtilization: Berth has no metrics source (metrics-server or "
        "Prometheus): node utilization is computed from requested resources only; remove metricsUtilization",
    ),
    (
        "deprecated metricsServer is refused",
        {
            "thresholds": {"cpu": 20},
            "targetThresholds": {"cpu": 80},
            "metricsUtilization": {"metricsServer": True},
        },
        "LowNodeUtilization.args.metricsUtilization: Berth has no metrics source (metrics-server or "
        "Prometheus): node utilization is computed from requested resources only; remove metricsUtilization",
    ),
    (
        "unknown field",
        {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 80}, "targetThreshold": {"cpu": 80}},
        'LowNodeUtilization.args: strict decoding error: unknown field "targetThreshold" (did you mean '
        '"targetThresholds"?)',
    ),
    (
        "evictionLimits has no total",
        {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 80}, "evictionLimits": {"total": 3}},
        'LowNodeUtilization.args.evictionLimits: strict decoding error: unknown field "total"',
    ),
    (
        "negative evictionLimits.node",
        {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 80}, "evictionLimits": {"node": -1}},
        "LowNodeUtilization.args.evictionLimits.node: must be at least 0, not -1",
    ),
    (
        "threshold that is not a number",
        {"thresholds": {"cpu": "20"}, "targetThresholds": {"cpu": 80}},
        "LowNodeUtilization.args.thresholds.cpu: must be a number, not string '20'",
    ),
    (
        "thresholds that are not an object",
        {"thresholds": [20], "targetThresholds": {"cpu": 80}},
        "LowNodeUtilization.args.thresholds: must be an object of resource names to percentages, not array",
    ),
    (
        "useDeviationThresholds that is not a boolean",
        {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 80}, "useDeviationThresholds": "yes"},
        "LowNodeUtilization.args.useDeviationThresholds: must be a boolean, not string 'yes'",
    ),
    (
        "unknown evictableNamespaces field",
        {
            "thresholds": {"cpu": 20},
            "targetThresholds": {"cpu": 80},
            "evictableNamespaces": {"exclud": ["a"]},
        },
        'LowNodeUtilization.args.evictableNamespaces: strict decoding error: unknown field "exclud" (did you mean '
        '"exclude"?)',
    ),
]


@pytest.mark.parametrize(("raw", "message"), [c[1:] for c in LOW_INVALID], ids=[c[0] for c in LOW_INVALID])
def test_low_invalid(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError) as err:
        low(raw)
    assert str(err.value) == message


def test_low_valid_plugin_config() -> None:
    """Upstream's "passing valid plugin config"."""
    got = low({"thresholds": {"cpu": 20, "memory": 20}, "targetThresholds": {"cpu": 80, "memory": 80}})
    assert got == LowNodeUtilizationArgs(
        thresholds={"cpu": 20.0, "memory": 20.0}, target_thresholds={"cpu": 80.0, "memory": 80.0}
    )


def test_low_valid_plugin_config_with_extended_resource() -> None:
    """Upstream's "passing valid plugin config with extended resource"."""
    got = low(
        {
            "thresholds": {"cpu": 20, "memory": 20, EXT: 20},
            "targetThresholds": {"cpu": 80, "memory": 80, EXT: 80},
        }
    )
    assert dict(got.thresholds) == {"cpu": 20.0, "memory": 20.0, EXT: 20.0}
    assert dict(got.target_thresholds) == {"cpu": 80.0, "memory": 80.0, EXT: 80.0}


def test_low_deviation_allows_thresholds_above_targets() -> None:
    got = low({"thresholds": {"cpu": 30}, "targetThresholds": {"cpu": 10}, "useDeviationThresholds": True})
    assert got.use_deviation_thresholds is True
    assert dict(got.thresholds) == {"cpu": 30.0}


def test_low_equal_thresholds_and_targets_are_valid() -> None:
    got = low({"thresholds": {"cpu": 50, "pods": 0}, "targetThresholds": {"cpu": 50, "pods": 100}})
    assert dict(got.thresholds) == {"cpu": 50.0, "pods": 0.0}


def test_low_defaults() -> None:
    """Upstream's TestSetDefaults_LowNodeUtilizationArgs: nothing is added (no pods threshold either)."""
    empty = LowNodeUtilizationArgs(thresholds={}, target_thresholds={})
    assert (empty.use_deviation_thresholds, empty.number_of_nodes) == (False, 0)
    assert (empty.evictable_namespaces, empty.eviction_limits) == (None, None)
    got = low(
        {
            "useDeviationThresholds": True,
            "thresholds": {"cpu": 20, "memory": 10},
            "targetThresholds": {"cpu": 80, "memory": 80},
            "numberOfNodes": 10,
            "evictableNamespaces": {"exclude": ["kube-system"]},
            "evictionLimits": {"node": 3},
        }
    )
    assert got == LowNodeUtilizationArgs(
        thresholds={"cpu": 20.0, "memory": 10.0},
        target_thresholds={"cpu": 80.0, "memory": 80.0},
        use_deviation_thresholds=True,
        number_of_nodes=10,
        evictable_namespaces=EvictableNamespaces(exclude=("kube-system",)),
        eviction_limits=EvictionLimits(node=3),
    )


def test_low_null_fields_read_as_absent() -> None:
    got = low(
        {
            "thresholds": {"cpu": 20},
            "targetThresholds": {"cpu": 80},
            "evictableNamespaces": None,
            "evictionLimits": None,
            "metricsUtilization": None,
            "numberOfNodes": None,
        }
    )
    assert (got.evictable_namespaces, got.eviction_limits, got.number_of_nodes) == (None, None, 0)


def test_low_args_are_read_only() -> None:
    got = low({"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 80}})
    with pytest.raises(TypeError):
        got.thresholds["cpu"] = 30  # type: ignore[index]


# ---- upstream TestValidateHighNodeUtilizationPluginConfig -----------------------------------------------

HIGH_VALID: list[tuple[str, dict[str, Any], HighNodeUtilizationArgs]] = [
    (
        "valid configuration with CPU and memory",
        {"thresholds": {"cpu": 80, "memory": 90}, "evictionModes": ["OnlyThresholdingResources"]},
        HighNodeUtilizationArgs(
            thresholds={"cpu": 80.0, "memory": 90.0}, eviction_modes=("OnlyThresholdingResources",)
        ),
    ),
    (
        "valid configuration with extended resource",
        {"thresholds": {"cpu": 85, EXT: 95}, "evictionModes": ["OnlyThresholdingResources"]},
        HighNodeUtilizationArgs(
            thresholds={"cpu": 85.0, EXT: 95.0}, eviction_modes=("OnlyThresholdingResources",)
        ),
    ),
    (
        "evictableNamespaces with Exclude (allowed)",
        {"thresholds": {"cpu": 80}, "evictableNamespaces": {"exclude": ["ns1", "ns2"]}},
        HighNodeUtilizationArgs(
            thresholds={"cpu": 80.0}, evictable_namespaces=EvictableNamespaces(exclude=("ns1", "ns2"))
        ),
    ),
    (
        "missing eviction modes (nil) - should be allowed (treated as empty)",
        {"thresholds": {"cpu": 80}, "evictionModes": None},
        HighNodeUtilizationArgs(thresholds={"cpu": 80.0}),
    ),
    (
        "empty eviction modes slice - should be allowed",
        {"thresholds": {"cpu": 80}, "evictionModes": []},
        HighNodeUtilizationArgs(thresholds={"cpu": 80.0}),
    ),
    (
        "numberOfNodes",
        {"thresholds": {"cpu": 20, "memory": 100}, "numberOfNodes": 10},
        HighNodeUtilizationArgs(thresholds={"cpu": 20.0, "memory": 100.0}, number_of_nodes=10),
    ),
]


@pytest.mark.parametrize(("raw", "want"), [c[1:] for c in HIGH_VALID], ids=[c[0] for c in HIGH_VALID])
def test_high_valid(raw: dict[str, Any], want: HighNodeUtilizationArgs) -> None:
    got = high(raw)
    assert (dict(got.thresholds), got.number_of_nodes, got.eviction_modes, got.evictable_namespaces) == (
        dict(want.thresholds),
        want.number_of_nodes,
        want.eviction_modes,
        want.evictable_namespaces,
    )


HIGH_INVALID: list[tuple[str, dict[str, Any], str]] = [
    (
        "empty thresholds",
        {"thresholds": {}},
        "HighNodeUtilization.args.thresholds: no resource threshold is configured",
    ),
    (
        "threshold below minimum (0%)",
        {"thresholds": {"cpu": -1}},
        "HighNodeUtilization.args.thresholds.cpu: -1 is out of range 0-100",
    ),
    (
        "threshold above maximum (100%)",
        {"thresholds": {"memory": 101}},
        "HighNodeUtilization.args.thresholds.memory: 101 is out of range 0-100",
    ),
    (
        "multiple thresholds with one out of range",
        {"thresholds": {"cpu": 50, "memory": 150}},
        "HighNodeUtilization.args.thresholds.memory: 150 is out of range 0-100",
    ),
    (
        "invalid eviction mode",
        {"thresholds": {"cpu": 80}, "evictionModes": ["InvalidMode"]},
        "HighNodeUtilization.args.evictionModes[0]: invalid eviction mode InvalidMode (known: "
        "OnlyThresholdingResources)",
    ),
    (
        "evictableNamespaces include",
        {"thresholds": {"cpu": 80}, "evictableNamespaces": {"include": ["a"], "exclude": ["b"]}},
        "HighNodeUtilization.args.evictableNamespaces.include: ['a']: only Exclude namespaces can be set, "
        "inclusion is not supported",
    ),
    (
        "no targetThresholds in HighNodeUtilization",
        {"thresholds": {"cpu": 80}, "targetThresholds": {"cpu": 90}},
        'HighNodeUtilization.args: strict decoding error: unknown field "targetThresholds" (did you mean '
        '"thresholds"?)',
    ),
    (
        "no metricsUtilization in HighNodeUtilization",
        {"thresholds": {"cpu": 80}, "metricsUtilization": {"metricsServer": True}},
        'HighNodeUtilization.args: strict decoding error: unknown field "metricsUtilization"',
    ),
    (
        "evictionModes not a list",
        {"thresholds": {"cpu": 80}, "evictionModes": "OnlyThresholdingResources"},
        "HighNodeUtilization.args.evictionModes: must be a list of strings, not string",
    ),
]


@pytest.mark.parametrize(("raw", "message"), [c[1:] for c in HIGH_INVALID], ids=[c[0] for c in HIGH_INVALID])
def test_high_invalid(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError) as err:
        high(raw)
    assert str(err.value) == message


def test_high_defaults() -> None:
    """Upstream's TestSetDefaults_HighNodeUtilizationArgs."""
    empty = HighNodeUtilizationArgs(thresholds={})
    assert (empty.number_of_nodes, empty.eviction_modes, empty.evictable_namespaces) == (0, (), None)
