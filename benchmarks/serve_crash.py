"""`berth serve` killed with SIGKILL 20 times during a 2 000-pod run (issue 13's crash test, long form).

Runs tests/serve/serve_crash.py's harness: pods created through the API one by one, the server killed at
seeded random moments and restarted on the same data directory; after every restart each acknowledged pod
must be there with its uid and no pod may have changed node; at the end every pod must be bound.
Writes benchmarks/results/serve_crash.json. Not a timed test: ``make bench`` material.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "serve"))

from report import parse_args, publish  # noqa: E402
from serve_crash import run_server_crashes  # noqa: E402


def main() -> None:
    """Run the crash test and publish its figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parse_args(parser)
    began = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        report = run_server_crashes(Path(tmp) / "data", pods=args.pods, kills=args.kills, seed=args.seed)
    result = {
        "pods": args.pods,
        "kills": report.kills,
        "seed": args.seed,
        "acknowledged_creates": report.acknowledged,
        "checks": report.checks,
        "problems": report.problems,
        "restart_seconds_max": max(report.recoveries_seconds, default=0.0),
        "restart_seconds_median": sorted(report.recoveries_seconds)[len(report.recoveries_seconds) // 2]
        if report.recoveries_seconds
        else 0.0,
        "wall_seconds": round(time.monotonic() - began, 1),
    }
    print(
        f"serve crash: {report.kills} kills, {report.acknowledged} acknowledged pods, {report.checks} checks, "
        f"{len(report.problems)} problems, restart ≤ {result['restart_seconds_max']} s, {result['wall_seconds']} s"
    )
    publish("serve_crash", result)
    if report.problems:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
