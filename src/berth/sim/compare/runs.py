"""The runs of ``berth compare``: every workload under every ``--config`` and every seed, each run a `RunSpec`
(small, picklable, self-contained: it travels to a worker process or a dask worker as it is).

A ``--config`` is a KubeSchedulerConfiguration file, validated strictly before anything runs (as ``berth
simulate`` validates ``--scheduler-config``), or ``policy:NAME`` (FGD, BestFit, ...), a GPU placement policy for
trace workloads. A file also names a policy for trace workloads: its GPU score plugin of largest weight (as
``berth trace openb --scheduler-config``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from berth.scheduler.framework.config import ConfigError, parse_config, read_config_document
from berth.sim.compare.series import stride
from berth.sim.compare.workload import CompareError, ScenarioWorkload, TraceWorkload, Workload
from berth.sim.traces.command import policy_from_config, policy_name
from berth.sim.traces.openb import TraceError

POLICY_PREFIX = "policy:"
SCENARIO_SEED = 0
"""The seed of a scenario workload when ``--seeds`` is not given (``berth simulate``'s default)."""
TRACE_SEED = 42
"""The seed of a trace workload when ``--seeds`` is not given (``berth trace openb``'s default)."""


@dataclass(frozen=True, slots=True)
class ConfigSpec:
    """One ``--config``: its label in the tables, the KubeSchedulerConfiguration document (None: the default
    configuration) for scenario workloads, and the GPU policy for trace workloads (None when it names none;
    ``policy_error`` says why)."""

    label: str
    doc: dict[str, Any] | None = None
    policy: str | None = "FGD"
    policy_error: str = ""
    policy_only: bool = False

    def for_trace(self) -> str:
        """The policy of a trace run; CompareError when the config names none."""
        if self.policy is None:
            raise CompareError(f"--config {self.label}: {self.policy_error}")
        return self.policy


DEFAULT_CONFIG = ConfigSpec("default")
"""No ``--config``: the default scheduler configuration; FGD for trace workloads (``berth trace openb``'s)."""


def parse_config_arg(arg: str) -> tuple[ConfigSpec, list[str]]:
    """The configuration ``arg`` names and its warnings (deprecated API versions); CompareError naming the file
    and the field of an invalid one."""
    if arg.startswith(POLICY_PREFIX):
        try:
            name = policy_name(arg[len(POLICY_PREFIX) :])
        except TraceError as e:
            raise CompareError(f"--config {arg}: {e}") from None
        return ConfigSpec(name, None, name, policy_only=True), []
    path = Path(arg)
    try:
        doc = read_config_document(path)
    except ConfigError as e:
        raise CompareError(f"--config {arg}: {e}".replace("\n", " ")) from None
    try:
        config = parse_config(doc, source=arg)
        _check_profiles(doc, arg)
    except ConfigError as e:
        raise CompareError(f"--config {arg}: {e}") from None
    try:
        policy: str | None = policy_from_config(path)
        error = ""
    except TraceError as e:
        policy, error = None, str(e)
    return ConfigSpec(arg, doc, policy, error), [f"{arg}: {w}" for w in config.warnings]


def _check_profiles(doc: dict[str, Any], source: str) -> None:
    """Build the scheduler once: plugin arguments are checked when its profiles are (as ``berth simulate``)."""
    from berth.sim.engine import Simulation

    Simulation(config=parse_config(doc, source=source), seed=0).close()


def parse_seeds(text: str) -> tuple[int, ...]:
    """``42``, ``42..51`` (both ends included) or a comma-separated list of those; ValueError naming the bad
    part (a range whose end is below its start, a repeated seed, not a number)."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        first, dots, last = part.partition("..")
        try:
            lo = int(first)
            hi = int(last) if dots else lo
        except ValueError:
            raise ValueError(f'--seeds: invalid seed or range "{part}" (e.g. 42, 42..51 or 1,5,9)') from None
        if hi < lo:
            raise ValueError(f'--seeds: range "{part}" ends before it starts')
        for s in range(lo, hi + 1):
            if s in seeds:
                raise ValueError(f"--seeds: seed {s} given twice")
            seeds.append(s)
    return tuple(seeds)


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One run: a workload under one configuration with one seed (``until``: a scenario's end time, seconds;
    None: its own end, as ``berth simulate``). ``series``: record the series of ``--report-html`` (see
    `berth.sim.compare.series`), a scenario's sampled every ``series`` virtual seconds, a trace's at every
    ``series``-th arrival; None (no ``--report-html``) records nothing."""

    workload: Workload
    config: ConfigSpec
    seed: int
    until: float | None = None
    series: float | None = None


def build_runs(
    workloads: Sequence[Workload],
    configs: Sequence[ConfigSpec],
    seeds: Sequence[int] | None,
    until: float | None = None,
    sample: float | None = None,
) -> list[RunSpec]:
    """Every (workload, config, seed) in that order; CompareError when a config does not apply to a workload
    (a ``policy:`` config on a scenario, a file without a GPU score plugin on a trace). ``sample``: the runs
    record the series of ``--report-html``, a scenario's every ``sample`` virtual seconds, a trace's at every
    k-th arrival (k for at most about `MAX_POINTS` points on the first seed's arrivals); None: no series."""
    labels = [c.label for c in configs]
    for label in labels:
        if labels.count(label) > 1:
            raise CompareError(f"--config {label}: given twice")
    runs: list[RunSpec] = []
    for w in workloads:
        default = TRACE_SEED if isinstance(w, TraceWorkload) else SCENARIO_SEED
        series = sample
        if sample is not None and isinstance(w, TraceWorkload):
            series = stride(w.arrivals((seeds or (default,))[0]))
        for c in configs:
            if isinstance(w, ScenarioWorkload) and c.policy_only:
                raise CompareError(
                    f'--config {POLICY_PREFIX}{c.label}: a policy applies to trace workloads only ("{w.label}" '
                    "is a scenario; give a KubeSchedulerConfiguration file)"
                )
            if isinstance(w, TraceWorkload):
                c.for_trace()
            runs.extend(RunSpec(w, c, s, until, series) for s in (seeds or (default,)))
    return runs


__all__ = [
    "DEFAULT_CONFIG",
    "ConfigSpec",
    "RunSpec",
    "build_runs",
    "parse_config_arg",
    "parse_seeds",
]
