"""A pod bound by spec.nodeName to a node that does not exist stays Pending; kube's pod GC deletes it after 40s."""

from __future__ import annotations

from typing import Any

from batch_helpers import NODE, simulate

GHOST: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "ghost"},
    "spec": {"nodeName": "missing", "containers": [{"name": "c", "image": "nginx"}]},
}


def test_pod_of_a_missing_node_stays_pending_until_pod_gc() -> None:
    r = simulate([NODE, GHOST], "--until", "39s", "-o", "table")
    assert r.exit_code == 0, r.stderr
    assert r.table("NAMESPACE   NAME    READY") == [
        "NAMESPACE   NAME    READY   STATUS    RESTARTS   AGE   NODE",
        "default     ghost   0/1     Pending   0          39s   missing",
    ]
    r = simulate([NODE, GHOST], "--until", "39s")
    assert r.get("Pod", "ghost")["status"] == {"phase": "Pending"}
    r = simulate([NODE, GHOST], "--until", "40s")
    assert r.objects("Pod") == []


def test_pod_starts_when_its_node_appears() -> None:
    later_node = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "node-later"},
        "spec": {"steps": [{"at": "20s", "create": [{**NODE, "metadata": {"name": "missing"}}]}]},
    }
    r = simulate([NODE, GHOST, later_node], "--until", "1m", "-o", "table")
    assert r.exit_code == 0, r.stderr
    assert r.table("NAMESPACE   NAME    READY") == [
        "NAMESPACE   NAME    READY   STATUS    RESTARTS   AGE   NODE",
        "default     ghost   1/1     Running   0          60s   missing",
    ]
    r = simulate([NODE, GHOST, later_node], "--until", "1m")
    assert r.get("Pod", "ghost")["status"]["startTime"] == "2024-01-01T00:00:20Z"
