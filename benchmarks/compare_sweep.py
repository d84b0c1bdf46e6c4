"""A ``berth compare`` sweep (issue 17): the FGD paper's six policies by ten seeds (42..51) over the Alibaba openb
trace's default pod list at 130 % arrived GPU load, checked and run by `berth.sim.compare` (``prepare`` then
``execute``: what ``berth compare openb:DIR --config policy:FGD ... --seeds 42..51 --jobs 2`` does) in
``--jobs`` worker processes. The target: under 10 minutes on 2 cores.

Writes benchmarks/results/compare_sweep.json: the sweep's wall time, the runs, and per policy the mean and
sample standard deviation over seeds of the GPU allocation and fragmentation. ``--quick``: seed 42 only.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fgd import PAPER, TRACE  # noqa: E402
from report import parse_args, peak_rss_mib, publish  # noqa: E402

from berth.sim.compare import execute, prepare  # noqa: E402


def _pct(summary: dict[str, Any], metric: str, key: str) -> float | None:
    value = summary[metric][key]
    return None if value is None else round(100 * value, 2)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trace", type=Path, default=TRACE, help="the trace folder")
    ap.add_argument("--policies", default=",".join(PAPER), help="comma-separated policies")
    ap.add_argument("--seeds", default="42..51", help="seeds, as berth compare --seeds takes them")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--quick", action="store_true", help="seed 42 only")
    args = parse_args(ap, argv, ignore=("trace",))
    policies = [p for p in args.policies.split(",") if p]
    t0 = time.perf_counter()
    comparison = prepare(
        [f"openb:{args.trace}?inflation=1.3"],
        [f"policy:{p}" for p in policies],
        "42" if args.quick else args.seeds,
        args.jobs,
    )
    checked = time.perf_counter() - t0
    groups = execute(comparison)
    wall = time.perf_counter() - t0
    table = {
        g["config"]: {
            "gpuAllocationPercentMean": _pct(g["summary"], "gpuAllocation", "mean"),
            "gpuAllocationPercentStdev": _pct(g["summary"], "gpuAllocation", "stdev"),
            "fragmentationPercentMean": _pct(g["summary"], "fragmentation", "mean"),
            "fragmentationPercentStdev": _pct(g["summary"], "fragmentation", "stdev"),
            "runWallSecondsMean": round(g["summary"]["wallSeconds"]["mean"], 2),
            "runWallSecondsMax": round(g["summary"]["wallSeconds"]["max"], 2),
        }
        for g in groups
    }
    publish(
        "compare_sweep",
        {
            "trace": "alibaba-openb-gpu-2023 default pod list, GPU nodes, inflation 1.3",
            "policies": len(policies),
            "seeds": groups[0]["seeds"] if groups else [],
            "runs": len(comparison.runs),
            "jobs": args.jobs,
            "cpuCount": os.cpu_count(),
            "checkSeconds": round(checked, 2),
            "sweepWallSeconds": round(wall, 2),
            "targetWallSeconds": 600,
            "peakRssMiBParent": peak_rss_mib(),
            "spread": "sample standard deviation over seeds",
            "produced_by": "benchmarks/compare_sweep.py: berth.sim.compare prepare + execute (berth compare), "
            "local process pool",
            "byPolicy": table,
        },
    )


if __name__ == "__main__":
    main()
