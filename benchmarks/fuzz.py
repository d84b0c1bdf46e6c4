"""Invariants under random scenarios: run N seeded scenarios (tests/fuzz/fuzz_model.py) and report every violation.

Each seed gives one scenario: a scheduler configuration (default + koord-scheduler, CapacityScheduling with
ElasticQuotas, or Coscheduling with PodGroups; seed modulo 3), two to four nodes, then 20 to 80 random actions
(nodes added, cordoned, drained, deleted, restored and relabelled; pods, Deployments and ReplicaSets created,
scaled, rolled out, relabelled, deleted and evicted; Reservations, PodDisruptionBudgets, ElasticQuotas and
PodGroups created and deleted; virtual time advanced). After every action the cluster is settled and every
invariant of tests/fuzz/fuzz_invariants.py is checked. Determinism: the final objects of every scenario are
compared with those of a second run in another process whose string-hash seed differs.

Violations are grouped by signature (the invariant and the description with numbers and object names blanked);
the first seed of each group is shrunk to a short action list. "fixed" says, for each regression test kept in
tests/fuzz/test_fuzz_regressions.py, whether it passes now.

    python benchmarks/fuzz.py --scenarios 10000 --workers 2
"""

from __future__ import annotations

import argparse
import inspect
import json
import multiprocessing as mp
import os
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
sys.path[:0] = [str(HERE), str(TESTS / "fuzz"), str(TESTS)]

from fuzz_model import (  # noqa: E402
    Action,
    determinism_message,
    digest_difference,
    run,
    scenario_actions,
    shrink,
    state_digest,
)
from report import parse_args, peak_rss_mib, result_path  # noqa: E402

RESULTS = HERE / "results" / "fuzz.json"
CHECK_HASH_SEED = "1"
REPLAY_HASH_SEED = "2"


# ----- workers (run in spawned processes) ---------------------------------------------------------------------


def check_seed(seed: int) -> dict[str, Any]:
    """Run scenario ``seed`` with every invariant checked after every step."""
    mode, actions = scenario_actions(seed)
    t0 = time.perf_counter()
    cluster, found = run(mode, actions, seed=seed)
    wall = time.perf_counter() - t0
    first: dict[str, tuple[int, str]] = {}
    for step, v in found:
        first.setdefault(v.invariant, (step, v.message))
    crashed = "crash" in first
    m = cluster.monitor
    return {
        "seed": seed,
        "mode": mode,
        "steps": len(actions),
        "wall": wall,
        "violations": [(inv, step, msg) for inv, (step, msg) in first.items()],
        "digest": None if crashed else state_digest(cluster),
        "counters": {
            "budgetDebits": m.debits,
            "gangBindings": m.gang_bindings,
            "reservationAllocations": m.reservation_bindings,
            "scheduled": cluster.sim.scheduler.stats.scheduled,
            "attempts": cluster.sim.scheduler.stats.attempts,
            "preemptionAttempts": cluster.sim.scheduler.stats.preemption_attempts,
        },
        "done": dict(cluster.done),
        "refused": dict(cluster.refused),
    }


def digest_seed(seed: int) -> tuple[int, dict[str, str] | None]:
    """The final-state digest of scenario ``seed`` run without checks (None when it crashed)."""
    mode, actions = scenario_actions(seed)
    cluster, found = run(mode, actions, seed=seed, check_every_step=False)
    if any(v.invariant == "crash" for _, v in found):
        return seed, None
    return seed, state_digest(cluster)


def work(job: tuple[str, int]) -> tuple[str, Any]:
    """One job of a pool: ("check", seed) or ("replay", seed)."""
    kind, seed = job
    return kind, check_seed(seed) if kind == "check" else digest_seed(seed)


def shrink_case(job: tuple[int, str, int]) -> tuple[int, str, list[Action]]:
    """Shrink scenario ``seed`` for ``invariant`` (at most ``budget`` runs)."""
    seed, invariant, budget = job
    mode, actions = scenario_actions(seed)
    return seed, invariant, shrink(mode, actions, invariant, seed=seed, budget=budget)


# ----- reporting ------------------------------------------------------------------------------------------------


def signature(invariant: str, message: str) -> str:
    """The invariant and the description with numbers and generated object names blanked."""
    text = re.sub(r"\b(p|n|d|rs|r|pdb|g)\d+\b", r"\1#", message)
    text = re.sub(r"\b[0-9a-f]{8}-[0-9a-f-]{27}\b", "<uid>", text)
    text = re.sub(r"-[0-9a-f]{8,10}-[a-z0-9]{5}\b", "-<hash>", text)
    text = re.sub(r"\d+", "#", text)
    return f"{invariant}: {text}"


def regression_status() -> dict[str, bool]:
    """Each kept regression test and whether it passes now (True: the bug it keeps is fixed)."""
    import test_fuzz_regressions as regressions

    out: dict[str, bool] = {}
    for name, fn in sorted(inspect.getmembers(regressions, inspect.isfunction)):
        if not name.startswith("test_regression_"):
            continue
        try:
            fn()
        except Exception:  # an assertion, or the crash the test keeps
            out[name] = False
            continue
        out[name] = True
    return out


def _git(*args: str) -> str:
    """Read-only git output in the repository ("" when git is unavailable)."""
    try:
        out = subprocess.run(["git", *args], cwd=HERE.parent, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return ""
    return out.stdout.strip()


def previous_runs(path: Path) -> list[dict[str, Any]]:
    """The history kept in an earlier result file, plus that run's summary (what it found stays on record)."""
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    history: list[dict[str, Any]] = list(old.get("history") or [])
    if "scenarios" in old:
        history.append(
            {
                "commit": old.get("commit", ""),
                "srcModified": old.get("srcModified"),
                "scenarios": old["scenarios"],
                "wallSeconds": old.get("wallSeconds"),
                "violationsByInvariant": old.get("violationsByInvariant", {}),
                "signatures": [
                    {
                        "signature": s["signature"],
                        "count": s["count"],
                        "firstSeed": s["example"]["seed"],
                        "description": s["example"]["description"],
                    }
                    for s in old.get("signatures", [])
                ],
                "regressionTests": old.get("regressionTests", []),
            }
        )
    return history


def _pool(workers: int, hash_seed: str) -> Any:
    """A spawned pool whose interpreters hash strings with ``hash_seed``."""
    saved = os.environ.get("PYTHONHASHSEED")
    os.environ["PYTHONHASHSEED"] = hash_seed
    try:
        return mp.get_context("spawn").Pool(workers)
    finally:
        if saved is None:
            os.environ.pop("PYTHONHASHSEED", None)
        else:
            os.environ["PYTHONHASHSEED"] = saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=10_000, help="number of seeded scenarios")
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--workers", type=int, default=2, help="processes in all")
    parser.add_argument(
        "--determinism-every", type=int, default=1, help="replay every K-th scenario (0: none)"
    )
    parser.add_argument("--shrink-budget", type=int, default=300, help="runs per shrunk case")
    parser.add_argument("--shrink-cases", type=int, default=2, help="seeds shrunk per violation signature")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parse_args(parser, argv, ignore=("out", "workers"))
    if args.out == RESULTS:  # the recorded file only for the default arguments
        args.out = result_path("fuzz", args.results_dir)

    # the regression tests run first, on the code the scenarios will run on
    regressions = regression_status()
    commit = _git("rev-parse", "--short", "HEAD")
    src_modified = bool(_git("status", "--porcelain", "--", "src"))
    seeds = list(range(args.start, args.start + args.scenarios))
    replayed = set(seeds[:: args.determinism_every]) if args.determinism_every > 0 else set()
    t0 = time.perf_counter()
    # two pools whose interpreters hash strings differently; each checks half of the scenarios and replays the
    # other half, so every replay runs under another hash seed than its checked run and the load is even
    n_a = max(1, args.workers // 2)
    n_b = max(1, args.workers - n_a)
    pools = [_pool(n_a, CHECK_HASH_SEED), _pool(n_b, REPLAY_HASH_SEED)]
    jobs: list[list[tuple[str, int]]] = [[], []]
    for i, seed in enumerate(seeds):
        jobs[i % 2].append(("check", seed))
        if seed in replayed:
            jobs[(i + 1) % 2].append(("replay", seed))
    streams = [pool.imap_unordered(work, js, chunksize=4) for pool, js in zip(pools, jobs, strict=True)]

    results: dict[int, dict[str, Any]] = {}
    replay_digests: dict[int, dict[str, str] | None] = {}
    queue = [iter(s) for s in streams]
    finished = 0
    while queue:
        for it in list(queue):
            try:
                kind, value = next(it)
            except StopIteration:
                queue.remove(it)
                continue
            if kind == "replay":
                replay_digests[value[0]] = value[1]
                continue
            results[value["seed"]] = value
            finished += 1
            if finished % 500 == 0 or finished == len(seeds):
                bad = sum(1 for x in results.values() if x["violations"])
                print(
                    f"{finished:6d}/{len(seeds)} scenarios  {time.perf_counter() - t0:7.0f} s  with violations: {bad}",
                    flush=True,
                )
    wall = time.perf_counter() - t0
    checkers = pools[0]

    # determinism
    determinism_checked = 0
    for seed, digest in replay_digests.items():
        r = results[seed]
        if digest is None or r["digest"] is None:
            continue
        determinism_checked += 1
        kinds = digest_difference(digest, r["digest"])
        if kinds:
            r["violations"].append(("determinism", r["steps"], determinism_message(kinds)))

    # violations, grouped
    flat: list[dict[str, Any]] = []
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for seed in seeds:
        r = results[seed]
        for inv, step, msg in r["violations"]:
            item = {"seed": seed, "mode": r["mode"], "step": step, "invariant": inv, "description": msg}
            flat.append(item)
            groups[signature(inv, msg)].append(item)
    # a determinism trial runs the scenario in two more interpreters: fewer cases, smaller budget
    shrink_jobs = [
        (
            item["seed"],
            item["invariant"],
            args.shrink_budget // (6 if item["invariant"] == "determinism" else 1),
        )
        for items in groups.values()
        for item in items[: 1 if items[0]["invariant"] == "determinism" else args.shrink_cases]
    ]
    shrunk: dict[tuple[int, str], list[Action]] = {}
    if shrink_jobs:
        print(f"shrinking {len(shrink_jobs)} cases", flush=True)
        for seed, inv, actions in checkers.imap_unordered(shrink_case, shrink_jobs):
            shrunk[(seed, inv)] = actions
    for pool in pools:
        pool.close()

    steps = sum(r["steps"] for r in results.values())
    counters: Counter[str] = Counter()
    done: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    modes: Counter[str] = Counter()
    for r in results.values():
        counters.update(r["counters"])
        done.update(r["done"])
        refused.update(r["refused"])
        modes[r["mode"]] += 1
    figures: dict[str, Any] = {
        "commit": commit,
        "srcModified": src_modified,
        "scenarios": len(seeds),
        "seeds": [seeds[0], seeds[-1]] if seeds else [],
        "modes": dict(sorted(modes.items())),
        "steps": steps,
        "wallSeconds": round(wall, 1),
        "workers": args.workers,
        "scenarioCpuSeconds": round(sum(r["wall"] for r in results.values()), 1),
        "determinismChecked": determinism_checked,
        "scenariosWithViolations": sum(1 for r in results.values() if r["violations"]),
        "violationsByInvariant": dict(sorted(Counter(v["invariant"] for v in flat).items())),
        "signatures": [
            {
                "signature": sig,
                "invariant": items[0]["invariant"],
                "count": len(items),
                "example": items[0],
                "shrunk": [
                    {"seed": it["seed"], "mode": it["mode"], "actions": shrunk[(it["seed"], it["invariant"])]}
                    for it in items
                    if (it["seed"], it["invariant"]) in shrunk
                ],
            }
            for sig, items in sorted(groups.items(), key=lambda kv: -len(kv[1]))
        ],
        "violations": flat,
        "regressionTests": [{"test": name, "fixed": ok} for name, ok in regressions.items()],
        "actionsApplied": dict(sorted(done.items())),
        "requestsRefused": dict(sorted(refused.items())),
        "counters": dict(sorted(counters.items())),
        "peakRSSMiB": peak_rss_mib(),
        "history": previous_runs(args.out),
    }
    for k in ("scenarios", "steps", "wallSeconds", "determinismChecked", "scenariosWithViolations"):
        print(f"{k:30s} {figures[k]}")
    print(f"{'violationsByInvariant':30s} {figures['violationsByInvariant']}")
    for s in figures["signatures"]:
        print(f"  {s['count']:6d}  {s['signature']}")
    for t in figures["regressionTests"]:
        print(f"  {'fixed' if t['fixed'] else 'open '}  {t['test']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
