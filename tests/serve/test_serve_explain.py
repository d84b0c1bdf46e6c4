"""``kubectl explain`` against `berth serve` (the OpenAPI v3 and v2 schemas), and the example manifests created
with kubectl's default validation.

kubectl explain reads ``/openapi/v3`` (``--output plaintext-openapiv2``: ``/openapi/v2``); the FIELDS lists it
prints are compared line by line: field names, types and ``-required-``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from serve_helpers import KUBECTL, Served, running

from berth.server.discovery import served_kinds

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="the end-to-end tests need kubectl on PATH")

EXAMPLES = Path(__file__).parents[2] / "examples"
KUBECTL_1_27 = Path("/usr/lib/google-cloud-sdk/bin/kubectl.1.27")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("explain"), "--api-only") as served:
        yield served


def explain(server: Served, *args: str, binary: str | None = None) -> str:
    done = server.kubectl("explain", *args, binary=binary)
    assert done.returncode == 0, done.stderr
    return done.stdout


def fields(out: str, indent: str = "  ") -> list[str]:
    """The FIELDS lines (``name<TAB><type>[ -required-]``) at one indentation, without the indentation."""
    return [line[len(indent) :] for line in out.splitlines() if re.match(rf"^{indent}\S+\t<", line)]


CONTAINER_FIELDS = [
    "args\t<[]string>",
    "command\t<[]string>",
    "env\t<[]EnvVar>",
    "envFrom\t<[]EnvFromSource>",
    "image\t<string>",
    "imagePullPolicy\t<string>",
    "lifecycle\t<Lifecycle>",
    "livenessProbe\t<Probe>",
    "name\t<string> -required-",
    "ports\t<[]ContainerPort>",
    "readinessProbe\t<Probe>",
    "resizePolicy\t<[]ContainerResizePolicy>",
    "resources\t<ResourceRequirements>",
    "restartPolicy\t<string>",
    "restartPolicyRules\t<[]ContainerRestartRule>",
    "securityContext\t<SecurityContext>",
    "startupProbe\t<Probe>",
    "stdin\t<boolean>",
    "stdinOnce\t<boolean>",
    "terminationMessagePath\t<string>",
    "terminationMessagePolicy\t<string>",
    "tty\t<boolean>",
    "volumeDevices\t<[]VolumeDevice>",
    "volumeMounts\t<[]VolumeMount>",
    "workingDir\t<string>",
]


def test_explain_pod_spec_containers(server: Served) -> None:
    out = explain(server, "pod.spec.containers")
    lines = out.splitlines()
    assert lines[:4] == ["KIND:       Pod", "VERSION:    v1", "", "FIELD: containers <[]Container>"]
    assert "DESCRIPTION:" in lines and "FIELDS:" in lines
    assert fields(out) == CONTAINER_FIELDS
    name = lines.index("  name\t<string> -required-")
    assert lines[name + 1] == "    The container's name, unique in the pod."


@pytest.mark.skipif(not KUBECTL_1_27.is_file(), reason="kubectl 1.27 is not installed")
def test_explain_with_kubectl_1_27(server: Served) -> None:
    assert fields(explain(server, "pod.spec.containers", binary=str(KUBECTL_1_27))) == CONTAINER_FIELDS


RESERVATION_SPEC_FIELDS = [
    "allocateOnce\t<boolean>",
    "allocatePolicy\t<string>",
    "expires\t<string>",
    "owners\t<[]Object> -required-",
    "preAllocation\t<boolean>",
    "preAllocationPolicy\t<Object>",
    "taints\t<[]Object>",
    "template\t<Object> -required-",
    "ttl\t<string>",
    "unschedulable\t<boolean>",
]


def test_explain_reservation_spec(server: Served) -> None:
    out = explain(server, "reservation.spec")
    lines = out.splitlines()
    assert lines[:5] == [
        "GROUP:      scheduling.koordinator.sh",
        "KIND:       Reservation",
        "VERSION:    v1alpha1",
        "",
        "FIELD: spec <Object>",
    ]
    assert fields(out) == RESERVATION_SPEC_FIELDS
    policy = lines.index("  allocatePolicy\t<string>")
    assert lines[policy + 1] == "  enum: Aligned, Restricted"


def test_explain_reservation_spec_from_openapi_v2(server: Served) -> None:
    out = explain(server, "reservation.spec", "--output", "plaintext-openapiv2")
    assert out.splitlines()[:4] == [
        "KIND:     Reservation",
        "VERSION:  scheduling.koordinator.sh/v1alpha1",
        "",
        "RESOURCE: spec <Object>",
    ]
    # apiextensions-apiserver's v2 form of a field kept as x-kubernetes-preserve-unknown-fields has no type
    expected = [f.replace("template\t<Object>", "template\t<>") for f in RESERVATION_SPEC_FIELDS]
    assert fields(out, "   ") == expected


def test_explain_deployment_recursive(server: Served) -> None:
    out = explain(server, "deploy", "--recursive")
    assert out.splitlines()[:21] == [
        "GROUP:      apps",
        "KIND:       Deployment",
        "VERSION:    v1",
        "",
        "DESCRIPTION:",
        "    Declarative updates for pods: manages ReplicaSets, rolling from one pod",
        "    template to the next.",
        "    ",
        "FIELDS:",
        "  apiVersion\t<string>",
        "  kind\t<string>",
        "  metadata\t<ObjectMeta>",
        "    annotations\t<map[string]string>",
        "    creationTimestamp\t<string>",
        "    deletionGracePeriodSeconds\t<integer>",
        "    deletionTimestamp\t<string>",
        "    finalizers\t<[]string>",
        "    generateName\t<string>",
        "    generation\t<integer>",
        "    labels\t<map[string]string>",
        "    managedFields\t<[]ManagedFieldsEntry>",
    ]
    assert fields(out) == [
        "apiVersion\t<string>",
        "kind\t<string>",
        "metadata\t<ObjectMeta>",
        "spec\t<DeploymentSpec>",
        "status\t<DeploymentStatus>",
    ]
    spec = fields(out.split("  spec\t<DeploymentSpec>\n")[1].split("  status\t")[0], "    ")
    assert spec == [
        "minReadySeconds\t<integer>",
        "paused\t<boolean>",
        "progressDeadlineSeconds\t<integer>",
        "replicas\t<integer>",
        "revisionHistoryLimit\t<integer>",
        "selector\t<LabelSelector> -required-",
        "strategy\t<DeploymentStrategy>",
        "template\t<PodTemplateSpec> -required-",
    ]


def test_explain_both_elastic_quota_groups(server: Served) -> None:
    for group in ("scheduling.x-k8s.io", "scheduling.sigs.k8s.io"):
        out = explain(server, "elasticquota.spec", f"--api-version={group}/v1alpha1")
        assert out.splitlines()[0] == f"GROUP:      {group}"
        assert fields(out) == ["max\t<map[string]Object>", "min\t<map[string]Object>"]


# --- the examples, validated as kubectl validates by default -----------------------------------------------

_NOT_FOR_KUBECTL = {"descheduler/snapshot.yaml"}
"""A snapshot of a live cluster for ``berth deschedule`` (pods with their admitted priority), not a manifest
to create."""
_REAL = ("quickstart/01-cluster.yaml", "quickstart/02-workloads.yaml")
"""Created for real (their pods need the PriorityClasses created just before them)."""


def example_files() -> list[str]:
    """Example files whose documents are all kinds (or Lists) the API serves."""
    served = {("v1", "List")} | {(k.api_version, k.kind) for k in served_kinds()}
    out = []
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        name = str(path.relative_to(EXAMPLES))
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        if name not in _NOT_FOR_KUBECTL and all((d.get("apiVersion"), d.get("kind")) in served for d in docs):
            out.append(name)
    return out


def test_the_examples_are_created(server: Served) -> None:
    files = example_files()
    assert len(files) >= 15 and set(_REAL) <= set(files)
    args = [arg for name in files if name not in _REAL for arg in ("-f", str(EXAMPLES / name))]
    dry = server.kubectl("create", "--dry-run=server", "--validate=strict", *args)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.count("created (server dry run)") >= 60
    client = server.kubectl("apply", "--dry-run=client", *args)
    assert client.returncode == 0, client.stderr
    real = server.kubectl("create", *[arg for name in _REAL for arg in ("-f", str(EXAMPLES / name))])
    assert real.returncode == 0, real.stderr
    assert "priorityclass.scheduling.k8s.io/high-priority created" in real.stdout.splitlines()
    assert "pod/db created" in real.stdout.splitlines()
