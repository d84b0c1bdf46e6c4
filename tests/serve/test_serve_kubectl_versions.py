"""``/openapi/v2`` (gnostic protobuf and Swagger JSON), and `berth serve` driven by every kubectl 1.NN present.

kubectl 1.27 and 1.28 download ``/openapi/v2`` before ``kubectl create -f`` (client-side validation); 1.29
and later read ``/openapi/v3``. The protobuf document is checked here with a minimal protobuf reader of the
test's own (independent of the encoder) against gnostic-models' ``openapiv2/OpenAPIv2.proto`` field numbers.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from serve_helpers import Served, running
from starlette.requests import Request
from starlette.responses import Response

from berth.server import openapi_v2
from builders import make_node, make_pod

KUBECTL_DIR = Path("/usr/lib/google-cloud-sdk/bin")
MINORS = range(27, 34)
"""kubectl 1.27 ... 1.33: the versions the end-to-end test runs (each skipped only if its binary is absent)."""
ASK_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"

# --- an independent minimal protobuf reader -----------------------------------------------------------

Message = dict[int, list[Any]]


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def read(buf: bytes) -> Message:
    """Field number → values (ints for varints, bytes for length-delimited); only wire types 0 and 2."""
    fields: Message = {}
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            fields.setdefault(number, []).append(value)
        elif wire == 2:
            size, pos = _varint(buf, pos)
            assert pos + size <= len(buf), f"field {number} runs past the end"
            fields.setdefault(number, []).append(buf[pos : pos + size])
            pos += size
        else:
            raise AssertionError(f"unexpected wire type {wire} for field {number}")
    return fields


def one(msg: Message, number: int) -> Any:
    """The single value of field `number` (fails when absent or repeated)."""
    values = msg.get(number, [])
    assert len(values) == 1, f"field {number}: {len(values)} values"
    return values[0]


def text(msg: Message, number: int) -> str:
    """A string field ("" when absent, as proto3 says)."""
    values = msg.get(number, [b""])
    assert len(values) == 1
    return bytes(values[0]).decode()


def texts(msg: Message, number: int) -> list[str]:
    """A repeated string field."""
    return [bytes(v).decode() for v in msg.get(number, [])]


def named(msg: Message, number: int) -> dict[str, Message]:
    """A repeated Named* field ({1 name, 2 value}) as name → decoded value."""
    out: dict[str, Message] = {}
    for raw in msg.get(number, []):
        entry = read(raw)
        out[text(entry, 1)] = read(one(entry, 2))
    return out


def extensions(msg: Message, number: int) -> dict[str, Any]:
    """A repeated NamedAny vendor-extension field: name → the YAML of Any (field 2) parsed."""
    return {name: yaml.safe_load(text(value, 2)) for name, value in named(msg, number).items()}


def query_parameters(operation: Message) -> dict[str, Message]:
    """Operation.parameters (8) → ParametersItem.parameter (1) → Parameter.non_body_parameter (2) →
    NonBodyParameter.query_parameter_sub_schema (3), by name (4)."""
    out: dict[str, Message] = {}
    for raw in operation.get(8, []):
        parameter = read(one(read(raw), 1))
        if 2 not in parameter:
            continue
        non_body = read(one(parameter, 2))
        if 3 in non_body:
            sub = read(one(non_body, 3))
            out[text(sub, 4)] = sub
    return out


@pytest.fixture(scope="module")
def document() -> Message:
    return read(openapi_v2.document_v2_protobuf())


# --- the document -------------------------------------------------------------------------------------


def test_the_protobuf_document_header(document: Message) -> None:
    assert text(document, 1) == "2.0"
    info = read(one(document, 2))
    assert (text(info, 1), text(info, 2)) == ("Kubernetes", "v1.32.0")


def test_every_patch_declares_field_validation_and_its_kind(document: Message) -> None:
    paths = named(read(one(document, 8)), 2)
    assert set(paths) == set(openapi_v2.document_v2_json()["paths"])
    pod = paths["/api/v1/namespaces/{namespace}/pods/{name}"]
    assert set(pod) == {2, 3, 5, 8, 9}  # get, put, delete, patch, path-level parameters
    patch = read(one(pod, 8))
    assert extensions(patch, 13) == {
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": "Pod"},
    }
    field_validation = query_parameters(patch)["fieldValidation"]
    assert (text(field_validation, 2), text(field_validation, 6)) == ("query", "string")
    assert 7 not in patch, "no consumes: kubectl apply keeps its compiled-in patch strategy"
    patched = 0
    for name, item in paths.items():
        if 8 not in item:
            continue
        patched += 1
        op = read(one(item, 8))
        gvk = extensions(op, 13)["x-kubernetes-group-version-kind"]
        assert set(gvk) == {"group", "version", "kind"}, name
        assert "fieldValidation" in query_parameters(op), name
    assert patched >= 10
    reservation = read(one(paths["/apis/scheduling.koordinator.sh/v1alpha1/reservations/{name}"], 8))
    assert extensions(reservation, 13)["x-kubernetes-group-version-kind"] == {
        "group": "scheduling.koordinator.sh",
        "version": "v1alpha1",
        "kind": "Reservation",
    }


def test_the_path_parameters_and_the_responses(document: Message) -> None:
    pod = named(read(one(document, 8)), 2)["/api/v1/namespaces/{namespace}/pods/{name}"]
    path_params = []
    for raw in pod[9]:
        non_body = read(one(read(one(read(raw), 1)), 2))
        if 4 in non_body:
            sub = read(one(non_body, 4))
            path_params.append((text(sub, 4), text(sub, 2), one(sub, 1)))
    assert path_params == [("name", "path", 1), ("namespace", "path", 1)]
    get = read(one(pod, 2))
    assert text(get, 5) == "readNamespacedPod"
    responses = named(read(one(get, 9)), 1)
    ok = read(one(responses["200"], 1))
    assert text(ok, 1) == "OK"
    assert text(read(one(read(one(ok, 2)), 1)), 1) == "#/definitions/io.k8s.api.core.v1.Pod"


def test_definitions_carry_their_kind_and_properties(document: Message) -> None:
    definitions = named(read(one(document, 9)), 1)
    assert set(definitions) == set(openapi_v2.document_v2_json()["definitions"])
    pod = definitions["io.k8s.api.core.v1.Pod"]
    assert texts(read(one(pod, 22)), 1) == ["object"]
    assert set(named(read(one(pod, 25)), 1)) == {"apiVersion", "kind", "metadata", "spec", "status"}
    assert extensions(pod, 31) == {
        "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Pod"}],
    }
    spec = named(read(one(definitions["io.k8s.api.core.v1.PodSpec"], 25)), 1)
    containers = spec["containers"]
    items = read(one(read(one(containers, 23)), 1))
    assert text(items, 1) == "#/definitions/io.k8s.api.core.v1.Container"
    assert extensions(containers, 31)["x-kubernetes-patch-merge-key"] == "name"
    priority = spec["priority"]
    assert (texts(read(one(priority, 22)), 1), text(priority, 2)) == (["integer"], "int32")
    kinds = {
        (g["group"], g["version"], g["kind"])
        for d in definitions.values()
        for g in extensions(d, 31).get("x-kubernetes-group-version-kind", [])
    }
    assert {
        ("", "v1", "Node"),
        ("apps", "v1", "Deployment"),
        ("scheduling.koordinator.sh", "v1alpha1", "Reservation"),
    } <= kinds


def test_the_json_document_matches() -> None:
    doc = openapi_v2.document_v2_json()
    assert doc["swagger"] == "2.0"
    patch = doc["paths"]["/api/v1/nodes/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "Node"}
    assert {"name": "fieldValidation", "in": "query"}.items() <= next(
        p for p in patch["parameters"] if p["name"] == "fieldValidation"
    ).items()
    assert doc["definitions"]["io.k8s.api.core.v1.Node"]["type"] == "object"
    assert openapi_v2.document_v2_protobuf() is openapi_v2.document_v2_protobuf()


def get(accept: str | None) -> Response:
    """GET /openapi/v2 through `openapi_v2.endpoint` (the handler app.py routes to)."""
    headers = [(b"accept", accept.encode())] if accept is not None else []
    scope = {"type": "http", "method": "GET", "path": "/openapi/v2", "query_string": b"", "headers": headers}
    return asyncio.run(openapi_v2.endpoint(Request(scope)))


@pytest.mark.parametrize(
    ("accept", "media"),
    [
        (ASK_PROTOBUF, openapi_v2.PROTOBUF_CONTENT_TYPE),
        (f"{ASK_PROTOBUF}, application/json", openapi_v2.PROTOBUF_CONTENT_TYPE),
        ("application/com.github.proto-openapi.spec.v2.v1.0+protobuf", openapi_v2.PROTOBUF_CONTENT_TYPE),
        ("application/json", "application/json"),
        ("*/*", "application/json"),
        ("", "application/json"),
    ],
)
def test_content_negotiation(accept: str, media: str) -> None:
    response = get(accept or None)
    assert response.status_code == 200
    assert response.headers["content-type"] == media
    assert "@" not in response.headers["content-type"], "Go's mime.ParseMediaType refuses '@'"
    assert response.headers["etag"].startswith('"')
    if media == "application/json":
        assert json.loads(bytes(response.body)) == json.loads(json.dumps(openapi_v2.document_v2_json()))
    else:
        assert response.body == openapi_v2.document_v2_protobuf()


def test_an_unacceptable_media_type_is_406() -> None:
    response = get("application/yaml")
    assert response.status_code == 406
    assert json.loads(bytes(response.body))["reason"] == "NotAcceptable"


# --- every kubectl ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("serve-versions")) as served:
        yield served


@pytest.mark.parametrize("minor", MINORS, ids=[f"kubectl-1.{m}" for m in MINORS])
def test_every_kubectl_version(server: Served, minor: int) -> None:
    binary = KUBECTL_DIR / f"kubectl.1.{minor}"
    if not binary.is_file():
        pytest.skip(f"kubectl 1.{minor} is not installed ({binary} is missing)")
    kubectl = str(binary)

    def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
        done = server.kubectl(*args, stdin=stdin, binary=kubectl)
        return done.returncode, done.stdout, done.stderr

    code, _, err = run("get", "nodes")
    assert code == 0, err
    node, pod = f"node-1-{minor}", f"pod-1-{minor}"
    docs = [
        make_node(node).obj(),
        make_pod(pod).node_selector(**{"kubernetes.io/hostname": node}).grace(1).obj(),
    ]
    # Default validation (strict): 1.27 and 1.28 download /openapi/v2 first (-v=6 logs the request).
    code, out, err = run("create", "-f", "-", "-v=6", stdin=yaml.safe_dump_all(docs))
    assert (code, out) == (0, f"node/{node} created\npod/{pod} created\n"), err
    if minor < 29:
        assert re.search(r"GET \S+/openapi/v2\S* 200 OK", err), err
    code, out, err = run("get", "pod", pod, "-o", "wide")
    assert code == 0, err
    header, row = out.splitlines()
    assert header.split()[:3] == ["NAME", "READY", "STATUS"]
    assert row.split()[0] == pod and row.split()[6] == node
    assert run("delete", "pod", pod)[:2] == (0, f'pod "{pod}" deleted\n')
    code, _, err = run("get", "pod", pod)
    assert (code, err) == (1, f'Error from server (NotFound): pods "{pod}" not found\n')


@pytest.mark.parametrize("minor", (27, 32), ids=["kubectl-1.27", "kubectl-1.32"])
def test_apply_keeps_its_patch_strategy(server: Served, minor: int) -> None:
    """With /openapi/v2 served, a client-side ``kubectl apply`` of a change still patches cleanly."""
    binary = KUBECTL_DIR / f"kubectl.1.{minor}"
    if not binary.is_file():
        pytest.skip(f"kubectl 1.{minor} is not installed ({binary} is missing)")
    name = f"applied-1-{minor}"
    node = make_node(name).obj()
    first = server.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(node), binary=str(binary))
    assert (first.returncode, first.stdout, first.stderr) == (0, f"node/{name} created\n", "")
    node["metadata"].setdefault("labels", {})["zone"] = "b"
    second = server.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(node), binary=str(binary))
    assert (second.returncode, second.stdout, second.stderr) == (0, f"node/{name} configured\n", "")
    labels = json.loads(server.kubectl("get", "node", name, "-o", "json").stdout)["metadata"]["labels"]
    assert labels["zone"] == "b"
