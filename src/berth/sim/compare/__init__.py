"""``berth compare``: the same workloads under several scheduler configurations and seeds, run in parallel
(worker processes, or a dask.distributed cluster), and their outcomes side by side (issue 17)."""

from berth.sim.compare.command import Comparison, execute, prepare, run_comparison
from berth.sim.compare.executor import ExecutorSpec, connected, parse_executor, run_all
from berth.sim.compare.outcome import METRICS, Outcome, RunFailed, run_one
from berth.sim.compare.runs import ConfigSpec, RunSpec, build_runs, parse_config_arg, parse_seeds
from berth.sim.compare.table import aggregate, to_json, to_table
from berth.sim.compare.workload import CompareError, ScenarioWorkload, TraceWorkload, parse_workload

__all__ = [
    "METRICS",
    "CompareError",
    "Comparison",
    "ConfigSpec",
    "ExecutorSpec",
    "Outcome",
    "RunFailed",
    "RunSpec",
    "ScenarioWorkload",
    "TraceWorkload",
    "aggregate",
    "build_runs",
    "connected",
    "execute",
    "parse_config_arg",
    "parse_executor",
    "parse_seeds",
    "parse_workload",
    "prepare",
    "run_all",
    "run_comparison",
    "run_one",
    "to_json",
    "to_table",
]
