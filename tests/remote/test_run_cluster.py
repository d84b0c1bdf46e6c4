"""`berth run` against `berth serve --api-only` (a bare API server, as a real cluster's): Berth's profiles bound,
other schedulers' pods left alone but counted, Reservations, ElasticQuota max and gangs, end to end.

One server and one `berth run` for the module; each test works in its own namespace, on its own nodes (a
`test` label every pod selects), so the tests do not see each other's pods.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml
from run_helpers import Run, Served, eventually, running, running_berth

pytestmark = pytest.mark.skipif(not __import__("shutil").which("kubectl"), reason="needs kubectl")

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]},
                "multiPoint": {"enabled": [{"name": "Coscheduling"}, {"name": "CapacityScheduling"}]},
                "postFilter": {"disabled": [{"name": "DefaultPreemption"}]},
            },
        }
    ],
}
Obj = dict[str, Any]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Run]]:
    base = tmp_path_factory.mktemp("run")
    config = base / "config.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    with (
        running(base / "data", "--api-only", log=base / "serve.log") as served,
        running_berth(served, base / "run.log", "--scheduler-config", str(config)) as run,
    ):
        run.wait_for("starting the scheduler")
        yield served, run


def _node(name: str, test: str, cpu: str) -> Obj:
    alloc = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"test": test}},
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def _pod(name: str, ns: str, test: str, cpu: str, **spec: Any) -> Obj:
    labels = spec.pop("labels", {})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {
            "nodeSelector": {"test": test},
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
            **spec,
        },
    }


def _namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _pods(served: Served, ns: str) -> dict[str, Obj]:
    with served.client() as c:
        items = c.get(f"/api/v1/namespaces/{ns}/pods").json()["items"]
    return {p["metadata"]["name"]: p for p in items}


def _placement(served: Served, ns: str) -> dict[str, str]:
    return {name: p["spec"].get("nodeName", "") for name, p in _pods(served, ns).items()}


def _condition(pod: Obj) -> tuple[str, str, str]:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c["type"] == "PodScheduled":
            return c["status"], c.get("reason", ""), c.get("message", "")
    return "", "", ""


def _scheduled_events(served: Served, ns: str) -> dict[str, int]:
    """How many Scheduled events each pod of `ns` got (a pod bound twice would have two)."""
    with served.client() as c:
        items = c.get(f"/api/v1/namespaces/{ns}/events").json()["items"]
    counts: dict[str, int] = {}
    for e in items:
        if e["reason"] == "Scheduled":
            name = e["involvedObject"]["name"]
            counts[name] = counts.get(name, 0) + int(e.get("count") or 1)
    return counts


def test_pods_of_berths_profiles_are_bound_and_others_left_alone_but_counted(
    cluster: tuple[Served, Run],
) -> None:
    served, _ = cluster
    served.apply(
        _namespace("plain"),
        _node("plain-1", "plain", "2"),
        _node("plain-2", "plain", "2"),
        # another scheduler's pod, bound by it: its 2 CPU fill plain-1
        _pod("theirs", "plain", "plain", "2", schedulerName="other-scheduler", nodeName="plain-1"),
        # another scheduler's pod, not bound yet: Berth leaves it alone
        _pod("waiting", "plain", "plain", "1", schedulerName="other-scheduler"),
    )
    served.apply(*(_pod(n, "plain", "plain", "1") for n in ("a", "b", "c")))

    def placed() -> bool:
        pods = _pods(served, "plain")
        return (
            all(pods[n]["spec"].get("nodeName") for n in ("a", "b")) and _condition(pods["c"])[0] == "False"
        )

    eventually(placed)
    pods = _pods(served, "plain")
    assert {n: p["spec"].get("nodeName", "") for n, p in pods.items()} == {
        "a": "plain-2",
        "b": "plain-2",
        "c": "",
        "theirs": "plain-1",
        "waiting": "",
    }
    status, reason, message = _condition(pods["c"])
    assert (status, reason) == ("False", "Unschedulable")
    assert re.match(r"0/\d+ nodes are available: 2 Insufficient cpu", message)
    assert "conditions" not in (pods["waiting"].get("status") or {})
    assert _scheduled_events(served, "plain") == {"a": 1, "b": 1}


def test_a_reservation_is_placed_and_its_owner_lands_in_it(cluster: tuple[Served, Run]) -> None:
    served, _ = cluster
    served.apply(_namespace("resv"), _node("resv-1", "resv", "2"), _node("resv-2", "resv", "2"))
    served.apply(
        {
            "apiVersion": "scheduling.koordinator.sh/v1alpha1",
            "kind": "Reservation",
            "metadata": {"name": "r1"},
            "spec": {
                "template": {
                    "metadata": {"namespace": "resv"},
                    "spec": {
                        "nodeSelector": {"test": "resv"},
                        "containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}],
                    },
                },
                "owners": [{"labelSelector": {"matchLabels": {"app": "owner"}}}],
                "ttl": "1h",
            },
        }
    )

    def available() -> str:
        with served.client() as c:
            r = c.get("/apis/scheduling.koordinator.sh/v1alpha1/reservations/r1").json()
        status = r.get("status") or {}
        return str(status.get("nodeName") or "") if status.get("phase") == "Available" else ""

    reserved = eventually(available)
    other = {"resv-1": "resv-2", "resv-2": "resv-1"}[reserved]
    served.apply(_pod("stranger", "resv", "resv", "2"))
    eventually(lambda: _placement(served, "resv").get("stranger"))
    served.apply(_pod("owner", "resv", "resv", "2", labels={"app": "owner"}))
    eventually(lambda: _placement(served, "resv").get("owner"))
    assert _placement(served, "resv") == {"stranger": other, "owner": reserved}
    assert _scheduled_events(served, "resv") == {"stranger": 1, "owner": 1}


def test_an_elastic_quota_max_is_respected(cluster: tuple[Served, Run]) -> None:
    served, _ = cluster
    served.apply(
        _namespace("team"),
        _node("quota-1", "quota", "8"),
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "ElasticQuota",
            "metadata": {"name": "team", "namespace": "team"},
            "spec": {"min": {"cpu": "2"}, "max": {"cpu": "2"}},
        },
    )
    served.apply(*(_pod(f"q{i}", "team", "quota", "1") for i in range(3)))

    def settled() -> bool:
        pods = _pods(served, "team")
        return len(pods) == 3 and all(
            p["spec"].get("nodeName") or _condition(p)[0] == "False" for p in pods.values()
        )

    eventually(settled)
    placement = _placement(served, "team")
    assert sorted(placement.values()) == ["", "quota-1", "quota-1"]
    pending = next(p for n, p in _pods(served, "team").items() if not placement[n])
    assert _condition(pending)[:2] == ("False", "Unschedulable")


def test_a_gang_is_bound_whole_or_not_at_all(cluster: tuple[Served, Run]) -> None:
    served, _ = cluster
    groups = [
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "gang"},
            "spec": {"minMember": size, "scheduleTimeoutSeconds": 5},
        }
        for name, size in (("trio", 3), ("quad", 4))
    ]
    served.apply(_namespace("gang"), _node("gang-1", "gang", "4"), *groups)
    gang = "scheduling.x-k8s.io/pod-group"
    served.apply(*(_pod(f"trio-{i}", "gang", "gang", "1", labels={gang: "trio"}) for i in range(3)))
    eventually(lambda: all(_placement(served, "gang").get(f"trio-{i}") for i in range(3)))
    # one CPU is left: three of quad's four members would not fit, none is bound
    served.apply(*(_pod(f"quad-{i}", "gang", "gang", "1", labels={gang: "quad"}) for i in range(4)))

    def all_refused() -> bool:
        pods = _pods(served, "gang")
        return all(_condition(pods[f"quad-{i}"])[0] == "False" for i in range(4))

    eventually(all_refused)
    assert _placement(served, "gang") == {
        **{f"trio-{i}": "gang-1" for i in range(3)},
        **{f"quad-{i}": "" for i in range(4)},
    }
    assert _scheduled_events(served, "gang") == {f"trio-{i}": 1 for i in range(3)}


def test_metrics_and_healthz(cluster: tuple[Served, Run]) -> None:
    served, run = cluster
    assert run.status_url.startswith("https://127.0.0.1:")  # kube-scheduler's secure port: TLS
    # a certificate made at start, for the listen address (self-signed: not trusted here)
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(f"{run.status_url}/healthz", timeout=10)
    with httpx.Client(verify=False, timeout=10) as c:
        healthz = c.get(f"{run.status_url}/healthz")
        assert (healthz.status_code, healthz.text) == (200, "ok")  # open, as kube's always-allowed paths
        # /metrics: no token, or one the server's TokenReview does not accept, is Unauthorized
        for headers in ({}, {"Authorization": "Bearer nobody"}):
            refused = c.get(f"{run.status_url}/metrics", headers=headers)
            assert (refused.status_code, refused.json()["reason"], refused.json()["message"]) == (
                401,
                "Unauthorized",
                "Unauthorized",
            )
        metrics = c.get(f"{run.status_url}/metrics", headers={"Authorization": f"Bearer {served.token}"})
        missing = c.get(f"{run.status_url}/nothing")
    assert metrics.status_code == 200
    lines = metrics.text.splitlines()
    assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} ' in "\n".join(
        lines
    )
    assert any(line.startswith("process_cpu_seconds_total ") for line in lines)
    assert missing.status_code == 404


def test_the_runner_logged_no_api_error(cluster: tuple[Served, Run]) -> None:
    _, run = cluster
    assert "API error" not in run.text()
    assert "Traceback" not in run.text()
