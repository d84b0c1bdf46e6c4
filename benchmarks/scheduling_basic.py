"""SchedulingBasic from kube's scheduler_perf: 5000 nodes, 1000 init pods, 10000 measured pods.

Prints pods/s of the scheduling loop for the measured pods, peak memory, and the wall time of a whole
``berth simulate`` run of the same workload given as one JSON List; writes the figures to
benchmarks/results/scheduling_basic.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from report import parse_args, peak_rss_mib, publish  # noqa: E402

from berth.gc_policy import tune_for_throughput  # noqa: E402
from berth.sim.engine import Simulation  # noqa: E402
from berth.sim.scenario import Plan, Step  # noqa: E402
from workloads import scheduling_basic  # noqa: E402


def run_loop(nodes: int, init_pods: int, pods: int) -> dict[str, float]:
    """Schedule the measured pods and time the scheduling loop only."""
    setup, measured = scheduling_basic(nodes, init_pods, pods)
    sim = Simulation()
    sim.run(Plan([Step(0.0, setup)]), until=0.0)
    gc.collect()
    gc.freeze()  # the cluster built so far is long-lived: keep it out of the cyclic collector's work
    before = sim.scheduler.stats.scheduled
    loop_before = sim.scheduler.stats.loop_seconds
    t0 = time.perf_counter()
    sim.apply_step(Step(0.0, measured))
    sim.run_until_idle()
    wall = time.perf_counter() - t0
    scheduled = sim.scheduler.stats.scheduled - before
    loop = sim.scheduler.stats.loop_seconds - loop_before
    assert scheduled == pods, f"only {scheduled} of {pods} pods scheduled"
    return {
        "nodes": nodes,
        "initPods": init_pods,
        "measuredPods": pods,
        "schedulingLoopSeconds": round(loop, 3),
        "podsPerSecondLoop": round(pods / loop, 1),
        "wallSecondsIncludingStoreAndKubelet": round(wall, 3),
        "podsPerSecondWall": round(pods / wall, 1),
    }


def run_cli(nodes: int, init_pods: int, pods: int) -> float:
    """Wall seconds of ``berth simulate`` on the workload as one JSON List (load, schedule, print JSON)."""
    setup, measured = scheduling_basic(nodes, init_pods, pods)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "basic.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": setup + measured}))
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "berth", "simulate", str(path), "-o", "json", "--until", "1s"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return time.perf_counter() - t0


def main() -> None:
    """Run the benchmark and write its JSON result."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--init-pods", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--skip-cli", action="store_true", help="skip the whole-CLI run")
    args = parse_args(ap)
    tune_for_throughput()  # the collector's thresholds the berth command sets
    res: dict[str, float | str] = {
        "workload": "SchedulingBasic",
        **run_loop(args.nodes, args.init_pods, args.pods),
    }
    res["peakRSSMiB"] = peak_rss_mib()
    if not args.skip_cli:
        res["cliSimulateJsonSeconds"] = round(run_cli(args.nodes, args.init_pods, args.pods), 2)
    publish("scheduling_basic", res)


if __name__ == "__main__":
    main()
