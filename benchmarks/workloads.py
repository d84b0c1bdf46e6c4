"""Object generators with the node and pod shapes of kube's scheduler_perf."""

from __future__ import annotations

from typing import Any


def make_node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "32Gi",
    pods: str = "110",
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """scheduler_perf's node-default.yaml shape."""
    res = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"capacity": dict(res), "allocatable": dict(res)},
    }


def make_pod(
    name: str, namespace: str = "default", *, cpu: str = "100m", memory: str = "500Mi"
) -> dict[str, Any]:
    """scheduler_perf's pod-default.yaml shape."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {
                        "requests": {"cpu": cpu, "memory": memory},
                        "limits": {"cpu": cpu, "memory": memory},
                    },
                }
            ]
        },
    }


def scheduling_basic(
    nodes: int = 5000, init_pods: int = 1000, pods: int = 10000
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(setup objects: nodes + init pods, measured pods) of SchedulingBasic."""
    setup: list[dict[str, Any]] = [make_node(f"node-{i}") for i in range(nodes)]
    setup += [make_pod(f"init-pod-{i}", "sched-setup") for i in range(init_pods)]
    measured = [make_pod(f"pod-{i}", "sched-test") for i in range(pods)]
    return setup, measured


def make_reservation(
    name: str,
    node: str,
    *,
    cpu: str = "1",
    memory: str = "4Gi",
    owner_label: tuple[str, str] = ("app", "owner"),
    allocate_once: bool = False,
) -> dict[str, Any]:
    """A Reservation pinned to ``node`` for pods carrying ``owner_label``."""
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"namespace": "default"},
                "spec": {
                    "nodeName": node,
                    "containers": [
                        {"name": "reserve", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
                    ],
                },
            },
            "owners": [{"labelSelector": {"matchLabels": {owner_label[0]: owner_label[1]}}}],
            "allocateOnce": allocate_once,
            "ttl": "0",
        },
    }


def scheduling_reservations(
    nodes: int = 5000, init_pods: int = 1000, pods: int = 10000
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """SchedulingBasic plus one reservation per node; the measured pods are the reservations' owners."""
    setup, measured = scheduling_basic(nodes, init_pods, pods)
    setup += [make_reservation(f"reservation-{i}", f"node-{i}") for i in range(nodes)]
    for p in measured:
        p["metadata"]["labels"] = {"app": "owner"}
    return setup, measured
