"""The new kinds on the wire: protobuf round trips of StatefulSet, DaemonSet and Service (the field tables),
OpenAPI definitions for the kinds stored as given, and strategic merge patches of a Service's ports."""

from __future__ import annotations

from typing import Any

from berth.api.patches import smp_schema, strategic_merge_patch
from berth.server import openapi, openapi_schemas, openapi_v2, protobuf

TEMPLATE = {
    "metadata": {"labels": {"app": "db"}},
    "spec": {"containers": [{"name": "c", "image": "postgres", "resources": {"requests": {"cpu": "1"}}}]},
}
STATEFUL_SET: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": "shop"},
    "spec": {
        "replicas": 0,
        "selector": {"matchLabels": {"app": "db"}},
        "template": TEMPLATE,
        "serviceName": "db",
        "podManagementPolicy": "Parallel",
        "updateStrategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"partition": 0, "maxUnavailable": "50%"},
        },
        "volumeClaimTemplates": [
            {
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }
        ],
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Delete"},
        "ordinals": {"start": 0},
    },
    "status": {"replicas": 0, "availableReplicas": 0, "collisionCount": 0, "currentRevision": "db-1"},
}
DAEMON_SET: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": {"name": "agent", "namespace": "kube-system"},
    "spec": {
        "selector": {"matchLabels": {"app": "db"}},
        "template": TEMPLATE,
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
        "revisionHistoryLimit": 10,
    },
    "status": {
        "currentNumberScheduled": 2,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 2,
        "numberReady": 1,
    },
}
SERVICE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {
        "type": "NodePort",
        "selector": {"app": "web"},
        "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": "http", "nodePort": 30080}],
        "sessionAffinity": "ClientIP",
        "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
        "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster",
    },
    "status": {"loadBalancer": {}},
}


def test_protobuf_round_trips() -> None:
    for obj in (STATEFUL_SET, DAEMON_SET, SERVICE):
        assert protobuf.decode(protobuf.encode(obj)) == obj, obj["kind"]


def test_lists_of_the_modelled_kinds_are_registered() -> None:
    for api_version, kind in (
        ("apps/v1", "StatefulSetList"),
        ("apps/v1", "DaemonSetList"),
        ("v1", "ServiceList"),
    ):
        assert protobuf.message_for(api_version, kind) is not None, kind
    assert protobuf.message_for("v1", "ConfigMap") is None  # stored as given: served as JSON only


def test_stored_kinds_have_open_definitions() -> None:
    v3 = openapi_schemas.definitions_v3()
    config_map = v3["io.k8s.api.core.v1.ConfigMap"]
    assert config_map["x-kubernetes-preserve-unknown-fields"] is True
    assert config_map["x-kubernetes-group-version-kind"] == [
        {"group": "", "version": "v1", "kind": "ConfigMap"}
    ]
    assert set(config_map["properties"]) == {"apiVersion", "kind", "metadata"}
    assert v3["io.k8s.api.rbac.v1.RoleList"]["properties"]["items"]["items"] == {
        "$ref": "#/components/schemas/io.k8s.api.rbac.v1.Role"
    }
    # in v2, as apiextensions-apiserver publishes a schema that keeps unknown fields: no properties
    v2 = openapi_schemas.definitions_v2()
    assert "properties" not in v2["io.k8s.api.networking.v1.Ingress"]
    doc = openapi.document("networking.k8s.io", "v1")
    assert (
        doc is not None
        and "/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses/{name}" in doc["paths"]
    )
    assert (
        "/apis/apps/v1/namespaces/{namespace}/statefulsets/{name}/scale"
        in openapi_v2.document_v2_json()["paths"]
    )


def test_service_ports_merge_by_port() -> None:
    schema = smp_schema("", "Service")
    assert schema is not None
    patched = strategic_merge_patch(SERVICE, {"spec": {"ports": [{"port": 80, "name": "web"}]}}, schema)
    assert patched["spec"]["ports"] == [
        {"name": "web", "protocol": "TCP", "port": 80, "targetPort": "http", "nodePort": 30080}
    ]
    assert smp_schema("", "ConfigMap") == {"metadata": smp_schema("", "Pod")["metadata"]}  # type: ignore[index]
    assert smp_schema("scheduling.x-k8s.io", "PodGroup") is None
