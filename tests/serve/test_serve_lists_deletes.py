"""List pagination and DELETE answers of a running `berth serve`, seen by the real kubectl (``--chunk-size``,
``-v=8``), the official Python client and plain HTTPS."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as kube_client
from kubernetes import config as kube_config
from serve_helpers import KUBECTL, Served, running

from builders import make_pod

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="the end-to-end tests need kubectl on PATH")

PODS = "/api/v1/namespaces/default/pods"
RSS = "/apis/apps/v1/namespaces/default/replicasets"


def _rs(name: str, tier: str = "x") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default", "labels": {"tier": tier}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("serve"), "--api-only") as served:
        served.apply(*(make_pod(f"p{i}").obj() for i in range(5)))
        yield served


def test_kubectl_get_chunk_size_pages_through_the_list(server: Served) -> None:
    done = server.kubectl("get", "pods", "--chunk-size=2", "-v=6")
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()] == ["NAME", "p0", "p1", "p2", "p3", "p4"]
    requests = re.findall(r"GET https://\S+/api/v1/namespaces/default/pods\?(\S+) 200 OK", done.stderr)
    assert len(requests) == 3
    assert ["continue=" in q for q in requests] == [False, True, True]
    assert all("limit=2" in q for q in requests)
    as_json = server.kubectl("get", "pods", "--chunk-size=3", "-o", "json")
    assert [p["metadata"]["name"] for p in json.loads(as_json.stdout)["items"]] == [f"p{i}" for i in range(5)]


def test_the_official_client_continues_at_the_first_pages_resource_version(server: Served) -> None:
    api = kube_client.CoreV1Api(kube_config.new_client_from_config(str(server.kubeconfig)))
    first = api.list_namespaced_pod("default", limit=2)
    assert ([p.metadata.name for p in first.items], first.metadata.remaining_item_count) == (["p0", "p1"], 3)
    api.create_namespaced_pod("default", make_pod("p1a").obj())  # sorts into the next page
    second = api.list_namespaced_pod("default", limit=2, _continue=first.metadata._continue)
    assert [p.metadata.name for p in second.items] == ["p2", "p3"]
    assert second.metadata.resource_version == first.metadata.resource_version
    now = api.list_namespaced_pod("default", limit=2)
    assert [
        p.metadata.name for p in api.list_namespaced_pod("default", _continue=now.metadata._continue).items
    ] == [
        "p1a",
        "p2",
        "p3",
        "p4",
    ]
    api.delete_namespaced_pod("p1a", "default", grace_period_seconds=0)


def test_the_official_client_lists_at_an_older_resource_version(server: Served) -> None:
    api = kube_client.CoreV1Api(kube_config.new_client_from_config(str(server.kubeconfig)))
    before = api.list_namespaced_pod("default", label_selector="batch=old-rv")
    assert before.items == []
    api.create_namespaced_pod("default", make_pod("rv-a").label(batch="old-rv").obj())
    then = api.list_namespaced_pod("default", label_selector="batch=old-rv").metadata.resource_version
    api.create_namespaced_pod("default", make_pod("rv-b").label(batch="old-rv").obj())
    exact = api.list_namespaced_pod(
        "default", label_selector="batch=old-rv", resource_version=then, resource_version_match="Exact"
    )
    assert ([p.metadata.name for p in exact.items], exact.metadata.resource_version) == (["rv-a"], then)
    now = api.list_namespaced_pod(
        "default", label_selector="batch=old-rv", resource_version=then, resource_version_match="NotOlderThan"
    )
    assert [p.metadata.name for p in now.items] == ["rv-a", "rv-b"]
    with pytest.raises(kube_client.ApiException) as ahead:
        api.list_namespaced_pod(
            "default", resource_version=str(int(then) + 1000), resource_version_match="Exact"
        )
    assert ahead.value.status == 504
    assert json.loads(ahead.value.body)["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    for name in ("rv-a", "rv-b"):
        api.delete_namespaced_pod(name, "default", grace_period_seconds=0)


def test_kubectl_delete_receives_kubes_status(server: Served) -> None:
    server.apply(_rs("web"))
    with server.client() as http:
        uid = http.get(f"{RSS}/web").json()["metadata"]["uid"]
    done = server.kubectl("delete", "replicaset", "web", "--wait=false", "-v=8")
    assert (done.returncode, done.stdout) == (0, 'replicaset.apps "web" deleted\n'), done.stderr
    # kubectl 1.32 logs the body as a quoted Go string: `"Response Body" body="{\"kind\":...}"`
    bodies = re.findall(r'helper\.go:\d+\] "Response Body" body=(".*")$', done.stderr, re.MULTILINE)
    assert json.loads(json.loads(bodies[-1])) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "web", "group": "apps", "kind": "replicasets", "uid": uid},
    }


def test_the_official_client_deletes_and_reads_a_status(server: Served) -> None:
    server.apply(_rs("py"))
    apps = kube_client.AppsV1Api(kube_config.new_client_from_config(str(server.kubeconfig)))
    status = apps.delete_namespaced_replica_set("py", "default")  # the client hands back the decoded JSON
    assert (status["kind"], status["status"], status["details"]["name"], status["details"]["kind"]) == (
        "Status",
        "Success",
        "py",
        "replicasets",
    )


def test_foreground_keeps_the_object_and_answers_it(server: Served) -> None:
    server.apply(_rs("fg"))
    with server.client() as http:
        # --api-only runs no garbage collector: the object waits with its finalizer, as on a bare apiserver
        answer = http.request("DELETE", f"{RSS}/fg", json={"propagationPolicy": "Foreground"})
        assert (answer.status_code, answer.json()["metadata"]["finalizers"]) == (200, ["foregroundDeletion"])
        held = _rs("held")
        held["metadata"]["finalizers"] = ["example.com/hold"]
        server.apply(held)
        legacy = http.request("DELETE", f"{RSS}/held", json={"orphanDependents": False})
        assert (legacy.status_code, legacy.json()["kind"]) == (202, "ReplicaSet")
        # Background (what orphanDependents: false means) drops foregroundDeletion: the object goes at once
        background = http.request("DELETE", f"{RSS}/fg", json={"orphanDependents": False})
        assert (background.status_code, background.json()["kind"]) == (200, "Status")


def test_deletecollection_with_selectors_dry_run_and_preconditions(server: Served) -> None:
    server.apply(_rs("c1", "coll"), _rs("c2", "coll"), _rs("c3", "other"))
    with server.client() as http:
        dry = http.request("DELETE", RSS, params={"labelSelector": "tier=coll", "dryRun": "All"})
        assert (dry.status_code, [o["metadata"]["name"] for o in dry.json()["items"]]) == (200, ["c1", "c2"])
        refused = http.request(
            "DELETE", RSS, params={"labelSelector": "tier=coll"}, json={"preconditions": {"uid": "nope"}}
        )
        assert (refused.status_code, refused.json()["reason"]) == (409, "Conflict")
        done = http.request("DELETE", RSS, params={"labelSelector": "tier=coll"})
        assert (done.status_code, done.json()["kind"]) == (200, "ReplicaSetList")
        left = http.get(RSS, params={"labelSelector": "tier in (coll,other)"}).json()["items"]
        assert [o["metadata"]["name"] for o in left] == ["c3"]
