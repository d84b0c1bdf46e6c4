"""Cascading deletion through `berth serve` with the real kubectl: ``kubectl delete`` (Background),
``--cascade=foreground`` and ``--cascade=orphan``, and the DeleteOptions errors kube-apiserver answers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from serve_helpers import KUBECTL, Served, eventually, running

from builders import make_node, make_pod

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="the end-to-end tests need kubectl on PATH")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("cascade")) as served:
        served.apply(make_node("n1").obj())
        yield served


def _workload(kind: str, name: str, replicas: int, grace: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "terminationGracePeriodSeconds": grace,
                    "containers": [
                        {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "10m"}}}
                    ],
                },
            },
        },
    }


def _items(served: Served, what: str, app: str) -> list[dict[str, Any]]:
    done = served.kubectl("get", what, "-l", f"app={app}", "-o", "json")
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["items"])


def _running(served: Served, app: str, n: int) -> list[dict[str, Any]]:
    def check() -> list[dict[str, Any]]:
        pods = _items(served, "pods", app)
        ok = len(pods) == n and all((p.get("status") or {}).get("phase") == "Running" for p in pods)
        return pods if ok else []

    return list(eventually(check, f"{n} running pods of {app}"))


def test_kubectl_delete_deployment_removes_replica_sets_and_pods(server: Served) -> None:
    server.apply(_workload("Deployment", "bg", 2, grace=1))
    _running(server, "bg", 2)
    assert len(_items(server, "rs", "bg")) == 1
    done = server.kubectl("delete", "deployment", "bg")
    assert (done.returncode, done.stdout) == (0, 'deployment.apps "bg" deleted\n'), done.stderr
    # Background: the Deployment is gone at once, its ReplicaSet next, then its pods after their grace period
    assert server.kubectl("get", "deployment", "bg").returncode == 1
    eventually(lambda: not _items(server, "rs", "bg"), "the ReplicaSet collected")
    eventually(lambda: not _items(server, "pods", "bg"), "the pods collected")


def test_kubectl_delete_cascade_foreground_keeps_the_owner_until_its_dependents_are_gone(
    server: Served,
) -> None:
    server.apply(_workload("Deployment", "fg", 2, grace=3))
    _running(server, "fg", 2)
    done = server.kubectl("delete", "deployment", "fg", "--cascade=foreground", "--wait=false")
    assert (done.returncode, done.stdout) == (0, 'deployment.apps "fg" deleted\n'), done.stderr
    listed = server.kubectl("get", "deployments", "fg", "--no-headers")
    assert listed.returncode == 0 and listed.stdout.startswith("fg "), listed.stderr
    meta = json.loads(server.kubectl("get", "deployment", "fg", "-o", "json").stdout)["metadata"]
    assert meta["finalizers"] == ["foregroundDeletion"] and meta["deletionTimestamp"]
    rs = eventually(
        lambda: [r for r in _items(server, "rs", "fg") if r["metadata"].get("deletionTimestamp")], "rs"
    )
    assert rs[0]["metadata"]["finalizers"] == ["foregroundDeletion"]
    pods = eventually(
        lambda: [p for p in _items(server, "pods", "fg") if p["metadata"].get("deletionTimestamp")],
        "terminating",
    )
    assert [p["metadata"]["deletionGracePeriodSeconds"] for p in pods] == [3, 3]
    terminating = server.kubectl("get", "pods", "-l", "app=fg", "--no-headers")
    assert all(line.split()[2] == "Terminating" for line in terminating.stdout.splitlines()), (
        terminating.stdout
    )
    assert server.kubectl("get", "deployment", "fg").returncode == 0  # still there while its pods terminate
    done = server.kubectl("wait", "--for=delete", "deployment/fg", "--timeout=20s")
    assert done.returncode == 0, done.stderr
    assert not _items(server, "pods", "fg") and not _items(server, "rs", "fg")


def test_kubectl_delete_cascade_orphan_leaves_the_pods_without_owner(server: Served) -> None:
    server.apply(_workload("ReplicaSet", "orph", 2, grace=1))
    _running(server, "orph", 2)
    done = server.kubectl("delete", "rs", "orph", "--cascade=orphan")
    assert (done.returncode, done.stdout) == (0, 'replicaset.apps "orph" deleted\n'), done.stderr
    assert server.kubectl("get", "rs", "orph").returncode == 1
    time.sleep(0.5)
    pods = _items(server, "pods", "orph")
    assert len(pods) == 2
    for pod in pods:
        assert "ownerReferences" not in pod["metadata"]
        assert "deletionTimestamp" not in pod["metadata"]
        assert pod["status"]["phase"] == "Running"


def test_delete_options_errors_over_http(server: Served) -> None:
    server.apply(_workload("ReplicaSet", "opts", 0, grace=1))
    path = "/apis/apps/v1/namespaces/default/replicasets/opts"
    with server.client() as http:
        bad = http.request("DELETE", path, json={"propagationPolicy": "Sideways"})
        assert bad.status_code == 422
        assert bad.json()["message"] == (
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": '
            'supported values: "Foreground", "Background", "Orphan", "nil"'
        )
        both = http.request("DELETE", path, json={"propagationPolicy": "Orphan", "orphanDependents": True})
        assert both.status_code == 422
        stale = http.request("DELETE", path, json={"preconditions": {"uid": "not-its-uid"}})
        assert (stale.status_code, stale.json()["reason"]) == (409, "Conflict")
        assert stale.json()["message"].startswith(
            'Operation cannot be fulfilled on ReplicaSet.apps "opts": the UID in the precondition (not-its-uid) '
        )
        legacy = http.request("DELETE", path, json={"orphanDependents": True})
        assert legacy.status_code == 200 and legacy.json()["metadata"]["finalizers"] == ["orphan"]
    eventually(lambda: server.kubectl("get", "rs", "opts").returncode == 1, "the orphaned ReplicaSet gone")


def test_a_pod_whose_owner_does_not_exist_is_collected(server: Served) -> None:
    def pod(name: str, owner: dict[str, Any]) -> dict[str, Any]:
        obj = make_pod(name).label(app="dangling").obj()
        obj["metadata"]["ownerReferences"] = [{**owner, "controller": True, "blockOwnerDeletion": True}]
        obj["spec"]["terminationGracePeriodSeconds"] = 1
        return obj

    missing = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "nowhere", "uid": "0000-missing"}
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "name": "j",
        "uid": "0000-job",
    }  # a kind not served
    server.apply(pod("dangling", missing), pod("unverifiable", job))
    eventually(
        lambda: [p["metadata"]["name"] for p in _items(server, "pods", "dangling")] == ["unverifiable"],
        "the pod of a missing ReplicaSet collected",
    )
