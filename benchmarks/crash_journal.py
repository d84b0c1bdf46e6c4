"""The SQLite journal of ``MemoryStore.open``: write throughput and a long kill -9 run.

* Writes/s for 10 000 pod creates (scheduler_perf's pod shape, with the API's validation and the pod
  admission the simulator uses) in a memory-only store, in a journaled store (``synchronous=NORMAL``, the
  default) and with ``fsync=True``; and a mixed run (create, bind, status patch, delete of every pod) with
  p50/p99 write latency. Best of ``--repeat`` runs.
* The crash run of tests/store/journal_crash.py with ``--kills`` (default 20) SIGKILLs at seeded random
  moments; after each, every acknowledged write must be recovered.

Writes benchmarks/results/crash_journal.json. Not a timed test: ``make bench`` / ``make fuzz`` material.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "store"))

from journal_crash import run_crashes  # noqa: E402
from report import parse_args, publish  # noqa: E402

from berth.store import MemoryStore  # noqa: E402
from berth.store.admission import namespace_autoprovision, pod_admission  # noqa: E402
from workloads import make_node, make_pod  # noqa: E402

POD = ("", "Pod")


def _setup(store: MemoryStore) -> MemoryStore:
    store.add_admission(namespace_autoprovision(store))
    store.add_admission(pod_admission(store))
    store.create(make_node("node-0"))
    return store


def creates_per_second(open_store: Callable[[], MemoryStore], pods: list[dict[str, Any]]) -> float:
    """Writes/s of creating `pods` one by one in a fresh store."""
    store = _setup(open_store())
    try:
        gc.collect()
        t0 = time.perf_counter()
        for pod in pods:
            store.create(pod)
        return len(pods) / (time.perf_counter() - t0)
    finally:
        store.close()


def mixed(open_store: Callable[[], MemoryStore], pods: list[dict[str, Any]]) -> dict[str, float]:
    """Create, bind, status-patch and delete every pod: writes/s and p50/p99 write latency (µs)."""
    store = _setup(open_store())
    lat: list[float] = []
    clock = time.perf_counter
    try:
        gc.collect()
        t0 = clock()
        for pod in pods:
            t = clock()
            store.create(pod)
            lat.append(clock() - t)
        for pod in pods:
            name = pod["metadata"]["name"]
            t = clock()
            store.bind("default", name, "node-0")
            lat.append(clock() - t)
            t = clock()
            store.patch(POD, "default", name, {"status": {"phase": "Running"}}, subresource="status")
            lat.append(clock() - t)
        for pod in pods:
            t = clock()
            store.delete(POD, "default", pod["metadata"]["name"], grace_period_seconds=0)
            lat.append(clock() - t)
        wall = clock() - t0
    finally:
        store.close()
    lat.sort()
    return {
        "writesPerSecond": round(len(lat) / wall, 1),
        "p50Micros": round(lat[len(lat) // 2] * 1e6, 1),
        "p99Micros": round(lat[int(len(lat) * 0.99)] * 1e6, 1),
        "maxMillis": round(lat[-1] * 1e3, 2),
    }


def main() -> None:
    """Run the throughput figures and the crash run; publish them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parse_args(parser)
    pods = [make_pod(f"pod-{i}") for i in range(args.pods)]
    figures: dict[str, Any] = {"pods": args.pods}
    with tempfile.TemporaryDirectory() as tmp:
        n = iter(range(1_000_000))

        def journaled(fsync: bool = False) -> Callable[[], MemoryStore]:
            return lambda: MemoryStore.open(Path(tmp) / f"d{next(n)}", fsync=fsync)

        variants: dict[str, Callable[[], MemoryStore]] = {
            "memory": MemoryStore,
            "journal": journaled(),
            "journalFsync": journaled(fsync=True),
        }
        for label, factory in variants.items():
            best = max(creates_per_second(factory, pods) for _ in range(args.repeat))
            figures[f"createsPerSecond_{label}"] = round(best, 1)
        for label in ("memory", "journal"):
            figures[f"mixed_{label}"] = max(
                (mixed(variants[label], pods) for _ in range(args.repeat)), key=lambda r: r["writesPerSecond"]
            )
        report = run_crashes(Path(tmp) / "crash", kills=args.kills, seed=args.seed)
    figures["crash"] = {
        "kills": report.kills,
        "boots": report.boots,
        "acknowledgedWrites": report.acknowledged_writes,
        "objectsChecked": report.objects_checked,
        "finalRevision": report.max_revision,
        "maxRecoverySeconds": max(report.recovery_seconds, default=0.0),
        "wallSeconds": report.wall_seconds,
        "problems": report.problems,
    }
    publish("crash_journal", figures)
    if report.problems:
        sys.exit(f"{len(report.problems)} problems after kill -9")


if __name__ == "__main__":
    main()
