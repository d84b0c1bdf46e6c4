"""Berth's Scenario format: timed create / delete / patch steps over Kubernetes objects, and node
drain / cordon / uncordon steps.

Plain objects read alongside a Scenario are the initial objects: the cluster at time 0, created in the order
they were read, before any step of a Scenario (one at ``0s`` included).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from berth.api.errors import InvalidObjectError
from berth.api.labels import LabelSelectorError, parse_selector
from berth.api.manifest import Manifest
from berth.api.validation import validate_object
from berth.api.wellknown import parse_duration

SCENARIO_API_VERSION = "berth.dev/v1alpha1"
SCENARIO_KIND = "Scenario"


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """Names an object to delete or patch."""

    api_version: str
    kind: str
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class DrainSpec:
    """A ``drain:`` step: the node, an overall timeout (None: none), force, a grace-period override,
    whether the node should avoid each evicted pod's controller afterwards (PreferAvoidPods), and kubectl's
    ``--ignore-daemonsets``, ``--delete-emptydir-data`` and ``--pod-selector``."""

    node: str
    timeout: float | None = None
    force: bool = False
    grace_period_seconds: int | None = None
    prefer_avoid_pods: bool = False
    ignore_daemonsets: bool = False
    delete_emptydir_data: bool = False
    pod_selector: str = ""


@dataclass(slots=True)
class Step:
    """What happens at one virtual time.

    ``initial`` marks the step of the initial objects (the plain objects read beside Scenarios), whose
    ``sources`` say where each object of ``create`` was read; ``unshared`` says that none of those objects
    shares a dict or list with another object (none was read from a file that may hold a YAML alias).
    """

    at: float
    create: list[dict[str, Any]] = field(default_factory=list)
    delete: list[ObjectRef] = field(default_factory=list)
    patch: list[tuple[ObjectRef, dict[str, Any]]] = field(default_factory=list)
    drain: list[DrainSpec] = field(default_factory=list)
    cordon: list[str] = field(default_factory=list)
    uncordon: list[str] = field(default_factory=list)
    initial: bool = False
    sources: list[str] = field(default_factory=list)
    unshared: bool = False


@dataclass(slots=True)
class Plan:
    """All steps of a run in time order, and the scenario's own end time if it gave one."""

    steps: list[Step]
    until: float | None = None

    @property
    def last_step_at(self) -> float:
        """Time of the last step (0 when there is none)."""
        return max((s.at for s in self.steps), default=0.0)

    @property
    def initial(self) -> Step | None:
        """The step of the initial objects (always the first step), or None when there are none."""
        return self.steps[0] if self.steps and self.steps[0].initial else None


def _is_scenario(obj: Mapping[str, Any]) -> bool:
    return obj.get("apiVersion") == SCENARIO_API_VERSION and obj.get("kind") == SCENARIO_KIND


def _duration(value: Any, name: str, path: str, source: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    try:
        if isinstance(value, str):
            d = parse_duration(value)
            if d >= 0:
                return d
    except ValueError:
        pass
    raise InvalidObjectError(
        SCENARIO_KIND, name, path, value, f'Invalid value: "{value}": not a duration', source=source
    )


def _ref(d: Any, name: str, path: str, source: str) -> ObjectRef:
    if not isinstance(d, Mapping):
        raise InvalidObjectError(
            SCENARIO_KIND, name, path, d, "Invalid value: must be an object", source=source
        )
    for f in ("apiVersion", "kind", "name"):
        if not isinstance(d.get(f), str) or not d.get(f):
            raise InvalidObjectError(
                SCENARIO_KIND, name, f"{path}.{f}", d.get(f), "Required value", source=source
            )
    return ObjectRef(d["apiVersion"], d["kind"], str(d.get("namespace") or ""), d["name"])


_STEP_FIELDS = ("at", "create", "delete", "patch", "drain", "cordon", "uncordon")
_DRAIN_FIELDS = (
    "node",
    "timeout",
    "force",
    "gracePeriodSeconds",
    "preferAvoidPods",
    "ignoreDaemonSets",
    "deleteEmptyDirData",
    "podSelector",
)


def _node_names(value: Any, name: str, path: str, source: str) -> list[str]:
    """``cordon:`` / ``uncordon:`` values: a node name or a list of them."""
    items = value if isinstance(value, list) else [value]
    for j, v in enumerate(items):
        if not isinstance(v, str) or not v:
            where = f"{path}[{j}]" if isinstance(value, list) else path
            raise InvalidObjectError(
                SCENARIO_KIND, name, where, v, "Invalid value: must be a node name", source=source
            )
    return list(items)


def _refuse_unknown(
    value: Mapping[str, Any], fields: Sequence[str], name: str, path: str, source: str
) -> None:
    """Refuse the first field of ``value`` not in ``fields`` (apimachinery's Unsupported value wording)."""
    unknown = sorted(set(value) - set(fields))
    if unknown:
        supported = ", ".join(f'"{f}"' for f in fields)
        raise InvalidObjectError(
            SCENARIO_KIND,
            name,
            f"{path}.{unknown[0]}",
            unknown[0],
            f'Unsupported value: "{unknown[0]}": supported values: {supported}',
            source=source,
        )


def _drain_spec(value: Any, name: str, path: str, source: str) -> DrainSpec:
    """A ``drain:`` value: ``NODE`` or ``{node: NODE, timeout: 5m, force: true, gracePeriodSeconds: 0,
    preferAvoidPods: true, ignoreDaemonSets: true, deleteEmptyDirData: true, podSelector: "app=web"}``."""
    if isinstance(value, str) and value:
        return DrainSpec(value)
    if not isinstance(value, Mapping):
        raise InvalidObjectError(
            SCENARIO_KIND, name, path, value, "Invalid value: must be a node name or an object", source=source
        )
    _refuse_unknown(value, _DRAIN_FIELDS, name, path, source)
    node = value.get("node")
    if not isinstance(node, str) or not node:
        raise InvalidObjectError(SCENARIO_KIND, name, f"{path}.node", node, "Required value", source=source)
    timeout = value.get("timeout")
    force = _flag(value, "force", name, path, source)
    avoid = _flag(value, "preferAvoidPods", name, path, source)
    grace = value.get("gracePeriodSeconds")
    if grace is not None and (not isinstance(grace, int) or isinstance(grace, bool)):
        raise InvalidObjectError(
            SCENARIO_KIND,
            name,
            f"{path}.gracePeriodSeconds",
            grace,
            "Invalid value: must be an integer",
            source=source,
        )
    selector = value.get("podSelector", "")
    if not isinstance(selector, str) or not _valid_selector(selector):
        raise InvalidObjectError(
            SCENARIO_KIND,
            name,
            f"{path}.podSelector",
            selector,
            "Invalid value: must be a valid label selector",
            source=source,
        )
    return DrainSpec(
        node,
        None if timeout is None else _duration(timeout, name, f"{path}.timeout", source),
        force,
        grace,
        avoid,
        _flag(value, "ignoreDaemonSets", name, path, source),
        _flag(value, "deleteEmptyDirData", name, path, source),
        selector,
    )


def _valid_selector(text: str) -> bool:
    """Whether `text` parses as a label selector (``app=web,tier!=db``)."""
    try:
        parse_selector(text)
    except LabelSelectorError:
        return False
    return True


def _flag(value: Mapping[str, Any], field_name: str, name: str, path: str, source: str) -> bool:
    """A boolean field of a step (false when absent)."""
    flag = value.get(field_name, False)
    if not isinstance(flag, bool):
        raise InvalidObjectError(
            SCENARIO_KIND,
            name,
            f"{path}.{field_name}",
            flag,
            "Invalid value: must be a boolean",
            source=source,
        )
    return flag


def _node_steps(st: Mapping[str, Any], step: Step, name: str, path: str, source: str) -> None:
    """Fill a step's drain / cordon / uncordon actions."""
    if st.get("drain") is not None:
        raw = st["drain"]
        if isinstance(raw, list):
            step.drain.extend(_drain_spec(d, name, f"{path}.drain[{j}]", source) for j, d in enumerate(raw))
        else:
            step.drain.append(_drain_spec(raw, name, f"{path}.drain", source))
    if st.get("cordon") is not None:
        step.cordon.extend(_node_names(st["cordon"], name, f"{path}.cordon", source))
    if st.get("uncordon") is not None:
        step.uncordon.extend(_node_names(st["uncordon"], name, f"{path}.uncordon", source))


def _scenario_steps(obj: Mapping[str, Any], source: str) -> tuple[list[Step], float | None]:
    name = str((obj.get("metadata") or {}).get("name", ""))
    spec = obj.get("spec") or {}
    if not isinstance(spec, Mapping):
        raise InvalidObjectError(
            SCENARIO_KIND, name, "spec", spec, "Invalid value: must be an object", source=source
        )
    until = _duration(spec["until"], name, "spec.until", source) if spec.get("until") is not None else None
    raw_steps = spec.get("steps") or []
    if not isinstance(raw_steps, list):
        raise InvalidObjectError(
            SCENARIO_KIND, name, "spec.steps", raw_steps, "Invalid value: must be a list", source=source
        )
    steps: list[Step] = []
    for i, st in enumerate(raw_steps):
        path = f"spec.steps[{i}]"
        if not isinstance(st, Mapping):
            raise InvalidObjectError(
                SCENARIO_KIND, name, path, st, "Invalid value: must be an object", source=source
            )
        if "at" not in st:
            raise InvalidObjectError(SCENARIO_KIND, name, f"{path}.at", None, "Required value", source=source)
        _refuse_unknown(st, _STEP_FIELDS, name, path, source)
        step = Step(_duration(st["at"], name, f"{path}.at", source))
        for j, o in enumerate(st.get("create") or []):
            if not isinstance(o, Mapping):
                raise InvalidObjectError(
                    SCENARIO_KIND,
                    name,
                    f"{path}.create[{j}]",
                    o,
                    "Invalid value: must be an object",
                    source=source,
                )
            o = dict(o)
            validate_object(o, source=source)
            step.create.append(o)
        for j, d in enumerate(st.get("delete") or []):
            step.delete.append(_ref(d, name, f"{path}.delete[{j}]", source))
        for j, p in enumerate(st.get("patch") or []):
            ref = _ref(p, name, f"{path}.patch[{j}]", source)
            body = p.get("patch")
            if not isinstance(body, Mapping):
                raise InvalidObjectError(
                    SCENARIO_KIND, name, f"{path}.patch[{j}].patch", body, "Required value", source=source
                )
            step.patch.append((ref, dict(body)))
        _node_steps(st, step, name, path, source)
        steps.append(step)
    return steps, until


def build_plan(manifests: Sequence[Manifest]) -> Plan:
    """Turn loaded manifests (objects and Scenarios) into a time-ordered Plan: first the initial objects (the
    plain objects, in read order), then the Scenarios' steps in time order."""
    initial = Step(0.0, initial=True, unshared=True)
    steps: list[Step] = []
    until: float | None = None
    for m in manifests:
        if _is_scenario(m.obj):
            sc_steps, sc_until = _scenario_steps(m.obj, m.source)
            steps.extend(sc_steps)
            if sc_until is not None:
                until = sc_until if until is None else max(until, sc_until)
        else:
            initial.create.append(m.obj)
            initial.sources.append(m.source)
            initial.unshared = initial.unshared and not m.shares
    steps.sort(key=lambda s: s.at)  # stable: same-time steps keep their read order
    return Plan([initial, *steps] if initial.create else steps, until)
