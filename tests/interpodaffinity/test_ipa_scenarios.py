"""InterPodAffinity end to end through ``berth simulate``: spreading, co-location and preemption."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from berth.cli import app

HOST = "kubernetes.io/hostname"


def _node(name: str, **labels: str) -> dict[str, Any]:
    res = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, **labels}},
        "status": {"capacity": res, "allocatable": res},
    }


def _pod(
    name: str, labels: dict[str, str], affinity: dict[str, Any] | None = None, **spec: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}],
        **spec,
    }
    if affinity:
        body["affinity"] = affinity
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": body}


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
    docs = [_node(f"n{i}") for i in range(1, 4)]
    docs += [_pod(f"web-{i}", web, _anti(HOST, web)) for i in range(4)]
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
        _node("a1", **{"topology.kubernetes.io/zone": "a"}),
        _node("b1", **{"topology.kubernetes.io/zone": "b"}),
        _node("b2", **{"topology.kubernetes.io/zone": "b"}),
        _node("nozone"),
        _pod("db-0", db, nodeName="b2"),
    ]
    docs += [_pod(f"app-{i}", db, aff) for i in range(3)]
    docs.append(
        _pod(
            "orphan",
            {"app": "x"},
            {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": {"app": "missing"}},
                            "topologyKey": "topology.kubernetes.io/zone",
                        }
                    ]
                }
            },
        )
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
        _node("n1"),
        _pod("low", web, nodeName="n1"),
        _pod("high", {"app": "api"}, _anti(HOST, web), priorityClassName="high"),
    ]
    out = _simulate(tmp_path, docs)
    assert out["Pod/high"]["spec"].get("nodeName") == "n1"
    assert "Pod/low" not in out
