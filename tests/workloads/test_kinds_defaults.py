"""kube-apiserver's defaults for StatefulSets, DaemonSets, Services and Secrets, through ``berth simulate``."""

from __future__ import annotations

from pathlib import Path

from kinds_helpers import daemon_set, node, simulate, stateful_set


def test_defaults_as_kube_apiserver_writes_them(tmp_path: Path) -> None:
    sts = stateful_set("db", 1)
    del sts["spec"]["replicas"]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "sessionAffinity": "ClientIP", "ports": [{"port": 80}]},
    }
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "data": {"a": "eA=="},
        "stringData": {"user": "shop", "a": "y"},
    }
    run = simulate(tmp_path, [node("n1"), sts, daemon_set("agent"), service, secret])
    assert run.exit_code == 0, run.stderr
    spec = run.get("StatefulSet", "db")["spec"]
    assert {
        k: spec[k] for k in ("replicas", "podManagementPolicy", "updateStrategy", "revisionHistoryLimit")
    } == {
        "replicas": 1,
        "podManagementPolicy": "OrderedReady",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "revisionHistoryLimit": 10,
    }
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    ds = run.get("DaemonSet", "agent")["spec"]
    assert (ds["updateStrategy"], ds["revisionHistoryLimit"]) == (
        {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
        10,
    )
    svc = run.get("Service", "web")["spec"]
    assert svc == {
        "selector": {"app": "web"},
        "sessionAffinity": "ClientIP",
        "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
        "type": "ClusterIP",
        "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
        "internalTrafficPolicy": "Cluster",
    }
    stored = run.get("Secret", "s")
    assert (stored["type"], stored["data"], "stringData" in stored) == (
        "Opaque",
        {"a": "eQ==", "user": "c2hvcA=="},
        False,
    )
