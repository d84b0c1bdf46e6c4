"""Server-side printing: the metav1.Table documents, their columns and cells, and that `berth simulate`'s text
tables print the same cells."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from berth.api.errors import BadRequest
from berth.api.kinds import lookup_kind
from berth.api.printers import Column, cell_text, server_columns
from berth.server import discovery
from berth.server.tables import negotiate_table, table_content_type, table_for
from berth.sim.output import TABLES

CREATED = "2024-01-01T00:00:00Z"
NOW = datetime(2024, 1, 1, 0, 5, 30, tzinfo=UTC)
NAME_DOC = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may "
    "allow a client to request the generation of an appropriate name automatically. Name is primarily intended "
    "for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
KUBECTL_GET = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

POD = lookup_kind("v1", "Pod")
RESERVATION = lookup_kind("scheduling.koordinator.sh/v1alpha1", "Reservation")


def pods() -> list[dict[str, Any]]:
    running = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "u1",
            "creationTimestamp": CREATED,
            "labels": {"app": "web"},
        },
        "spec": {
            "nodeName": "node-a",
            "containers": [{"name": "app"}, {"name": "sidecar"}],
            "readinessGates": [{"conditionType": "example.com/lb"}],
        },
        "status": {
            "phase": "Running",
            "podIPs": [{"ip": "10.0.0.7"}],
            "conditions": [{"type": "example.com/lb", "status": "True"}],
            "containerStatuses": [
                {"name": "app", "ready": True, "restartCount": 2},
                {"name": "sidecar", "ready": False, "restartCount": 1},
            ],
        },
    }
    pending = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "giant", "namespace": "ml", "creationTimestamp": "2024-01-01T00:05:00Z"},
        "spec": {"containers": [{"name": "train"}]},
        "status": {"phase": "Pending", "nominatedNodeName": "gpu-1"},
    }
    done = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "job", "namespace": "ml", "creationTimestamp": CREATED},
        "spec": {"nodeName": "gpu-1", "containers": [{"name": "c"}]},
        "status": {"phase": "Succeeded"},
    }
    return [running, pending, done]


def test_pod_table() -> None:
    objects = pods()
    table = table_for(objects, POD, now=NOW)
    assert table["kind"] == "Table"
    assert table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"] == {}
    assert [(c["name"], c["type"], c["format"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", "string", "name", 0),
        ("Ready", "string", "", 0),
        ("Status", "string", "", 0),
        ("Restarts", "string", "", 0),
        ("Age", "string", "", 0),
        ("IP", "string", "", 1),
        ("Node", "string", "", 1),
        ("Nominated Node", "string", "", 1),
        ("Readiness Gates", "string", "", 1),
    ]
    assert table["columnDefinitions"][0]["description"] == NAME_DOC
    assert table["columnDefinitions"][1]["description"] == (
        "The aggregate readiness state of this pod for accepting traffic."
    )
    assert [r["cells"] for r in table["rows"]] == [
        ["web", "1/2", "Running", "3", "5m30s", "10.0.0.7", "node-a", "<none>", "1/1"],
        ["giant", "0/1", "Pending", "0", "30s", "<none>", "<none>", "gpu-1", "<none>"],
        ["job", "0/1", "Completed", "0", "5m30s", "<none>", "gpu-1", "<none>", "<none>"],
    ]
    # each row carries the object's metadata (includeObject=Metadata, the default)
    assert table["rows"][0]["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": objects[0]["metadata"],
    }
    assert "conditions" not in table["rows"][0]
    assert table["rows"][2]["conditions"] == [
        {
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }
    ]


def test_reservation_table_has_the_crd_printer_columns() -> None:
    reservations = [
        {
            "apiVersion": "scheduling.koordinator.sh/v1alpha1",
            "kind": "Reservation",
            "metadata": {"name": "reservation-demo", "creationTimestamp": CREATED},
            "spec": {"ttl": "1h"},
            "status": {"phase": "Available", "nodeName": "node-0"},
        },
        {
            "apiVersion": "scheduling.koordinator.sh/v1alpha1",
            "kind": "Reservation",
            "metadata": {"name": "r-new", "creationTimestamp": "2024-01-01T00:05:28Z"},
            "spec": {"expires": "2024-01-02T00:00:00Z"},
        },
    ]
    table = table_for(reservations, RESERVATION, now=NOW, include_object="None")
    assert table == {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {},
        "columnDefinitions": [
            {"name": "Name", "type": "string", "format": "name", "description": NAME_DOC, "priority": 0},
            {
                "name": "Phase",
                "type": "string",
                "format": "",
                "description": "The phase of reservation",
                "priority": 0,
            },
            {
                "name": "Age",
                "type": "date",
                "format": "",
                "description": "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp",
                "priority": 0,
            },
            {
                "name": "Node",
                "type": "string",
                "format": "",
                "description": "Custom resource definition column (in JSONPath format): .status.nodeName",
                "priority": 0,
            },
            {
                "name": "TTL",
                "type": "string",
                "format": "",
                "description": "Custom resource definition column (in JSONPath format): .spec.ttl",
                "priority": 0,
            },
            {
                "name": "Expires",
                "type": "string",
                "format": "",
                "description": "Custom resource definition column (in JSONPath format): .spec.expires",
                "priority": 0,
            },
        ],
        "rows": [
            {"cells": ["reservation-demo", "Available", "5m30s", "node-0", "1h", None], "object": None},
            {"cells": ["r-new", None, "2s", None, None, "2024-01-02T00:00:00Z"], "object": None},
        ],
    }


def test_include_object_and_version() -> None:
    objects = pods()[:1]
    table = table_for(
        objects, POD, now=NOW, include_object="Object", version="v1beta1", list_meta={"resourceVersion": "7"}
    )
    assert table["apiVersion"] == "meta.k8s.io/v1beta1"
    assert table["metadata"] == {"resourceVersion": "7"}
    assert table["rows"][0]["object"] == objects[0]
    assert table_for(objects, POD, now=NOW, version="v1beta1")["rows"][0]["object"]["apiVersion"] == (
        "meta.k8s.io/v1beta1"
    )
    assert table_for(objects, POD, now=NOW, no_headers=True)["columnDefinitions"] is None
    with pytest.raises(BadRequest):
        table_for(objects, POD, now=NOW, include_object="Everything")
    with pytest.raises(BadRequest):
        table_for(objects, POD, now=NOW, version="v2")


def test_typed_cells() -> None:
    pc = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high", "creationTimestamp": CREATED},
        "value": 1000,
        "globalDefault": True,
    }
    rows = table_for([pc], lookup_kind("scheduling.k8s.io/v1", "PriorityClass"), now=NOW)["rows"]
    assert rows[0]["cells"] == ["high", 1000, True, "5m30s", "PreemptLowerPriority"]
    pg = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": "default", "creationTimestamp": CREATED},
        "spec": {"minMember": 3},
        "status": {"phase": "Running", "running": 3},
    }
    table = table_for([pg], lookup_kind("scheduling.x-k8s.io/v1alpha1", "PodGroup"), now=NOW)
    assert [c["type"] for c in table["columnDefinitions"]] == [
        "string",
        "string",
        "integer",
        "string",
        "string",
        "string",
        "date",
    ]
    assert table["rows"][0]["cells"] == ["pg", "Running", 3, "3", None, None, "5m30s"]


def test_crds_without_printer_columns_get_name_and_age() -> None:
    # Koordinator's copies of scheduler-plugins' CRDs in scheduling.sigs.k8s.io declare no printer columns
    for kind in ("ElasticQuota", "PodGroup"):
        info = lookup_kind("scheduling.sigs.k8s.io/v1alpha1", kind)
        assert [(c.name, c.type) for c in server_columns(info)] == [("Name", "string"), ("Age", "date")]
    eq = lookup_kind("scheduling.x-k8s.io/v1alpha1", "ElasticQuota")
    assert [c.name for c in server_columns(eq)] == ["Name", "Used", "Max", "Age"]


@pytest.mark.parametrize("kind", discovery.served_kinds(), ids=lambda k: f"{k.kind}.{k.group}")
def test_every_served_kind_prints_a_bare_object(kind: Any) -> None:
    bare = {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": {"name": "x"}}
    table = table_for([bare], kind, now=NOW)
    row = table["rows"][0]
    assert len(row["cells"]) == len(table["columnDefinitions"])
    assert all(isinstance(c, str | int | bool) or c is None for c in row["cells"])


@pytest.mark.parametrize(
    ("accept", "version"),
    [
        (KUBECTL_GET, "v1"),
        ("application/json;as=Table;v=v1beta1;g=meta.k8s.io", "v1beta1"),
        ("application/json", None),
        ("application/json, application/json;as=Table;v=v1;g=meta.k8s.io", None),
        ("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json", None),
        ("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json", None),
        ("", None),
    ],
)
def test_negotiate_table(accept: str, version: str | None) -> None:
    assert negotiate_table(accept) == version


def test_table_content_type() -> None:
    assert table_content_type() == "application/json;as=Table;v=v1;g=meta.k8s.io"


def test_simulate_prints_the_servers_cells() -> None:
    """`berth simulate -o wide` and the server print one definition: each simulate column of a kind is one of
    the server's columns (by object identity) or one of simulate's own additions, with the same text."""
    simulate_only = {"Namespace", "Priority", "Taints"}
    objects = pods()
    head, row = TABLES["Pod"](True)
    server = {c.name.upper(): c for c in server_columns(POD)}
    for obj in objects:
        cells = dict(zip(head, row(obj, NOW), strict=True))
        for header, text in cells.items():
            if header.title() in simulate_only:
                continue
            column: Column = server[header]
            assert text == cell_text(column.cell(obj, NOW))
