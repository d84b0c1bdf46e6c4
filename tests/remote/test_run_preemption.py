"""Preemption through a real API server: `berth run` (its default profile, `berth-scheduler`) deletes a lower-priority victim, nominates
the preemptor, and binds it once the victim is gone; a PodDisruptionBudget's pod is not chosen while another
victim will do."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from run_helpers import Served, eventually, running, running_berth

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")

Obj = dict[str, Any]


def _priority_class(name: str, value: int) -> Obj:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def _pod(name: str, cpu: str, priority_class: str, **labels: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": {
            "schedulerName": "berth-scheduler",
            "priorityClassName": priority_class,
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
        },
    }


def _pods(served: Served) -> dict[str, Obj]:
    with served.client() as c:
        items = c.get("/api/v1/namespaces/default/pods").json()["items"]
    return {p["metadata"]["name"]: p for p in items}


def test_a_higher_priority_pod_preempts_the_victim_outside_the_budget(tmp_path: Path) -> None:
    with running(tmp_path / "data", "--api-only", log=tmp_path / "serve.log") as served:
        served.apply(
            _priority_class("low", 10),
            _priority_class("high", 1000),
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "n1"},
                "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}},
            },
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "keep", "namespace": "default"},
                "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "kept"}}},
                # no disruption controller runs in api-only mode: the budget's status says what kube's would
                "status": {
                    "disruptionsAllowed": 0,
                    "currentHealthy": 1,
                    "desiredHealthy": 1,
                    "expectedPods": 1,
                },
            },
        )
        with running_berth(served, tmp_path / "run.log", "--leader-elect=false") as run:
            run.wait_for("starting the scheduler")
            # "kept" comes a second later: without its budget it would be the victim (the younger of equals)
            served.apply(_pod("spare", "1", "low", app="spare"))
            eventually(lambda: _pods(served)["spare"]["spec"].get("nodeName"))
            time.sleep(1.1)
            served.apply(_pod("kept", "1", "low", app="kept"))
            eventually(lambda: all(p["spec"].get("nodeName") for p in _pods(served).values()))
            served.apply(_pod("urgent", "1", "high"))

            def urgent_bound() -> bool:
                pods = _pods(served)
                return "spare" not in pods and bool(pods["urgent"]["spec"].get("nodeName"))

            eventually(urgent_bound)
            pods = _pods(served)
            assert {n: p["spec"].get("nodeName") for n, p in pods.items()} == {"kept": "n1", "urgent": "n1"}
            with served.client() as c:
                events = c.get("/api/v1/namespaces/default/events").json()["items"]
            preempted = [e for e in events if e["reason"] == "Preempted"]
            assert [(e["involvedObject"]["name"], e["message"]) for e in preempted] == [
                ("spare", "Preempted by pod " + pods["urgent"]["metadata"]["uid"] + " on node n1")
            ]
            assert "Traceback" not in run.text()
