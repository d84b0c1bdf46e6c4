"""`berth serve` with the real kubectl: an application bundle applied, listed with kube's columns, and changed
(StatefulSet scaled, a stored ConfigMap applied again)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from serve.serve_helpers import KUBECTL, Served, eventually, running

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="the end-to-end tests need kubectl on PATH")

BUNDLE = Path(__file__).resolve().parents[2] / "examples" / "bundle"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("kinds")) as served:
        yield served


def _json(server: Served, *args: str) -> Any:
    done = server.kubectl("get", *args, "-o", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _ok(done: Any) -> str:
    assert done.returncode == 0, done.stderr
    return str(done.stdout)


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines() if line.strip()]


def _quick_app(folder: Path) -> Path:
    """The bundle's application with the database pods starting in 1 s and leaving in 1 s, not 20 s and 30 s
    (the server runs on the real clock)."""
    text = (BUNDLE / "02-app.yaml").read_text()
    quick = text.replace(
        "annotations: {berth.dev/startup: 20s}", "annotations: {berth.dev/startup: 1s}"
    ).replace(
        "      spec:\n        containers:\n        - name: postgres",
        "      spec:\n        terminationGracePeriodSeconds: 1\n        containers:\n        - name: postgres",
    )
    assert quick.count(": 1s}") == 1 and quick.count("terminationGracePeriodSeconds: 1") == 1
    path = folder / "02-app.yaml"
    path.write_text(quick)
    return path


def test_the_bundle_is_applied_and_listed(server: Served, tmp_path: Path) -> None:
    out = _ok(server.kubectl("apply", "-f", str(BUNDLE / "01-cluster.yaml"), "-f", str(_quick_app(tmp_path))))
    lines = out.splitlines()
    for expected in (
        "namespace/shop created",
        "configmap/web-config created",
        "secret/db-credentials created",
        "serviceaccount/shop created",
        "service/web created",
        "statefulset.apps/db created",
        "daemonset.apps/log-shipper created",
        "deployment.apps/web created",
        "horizontalpodautoscaler.autoscaling/web created",
        "ingress.networking.k8s.io/shop created",
        "networkpolicy.networking.k8s.io/db-from-web created",
        "role.rbac.authorization.k8s.io/read-config created",
        "storageclass.storage.k8s.io/standard created",
        "persistentvolumeclaim/uploads created",
    ):
        assert expected in lines, out

    def db_ready() -> bool:
        return bool(_json(server, "sts", "db", "-n", "shop").get("status", {}).get("readyReplicas") == 3)

    eventually(db_ready, "the StatefulSet's three pods Ready", limit=90.0)
    eventually(
        lambda: _json(server, "ds", "log-shipper", "-n", "shop")["status"].get("numberReady") == 2,
        "a log-shipper pod on each untainted node",
    )
    pods = {
        p["metadata"]["name"]: p["spec"].get("nodeName") for p in _json(server, "pods", "-n", "shop")["items"]
    }
    db = {k: v for k, v in pods.items() if k.startswith("db-")}
    # spread over the two untainted nodes (tie-breaks are random in real time)
    assert sorted(db) == ["db-0", "db-1", "db-2"] and set(db.values()) == {"node-a", "node-b"}
    assert sorted(v for k, v in pods.items() if k.startswith("log-shipper-")) == ["node-a", "node-b"]

    table = _rows(_ok(server.kubectl("get", "sts,ds,svc,cm", "-n", "shop")))
    assert ["NAME", "READY", "AGE"] in table
    assert table[table.index(["NAME", "READY", "AGE"]) + 1][:2] == ["statefulset.apps/db", "3/3"]
    ds_head = ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR", "AGE"]
    assert ds_head in table
    assert table[table.index(ds_head) + 1][:7] == [
        "daemonset.apps/log-shipper",
        "2",
        "2",
        "2",
        "2",
        "2",
        "<none>",
    ]
    svc_head = ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert svc_head in table
    at = table.index(svc_head)
    assert [row[:5] for row in table[at + 1 : at + 3]] == [
        ["service/db", "ClusterIP", "None", "<none>", "5432/TCP"],
        ["service/web", "ClusterIP", "<none>", "<none>", "80/TCP"],
    ]
    at = table.index(["NAME", "DATA", "AGE"])
    assert table[at + 1][:2] == ["configmap/web-config", "2"]

    rollout = _ok(server.kubectl("rollout", "status", "ds/log-shipper", "-n", "shop", "--timeout=60s"))
    assert rollout.splitlines()[-1] == 'daemon set "log-shipper" successfully rolled out'
    rollout = _ok(server.kubectl("rollout", "status", "sts/db", "-n", "shop", "--timeout=60s"))
    assert rollout.splitlines()[-1] == "partitioned roll out complete: 3 new pods have been updated..."
    every = _ok(server.kubectl("get", "all", "-n", "shop", "-o", "name")).split()
    for name in ("service/web", "service/db", "daemonset.apps/log-shipper", "statefulset.apps/db"):
        assert name in every, every
    assert "horizontalpodautoscaler.autoscaling/web" in every and "configmap/web-config" not in every
    names = _ok(server.kubectl("get", "sa,pvc,secret,ing,netpol,hpa", "-n", "shop", "-o", "name")).split()
    assert names == [
        "serviceaccount/shop",
        "persistentvolumeclaim/data-db-0",
        "persistentvolumeclaim/data-db-1",
        "persistentvolumeclaim/data-db-2",
        "persistentvolumeclaim/uploads",
        "secret/db-credentials",
        "ingress.networking.k8s.io/shop",
        "networkpolicy.networking.k8s.io/db-from-web",
        "horizontalpodautoscaler.autoscaling/web",
    ]


def test_apply_again_changes_a_stored_kind_and_scales_the_set(server: Served) -> None:
    manifest = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config, namespace: shop}\n"
        "data: {LOG_LEVEL: debug, DATABASE_HOST: db.shop.svc.cluster.local}\n"
    )
    assert _ok(server.kubectl("apply", "-f", "-", stdin=manifest)) == "configmap/web-config configured\n"
    assert _json(server, "cm", "web-config", "-n", "shop")["data"]["LOG_LEVEL"] == "debug"
    assert (
        _ok(server.kubectl("scale", "sts", "db", "-n", "shop", "--replicas", "1"))
        == "statefulset.apps/db scaled\n"
    )
    eventually(
        lambda: (
            sorted(
                p["metadata"]["name"] for p in _json(server, "pods", "-n", "shop", "-l", "app=db")["items"]
            )
            == ["db-0"]
        ),
        "db-2 and db-1 deleted",
        limit=120.0,
    )
