"""Retrying a write refused with ``409 Conflict`` (client-go's ``retry.RetryOnConflict`` with ``DefaultRetry``).

A component of `berth run` reads an object from the replica, changes it and writes it back with the
resourceVersion it read. When the replica was behind the server (the watch had not yet brought the newest
version) the server refuses the write with a Conflict. As a client-go controller does, the write is then
retried: the object is read again from the server, the component's change (the difference between what it read
and what it wrote, as a JSON merge patch) is applied to that newest version, and the result is written with the
newest resourceVersion — at most `RETRY_STEPS` attempts, `RETRY_DURATION` apart (jittered by `RETRY_JITTER`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

__all__ = [
    "RETRY_DURATION",
    "RETRY_FACTOR",
    "RETRY_JITTER",
    "RETRY_STEPS",
    "backoff_delays",
    "merge_diff",
]

RETRY_STEPS = 5
"""client-go's ``retry.DefaultRetry.Steps``: attempts in all."""
RETRY_DURATION = 0.010
"""``DefaultRetry.Duration``: seconds before the second attempt."""
RETRY_FACTOR = 1.0
"""``DefaultRetry.Factor``: each wait is the previous one times this."""
RETRY_JITTER = 0.1
"""``DefaultRetry.Jitter``: each wait is lengthened by up to this fraction of itself, at random."""

Obj = dict[str, Any]


def backoff_delays(
    steps: int = RETRY_STEPS,
    duration: float = RETRY_DURATION,
    factor: float = RETRY_FACTOR,
    jitter: float = RETRY_JITTER,
    rng: random.Random | None = None,
) -> list[float]:
    """The waits between `steps` attempts (``steps - 1`` of them), as apimachinery's ``wait.Backoff``:
    `duration` grown by `factor` after each, each lengthened by ``random * jitter * itself``."""
    rand = (rng or random).random
    out = []
    for _ in range(max(0, steps - 1)):
        out.append(duration + rand() * jitter * duration if jitter > 0 else duration)
        duration *= factor
    return out


def merge_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> Obj:
    """The JSON merge patch (RFC 7386) that turns `old` into `new`: changed and added keys with their new
    values (objects recursively), removed keys as null; a list is replaced whole."""
    patch: Obj = {}
    for key, value in new.items():
        if key not in old:
            patch[key] = value
            continue
        before = old[key]
        if before == value:
            continue
        if isinstance(before, Mapping) and isinstance(value, Mapping):
            patch[key] = merge_diff(before, value)
        else:
            patch[key] = value
    for key in old:
        if key not in new:
            patch[key] = None
    return patch
