"""Tests for berth.api.kinds, berth.api.meta and berth.api.wellknown."""

import pytest

from berth.api import wellknown
from berth.api.kinds import UnknownKindError, all_kinds, kind_by_plural_or_short, lookup_kind
from berth.api.meta import api_group, get_annotations, get_labels, namespaced_name, object_key
from berth.api.wellknown import parse_duration


@pytest.mark.parametrize(
    ("api_version", "kind", "plural", "namespaced", "has_status"),
    [
        ("v1", "Pod", "pods", True, True),
        ("v1", "Node", "nodes", False, True),
        ("v1", "Namespace", "namespaces", False, True),
        ("v1", "Event", "events", True, False),
        ("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", False, False),
        ("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", True, True),
        ("apps/v1", "ReplicaSet", "replicasets", True, True),
        ("apps/v1", "Deployment", "deployments", True, True),
        ("coordination.k8s.io/v1", "Lease", "leases", True, False),
        ("scheduling.koordinator.sh/v1alpha1", "Reservation", "reservations", False, True),
        ("scheduling.koordinator.sh/v1alpha1", "PodMigrationJob", "podmigrationjobs", False, True),
        ("scheduling.x-k8s.io/v1alpha1", "ElasticQuota", "elasticquotas", True, True),
        ("scheduling.x-k8s.io/v1alpha1", "PodGroup", "podgroups", True, True),
        ("scheduling.sigs.k8s.io/v1alpha1", "ElasticQuota", "elasticquotas", True, True),
        ("scheduling.sigs.k8s.io/v1alpha1", "PodGroup", "podgroups", True, True),
        ("berth.dev/v1alpha1", "Scenario", "scenarios", False, True),
    ],
)
def test_lookup_kind(api_version: str, kind: str, plural: str, namespaced: bool, has_status: bool) -> None:
    info = lookup_kind(api_version, kind)
    assert (info.api_version, info.kind, info.plural, info.namespaced, info.has_status) == (
        api_version,
        kind,
        plural,
        namespaced,
        has_status,
    )


def test_unknown_kind() -> None:
    with pytest.raises(UnknownKindError) as info:
        lookup_kind("v1", "Bogus")
    assert str(info.value) == 'unknown kind "Bogus" in apiVersion "v1"'
    with pytest.raises(KeyError):
        lookup_kind("apps/v2", "Deployment")
    with pytest.raises(UnknownKindError) as info2:
        kind_by_plural_or_short("widgets")
    assert str(info2.value) == 'the server doesn\'t have a resource type "widgets"'


@pytest.mark.parametrize(
    ("name", "api_version", "kind"),
    [
        ("pods", "v1", "Pod"),
        ("po", "v1", "Pod"),
        ("pod", "v1", "Pod"),
        ("Pod", "v1", "Pod"),
        ("nodes", "v1", "Node"),
        ("no", "v1", "Node"),
        ("ns", "v1", "Namespace"),
        ("events", "v1", "Event"),
        ("ev", "v1", "Event"),
        ("pc", "scheduling.k8s.io/v1", "PriorityClass"),
        ("pdb", "policy/v1", "PodDisruptionBudget"),
        ("deploy", "apps/v1", "Deployment"),
        ("rs", "apps/v1", "ReplicaSet"),
        ("eq", "scheduling.x-k8s.io/v1alpha1", "ElasticQuota"),
        ("elasticquotas.scheduling.sigs.k8s.io", "scheduling.sigs.k8s.io/v1alpha1", "ElasticQuota"),
        ("podgroups", "scheduling.x-k8s.io/v1alpha1", "PodGroup"),
        ("reservation", "scheduling.koordinator.sh/v1alpha1", "Reservation"),
        ("pmj", "scheduling.koordinator.sh/v1alpha1", "PodMigrationJob"),
        ("scenarios", "berth.dev/v1alpha1", "Scenario"),
        ("PODS", "v1", "Pod"),
    ],
)
def test_kind_by_name(name: str, api_version: str, kind: str) -> None:
    info = kind_by_plural_or_short(name)
    assert (info.api_version, info.kind) == (api_version, kind)


def test_all_kinds_unique() -> None:
    keys = [(k.api_version, k.kind) for k in all_kinds()]
    assert len(keys) == len(set(keys))
    assert ("apps/v1", "StatefulSet") in keys and ("v1", "ConfigMap") in keys


def test_a_kinds_group_is_the_group_of_its_api_version() -> None:
    # validate_object finds a kind's validator by KindInfo.group
    assert all(k.group == api_group(k.api_version) for k in all_kinds())


def test_meta() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "b"}, "annotations": {"x": "y"}},
    }
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}
    rsv = {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": "r"},
    }
    assert namespaced_name(pod) == "ns/p"
    assert namespaced_name(node) == "n"
    assert object_key(pod) == ("", "Pod", "ns", "p")
    assert object_key(rsv) == ("scheduling.koordinator.sh", "Reservation", "", "r")
    assert get_labels(pod) == {"a": "b"} and get_annotations(pod) == {"x": "y"}
    assert get_labels(node) == {} and get_annotations({}) == {}


def test_wellknown_constants() -> None:
    assert wellknown.LABEL_HOSTNAME == "kubernetes.io/hostname"
    assert wellknown.TAINT_NODE_NOT_READY == "node.kubernetes.io/not-ready"
    assert wellknown.SIMULATOR_FILTER_RESULT == "kube-scheduler-simulator.sigs.k8s.io/filter-result"
    assert wellknown.SIMULATOR_SCORE_RESULT == "kube-scheduler-simulator.sigs.k8s.io/score-result"
    assert wellknown.SIMULATOR_FINALSCORE_RESULT == "kube-scheduler-simulator.sigs.k8s.io/finalscore-result"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0", 0.0),
        ("10m", 600.0),
        ("1h30m", 5400.0),
        ("500ms", 0.5),
        ("1.5s", 1.5),
        ("-1.5h", -5400.0),
        ("+5s", 5.0),
        ("1h2m3s4ms5us6ns", 3723.004005006),
        ("1\u00b5s", 1e-6),
        ("1\u03bcs", 1e-6),
        (".5s", 0.5),
        ("5.s", 5.0),
        ("0s", 0.0),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("text", ["", "1", "-", ".s", "1x", "1h 2m", " 1s", "1.2.3s", "3000000h", "s"])
def test_parse_duration_invalid(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)
