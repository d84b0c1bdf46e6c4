"""kube's scheduler_perf workloads on Berth: pods/s of the scheduling loop and peak memory per workload.

    python benchmarks/scheduler_perf.py [WORKLOAD...] [--nodes N] [--scale-series]

Without WORKLOAD every workload runs. Each run builds the cluster (nodes and init pods, scheduled first and
not measured), freezes it out of the cyclic GC, then creates the measured pods and times the scheduling
loop only (as scheduler_perf's SchedulingThroughput). Results go to
benchmarks/results/scheduler_perf_<workload>.json. ``--nodes`` changes the node count and scales the pod
counts proportionally (pods per node stay as at the workload's 5000-node size). ``--scale-series`` runs
each given workload (default SchedulingBasic) at 500, 1000, 5000 and 15000 nodes and prints the per-pod
cost per node count (results/scheduler_perf_<workload>_scale.json). When more than one run is asked for,
each runs in its own process so that its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from perf_workloads import WORKLOADS, Workload, build  # noqa: E402
from report import parse_args, peak_rss_mib, publish, result_path  # noqa: E402

from berth.gc_policy import tune_for_throughput  # noqa: E402
from berth.sim.engine import Simulation  # noqa: E402
from berth.sim.scenario import Plan, Step  # noqa: E402

SCALE_SERIES = (500, 1000, 5000, 15000)
RESULT_PREFIX = "scheduler_perf_"
_EMIT = "SCHEDULER_PERF_RESULT "


def run_workload(w: Workload, nodes: int | None = None) -> dict[str, Any]:
    """Run one workload in this process; the figures of its measured phase."""
    setup, measured = build(w, nodes)
    n = w.nodes if nodes is None else nodes
    init_pods = len(setup) - n
    sim = Simulation()
    t0 = time.perf_counter()
    sim.run(Plan([Step(0.0, setup)]), until=0.0)
    setup_wall = time.perf_counter() - t0
    stats = sim.scheduler.stats
    init_scheduled = stats.scheduled
    gc.collect()
    gc.freeze()  # the cluster built so far is long-lived: keep it out of the cyclic collector's work
    try:
        before, attempts_before, loop_before = stats.scheduled, stats.attempts, stats.loop_seconds
        t0 = time.perf_counter()
        sim.apply_step(Step(0.0, measured))
        sim.run_until_idle()
        wall = time.perf_counter() - t0
    finally:
        gc.unfreeze()
    scheduled = stats.scheduled - before
    loop = stats.loop_seconds - loop_before
    pods = len(measured)
    rate = round(scheduled / loop, 1) if loop > 0 else 0.0
    return {
        "workload": w.name,
        "nodes": n,
        "initPods": init_pods,
        "initPodsScheduled": init_scheduled,
        "measuredPods": pods,
        "measuredPodsScheduled": scheduled,
        "attempts": stats.attempts - attempts_before,
        "podCountsScaledWithNodes": n != w.nodes,
        "setupWallSeconds": round(setup_wall, 3),
        "schedulingLoopSeconds": round(loop, 3),
        "podsPerSecondLoop": rate,
        "microsecondsPerPod": round(loop / scheduled * 1e6, 1) if scheduled else None,
        "wallSecondsIncludingStoreAndKubelet": round(wall, 3),
        "podsPerSecondWall": round(scheduled / wall, 1) if wall > 0 else 0.0,
        "targetPodsPerSecond": w.target,
        "kubeCIFloorPodsPerSecond": w.kube_floor,
        "meetsTarget": None if w.target is None else rate >= w.target,
        "peakRSSMiB": peak_rss_mib(),
    }


def _target_note(res: dict[str, Any]) -> str:
    target = res["targetPodsPerSecond"]
    if target is None:
        return "no target (report only)"
    rate = res["podsPerSecondLoop"]
    verdict = "meets" if rate >= target else f"MISSES by {round(100 * (1 - rate / target))} %"
    return f"target {target} pods/s, kube CI floor {res['kubeCIFloorPodsPerSecond']}: {verdict}"


def run_and_publish(w: Workload, nodes: int | None) -> dict[str, Any]:
    """Run ``w`` here, print its figures beside its target and write its JSON result."""
    res = run_workload(w, nodes)
    print(
        f"== {w.name}: {res['podsPerSecondLoop']} pods/s ({_target_note(res)}), peak {res['peakRSSMiB']} MiB"
    )
    publish(RESULT_PREFIX + w.name, res)
    return res


def _child(name: str, nodes: int | None, emit: bool) -> dict[str, Any] | None:
    """Run one workload in a fresh interpreter (own peak RSS); its result when ``emit``."""
    argv = [sys.executable, str(Path(__file__).resolve()), name]
    if nodes is not None:
        argv += ["--nodes", str(nodes)]
    if emit:
        argv.append("--emit-json")
    proc = subprocess.run(argv, check=True, stdout=subprocess.PIPE if emit else None, text=True)
    if not emit:
        return None
    for line in proc.stdout.splitlines():
        if line.startswith(_EMIT):
            out: dict[str, Any] = json.loads(line[len(_EMIT) :])
            return out
    raise RuntimeError(f"{name}: no result from the child run")


def scale_series(
    w: Workload, node_counts: tuple[int, ...] = SCALE_SERIES, isolate: bool = True
) -> dict[str, Any]:
    """Run ``w`` at each node count (pods scaled with nodes); per-pod cost per node count."""
    rows: list[dict[str, Any]] = []
    for n in node_counts:
        res = _child(w.name, n, emit=True) if isolate else run_workload(w, n)
        assert res is not None
        rows.append(res)
        print(
            f"   {w.name} {n:>6} nodes: {res['measuredPods']:>6} pods  {res['podsPerSecondLoop']:>8} pods/s  "
            f"{res['microsecondsPerPod']} us/pod  peak {res['peakRSSMiB']} MiB",
            flush=True,
        )
    base = rows[0]
    series = []
    for r in rows:
        us = r["microsecondsPerPod"]
        growth = round(us / base["microsecondsPerPod"], 2) if us and base["microsecondsPerPod"] else None
        series.append(
            {
                "nodes": r["nodes"],
                "initPods": r["initPods"],
                "measuredPods": r["measuredPods"],
                "podsPerSecondLoop": r["podsPerSecondLoop"],
                "microsecondsPerPod": us,
                "microsecondsPerPodPer1000Nodes": round(us / r["nodes"] * 1000, 2) if us else None,
                "costGrowthVsFirst": growth,
                "nodeGrowthVsFirst": round(r["nodes"] / base["nodes"], 2),
                "peakRSSMiB": r["peakRSSMiB"],
            }
        )
    out = {"workload": w.name, "podCountsScaledWithNodes": True, "series": series}
    print(f"== {w.name} per-pod cost by node count")
    print(f"{'nodes':>8} {'pods/s':>10} {'us/pod':>10} {'us/pod/1k nodes':>16} {'cost x':>8} {'nodes x':>8}")
    for s in series:
        print(
            f"{s['nodes']:>8} {s['podsPerSecondLoop']:>10} {s['microsecondsPerPod']:>10} "
            f"{s['microsecondsPerPodPer1000Nodes']:>16} {s['costGrowthVsFirst']:>8} {s['nodeGrowthVsFirst']:>8}"
        )
    path = result_path(f"{RESULT_PREFIX}{w.name}_scale")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    return out


def _lookup(name: str) -> Workload:
    for key, w in WORKLOADS.items():
        if key.lower() == name.lower():
            return w
    raise SystemExit(f"unknown workload {name!r}; choose from: {', '.join(WORKLOADS)}")


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run the asked workloads."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workloads", nargs="*", metavar="WORKLOAD", help=f"any of: {', '.join(WORKLOADS)}")
    ap.add_argument("--nodes", type=int, default=None, help="node count (pod counts scale with it)")
    ap.add_argument("--scale-series", action="store_true", help=f"run at {SCALE_SERIES} nodes")
    ap.add_argument("--in-process", action="store_true", help="run everything in this process")
    ap.add_argument("--emit-json", action="store_true", help=argparse.SUPPRESS)
    args = parse_args(ap, argv, ignore=("in_process",))
    tune_for_throughput()  # the collector's thresholds the berth command sets
    chosen = [_lookup(n) for n in args.workloads]
    if args.emit_json:  # child of a scale series: one run, result on stdout only
        (w,) = chosen
        print(_EMIT + json.dumps(run_workload(w, args.nodes)), flush=True)
        return
    if args.scale_series:
        for w in chosen or [WORKLOADS["SchedulingBasic"]]:
            scale_series(w, isolate=not args.in_process)
        return
    chosen = chosen or list(WORKLOADS.values())
    if len(chosen) == 1 or args.in_process:
        for w in chosen:
            run_and_publish(w, args.nodes)
        return
    for w in chosen:
        _child(w.name, args.nodes, emit=False)


if __name__ == "__main__":
    main()
