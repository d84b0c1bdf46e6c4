"""Profile parsing and multiPoint expansion follow kube-scheduler's merge rules."""

from __future__ import annotations

import pytest

from berth.scheduler.framework.config import ConfigError, expand_plugins, parse_config

IMPL = {
    "PrioritySort": ["queueSort"],
    "SchedulingGates": ["preEnqueue"],
    "NodeUnschedulable": ["filter"],
    "NodeName": ["filter"],
    "TaintToleration": ["filter", "preScore", "score"],
    "NodeAffinity": ["preFilter", "filter", "preScore", "score"],
    "NodePorts": ["preFilter", "filter"],
    "NodeResourcesFit": ["preFilter", "filter", "score"],
    "NodeResourcesBalancedAllocation": ["preScore", "score"],
    "DefaultBinder": ["bind"],
    "Custom": ["filter", "score"],
}


def cfg(plugins: dict[str, object] | None = None, **extra: object) -> dict[str, object]:
    prof: dict[str, object] = {"schedulerName": "default-scheduler"}
    if plugins is not None:
        prof["plugins"] = plugins
    prof.update(extra)
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [prof],
    }


def test_default_profile_points_and_weights() -> None:
    conf = parse_config(None)
    points, weights = expand_plugins(conf.profiles[0], IMPL)
    assert points["filter"] == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
    ]
    assert points["score"] == [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
    ]
    assert weights == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "NodeResourcesBalancedAllocation": 1,
    }
    assert points["queueSort"] == ["PrioritySort"]
    assert points["bind"] == ["DefaultBinder"]
    assert points["preEnqueue"] == ["SchedulingGates"]


def test_disable_all_scores_and_enable_one_with_weight() -> None:
    conf = parse_config(
        cfg({"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "Custom", "weight": 7}]}})
    )
    points, weights = expand_plugins(conf.profiles[0], IMPL)
    assert points["score"] == ["Custom"]
    assert weights["Custom"] == 7
    assert "Custom" not in points["filter"]


def test_specific_point_overrides_multipoint_weight_and_order() -> None:
    conf = parse_config(cfg({"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}))
    points, weights = expand_plugins(conf.profiles[0], IMPL)
    assert points["score"][0] == "NodeResourcesFit"
    assert weights["NodeResourcesFit"] == 5


def test_multipoint_disable_removes_everywhere() -> None:
    conf = parse_config(cfg({"multiPoint": {"disabled": [{"name": "TaintToleration"}]}}))
    points, _ = expand_plugins(conf.profiles[0], IMPL)
    assert all("TaintToleration" not in v for v in points.values())


def test_multipoint_enable_custom_appends() -> None:
    conf = parse_config(cfg({"multiPoint": {"enabled": [{"name": "Custom", "weight": 2}]}}))
    points, weights = expand_plugins(conf.profiles[0], IMPL)
    assert points["filter"][-1] == "Custom"
    assert weights["Custom"] == 2


def test_disable_one_point_keeps_others() -> None:
    conf = parse_config(cfg({"filter": {"disabled": [{"name": "NodeAffinity"}]}}))
    points, _ = expand_plugins(conf.profiles[0], IMPL)
    assert "NodeAffinity" not in points["filter"]
    assert "NodeAffinity" in points["score"]
    assert "NodeAffinity" in points["preFilter"]


def test_several_profiles() -> None:
    doc = cfg()
    doc["profiles"] = [{"schedulerName": "a"}, {"schedulerName": "b", "percentageOfNodesToScore": 50}]
    doc["percentageOfNodesToScore"] = 20
    conf = parse_config(doc)
    assert [p.scheduler_name for p in conf.profiles] == ["a", "b"]
    assert conf.percentage_of_nodes_to_score == 20
    assert conf.profiles[1].percentage_of_nodes_to_score == 50


def test_plugin_args_strip_type_meta() -> None:
    conf = parse_config(
        cfg(
            pluginConfig=[
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "NodeResourcesFitArgs",
                        "scoringStrategy": {"type": "MostAllocated"},
                    },
                }
            ]
        )
    )
    assert conf.profiles[0].plugin_args == {
        "NodeResourcesFit": {"scoringStrategy": {"type": "MostAllocated"}}
    }


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {"apiVersion": "v1", "kind": "KubeSchedulerConfiguration"},
            'apiVersion/kind: Unsupported value: "v1/KubeSchedulerConfiguration"',
        ),
        (cfg(percentageOfNodesToScore=120), "profiles[0].percentageOfNodesToScore: Invalid value: 120"),
        (
            cfg({"filter": {"enabled": [{"weight": 1}]}}),
            "profiles[0].plugins.filter.enabled[0].name: Required value",
        ),
        (
            cfg({"sorting": {}}),
            'strict decoding error: unknown field "profiles[0].plugins.sorting"',
        ),
        (
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": "x"}, {"schedulerName": "x"}],
            },
            'profiles[1].schedulerName: Duplicate value: "x"',
        ),
    ],
)
def test_invalid_configs(doc: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_config(doc)
    assert message in str(e.value)
