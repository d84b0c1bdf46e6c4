"""Two `berth run` replicas with leader election against one `berth serve --api-only`: only the leader binds;
when it is killed the standby takes over within the lease; no pod is bound twice; a stopped leader exits 0
and releases its Lease."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from run_helpers import Run, Served, eventually, pod_placement, running, scheduled_counts, start_run, stop_run

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/berth-scheduler"
FAST = (
    "--leader-elect-lease-duration=3s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=500ms",
)
Obj = dict[str, Any]


def _identity(run: Run) -> str:
    match = re.search(r"berth run: following \S+ as (\S+);", run.text())
    assert match, run.text()
    return match.group(1)


def _lease(served: Served) -> Obj:
    with served.client() as c:
        resp = c.get(LEASE)
    assert resp.status_code == 200, resp.text
    spec: Obj = resp.json()["spec"]
    return spec


def _pods(served: Served, *names: str) -> list[Obj]:
    docs = []
    for name in names:
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
                    "schedulerName": "berth-scheduler",
                    "containers": [
                        {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}
                    ],
                },
            }
        )
    return docs


def test_one_leader_binds_and_the_standby_takes_over(tmp_path: Path) -> None:
    with running(tmp_path / "data", "--api-only", log=tmp_path / "serve.log") as served:
        served.apply(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "n1"},
                "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}},
            }
        )
        first = start_run(served, tmp_path / "first.log", *FAST)
        second: Run | None = None
        try:
            first.wait_for("starting the scheduler")
            second = start_run(served, tmp_path / "second.log", *FAST)
            second.wait_for("attempting to acquire leader lease")
            assert _lease(served)["holderIdentity"] == _identity(first)

            served.apply(*_pods(served, "a", "b", "c"))
            eventually(lambda: all(pod_placement(served).values()) and len(pod_placement(served)) == 3)
            assert "starting the scheduler" not in second.text()

            first.process.kill()  # no release: the standby waits the lease out
            first.process.wait()
            served.apply(*_pods(served, "d", "e"))
            second.wait_for("starting the scheduler", seconds=30)
            eventually(lambda: all(pod_placement(served).values()) and len(pod_placement(served)) == 5)
            lease = _lease(served)
            assert (lease["holderIdentity"], lease["leaseTransitions"]) == (_identity(second), 1)
            assert pod_placement(served) == {n: "n1" for n in "abcde"}
            assert scheduled_counts(served) == {n: 1 for n in "abcde"}

            assert stop_run(second) == 0
            assert _lease(served)["holderIdentity"] == ""  # released on the way out
            assert "leaderelection lost" not in second.text()
        finally:
            stop_run(first)
            if second is not None:
                stop_run(second)


def test_without_leader_election_it_schedules_at_once(tmp_path: Path) -> None:
    with running(tmp_path / "data", "--api-only", log=tmp_path / "serve.log") as served:
        run = start_run(served, tmp_path / "run.log", "--leader-elect=false")
        try:
            run.wait_for("starting the scheduler")
            with served.client() as c:
                assert c.get(LEASE).status_code == 404
        finally:
            assert stop_run(run) == 0


def test_a_leader_whose_lease_is_taken_exits_1(tmp_path: Path) -> None:
    with running(tmp_path / "data", "--api-only", log=tmp_path / "serve.log") as served:
        run = start_run(served, tmp_path / "run.log", *FAST)
        try:
            run.wait_for("starting the scheduler")

            def usurp() -> bool:
                """Take the Lease (a renewal between the read and the write: 409, try again)."""
                with served.client() as c:
                    lease = c.get(LEASE).json()
                    lease["spec"].update(holderIdentity="usurper", leaseDurationSeconds=3600)
                    return c.put(LEASE, json=lease).status_code == 200

            eventually(usurp)
            assert run.process.wait(30) == 1
            assert run.text().endswith("error: leaderelection lost\n")
            assert "lease kube-system/berth-scheduler is held by 'usurper'" in run.text()
        finally:
            stop_run(run)
