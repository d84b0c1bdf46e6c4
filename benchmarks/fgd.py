"""The FGD paper's result reproduced (issue 17): the final GPU allocation ratio of the Alibaba openb trace's
default pod list at 130 % arrived GPU load, per scheduling policy, mean and spread over seeds 42-51, next to the
paper's published figure (USENIX ATC'23, the trace folder's README).

Each replay is one run of ``berth compare openb:DIR --config policy:P --seeds S`` (`berth.sim.compare`: the
same replay as ``berth trace openb``), run in ``--jobs`` worker processes. Writes benchmarks/results/fgd.json (``make bench-fgd``); other options write a file
of their own (see report.py). ``--quick``: seed 42 only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from report import parse_args, publish  # noqa: E402

from berth.sim.compare import Outcome, prepare, run_all  # noqa: E402
from berth.sim.traces.command import policy_name  # noqa: E402

TRACE = HERE.parent.parent / "shared" / "traces" / "alibaba-openb-gpu-2023"
PAPER = {
    "FGD": 95.39,
    "BestFit": 93.08,
    "GpuPacking": 92.00,
    "GpuClustering": 91.88,
    "DotProduct": 90.85,
    "Random": 87.47,
}
"""The paper's final GPU allocation ratio (%) at 130 % arrived load on the default pod list."""


def sweep(trace: Path, policies: list[str], seeds: list[int], inflation: float, jobs: int) -> list[Outcome]:
    """Every (policy, seed) replay of the trace's default pod list (GPU nodes) at ``inflation``, checked and run
    by ``berth compare``'s machinery in ``jobs`` worker processes: the outcomes, policy-major."""
    comparison = prepare(
        [f"openb:{trace}?inflation={inflation}"],
        [f"policy:{p}" for p in policies],
        ",".join(str(s) for s in seeds),
        jobs,
    )
    return run_all(comparison.runs, comparison.executor.jobs)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trace", type=Path, default=TRACE, help="the trace folder")
    ap.add_argument("--policies", default=",".join(PAPER), help="comma-separated policies")
    ap.add_argument("--first-seed", type=int, default=42)
    ap.add_argument("--seeds", type=int, default=10, help="how many seeds from --first-seed")
    ap.add_argument("--inflation", type=float, default=1.3)
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--quick", action="store_true", help="seed 42 only")
    args = parse_args(ap, argv, ignore=("trace", "jobs"))
    policies = [policy_name(p) for p in args.policies.split(",") if p]
    seeds = [args.first_seed] if args.quick else list(range(args.first_seed, args.first_seed + args.seeds))
    runs: dict[str, dict[int, tuple[float, float]]] = {p: {} for p in policies}
    for o in sweep(args.trace, policies, seeds, args.inflation, max(1, args.jobs)):
        runs[o["config"]][o["seed"]] = (round(100 * o["gpuAllocation"], 2), round(o["replayCpuSeconds"], 2))
    table: dict[str, Any] = {}
    for policy in policies:
        percents = [runs[policy][s][0] for s in seeds]
        cpus = [runs[policy][s][1] for s in seeds]
        mean = statistics.fmean(percents)
        paper = PAPER.get(policy)
        table[policy] = {
            "paperGpuAllocationPercent": paper,
            "berthMeanPercent": round(mean, 2),
            "berthStdevPercent": round(statistics.pstdev(percents), 2),
            "berthMinPercent": min(percents),
            "berthMaxPercent": max(percents),
            "differencePoints": None if paper is None else round(mean - paper, 2),
            "perSeedPercent": percents,
            "cpuSecondsMean": round(statistics.fmean(cpus), 2),
            "cpuSecondsMax": max(cpus),
        }
    publish(
        "fgd",
        {
            "trace": "alibaba-openb-gpu-2023 default pod list, GPU nodes",
            "inflation": args.inflation,
            "seeds": seeds,
            "produced_by": "benchmarks/fgd.py: berth compare's trace runs (sim/compare, the replay of berth "
            "trace openb) per policy and seed; cpuSeconds is the process time of one replay",
            "policies": table,
        },
    )


if __name__ == "__main__":
    main()
