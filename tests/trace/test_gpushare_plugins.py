"""The GPU-sharing plugins on the real scheduler, through ``berth simulate``: device accounting, Filter
reasons, Reserve's device choice written as ``alibabacloud.com/gpu-index``, and the policies as Score plugins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from berth.cli import app

runner = CliRunner()


def node(name: str, model: str, gpus: int) -> dict[str, Any]:
    alloc = {
        "cpu": "16",
        "memory": "64Gi",
        "pods": "110",
        "alibabacloud.com/gpu-count": str(gpus),
        "alibabacloud.com/gpu-milli": str(gpus * 1000),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"alibabacloud.com/gpu-card-model": model}},
        "status": {"allocatable": alloc},
    }


def pod(name: str, milli: int, count: int, model: str = "", cpu: str = "1") -> dict[str, Any]:
    ann = {"alibabacloud.com/gpu-milli": str(milli), "alibabacloud.com/gpu-count": str(count)}
    if model:
        ann["alibabacloud.com/gpu-card-model"] = model
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": ann},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]},
    }


def config(score: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    profile: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "plugins": {
            "multiPoint": {"enabled": [{"name": "Open-Gpu-Share"}]},
            "score": {"disabled": [{"name": "*"}], "enabled": [{"name": score, "weight": 1000}]},
        },
    }
    if args is not None:
        profile["pluginConfig"] = [{"name": score, "args": args}]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }


def simulate(
    tmp_path: Path, nodes: list[dict[str, Any]], pods: list[dict[str, Any]], cfg: dict[str, Any]
) -> dict[str, tuple[Any, ...]]:
    steps = [{"at": f"{i + 1}s", "create": [p]} for i, p in enumerate(pods)]
    scenario = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"steps": steps},
    }
    (tmp_path / "objs.yaml").write_text(yaml.safe_dump_all([*nodes, scenario]))
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    r = runner.invoke(
        app,
        [
            "simulate",
            str(tmp_path / "objs.yaml"),
            "--scheduler-config",
            str(tmp_path / "cfg.yaml"),
            "-o",
            "json",
        ],
    )
    assert r.exit_code == 0, r.stderr
    out: dict[str, tuple[Any, ...]] = {}
    for o in json.loads(r.stdout)["items"]:
        if o["kind"] != "Pod":
            continue
        ann = o["metadata"].get("annotations") or {}
        msgs = [c["message"] for c in o.get("status", {}).get("conditions", []) if c.get("status") == "False"]
        out[o["metadata"]["name"]] = (o["spec"].get("nodeName"), ann.get("alibabacloud.com/gpu-index"), *msgs)
    return out


NODES = [node("n0", "T4", 2), node("n1", "P100", 1)]


def test_packing_accounts_devices_and_writes_gpu_index(tmp_path: Path) -> None:
    pods = [pod("a", 600, 1), pod("b", 300, 1), pod("c", 1000, 2), pod("d", 500, 1, "T4")]
    got = simulate(tmp_path, NODES, pods, config("GpuPackingScore"))
    # a: idle 1-GPU n1 scores 32, idle 2-GPU n0 31; b: n1's 400 left scores 96; c: both of n0's GPUs;
    # d wants a T4: n0 is full, n1 is a P100
    assert got == {
        "a": ("n1", "0"),
        "b": ("n1", "0"),
        "c": ("n0", "0,1"),
        "d": (
            None,
            None,
            "0/2 nodes are available: 1 Insufficient alibabacloud.com/gpu-milli, "
            "1 node(s) didn't match the requested GPU card model. preemption: 0/2 nodes are available: "
            "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
        ),
    }


def test_best_fit_and_fgd_with_typical_pods(tmp_path: Path) -> None:
    pods = [pod("a", 500, 1), pod("b", 500, 1), pod("c", 1000, 1)]
    # BestFit: the 1-GPU node leaves less free; then b fits only n0 (n1 has 500 left: 500 >= 500, fits too,
    # and leaves 0) -> n1; c takes a whole GPU of n0
    assert simulate(tmp_path, NODES, pods, config("BestFitScore")) == {
        "a": ("n1", "0"),
        "b": ("n1", "0"),
        "c": ("n0", "0"),
    }
    # FGD, typical pods half 2-GPU, half 500m shares. a on n0 -> [500,1000]: the 2-GPU pod no longer fits,
    # fragmentation 0 -> 750 (score 32); on n1 -> [500]: 500 -> 250 (score 56). b on n1 -> [0]: 250 -> 0 (56),
    # on n0 0 -> 750 (32). c fits only n0
    typical = {
        "typicalPods": [
            {"cpuMilli": 1000, "gpuMilli": 1000, "gpuCount": 2},
            {"cpuMilli": 1000, "gpuMilli": 500},
        ]
    }
    assert simulate(tmp_path, NODES, pods, config("FGDScore", typical)) == {
        "a": ("n1", "0"),
        "b": ("n1", "0"),
        "c": ("n0", "0"),
    }


@pytest.mark.parametrize("score", ["RandomScore", "DotProductScore", "GpuClusteringScore", "FGDScore"])
def test_every_policy_places_what_fits(tmp_path: Path, score: str) -> None:
    pods = [pod("a", 1000, 2), pod("b", 1000, 1), pod("c", 200, 1)]
    got = simulate(tmp_path, NODES, pods, config(score))
    assert got["a"] == ("n0", "0,1")
    assert got["b"] == ("n1", "0")
    assert got["c"][:2] == (None, None)


def test_bad_annotation_is_unresolvable(tmp_path: Path) -> None:
    bad = pod("x", 500, 1)
    bad["metadata"]["annotations"]["alibabacloud.com/gpu-milli"] = "half"
    got = simulate(tmp_path, NODES, [bad], config("GpuPackingScore"))
    assert got["x"][:2] == (None, None)
    assert (
        'Pod "default/x": metadata.annotations[alibabacloud.com/gpu-milli]: invalid value "half"'
        in got["x"][2]
    )
