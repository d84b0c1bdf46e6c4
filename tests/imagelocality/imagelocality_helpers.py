"""Builders of nodes reporting images, pods with containers, and NodeTables for the ImageLocality tests."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from berth.scheduler.framework import NodeTable, PodInfo

MB = 1024 * 1024
_uid = itertools.count()


def image(size_mb: float, *names: str) -> dict[str, Any]:
    """One ``status.images`` entry of ``size_mb`` MiB."""
    return {"names": list(names), "sizeBytes": int(size_mb * MB)}


def image_node(name: str, images: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """A Node reporting ``images`` (kube's makeImageNode)."""
    status: dict[str, Any] = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": 110}}
    if images:
        status["images"] = [dict(i) for i in images]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {}, "status": status}


def image_pod(images: Sequence[str], init_images: Sequence[str] = (), name: str = "p") -> PodInfo:
    """A pod whose containers (and init containers) run ``images``."""
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]}
    if init_images:
        spec["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init_images)]
    return PodInfo(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}-{next(_uid)}"},
            "spec": spec,
        }
    )


def table_of(nodes: Iterable[Mapping[str, Any]]) -> NodeTable:
    """A NodeTable holding ``nodes``."""
    table = NodeTable(capacity=4)
    for n in nodes:
        table.set_node(n)
    return table
