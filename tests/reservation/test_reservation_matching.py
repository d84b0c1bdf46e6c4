"""Which pods may allocate a reservation: owners, taints, unschedulable, ignored, exact-match, affinity.

Every case: node-1 (4 cpu, 8Gi) holds reservation ``r`` (3 cpu, 2Gi, pinned). The 2-cpu pod fits only
when it may use ``r`` (1 cpu is unreserved); otherwise it stays Pending.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from rsv_helpers import EXACT, IGNORED, KOORD, placement, pod_message, reservation, rsv_status, simulate

from builders import PodBuilder, expr, make_node, make_pod

FITS = ("node-1", "r", None)
NO_CPU = (None, None, "0/1 nodes are available: 1 Insufficient cpu.")
NO_AFFINITY = (None, None, "0/1 nodes are available: node(s) no reservations match reservation affinity.")


def refused(
    base: tuple[str | None, str | None, str | None], why: str, owners: int = 1
) -> tuple[str | None, str | None, str | None]:
    """``base`` with Koordinator's PostFilter reasons for an owner-matched reservation refused because ``why``."""
    parts = ([f"1 Reservation(s) {why}"] if why else []) + [f"{owners} Reservation(s) matched owner total."]
    return (base[0], base[1], f"{base[2]} " + ", ".join(parts))


# the pods' controller is of a kind Berth does not serve: the garbage collector cannot verify that it exists and
# leaves the pods be (a ReplicaSet that does not exist would have them collected, as in kube)
RS = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "rs-1", "uid": "uid-rs-1"}

ROLLOUT = "argoproj.io/v1alpha1"

LABEL_A = [{"labelSelector": {"matchLabels": {"app": "a"}}}]
TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
TOLERATE = {"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"}


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    """A reservation affinity with required reservationSelectorTerms."""
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"reservationSelectorTerms": list(terms)}}


CASES: list[tuple[str, dict[str, Any], PodBuilder, tuple[str | None, str | None, str | None]]] = [
    # --- owners: object ---
    ("object-name", {"owners": [{"object": {"name": "p"}}]}, make_pod("p"), FITS),
    ("object-name-ns", {"owners": [{"object": {"name": "p", "namespace": "default"}}]}, make_pod("p"), FITS),
    ("object-other-name", {"owners": [{"object": {"name": "q"}}]}, make_pod("p"), NO_CPU),
    ("object-other-ns", {"owners": [{"object": {"name": "p", "namespace": "prod"}}]}, make_pod("p"), NO_CPU),
    (
        "object-kind-ignored",
        {"owners": [{"object": {"name": "p", "kind": "Deployment"}}]},
        make_pod("p"),
        FITS,
    ),
    ("object-apiversion", {"owners": [{"object": {"name": "p", "apiVersion": "v1"}}]}, make_pod("p"), FITS),
    (
        "object-apiversion-other",
        {"owners": [{"object": {"name": "p", "apiVersion": "v2"}}]},
        make_pod("p"),
        NO_CPU,
    ),
    # --- owners: controller ---
    (
        "controller",
        {"owners": [{"controller": dict(RS)}]},
        make_pod("p").owner("Rollout", "rs-1", "uid-rs-1", api_version=ROLLOUT),
        FITS,
    ),
    (
        "controller-not-controller-ref",
        {"owners": [{"controller": {**RS, "controller": True}}]},
        make_pod("p").owner("Rollout", "rs-1", "uid-rs-1", api_version=ROLLOUT, controller=None),
        NO_CPU,
    ),
    (
        "controller-flag-false-matches-false",
        {"owners": [{"controller": {**RS, "controller": False}}]},
        make_pod("p").owner("Rollout", "rs-1", "uid-rs-1", api_version=ROLLOUT, controller=False),
        FITS,
    ),
    (
        "controller-other-name",
        {"owners": [{"controller": {**RS, "name": "rs-2"}}]},
        make_pod("p").owner("Rollout", "rs-1", "uid-rs-1", api_version=ROLLOUT),
        NO_CPU,
    ),
    (
        "controller-namespace",
        {"owners": [{"controller": {**RS, "namespace": "default"}}]},
        make_pod("p").owner("Rollout", "rs-1", "uid-rs-1", api_version=ROLLOUT, controller=None),
        FITS,
    ),
    (
        "controller-other-namespace",
        {"owners": [{"controller": {**RS, "namespace": "prod"}}]},
        make_pod("p").owner("Rollout", "rs-1", "uid-rs-1", api_version=ROLLOUT, controller=None),
        NO_CPU,
    ),
    ("controller-pod-without-owner", {"owners": [{"controller": dict(RS)}]}, make_pod("p"), NO_CPU),
    # --- owners: labelSelector, ANDed inside an owner, ORed across ---
    ("labels", {"owners": LABEL_A}, make_pod("p").label(app="a"), FITS),
    ("labels-other", {"owners": LABEL_A}, make_pod("p").label(app="b"), NO_CPU),
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
        make_pod("p").label(app="b"),
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
        make_pod("p").label(app="b"),
        NO_CPU,
    ),
    (
        "and-inside-owner-both",
        {"owners": [{"object": {"name": "p"}, "labelSelector": {"matchLabels": {"app": "a"}}}]},
        make_pod("p").label(app="a"),
        FITS,
    ),
    (
        "and-inside-owner-one",
        {"owners": [{"object": {"name": "p"}, "labelSelector": {"matchLabels": {"app": "a"}}}]},
        make_pod("p").label(app="b"),
        NO_CPU,
    ),
    (
        "or-across-owners",
        {"owners": [{"object": {"name": "q"}}, {"labelSelector": {"matchLabels": {"app": "a"}}}]},
        make_pod("p").label(app="a"),
        FITS,
    ),
    # --- taints ---
    (
        "taint-untolerated",
        {"owners": LABEL_A, "taints": [TAINT]},
        make_pod("p").label(app="a"),
        refused(NO_CPU, "had untolerated taint {dedicated: x}"),
    ),
    (
        "taint-pod-toleration",
        {"owners": LABEL_A, "taints": [TAINT]},
        make_pod("p").label(app="a").tolerations(TOLERATE),
        FITS,
    ),
    (
        "taint-exists-toleration",
        {"owners": LABEL_A, "taints": [TAINT]},
        make_pod("p").label(app="a").tolerations({"key": "dedicated", "operator": "Exists"}),
        FITS,
    ),
    (
        "taint-affinity-toleration",
        {"owners": LABEL_A, "taints": [TAINT]},
        make_pod("p").label(app="a").reservation_affinity({"tolerations": [TOLERATE]}),
        FITS,
    ),
    (
        "taint-noexecute",
        {"owners": LABEL_A, "taints": [{"key": "k", "effect": "NoExecute"}]},
        make_pod("p").label(app="a"),
        refused(NO_CPU, "had untolerated taint {k: }"),
    ),
    (
        "taint-prefer-no-schedule-ignored",
        {"owners": LABEL_A, "taints": [{"key": "k", "effect": "PreferNoSchedule"}]},
        make_pod("p").label(app="a"),
        FITS,
    ),
    (
        "taint-wrong-value",
        {"owners": LABEL_A, "taints": [TAINT]},
        make_pod("p").label(app="a").tolerations({**TOLERATE, "value": "y"}),
        refused(NO_CPU, "had untolerated taint {dedicated: x}"),
    ),
    # --- unschedulable ---
    (
        "unschedulable",
        {"owners": LABEL_A, "unschedulable": True},
        make_pod("p").label(app="a"),
        refused(NO_CPU, "is unschedulable"),
    ),
    (
        "unschedulable-with-affinity",
        {"owners": LABEL_A, "unschedulable": True},
        make_pod("p").label(app="a").reservation_affinity({}),
        refused(NO_AFFINITY, "is unschedulable"),
    ),
    ("schedulable-false", {"owners": LABEL_A, "unschedulable": False}, make_pod("p").label(app="a"), FITS),
    # --- ignored label ---
    ("ignored", {"owners": LABEL_A}, make_pod("p").label({"app": "a", IGNORED: "true"}), NO_CPU),
    ("ignored-false", {"owners": LABEL_A}, make_pod("p").label({"app": "a", IGNORED: "false"}), FITS),
    # --- exact match ---
    (
        "exact-cpu-equal",
        {"owners": LABEL_A, "cpu": "2"},
        make_pod("p").label(app="a").annotate({EXACT: json.dumps({"resourceNames": ["cpu"]})}),
        FITS,
    ),
    (
        "exact-cpu-differs",
        {"owners": LABEL_A},
        make_pod("p").label(app="a").annotate({EXACT: json.dumps({"resourceNames": ["cpu"]})}),
        refused(NO_CPU, "is not exact matched"),
    ),
    (
        "exact-second-name-differs",
        {"owners": LABEL_A, "memory": "1Gi"},
        make_pod("p").label(app="a").annotate({EXACT: json.dumps({"resourceNames": ["memory", "cpu"]})}),
        refused(NO_CPU, "is not exact matched"),
    ),
    (
        "exact-memory-only",
        {"owners": LABEL_A, "memory": "1Gi"},
        make_pod("p").label(app="a").annotate({EXACT: json.dumps({"resourceNames": ["memory"]})}),
        FITS,
    ),
    (
        "exact-absent-in-both",
        {"owners": LABEL_A},
        make_pod("p")
        .label(app="a")
        .annotate({EXACT: json.dumps({"resourceNames": ["nvidia.com/gpu", "cpu"]})}),
        FITS,
    ),
    (
        "exact-empty-names",
        {"owners": LABEL_A},
        make_pod("p").label(app="a").annotate({EXACT: json.dumps({"resourceNames": []})}),
        FITS,
    ),
    # --- reservation affinity ---
    (
        "affinity-name",
        {"owners": LABEL_A},
        make_pod("p").label(app="a").reservation_affinity({"name": "r"}),
        FITS,
    ),
    (
        "affinity-other-name",
        {"owners": LABEL_A},
        make_pod("p").label(app="a").reservation_affinity({"name": "s"}),
        refused(NO_AFFINITY, "didn't match the requested reservation name"),
    ),
    (
        "affinity-name-not-owner",
        {"owners": LABEL_A},
        make_pod("p").label(app="b").reservation_affinity({"name": "r"}),
        refused(NO_AFFINITY, "", owners=0),
    ),
    (
        "affinity-selector",
        {"owners": LABEL_A, "labels": {"pool": "x"}},
        make_pod("p").label(app="a").reservation_affinity({"reservationSelector": {"pool": "x"}}),
        FITS,
    ),
    (
        "affinity-selector-other",
        {"owners": LABEL_A, "labels": {"pool": "x"}},
        make_pod("p").label(app="a").reservation_affinity({"reservationSelector": {"pool": "y"}}),
        refused(NO_AFFINITY, "didn't match affinity rules"),
    ),
    (
        "affinity-terms-node-label",
        {"owners": LABEL_A},
        make_pod("p")
        .label(app="a")
        .reservation_affinity(_required({"matchExpressions": [expr("zone", "In", "z1")]})),
        FITS,
    ),
    (
        "affinity-terms-reservation-label-overrides-node",
        {"owners": LABEL_A, "labels": {"zone": "z2"}},
        make_pod("p")
        .label(app="a")
        .reservation_affinity(_required({"matchExpressions": [expr("zone", "In", "z1")]})),
        refused(NO_AFFINITY, "didn't match affinity rules"),
    ),
    (
        "affinity-terms-match-fields-name",
        {"owners": LABEL_A},
        make_pod("p")
        .label(app="a")
        .reservation_affinity(_required({"matchFields": [expr("metadata.name", "In", "r")]})),
        FITS,
    ),
    ("affinity-empty", {"owners": LABEL_A}, make_pod("p").label(app="a").reservation_affinity({}), FITS),
]


@pytest.mark.parametrize(("rkw", "pod", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_matching(
    rkw: dict[str, Any], pod: PodBuilder, expected: tuple[str | None, str | None, str | None]
) -> None:
    rkw = {"cpu": "3", "memory": "2Gi", "node_name": "node-1", **rkw}
    sim = simulate(
        [make_node("node-1").label(zone="z1").obj(), reservation("r", **rkw)],
        [pod.scheduler(KOORD).req(cpu="2", memory="1Gi").obj()],
    )
    assert rsv_status(sim, "r")["phase"] == ("Succeeded" if expected[1] else "Available")
    assert (*placement(sim, "p"), pod_message(sim, "p")) == expected


def test_non_owner_uses_only_unreserved_capacity() -> None:
    """A non-owner that fits in the unreserved part is placed there, without the annotation."""
    sim = simulate(
        [make_node("node-1").obj(), reservation("r", "3", "2Gi", node_name="node-1")],
        [make_pod("small").scheduler(KOORD).req(cpu="1", memory="1Gi").label(app="b").obj()],
        [make_pod("more").scheduler(KOORD).req(cpu="100m", memory="100Mi").label(app="b").obj()],
    )
    assert placement(sim, "small") == ("node-1", None)
    assert placement(sim, "more") == (None, None)
    assert pod_message(sim, "more") == "0/1 nodes are available: 1 Insufficient cpu."


def test_affinity_pod_only_lands_in_a_matching_reservation() -> None:
    """node-2 is empty, yet the pod with reservation affinity goes to r's node."""
    sim = simulate(
        [
            make_node("node-1").obj(),
            make_node("node-2").capacity(cpu="16", memory="64Gi").obj(),
            reservation("r", "1", "1Gi", node_name="node-1"),
        ],
        [
            make_pod("p")
            .scheduler(KOORD)
            .req(cpu="500m", memory="512Mi")
            .label(app="a")
            .reservation_affinity({"name": "r"})
            .obj()
        ],
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
        [make_node("node-1").obj(), r],
        [make_pod("first").scheduler(KOORD).req(cpu="1", memory="512Mi").label(app="a").obj()],
        [],
        [make_pod("second").scheduler(KOORD).req(cpu="2", memory="512Mi").label(app="a").obj()],
        steps=[patch],
    )
    assert placement(sim, "first") == ("node-1", "r")
    assert placement(sim, "second") == (None, None)
    assert pod_message(sim, "second") == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "1 Reservation(s) is unschedulable, 1 Reservation(s) matched owner total."
    )
    st = rsv_status(sim, "r")
    assert (st["phase"], st["allocated"]) == ("Available", {"cpu": "1", "memory": "512Mi"})
