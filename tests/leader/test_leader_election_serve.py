"""Leader election end to end: two candidates in this process, each with its own HTTPS connection, against a
real ``berth serve --api-only`` on real time (short timings: lease 2 s, renew deadline 1.5 s, retry 0.5 s)."""

from __future__ import annotations

import random
import ssl
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from berth.clock import RealClock, Timer
from berth.controlplane.leaderelection import JITTER_FACTOR, LEASE_KEY, LeaderElector
from berth.remote.client import KubeClient
from berth.remote.store import RemoteStore
from serve.serve_helpers import Served, running

LD, RD, RP = 2.0, 1.5, 0.5
NS, NAME = "kube-system", "berth-scheduler"


class Process:
    """A candidate's view of the shared clock whose timers `kill()` drops (a process killed, no release)."""

    def __init__(self, clock: RealClock) -> None:
        self.clock = clock
        self.timers: list[Timer] = []

    def now(self) -> float:
        return self.clock.now()

    def call_at(self, when: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        timer = self.clock.call_at(when, fn, priority)
        self.timers = [t for t in self.timers if t.active]
        self.timers.append(timer)
        return timer

    def call_later(self, delay: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        return self.call_at(self.clock.now() + delay, fn, priority)

    def kill(self) -> None:
        for timer in self.timers:
            timer.cancel()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with running(tmp_path_factory.mktemp("serve-leader"), "--api-only") as served:
        yield served


def _store(served: Served, clock: RealClock) -> RemoteStore:
    verify = ssl.create_default_context(cafile=str(served.ca))
    return RemoteStore(KubeClient(served.url, token=served.token, verify=verify, timeout=5.0), clock)


def test_one_leader_at_a_time_and_takeover_after_stop_and_after_kill(server: Served) -> None:
    clock = RealClock()
    observer = _store(server, clock)
    log: list[tuple[str, str]] = []
    electors: dict[str, LeaderElector] = {}
    processes: dict[str, Process] = {}

    def candidate(identity: str) -> LeaderElector:
        process = Process(clock)
        elector = LeaderElector(
            _store(server, clock),
            process,
            identity=identity,
            on_started_leading=lambda: log.append((identity, "started")),
            on_stopped_leading=lambda: log.append((identity, "stopped")),
            lease_duration=LD,
            renew_deadline=RD,
            retry_period=RP,
            rng=random.Random(identity),
        )
        electors[identity], processes[identity] = elector, process
        elector.start()
        return elector

    def leaders() -> list[str]:
        # a killed candidate counts too: its own view must have lapsed before anyone else leads
        return [who for who, e in electors.items() if e.is_leader]

    def run_until(cond: Callable[[], bool], limit: float) -> float:
        """Run the clock, checking after every timer that at most one candidate leads; the time `cond` held."""
        start = clock.now()
        while not cond():
            assert clock.now() - start < limit, f"not within {limit}s: leaders {leaders()}, log {log}"
            nxt = clock.peek()
            assert nxt is not None
            clock.step()
            assert len(leaders()) <= 1, leaders()
        return clock.now() - start

    def lease_spec() -> dict[str, Any]:
        spec: dict[str, Any] = observer.get(LEASE_KEY, NS, NAME)["spec"]
        return spec

    a = candidate("a")
    run_until(lambda: a.is_leader, 5)
    b = candidate("b")
    # b stands by for longer than a lease while a renews
    settle = clock.now() + LD + RP
    run_until(lambda: clock.now() >= settle, 2 * LD)
    assert leaders() == ["a"] and b.leader == "a"
    spec = lease_spec()
    assert (
        spec["holderIdentity"] == "a" and spec["leaseDurationSeconds"] == 2 and spec["leaseTransitions"] == 0
    )

    # a clean stop releases the Lease: b takes it at its next try
    a.stop()
    assert lease_spec()["holderIdentity"] == "" and lease_spec()["leaseDurationSeconds"] == 1
    waited = run_until(lambda: b.is_leader, 3)
    assert waited <= RP * (1 + JITTER_FACTOR) + 0.5
    assert lease_spec()["holderIdentity"] == "b" and lease_spec()["leaseTransitions"] == 1

    # a new candidate stands by; then b is killed (no release): it takes over once the lease has expired
    c = candidate("c")
    settle = clock.now() + 2 * RP
    run_until(lambda: clock.now() >= settle, LD)
    assert leaders() == ["b"]
    processes["b"].kill()
    waited = run_until(lambda: c.is_leader, LD + 2 * RP * (1 + JITTER_FACTOR) + 1)
    assert waited >= LD - RP  # not before the lease, as c last saw it renewed, has run out
    spec = lease_spec()
    assert spec["holderIdentity"] == "c" and spec["leaseTransitions"] == 2
    c.stop()
    assert log == [("a", "started"), ("a", "stopped"), ("b", "started"), ("c", "started"), ("c", "stopped")]
