"""ImageLocality: favour nodes that already hold the pod's container images, as kube-scheduler does.

Score of a node = the sum, over the pod's init and regular containers whose (normalised) image the node
reports in ``status.images``, of the image size scaled by its spread (nodes having the image / all nodes),
clamped to [23 MiB, 1000 MiB x number of containers] and mapped linearly onto 0..100. No normalisation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from berth.scheduler.framework import MAX_NODE_SCORE, CycleState, NodeInfo, NodeTable, PodInfo, Registry
from berth.scheduler.framework.nodetable import IntArray
from berth.scheduler.plugins.factories import no_args
from berth.scheduler.plugins.imagelocality.index import (
    ImageIndex,
    ImageIndexCache,
    node_image_names,
)

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """kube's normalizedImageName: add the ``:latest`` tag when the reference has no tag after its last ``/``.

    kube does not add a ``docker.io/library/`` registry prefix (its source leaves that as a TODO), so
    neither does Berth: a pod asking for ``nginx`` matches a node reporting ``nginx:latest`` only.
    """
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """kube's calculatePriority: clamp the summed image scores and scale them onto 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    # numerator >= 0 and, with at least one container, denominator > 0: floor equals Go's truncation
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def calculate_priorities(sums: IntArray, num_containers: int) -> IntArray:
    """:func:`calculate_priority` over an array of summed image scores."""
    if num_containers <= 0:
        return np.zeros(len(sums), dtype=np.int64)
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clipped = np.clip(sums, MIN_THRESHOLD, max_threshold)
    out: IntArray = MAX_NODE_SCORE * (clipped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
    return out


class PodImages:
    """A pod's normalised container images (init containers first, repeats kept) and its container count."""

    __slots__ = ("counts", "num_containers")

    def __init__(self, pod: Mapping[str, Any]) -> None:
        spec = pod.get("spec") or {}
        counts: dict[str, int] = {}
        n = 0
        for field in ("initContainers", "containers"):
            for c in spec.get(field) or ():
                n += 1
                name = normalized_image_name(c.get("image") or "")
                counts[name] = counts.get(name, 0) + 1
        self.counts: dict[str, int] = counts
        self.num_containers = n


def pod_images(pod: PodInfo) -> PodImages:
    """The pod's compiled images (cached in ``pod.extra`` under the plugin's name)."""
    pi: PodImages | None = pod.extra.get(NAME)
    if pi is None:
        pi = pod.extra[NAME] = PodImages(pod.obj)
    return pi


def sum_image_scores(images: PodImages, node_names: frozenset[str], index: ImageIndex) -> int:
    """kube's sumImageScores for one node reporting ``node_names``."""
    total = 0
    for name, count in images.counts.items():
        if name in node_names:
            total += index.scaled_score(name) * count
    return total


class ImageLocality:
    """Score plugin: prefer nodes that already have the pod's images, weighted by size and spread."""

    name = NAME

    def __init__(self) -> None:
        self._cache = ImageIndexCache()

    def index(self, table: NodeTable) -> ImageIndex:
        """The image index of ``table`` (rebuilt when a node object changed)."""
        return self._cache.get(table)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """Per-node form: read the node's own image list; sizes and spreads come from the cluster index."""
        images = pod_images(pod)
        index = self._cache.get(node.table)
        names = node_image_names(node.node)
        return calculate_priority(sum_image_scores(images, names, index), images.num_containers)

    def uniform_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> bool:
        """No node reports any image: every node scores 0."""
        return not self._cache.get(table).rows

    def score_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: IntArray) -> IntArray:
        """Batched form over rows ``idx``: one masked add per distinct image the pod asks for."""
        index = self._cache.get(table)
        if not index.rows:  # no node reports any image
            return np.zeros(len(idx), dtype=np.int64)
        images = pod_images(pod)
        sums: IntArray | None = None
        for name, count in images.counts.items():
            if name not in index.rows:
                continue
            scaled = index.scaled_score(name) * count
            if scaled == 0:
                continue
            add = index.mask(name)[idx] * np.int64(scaled)
            sums = add if sums is None else sums + add
        if sums is None:
            return np.zeros(len(idx), dtype=np.int64)
        return calculate_priorities(sums, images.num_containers)


new = no_args(ImageLocality)


def register(registry: Registry) -> None:
    """Add ImageLocality to ``registry``."""
    registry.register(NAME, new)


__all__ = [
    "MAX_CONTAINER_THRESHOLD",
    "MIN_THRESHOLD",
    "NAME",
    "ImageLocality",
    "PodImages",
    "calculate_priorities",
    "calculate_priority",
    "new",
    "normalized_image_name",
    "pod_images",
    "register",
]
