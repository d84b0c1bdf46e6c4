"""Manifests for the dashboard tests."""

from __future__ import annotations

from typing import Any


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110") -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {
            "capacity": alloc,
            "allocatable": alloc,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(name: str, cpu: str, memory: str = "1Gi", node_name: str = "", **labels: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]
    }
    if node_name:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node_name}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": spec,
    }


def reservation(name: str, cpu: str, node_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "nodeName": node_name,
                    "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}],
                }
            },
            "owners": [{"object": {"name": "owner-pod", "namespace": "default"}}],
            "ttl": "1h",
        },
    }


QUOTA = {
    "apiVersion": "scheduling.x-k8s.io/v1alpha1",
    "kind": "ElasticQuota",
    "metadata": {"name": "team-a", "namespace": "default"},
    "spec": {"min": {"cpu": "2", "memory": "4Gi"}, "max": {"cpu": "6", "memory": "12Gi"}},
}
PODGROUP = {
    "apiVersion": "scheduling.x-k8s.io/v1alpha1",
    "kind": "PodGroup",
    "metadata": {"name": "gang", "namespace": "default"},
    "spec": {"minMember": 3},
}
