"""InterPodAffinity end to end through ``berth simulate``: spreading, co-location and preemption."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from berth.cli import app
from builders import make_node, make_pod

HOST = "kubernetes.io/hostname"


def _anti(key: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": labels}, "topologyKey": key}
            ]
        }
    }


def _simulate(tmp_path: Path, docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(app, ["simulate", str(f), "-o", "json"])
    assert result.exit_code == 0, result.output
    items = json.loads(result.stdout)["items"]
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in items}


def _message(pod: dict[str, Any]) -> str:
    cond = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    return str(cond["message"])


def test_required_anti_affinity_spreads_one_per_node(tmp_path: Path) -> None:
    web = {"app": "web"}
    docs = [make_node(f"n{i}").obj() for i in range(1, 4)]
    docs += [
        make_pod(f"web-{i}").req(cpu="100m").label(web).affinity(_anti(HOST, web)).obj() for i in range(4)
    ]
    out = _simulate(tmp_path, docs)
    hosts = [out[f"Pod/web-{i}"]["spec"].get("nodeName") for i in range(4)]
    assert sorted(h for h in hosts if h) == ["n1", "n2", "n3"]
    pending = [out[f"Pod/web-{i}"] for i in range(4) if not hosts[i]]
    assert len(pending) == 1
    assert _message(pending[0]) == (
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )


def test_required_affinity_follows_the_first_pod_into_its_zone(tmp_path: Path) -> None:
    db = {"app": "db"}
    aff = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": db}, "topologyKey": "topology.kubernetes.io/zone"}
            ]
        }
    }
    docs = [
        make_node("a1").zone("a").obj(),
        make_node("b1").zone("b").obj(),
        make_node("b2").zone("b").obj(),
        make_node("nozone").obj(),
        make_pod("db-0").req(cpu="100m").label(db).node("b2").obj(),
    ]
    docs += [make_pod(f"app-{i}").req(cpu="100m").label(db).affinity(aff).obj() for i in range(3)]
    docs.append(
        make_pod("orphan")
        .req(cpu="100m")
        .label(app="x")
        .affinity(
            {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": {"app": "missing"}},
                            "topologyKey": "topology.kubernetes.io/zone",
                        }
                    ]
                }
            }
        )
        .obj()
    )
    out = _simulate(tmp_path, docs)
    for i in range(3):
        assert out[f"Pod/app-{i}"]["spec"]["nodeName"] in ("b1", "b2")
    assert "nodeName" not in out["Pod/orphan"]["spec"]
    assert _message(out["Pod/orphan"]) == (
        "0/4 nodes are available: 4 node(s) didn't match pod affinity rules. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )


def test_preemption_removes_the_pod_the_preemptor_is_anti_affine_to(tmp_path: Path) -> None:
    web = {"app": "web"}
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
        make_node("n1").obj(),
        make_pod("low").req(cpu="100m").label(web).node("n1").obj(),
        make_pod("high")
        .req(cpu="100m")
        .label(app="api")
        .affinity(_anti(HOST, web))
        .priority_class("high")
        .obj(),
    ]
    out = _simulate(tmp_path, docs)
    assert out["Pod/high"]["spec"].get("nodeName") == "n1"
    assert "Pod/low" not in out
