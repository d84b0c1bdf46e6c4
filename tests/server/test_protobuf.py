"""Kubernetes protobuf bodies: hand-built bytes, round trips per kind, kubectl's real body, bad input."""

from __future__ import annotations

import http.server
import shutil
import subprocess
import threading
from typing import Any

import pytest

from berth.api.errors import BadRequest
from berth.server import protobuf
from berth.server.protobuf import CONTENT_TYPE, MAGIC, ProtobufError, decode, encode
from berth.server.protobuf_schema import KINDS, MESSAGES

# --- an independent, minimal protobuf writer (field numbers from k8s.io/api's generated.proto) ---------


def _v(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def vint(number: int, value: int) -> bytes:
    """A varint field."""
    return _v(number << 3) + _v(value)


def ld(number: int, *parts: bytes | str) -> bytes:
    """A length-delimited field whose payload is the concatenation of *parts*."""
    payload = b"".join(p.encode() if isinstance(p, str) else p for p in parts)
    return _v(number << 3 | 2) + _v(len(payload)) + payload


def entry(number: int, key: str, value: bytes | str) -> bytes:
    """One map<string, T> entry."""
    return ld(number, ld(1, key), ld(2, value))


def envelope(api_version: str, kind: str, raw: bytes, *extra: bytes) -> bytes:
    """k8s\\x00 + runtime.Unknown{1 TypeMeta{1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding, 4 contentType}."""
    return (
        MAGIC + ld(1, ld(1, api_version), ld(2, kind)) + ld(2, raw) + ld(3, "") + ld(4, "") + b"".join(extra)
    )


# kubectl 1.32.4 `create deployment web --image=nginx --replicas=2 --dry-run=server`, captured from a stub.
KUBECTL_DEPLOYMENT = bytes.fromhex(
    "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412ab010a1f0a0377656212001a0022002a0032003800"
    "42005a0a0a036170701203776562127a0802120c0a0a0a0361707012037765621a600a1c0a0012001a0022002a00320038"
    "0042005a0a0a036170701203776562124012220a056e67696e7812056e67696e782a0042006a0072008001008801009001"
    "00a201001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a0c08001000180020"
    "00280038001a002200"
)

KUBECTL_DEPLOYMENT_DICT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]},
        },
        "strategy": {},
    },
    "status": {},
}


def test_content_type() -> None:
    assert CONTENT_TYPE == "application/vnd.kubernetes.protobuf"


def test_captured_kubectl_body_decodes_to_the_deployment_kubectl_meant() -> None:
    unknown: list[str] = []
    assert decode(KUBECTL_DEPLOYMENT, unknown) == KUBECTL_DEPLOYMENT_DICT
    assert unknown == []
    assert decode(encode(KUBECTL_DEPLOYMENT_DICT)) == KUBECTL_DEPLOYMENT_DICT


class _Recorder(http.server.BaseHTTPRequestHandler):
    bodies: list[tuple[str, str, bytes]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._answer(404, b'{"kind":"Status","apiVersion":"v1","status":"Failure","code":404}')

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.bodies.append((self.path, self.headers.get("Content-Type", ""), body))
        self._answer(201, b'{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}}')


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl on PATH")
def test_live_kubectl_create_deployment_body() -> None:
    _Recorder.bodies = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        command = [
            "kubectl",
            "create",
            "deployment",
            "web",
            "--image=nginx",
            "--replicas=2",
            "--dry-run=server",
        ]
        command += [f"--server=http://127.0.0.1:{server.server_address[1]}", "--request-timeout=10s"]
        subprocess.run(command, capture_output=True, timeout=30, check=False)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    posts = [b for b in _Recorder.bodies if "/deployments" in b[0]]
    assert posts, "kubectl sent no create request"
    path, content_type, body = posts[0]
    assert path.startswith("/apis/apps/v1/namespaces/default/deployments")
    if content_type != CONTENT_TYPE:
        pytest.skip(f"this kubectl sends {content_type}, not protobuf")
    obj = decode(body)
    assert obj["metadata"]["name"] == "web"
    assert obj["metadata"]["labels"] == {"app": "web"}
    assert obj["spec"]["replicas"] == 2
    assert obj["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert obj["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"
    assert obj == KUBECTL_DEPLOYMENT_DICT


# --- hand-built bytes ------------------------------------------------------------------------------


def test_hand_built_pod() -> None:
    meta = (
        ld(1, "p") + ld(2, "") + ld(3, "ns") + vint(7, 0) + ld(8, b"") + entry(11, "app", "x") + ld(14, "f")
    )
    requests = entry(2, "cpu", ld(1, "500m")) + entry(2, "memory", ld(1, "1Gi"))
    container = (
        ld(1, "c") + ld(2, "img") + ld(6, ld(1, "http"), vint(3, 8080), ld(4, "TCP")) + ld(8, requests)
    )
    container += ld(7, ld(1, "A"), ld(2, "1")) + vint(16, 0)
    toleration = ld(1, "k") + ld(2, "Exists") + ld(4, "NoExecute") + vint(5, 0)
    spec = ld(2, container) + ld(3, "Always") + vint(4, 30) + ld(10, "n1") + ld(22, toleration) + vint(25, 0)
    body = envelope("v1", "Pod", ld(1, meta) + ld(2, spec) + ld(3, b""))
    assert decode(body) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "x"}, "finalizers": ["f"]},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "img",
                    "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                    "env": [{"name": "A", "value": "1"}],
                    "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "nodeName": "n1",
            "tolerations": [
                {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}
            ],
            "priority": 0,
        },
        "status": {},
    }


def test_hand_built_delete_options_keep_present_zeroes() -> None:
    raw = vint(1, 0) + ld(2, ld(1, "u-1")) + vint(3, 0) + ld(4, "Foreground") + ld(5, "All")
    assert decode(envelope("v1", "DeleteOptions", raw)) == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "u-1"},
        "orphanDependents": False,
        "propagationPolicy": "Foreground",
        "dryRun": ["All"],
    }


def test_hand_built_eviction() -> None:
    raw = ld(1, ld(1, "p"), ld(3, "default")) + ld(2, vint(1, 5), ld(2, ld(2, "42")))
    assert decode(envelope("policy/v1", "Eviction", raw)) == {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "p", "namespace": "default"},
        "deleteOptions": {"gracePeriodSeconds": 5, "preconditions": {"resourceVersion": "42"}},
    }


def test_hand_built_node_with_time_taint_and_status() -> None:
    taint = ld(1, "k") + ld(2, "v") + ld(3, "NoSchedule") + ld(4, vint(1, 1_700_000_000))
    spec = ld(3, "fake://n1") + vint(4, 1) + ld(5, taint)
    condition = ld(1, "Ready") + ld(2, "True") + ld(4, vint(1, 1_700_000_001)) + ld(5, "KubeletReady")
    status = entry(1, "cpu", ld(1, "4")) + entry(2, "cpu", ld(1, "3900m")) + ld(4, condition)
    meta = ld(1, "n1") + ld(8, vint(1, 86400))
    assert decode(envelope("v1", "Node", ld(1, meta) + ld(2, spec) + ld(3, status))) == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "creationTimestamp": "1970-01-02T00:00:00Z"},
        "spec": {
            "providerID": "fake://n1",
            "unschedulable": True,
            "taints": [
                {"key": "k", "value": "v", "effect": "NoSchedule", "timeAdded": "2023-11-14T22:13:20Z"}
            ],
        },
        "status": {
            "capacity": {"cpu": "4"},
            "allocatable": {"cpu": "3900m"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastTransitionTime": "2023-11-14T22:13:21Z",
                    "reason": "KubeletReady",
                }
            ],
        },
    }


def test_hand_built_int_or_string_and_negative_ints() -> None:
    rolling = ld(1, vint(1, 1), ld(3, "25%")) + ld(2, vint(1, 0), vint(2, 1))
    strategy = ld(1, "RollingUpdate") + ld(2, rolling)
    spec = vint(1, -1) + ld(4, strategy)
    assert decode(envelope("apps/v1", "Deployment", ld(2, spec))) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "spec": {
            "replicas": -1,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
        },
    }


def test_packed_and_unpacked_repeated_ints() -> None:
    packed = ld(4, _v(1) + _v(2) + _v(300))
    unpacked = vint(4, 1) + vint(4, 2) + vint(4, 300)
    for security in (packed, unpacked):
        obj = decode(envelope("v1", "Pod", ld(2, ld(14, security))))
        assert obj["spec"]["securityContext"] == {"supplementalGroups": [1, 2, 300]}


def test_unknown_fields_are_skipped_and_reported() -> None:
    meta = ld(1, "x") + vint(99, 7) + ld(98, "junk") + _v(97 << 3 | 5) + b"\x01\x02\x03\x04"
    unknown: list[str] = []
    obj = decode(envelope("v1", "Namespace", ld(1, meta) + vint(50, 1)), unknown)
    assert obj == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}
    assert unknown == [
        "metadata: meta.ObjectMeta field 99 (wire type 0)",
        "metadata: meta.ObjectMeta field 98 (wire type 2)",
        "metadata: meta.ObjectMeta field 97 (wire type 5)",
        "<root>: core.Namespace field 50 (wire type 0)",
    ]


def test_options_kinds_are_registered_in_every_group_version() -> None:
    for api_version in ("v1", "apps/v1", "policy/v1", "meta.k8s.io/v1"):
        assert decode(envelope(api_version, "DeleteOptions", vint(1, 3)))["gracePeriodSeconds"] == 3


# --- round trips ----------------------------------------------------------------------------------

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-1",
        "namespace": "default",
        "uid": "5d1c",
        "resourceVersion": "17",
        "generation": 1,
        "creationTimestamp": "2024-05-01T10:00:00Z",
        "deletionTimestamp": "2024-05-01T11:00:00Z",
        "deletionGracePeriodSeconds": 0,
        "labels": {"app": "web", "tier": "front"},
        "annotations": {"berth.dev/duration": "30s"},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web-abc",
                "uid": "9f",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "finalizers": ["example.com/keep"],
        "managedFields": [
            {
                "manager": "kubectl",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2024-05-01T10:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}},
            }
        ],
    },
    "spec": {
        "containers": [
            {
                "name": "app",
                "image": "nginx:1.27",
                "command": ["nginx"],
                "args": ["-g", "daemon off;"],
                "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
                "env": [
                    {"name": "MODE", "value": "prod"},
                    {
                        "name": "NODE",
                        "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
                    },
                ],
                "resources": {
                    "limits": {"cpu": "1", "memory": "512Mi"},
                    "requests": {"cpu": "250m", "memory": "256Mi", "nvidia.com/gpu": "1"},
                },
                "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
                "readinessProbe": {
                    "httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                    "periodSeconds": 5,
                },
                "livenessProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 3},
                "imagePullPolicy": "IfNotPresent",
                "securityContext": {"runAsUser": 0, "privileged": False},
            }
        ],
        "volumes": [
            {"name": "data", "emptyDir": {"sizeLimit": "1Gi"}},
            {"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420}},
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "nodeName": "n1",
        "schedulerName": "koord-scheduler",
        "priorityClassName": "high",
        "priority": 1000,
        "tolerations": [
            {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}],
                            "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}],
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}}
                ],
            },
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "cache"}},
                        "topologyKey": "kubernetes.io/hostname",
                        "namespaces": ["default"],
                    }
                ]
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "labelSelector": {
                                "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]
                            },
                            "topologyKey": "topology.kubernetes.io/zone",
                            "matchLabelKeys": ["pod-template-hash"],
                        },
                    }
                ]
            },
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
                "minDomains": 2,
                "nodeAffinityPolicy": "Honor",
            }
        ],
        "overhead": {"cpu": "10m"},
        "automountServiceAccountToken": False,
        "serviceAccountName": "default",
    },
    "status": {
        "phase": "Running",
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2024-05-01T10:00:01Z"}
        ],
        "hostIP": "10.0.0.1",
        "podIP": "10.1.0.5",
        "startTime": "2024-05-01T10:00:02Z",
        "qosClass": "Burstable",
    },
}

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}, "generation": 3},
    "spec": {
        "replicas": 0,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]},
        },
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
        "minReadySeconds": 5,
        "revisionHistoryLimit": 10,
        "paused": True,
        "progressDeadlineSeconds": 600,
    },
    "status": {
        "observedGeneration": 3,
        "replicas": 2,
        "readyReplicas": 2,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "lastUpdateTime": "2024-05-01T10:00:00Z",
                "lastTransitionTime": "2024-05-01T10:00:00Z",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
            }
        ],
    },
}

ROUND_TRIPS: list[dict[str, Any]] = [
    POD,
    DEPLOYMENT,
    KUBECTL_DEPLOYMENT_DICT,
    {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web-abc", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "minReadySeconds": 1,
            "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c"}]}},
        },
        "status": {"replicas": 2, "fullyLabeledReplicas": 2, "availableReplicas": 1},
    },
    {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "web-1", "namespace": "default"},
        "deleteOptions": {
            "gracePeriodSeconds": 0,
            "preconditions": {"uid": "5d1c", "resourceVersion": "17"},
            "propagationPolicy": "Background",
            "dryRun": ["All"],
        },
    },
    {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 30,
        "preconditions": {"uid": "", "resourceVersion": "9"},
        "orphanDependents": False,
        "ignoreStoreReadErrorWithClusterBreakingPotential": True,
    },
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1", "zone": "a"}},
        "spec": {
            "podCIDR": "10.1.0.0/24",
            "podCIDRs": ["10.1.0.0/24"],
            "unschedulable": True,
            "taints": [
                {
                    "key": "node.kubernetes.io/unschedulable",
                    "effect": "NoSchedule",
                    "timeAdded": "2024-05-01T10:00:00Z",
                }
            ],
        },
        "status": {
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "3900m", "memory": "15Gi", "pods": "110"},
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastHeartbeatTime": "2024-05-01T10:00:00Z",
                    "lastTransitionTime": "2024-05-01T09:00:00Z",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
            "nodeInfo": {"kubeletVersion": "v1.32.0", "architecture": "amd64", "operatingSystem": "linux"},
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "message": 'Pod "x" is invalid: spec.containers: Required value',
        "reason": "Invalid",
        "details": {
            "name": "x",
            "kind": "Pod",
            "causes": [
                {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers"}
            ],
            "retryAfterSeconds": 1,
        },
        "code": 422,
    },
    {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "5"},
        "spec": {"replicas": 3},
        "status": {"replicas": 2, "selector": "app=web"},
    },
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb", "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"currentHealthy": 2, "desiredHealthy": 1, "disruptionsAllowed": 1, "expectedPods": 2},
    },
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
        "globalDefault": True,
        "preemptionPolicy": "Never",
    },
    {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "n1", "namespace": "kube-node-lease"},
        "spec": {
            "holderIdentity": "n1",
            "leaseDurationSeconds": 40,
            "renewTime": "2024-05-01T10:00:00.123456Z",
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web-1", "namespace": "default"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    },
    {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web-1.1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web-1"},
        "reason": "Scheduled",
        "message": "Successfully assigned default/web-1 to n1",
        "source": {"component": "koord-scheduler"},
        "count": 1,
        "type": "Normal",
        "firstTimestamp": "2024-05-01T10:00:00Z",
    },
    {
        "apiVersion": "v1",
        "kind": "PodList",
        "metadata": {"resourceVersion": "99", "continue": "tok", "remainingItemCount": 0},
        "items": [{"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c"}]}}],
    },
]


@pytest.mark.parametrize("obj", ROUND_TRIPS, ids=lambda o: str(o["kind"]))
def test_round_trip(obj: dict[str, Any]) -> None:
    body = encode(obj)
    assert body.startswith(MAGIC)
    unknown: list[str] = []
    assert decode(body, unknown) == obj
    assert unknown == []


def test_every_registered_kind_encodes_an_empty_object() -> None:
    for api_version, kind in KINDS:
        assert decode(encode({"apiVersion": api_version, "kind": kind})) == {
            "apiVersion": api_version,
            "kind": kind,
        }


def test_schema_references_only_known_types() -> None:
    specials = {"Quantity", "Time", "MicroTime", "Duration", "IntOrString", "RawExtension", "FieldsV1"}
    scalars = {"string", "int32", "int64", "bool", "bytes", "double", "float"}
    for fields in MESSAGES.values():
        for _name, typ, flags in fields.values():
            base = typ.removeprefix("[]").removeprefix("{}")
            assert base in MESSAGES or base in specials or base in scalars, typ
            assert set(flags) <= {"p", "z", "i"}


def test_encode_drops_keys_outside_the_schema() -> None:
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}, "extra": 1}
    assert decode(encode(obj)) == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}


def test_encode_rejects_unregistered_kinds_and_bad_types() -> None:
    with pytest.raises(ProtobufError, match="no protobuf schema"):
        encode({"apiVersion": "v1", "kind": "Widget"})
    with pytest.raises(ProtobufError, match=r"spec\.replicas"):
        encode({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": "two"}})
    with pytest.raises(ProtobufError, match="RFC 3339"):
        encode({"apiVersion": "v1", "kind": "Pod", "metadata": {"creationTimestamp": "yesterday"}})
    assert protobuf.is_registered({"apiVersion": "apps/v1", "kind": "Deployment"})
    assert not protobuf.is_registered({"apiVersion": "apps/v2", "kind": "Deployment"})


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "k8s\\x00"),
        (b'{"kind":"Pod"}', "k8s\\x00"),
        (MAGIC + b"\x0a", "truncated varint"),
        (MAGIC + b"\x0a\x05ab", "runs past the end"),
        (MAGIC + b"\x0b", "unsupported wire type 3"),
        (envelope("v1", "Pod", ld(1, ld(1, b"\xff\xfe"))), "UTF-8"),
        (envelope("v1", "Pod", vint(1, 3)), "wire type 2"),
        (MAGIC + ld(1, ld(1, "v1"), ld(2, "Pod")) + ld(3, "gzip"), "contentEncoding"),
        (MAGIC + ld(2, b""), "Kind"),
    ],
)
def test_malformed_bodies_are_bad_requests(body: bytes, message: str) -> None:
    with pytest.raises(BadRequest) as info:
        decode(body)
    assert message in info.value.message
    assert info.value.code == 400


def test_unknown_kind_message() -> None:
    with pytest.raises(BadRequest) as info:
        decode(envelope("apps/v1", "Widget", b""))
    assert 'no kind "Widget" is registered for version "apps/v1"' in info.value.message
    with pytest.raises(BadRequest, match='no kind "Deployment" is registered for version "apps/v9"'):
        decode(envelope("apps/v9", "Deployment", b""))


def test_watch_event_nests_an_object_and_deep_nesting_is_refused() -> None:
    pod = envelope("v1", "Pod", ld(1, ld(1, "p")))
    event = envelope("v1", "WatchEvent", ld(1, "ADDED") + ld(2, ld(1, pod)))
    assert decode(event) == {
        "apiVersion": "v1",
        "kind": "WatchEvent",
        "type": "ADDED",
        "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
    }
    assert decode(encode(decode(event))) == decode(event)
    for _ in range(80):
        event = envelope("v1", "WatchEvent", ld(1, "ADDED") + ld(2, ld(1, event)))
    with pytest.raises(BadRequest, match="nesting deeper"):
        decode(event)
