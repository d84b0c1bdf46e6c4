"""Services feed PodTopologySpread's system default constraints (kube's ``helper.DefaultSelector``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kinds_helpers import node, simulate


def _pod(name: str) -> dict[str, Any]:
    container = {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "500m", "memory": "100Mi"}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"containers": [container]},
    }


def _service(selector: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": selector, "ports": [{"port": 80}]},
    }


def _placements(tmp_path: Path, *extra: dict[str, Any]) -> dict[str, str]:
    nodes = [node("big", cpu="64"), node("small", cpu="8")]
    run = simulate(tmp_path, [*nodes, *(_pod(f"web-{i}") for i in range(6)), *extra])
    assert run.exit_code == 0, run.stderr
    return run.placements("web-")


def test_without_a_service_bare_pods_follow_free_capacity(tmp_path: Path) -> None:
    placed = _placements(tmp_path)
    assert sorted(placed.values()) == ["big", "big", "big", "big", "big", "small"]


def test_a_service_selecting_the_pods_spreads_them_over_hostnames(tmp_path: Path) -> None:
    placed = _placements(tmp_path, _service({"app": "web"}))
    assert placed == {
        "web-0": "big",
        "web-1": "small",
        "web-2": "big",
        "web-3": "small",
        "web-4": "big",
        "web-5": "small",
    }


def test_a_service_selecting_other_pods_changes_nothing(tmp_path: Path) -> None:
    placed = _placements(tmp_path, _service({"app": "db"}))
    assert sorted(placed.values()) == ["big", "big", "big", "big", "big", "small"]


def test_invalid_service_is_refused(tmp_path: Path) -> None:
    svc = _service({"app": "web"})
    svc["spec"]["ports"] = [{"port": 70000}]
    run = simulate(tmp_path, [svc])
    assert run.exit_code == 2
    assert "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive" in run.stderr
