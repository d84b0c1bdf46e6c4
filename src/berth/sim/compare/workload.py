"""The WORKLOAD arguments of ``berth compare``: scenario files and folders (as ``berth simulate`` reads them) or
trace specs (``openb:DIR?pod-list=default&inflation=1.3&nodes=gpu``), each checked completely before any run.

A scenario workload is loaded here, once, with strict validation (unknown fields refused, as ``berth simulate``
does by default); its manifests travel with each run, so a remote worker needs no copy of the files. A trace
workload is its folder and options; each run reads the folder (a remote worker needs it at the same path).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl

from berth.api.errors import InvalidObjectError
from berth.api.manifest import Manifest, ManifestError, load_manifests
from berth.sim.scenario import Plan, build_plan
from berth.sim.strict import StrictDecodingError, Validation, strict_check
from berth.sim.traces.command import OpenbOptions, check_options
from berth.sim.traces.openb import TraceError, load_nodes, load_pods

TRACE_KINDS = ("openb",)
TRACE_OPTIONS = ("pod-list", "inflation", "nodes")


class CompareError(ValueError):
    """Bad input to ``berth compare``: one line naming the value; nothing has run."""


@dataclass(frozen=True, slots=True)
class ScenarioWorkload:
    """Manifests and Scenarios run by the simulation engine (``berth simulate``)."""

    label: str
    manifests: tuple[Manifest, ...]

    kind = "scenario"


@dataclass(frozen=True, slots=True)
class TraceWorkload:
    """The openb trace replayed the FGD paper's way (``berth trace openb``)."""

    label: str
    folder: Path
    pod_list: str = "default"
    inflation: float = 1.3
    nodes: str = "gpu"

    kind = "trace"

    def options(self, policy: str, seed: int) -> OpenbOptions:
        """The ``berth trace openb`` options of one run."""
        return OpenbOptions(self.folder, self.pod_list, self.nodes, self.inflation, seed, policy)

    def arrivals(self, seed: int) -> int:
        """The number of pods a replay with ``seed`` places or fails (the paper's workload of the trace)."""
        from berth.sim.traces.openb import replay_workload
        from berth.sim.traces.replay import cluster_of

        nodes = load_nodes(self.folder, self.nodes)
        pods = load_pods(self.folder, self.pod_list)
        return len(replay_workload(pods, cluster_of(nodes).gpu_capacity_milli, self.inflation, seed))


Workload = ScenarioWorkload | TraceWorkload


def parse_workload(arg: str) -> Workload:
    """The workload named by ``arg``, loaded and checked; CompareError naming the argument otherwise."""
    kind, sep, rest = arg.partition(":")
    if sep and kind in TRACE_KINDS:
        return _trace(arg, rest)
    return _scenario(arg)


def _trace(arg: str, rest: str) -> TraceWorkload:
    folder, _, query = rest.partition("?")
    if not folder:
        raise CompareError(f'workload "{arg}": no trace folder (openb:DIR)')
    values: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=False):
        if key not in TRACE_OPTIONS:
            raise CompareError(
                f'workload "{arg}": unknown option "{key}" (known: {", ".join(TRACE_OPTIONS)})'
            )
        values[key] = value
    try:
        inflation = float(values.get("inflation", "1.3"))
    except ValueError:
        raise CompareError(f'workload "{arg}": inflation: not a number "{values["inflation"]}"') from None
    w = TraceWorkload(
        arg, Path(folder), values.get("pod-list", "default"), inflation, values.get("nodes", "gpu")
    )
    try:
        check_options(w.options("FGD", 0))
        load_nodes(w.folder, w.nodes)  # every row checked now: a bad trace fails before any run
        load_pods(w.folder, w.pod_list)
    except TraceError as e:
        raise CompareError(f'workload "{arg}": {e}') from None
    return w


def _scenario(arg: str) -> ScenarioWorkload:
    path = Path(arg)
    if arg == "-" or not path.exists():
        raise CompareError(f'workload "{arg}": no such file or directory')
    try:
        manifests = load_manifests([arg], check=strict_check(Validation.strict, lambda _: None))
        workload = ScenarioWorkload(arg, tuple(manifests))
        plan = scenario_plan(workload)
    except StrictDecodingError as e:
        raise CompareError(f'workload "{arg}": {e.lines[0]}') from None
    except (ManifestError, InvalidObjectError) as e:
        raise CompareError(f'workload "{arg}": {e}') from None
    uids: set[str] = set()
    for step in plan.steps:
        for obj in step.create:
            meta = obj.get("metadata") or {}
            uid = meta.get("uid")
            if uid and uid in uids:
                who = f'{obj.get("kind")} "{meta.get("name")}"'
                raise CompareError(f'workload "{arg}": {who}: metadata.uid: Duplicate value: "{uid}"')
            if uid:
                uids.add(str(uid))
    _check_initial(arg, plan)
    return workload


def _check_initial(arg: str, plan: Plan) -> None:
    """The initial objects must all be admitted (as ``berth simulate`` requires): tried once on an empty
    cluster, whose admission does not depend on the scheduler configuration."""
    from berth.sim.engine import Simulation
    from berth.sim.initial import create_initial_objects

    sim = Simulation(seed=0)
    try:
        refused, _ = create_initial_objects(sim.store, plan)
    finally:
        sim.close()
    if refused:
        raise CompareError(f'workload "{arg}": {refused[0]}')


def scenario_plan(workload: ScenarioWorkload) -> Plan:
    """A fresh plan of the workload's manifests (its objects copied: a run may not change another's input)."""
    import copy

    return build_plan([Manifest(copy.deepcopy(m.obj), m.source) for m in workload.manifests])


__all__ = [
    "CompareError",
    "ScenarioWorkload",
    "TraceWorkload",
    "Workload",
    "parse_workload",
    "scenario_plan",
]
