"""``berth deschedule`` against a live cluster: a real ``berth serve`` on a loopback port, reached through its
kubeconfig. The example's cluster is built there (two busy nodes, then two empty ones); a ``--dry-run``
plans the moves on a copy and changes nothing on the server; a real run evicts through the server's
eviction API and records the descheduler's Events there, and the Deployment's replacements land on the
empty nodes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from berth.cli import app
from serve.serve_helpers import Served, eventually, running

Obj = dict[str, Any]

EXAMPLE = Path(__file__).parents[2] / "examples" / "descheduler"
POLICY = EXAMPLE / "policy.yaml"
PODS = "/api/v1/namespaces/default/pods"
EVENTS = "/api/v1/namespaces/default/events"
COLLECTIONS = {
    "Node": "/api/v1/nodes",
    "Deployment": "/apis/apps/v1/namespaces/default/deployments",
    "PodDisruptionBudget": "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
}


def _items(http: httpx.Client, path: str) -> list[Obj]:
    answer = http.get(path)
    assert answer.status_code == 200, answer.text
    return list(answer.json()["items"])


def _create(http: httpx.Client, obj: Obj) -> None:
    answer = http.post(COLLECTIONS[obj["kind"]], json=obj)
    assert answer.status_code == 201, answer.text


def _example_objects(name: str) -> list[Obj]:
    """The objects of the example's `name` file (a Scenario's steps' objects for 02-scale-out)."""
    docs = list(yaml.safe_load_all((EXAMPLE / name).read_text()))
    out: list[Obj] = []
    for doc in docs:
        if doc["kind"] == "Scenario":
            out.extend(obj for step in doc["spec"]["steps"] for obj in step["create"])
        else:
            out.append(doc)
    return out


def _bound_running(http: httpx.Client) -> list[Obj]:
    """The live (not terminating) pods, once all of them are bound and Running (else [])."""
    pods = [p for p in _items(http, PODS) if "deletionTimestamp" not in p["metadata"]]
    if len(pods) == 8 and all(
        p["spec"].get("nodeName") and p["status"].get("phase") == "Running" for p in pods
    ):
        return pods
    return []


def _pdb_allows(http: httpx.Client, n: int) -> bool:
    (pdb,) = _items(http, COLLECTIONS["PodDisruptionBudget"])
    return bool((pdb.get("status") or {}).get("disruptionsAllowed") == n)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The example's cluster on a live server: 8 web pods on node-1 and node-2, then node-3 and node-4."""
    with running(tmp_path_factory.mktemp("serve")) as served, served.client() as http:
        for obj in _example_objects("01-cluster.yaml"):
            _create(http, obj)
        pods = eventually(lambda: _bound_running(http), "8 web pods bound and Running")
        assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-1"] * 4 + ["node-2"] * 4
        eventually(lambda: _pdb_allows(http, 2), "the PDB allowing 2 disruptions")
        for obj in _example_objects("02-scale-out.yaml"):
            _create(http, obj)
        yield served


def deschedule(served: Served, *args: str) -> Obj:
    """``berth deschedule --kubeconfig ... --policy <example> ARGS... -o json``: the plan."""
    result = CliRunner().invoke(
        app,
        ["deschedule", "--kubeconfig", str(served.kubeconfig), "--policy", str(POLICY), *args, "-o", "json"],
    )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert (result.exit_code, result.stderr) == (0, ""), result.stderr
    plan: Obj = json.loads(result.stdout)
    return plan


def usage(cpu: float, memory: float, pods: float) -> Obj:
    """A node's ``before`` / ``after`` fractions."""
    return {"cpu": cpu, "memory": memory, "pods": pods}


BUSY = usage(0.4, 0.125, 0.036364)  # 4 pods of 400m / 512Mi on 4 cpu / 16Gi / 110 pods
LESS = usage(0.3, 0.09375, 0.027273)
ONE = usage(0.1, 0.03125, 0.009091)
IDLE = usage(0.0, 0.0, 0.0)


def _identity(pods: list[Obj]) -> dict[str, tuple[Any, ...]]:
    return {
        p["metadata"]["name"]: (
            p["metadata"]["uid"],
            p["metadata"]["resourceVersion"],
            p["spec"].get("nodeName"),
            p["metadata"].get("deletionTimestamp"),
        )
        for p in pods
    }


def test_a_dry_run_plans_the_moves_and_changes_nothing(cluster: Served) -> None:
    with cluster.client() as http:
        before = _identity(_items(http, PODS))
        plan = deschedule(cluster, "--dry-run")
        assert _identity(_items(http, PODS)) == before
        assert [e for e in _items(http, EVENTS) if e.get("action") == "Descheduled"] == []
        assert len(_items(http, "/apis/apps/v1/namespaces/default/replicasets")) == 1
    assert plan["apiVersion"] == "berth.dev/v1alpha1"
    assert plan["kind"] == "DeschedulingPlan"
    names = {name: node for name, (_, _, node, _) in before.items()}
    evictions = plan["evictions"]
    # one pod from each busy node, each replaced on one of the empty nodes
    assert [(e["node"], names[e["pod"]["name"]], e["plugin"]) for e in evictions] == [
        ("node-1", "node-1", "LowNodeUtilization"),
        ("node-2", "node-2", "LowNodeUtilization"),
    ]
    assert [e["pod"]["namespace"] for e in evictions] == ["default", "default"]
    replacements = [e["replacement"] for e in evictions]
    assert sorted(r["node"] for r in replacements) == ["node-3", "node-4"]
    assert [r["namespace"] for r in replacements] == ["default", "default"]
    assert all(r["name"] not in names for r in replacements)
    assert plan["nodes"] == [
        {"name": "node-1", "before": BUSY, "after": LESS},
        {"name": "node-2", "before": BUSY, "after": LESS},
        {"name": "node-3", "before": IDLE, "after": ONE},
        {"name": "node-4", "before": IDLE, "after": ONE},
    ]


def test_a_real_run_evicts_on_the_server(cluster: Served) -> None:
    with cluster.client() as http:
        placed = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in _items(http, PODS)}
        plan = deschedule(cluster)
        # the replacements come later, from the server's own controllers: the plan names none
        evicted = [e["pod"]["name"] for e in plan["evictions"]]
        assert plan["evictions"] == [
            {
                "pod": {"namespace": "default", "name": name},
                "node": node,
                "plugin": "LowNodeUtilization",
                "replacement": None,
            }
            for name, node in zip(evicted, ("node-1", "node-2"), strict=True)
        ]
        assert [placed[name] for name in evicted] == ["node-1", "node-2"]
        assert plan["nodes"] == [
            {"name": "node-1", "before": BUSY, "after": LESS},
            {"name": "node-2", "before": BUSY, "after": LESS},
            {"name": "node-3", "before": IDLE, "after": IDLE},
            {"name": "node-4", "before": IDLE, "after": IDLE},
        ]
        # the evicted pods are terminating (or gone) on the server
        now = {p["metadata"]["name"]: p for p in _items(http, PODS)}
        for name in evicted:
            assert name not in now or now[name]["metadata"].get("deletionTimestamp"), name
        # the descheduler's Events are on the server
        events = sorted(
            (e for e in _items(http, EVENTS) if e.get("action") == "Descheduled"),
            key=lambda e: e["message"],
        )
        assert [
            (
                e["involvedObject"]["kind"],
                e["involvedObject"]["name"],
                e["reason"],
                e["type"],
                e["message"],
                e["reportingComponent"],
                e["source"],
            )
            for e in events
        ] == [
            (
                "Pod",
                name,
                "LowNodeUtilization",
                "Normal",
                f"pod eviction from {node} node by sigs.k8s.io/descheduler",
                "sigs.k8s.io/descheduler",
                {"component": "sigs.k8s.io/descheduler"},
            )
            for name, node in zip(evicted, ("node-1", "node-2"), strict=True)
        ]
        # the Deployment replaces them, on the empty nodes
        pods = eventually(lambda: _bound_running(http), "8 live web pods bound and Running again")
        assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-1"] * 3 + ["node-2"] * 3 + [
            "node-3",
            "node-4",
        ]
        assert not {p["metadata"]["name"] for p in pods} & set(evicted)


def test_a_dry_run_never_plans_to_evict_a_terminating_pod(cluster: Served) -> None:
    # right after the real run the evicted pods are still terminating (30s grace): a live dry run reads
    # them as they are and DefaultEvictor keeps terminating pods, so none of them is planned for eviction
    with cluster.client() as http:
        terminating = {
            p["metadata"]["name"] for p in _items(http, PODS) if p["metadata"].get("deletionTimestamp")
        }
        assert len(terminating) == 2
        plan = deschedule(cluster, "--dry-run")
    assert not {e["pod"]["name"] for e in plan["evictions"]} & terminating
