"""ImageLocality through ``berth simulate``: with otherwise equal nodes the pod lands where its images are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from imagelocality_helpers import image
from typer.testing import CliRunner

from berth.cli import app
from builders import make_node, make_pod


def _placements(tmp_path: Path, docs: list[dict[str, Any]]) -> dict[str, str | None]:
    f = tmp_path / "input.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(app, ["simulate", str(f), "-o", "json"])
    assert result.exit_code == 0, result.output
    items = json.loads(result.stdout)["items"]
    return {o["metadata"]["name"]: o["spec"].get("nodeName") for o in items if o["kind"] == "Pod"}


def test_pods_land_on_the_nodes_holding_their_images(tmp_path: Path) -> None:
    nodes = [
        make_node("node-a").images(image(30, "registry.example/tools:1.0")).obj(),
        make_node("node-b").images(image(800, "registry.example/app:latest")).obj(),
        make_node("node-c").images(image(600, "registry.example/migrate:2")).obj(),
        *(make_node(f"node-{c}").obj() for c in "defgh"),
    ]
    pods = [
        # 800M/8 = 100M → ImageLocality 7 on node-b, 0 on the seven others
        make_pod("app").images("registry.example/app", cpu="100m", memory="128Mi").obj(),
        # the init container's image counts: 600M/8 = 75M over two containers → 2 on node-c
        make_pod("migrate")
        .images("registry.example/other:3", cpu="100m", memory="128Mi")
        .init_images("registry.example/migrate:2")
        .obj(),
    ]
    placed = _placements(tmp_path, [*nodes, *pods])
    assert placed == {"app": "node-b", "migrate": "node-c"}
