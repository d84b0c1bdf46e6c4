"""``berth cordon / uncordon / drain`` through the CLI, against an API server in the test's process.

The API server is Berth's own REST layer (`berth.server.rest`) over a simulated cluster, reached
through an httpx transport; the drain's clock is the simulation's, so its waits advance virtual time.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from drain_helpers import NODE, PDB, advance, budget, deployment, healthy, pods_on, start, web_on_two_nodes
from typer.testing import CliRunner

import berth.cli
from berth.cli import app
from berth.clock import Timer
from berth.remote.client import KubeClient
from berth.server.rest import Request, RestAPI
from berth.sim.engine import Simulation
from builders import make_node, make_pod

VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget."


def _transport(sim: Simulation, seen: list[str]) -> httpx.MockTransport:
    api = RestAPI(sim.store)

    def handle(request: httpx.Request) -> httpx.Response:
        query = urllib.parse.parse_qs(request.url.query.decode())
        seen.append(f"{request.method} {request.url.path}")
        code, body = api.handle(Request(request.method, request.url.path, query, request.content))
        sim.run_until_idle()  # the components see the write before the next request
        return httpx.Response(code, json=body)

    return httpx.MockTransport(handle)


class SimulatedTime:
    """The drain's clock: the simulation's own timers, and each step advances the whole simulation."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim

    def now(self) -> float:
        return self.sim.clock.now()

    def call_at(self, when: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        return self.sim.clock.call_at(when, fn, priority)

    def call_later(self, delay: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        return self.sim.clock.call_later(delay, fn, priority)

    def step(self) -> bool:
        due = self.sim.clock.peek()
        if due is None:
            return False
        advance(self.sim, due)
        return True


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Returns a function that puts a simulation behind the CLI's API connection."""

    def attach(sim: Simulation) -> list[str]:
        seen: list[str] = []

        def connect(*args: Any) -> KubeClient:
            return KubeClient("http://berth.test", transport=_transport(sim, seen))

        monkeypatch.setattr(berth.cli, "_connect", connect)
        monkeypatch.setattr(berth.cli, "_drain_clock", lambda: SimulatedTime(sim))
        return seen

    return attach


def test_cordon_and_uncordon(cluster: Any) -> None:
    sim = start(make_node("n1").obj())
    cluster(sim)
    runner = CliRunner()
    assert runner.invoke(app, ["cordon", "n1"]).stdout == "node/n1 cordoned\n"
    assert sim.store.get(NODE, "", "n1")["spec"]["unschedulable"] is True
    assert runner.invoke(app, ["cordon", "n1"]).stdout == "node/n1 already cordoned\n"
    assert runner.invoke(app, ["uncordon", "n1"]).stdout == "node/n1 uncordoned\n"
    assert "unschedulable" not in sim.store.get(NODE, "", "n1")["spec"]
    assert runner.invoke(app, ["uncordon", "n1"]).stdout == "node/n1 already uncordoned\n"


def test_unknown_node_is_a_server_error(cluster: Any) -> None:
    cluster(start(make_node("n1").obj()))
    result = CliRunner().invoke(app, ["drain", "nope"])
    assert result.exit_code == 1
    assert result.stderr == 'Error from server (NotFound): nodes "nope" not found\n'


def test_drain_keeps_the_budget_and_waits_for_replacements(cluster: Any) -> None:
    sim = start(*web_on_two_nodes())
    busy = max(("node-a", "node-b"), key=lambda n: len(pods_on(sim, n)))
    first, second = pods_on(sim, busy)
    lowest: list[int] = [healthy(sim, "web")]
    sim.store.subscribe(lambda ev: lowest.append(healthy(sim, "web")))
    seen = cluster(sim)
    t0 = sim.clock.now()
    result = CliRunner().invoke(app, ["drain", busy])
    assert result.exit_code == 0, result.stderr
    # kubectl says "evicting pod" before each try, and the refusal on standard error
    assert result.stdout.splitlines() == [
        f"node/{busy} cordoned",
        f"evicting pod default/{first}",
        f"evicting pod default/{second}",
        f"evicting pod default/{second}",
        f"pod/{first} evicted",
        f"pod/{second} evicted",
        f"node/{busy} drained",
    ]
    assert result.stderr == (
        f'error when evicting pods/"{second}" -n "default" (will retry after 5s): {VIOLATES}\n'
    )
    assert min(lowest) == 2  # never below minAvailable while draining
    assert pods_on(sim, busy) == []
    # the second eviction succeeds on the retry 5 s in; its pod is gone after the 30 s grace period
    assert sim.clock.now() - t0 == pytest.approx(35.0)
    assert seen[:2] == [f"GET /api/v1/nodes/{busy}", f"PATCH /api/v1/nodes/{busy}"]
    assert seen.count(f"POST /api/v1/namespaces/default/pods/{second}/eviction") == 2
    status = sim.store.get(PDB, "default", "web-pdb")["status"]
    assert (status["currentHealthy"], status["desiredHealthy"]) == (3, 2)


def test_drain_times_out_when_the_budget_never_allows(cluster: Any) -> None:
    sim = start(
        make_node("n1").obj(),
        make_node("n2").obj(),
        deployment("web", 2),
        budget("web-pdb", "web", maxUnavailable=0),
    )
    busy = max(("n1", "n2"), key=lambda n: len(pods_on(sim, n)))
    (victim,) = pods_on(sim, busy)
    cluster(sim)
    result = CliRunner().invoke(app, ["drain", busy, "--timeout", "12s"])
    assert result.exit_code == 1
    error = f'error when evicting pods/"{victim}" -n "default": global timeout reached: 12s'
    retry = f'error when evicting pods/"{victim}" -n "default" (will retry after 5s): {VIOLATES}\n'
    assert result.stderr == retry * 3 + (  # tries at 0, 5 and 10 s
        f'There are pending pods in node "{busy}" when an error occurred: {error}\n'
        f"pod/{victim}\n"
        f'error: unable to drain node "{busy}" due to error: {error}, continuing command...\n'
        f"There are pending nodes to be drained:\n {busy}\nerror: {error}\n"
    )
    assert result.stdout == f"node/{busy} cordoned\n" + f"evicting pod default/{victim}\n" * 3
    assert healthy(sim, "web") == 2


def test_drain_refuses_unmanaged_pods_without_force(cluster: Any) -> None:
    sim = start(make_node("n1").obj(), make_pod("loner").node("n1").obj())
    cluster(sim)
    result = CliRunner().invoke(app, ["drain", "n1"])
    assert result.exit_code == 1
    assert "cannot delete Pods that declare no controller (use --force to override): default/loner" in (
        result.stderr
    )
    assert pods_on(sim, "n1") == ["loner"]
    result = CliRunner().invoke(app, ["drain", "n1", "--force", "--grace-period", "0"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "node/n1 already cordoned",
        "evicting pod default/loner",
        "pod/loner evicted",
        "node/n1 drained",
    ]
    assert result.stderr == "Warning: deleting Pods that declare no controller: default/loner\n"


def test_drain_option_errors(cluster: Any) -> None:
    cluster(start(make_node("n1").obj()))
    result = CliRunner().invoke(app, ["drain", "n1", "--timeout", "soon"])
    assert (result.exit_code, result.stderr) == (2, 'error: --timeout: invalid duration "soon"\n')
    result = CliRunner().invoke(app, ["drain", "n1", "--grace-period", "-2"])
    assert (result.exit_code, result.stderr) == (
        2,
        "error: --grace-period: invalid value -2 (expected -1 or more)\n",
    )
    result = CliRunner().invoke(app, ["drain", "n1", "--dry-run", "maybe"])
    assert (result.exit_code, result.stderr) == (
        2,
        'error: Invalid dry-run value (maybe). Must be "none", "server", or "client".\n',
    )


def test_missing_kubeconfig_is_reported(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["cordon", "n1", "--kubeconfig", str(tmp_path / "none")])
    assert result.exit_code == 2
    assert result.stderr == f"error: {tmp_path / 'none'}: No such file or directory\n"
