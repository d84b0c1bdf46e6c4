"""default_registry() and the plugins running inside a Framework built from kube's default profile."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from plugin_helpers import FakeHandle

from berth.scheduler.framework import CycleState, Framework, Registry, parse_config
from berth.scheduler.plugins import default_registry
from builders import make_node, make_pod, make_table, taint

LATER = ("PodTopologySpread", "InterPodAffinity", "ImageLocality")
EXPECTED = {
    "SchedulingGates",
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "NodeResourcesBalancedAllocation",
    "DefaultBinder",
    "DefaultPreemption",
    "NodePreferAvoidPods",
    "Reservation",
    "Coscheduling",
    "CapacityScheduling",
    "SchedulingResults",
    "Open-Gpu-Share",
    "RandomScore",
    "DotProductScore",
    "GpuClusteringScore",
    "GpuPackingScore",
    "BestFitScore",
    "FGDScore",
    *LATER,
}


class _Noop:
    def __init__(self, name: str) -> None:
        self.name = name


def _registry() -> Registry:
    # the plugins that read other pods or images are tested in their own suites; here stand-ins that
    # implement no extension point keep the expected point lists about the node-local plugins
    reg = Registry({name: f for name, f in default_registry().items() if name not in LATER})
    for n in LATER:
        reg.register(n, lambda args, handle, n=n: _Noop(n))
    return reg


def _framework(plugin_config: list[dict[str, Any]] | None = None) -> Framework:
    profile: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if plugin_config:
        profile["pluginConfig"] = plugin_config
    cfg = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [profile],
        }
    )
    return Framework(cfg.profiles[0], _registry(), FakeHandle())  # type: ignore[arg-type]


def test_default_registry_names() -> None:
    assert {name for name, _ in default_registry().items()} == EXPECTED


def test_default_profile_points() -> None:
    fw = _framework()
    assert fw.points["preEnqueue"] == ["SchedulingGates"]
    assert fw.points["queueSort"] == ["PrioritySort"]
    assert fw.points["preFilter"] == ["NodeAffinity", "NodePorts", "NodeResourcesFit", "Reservation"]
    assert fw.points["filter"] == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "Reservation",
    ]
    assert fw.points["preScore"] == [
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "Reservation",
        "NodeResourcesBalancedAllocation",
    ]
    assert fw.weights == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "NodeResourcesBalancedAllocation": 1,
        "Reservation": 5000,
    }
    assert fw.points["bind"] == ["DefaultBinder"]
    assert fw.points["reserve"] == ["Reservation"]
    assert fw.points["preBind"] == ["Reservation"]
    assert fw.points["postFilter"] == ["Reservation", "DefaultPreemption"]  # as koord-scheduler orders them


def test_cycle_through_framework() -> None:
    fw = _framework([{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}])
    table = make_table(
        [
            make_node("a").capacity(cpu="2", memory="4Gi").label(zone="z1").obj(),
            make_node("b").capacity(cpu="4", memory="8Gi").label(zone="z1").taints(taint("k", "v")).obj(),
            make_node("c").capacity(cpu="4", memory="8Gi").label(zone="z2").obj(),
            make_node("d").capacity(cpu="8", memory="16Gi").label(zone="z1").obj(),
        ]
    )
    pod = make_pod("p").req(cpu="1", memory="1Gi").node_selector(zone="z1").info()
    state = CycleState()
    _, status, _ = fw.run_pre_filter(state, pod, table)
    assert status.is_success()
    assert "NodePorts" in state.skip_filter
    out = fw.run_filters(state, pod, table, np.ones(table.size, dtype=np.bool_))
    assert out.passed.tolist() == [True, False, False, True]
    assert out.status_of(1) is not None and out.status_of(1).plugin == "TaintToleration"  # type: ignore[union-attr]
    assert out.status_of(2) is not None and out.status_of(2).plugin == "NodeAffinity"  # type: ignore[union-attr]
    idx = np.flatnonzero(out.passed)
    scores = fw.run_scores(state, pod, table, idx, keep_parts=True)
    # MostAllocated: a: cpu 1000/2000 → 50, memory 1Gi/4Gi → 25 → 37; d: 1000/8000 → 12, 1Gi/16Gi → 6 → 9
    assert scores.normalized["NodeResourcesFit"].tolist() == [37, 9]
    assert scores.normalized["TaintToleration"].tolist() == [100, 100]
    # balanced: a: |0.5 - 0.25| / 2 → 87; d: |0.125 - 0.0625| / 2 → 96
    assert scores.normalized["NodeResourcesBalancedAllocation"].tolist() == [87, 96]
    assert "NodeAffinity" not in scores.normalized
    # NodePreferAvoidPods is not a default plugin (kube removed it in 1.24): no 100 * 10000 share
    assert scores.total.tolist() == [37 + 300 + 87, 9 + 300 + 96]


def test_bad_args_fail_framework_construction() -> None:
    with pytest.raises(ValueError, match=r"scoringStrategy\.type"):
        _framework([{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Nope"}}}])
