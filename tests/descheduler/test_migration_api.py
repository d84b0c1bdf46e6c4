"""The PodMigrationJob kind (validation, kubectl table) and MigrationControllerArgs (parsing, defaults,
Koordinator's per-workload arithmetic)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from berth.api.errors import InvalidObjectError
from berth.api.kinds import kind_by_plural_or_short, lookup_kind
from berth.api.printers import server_columns
from berth.api.validation import validate_object
from berth.descheduler.migration import (
    MigrationArgsError,
    MigrationControllerArgs,
    ObjectLimiter,
    PriorityThreshold,
    max_unavailable,
    parse_migration_controller_args,
)
from berth.descheduler.migration.controller import TokenBucket


def pmj(spec: dict[str, Any] | None, status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "PodMigrationJob",
        "metadata": {"name": "m1"},
    }
    if spec is not None:
        obj["spec"] = spec
    if status is not None:
        obj["status"] = status
    return obj


REF = {"namespace": "default", "name": "p"}


# ----- validation ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (pmj(None), "spec.podRef: Required value"),
        (pmj({}), "spec.podRef: Required value"),
        (
            pmj({"podRef": "p"}),
            'spec.podRef: Invalid value: "string": spec.podRef in body must be of type object: "string"',
        ),
        (
            pmj({"podRef": {"name": 3}}),
            'spec.podRef.name: Invalid value: "integer": spec.podRef.name in body must be of type string: "integer"',
        ),
        (
            pmj({"podRef": REF, "ttl": "5"}),
            'spec.ttl: Invalid value: "5": time: missing unit in duration "5"',
        ),
        (
            pmj({"podRef": REF, "ttl": "5x"}),
            'spec.ttl: Invalid value: "5x": time: unknown unit "x" in duration "5x"',
        ),
        (
            pmj({"podRef": REF, "ttl": "-5m"}),
            'spec.ttl: Invalid value: "-5m": must be greater than or equal to 0',
        ),
        (
            pmj({"podRef": REF, "ttl": 300}),
            'spec.ttl: Invalid value: "integer": spec.ttl in body must be of type string: "integer"',
        ),
        (
            pmj({"podRef": REF, "paused": "yes"}),
            'spec.paused: Invalid value: "string": spec.paused in body must be of type boolean: "string"',
        ),
        (
            pmj({"podRef": REF, "mode": "Teleport"}),
            'spec.mode: Unsupported value: "Teleport": supported values: "ReservationFirst", "EvictDirectly"',
        ),
        (
            pmj({"podRef": REF, "reservationOptions": {"template": []}}),
            'spec.reservationOptions.template: Invalid value: "array": spec.reservationOptions.template in body '
            'must be of type object: "array"',
        ),
        (
            pmj({"podRef": REF, "deleteOptions": {"gracePeriodSeconds": -1}}),
            "spec.deleteOptions.gracePeriodSeconds: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            pmj({"podRef": REF}, {"phase": "Done"}),
            'status.phase: Unsupported value: "Done": supported values: "Pending", "Running", "Succeeded", '
            '"Failed", "Aborted"',
        ),
        (
            pmj({"podRef": REF}, {"conditions": [{"type": "Eviction"}]}),
            "status.conditions[0].status: Required value",
        ),
    ],
)
def test_bad_jobs_are_refused_naming_the_field_and_value(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidObjectError) as e:
        validate_object(obj)
    assert str(e.value) == f'PodMigrationJob "m1": {message}'


def test_a_full_job_is_valid() -> None:
    validate_object(
        pmj(
            {
                "podRef": {**REF, "uid": "u"},
                "paused": True,
                "ttl": "1h",
                "mode": "EvictDirectly",
                "reservationOptions": {
                    "reservationRef": {"name": "r"},
                    "template": {"metadata": {"name": "r"}},
                    "preemptionOptions": {},
                },
                "deleteOptions": {"gracePeriodSeconds": 0, "propagationPolicy": "Background"},
            },
            {
                "phase": "Running",
                "status": "Eviction",
                "conditions": [
                    {"type": "Eviction", "status": "False", "reason": "Evicting", "lastProbeTime": None}
                ],
                "podRef": {"name": "q"},
            },
        )
    )


# ----- kubectl get pmj ---------------------------------------------------------------------------------------


def test_the_kubectl_table_has_koordinators_printer_columns() -> None:
    info = kind_by_plural_or_short("pmj")
    assert info is lookup_kind("scheduling.koordinator.sh/v1alpha1", "PodMigrationJob")
    assert (info.namespaced, info.has_status) == (False, True)
    columns = server_columns(info)
    assert [c.header for c in columns] == [
        "NAME",
        "PHASE",
        "STATUS",
        "AGE",
        "NODE",
        "RESERVATION",
        "PODNAMESPACE",
        "POD",
        "NEWPOD",
        "TTL",
    ]
    now = datetime(2024, 1, 1, 0, 5, tzinfo=UTC)
    done = {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "PodMigrationJob",
        "metadata": {"name": "m1", "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {
            "podRef": {"namespace": "default", "name": "web-1"},
            "ttl": "5m0s",
            "reservationOptions": {"reservationRef": {"name": "r-1"}},
        },
        "status": {
            "phase": "Succeeded",
            "status": "Complete",
            "nodeName": "node-b",
            "podRef": {"name": "web-2"},
        },
    }
    fresh = {**done, "metadata": {"name": "m2", "creationTimestamp": "2024-01-01T00:04:30Z"}, "status": {}}
    assert [c.text(done, now) for c in columns] == [
        "m1",
        "Succeeded",
        "Complete",
        "5m",
        "node-b",
        "r-1",
        "default",
        "web-1",
        "web-2",
        "5m0s",
    ]
    assert [c.text(fresh, now) for c in columns] == [
        "m2",
        "",
        "",
        "30s",
        "",
        "r-1",
        "default",
        "web-1",
        "",
        "5m0s",
    ]


# ----- MigrationControllerArgs -------------------------------------------------------------------------------


def test_defaults_are_koordinators() -> None:
    args = parse_migration_controller_args({}, "MigrationController")
    assert args == MigrationControllerArgs()
    assert args.max_migrating_per_node == 2
    assert args.max_migrating_per_workload is None
    assert args.max_unavailable_per_workload is None
    assert args.default_job_mode == "ReservationFirst"
    assert args.default_job_ttl == 300.0
    assert args.evict_qps == 10.0
    assert args.evict_burst == 1
    assert args.eviction_policy == "Eviction"
    assert dict(args.object_limiters) == {"workload": ObjectLimiter(300.0)}
    assert args.arbitration_interval == 0.5
    assert args.scheduler_names == ("koord-scheduler", "default-scheduler")


def test_every_field_is_read() -> None:
    args = parse_migration_controller_args(
        {
            "apiVersion": "descheduler/v1alpha2",
            "kind": "MigrationControllerArgs",
            "dryRun": True,
            "maxConcurrentReconciles": 2,
            "evictFailedBarePods": True,
            "evictAllBarePods": True,
            "evictLocalStoragePods": True,
            "evictSystemCriticalPods": True,
            "ignorePvcPods": True,
            "priorityThreshold": {"value": 1000},
            "labelSelector": {"matchLabels": {"app": "web"}},
            "namespaces": {"exclude": ["kube-system"]},
            "nodeFit": False,
            "nodeSelector": "pool=general",
            "skipEvictionGates": ["PVC", "NodeFit"],
            "maxMigratingGlobally": 10,
            "maxMigratingPerNode": 3,
            "maxMigratingPerNamespace": 4,
            "maxMigratingPerWorkload": "20%",
            "maxUnavailablePerWorkload": 2,
            "skipCheckExpectedReplicas": True,
            "objectLimiters": {"workload": {"duration": "10m", "maxMigrating": 3, "burst": 2}},
            "defaultJobMode": "EvictDirectly",
            "defaultJobTTL": "30m",
            "schedulerNames": ["koord-scheduler"],
            "evictQPS": "2.5",
            "evictBurst": 3,
            "evictionPolicy": "Delete",
            "defaultDeleteOptions": {"gracePeriodSeconds": 10},
            "arbitrationArgs": {"enabled": False, "interval": "1s"},
        },
        "MigrationController",
    )
    assert args.dry_run is True
    assert args.max_concurrent_reconciles == 2
    assert args.priority_threshold == PriorityThreshold(value=1000)
    assert args.label_selector is not None and args.label_selector.matches({"app": "web"})
    assert args.namespaces_exclude == ("kube-system",)
    assert args.node_selector is not None and args.node_selector.matches({"pool": "general"})
    assert args.skip_eviction_gates == frozenset({"PVC", "NodeFit"})
    assert (args.max_migrating_globally, args.max_migrating_per_node, args.max_migrating_per_namespace) == (
        10,
        3,
        4,
    )
    assert (args.max_migrating_per_workload, args.max_unavailable_per_workload) == ("20%", 2)
    assert args.skip_check_expected_replicas is True
    assert dict(args.object_limiters) == {"workload": ObjectLimiter(600.0, 3, 2)}
    assert (args.default_job_mode, args.default_job_ttl) == ("EvictDirectly", 1800.0)
    assert args.scheduler_names == ("koord-scheduler",)
    assert (args.evict_qps, args.evict_burst, args.eviction_policy) == (2.5, 3, "Delete")
    assert dict(args.default_delete_options or {}) == {"gracePeriodSeconds": 10}
    assert (args.arbitration_enabled, args.arbitration_interval) == (False, 1.0)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"maxMigratingPerNodes": 1}, 'maxMigratingPerNodes: unknown field "maxMigratingPerNodes"'),
        (
            {"arbitrationArgs": {"period": "1s"}},
            'arbitrationArgs.period: unknown field "arbitrationArgs.period"',
        ),
        (
            {"maxMigratingPerNode": -1},
            "maxMigratingPerNode: Invalid value: -1: maxMigratingPerNode should be greater or equal 0",
        ),
        ({"maxMigratingPerNode": "2"}, 'maxMigratingPerNode: Invalid value: "2": must be an integer'),
        (
            {"maxMigratingPerWorkload": "half"},
            'maxMigratingPerWorkload: Invalid value: "half": maxMigratingPerWorkload is invalid, err: invalid value '
            "for IntOrString: invalid type: string is not a percentage: 'half'",
        ),
        (
            {"maxUnavailablePerWorkload": -2},
            "maxUnavailablePerWorkload: Invalid value: -2: maxUnavailablePerWorkload should be greater or equal 0",
        ),
        (
            {"defaultJobMode": "Teleport"},
            'defaultJobMode: Invalid value: "Teleport": defaultJobMode must be ReservationFirst or EvictDirectly',
        ),
        (
            {"defaultJobTTL": "-1m"},
            'defaultJobTTL: Invalid value: "-1m": defaultJobTTL should be positive or zero',
        ),
        ({"defaultJobTTL": "5"}, 'defaultJobTTL: Invalid value: "5": time: missing unit in duration "5"'),
        ({"evictQPS": 0}, "evictQPS: Invalid value: 0: evictQPS must be greater than 0"),
        ({"evictBurst": 0}, "evictBurst: Invalid value: 0: evictBurst must be greater than 0"),
        (
            {"maxConcurrentReconciles": 0},
            "maxConcurrentReconciles: Invalid value: 0: maxConcurrentReconciles should be greater than or equal to 1",
        ),
        (
            {"evictionPolicy": "SoftEviction"},
            'evictionPolicy: Unsupported value: "SoftEviction": supported values: "Eviction", "Delete"',
        ),
        (
            {"skipEvictionGates": ["Everything"]},
            'skipEvictionGates[0]: Invalid value: "Everything": unknown eviction gate',
        ),
        (
            {"namespaces": {"include": ["a"], "exclude": ["b"]}},
            'namespaces: Invalid value: {"exclude": ["b"], "include": ["a"]}: only one of Include/Exclude namespaces '
            "can be set",
        ),
        (
            {"objectLimiters": {"node": {"duration": "1m"}}},
            'objectLimiters.node: Unsupported value: "node": supported values: "workload", "namespace"',
        ),
        (
            {"nodeFit": True},
            "nodeFit: Invalid value: true: not supported by Berth's MigrationController (a ReservationFirst job's "
            "Reservation is its node-fit check)",
        ),
        (
            {"priorityThreshold": {"name": "high", "value": 1}},
            'priorityThreshold: Invalid value: {"name": "high", "value": 1}: only one of priorityThreshold fields '
            "can be set",
        ),
        (
            {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Near"}]}},
            'labelSelector.matchExpressions[0].operator: Invalid value: "Near": "Near" is not a valid label selector '
            "operator",
        ),
    ],
)
def test_bad_args_name_the_field_and_value(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(MigrationArgsError) as e:
        parse_migration_controller_args(raw, 'profile "p": plugin "MigrationController"')
    assert str(e.value) == f'profile "p": plugin "MigrationController": {message}'
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize(
    ("replicas", "value", "expected"),
    [
        (0, None, 0),
        (1, None, 1),
        (3, None, 1),
        (4, None, 2),
        (10, None, 2),
        (11, None, 1),
        (20, None, 2),
        (100, None, 10),
        (5, "50%", 2),
        (3, "10%", 1),
        (2, 5, 2),
        (8, 3, 3),
        (8, "100%", 8),
    ],
)
def test_max_unavailable_is_koordinators(replicas: int, value: int | str | None, expected: int) -> None:
    assert max_unavailable(replicas, value) == expected


def test_token_bucket() -> None:
    bucket = TokenBucket(rate=1 / 150, burst=1, now=0.0)
    assert bucket.allow(0.0)
    assert not bucket.allow(1.0)
    assert bucket.ready_at(1.0) == pytest.approx(150.0)
    assert not bucket.has_token(149.0)
    assert bucket.allow(150.0)
    assert TokenBucket(rate=0.0, burst=1, now=0.0).allow(0.0)
