"""Which pods may allocate a reservation: owners, taints, unschedulable, ignored, exact-match, affinity.

Every case: node-1 (4 cpu, 8Gi) holds reservation ``r`` (3 cpu, 2Gi, pinned). The 2-cpu pod fits only
when it may use ``r`` (1 cpu is unreserved); otherwise it stays Pending.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from rsv_helpers import EXACT, IGNORED, node, placement, pod, pod_message, reservation, rsv_status, simulate

FITS = ("node-1", "r", None)
NO_CPU = (None, None, "0/1 nodes are available: 1 Insufficient cpu.")
NO_AFFINITY = (None, None, "0/1 nodes are available: node(s) no reservations match reservation affinity.")

RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs-1", "uid": "uid-rs-1"}

LABEL_A = [{"labelSelector": {"matchLabels": {"app": "a"}}}]
TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
TOLERATE = {"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"}

CASES: list[tuple[str, dict[str, Any], dict[str, Any], tuple[str | None, str | None, str | None]]] = [
    # --- owners: object ---
    ("object-name", {"owners": [{"object": {"name": "p"}}]}, {}, FITS),
    ("object-name-ns", {"owners": [{"object": {"name": "p", "namespace": "default"}}]}, {}, FITS),
    ("object-other-name", {"owners": [{"object": {"name": "q"}}]}, {}, NO_CPU),
    ("object-other-ns", {"owners": [{"object": {"name": "p", "namespace": "prod"}}]}, {}, NO_CPU),
    ("object-kind-ignored", {"owners": [{"object": {"name": "p", "kind": "Deployment"}}]}, {}, FITS),
    ("object-apiversion", {"owners": [{"object": {"name": "p", "apiVersion": "v1"}}]}, {}, FITS),
    ("object-apiversion-other", {"owners": [{"object": {"name": "p", "apiVersion": "v2"}}]}, {}, NO_CPU),
    # --- owners: controller ---
    (
        "controller",
        {"owners": [{"controller": dict(RS)}]},
        {"owner_refs": [{**RS, "controller": True}]},
        FITS,
    ),
    (
        "controller-not-controller-ref",
        {"owners": [{"controller": {**RS, "controller": True}}]},
        {"owner_refs": [dict(RS)]},
        NO_CPU,
    ),
    (
        "controller-flag-false-matches-false",
        {"owners": [{"controller": {**RS, "controller": False}}]},
        {"owner_refs": [{**RS, "controller": False}]},
        FITS,
    ),
    (
        "controller-other-name",
        {"owners": [{"controller": {**RS, "name": "rs-2"}}]},
        {"owner_refs": [{**RS, "controller": True}]},
        NO_CPU,
    ),
    (
        "controller-namespace",
        {"owners": [{"controller": {**RS, "namespace": "default"}}]},
        {"owner_refs": [dict(RS)]},
        FITS,
    ),
    (
        "controller-other-namespace",
        {"owners": [{"controller": {**RS, "namespace": "prod"}}]},
        {"owner_refs": [dict(RS)]},
        NO_CPU,
    ),
    ("controller-pod-without-owner", {"owners": [{"controller": dict(RS)}]}, {}, NO_CPU),
    # --- owners: labelSelector, ANDed inside an owner, ORed across ---
    ("labels", {"owners": LABEL_A}, {"labels": {"app": "a"}}, FITS),
    ("labels-other", {"owners": LABEL_A}, {"labels": {"app": "b"}}, NO_CPU),
    (
        "labels-expression",
        {
            "owners": [
                {
                    "labelSelector": {
                        "matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]
                    }
                }
            ]
        },
        {"labels": {"app": "b"}},
        FITS,
    ),
    (
        "labels-notin",
        {
            "owners": [
                {
                    "labelSelector": {
                        "matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["b"]}]
                    }
                }
            ]
        },
        {"labels": {"app": "b"}},
        NO_CPU,
    ),
    (
        "and-inside-owner-both",
        {"owners": [{"object": {"name": "p"}, "labelSelector": {"matchLabels": {"app": "a"}}}]},
        {"labels": {"app": "a"}},
        FITS,
    ),
    (
        "and-inside-owner-one",
        {"owners": [{"object": {"name": "p"}, "labelSelector": {"matchLabels": {"app": "a"}}}]},
        {"labels": {"app": "b"}},
        NO_CPU,
    ),
    (
        "or-across-owners",
        {"owners": [{"object": {"name": "q"}}, {"labelSelector": {"matchLabels": {"app": "a"}}}]},
        {"labels": {"app": "a"}},
        FITS,
    ),
    # --- taints ---
    ("taint-untolerated", {"owners": LABEL_A, "taints": [TAINT]}, {"labels": {"app": "a"}}, NO_CPU),
    (
        "taint-pod-toleration",
        {"owners": LABEL_A, "taints": [TAINT]},
        {"labels": {"app": "a"}, "tolerations": [TOLERATE]},
        FITS,
    ),
    (
        "taint-exists-toleration",
        {"owners": LABEL_A, "taints": [TAINT]},
        {"labels": {"app": "a"}, "tolerations": [{"key": "dedicated", "operator": "Exists"}]},
        FITS,
    ),
    (
        "taint-affinity-toleration",
        {"owners": LABEL_A, "taints": [TAINT]},
        {"labels": {"app": "a"}, "affinity": {"tolerations": [TOLERATE]}},
        FITS,
    ),
    (
        "taint-noexecute",
        {"owners": LABEL_A, "taints": [{"key": "k", "effect": "NoExecute"}]},
        {"labels": {"app": "a"}},
        NO_CPU,
    ),
    (
        "taint-prefer-no-schedule-ignored",
        {"owners": LABEL_A, "taints": [{"key": "k", "effect": "PreferNoSchedule"}]},
        {"labels": {"app": "a"}},
        FITS,
    ),
    (
        "taint-wrong-value",
        {"owners": LABEL_A, "taints": [TAINT]},
        {"labels": {"app": "a"}, "tolerations": [{**TOLERATE, "value": "y"}]},
        NO_CPU,
    ),
    # --- unschedulable ---
    ("unschedulable", {"owners": LABEL_A, "unschedulable": True}, {"labels": {"app": "a"}}, NO_CPU),
    (
        "unschedulable-with-affinity",
        {"owners": LABEL_A, "unschedulable": True},
        {"labels": {"app": "a"}, "affinity": {}},
        NO_AFFINITY,
    ),
    ("schedulable-false", {"owners": LABEL_A, "unschedulable": False}, {"labels": {"app": "a"}}, FITS),
    # --- ignored label ---
    ("ignored", {"owners": LABEL_A}, {"labels": {"app": "a", IGNORED: "true"}}, NO_CPU),
    ("ignored-false", {"owners": LABEL_A}, {"labels": {"app": "a", IGNORED: "false"}}, FITS),
    # --- exact match ---
    (
        "exact-cpu-equal",
        {"owners": LABEL_A, "cpu": "2"},
        {"labels": {"app": "a"}, "annotations": {EXACT: json.dumps({"resourceNames": ["cpu"]})}},
        FITS,
    ),
    (
        "exact-cpu-differs",
        {"owners": LABEL_A},
        {"labels": {"app": "a"}, "annotations": {EXACT: json.dumps({"resourceNames": ["cpu"]})}},
        NO_CPU,
    ),
    (
        "exact-second-name-differs",
        {"owners": LABEL_A, "memory": "1Gi"},
        {"labels": {"app": "a"}, "annotations": {EXACT: json.dumps({"resourceNames": ["memory", "cpu"]})}},
        NO_CPU,
    ),
    (
        "exact-memory-only",
        {"owners": LABEL_A, "memory": "1Gi"},
        {"labels": {"app": "a"}, "annotations": {EXACT: json.dumps({"resourceNames": ["memory"]})}},
        FITS,
    ),
    (
        "exact-absent-in-both",
        {"owners": LABEL_A},
        {
            "labels": {"app": "a"},
            "annotations": {EXACT: json.dumps({"resourceNames": ["nvidia.com/gpu", "cpu"]})},
        },
        FITS,
    ),
    (
        "exact-empty-names",
        {"owners": LABEL_A},
        {"labels": {"app": "a"}, "annotations": {EXACT: json.dumps({"resourceNames": []})}},
        FITS,
    ),
    # --- reservation affinity ---
    ("affinity-name", {"owners": LABEL_A}, {"labels": {"app": "a"}, "affinity": {"name": "r"}}, FITS),
    (
        "affinity-other-name",
        {"owners": LABEL_A},
        {"labels": {"app": "a"}, "affinity": {"name": "s"}},
        NO_AFFINITY,
    ),
    (
        "affinity-name-not-owner",
        {"owners": LABEL_A},
        {"labels": {"app": "b"}, "affinity": {"name": "r"}},
        NO_AFFINITY,
    ),
    (
        "affinity-selector",
        {"owners": LABEL_A, "labels": {"pool": "x"}},
        {"labels": {"app": "a"}, "affinity": {"reservationSelector": {"pool": "x"}}},
        FITS,
    ),
    (
        "affinity-selector-other",
        {"owners": LABEL_A, "labels": {"pool": "x"}},
        {"labels": {"app": "a"}, "affinity": {"reservationSelector": {"pool": "y"}}},
        NO_AFFINITY,
    ),
    (
        "affinity-terms-node-label",
        {"owners": LABEL_A},
        {
            "labels": {"app": "a"},
            "affinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "reservationSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}
                    ]
                }
            },
        },
        FITS,
    ),
    (
        "affinity-terms-reservation-label-overrides-node",
        {"owners": LABEL_A, "labels": {"zone": "z2"}},
        {
            "labels": {"app": "a"},
            "affinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "reservationSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}
                    ]
                }
            },
        },
        NO_AFFINITY,
    ),
    (
        "affinity-terms-match-fields-name",
        {"owners": LABEL_A},
        {
            "labels": {"app": "a"},
            "affinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "reservationSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["r"]}]}
                    ]
                }
            },
        },
        FITS,
    ),
    ("affinity-empty", {"owners": LABEL_A}, {"labels": {"app": "a"}, "affinity": {}}, FITS),
]


@pytest.mark.parametrize(("rkw", "pkw", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_matching(
    rkw: dict[str, Any], pkw: dict[str, Any], expected: tuple[str | None, str | None, str | None]
) -> None:
    rkw = {"cpu": "3", "memory": "2Gi", "node_name": "node-1", **rkw}
    sim = simulate(
        [node("node-1", labels={"zone": "z1"}), reservation("r", **rkw)], [pod("p", "2", "1Gi", **pkw)]
    )
    assert rsv_status(sim, "r")["phase"] == ("Succeeded" if expected[1] else "Available")
    assert (*placement(sim, "p"), pod_message(sim, "p")) == expected


def test_non_owner_uses_only_unreserved_capacity() -> None:
    """A non-owner that fits in the unreserved part is placed there, without the annotation."""
    sim = simulate(
        [node("node-1"), reservation("r", "3", "2Gi", node_name="node-1")],
        [pod("small", "1", "1Gi", labels={"app": "b"})],
        [pod("more", "100m", "100Mi", labels={"app": "b"})],
    )
    assert placement(sim, "small") == ("node-1", None)
    assert placement(sim, "more") == (None, None)
    assert pod_message(sim, "more") == "0/1 nodes are available: 1 Insufficient cpu."


def test_affinity_pod_only_lands_in_a_matching_reservation() -> None:
    """node-2 is empty, yet the pod with reservation affinity goes to r's node."""
    sim = simulate(
        [node("node-1"), node("node-2", "16", "64Gi"), reservation("r", "1", "1Gi", node_name="node-1")],
        [pod("p", "500m", "512Mi", labels={"app": "a"}, affinity={"name": "r"})],
    )
    assert placement(sim, "p") == ("node-1", "r")


def test_unschedulable_keeps_existing_owners() -> None:
    """Setting unschedulable later stops new owners but leaves the allocated one in place."""
    r = reservation("r", "3", "2Gi", node_name="node-1", allocate_once=False)
    patch = {
        "at": "2s",
        "patch": [
            {
                "apiVersion": "scheduling.koordinator.sh/v1alpha1",
                "kind": "Reservation",
                "name": "r",
                "patch": {"spec": {"unschedulable": True}},
            }
        ],
    }
    sim = simulate(
        [node("node-1"), r],
        [pod("first", "1", "512Mi", labels={"app": "a"})],
        [],
        [pod("second", "2", "512Mi", labels={"app": "a"})],
        steps=[patch],
    )
    assert placement(sim, "first") == ("node-1", "r")
    assert placement(sim, "second") == (None, None)
    assert pod_message(sim, "second") == "0/1 nodes are available: 1 Insufficient cpu."
    st = rsv_status(sim, "r")
    assert (st["phase"], st["allocated"]) == ("Available", {"cpu": "1", "memory": "512Mi"})
