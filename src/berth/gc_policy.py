"""How a Berth process tunes Python's garbage collector.

A scheduler holds tens of thousands of long-lived objects (the store's objects, the cache's pod infos) and
allocates many short-lived ones per scheduling cycle. With CPython's default thresholds (700, 10, 10) the
young generations are collected hundreds of times per second of scheduling, each time walking survivors
that will live on anyway. The ``berth`` command raises the thresholds at start, as long-running Python
services commonly do; reference counting still frees acyclic garbage at once, so memory use barely moves.
"""

from __future__ import annotations

import gc

# objects allocated (minus freed) before a generation-0 collection, then how many collections of each
# generation before the next older one is collected
THRESHOLDS = (20_000, 20, 10)


def tune_for_throughput() -> None:
    """Set the collector's thresholds to ``THRESHOLDS`` for this process."""
    gc.set_threshold(*THRESHOLDS)
