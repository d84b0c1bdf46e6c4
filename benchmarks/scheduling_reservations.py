"""SchedulingBasic with one Reservation per node (5000) and owner pods that match them.

Prints pods/s of the scheduling loop for the measured owner pods and writes
benchmarks/results/scheduling_reservations.json.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from report import parse_args, peak_rss_mib, publish  # noqa: E402

from berth.gc_policy import tune_for_throughput  # noqa: E402
from berth.sim.engine import Simulation  # noqa: E402
from berth.sim.scenario import Plan, Step  # noqa: E402
from workloads import scheduling_reservations  # noqa: E402


def main() -> None:
    """Run the benchmark and write its JSON result."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--init-pods", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10000)
    args = parse_args(ap)
    tune_for_throughput()  # the collector's thresholds the berth command sets
    setup, measured = scheduling_reservations(args.nodes, args.init_pods, args.pods)
    sim = Simulation()
    t0 = time.perf_counter()
    sim.run(Plan([Step(0.0, setup)]), until=0.0)
    setup_wall = time.perf_counter() - t0
    gc.collect()
    gc.freeze()  # the cluster built so far is long-lived: keep it out of the cyclic collector's work
    before, loop_before = sim.scheduler.stats.scheduled, sim.scheduler.stats.loop_seconds
    t0 = time.perf_counter()
    sim.apply_step(Step(0.0, measured))
    sim.run_until_idle()
    wall = time.perf_counter() - t0
    scheduled = sim.scheduler.stats.scheduled - before
    loop = sim.scheduler.stats.loop_seconds - loop_before
    in_reservation = sum(
        1
        for o in sim.store.list(("", "Pod"), "sched-test")[0]
        if "scheduling.koordinator.sh/reservation-allocated" in (o["metadata"].get("annotations") or {})
    )
    assert scheduled == args.pods, f"only {scheduled} of {args.pods} pods scheduled"
    res = {
        "workload": "SchedulingBasicWithReservations",
        "nodes": args.nodes,
        "reservations": args.nodes,
        "initPods": args.init_pods,
        "measuredPods": args.pods,
        "podsAllocatedFromReservations": in_reservation,
        "setupWallSeconds": round(setup_wall, 3),
        "schedulingLoopSeconds": round(loop, 3),
        "podsPerSecondLoop": round(args.pods / loop, 1),
        "wallSecondsIncludingStoreAndControllers": round(wall, 3),
        "podsPerSecondWall": round(args.pods / wall, 1),
        "peakRSSMiB": peak_rss_mib(),
    }
    publish("scheduling_reservations", res)


if __name__ == "__main__":
    main()
