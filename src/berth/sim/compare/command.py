"""``berth compare``: check every input, then run every workload under every configuration and seed, and
aggregate the outcomes. Bad input raises CompareError (one line naming the value) before any run starts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from berth.sim.compare.executor import ExecutorSpec, connected, parse_executor, run_all
from berth.sim.compare.outcome import Outcome
from berth.sim.compare.runs import (
    DEFAULT_CONFIG,
    ConfigSpec,
    RunSpec,
    build_runs,
    parse_config_arg,
    parse_seeds,
)
from berth.sim.compare.table import aggregate
from berth.sim.compare.workload import CompareError, Workload, parse_workload


@dataclass(slots=True)
class Comparison:
    """The checked runs of one ``berth compare``, where they go, and the warnings to print."""

    runs: list[RunSpec]
    executor: ExecutorSpec
    kinds: dict[str, str]
    warnings: list[str] = field(default_factory=list)


def prepare(
    workloads: Sequence[str],
    configs: Sequence[str],
    seeds: str | None = None,
    jobs: int | None = None,
    executor: str = "local",
    until: float | None = None,
    sample: float | None = None,
) -> Comparison:
    """Check the arguments and build the runs; CompareError on the first bad one. ``sample``: the runs record
    the series of ``--report-html`` (scenarios sampled every ``sample`` virtual seconds); None: none."""
    try:
        seed_list = None if seeds is None else parse_seeds(seeds)
    except ValueError as e:
        raise CompareError(str(e)) from None
    where = parse_executor(executor, jobs)
    warnings: list[str] = []
    specs: list[ConfigSpec] = []
    for arg in configs:
        spec, notes = parse_config_arg(arg)
        specs.append(spec)
        warnings.extend(notes)
    loaded: list[Workload] = []
    for arg in workloads:
        if any(w.label == arg for w in loaded):
            raise CompareError(f'workload "{arg}": given twice')
        loaded.append(parse_workload(arg))
    runs = build_runs(loaded, specs or [DEFAULT_CONFIG], seed_list, until, sample)
    return Comparison(runs, where, {w.label: w.kind for w in loaded}, warnings)


def run_comparison(comparison: Comparison, on_done: Callable[[], None] | None = None) -> list[Outcome]:
    """Connect to the executor (CompareError when it cannot be reached: nothing has run) and run everything:
    the outcomes, in the order of the runs."""
    with connected(comparison.executor) as client:
        return run_all(comparison.runs, comparison.executor.jobs, client, on_done)


def execute(comparison: Comparison, on_done: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    """`run_comparison`, aggregated (see `berth.sim.compare.table.aggregate`)."""
    return aggregate(run_comparison(comparison, on_done), comparison.kinds)


__all__ = ["Comparison", "execute", "prepare", "run_comparison"]
