"""ImageLocality through ``berth simulate``: with otherwise equal nodes the pod lands where its images are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from imagelocality_helpers import image, image_node
from typer.testing import CliRunner

from berth.cli import app


def _pod(name: str, images: list[str], init: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": f"c{i}", "image": im, "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}
            for i, im in enumerate(images)
        ]
    }
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def _placements(tmp_path: Path, docs: list[dict[str, Any]]) -> dict[str, str | None]:
    f = tmp_path / "input.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(app, ["simulate", str(f), "-o", "json"])
    assert result.exit_code == 0, result.output
    items = json.loads(result.stdout)["items"]
    return {o["metadata"]["name"]: o["spec"].get("nodeName") for o in items if o["kind"] == "Pod"}


def test_pods_land_on_the_nodes_holding_their_images(tmp_path: Path) -> None:
    nodes = [
        image_node("node-a", [image(30, "registry.example/tools:1.0")]),
        image_node("node-b", [image(800, "registry.example/app:latest")]),
        image_node("node-c", [image(600, "registry.example/migrate:2")]),
        *(image_node(f"node-{c}") for c in "defgh"),
    ]
    pods = [
        # 800M/8 = 100M → ImageLocality 7 on node-b, 0 on the seven others
        _pod("app", ["registry.example/app"]),
        # the init container's image counts: 600M/8 = 75M over two containers → 2 on node-c
        _pod("migrate", ["registry.example/other:3"], init=["registry.example/migrate:2"]),
    ]
    placed = _placements(tmp_path, [*nodes, *pods])
    assert placed == {"app": "node-b", "migrate": "node-c"}
