"""``MigrationControllerArgs``: the configuration of the migration controller, as Koordinator's
``koord-descheduler`` reads it (``pkg/descheduler/apis/config/v1alpha2``, same field names and defaults), and
Koordinator's arithmetic for per-workload limits given as a number or a percentage.

Defaults (Koordinator's): ``maxMigratingPerNode: 2``, ``defaultJobMode: ReservationFirst``,
``defaultJobTTL: 5m``, ``evictQPS: 10``, ``evictBurst: 1``, ``evictionPolicy: Eviction``, one object limiter
``workload`` over ``5m``, arbitration every ``500ms``; ``maxMigratingPerWorkload`` and
``maxUnavailablePerWorkload`` unset, which means 1 for up to 3 replicas, 2 for 4 to 10 and 10% above
(`max_unavailable`). Berth's differences: ``schedulerNames`` defaults to both of Berth's profiles
(``koord-scheduler`` and ``default-scheduler``, which both schedule Reservations); ``evictionPolicy`` knows
``Eviction`` and ``Delete`` (not ``SoftEviction``); ``nodeFit: true`` is refused (a ReservationFirst job's
Reservation is its node-fit check); ``arbitrationArgs.enabled: false`` lets jobs skip the arbitration.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from berth.api.checks import format_value
from berth.api.labels import LabelSelectorError, Selector, compile_label_selector
from berth.api.podmigrationjob import MODE_EVICT_DIRECTLY, MODE_RESERVATION_FIRST, MODES
from berth.api.wellknown import parse_go_duration

__all__ = [
    "EVICTION_GATES",
    "EVICTION_POLICIES",
    "EVICTION_POLICY_DELETE",
    "EVICTION_POLICY_EVICTION",
    "LIMITER_NAMESPACE",
    "LIMITER_WORKLOAD",
    "MigrationArgsError",
    "MigrationControllerArgs",
    "ObjectLimiter",
    "PriorityThreshold",
    "max_unavailable",
    "parse_migration_controller_args",
    "scaled_value",
]

EVICTION_POLICY_EVICTION = "Eviction"
EVICTION_POLICY_DELETE = "Delete"
EVICTION_POLICIES = (EVICTION_POLICY_EVICTION, EVICTION_POLICY_DELETE)

LIMITER_WORKLOAD = "workload"
LIMITER_NAMESPACE = "namespace"
_LIMITER_TYPES = (LIMITER_WORKLOAD, LIMITER_NAMESPACE)

EVICTION_GATES = (
    "MaxUnavailablePerWorkload",
    "MaxMigratingPerWorkload",
    "MaxMigratingPerNode",
    "MaxMigratingPerNamespace",
    "MaxMigratingGlobally",
    "ExpectedReplicas",
    "PVC",
    "BarePods",
    "LocalStorage",
    "SystemCritical",
    "PriorityThreshold",
    "LabelSelector",
    "Namespaces",
    "NodeFit",
)
"""The gates ``skipEvictionGates`` may name (Koordinator's EvictionGate values)."""

IntOrPercent = int | str


class MigrationArgsError(ValueError):
    """Bad MigrationControllerArgs: names where they came from, the field and the value."""

    def __init__(self, where: str, path: str, value: object, message: str) -> None:
        """Record `where` (e.g. a profile and plugin), the field `path`, the bad `value` and the `message`."""
        self.where = where
        self.path = path
        self.value = value
        self.message = message
        super().__init__(f"{where}: {path}: {message}" if where else f"{path}: {message}")


@dataclass(frozen=True, slots=True)
class PriorityThreshold:
    """Only pods with a priority below this may be migrated: a PriorityClass `name` or a `value`."""

    name: str = ""
    value: int | None = None


@dataclass(frozen=True, slots=True)
class ObjectLimiter:
    """At most `max_migrating` evictions (default: ``maxMigratingPerWorkload``) per `duration` seconds for one
    object (a workload, or a namespace), with bursts of `burst` (0 means 1)."""

    duration: float
    max_migrating: IntOrPercent | None = None
    burst: int = 0


def _default_limiters() -> Mapping[str, ObjectLimiter]:
    return MappingProxyType({LIMITER_WORKLOAD: ObjectLimiter(300.0)})


@dataclass(frozen=True, slots=True)
class MigrationControllerArgs:
    """The migration controller's configuration (Koordinator's MigrationControllerArgs; durations in seconds)."""

    dry_run: bool = False
    max_concurrent_reconciles: int = 1
    evict_failed_bare_pods: bool = False
    evict_all_bare_pods: bool = False
    evict_local_storage_pods: bool = False
    evict_system_critical_pods: bool = False
    ignore_pvc_pods: bool = False
    priority_threshold: PriorityThreshold | None = None
    label_selector: Selector | None = None
    namespaces_include: tuple[str, ...] = ()
    namespaces_exclude: tuple[str, ...] = ()
    node_selector: Selector | None = None
    skip_eviction_gates: frozenset[str] = frozenset()
    max_migrating_globally: int | None = None
    max_migrating_per_node: int | None = 2
    max_migrating_per_namespace: int | None = None
    max_migrating_per_workload: IntOrPercent | None = None
    max_unavailable_per_workload: IntOrPercent | None = None
    skip_check_expected_replicas: bool = False
    object_limiters: Mapping[str, ObjectLimiter] = field(default_factory=_default_limiters)
    default_job_mode: str = MODE_RESERVATION_FIRST
    default_job_ttl: float = 300.0
    scheduler_names: tuple[str, ...] = ("koord-scheduler", "default-scheduler")
    evict_qps: float = 10.0
    evict_burst: int = 1
    eviction_policy: str = EVICTION_POLICY_EVICTION
    default_delete_options: Mapping[str, Any] | None = None
    arbitration_enabled: bool = True
    arbitration_interval: float = 0.5

    def skips(self, gate: str) -> bool:
        """Whether ``skipEvictionGates`` names `gate`."""
        return gate in self.skip_eviction_gates


# --- IntOrString arithmetic (intstr.GetScaledValueFromIntOrPercent, util.GetMaxUnavailable) -------------------

_PERCENT_RE = re.compile(r"([0-9]+)%")


def scaled_value(value: IntOrPercent, total: int, round_up: bool) -> int:
    """An int as is, or a percentage ``"N%"`` of `total` rounded down (or up); ValueError for anything else."""
    if isinstance(value, bool):
        raise ValueError(f"invalid value for IntOrString: invalid type: {format_value(value)}")
    if isinstance(value, int):
        return value
    m = _PERCENT_RE.fullmatch(value) if isinstance(value, str) else None
    if m is None:
        raise ValueError(
            f"invalid value for IntOrString: invalid type: string is not a percentage: {value!r}"
        )
    scaled = int(m.group(1)) * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def max_unavailable(replicas: int, value: IntOrPercent | None) -> int:
    """Koordinator's GetMaxUnavailable (and GetMaxMigrating): `value` of `replicas` (at least 1 when given), else
    1 for up to 3 replicas, 2 for 4 to 10 and 10% above; never more than `replicas`."""
    result = 0
    if value is not None:
        result = scaled_value(value, replicas, False)
        if result == 0:
            result = 1
    if result == 0:
        if replicas > 10:
            result = scaled_value("10%", replicas, False)
        elif replicas >= 4:
            result = 2
        else:
            result = 1
    return min(result, replicas)


# --- parsing -----------------------------------------------------------------------------------------------


class _Reader:
    """Reads one mapping of args, refusing unknown fields and wrongly typed values."""

    def __init__(self, where: str, prefix: str, raw: object) -> None:
        self.where = where
        self.prefix = prefix
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise MigrationArgsError(
                where, prefix or "args", raw, f"Invalid value: {format_value(raw)}: must be an object"
            )
        self.raw: Mapping[str, Any] = raw
        self.used: set[str] = set()

    def path(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def fail(self, key: str, value: object, detail: str) -> MigrationArgsError:
        return MigrationArgsError(
            self.where, self.path(key), value, f"Invalid value: {format_value(value)}: {detail}"
        )

    def get(self, key: str) -> Any:
        self.used.add(key)
        return self.raw.get(key)

    def boolean(self, key: str, default: bool) -> bool:
        v = self.get(key)
        if v is None:
            return default
        if not isinstance(v, bool):
            raise self.fail(key, v, "must be a boolean")
        return v

    def integer(
        self, key: str, default: int | None, *, minimum: int | None = None, detail: str = ""
    ) -> int | None:
        v = self.get(key)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(key, v, "must be an integer")
        if minimum is not None and v < minimum:
            raise self.fail(key, v, detail or f"must be greater than or equal to {minimum}")
        return v

    def string(self, key: str, default: str) -> str:
        v = self.get(key)
        if v is None:
            return default
        if not isinstance(v, str):
            raise self.fail(key, v, "must be a string")
        return v

    def strings(self, key: str) -> tuple[str, ...]:
        v = self.get(key)
        if v is None:
            return ()
        if not isinstance(v, Sequence) or isinstance(v, str):
            raise self.fail(key, v, "must be a list of strings")
        for i, item in enumerate(v):
            if not isinstance(item, str):
                raise MigrationArgsError(
                    self.where,
                    f"{self.path(key)}[{i}]",
                    item,
                    f"Invalid value: {format_value(item)}: must be a string",
                )
        return tuple(v)

    def duration(self, key: str, default: float | None) -> float | None:
        v = self.get(key)
        if v is None:
            return default
        if not isinstance(v, str):
            raise self.fail(key, v, 'must be a duration string (e.g. "5m")')
        try:
            seconds = parse_go_duration(v)
        except ValueError as e:
            raise self.fail(key, v, str(e)) from None
        if seconds < 0:
            raise self.fail(key, v, f"{key} should be positive or zero")
        return seconds

    def int_or_percent(self, key: str) -> IntOrPercent | None:
        v = self.get(key)
        if v is None:
            return None
        try:
            number = scaled_value(v, 100, True)
        except ValueError as e:
            raise self.fail(key, v, f"{key} is invalid, err: {e}") from None
        if number < 0:
            raise self.fail(key, v, f"{key} should be greater or equal 0")
        return v  # type: ignore[no-any-return]

    def finish(self) -> None:
        for key in self.raw:
            if key not in self.used:
                raise MigrationArgsError(
                    self.where, self.path(str(key)), key, f'unknown field "{self.path(str(key))}"'
                )


def _selector(r: _Reader, key: str) -> Selector | None:
    raw = r.get(key)
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise r.fail(key, raw, "must be a label selector object")
    try:
        selector = compile_label_selector(raw)
    except LabelSelectorError as e:
        path = f"{r.path(key)}.{e.path}" if e.path else r.path(key)
        raise MigrationArgsError(
            r.where, path, e.value, f"Invalid value: {format_value(e.value)}: {e.message}"
        ) from None
    return None if selector.is_everything() else selector


def _node_selector(r: _Reader, key: str) -> Selector | None:
    from berth.api.labels import parse_selector

    raw = r.string(key, "")
    if not raw:
        return None
    try:
        return parse_selector(raw)
    except LabelSelectorError as e:
        raise r.fail(key, raw, str(e)) from None


def _priority_threshold(r: _Reader) -> PriorityThreshold | None:
    raw = r.get("priorityThreshold")
    if raw is None:
        return None
    t = _Reader(r.where, r.path("priorityThreshold"), raw)
    name = t.string("name", "")
    value = t.integer("value", None)
    t.finish()
    if name and value is not None:
        raise r.fail("priorityThreshold", raw, "only one of priorityThreshold fields can be set")
    if not name and value is None:
        return None
    return PriorityThreshold(name, value)


def _namespaces(r: _Reader) -> tuple[tuple[str, ...], tuple[str, ...]]:
    raw = r.get("namespaces")
    if raw is None:
        return (), ()
    n = _Reader(r.where, r.path("namespaces"), raw)
    include, exclude = n.strings("include"), n.strings("exclude")
    n.finish()
    if include and exclude:
        raise r.fail("namespaces", raw, "only one of Include/Exclude namespaces can be set")
    return include, exclude


def _object_limiters(r: _Reader) -> Mapping[str, ObjectLimiter]:
    raw = r.get("objectLimiters")
    if raw is None or raw == {}:
        return _default_limiters()
    if not isinstance(raw, Mapping):
        raise r.fail("objectLimiters", raw, "must be an object")
    out: dict[str, ObjectLimiter] = {}
    for kind, body in raw.items():
        if kind not in _LIMITER_TYPES:
            raise MigrationArgsError(
                r.where,
                f"{r.path('objectLimiters')}.{kind}",
                kind,
                f'Unsupported value: {format_value(kind)}: supported values: "{LIMITER_WORKLOAD}", "{LIMITER_NAMESPACE}"',
            )
        lr = _Reader(r.where, f"{r.path('objectLimiters')}.{kind}", body)
        duration = lr.duration("duration", 0.0)
        max_migrating = lr.int_or_percent("maxMigrating")
        burst = lr.integer("burst", 0, minimum=0)
        lr.finish()
        out[str(kind)] = ObjectLimiter(duration or 0.0, max_migrating, burst or 0)
    return MappingProxyType(out)


_DELETE_OPTION_FIELDS = (
    "apiVersion",
    "kind",
    "gracePeriodSeconds",
    "preconditions",
    "orphanDependents",
    "propagationPolicy",
    "dryRun",
)


def _delete_options(r: _Reader) -> Mapping[str, Any] | None:
    raw = r.get("defaultDeleteOptions")
    if raw is None:
        return None
    d = _Reader(r.where, r.path("defaultDeleteOptions"), raw)
    d.integer("gracePeriodSeconds", None, minimum=0)
    d.string("propagationPolicy", "")
    d.boolean("orphanDependents", False)
    d.strings("dryRun")
    d.string("apiVersion", "")
    d.string("kind", "")
    d.get("preconditions")
    d.finish()
    return MappingProxyType(dict(raw))


def _evict_qps(r: _Reader) -> float:
    raw = r.get("evictQPS")
    if raw is None:
        return 10.0
    if isinstance(raw, bool):
        raise r.fail("evictQPS", raw, "must be a number or a numeric string")
    try:
        qps = float(raw)
    except (TypeError, ValueError):
        raise r.fail("evictQPS", raw, "must be a number or a numeric string") from None
    if not qps > 0:
        raise r.fail("evictQPS", raw, "evictQPS must be greater than 0")
    return qps


def parse_migration_controller_args(raw: Mapping[str, Any], where: str) -> MigrationControllerArgs:
    """MigrationControllerArgs from their wire form (camelCase keys, as in a DeschedulerConfiguration's
    ``pluginConfig``), defaulted and validated as Koordinator does; `where` prefixes every error (e.g.
    ``profile "p": plugin "MigrationController"``). Raises MigrationArgsError (a ValueError) naming the field
    and the value; unknown fields are refused."""
    r = _Reader(where, "", raw)
    kind = r.string("kind", "MigrationControllerArgs")
    if kind != "MigrationControllerArgs":
        raise r.fail("kind", kind, 'must be "MigrationControllerArgs"')
    r.string("apiVersion", "")
    gates = r.strings("skipEvictionGates")
    for i, gate in enumerate(gates):
        if gate not in EVICTION_GATES:
            raise MigrationArgsError(
                where,
                f"skipEvictionGates[{i}]",
                gate,
                f"Invalid value: {format_value(gate)}: unknown eviction gate",
            )
    if r.boolean("nodeFit", False):
        raise r.fail(
            "nodeFit",
            True,
            "not supported by Berth's MigrationController (a ReservationFirst job's Reservation is its node-fit check)",
        )
    mode = r.string("defaultJobMode", MODE_RESERVATION_FIRST)
    if mode not in MODES:
        raise r.fail(
            "defaultJobMode",
            mode,
            f"defaultJobMode must be {MODE_RESERVATION_FIRST} or {MODE_EVICT_DIRECTLY}",
        )
    policy = r.string("evictionPolicy", EVICTION_POLICY_EVICTION)
    if policy not in EVICTION_POLICIES:
        raise MigrationArgsError(
            where,
            "evictionPolicy",
            policy,
            f'Unsupported value: {format_value(policy)}: supported values: "{EVICTION_POLICY_EVICTION}", '
            f'"{EVICTION_POLICY_DELETE}"',
        )
    arbitration = _Reader(where, "arbitrationArgs", r.get("arbitrationArgs"))
    arbitration_enabled = arbitration.boolean("enabled", True)
    interval = arbitration.duration("interval", 0.5)
    arbitration.finish()
    include, exclude = _namespaces(r)
    ge0 = {"minimum": 0}
    args = MigrationControllerArgs(
        dry_run=r.boolean("dryRun", False),
        max_concurrent_reconciles=r.integer(
            "maxConcurrentReconciles",
            1,
            minimum=1,
            detail="maxConcurrentReconciles should be greater than or equal to 1",
        )
        or 1,
        evict_failed_bare_pods=r.boolean("evictFailedBarePods", False),
        evict_all_bare_pods=r.boolean("evictAllBarePods", False),
        evict_local_storage_pods=r.boolean("evictLocalStoragePods", False),
        evict_system_critical_pods=r.boolean("evictSystemCriticalPods", False),
        ignore_pvc_pods=r.boolean("ignorePvcPods", False),
        priority_threshold=_priority_threshold(r),
        label_selector=_selector(r, "labelSelector"),
        namespaces_include=include,
        namespaces_exclude=exclude,
        node_selector=_node_selector(r, "nodeSelector"),
        skip_eviction_gates=frozenset(gates),
        max_migrating_globally=r.integer(
            "maxMigratingGlobally", None, **ge0, detail="maxMigratingGlobally should be greater or equal 0"
        ),
        max_migrating_per_node=r.integer(
            "maxMigratingPerNode", 2, **ge0, detail="maxMigratingPerNode should be greater or equal 0"
        ),
        max_migrating_per_namespace=r.integer(
            "maxMigratingPerNamespace",
            None,
            **ge0,
            detail="maxMigratingPerNamespace should be greater or equal 0",
        ),
        max_migrating_per_workload=r.int_or_percent("maxMigratingPerWorkload"),
        max_unavailable_per_workload=r.int_or_percent("maxUnavailablePerWorkload"),
        skip_check_expected_replicas=r.boolean("skipCheckExpectedReplicas", False),
        object_limiters=_object_limiters(r),
        default_job_mode=mode,
        default_job_ttl=r.duration("defaultJobTTL", 300.0) or 0.0,
        scheduler_names=r.strings("schedulerNames") or ("koord-scheduler", "default-scheduler"),
        evict_qps=_evict_qps(r),
        evict_burst=r.integer("evictBurst", 1, minimum=1, detail="evictBurst must be greater than 0") or 1,
        eviction_policy=policy,
        default_delete_options=_delete_options(r),
        arbitration_enabled=arbitration_enabled,
        arbitration_interval=interval if interval is not None else 0.5,
    )
    r.used.add("arbitrationArgs")
    r.finish()
    return args
