"""`berth crds`: the CustomResourceDefinitions of Berth's custom kinds, as a cluster needs them installed."""

from __future__ import annotations

import json
from typing import Any

import yaml
from typer.testing import CliRunner

from berth.cli import app


def _crds(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["crds", *args])
    assert result.exit_code == 0, result.stderr
    if args == ("-o", "json"):
        doc = json.loads(result.stdout)
        assert (doc["apiVersion"], doc["kind"]) == ("v1", "List")
        return list(doc["items"])
    return list(yaml.safe_load_all(result.stdout))


def _structural(schema: dict[str, Any], path: str) -> list[str]:
    """Nodes without a type (and not preserving unknown fields): a real API server refuses those CRDs."""
    typed = "type" in schema or schema.get("x-kubernetes-preserve-unknown-fields")
    bad = [] if typed or schema.get("x-kubernetes-int-or-string") else [path]
    for name, sub in (schema.get("properties") or {}).items():
        bad += _structural(sub, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        bad += _structural(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        bad += _structural(schema["additionalProperties"], f"{path}{{}}")
    return bad


def test_every_custom_kind_has_its_crd() -> None:
    crds = _crds()
    assert [
        (c["metadata"]["name"], c["spec"]["scope"], c["spec"]["names"].get("shortNames")) for c in crds
    ] == [
        ("podmigrationjobs.scheduling.koordinator.sh", "Cluster", ["pmj"]),
        ("reservations.scheduling.koordinator.sh", "Cluster", None),
        ("elasticquotas.scheduling.sigs.k8s.io", "Namespaced", ["eq", "eqs"]),
        ("podgroups.scheduling.sigs.k8s.io", "Namespaced", ["pg", "pgs"]),
        ("elasticquotas.scheduling.x-k8s.io", "Namespaced", ["eq", "eqs"]),
        ("podgroups.scheduling.x-k8s.io", "Namespaced", ["pg", "pgs"]),
    ]
    for crd in crds:
        assert (crd["apiVersion"], crd["kind"]) == ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
        (version,) = crd["spec"]["versions"]
        assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
        assert version["subresources"] == {"status": {}}
        assert _structural(version["schema"]["openAPIV3Schema"], crd["metadata"]["name"]) == []
    assert _crds("-o", "json") == crds


def test_the_printer_columns_are_the_ones_served() -> None:
    crds = {c["metadata"]["name"]: c["spec"]["versions"][0] for c in _crds()}
    columns = crds["reservations.scheduling.koordinator.sh"]["additionalPrinterColumns"]
    assert [(c["name"], c["type"], c["jsonPath"]) for c in columns] == [
        ("Phase", "string", ".status.phase"),
        ("Age", "date", ".metadata.creationTimestamp"),
        ("Node", "string", ".status.nodeName"),
        ("TTL", "string", ".spec.ttl"),
        ("Expires", "string", ".spec.expires"),
    ]
    pg = crds["podgroups.scheduling.x-k8s.io"]["additionalPrinterColumns"]
    assert [(c["name"], c["jsonPath"]) for c in pg] == [
        ("Phase", ".status.phase"),
        ("MinMember", ".spec.minMember"),
        ("Running", ".status.running"),
        ("Succeeded", ".status.succeeded"),
        ("Failed", ".status.failed"),
        ("Age", ".metadata.creationTimestamp"),
    ]
    assert "additionalPrinterColumns" not in crds["podgroups.scheduling.sigs.k8s.io"]
