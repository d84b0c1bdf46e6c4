"""Discovery documents: exactly what kube-apiserver serves for the kinds Berth knows."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from berth.api.kinds import all_kinds
from berth.server import discovery

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
CRD_VERBS = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]
SUB_VERBS = ["get", "patch", "update"]

KUBECTL_1_32_DISCOVERY = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)
KUBECTL_1_27_DISCOVERY = (
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)


def _gv(group: str, version: str) -> dict[str, str]:
    gv = f"{group}/{version}"
    return {"groupVersion": gv, "version": version}


def _only(doc: dict[str, Any] | None, names: set[str], key: str = "name") -> dict[str, Any]:
    """`doc` with only the resources (and their subresources) named in `names`."""
    assert doc is not None
    return {**doc, "resources": [r for r in doc["resources"] if r[key].split("/")[0] in names]}


NAMED_GROUPS = (
    ("apps", "v1"),
    ("events.k8s.io", "v1"),
    ("autoscaling", "v2"),
    ("batch", "v1"),
    ("networking.k8s.io", "v1"),
    ("policy", "v1"),
    ("rbac.authorization.k8s.io", "v1"),
    ("storage.k8s.io", "v1"),
    ("admissionregistration.k8s.io", "v1"),
    ("scheduling.k8s.io", "v1"),
    ("coordination.k8s.io", "v1"),
    ("node.k8s.io", "v1"),
    ("discovery.k8s.io", "v1"),
    ("scheduling.koordinator.sh", "v1alpha1"),
    ("scheduling.x-k8s.io", "v1alpha1"),
    ("scheduling.sigs.k8s.io", "v1alpha1"),
)
"""The named groups served: kube-apiserver's in its priority order, then the CRD groups."""


def test_api_versions() -> None:
    assert discovery.api_versions() == {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [],
    }
    assert discovery.api_versions("127.0.0.1:6443")["serverAddressByClientCIDRs"] == [
        {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}
    ]


def test_api_group_list_in_priority_order() -> None:
    groups = NAMED_GROUPS
    assert discovery.api_group_list() == {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [{"name": g, "versions": [_gv(g, v)], "preferredVersion": _gv(g, v)} for g, v in groups],
    }


def test_api_group() -> None:
    assert discovery.api_group("policy") == {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": "policy",
        "versions": [_gv("policy", "v1")],
        "preferredVersion": _gv("policy", "v1"),
    }
    assert discovery.api_group("certificates.k8s.io") is None
    assert discovery.api_group("berth.dev") is None  # berth simulate's Scenario is an input format
    assert discovery.api_group("") is None


def test_core_resource_list() -> None:
    def main(name: str, kind: str, namespaced: bool, short: str, hash_: str, **extra: Any) -> dict[str, Any]:
        return {
            "name": name,
            "singularName": kind.lower(),
            "namespaced": namespaced,
            "kind": kind,
            "verbs": ALL_VERBS,
            "shortNames": [short],
            **extra,
            "storageVersionHash": hash_,
        }

    def sub(name: str, kind: str, namespaced: bool, verbs: list[str], **gv: str) -> dict[str, Any]:
        return {
            "name": name,
            "singularName": "",
            "namespaced": namespaced,
            **gv,
            "kind": kind,
            "verbs": verbs,
        }

    # the storage version hashes are kube-apiserver's own
    assert _only(discovery.resource_list("", "v1"), {"events", "namespaces", "nodes", "pods"}) == {
        "kind": "APIResourceList",
        "groupVersion": "v1",
        "resources": [
            main("events", "Event", True, "ev", "r2yiGXH7wu8="),
            main("namespaces", "Namespace", False, "ns", "Q3oi5N2YM8M="),
            sub("namespaces/status", "Namespace", False, SUB_VERBS),
            main("nodes", "Node", False, "no", "XwShjMxG9Fs="),
            sub("nodes/status", "Node", False, SUB_VERBS),
            main("pods", "Pod", True, "po", "xPOwRZ+Yhw8=", categories=["all"]),
            sub("pods/binding", "Binding", True, ["create"]),
            sub("pods/eviction", "Eviction", True, ["create"], group="policy", version="v1"),
            sub("pods/status", "Pod", True, SUB_VERBS),
        ],
    }


def test_apps_resource_list() -> None:
    scale = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert _only(discovery.resource_list("apps", "v1"), {"deployments", "replicasets"}) == {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": "apps/v1",
        "resources": [
            {
                "name": "deployments",
                "singularName": "deployment",
                "namespaced": True,
                "kind": "Deployment",
                "verbs": ALL_VERBS,
                "shortNames": ["deploy"],
                "categories": ["all"],
                "storageVersionHash": "8aSe+NMegvE=",
            },
            {
                "name": "deployments/scale",
                "singularName": "",
                "namespaced": True,
                **scale,
                "verbs": SUB_VERBS,
            },
            {
                "name": "deployments/status",
                "singularName": "",
                "namespaced": True,
                "kind": "Deployment",
                "verbs": SUB_VERBS,
            },
            {
                "name": "replicasets",
                "singularName": "replicaset",
                "namespaced": True,
                "kind": "ReplicaSet",
                "verbs": ALL_VERBS,
                "shortNames": ["rs"],
                "categories": ["all"],
                "storageVersionHash": "P1RzHs8/mWQ=",
            },
            {
                "name": "replicasets/scale",
                "singularName": "",
                "namespaced": True,
                **scale,
                "verbs": SUB_VERBS,
            },
            {
                "name": "replicasets/status",
                "singularName": "",
                "namespaced": True,
                "kind": "ReplicaSet",
                "verbs": SUB_VERBS,
            },
        ],
    }


def test_the_other_builtin_kinds_as_kube_apiserver_lists_them() -> None:
    core = discovery.resource_list("", "v1")
    assert core is not None
    by_name = {r["name"]: r for r in core["resources"]}
    assert by_name["services"] == {
        "name": "services",
        "singularName": "service",
        "namespaced": True,
        "kind": "Service",
        "verbs": ALL_VERBS,
        "shortNames": ["svc"],
        "categories": ["all"],
        "storageVersionHash": "0/CO1lhkEBI=",
    }
    assert (by_name["configmaps"]["shortNames"], by_name["configmaps"]["storageVersionHash"]) == (
        ["cm"],
        "qFsyl6wFWjQ=",
    )
    assert "configmaps/status" not in by_name and "services/status" in by_name
    assert by_name["persistentvolumes"]["namespaced"] is False
    apps = discovery.resource_list("apps", "v1")
    assert apps is not None
    names = [r["name"] for r in apps["resources"]]
    assert names == [
        "controllerrevisions",
        "daemonsets",
        "daemonsets/status",
        "deployments",
        "deployments/scale",
        "deployments/status",
        "replicasets",
        "replicasets/scale",
        "replicasets/status",
        "statefulsets",
        "statefulsets/scale",
        "statefulsets/status",
    ]
    sts = next(r for r in apps["resources"] if r["name"] == "statefulsets")
    assert (sts["shortNames"], sts["categories"], sts["storageVersionHash"]) == (
        ["sts"],
        ["all"],
        "H+vl74LkKdo=",
    )


def test_crd_resource_list_as_apiextensions_serves_it() -> None:
    doc = discovery.resource_list("scheduling.koordinator.sh", "v1alpha1")
    assert doc is not None
    assert doc["groupVersion"] == "scheduling.koordinator.sh/v1alpha1"
    assert doc["resources"] == [
        {
            "name": "podmigrationjobs",
            "singularName": "podmigrationjob",
            "namespaced": False,
            "kind": "PodMigrationJob",
            "verbs": CRD_VERBS,
            "shortNames": ["pmj"],
            "storageVersionHash": discovery.storage_version_hash(
                "scheduling.koordinator.sh", "v1alpha1", "PodMigrationJob"
            ),
        },
        {
            "name": "podmigrationjobs/status",
            "singularName": "",
            "namespaced": False,
            "kind": "PodMigrationJob",
            "verbs": SUB_VERBS,
        },
        {
            "name": "reservations",
            "singularName": "reservation",
            "namespaced": False,
            "kind": "Reservation",
            "verbs": CRD_VERBS,
            "storageVersionHash": discovery.storage_version_hash(
                "scheduling.koordinator.sh", "v1alpha1", "Reservation"
            ),
        },
        {
            "name": "reservations/status",
            "singularName": "",
            "namespaced": False,
            "kind": "Reservation",
            "verbs": SUB_VERBS,
        },
    ]


def test_unknown_group_versions() -> None:
    assert discovery.resource_list("", "v2") is None
    assert discovery.resource_list("apps", "v1beta1") is None
    assert discovery.resource_list("berth.dev", "v1alpha1") is None


def test_every_served_kind_is_discoverable() -> None:
    served = {(k.group, k.version, k.plural) for k in discovery.served_kinds()}
    assert served == {(k.group, k.version, k.plural) for k in all_kinds() if k.group != "berth.dev"}
    found = set()
    for group, version, _ in served:
        doc = discovery.resource_list(group, version)
        assert doc is not None
        found |= {(group, version, r["name"]) for r in doc["resources"] if "/" not in r["name"]}
    assert found == served


def _rk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def test_aggregated_core_group() -> None:
    def res(
        plural: str, kind: str, scope: str, short: str, subs: list[dict[str, Any]], **extra: Any
    ) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "resource": plural,
            "responseKind": _rk("", "", kind),
            "scope": scope,
            "singularResource": kind.lower(),
            "verbs": ALL_VERBS,
            "shortNames": [short],
            **extra,
        }
        if subs:
            doc["subresources"] = subs
        return doc

    def with_status(kind: str) -> list[dict[str, Any]]:
        return [{"subresource": "status", "responseKind": _rk("", "", kind), "verbs": SUB_VERBS}]

    doc = copy.deepcopy(discovery.aggregated("/api", "v2"))  # the document is cached: change a copy
    core = doc["items"][0]["versions"][0]
    core["resources"] = [
        r for r in core["resources"] if r["resource"] in ("events", "namespaces", "nodes", "pods")
    ]
    assert doc == {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": [
            {
                "metadata": {"creationTimestamp": None},
                "versions": [
                    {
                        "version": "v1",
                        "resources": [
                            res("events", "Event", "Namespaced", "ev", []),
                            res("namespaces", "Namespace", "Cluster", "ns", with_status("Namespace")),
                            res("nodes", "Node", "Cluster", "no", with_status("Node")),
                            res(
                                "pods",
                                "Pod",
                                "Namespaced",
                                "po",
                                [
                                    {
                                        "subresource": "binding",
                                        "responseKind": _rk("", "", "Binding"),
                                        "verbs": ["create"],
                                    },
                                    {
                                        "subresource": "eviction",
                                        "responseKind": _rk("policy", "v1", "Eviction"),
                                        "verbs": ["create"],
                                    },
                                    *with_status("Pod"),
                                ],
                                categories=["all"],
                            ),
                        ],
                        "freshness": "Current",
                    }
                ],
            }
        ],
    }


def test_aggregated_named_groups() -> None:
    doc = discovery.aggregated("/apis", "v2")
    assert [i["metadata"] for i in doc["items"]] == [
        {"name": g, "creationTimestamp": None} for g, _ in NAMED_GROUPS
    ]
    by_group = {i["metadata"]["name"]: i["versions"] for i in doc["items"]}
    deployments = next(r for r in by_group["apps"][0]["resources"] if r["resource"] == "deployments")
    assert deployments == {
        "resource": "deployments",
        "responseKind": _rk("", "", "Deployment"),
        "scope": "Namespaced",
        "singularResource": "deployment",
        "verbs": ALL_VERBS,
        "shortNames": ["deploy"],
        "categories": ["all"],
        "subresources": [
            {"subresource": "scale", "responseKind": _rk("autoscaling", "v1", "Scale"), "verbs": SUB_VERBS},
            {"subresource": "status", "responseKind": _rk("", "", "Deployment"), "verbs": SUB_VERBS},
        ],
    }
    # a CRD's kinds are fully qualified, as apiextensions-apiserver writes them
    gv = ("scheduling.x-k8s.io", "v1alpha1")
    assert by_group["scheduling.x-k8s.io"] == [
        {
            "version": "v1alpha1",
            "resources": [
                {
                    "resource": plural,
                    "responseKind": _rk(*gv, kind),
                    "scope": "Namespaced",
                    "singularResource": kind.lower(),
                    "verbs": CRD_VERBS,
                    "shortNames": short,
                    "subresources": [
                        {"subresource": "status", "responseKind": _rk(*gv, kind), "verbs": SUB_VERBS}
                    ],
                }
                for plural, kind, short in (
                    ("elasticquotas", "ElasticQuota", ["eq", "eqs"]),
                    ("podgroups", "PodGroup", ["pg", "pgs"]),
                )
            ],
            "freshness": "Current",
        }
    ]
    reservation = next(
        r for r in by_group["scheduling.koordinator.sh"][0]["resources"] if r["resource"] == "reservations"
    )
    assert reservation["scope"] == "Cluster"
    assert "shortNames" not in reservation and "categories" not in reservation
    pdb = by_group["policy"][0]["resources"][0]
    assert (pdb["resource"], pdb["shortNames"], pdb["scope"]) == (
        "poddisruptionbudgets",
        ["pdb"],
        "Namespaced",
    )
    leases = by_group["coordination.k8s.io"][0]["resources"]
    assert [(r["resource"], "shortNames" in r, "subresources" in r) for r in leases] == [
        ("leases", False, False)
    ]


def test_aggregated_v2beta1_is_the_same_document() -> None:
    for path in ("/api", "/apis"):
        v2, v2beta1 = discovery.aggregated(path, "v2"), discovery.aggregated(path, "v2beta1")
        assert v2beta1["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
        assert {**v2beta1, "apiVersion": v2["apiVersion"]} == v2
    with pytest.raises(ValueError):
        discovery.aggregated("/api/v1", "v2")
    with pytest.raises(ValueError):
        discovery.aggregated("/apis", "v1")


@pytest.mark.parametrize(
    ("accept", "version"),
    [
        (KUBECTL_1_32_DISCOVERY, "v2"),
        (KUBECTL_1_27_DISCOVERY, "v2beta1"),
        ("application/json", None),
        ("", None),
        ("application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", None),
        ("application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", None),
        ("application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json", None),
    ],
)
def test_negotiate_aggregated(accept: str, version: str | None) -> None:
    assert discovery.negotiate_aggregated(accept) == version


def test_aggregated_content_type() -> None:
    assert (
        discovery.aggregated_content_type("v2beta1")
        == "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
    )


def test_documents_are_cached() -> None:
    assert discovery.aggregated("/apis", "v2") is discovery.aggregated("/apis", "v2")
    assert discovery.resource_list("", "v1") is discovery.resource_list("", "v1")
