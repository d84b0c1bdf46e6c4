"""The real kubectl (every version on this machine, 1.27 to 1.33) discovers Berth's API from the discovery
documents and prints `kubectl get` from the Tables, against a stub HTTP server that serves only those
documents (no `berth serve`)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from discovery_stub import Stub, kubectl_binaries, serve

CREATED = "2024-01-01T00:00:00Z"
NOW = datetime(2024, 1, 1, 0, 5, 30, tzinfo=UTC)
KUBECTLS = kubectl_binaries()

pytestmark = pytest.mark.skipif(not KUBECTLS, reason="no kubectl on PATH")


def _meta(name: str, namespace: str | None = None, created: str = CREATED) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "creationTimestamp": created}
    if namespace:
        meta["namespace"] = namespace
    return meta


OBJECTS: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**_meta("web", "shop"), "labels": {"app": "web"}},
        "spec": {"nodeName": "node-a", "containers": [{"name": "app"}, {"name": "sidecar"}]},
        "status": {
            "phase": "Running",
            "podIPs": [{"ip": "10.0.0.7"}],
            "containerStatuses": [
                {"name": "app", "ready": True},
                {"name": "sidecar", "ready": True, "restartCount": 1},
            ],
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta("giant", "ml", "2024-01-01T00:05:00Z"),
        "spec": {"containers": [{"name": "train"}]},
        "status": {"phase": "Pending", "nominatedNodeName": "gpu-1"},
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta("report", "ml"),
        "spec": {"nodeName": "gpu-1", "containers": [{"name": "c"}]},
        "status": {"phase": "Succeeded"},
    },
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {**_meta("node-a"), "labels": {"node-role.kubernetes.io/control-plane": ""}},
        "spec": {"unschedulable": True},
        "status": {
            "addresses": [{"type": "InternalIP", "address": "192.168.0.10"}],
            "nodeInfo": {
                "kubeletVersion": "v1.32.0",
                "osImage": "Berth",
                "containerRuntimeVersion": "berth://sim",
            },
        },
    },
    {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": _meta("reservation-demo"),
        "spec": {"ttl": "1h"},
        "status": {"phase": "Available", "nodeName": "node-a"},
    },
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": _meta("system-node-critical"),
        "value": 2000001000,
        "preemptionPolicy": "PreemptLowerPriority",
    },
    {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": _meta("team-a", "shop"),
        "spec": {"max": {"cpu": "4"}},
        "status": {"used": {"cpu": "1500m"}},
    },
    {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": _meta("gang", "ml"),
        "spec": {"minMember": 2},
        "status": {"phase": "Running", "running": 2},
    },
]

EXPECTED = {
    ("get", "pods", "-A", "-o", "wide"): """
NAMESPACE   NAME     READY   STATUS      RESTARTS   AGE     IP         NODE     NOMINATED NODE   READINESS GATES
shop        web      2/2     Running     1          5m30s   10.0.0.7   node-a   <none>           <none>
ml          giant    0/1     Pending     0          30s     <none>     <none>   gpu-1            <none>
ml          report   0/1     Completed   0          5m30s   <none>     gpu-1    <none>           <none>
""",
    ("get", "pods", "-n", "ml"): """
NAME     READY   STATUS      RESTARTS   AGE
giant    0/1     Pending     0          30s
report   0/1     Completed   0          5m30s
""",
    ("get", "nodes", "-o", "wide"): """
NAME     STATUS                     ROLES           AGE     VERSION   INTERNAL-IP    EXTERNAL-IP   OS-IMAGE   KERNEL-VERSION   CONTAINER-RUNTIME
node-a   Ready,SchedulingDisabled   control-plane   5m30s   v1.32.0   192.168.0.10   <none>        Berth      <unknown>        berth://sim
""",
    ("get", "reservation"): """
NAME               PHASE       AGE     NODE     TTL   EXPIRES
reservation-demo   Available   5m30s   node-a   1h
""",
    ("get", "pc"): """
NAME                   VALUE        GLOBAL-DEFAULT   AGE     PREEMPTIONPOLICY
system-node-critical   2000001000   false            5m30s   PreemptLowerPriority
""",
    ("get", "elasticquotas", "-n", "shop"): """
NAME     USED              MAX           AGE
team-a   {"cpu":"1500m"}   {"cpu":"4"}   5m30s
""",
    ("get", "pg", "-A"): """
NAMESPACE   NAME   PHASE     MINMEMBER   RUNNING   SUCCEEDED   FAILED   AGE
ml          gang   Running   2           2                              5m30s
""",
    ("api-resources",): """
NAME                              SHORTNAMES   APIVERSION                           NAMESPACED   KIND
configmaps                        cm           v1                                   true         ConfigMap
endpoints                         ep           v1                                   true         Endpoints
events                            ev           v1                                   true         Event
limitranges                       limits       v1                                   true         LimitRange
namespaces                        ns           v1                                   false        Namespace
nodes                             no           v1                                   false        Node
persistentvolumeclaims            pvc          v1                                   true         PersistentVolumeClaim
persistentvolumes                 pv           v1                                   false        PersistentVolume
pods                              po           v1                                   true         Pod
podtemplates                                   v1                                   true         PodTemplate
replicationcontrollers            rc           v1                                   true         ReplicationController
resourcequotas                    quota        v1                                   true         ResourceQuota
secrets                                        v1                                   true         Secret
serviceaccounts                   sa           v1                                   true         ServiceAccount
services                          svc          v1                                   true         Service
mutatingwebhookconfigurations                  admissionregistration.k8s.io/v1      false        MutatingWebhookConfiguration
validatingwebhookconfigurations                admissionregistration.k8s.io/v1      false        ValidatingWebhookConfiguration
controllerrevisions                            apps/v1                              true         ControllerRevision
daemonsets                        ds           apps/v1                              true         DaemonSet
deployments                       deploy       apps/v1                              true         Deployment
replicasets                       rs           apps/v1                              true         ReplicaSet
statefulsets                      sts          apps/v1                              true         StatefulSet
horizontalpodautoscalers          hpa          autoscaling/v2                       true         HorizontalPodAutoscaler
cronjobs                          cj           batch/v1                             true         CronJob
jobs                                           batch/v1                             true         Job
leases                                         coordination.k8s.io/v1               true         Lease
endpointslices                                 discovery.k8s.io/v1                  true         EndpointSlice
events                            ev           events.k8s.io/v1                     true         Event
ingressclasses                                 networking.k8s.io/v1                 false        IngressClass
ingresses                         ing          networking.k8s.io/v1                 true         Ingress
networkpolicies                   netpol       networking.k8s.io/v1                 true         NetworkPolicy
runtimeclasses                                 node.k8s.io/v1                       false        RuntimeClass
poddisruptionbudgets              pdb          policy/v1                            true         PodDisruptionBudget
clusterrolebindings                            rbac.authorization.k8s.io/v1         false        ClusterRoleBinding
clusterroles                                   rbac.authorization.k8s.io/v1         false        ClusterRole
rolebindings                                   rbac.authorization.k8s.io/v1         true         RoleBinding
roles                                          rbac.authorization.k8s.io/v1         true         Role
priorityclasses                   pc           scheduling.k8s.io/v1                 false        PriorityClass
podmigrationjobs                  pmj          scheduling.koordinator.sh/v1alpha1   false        PodMigrationJob
reservations                                   scheduling.koordinator.sh/v1alpha1   false        Reservation
elasticquotas                     eq,eqs       scheduling.sigs.k8s.io/v1alpha1      true         ElasticQuota
podgroups                         pg,pgs       scheduling.sigs.k8s.io/v1alpha1      true         PodGroup
elasticquotas                     eq,eqs       scheduling.x-k8s.io/v1alpha1         true         ElasticQuota
podgroups                         pg,pgs       scheduling.x-k8s.io/v1alpha1         true         PodGroup
csidrivers                                     storage.k8s.io/v1                    false        CSIDriver
csinodes                                       storage.k8s.io/v1                    false        CSINode
storageclasses                    sc           storage.k8s.io/v1                    false        StorageClass
volumeattachments                              storage.k8s.io/v1                    false        VolumeAttachment
""",
    ("api-resources", "--categories", "all", "-o", "name"): """
pods
replicationcontrollers
services
daemonsets.apps
deployments.apps
replicasets.apps
statefulsets.apps
horizontalpodautoscalers.autoscaling
cronjobs.batch
jobs.batch
""",
}


@pytest.fixture(scope="module")
def stub() -> Iterator[Stub]:
    with serve(OBJECTS, NOW) as served:
        yield served


@pytest.fixture(scope="module")
def legacy_stub() -> Iterator[Stub]:
    with serve(OBJECTS, NOW, aggregated=False) as served:
        yield served


def _kubectl(binary: str, stub: Stub, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home.mkdir(parents=True, exist_ok=True)
    kubeconfig = stub.kubeconfig(home)
    return subprocess.run(
        [binary, "--kubeconfig", str(kubeconfig), "--cache-dir", str(home / "cache"), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(home), "KUBECONFIG": str(kubeconfig)},
        timeout=60,
        check=False,
    )


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


@pytest.mark.parametrize("version", sorted(KUBECTLS))
def test_kubectl_discovers_and_prints(version: str, stub: Stub, tmp_path: Path) -> None:
    for args, expected in EXPECTED.items():
        done = _kubectl(KUBECTLS[version], stub, tmp_path / "home", *args)
        assert done.returncode == 0, (args, done.stderr)
        assert _lines(done.stdout) == _lines(expected), args


@pytest.mark.parametrize("version", sorted(KUBECTLS))
def test_kubectl_reads_the_legacy_documents(version: str, legacy_stub: Stub, tmp_path: Path) -> None:
    """A server without aggregated discovery: kubectl falls back to /api/v1 and /apis/{group}/{version}."""
    for args in (("api-resources",), ("get", "pods", "-n", "ml"), ("get", "reservation")):
        done = _kubectl(KUBECTLS[version], legacy_stub, tmp_path / "home", *args)
        assert done.returncode == 0, (args, done.stderr)
        assert _lines(done.stdout) == _lines(EXPECTED[args]), args
    asked = {path.split("?")[0] for path, _ in legacy_stub.requests}
    assert {"/api/v1", "/apis/apps/v1", "/apis/scheduling.koordinator.sh/v1alpha1"} <= asked


def test_kubectl_asks_for_aggregated_discovery_and_tables(stub: Stub, tmp_path: Path) -> None:
    binary = KUBECTLS.get("1.32") or next(iter(KUBECTLS.values()))
    done = _kubectl(binary, stub, tmp_path / "home", "get", "pods", "-n", "ml")
    assert done.returncode == 0, done.stderr
    accepts = {path.split("?")[0]: accept for path, accept in stub.requests}
    assert "as=APIGroupDiscoveryList" in accepts["/apis"]
    assert "as=Table" in accepts["/api/v1/namespaces/ml/pods"]
