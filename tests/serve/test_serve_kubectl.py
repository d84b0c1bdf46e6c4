"""`berth serve` driven by the real kubectl and the official Python client, over HTTPS on loopback."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client as kube_client
from kubernetes import config as kube_config
from kubernetes import watch as kube_watch
from serve_helpers import KUBECTL, Served, eventually, running

from builders import make_node, make_pod

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="the end-to-end tests need kubectl on PATH")

GUIDE = Path(__file__).parents[2] / "examples" / "reservation" / "01-quick-start"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("serve")) as served:
        yield served


def _get(served: Served, *args: str) -> Any:
    done = served.kubectl("get", *args, "-o", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_discovery_and_an_empty_cluster(server: Served) -> None:
    done = server.kubectl("get", "nodes")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "No resources found\n")
    resources = server.kubectl("api-resources", "--api-group", "scheduling.koordinator.sh", "-o", "name")
    assert resources.stdout.split() == [
        "podmigrationjobs.scheduling.koordinator.sh",
        "reservations.scheduling.koordinator.sh",
    ]
    version = server.kubectl("version", "-o", "json")
    assert json.loads(version.stdout)["serverVersion"]["gitVersion"] == "v1.32.0-berth"


def test_a_created_pod_is_scheduled_and_runs(server: Served) -> None:
    out = server.apply(make_node("n1").obj(), make_pod("web").req(cpu="1").obj())
    assert out == "node/n1 created\npod/web created\n"
    eventually(lambda: _get(server, "pod", "web")["status"].get("phase") == "Running", "web Running")
    pod = _get(server, "pod", "web")
    assert pod["spec"]["nodeName"] == "n1"
    assert [c["type"] for c in pod["status"]["conditions"]] == [
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    wide = server.kubectl("get", "pod", "web", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED",
        "NODE",
        "READINESS",
        "GATES",
    ]
    assert wide[1].split()[:3] == ["web", "1/1", "Running"] and wide[1].split()[6] == "n1"
    events = _get(server, "events", "--field-selector", "involvedObject.name=web")["items"]
    assert ("Scheduled", "Successfully assigned default/web to n1") in [
        (e["reason"], e["message"]) for e in events
    ]


def test_delete_waits_until_the_pod_is_gone(server: Served) -> None:
    server.apply(
        make_node("n2").obj(),
        make_pod("short").node_selector(**{"kubernetes.io/hostname": "n2"}).grace(1).obj(),
    )
    eventually(lambda: _get(server, "pod", "short")["status"].get("phase") == "Running", "short Running")
    done = server.kubectl("delete", "pod", "short")
    assert (done.returncode, done.stdout) == (0, 'pod "short" deleted\n')
    gone = server.kubectl("get", "pod", "short")
    assert (gone.returncode, gone.stderr) == (1, 'Error from server (NotFound): pods "short" not found\n')


def test_label_and_describe(server: Served) -> None:
    server.apply(make_node("n3").obj())
    assert server.kubectl("label", "node", "n3", "zone=a").stdout == "node/n3 labeled\n"
    assert _get(server, "node", "n3")["metadata"]["labels"]["zone"] == "a"
    described = server.kubectl("describe", "node", "n3")
    assert described.returncode == 0, described.stderr
    assert "zone=a" in described.stdout and "Allocatable:" in described.stdout


def test_the_reservation_quick_start_of_the_user_guide(server: Served) -> None:
    """Koordinator's guide: a Reservation becomes Available on a node; its owner pod lands in it."""
    for name in ("01-nodes.yaml", "02-reservation-demo.yaml"):
        done = server.kubectl("create", "-f", str(GUIDE / name))
        assert done.returncode == 0, done.stderr
    reservation = eventually(
        lambda: (
            (r := _get(server, "reservation", "reservation-demo"))["status"].get("phase") == "Available" and r
        ),
        "reservation Available",
    )
    table = server.kubectl("get", "reservation", "-o", "wide").stdout.splitlines()
    assert table[0].split() == ["NAME", "PHASE", "AGE", "NODE", "TTL", "EXPIRES"]
    assert table[1].split()[:2] == ["reservation-demo", "Available"]
    scenario = yaml.safe_load((GUIDE / "03-scenario.yaml").read_text())
    server.apply(scenario["spec"]["steps"][0]["create"][0])
    pod = eventually(
        lambda: (p := _get(server, "pod", "pod-demo-0"))["spec"].get("nodeName") and p, "owner bound"
    )
    assert pod["spec"]["nodeName"] == reservation["status"]["nodeName"]
    allocated = json.loads(pod["metadata"]["annotations"]["scheduling.koordinator.sh/reservation-allocated"])
    assert allocated == {"name": "reservation-demo", "uid": reservation["metadata"]["uid"]}


def test_refusals_are_kube_statuses(server: Served) -> None:
    with server.client(token="wrong") as http:
        answer = http.get("/api/v1/pods")
    assert answer.status_code == 401
    assert answer.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }
    with server.client() as http:
        assert http.get("/healthz").text == "ok"
        missing = http.get("/api/v1/namespaces/default/pods/nope")
        assert (missing.status_code, missing.json()["message"]) == (404, 'pods "nope" not found')
        big = http.post("/api/v1/namespaces/default/pods", content=b"{" + b" " * (3 * 1024 * 1024) + b"}")
        assert (big.status_code, big.json()["reason"]) == (413, "RequestEntityTooLarge")
        bad = http.post(
            "/api/v1/namespaces/default/pods",
            content=b"{not json",
            headers={"Content-Type": "application/json"},
        )
        assert (bad.status_code, bad.json()["reason"]) == (400, "BadRequest")
    empty = make_pod("bad").obj()
    empty["spec"]["containers"] = []
    done = server.kubectl("create", "-f", "-", stdin=yaml.safe_dump(empty))
    assert (done.returncode, done.stderr) == (
        1,
        'The Pod "bad" is invalid: spec.containers: Required value\n',
    )


def test_the_official_client_lists_and_watches(server: Served) -> None:
    api = kube_client.CoreV1Api(kube_config.new_client_from_config(str(server.kubeconfig)))
    seen: list[tuple[str, str]] = []
    stream = kube_watch.Watch()

    def follow() -> None:
        for event in stream.stream(api.list_namespaced_pod, "default", timeout_seconds=20):
            seen.append((event["type"], event["object"].metadata.name))
            if event["object"].metadata.name == "py-made":
                stream.stop()

    follower = threading.Thread(target=follow)
    follower.start()
    eventually(lambda: seen, "the watch's first events")
    api.create_namespaced_pod("default", make_pod("py-made").obj())
    follower.join(30)
    assert not follower.is_alive()
    assert ("ADDED", "py-made") in seen
    names = [p.metadata.name for p in api.list_namespaced_pod("default").items]
    assert "py-made" in names


def test_state_survives_a_restart(tmp_path: Path) -> None:
    with running(tmp_path) as first:
        first.apply(make_node("n1").obj(), make_pod("kept").obj())
        before = eventually(lambda: (p := _get(first, "pod", "kept"))["spec"].get("nodeName") and p, "bound")
    with running(tmp_path) as second:
        after = _get(second, "pod", "kept")
        assert (after["metadata"]["uid"], after["spec"]["nodeName"]) == (before["metadata"]["uid"], "n1")
        assert int(after["metadata"]["resourceVersion"]) >= int(before["metadata"]["resourceVersion"])
        second.apply(make_pod("new").obj())
        assert _get(second, "pod", "new")["metadata"]["uid"] != before["metadata"]["uid"]


def test_api_only_and_kubelet_none(tmp_path: Path) -> None:
    with running(tmp_path / "bare", "--api-only") as bare:
        bare.apply(make_node("n1").obj(), make_pod("waits").obj())
        time.sleep(0.5)  # give a scheduler the chance it must not have
        assert "nodeName" not in _get(bare, "pod", "waits")["spec"]
    with running(tmp_path / "nokubelet", "--kubelet", "none") as idle:
        idle.apply(make_node("n1").obj(), make_pod("bound").obj())
        pod = eventually(lambda: (p := _get(idle, "pod", "bound"))["spec"].get("nodeName") and p, "bound")
        assert pod["status"].get("phase") == "Pending"


def test_kubectl_drain_honours_a_disruption_budget(tmp_path: Path) -> None:
    """Three replicas with minAvailable 2: the drain of the node holding two evicts one, is refused the second
    (429, kube's message) until the replacement is Ready, then evicts it; the budget is never broken."""
    labels = {"app": "web"}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": labels},
            "template": {
                # a new replica is Ready 6 s after it is bound, so the budget holds the second eviction back
                "metadata": {"labels": labels, "annotations": {"berth.dev/startup": "6s"}},
                "spec": {
                    "terminationGracePeriodSeconds": 1,
                    "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "3"}}}],
                },
            },
        },
    }
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web-pdb", "namespace": "default"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": labels}},
    }
    with running(tmp_path) as served:
        served.apply(
            make_node("a").capacity(cpu="8").obj(), make_node("b").capacity(cpu="8").obj(), deployment, budget
        )
        healthy = lambda n: _get(served, "pdb", "web-pdb").get("status", {}).get("currentHealthy") == n  # noqa: E731
        eventually(lambda: healthy(3), "three replicas healthy")
        lowest = [3]
        stream = kube_watch.Watch()
        stopping = threading.Event()
        errors: list[str] = []
        watcher = threading.Thread(target=_track_healthy, args=(served, stream, lowest, stopping, errors))
        watcher.start()
        on = lambda node: [  # noqa: E731
            p["metadata"]["name"]
            for p in _get(served, "pods", "-l", "app=web")["items"]
            if p["spec"]["nodeName"] == node
        ]
        busy = "a" if len(on("a")) == 2 else "b"
        victims = sorted(on(busy))
        served.apply(make_node("c").capacity(cpu="8").obj())
        done = served.kubectl("drain", busy, "--ignore-daemonsets", "--timeout=60s")
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert (lines[0], lines[-1]) == (f"node/{busy} cordoned", f"node/{busy} drained")
        evicted = sorted(line.split("/")[1].split()[0] for line in lines if line.startswith("pod/"))
        assert evicted == victims
        refusals = [line for line in done.stderr.splitlines() if line.startswith("error when evicting pods/")]
        assert len(refusals) >= 1
        assert refusals[0].endswith(
            "(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget."
        )
        eventually(lambda: healthy(3), "the replacements healthy")
        assert on(busy) == []
        stopping.set()
        stream.stop()
        served.kubectl("label", "pdb", "web-pdb", "done=yes")  # one more event lets the watch see the stop
        watcher.join(30)
        assert not watcher.is_alive()
        assert errors == []
        assert lowest == [2]  # the budget's own view never fell below minAvailable


def _track_healthy(
    served: Served, stream: kube_watch.Watch, lowest: list[int], stopping: threading.Event, errors: list[str]
) -> None:
    """Keep the lowest currentHealthy the budget reports, from a watch of it, until `stopping` is set; an error
    before that is recorded in `errors` (the test asserts there is none)."""
    api = kube_client.PolicyV1Api(kube_config.new_client_from_config(str(served.kubeconfig)))
    try:
        for event in stream.stream(api.list_namespaced_pod_disruption_budget, "default", timeout_seconds=60):
            status = event["object"].status
            if status is not None and status.current_healthy is not None:
                lowest[0] = min(lowest[0], status.current_healthy)
    except Exception as e:  # the test thread's boundary: reported to the test, not swallowed
        if not stopping.is_set():
            errors.append(repr(e))


def test_refusals_at_start(tmp_path: Path) -> None:
    serve = [sys.executable, "-m", "berth", "serve", "--data-dir"]
    bad = subprocess.run(
        [*serve, str(tmp_path / "a"), "--listen", "nonsense"], capture_output=True, text=True, timeout=60
    )
    assert (bad.returncode, bad.stderr) == (
        2,
        'error: --listen: invalid address "nonsense" (expected HOST:PORT, e.g. 127.0.0.1:6443)\n',
    )
    with running(tmp_path / "b"):
        second = subprocess.run(
            [*serve, str(tmp_path / "b"), "--listen", "127.0.0.1:0"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert (second.returncode, second.stderr) == (
        2,
        f"error: {tmp_path / 'b'} is in use by another process (database is locked)\n",
    )


def test_kubectl_apply_server_side(server: Served) -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "ssa", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "ssa"}},
            "template": {
                "metadata": {"labels": {"app": "ssa"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    done = server.kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(deployment))
    assert (done.returncode, done.stdout) == (0, "deployment.apps/ssa serverside-applied\n"), done.stderr
    managers = [
        (m["manager"], m["operation"])
        for m in _get(server, "deployment", "ssa", "--show-managed-fields")["metadata"]["managedFields"]
    ]
    assert ("kubectl", "Apply") in managers
    deployment["spec"]["replicas"] = 2
    other = server.kubectl(
        "apply", "--server-side", "--field-manager=other", "-f", "-", stdin=yaml.safe_dump(deployment)
    )
    assert other.returncode == 1
    assert 'conflict with "kubectl": .spec.replicas' in other.stderr
    forced = server.kubectl(
        "apply",
        "--server-side",
        "--field-manager=other",
        "--force-conflicts",
        "-f",
        "-",
        stdin=yaml.safe_dump(deployment),
    )
    assert forced.returncode == 0, forced.stderr
    assert _get(server, "deployment", "ssa")["spec"]["replicas"] == 2
