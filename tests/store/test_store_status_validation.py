"""Status writes are validated as kube's status strategies do: only what validation reads of ``status``. A status
write of a kind whose validator never reads ``status`` is not validated again; a kind whose validator does read it
(Node, ElasticQuota, PodGroup, PodMigrationJob) still refuses a bad status; a caller's own validator sees every
status write."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from berth.api.errors import Invalid
from berth.api.validation import KIND_VALIDATORS, validate_object
from berth.clock import SimClock
from berth.store import MemoryStore
from berth.store.memory import STATUS_VALIDATED_KINDS

CONTAINERS = [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": CONTAINERS}}
SELECTOR = {"matchLabels": {"app": "web"}}

# one valid object of every kind whose validator does not read status
BLIND_SAMPLES: dict[tuple[str, str], dict[str, Any]] = {
    ("scheduling.k8s.io", "PriorityClass"): {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
    },
    ("scheduling.koordinator.sh", "Reservation"): {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": "r1"},
        "spec": {"template": TEMPLATE, "owners": [{"labelSelector": SELECTOR}], "ttl": "1h"},
    },
    ("apps", "ReplicaSet"): {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs", "namespace": "default"},
        "spec": {"replicas": 1, "selector": SELECTOR, "template": TEMPLATE},
    },
    ("apps", "Deployment"): {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "default"},
        "spec": {"replicas": 1, "selector": SELECTOR, "template": TEMPLATE},
    },
    ("apps", "StatefulSet"): {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "sts", "namespace": "default"},
        "spec": {"replicas": 1, "serviceName": "sts", "selector": SELECTOR, "template": TEMPLATE},
    },
    ("apps", "DaemonSet"): {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": "default"},
        "spec": {"selector": SELECTOR, "template": TEMPLATE},
    },
    ("batch", "Job"): {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default"},
        "spec": {"template": {"spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}},
    },
    ("batch", "CronJob"): {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "cj", "namespace": "default"},
        "spec": {
            "schedule": "@hourly",
            "jobTemplate": {"spec": {"template": {"spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}}},
        },
    },
    ("", "Service"): {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "svc", "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    },
    ("policy", "PodDisruptionBudget"): {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": SELECTOR},
    },
}


class _Recording(dict[str, Any]):
    """An object that remembers which of its top-level keys were read."""

    def __init__(self, obj: Mapping[str, Any]) -> None:
        super().__init__(obj)
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)


def test_every_validated_kind_is_classified() -> None:
    classified = set(STATUS_VALIDATED_KINDS) | set(BLIND_SAMPLES) | {("", "Pod")}
    assert sorted(set(KIND_VALIDATORS) - classified) == []


@pytest.mark.parametrize("key", sorted(BLIND_SAMPLES))
def test_status_blind_validators_never_read_status(key: tuple[str, str]) -> None:
    obj = _Recording({**BLIND_SAMPLES[key], "status": {"phase": 7, "allocatable": {"cpu": "x"}}})
    validate_object(obj)  # the sample is valid whatever its status
    assert "spec" in obj.read or key == ("scheduling.k8s.io", "PriorityClass")
    assert "status" not in obj.read


def _node() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4"}},
    }


def test_node_status_write_is_still_validated() -> None:
    store = MemoryStore(clock=SimClock())
    node = store.create(_node())
    with pytest.raises(Invalid) as err:
        store.update_status({**node, "status": {"allocatable": {"cpu": "4x"}}})
    assert err.value.causes == [("status.allocatable.cpu", 'invalid quantity "4x"')]
    assert store.get(("", "Node"), "", "n1")["status"] == {"allocatable": {"cpu": "4"}}


def test_elastic_quota_status_patch_is_still_validated() -> None:
    store = MemoryStore(clock=SimClock())
    store.create(
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {"name": "q", "namespace": "team"},
            "spec": {"min": {"cpu": "1"}, "max": {"cpu": "2"}},
        }
    )
    with pytest.raises(Invalid) as err:
        store.patch(
            ("scheduling.x-k8s.io", "ElasticQuota"),
            "team",
            "q",
            {"status": {"used": {"cpu": "oops"}}},
            subresource="status",
        )
    assert [path for path, _ in err.value.causes] == ["status.used.cpu"]


def test_reservation_status_write_is_not_validated_again() -> None:
    calls: list[str] = []
    store = MemoryStore(clock=SimClock())
    r = store.create(BLIND_SAMPLES[("scheduling.koordinator.sh", "Reservation")])
    validate = store._validate
    assert validate is not None

    def counting(obj: Mapping[str, Any]) -> None:
        calls.append(obj["kind"])
        validate(obj)

    store._validate = counting
    out = store.update_status({**r, "status": {"phase": "Available", "nodeName": "n1"}})
    assert out["status"] == {"phase": "Available", "nodeName": "n1"}
    assert out["spec"] == r["spec"]
    assert calls == []
    store.update({**out, "spec": {**out["spec"], "ttl": "2h"}})
    assert calls == ["Reservation"]  # a spec write is validated as before


def test_a_callers_validator_sees_every_status_write() -> None:
    seen: list[Any] = []
    store = MemoryStore(clock=SimClock(), validate=lambda obj: seen.append(obj.get("status")))
    r = store.create(BLIND_SAMPLES[("scheduling.koordinator.sh", "Reservation")])
    store.update_status({**r, "status": {"phase": "Available"}})
    assert seen == [None, {"phase": "Available"}]


def test_a_status_write_copies_the_callers_parts_and_shares_the_stored_ones() -> None:
    store = MemoryStore(clock=SimClock())
    node = store.create(
        {**_node(), "status": {"allocatable": {"cpu": "4"}, "conditions": [{"type": "Ready"}]}}
    )
    kept = node["status"]["conditions"]
    mine = {"osImage": "x", "extra": {"a": ["b"]}}
    out = store.update_status({**node, "status": {**node["status"], "nodeInfo": mine}})
    assert out["status"] == {
        "allocatable": {"cpu": "4"},
        "conditions": [{"type": "Ready"}],
        "nodeInfo": {"osImage": "x", "extra": {"a": ["b"]}},
    }
    assert out["status"]["conditions"] is kept  # the stored list, immutable: shared
    assert out["status"]["nodeInfo"] is not mine
    assert out["status"]["nodeInfo"]["extra"] is not mine["extra"]
    mine["extra"]["a"].append("c")  # the caller's dicts stay the caller's
    stored = store.get(("", "Node"), "", "n1")["status"]
    assert stored["nodeInfo"] == {"osImage": "x", "extra": {"a": ["b"]}}
