"""How a Berth process tunes Python's garbage collector.

A scheduler holds tens of thousands of long-lived objects (the store's objects, the cache's pod infos) and
allocates many short-lived ones per scheduling cycle. With CPython's default thresholds (700, 10, 10) the
young generations are collected hundreds of times per second of scheduling, each time walking survivors
that will live on anyway. The ``berth`` command raises the thresholds at start, as long-running Python
services commonly do; reference counting still frees acyclic garbage at once, so memory use barely moves.

A run that ends by itself (``berth simulate``) goes further: what survives a young collection there is
almost all cluster state kept to the end of the run (the store's objects and their watch events, the pods
waiting to start), and such a run makes next to no cyclic garbage (the same 180 unreachable objects, from the
command line's set-up, after a run of 10 000 pods on 5 000 nodes as after one of 10 pods), so every collection
walks survivors for nothing (0.1 to 0.35 s of a 10 000-pod run). During such a run the cyclic collector is
off; at its end the survivors are moved to the oldest generation, so the first young collection after it does
not walk them all.

At the end of such a run the heap is thrown away whole: ``end_process`` flushes the standard streams and leaves
the memory to the operating system instead of freeing every object one by one (half a second for a run of
10 000 pods on 5 000 nodes; a process that served or watched something still ends the usual way).
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

# objects allocated (minus freed) before a generation-0 collection, then how many collections of each
# generation before the next older one is collected
THRESHOLDS = (20_000, 20, 10)
# the exit status Python gives a process whose standard streams cannot be flushed at exit
FLUSH_FAILED_STATUS = 120

_batch_ran = False  # a batch run took place since tune_for_throughput: the heap is not worth freeing


def tune_for_throughput() -> None:
    """Set the collector's thresholds to ``THRESHOLDS`` for this process (a command starting)."""
    global _batch_ran
    gc.set_threshold(*THRESHOLDS)
    _batch_ran = False


@contextmanager
def batch_run() -> Iterator[None]:
    """The cyclic collector is off inside the block (a run that ends by itself, not a server) and as before
    after it, with the block's survivors in the oldest generation; ``end_process`` then ends the process
    without freeing its heap."""
    global _batch_ran
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()  # everything allocated so far: out of the young generations' way ...
        gc.unfreeze()  # ... and back, as the oldest generation
        if was_enabled:
            gc.enable()
        _batch_ran = True


def end_process(code: object) -> NoReturn:
    """End the process with ``code`` as ``SystemExit`` takes it (None: 0; a number; anything else is printed
    to stderr and gives 1). After a batch run the standard streams are flushed and the process exits at once,
    its heap left to the operating system; otherwise ``SystemExit`` is raised as usual."""
    if not _batch_ran:
        raise SystemExit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        sys.stderr.write(f"{code}\n")
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or FLUSH_FAILED_STATUS
    os._exit(status)
