"""The object schemas of ``/openapi/v2`` and ``/openapi/v3`` (`berth.server.openapi_schemas`).

Exact definitions for a few fields, the consistency of the documents (every reference resolves, every served
kind has its schema and List, descriptions name real fields), the derivation from Berth's own tables (every
field of the protobuf table, the patch extensions of the strategic-merge-patch schema, the list keys of
server-side apply), the v2 conversion of the CRD schemas and its protobuf encoding, and a check, with a small
validator shaped like kubectl's, that every manifest under ``examples/`` fits the schemas.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from berth.api import apply
from berth.server import openapi, openapi_crds, openapi_schemas, openapi_v2
from berth.server.discovery import served_kinds
from berth.server.openapi_descriptions import DEFINITION_TEXT, FIELD_TEXT
from berth.server.protobuf_schema import KINDS, MESSAGES

V3 = openapi_schemas.definitions_v3()
V2 = openapi_schemas.definitions_v2()
CORE = "io.k8s.api.core.v1"
META = "io.k8s.apimachinery.pkg.apis.meta.v1"
RESERVATION = "sh.koordinator.scheduling.v1alpha1.Reservation"
EXAMPLES = Path(__file__).parents[2] / "examples"


def props(name: str, defs: dict[str, Any] = V3) -> dict[str, Any]:
    return dict(defs[name]["properties"])


def without_description(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "description"}


# --- exact definitions -----------------------------------------------------------------------------------


def test_pod_spec_containers() -> None:
    containers = props(f"{CORE}.PodSpec")["containers"]
    assert without_description(containers) == {
        "type": "array",
        "items": {"$ref": f"#/components/schemas/{CORE}.Container"},
        "x-kubernetes-patch-merge-key": "name",
        "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-list-map-keys": ["name"],
        "x-kubernetes-list-type": "map",
    }
    assert containers["description"]
    assert "containers" in V3[f"{CORE}.PodSpec"]["required"]
    v2 = props(f"{CORE}.PodSpec", V2)["containers"]
    assert v2["items"] == {"$ref": f"#/definitions/{CORE}.Container"}
    assert v2["x-kubernetes-patch-merge-key"] == "name"


def test_references_sit_in_all_of_beside_their_description() -> None:
    spec = props(f"{CORE}.Pod")["spec"]
    assert spec["allOf"] == [{"$ref": f"#/components/schemas/{CORE}.PodSpec"}]
    assert set(spec) == {"description", "allOf"}
    v2 = props(f"{CORE}.Pod", V2)["spec"]
    assert set(v2) == {"description", "$ref"}
    assert v2["$ref"] == f"#/definitions/{CORE}.PodSpec"


def test_scalars_quantities_and_times() -> None:
    spec = props(f"{CORE}.PodSpec")
    assert without_description(spec["priority"]) == {"type": "integer", "format": "int32"}
    assert without_description(spec["activeDeadlineSeconds"]) == {"type": "integer", "format": "int64"}
    assert without_description(spec["hostNetwork"]) == {"type": "boolean"}
    assert without_description(spec["nodeSelector"]) == {
        "type": "object",
        "additionalProperties": {"type": "string"},
    }
    quantity = "io.k8s.apimachinery.pkg.api.resource.Quantity"
    assert without_description(spec["overhead"]) == {
        "type": "object",
        "additionalProperties": {"$ref": f"#/components/schemas/{quantity}"},
    }
    assert without_description(V3[quantity]) == {"oneOf": [{"type": "string"}, {"type": "number"}]}
    assert without_description(V2[quantity]) == {"type": "string"}
    int_or_string = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
    assert without_description(V3[int_or_string]) == {
        "format": "int-or-string",
        "oneOf": [{"type": "integer"}, {"type": "string"}],
    }
    assert without_description(V2[int_or_string]) == {"type": "string", "format": "int-or-string"}
    assert without_description(V3[f"{META}.Time"]) == {"type": "string", "format": "date-time"}
    rolling = props("io.k8s.api.apps.v1.RollingUpdateDeployment")["maxSurge"]
    assert rolling["allOf"] == [{"$ref": f"#/components/schemas/{int_or_string}"}]
    lease = props("io.k8s.api.coordination.v1.LeaseSpec")["renewTime"]
    assert lease["allOf"] == [{"$ref": f"#/components/schemas/{META}.MicroTime"}]


def test_kinds_carry_type_meta_and_their_group_version_kind() -> None:
    pod = V3[f"{CORE}.Pod"]
    assert set(pod["properties"]) == {"apiVersion", "kind", "metadata", "spec", "status"}
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "version": "v1", "kind": "Pod"}]
    assert V3["io.k8s.api.apps.v1.DeploymentList"]["required"] == ["items"]
    assert V3["io.k8s.api.apps.v1.DeploymentList"]["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "version": "v1", "kind": "DeploymentList"}
    ]
    assert V3["io.k8s.api.autoscaling.v1.Scale"]["x-kubernetes-group-version-kind"] == [
        {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    ]
    assert "apiVersion" not in props(f"{CORE}.PodSpec")
    assert "apiVersion" not in props(f"{META}.WatchEvent")
    assert {"group": "apps", "version": "v1", "kind": "DeleteOptions"} in V3[f"{META}.DeleteOptions"][
        "x-kubernetes-group-version-kind"
    ]


def test_required_fields() -> None:
    assert V3[f"{CORE}.Container"]["required"] == ["name"]
    assert sorted(V3["io.k8s.api.apps.v1.DeploymentSpec"]["required"]) == ["selector", "template"]
    assert V3[f"{CORE}.Binding"]["required"] == ["target"]
    assert "required" not in V3[f"{META}.ObjectMeta"]
    assert "reportingComponent" not in V3[f"{CORE}.Event"].get("required", [])


def test_embedded_structs_are_inlined() -> None:
    assert "name" in props(f"{CORE}.ConfigMapKeySelector")
    assert "localObjectReference" not in props(f"{CORE}.ConfigMapKeySelector")
    assert set(props(f"{CORE}.EphemeralContainer")) == set(props(f"{CORE}.Container")) | {
        "targetContainerName"
    }
    assert "httpGet" in props(f"{CORE}.Probe")
    assert "emptyDir" in props(f"{CORE}.Volume")
    assert f"{CORE}.EphemeralContainerCommon" not in V3


# --- patch and apply extensions ------------------------------------------------------------------------


def extensions(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k.startswith("x-")}


def test_patch_and_list_extensions_follow_berths_schemas() -> None:
    ports = props(f"{CORE}.Container")["ports"]
    assert extensions(ports) == {
        "x-kubernetes-patch-merge-key": "containerPort",
        "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
        "x-kubernetes-list-type": "map",
    }
    assert (
        extensions(props(f"{CORE}.PodSpec")["volumes"])["x-kubernetes-patch-strategy"] == "merge,retainKeys"
    )
    assert extensions(props(f"{META}.ObjectMeta")["finalizers"]) == {
        "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-list-type": "set",
    }
    assert extensions(props(f"{META}.ObjectMeta")["ownerReferences"])["x-kubernetes-list-map-keys"] == ["uid"]
    assert extensions(props("io.k8s.api.policy.v1.PodDisruptionBudgetSpec")["selector"]) == {
        "x-kubernetes-patch-strategy": "replace",
        "x-kubernetes-map-type": "atomic",
    }
    assert extensions(props("io.k8s.api.apps.v1.DeploymentSpec")["strategy"]) == {
        "x-kubernetes-patch-strategy": "retainKeys"
    }
    assert extensions(props("io.k8s.api.apps.v1.DeploymentSpec")["selector"]) == {
        "x-kubernetes-map-type": "atomic"
    }
    assert extensions(props(f"{CORE}.PodSpec")["tolerations"]) == {}


def test_list_map_keys_are_server_side_applys() -> None:
    keys = {name: tuple(k for k, _ in pairs) for name, pairs in apply._LIST_KEYS.items()}
    assert keys == openapi_schemas.LIST_MAP_KEYS


# --- derivation from the protobuf table ------------------------------------------------------------------


def table_fields(message: str) -> set[str]:
    out: set[str] = set()
    for name, type_, flags in MESSAGES[message].values():
        out |= table_fields(type_) if "i" in flags else {name}
    return out


def test_every_table_field_is_a_property() -> None:
    checked = 0
    for message in MESSAGES:
        name = openapi_schemas.message_definition(message)
        if name not in V3:
            continue
        checked += 1
        expected = table_fields(message)
        if message in KINDS.values() or message in ("meta.Status", "meta.DeleteOptions"):
            expected |= {"apiVersion", "kind"}
        assert set(props(name)) == expected, message
    assert checked > 150


def test_documents_are_closed_under_references() -> None:
    for defs, prefix in ((V3, "#/components/schemas/"), (V2, "#/definitions/")):
        for ref in refs(defs):
            assert ref.startswith(prefix), ref
            assert ref.removeprefix(prefix) in defs, ref
    for k in served_kinds():
        doc = openapi.document(k.group, k.version)
        assert doc is not None
        schemas = doc["components"]["schemas"]
        for ref in refs(doc):
            assert ref.removeprefix("#/components/schemas/") in schemas, (k.kind, ref)
        assert openapi_schemas.kind_definition(k) in schemas
        assert openapi_schemas.list_definition(k) in schemas
    swagger = openapi_v2.document_v2_json()
    for ref in refs(swagger["paths"]):
        assert ref.removeprefix("#/definitions/") in swagger["definitions"], ref


def refs(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        if isinstance(value.get("$ref"), str):
            yield value["$ref"]
        for v in value.values():
            yield from refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from refs(v)


def test_every_served_kind_is_found_by_its_group_version_kind() -> None:
    for k in served_kinds():
        gvk = {"group": k.group, "version": k.version, "kind": k.kind}
        doc = openapi.document(k.group, k.version)
        assert doc is not None
        found = [
            n
            for n, s in doc["components"]["schemas"].items()
            if gvk in s.get("x-kubernetes-group-version-kind", [])
        ]
        assert found == [openapi_schemas.kind_definition(k)], k
        found_v2 = [n for n, s in V2.items() if gvk in s.get("x-kubernetes-group-version-kind", [])]
        assert found_v2 == found, k


def test_subresource_paths() -> None:
    core = openapi.document("", "v1")
    apps = openapi.document("apps", "v1")
    assert core is not None and apps is not None
    eviction = core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/eviction"]["post"]
    assert eviction["x-kubernetes-group-version-kind"] == {
        "group": "policy",
        "version": "v1",
        "kind": "Eviction",
    }
    assert "io.k8s.api.policy.v1.Eviction" in core["components"]["schemas"]
    scale = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
    assert set(scale) == {"get", "put", "patch"}
    assert "requestBody" not in scale["patch"], "kubectl apply keeps its compiled-in patch strategies"
    listed = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]["get"]
    schema = listed["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentList"}


# --- descriptions ----------------------------------------------------------------------------------------


def test_descriptions_name_real_fields_and_cover_the_most_used_ones() -> None:
    for message, texts in FIELD_TEXT.items():
        assert set(texts) <= table_fields(message), message
    for key in DEFINITION_TEXT:
        assert key in MESSAGES or key in V3, key
    for message in (
        "core.PodSpec",
        "core.PodStatus",
        "core.Container",
        "core.NodeSpec",
        "core.NodeStatus",
        "apps.DeploymentSpec",
        "apps.DeploymentStatus",
        "apps.ReplicaSetSpec",
        "apps.ReplicaSetStatus",
        "meta.ObjectMeta",
    ):
        schema = V3[openapi_schemas.message_definition(message)]
        assert schema["description"], message
        assert all(p.get("description") for p in schema["properties"].values()), message
    for k in served_kinds():
        schema = V3[openapi_schemas.kind_definition(k)]
        assert schema["description"], k.kind
        for field in ("apiVersion", "kind", "metadata", "spec", "status"):
            if field in schema["properties"]:
                assert schema["properties"][field]["description"], (k.kind, field)


# --- custom kinds ----------------------------------------------------------------------------------------


def test_reservation_schema() -> None:
    reservation = V3[RESERVATION]
    assert reservation["x-kubernetes-group-version-kind"] == [
        {"group": "scheduling.koordinator.sh", "version": "v1alpha1", "kind": "Reservation"}
    ]
    assert reservation["properties"]["metadata"]["allOf"] == [
        {"$ref": f"#/components/schemas/{META}.ObjectMeta"}
    ]
    spec = reservation["properties"]["spec"]
    assert spec["required"] == ["owners", "template"]
    assert without_description(spec["properties"]["ttl"]) == {"type": "string", "default": "24h"}
    assert without_description(spec["properties"]["template"]) == {
        "x-kubernetes-preserve-unknown-fields": True
    }
    allocatable = reservation["properties"]["status"]["properties"]["allocatable"]["additionalProperties"]
    assert allocatable == {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": openapi_crds.QUANTITY_PATTERN,
        "x-kubernetes-int-or-string": True,
    }
    listed = V3[f"{RESERVATION}List"]
    assert listed["properties"]["items"]["items"] == {"$ref": f"#/components/schemas/{RESERVATION}"}


def test_crds_in_v2_are_converted_as_apiextensions_does() -> None:
    reservation = V2[RESERVATION]
    assert reservation["properties"]["metadata"]["$ref"] == f"#/definitions/{META}.ObjectMeta"
    allocatable = reservation["properties"]["status"]["properties"]["allocatable"]["additionalProperties"]
    assert allocatable == {"pattern": openapi_crds.QUANTITY_PATTERN, "x-kubernetes-int-or-string": True}
    migration = V2["sh.koordinator.scheduling.v1alpha1.PodMigrationJob"]
    condition = migration["properties"]["status"]["properties"]["conditions"]["items"]
    assert condition["properties"]["lastProbeTime"] == {"format": "date-time"}
    assert openapi_schemas.crd_v2(
        {
            "type": "object",
            "required": ["a", "b"],
            "properties": {
                "a": {"type": "string", "nullable": True},
                "b": {
                    "type": "array",
                    "items": {"type": "object"},
                    "x-kubernetes-preserve-unknown-fields": True,
                },
            },
        }
    ) == {
        "type": "object",
        "required": ["b"],
        "properties": {"a": {}, "b": {"x-kubernetes-preserve-unknown-fields": True}},
    }


def test_both_groups_of_elastic_quota_and_pod_group() -> None:
    for prefix in ("io.x-k8s.scheduling.v1alpha1", "io.k8s.sigs.scheduling.v1alpha1"):
        quota = V3[f"{prefix}.ElasticQuota"]["properties"]
        assert set(quota["spec"]["properties"]) == {"min", "max"}
        group = V3[f"{prefix}.PodGroup"]["properties"]["spec"]["properties"]
        assert without_description(group["minMember"])["type"] == "integer"
    assert "scheduled" in V3["io.k8s.sigs.scheduling.v1alpha1.PodGroup"]["properties"]["status"]["properties"]
    assert (
        V3["io.x-k8s.scheduling.v1alpha1.PodGroup"]["properties"]["spec"]["properties"]["minMember"][
            "minimum"
        ]
        == 1
    )


# --- the protobuf encoding of the new schema fields ------------------------------------------------------


def read(buf: bytes) -> dict[int, list[Any]]:
    """Field number → values (varints, 8-byte doubles, length-delimited bytes)."""
    out: dict[int, list[Any]] = {}
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 1:
            value, pos = struct.unpack("<d", buf[pos : pos + 8])[0], pos + 8
        else:
            size, pos = varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        out.setdefault(number, []).append(value)
    return out


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def test_protobuf_schema_fields() -> None:
    encoded = openapi_v2._schema(
        {
            "type": "string",
            "format": "date-time",
            "default": "24h",
            "enum": ["Aligned", "Restricted"],
            "minimum": 1,
            "pattern": "^a$",
            "minItems": 1,
            "minProperties": 2,
        }
    )
    fields = read(encoded)
    assert fields[2] == [b"date-time"]
    assert [read(v)[2] for v in fields[20]] == [[b'"Aligned"\n'], [b'"Restricted"\n']]
    assert read(fields[5][0])[2] == [b'"24h"\n']
    assert (fields[9], fields[13], fields[15], fields[18]) == ([1.0], [b"^a$"], [1], [2])


# --- the examples fit the schemas ------------------------------------------------------------------------


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while True:
        if "$ref" in schema:
            schema = V3[schema["$ref"].rpartition("/")[2]]
        elif "allOf" in schema and len(schema["allOf"]) == 1 and "properties" not in schema:
            schema = {**{k: v for k, v in schema.items() if k != "allOf"}, **schema["allOf"][0]}
        else:
            return schema


def type_ok(value: Any, type_: str) -> bool:
    if type_ == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if type_ == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    python = {"string": str, "boolean": bool, "object": dict, "array": list}[type_]
    return isinstance(value, python)


def validate(value: Any, schema: dict[str, Any], path: str) -> Iterator[str]:
    """kubectl-like validation: types, unknown fields (unless preserved), required fields, enums; a null is
    an absent value."""
    if value is None:
        return
    schema = resolve(schema)
    alternatives = schema.get("oneOf") or schema.get("anyOf")
    if alternatives and not any(type_ok(value, a["type"]) for a in alternatives):
        yield f"{path}: {value!r} is none of {alternatives}"
    type_ = schema.get("type")
    if type_ is None:
        return
    if not type_ok(value, type_):
        yield f"{path}: {value!r} is not of type {type_}"
        return
    if "enum" in schema and value not in schema["enum"]:
        yield f"{path}: {value!r} not in {schema['enum']}"
    if type_ == "array":
        for i, item in enumerate(value):
            yield from validate(item, schema["items"], f"{path}[{i}]")
    if type_ != "object":
        return
    properties = schema.get("properties")
    if properties is None:
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key, item in value.items():
                yield from validate(item, extra, f"{path}.{key}")
        return
    for key, item in value.items():
        if key in properties:
            yield from validate(item, properties[key], f"{path}.{key}")
        elif not schema.get("x-kubernetes-preserve-unknown-fields"):
            yield f"{path}: unknown field {key!r}"
    for key in schema.get("required", ()):
        if key not in value:
            yield f"{path}: missing required field {key!r}"


def manifests() -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object of a served kind in examples/: documents, List items, objects a Scenario creates."""
    served = {(k.api_version, k.kind) for k in served_kinds()}

    def walk(where: str, value: Any) -> Iterator[tuple[str, dict[str, Any]]]:
        if isinstance(value, dict):
            if (value.get("apiVersion"), value.get("kind")) in served and "metadata" in value:
                yield where, value
                return
            for item in value.values():
                yield from walk(where, item)
        elif isinstance(value, list):
            for item in value:
                yield from walk(where, item)

    for path in sorted(EXAMPLES.rglob("*.yaml")):
        if path.parent.name == "deploy":
            continue  # manifests for a real cluster (CRDs, RBAC, a Deployment), not objects Berth serves
        for doc in yaml.safe_load_all(path.read_text()):
            yield from walk(str(path.relative_to(EXAMPLES)), doc)


def schema_of(obj: dict[str, Any]) -> dict[str, Any]:
    group, _, version = obj["apiVersion"].rpartition("/")
    name = openapi_schemas.definition_name(group, version, obj["kind"])
    assert name is not None
    return V3[name]


def test_every_example_manifest_fits_the_schemas() -> None:
    found = list(manifests())
    assert len(found) >= 90
    kinds = {obj["kind"] for _, obj in found}
    assert {"Pod", "Node", "Deployment", "Reservation", "ElasticQuota", "PodGroup", "PriorityClass"} <= kinds
    errors = [f"{where}: {e}" for where, obj in found for e in validate(obj, schema_of(obj), obj["kind"])]
    assert errors == []


@pytest.mark.parametrize(
    ("obj", "error"),
    [
        (
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {},
                "spec": {"containers": [{"name": "c", "bogus": 1}]},
            },
            "Pod.spec.containers[0]: unknown field 'bogus'",
        ),
        (
            {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {"containers": [{"image": "i"}]}},
            "Pod.spec.containers[0]: missing required field 'name'",
        ),
        (
            {"apiVersion": "v1", "kind": "Node", "metadata": {}, "spec": {"unschedulable": "yes"}},
            "Node.spec.unschedulable: 'yes' is not of type boolean",
        ),
        (
            {
                "apiVersion": "scheduling.koordinator.sh/v1alpha1",
                "kind": "Reservation",
                "metadata": {},
                "spec": {"owners": [{}], "template": {"anything": 1}, "allocatePolicy": "Loose"},
            },
            "Reservation.spec.allocatePolicy: 'Loose' not in ['Aligned', 'Restricted']",
        ),
    ],
)
def test_the_validator_finds_errors(obj: dict[str, Any], error: str) -> None:
    assert list(validate(obj, schema_of(obj), obj["kind"])) == [error]
