"""How a Berth process tunes Python's garbage collector.

A scheduler holds tens of thousands of long-lived objects (the store's objects, the cache's pod infos) and
allocates many short-lived ones per scheduling cycle. With CPython's default thresholds (700, 10, 10) the
young generations are collected hundreds of times per second of scheduling, each time walking survivors
that will live on anyway. The ``berth`` command raises the thresholds at start, as long-running Python
services commonly do; reference counting still frees acyclic garbage at once, so memory use barely moves.

A run that ends by itself (``berth simulate``) goes further: what survives a young collection there is
almost all cluster state kept to the end of the run (the store's objects and their watch events, the pods
waiting to start), so collecting the middle generation walks it again and again for nothing (more than half
of the collector's time in a 10 000-pod run). During such a run that generation is collected only every
``BATCH_THRESHOLDS[0] * BATCH_THRESHOLDS[1]`` allocations (about once per 100 000 pods).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# objects allocated (minus freed) before a generation-0 collection, then how many collections of each
# generation before the next older one is collected
THRESHOLDS = (20_000, 20, 10)
BATCH_THRESHOLDS = (20_000, 1_000, 10)


def tune_for_throughput() -> None:
    """Set the collector's thresholds to ``THRESHOLDS`` for this process."""
    gc.set_threshold(*THRESHOLDS)


@contextmanager
def batch_run() -> Iterator[None]:
    """The collector's thresholds are ``BATCH_THRESHOLDS`` inside the block (a run that ends by itself, not a
    server), and what they were before after it."""
    before = gc.get_threshold()
    gc.set_threshold(*BATCH_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
