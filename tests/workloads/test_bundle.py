"""An ordinary application bundle (examples/bundle) and a ``kubectl get -o yaml``-style dump through
``berth simulate``: every built-in kind accepted, the pod-making ones run, the rest stored as given."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import yaml
from kinds_helpers import Result
from typer.testing import CliRunner

from berth.cli import app

BUNDLE = Path(__file__).resolve().parents[2] / "examples" / "bundle"


def _run(*argv: str) -> Result:
    result = CliRunner().invoke(app, ["simulate", *argv, "-o", "json"])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Result(result.exit_code, result.stdout, result.stderr)


def test_the_bundle_runs(tmp_path: Path) -> None:
    run = _run(str(BUNDLE), "--until", "2m")
    assert run.exit_code == 0, run.stderr
    kinds = Counter(o["kind"] for o in run.objects() if o["kind"] != "Event")
    assert kinds == {
        "Pod": 9,
        "PersistentVolumeClaim": 4,
        "Node": 3,
        "PriorityClass": 2,
        "Service": 2,
        "ConfigMap": 1,
        "ControllerRevision": 1,
        "DaemonSet": 1,
        "Deployment": 1,
        "HorizontalPodAutoscaler": 1,
        "Ingress": 1,
        "Namespace": 1,
        "NetworkPolicy": 1,
        "PodDisruptionBudget": 1,
        "ReplicaSet": 1,
        "Role": 1,
        "RoleBinding": 1,
        "Secret": 1,
        "ServiceAccount": 1,
        "StatefulSet": 1,
        "StorageClass": 1,
    }
    placed = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in run.objects("Pod")}
    assert {k: v for k, v in placed.items() if not k.startswith(("web-", "log-shipper-"))} == {
        "db-0": "node-b",
        "db-1": "node-a",
        "db-2": "node-b",
    }
    # the web Service and the ReplicaSet's selector spread the web pods; the DaemonSet skips the GPU node
    assert Counter(v for k, v in placed.items() if k.startswith("web-")) == {"node-a": 2, "node-b": 2}
    assert sorted(v for k, v in placed.items() if k.startswith("log-shipper-")) == ["node-a", "node-b"]
    assert {p["status"]["phase"] for p in run.objects("Pod")} == {"Running"}
    claims = sorted(c["metadata"]["name"] for c in run.objects("PersistentVolumeClaim"))
    assert claims == ["data-db-0", "data-db-1", "data-db-2", "uploads"]
    # stored as given
    assert run.get("ConfigMap", "web-config")["data"] == {
        "LOG_LEVEL": "info",
        "DATABASE_HOST": "db.shop.svc.cluster.local",
    }
    assert run.get("Role", "read-config")["rules"][0]["verbs"] == ["get", "list", "watch"]
    assert run.get("PodDisruptionBudget", "db")["status"]["disruptionsAllowed"] == 1


def test_a_cluster_dump_is_read_as_it_is(tmp_path: Path) -> None:
    """A ``kubectl get all -A -o yaml``-like List: server fields kept, a pod owned by a kind Berth does not
    run kept as given, Endpoints/EndpointSlice/ControllerRevision stored."""
    owner = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "name": "ro",
        "uid": "1d1e6f4e-0000-4000-8000-000000000003",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    items = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "ro-x1",
                "namespace": "default",
                "uid": "1d1e6f4e-0000-4000-8000-000000000002",
                "resourceVersion": "101",
                "creationTimestamp": "2023-12-31T00:00:00Z",
                "ownerReferences": [owner],
            },
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]},
            "status": {"phase": "Running"},
        },
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": "web", "namespace": "default"},
            "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}],
        },
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": "web-abcde", "namespace": "default"},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"]}],
        },
        {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {"name": "web-5d8b6c5d8b", "namespace": "default"},
            "revision": 1,
            "data": {"spec": {}},
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSIDriver",
            "metadata": {"name": "ebs.csi.aws.com"},
            "spec": {},
        },
    ]
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    run = _run(str(path), "--until", "10m")
    assert run.exit_code == 0, run.stderr
    pod = run.get("Pod", "ro-x1")
    assert (pod["spec"]["nodeName"], pod["metadata"]["ownerReferences"]) == ("n1", [owner])
    assert run.get("EndpointSlice", "web-abcde")["endpoints"] == [{"addresses": ["10.0.0.1"]}]
    assert run.get("ControllerRevision", "web-5d8b6c5d8b")["revision"] == 1
    assert run.get("CSIDriver", "ebs.csi.aws.com")["metadata"].get("namespace") is None


def test_stored_kinds_are_checked_as_kube_checks_metadata(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}}))
    run = _run(str(path))
    assert run.exit_code == 2
    assert run.stderr.startswith(
        f'error: {path}: ConfigMap "default/Bad_Name": metadata.name: Invalid value: "Bad_Name": a lowercase '
        "RFC 1123 subdomain must consist of lower case alphanumeric characters"
    )
