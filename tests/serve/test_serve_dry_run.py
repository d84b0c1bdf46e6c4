"""`berth serve` and the real kubectl: ``--dry-run=server`` on every write verb changes nothing (objects,
resourceVersions, watches), the write options kube refuses, and the managedFields kubectl's writes record."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from serve_helpers import KUBECTL, Served, running

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="the end-to-end tests need kubectl on PATH")

DRY = "--dry-run=server"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("serve-dry-run"), "--api-only") as served:
        yield served


def _pod(name: str, image: str = "nginx:1", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name, **labels}},
        "spec": {"containers": [{"name": "c", "image": image}]},
    }


def _ok(served: Served, *args: str, stdin: str | None = None) -> str:
    done = served.kubectl(*args, stdin=stdin)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _fails(served: Served, *args: str, stdin: str | None = None) -> str:
    done = served.kubectl(*args, stdin=stdin)
    assert (done.returncode, done.stdout) == (1, ""), done
    return done.stderr


def _state(served: Served) -> Any:
    return json.loads(_ok(served, "get", "pods,deployments,namespaces", "-A", "-o", "json"))["items"]


def _events(served: Served, path: str, rv: str) -> list[dict[str, Any]]:
    """The watch events of a collection after resourceVersion `rv` (a one-second watch)."""
    with served.client() as client:
        resp = client.get(path, params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "1"})
    assert resp.status_code == 200
    return [json.loads(line) for line in resp.text.splitlines() if line.strip()]


def test_server_dry_runs_print_what_kube_prints_and_change_nothing(server: Served) -> None:
    server.apply(_pod("web"))
    _ok(server, "create", "deployment", "app", "--image=nginx:1", "--replicas=2")
    before = _state(server)
    with server.client() as client:
        rv = client.get("/api/v1/pods").json()["metadata"]["resourceVersion"]
    assert int(rv) > 0

    assert _ok(server, "create", "-f", "-", DRY, stdin=yaml.safe_dump(_pod("new"))) == (
        "pod/new created (server dry run)\n"
    )
    assert _ok(server, "create", "-f", "-", "-n", "ghost", DRY, stdin=yaml.safe_dump(_pod("new"))) == (
        "pod/new created (server dry run)\n"
    )
    assert _ok(server, "replace", "-f", "-", DRY, stdin=yaml.safe_dump(_pod("web", "nginx:2"))) == (
        "pod/web replaced (server dry run)\n"
    )
    assert _ok(server, "label", "pod", "web", "tier=front", DRY) == "pod/web labeled (server dry run)\n"
    assert _ok(server, "annotate", "pod", "web", "note=x", DRY) == "pod/web annotated (server dry run)\n"
    # kubectl 1.32's patch prints no "(server dry run)", against kube-apiserver as well
    assert (
        _ok(server, "patch", "pod", "web", "-p", '{"metadata":{"labels":{"x":"1"}}}', DRY)
        == "pod/web patched\n"
    )
    assert _ok(server, "scale", "deployment", "app", "--replicas=5", DRY) == (
        "deployment.apps/app scaled (server dry run)\n"
    )
    assert _ok(server, "create", "deployment", "other", "--image=x:1", DRY) == (
        "deployment.apps/other created (server dry run)\n"
    )
    assert _ok(server, "delete", "pod", "web", DRY) == 'pod "web" deleted (server dry run)\n'
    patched = _ok(
        server,
        "patch",
        "pod",
        "web",
        "--type=json",
        "-p",
        '[{"op":"replace","path":"/spec/containers/0/image","value":"nginx:3"}]',
        DRY,
        "-o",
        "jsonpath={.spec.containers[0].image} {.metadata.resourceVersion}",
    )
    web = next(o for o in before if o["metadata"]["name"] == "web")
    assert patched == f"nginx:3 {web['metadata']['resourceVersion']}"
    generated = {**_pod("x"), "metadata": {"generateName": "gen-"}}
    made = json.loads(_ok(server, "create", "-f", "-", DRY, "-o", "json", stdin=yaml.safe_dump(generated)))
    assert made["metadata"]["name"].startswith("gen-") and made["metadata"]["uid"]
    assert STAMP.match(made["metadata"]["creationTimestamp"])
    assert "resourceVersion" not in made["metadata"]

    assert _fails(server, "create", "-f", "-", DRY, stdin=yaml.safe_dump(_pod("web"))) == (
        'Error from server (AlreadyExists): error when creating "STDIN": pods "web" already exists\n'
    )
    assert _fails(server, "label", "pod", "nope", "a=b", DRY) == (
        'Error from server (NotFound): pods "nope" not found\n'
    )
    bad = _pod("bad")
    bad["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "500x"}}
    real = _fails(server, "create", "-f", "-", stdin=yaml.safe_dump(bad))
    assert _fails(server, "create", "-f", "-", DRY, stdin=yaml.safe_dump(bad)) == real
    assert real.startswith('The Pod "bad" is invalid: ')

    assert _state(server) == before
    assert _events(server, "/api/v1/namespaces/default/pods", rv) == []
    assert _events(server, "/apis/apps/v1/namespaces/default/deployments", rv) == []
    assert _events(server, "/api/v1/namespaces", rv) == []
    # a real write after the dry runs is the first event a watch sees
    _ok(server, "label", "pod", "web", "sentinel=1")
    events = _events(server, "/api/v1/namespaces/default/pods", rv)
    assert [(e["type"], e["object"]["metadata"]["labels"]) for e in events] == [
        ("MODIFIED", {"app": "web", "sentinel": "1"})
    ]


def test_options_kube_refuses(server: Served) -> None:
    server.apply(_pod("opts"))
    path = "/api/v1/namespaces/default/pods/opts"
    with server.client() as client:
        resp = client.patch(
            path,
            params={"force": "true"},
            content=b'{"metadata":{"labels":{"a":"b"}}}',
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert resp.status_code == 422
        assert resp.json()["message"] == (
            'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'
        )
        resp = client.post("/api/v1/namespaces/default/pods", params={"dryRun": "Some"}, json=_pod("other"))
        assert (resp.status_code, resp.json()["message"]) == (
            422,
            'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: '
            'supported values: "All"',
        )
    too_long = "--field-manager=" + "m" * 129
    assert _fails(server, "label", "pod", "opts", "a=b", too_long) == (
        'The PatchOptions "" is invalid: fieldManager: Too long: may not be more than 128 bytes\n'
    )
    assert _fails(server, "create", "-f", "-", too_long, stdin=yaml.safe_dump(_pod("other"))) == (
        'The CreateOptions "" is invalid: fieldManager: Too long: may not be more than 128 bytes\n'
    )
    labels = json.loads(_ok(server, "get", "pod", "opts", "-o", "json"))["metadata"]["labels"]
    assert labels == {"app": "opts"}


def test_managed_fields_of_create_label_and_patch(server: Served) -> None:
    _ok(server, "create", "-f", "-", stdin=yaml.safe_dump(_pod("owned", tier="web")))
    _ok(server, "label", "pod", "owned", "tier=db", "--overwrite")
    _ok(server, "patch", "pod", "owned", "-p", '{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}')
    assert "managedFields" not in json.loads(_ok(server, "get", "pod", "owned", "-o", "json"))["metadata"]
    pod = json.loads(_ok(server, "get", "pod", "owned", "-o", "json", "--show-managed-fields"))
    entries = pod["metadata"]["managedFields"]
    for entry in entries:
        assert STAMP.match(entry.pop("time"))
    assert entries == [
        {
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}, "f:name": {}}}},
            },
            "manager": "kubectl-create",
            "operation": "Update",
        },
        {
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {"f:tier": {}}}},
            "manager": "kubectl-label",
            "operation": "Update",
        },
        {
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:containers": {'k:{"name":"c"}': {"f:image": {}}}}},
            "manager": "kubectl-patch",
            "operation": "Update",
        },
    ]
    # kubectl scale names no manager: the User-Agent's program, "kubectl", takes the replicas
    _ok(server, "create", "deployment", "scaled", "--image=nginx:1", "--replicas=1")
    _ok(server, "scale", "deployment", "scaled", "--replicas=2")
    deployment = json.loads(_ok(server, "get", "deployment", "scaled", "-o", "json", "--show-managed-fields"))
    assert [
        (e["manager"], e.get("subresource"), e["fieldsV1"].get("f:spec", {}).get("f:replicas"))
        for e in deployment["metadata"]["managedFields"]
    ] == [("kubectl", "scale", {}), ("kubectl-create", None, None)]
