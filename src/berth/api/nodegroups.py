"""Node groups of the utilisation charts (the HTML report's and the live dashboard's): nodes grouped by their
instance-type label when any node has one, else by their shape (allocatable cpu and memory)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["GROUP_LABELS", "NO_LABEL", "group_label", "shape_key"]

GROUP_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
NO_LABEL = "(none)"


def group_label(labels: Iterable[Mapping[str, str]]) -> str:
    """The first of `GROUP_LABELS` some node has ("" when none has one: group by shape)."""
    rows = list(labels)
    return next((k for k in GROUP_LABELS if any(k in lb for lb in rows)), "")


def shape_key(cpu_milli: int, memory_bytes: int) -> str:
    """A node shape's group name: ``4 cpu / 8 GiB``."""
    return f"{cpu_milli / 1000:g} cpu / {memory_bytes / 2**30:g} GiB"
