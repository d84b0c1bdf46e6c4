"""kube-scheduler's user-facing messages: the FitError text and pod condition helpers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

NO_NODE_AVAILABLE = "0/{} nodes are available"


def fit_error_message(
    num_all_nodes: int,
    reasons: Iterable[str] | Mapping[str, int] = (),
    *,
    prefilter_msg: str = "",
    postfilter_msg: str = "",
) -> str:
    """The FitError text: ``0/N nodes are available: <sorted reason counts>.`` plus the PostFilter part.

    ``reasons`` holds one entry per (node, reason) pair of the nodes that were evaluated, or is already a
    mapping of each reason to its count.
    """
    msg = NO_NODE_AVAILABLE.format(num_all_nodes) + ":"
    if prefilter_msg:
        msg += f" {prefilter_msg}."
    else:
        counts = reasons if isinstance(reasons, Mapping) else Counter(reasons)
        parts = sorted(f"{v} {k}" for k, v in counts.items())
        if parts:
            msg += " " + ", ".join(parts) + "."
    if postfilter_msg:
        msg += f" {postfilter_msg}."
    return msg


def scheduled_message(namespace: str, name: str, node: str) -> str:
    """The ``Scheduled`` event message."""
    return f"Successfully assigned {namespace}/{name} to {node}"
