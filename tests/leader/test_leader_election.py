"""Leader election on a Lease (`berth.controlplane.leaderelection`), on virtual time over the embedded store.

Each candidate is a "process" with its own view of the shared `SimClock`, so a test can kill one (cancel every
timer it has, with no release and no callback) while the others go on. The invariant, checked after every
single clock step: at most one candidate leads.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest

from berth.api.errors import AlreadyExists, Conflict, InternalError, NotFound
from berth.clock import SimClock, Timer
from berth.controlplane.leaderelection import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    JITTER_FACTOR,
    LEASE_KEY,
    LeaderElector,
    default_identity,
    micro_time,
)
from berth.store import MemoryStore

NS, NAME = "kube-system", "berth-scheduler"
LD, RD, RP = DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD
MAX_ACQUIRE_WAIT = RP * (1 + JITTER_FACTOR)  # the longest wait between two acquire tries


class Process:
    """One candidate's view of the shared clock: remembers its timers, so that `kill()` can drop them all."""

    def __init__(self, clock: SimClock) -> None:
        self.clock = clock
        self.timers: list[Timer] = []
        self.dead = False

    def now(self) -> float:
        return self.clock.now()

    def call_at(self, when: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        assert not self.dead, "a killed process scheduled a timer"
        timer = self.clock.call_at(when, fn, priority)
        self.timers = [t for t in self.timers if t.active]
        self.timers.append(timer)
        return timer

    def call_later(self, delay: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        return self.call_at(self.clock.now() + delay, fn, priority)

    def kill(self) -> None:
        """As `kill -9`: nothing of this process runs any more."""
        self.dead = True
        for timer in self.timers:
            timer.cancel()


class FlakyStore:
    """A `Store` that delegates to `inner`, except that writes (or everything) fail while `failing` is set,
    and that `before_write` (when set) runs once before the next write goes through."""

    def __init__(self, inner: MemoryStore) -> None:
        self.inner = inner
        self.failing: str | None = None  # None, "writes" or "all"
        self.before_write: Callable[[], object] | None = None
        self.calls: list[str] = []
        self.errors: list[type[Exception]] = []  # what the inner store raised

    def _call(self, verb: str, write: bool) -> None:
        self.calls.append(verb)
        if self.failing == "all" or (self.failing == "writes" and write):
            raise InternalError("etcdserver: request timed out")
        if write and self.before_write is not None:
            hook, self.before_write = self.before_write, None
            hook()

    def get(self, key: Any, namespace: str, name: str) -> dict[str, Any]:
        self._call("get", False)
        return self._inner(lambda: self.inner.get(key, namespace, name))

    def create(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        self._call("create", True)
        return self._inner(lambda: self.inner.create(obj, dry_run=dry_run))

    def update(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        self._call("update", True)
        return self._inner(lambda: self.inner.update(obj, dry_run=dry_run))

    def _inner(self, call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return call()
        except Exception as e:
            self.errors.append(type(e))
            raise

    def now_nanos(self) -> int:
        return self.inner.now_nanos()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@dataclass
class Candidate:
    """An elector in a process, with the log of its callbacks."""

    identity: str
    process: Process
    store: FlakyStore
    elector: LeaderElector
    log: list[tuple[float, str]] = field(default_factory=list)
    leaders_seen: list[str] = field(default_factory=list)

    def kill(self) -> None:
        self.process.kill()


class Cluster:
    """A shared clock and store, and the candidates for one Lease."""

    def __init__(self, seed: int = 1) -> None:
        self.clock = SimClock()
        self.store = MemoryStore(clock=self.clock)
        self.rng = random.Random(seed)
        self.candidates: list[Candidate] = []
        self.max_leaders = 0

    def add(self, identity: str, *, start: bool = True, **options: Any) -> Candidate:
        process = Process(self.clock)
        store = FlakyStore(self.store)
        holder: list[Candidate] = []

        def started() -> None:
            holder[0].log.append((self.clock.now(), "started"))

        def stopped() -> None:
            holder[0].log.append((self.clock.now(), "stopped"))

        elector = LeaderElector(
            store,  # FlakyStore forwards the rest of the protocol
            process,
            identity=identity,
            on_started_leading=started,
            on_stopped_leading=stopped,
            on_new_leader=lambda who: holder[0].leaders_seen.append(who),
            rng=random.Random(self.rng.random()),
            **options,
        )
        candidate = Candidate(identity, process, store, elector)
        holder.append(candidate)
        self.candidates.append(candidate)
        if start:
            elector.start()
        return candidate

    def leaders(self) -> list[str]:
        return [c.identity for c in self.candidates if c.elector.is_leader]

    def run(self, until: float) -> None:
        """Run the clock to `until`, one timer at a time, checking after each that at most one leads."""
        while True:
            nxt = self.clock.peek()
            if nxt is None or nxt > until:
                break
            self.clock.step()
            leaders = self.leaders()
            assert len(leaders) <= 1, f"t={self.clock.now()}: {leaders} all lead"
            self.max_leaders = max(self.max_leaders, len(leaders))
        self.clock.run(until)
        assert len(self.leaders()) <= 1

    def run_until(self, cond: Callable[[], bool], limit: float) -> float:
        """Step (checking the invariant) until `cond()` holds; the time it first did."""
        while not cond():
            nxt = self.clock.peek()
            assert nxt is not None and nxt <= limit, f"not reached by t={limit}"
            self.run(nxt)
        return self.clock.now()

    def lease(self) -> dict[str, Any]:
        return self.store.get(LEASE_KEY, NS, NAME)

    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self.lease()["spec"]
        return spec


def stamp(t: float) -> str:
    """The MicroTime the embedded store's clock reads at virtual time `t` (epoch 2024-01-01)."""
    return micro_time(int((1704067200 + t) * 1_000_000_000))


def last_renewal(cluster: Cluster) -> float:
    """The virtual time of the Lease's renewTime."""
    return datetime.fromisoformat(cluster.spec()["renewTime"].replace("Z", "+00:00")).timestamp() - 1704067200


# ----- validation --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"lease_duration": 10, "renew_deadline": 10}, "leaseDuration must be greater than renewDeadline"),
        (
            {"renew_deadline": 2.4, "retry_period": 2},
            "renewDeadline must be greater than retryPeriod*JitterFactor",
        ),
        (
            {"lease_duration": 0.9, "renew_deadline": 0.5, "retry_period": 0.1},
            "leaseDuration must be at least 1s",
        ),
        ({"renew_deadline": 0, "retry_period": -1}, "renewDeadline must be greater than zero"),
        ({"retry_period": 0}, "retryPeriod must be greater than zero"),
        ({"identity": ""}, "Lock identity is empty"),
        ({"name": ""}, "the Lease needs a namespace and a name"),
    ],
)
def test_invalid_timings_and_names_are_refused_with_clients_go_words(
    options: dict[str, Any], message: str
) -> None:
    clock = SimClock()
    kwargs: dict[str, Any] = {"identity": "a", **options}
    with pytest.raises(ValueError, match=message.replace("*", r"\*")):
        LeaderElector(
            MemoryStore(clock=clock),
            clock,
            on_started_leading=lambda: None,
            on_stopped_leading=lambda: None,
            **kwargs,
        )


def test_kube_scheduler_defaults_are_accepted() -> None:
    clock = SimClock()
    elector = LeaderElector(
        MemoryStore(clock=clock),
        clock,
        identity="a",
        on_started_leading=lambda: None,
        on_stopped_leading=lambda: None,
    )
    assert (elector.lease_duration, elector.renew_deadline, elector.retry_period) == (15.0, 10.0, 2.0)
    assert (elector.namespace, elector.name, elector.release_on_cancel) == (
        "kube-system",
        "berth-scheduler",
        True,
    )
    assert not elector.is_leader and not elector.running


def test_default_identity_is_host_and_uuid_and_unique() -> None:
    a, b = default_identity(), default_identity()
    assert a != b and "_" in a


def test_micro_time_has_six_fraction_digits() -> None:
    assert micro_time(1704067200_123456289) == "2024-01-01T00:00:00.123456Z"
    assert micro_time(1704067200_000000000) == "2024-01-01T00:00:00.000000Z"
    assert micro_time(1704067200_999999600) == "2024-01-01T00:00:01.000000Z"
    assert micro_time(1704067201_249999872) == "2024-01-01T00:00:01.250000Z"


# ----- one candidate: the Lease it writes --------------------------------------------------------------
def test_first_candidate_creates_the_lease_and_renews_it_every_retry_period() -> None:
    cluster = Cluster()
    cluster.clock.run(1.25)
    a = cluster.add("a")
    cluster.run(1.25)  # the first try runs at the next step, at once
    assert a.elector.is_leader and a.log == [(1.25, "started")] and a.leaders_seen == ["a"]
    lease = cluster.lease()
    assert lease["metadata"]["namespace"] == NS and lease["metadata"]["name"] == NAME
    assert lease["spec"] == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2024-01-01T00:00:01.250000Z",
        "renewTime": "2024-01-01T00:00:01.250000Z",
        "leaseTransitions": 0,
    }
    # create, then the renew loop's immediate first round (an update), then one update every retry period
    assert a.store.calls == ["get", "create", "update"]
    cluster.run(1.25 + 3 * RP)
    assert a.store.calls == ["get", "create", "update", "update", "update", "update"]
    assert cluster.spec() == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2024-01-01T00:00:01.250000Z",
        "renewTime": stamp(1.25 + 3 * RP),
        "leaseTransitions": 0,
    }
    assert a.elector.leader == "a"


def test_lease_durations_are_written_in_whole_seconds() -> None:
    cluster = Cluster()
    cluster.add("a", lease_duration=2.7, renew_deadline=2, retry_period=0.5)
    cluster.run(0)
    assert cluster.spec()["leaseDurationSeconds"] == 2


def test_a_candidate_restarted_with_its_identity_keeps_the_lease_without_a_transition() -> None:
    cluster = Cluster()
    a = cluster.add("a")
    cluster.run(5)
    a.kill()
    cluster.candidates.remove(a)  # a dead process with the same identity: only the new one counts
    again = cluster.add("a")
    cluster.run(5)
    assert again.elector.is_leader
    spec = cluster.spec()
    assert spec["holderIdentity"] == "a" and spec["leaseTransitions"] == 0
    assert spec["acquireTime"] == stamp(0)


# ----- two and three candidates --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_two_candidates_one_leads_the_other_stands_by(seed: int) -> None:
    cluster = Cluster(seed)
    a = cluster.add("a")
    b = cluster.add("b")
    cluster.run(120)
    assert cluster.leaders() == ["a"]
    assert b.log == [] and b.leaders_seen == ["a"] and b.elector.leader == "a"
    assert cluster.spec()["leaseTransitions"] == 0
    assert a.log == [(0.0, "started")]


@pytest.mark.parametrize("seed", range(8))
def test_killed_leader_is_replaced_once_the_lease_of_its_last_renewal_runs_out(seed: int) -> None:
    cluster = Cluster(seed)
    cands = [cluster.add(i) for i in "abc"]
    cluster.run(30.3 + seed)
    (leader,) = (c for c in cands if c.elector.is_leader)
    leader.kill()
    renewed = last_renewal(cluster)
    took = cluster.run_until(
        lambda: len(cluster.leaders()) == 1 and cluster.leaders() != [leader.identity], 200
    )
    # never before the lease duration, measured from the last renewal any standby could have seen...
    assert took >= renewed + LD
    # ...and at most one observation lag (a standby sees the last renewal at its next try) plus one try later
    assert took <= renewed + LD + 2 * MAX_ACQUIRE_WAIT
    new = next(c for c in cands if c.elector.is_leader)
    spec = cluster.spec()
    assert spec["holderIdentity"] == new.identity
    assert spec["leaseTransitions"] == 1
    assert spec["acquireTime"] == spec["renewTime"] == stamp(took)
    assert new.log == [(took, "started")]
    # the dead leader's own view lapsed at its renew deadline, before anyone else could lead
    assert not leader.elector.is_leader and leader.log == [(0.0, "started")]
    cluster.run(took + 60)
    assert cluster.leaders() == [new.identity]
    others = [c for c in cands if c is not leader and c is not new]
    assert all(c.leaders_seen == [leader.identity, new.identity] for c in others)


@pytest.mark.parametrize("seed", range(8))
def test_clean_stop_releases_and_a_standby_takes_over_within_a_retry(seed: int) -> None:
    cluster = Cluster(seed)
    cands = [cluster.add(i) for i in "abc"]
    cluster.run(20.7)
    (leader,) = (c for c in cands if c.elector.is_leader)
    released_at = cluster.clock.now()
    leader.elector.stop()
    assert leader.log[-1] == (released_at, "stopped") and not leader.elector.is_leader
    assert not leader.elector.running
    spec = cluster.spec()
    assert spec == {
        "holderIdentity": "",
        "leaseDurationSeconds": 1,
        "acquireTime": stamp(released_at),
        "renewTime": stamp(released_at),
        "leaseTransitions": 0,
    }
    took = cluster.run_until(lambda: len(cluster.leaders()) == 1, 100)
    assert took - released_at <= MAX_ACQUIRE_WAIT
    spec = cluster.spec()
    assert spec["leaseTransitions"] == 1 and spec["leaseDurationSeconds"] == 15
    assert spec["holderIdentity"] != leader.identity
    cluster.run(took + 40)
    assert len(cluster.leaders()) == 1


def test_stop_without_release_on_cancel_leaves_the_lease_to_expire() -> None:
    cluster = Cluster()
    a = cluster.add("a", release_on_cancel=False)
    b = cluster.add("b")
    cluster.run(10)
    a.elector.stop()
    assert a.log == [(0.0, "started"), (10.0, "stopped")]
    assert cluster.spec()["holderIdentity"] == "a"
    assert last_renewal(cluster) == 10.0
    took = cluster.run_until(lambda: b.elector.is_leader, 100)
    assert 10 + LD <= took <= 10 + LD + 2 * MAX_ACQUIRE_WAIT


def test_stop_of_a_standby_writes_nothing_and_calls_nothing() -> None:
    cluster = Cluster()
    cluster.add("a")
    b = cluster.add("b")
    cluster.run(7)
    before = cluster.lease()["metadata"]["resourceVersion"]
    calls = len(b.store.calls)
    b.elector.stop()
    assert b.log == [] and b.store.calls[calls:] == []
    assert cluster.lease()["metadata"]["resourceVersion"] == before
    cluster.run(60)
    assert b.store.calls[calls:] == []


def test_stopped_elector_can_start_again() -> None:
    cluster = Cluster()
    a = cluster.add("a")
    cluster.run(3)
    a.elector.stop()
    a.elector.start()
    cluster.run(4)
    assert a.elector.is_leader
    assert a.log == [(0.0, "started"), (3.0, "stopped"), (3.0, "started")]
    assert (
        cluster.spec()["leaseTransitions"] == 1
    )  # taken back from nobody: a transition, as client-go counts


# ----- failures -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("failing", ["writes", "all"])
def test_leader_whose_writes_fail_steps_down_after_the_renew_deadline(failing: str) -> None:
    cluster = Cluster()
    a = cluster.add("a")
    b = cluster.add("b")
    cluster.run(9.0)
    a.store.failing = failing  # from now on, the leader's store refuses
    calls = len(a.store.calls)
    last_ok = 8.0  # the renewals ran at 0, 0, 2, 4, 6, 8
    assert last_renewal(cluster) == last_ok
    step_down = cluster.run_until(lambda: not a.elector.is_leader, 100)
    # the next round starts a retry period after the last success and gives up a renew deadline later
    assert step_down == last_ok + RP + RD
    assert a.log == [(0.0, "started"), (step_down, "stopped")]
    assert not a.elector.running
    # tries every retry period within the round, at 10, 12, 14, 16 and 18 (each: the optimistic update, then
    # the read and, when reads work, the update again); at 20 the round gives up, and the release fails too
    per_try = ["update", "get", "update"] if failing == "writes" else ["update", "get"]
    assert a.store.calls[calls:] == per_try * 5 + ["update"]
    # nobody led between the step-down and the lease's expiry in the standby's eyes; then b leads
    took = cluster.run_until(lambda: b.elector.is_leader, 100)
    assert took >= last_ok + LD
    assert cluster.spec()["holderIdentity"] == "b" and cluster.spec()["leaseTransitions"] == 1
    assert a.leaders_seen == ["a"]


def test_leader_recovers_when_the_store_heals_within_the_renew_deadline() -> None:
    cluster = Cluster()
    a = cluster.add("a")
    cluster.add("b")
    cluster.run(9.0)
    a.store.failing = "writes"
    cluster.run(15.0)
    assert a.elector.is_leader
    a.store.failing = None
    cluster.run(60)
    assert a.elector.is_leader and a.log == [(0.0, "started")]
    assert cluster.spec()["leaseTransitions"] == 0


def test_unreachable_store_at_start_keeps_trying() -> None:
    cluster = Cluster()
    a = cluster.add("a", start=False)
    a.store.failing = "all"
    a.elector.start()
    cluster.run(30)
    assert not a.elector.is_leader and a.elector.running
    tries = a.store.calls.count("get")
    assert 30 / MAX_ACQUIRE_WAIT <= tries <= 30 / RP + 1
    a.store.failing = None
    took = cluster.run_until(lambda: a.elector.is_leader, 100)
    assert took <= 30 + MAX_ACQUIRE_WAIT


def test_conflicting_update_on_takeover_loses_the_race_and_retries_later() -> None:
    cluster = Cluster()
    a = cluster.add("a")
    cluster.run(5)
    a.kill()
    b = cluster.add("b")
    c = cluster.add("c", start=False)
    cluster.run(5 + 0.5)

    def c_wins() -> None:  # just before b's takeover write, c takes the Lease
        c.elector.start()
        cluster.clock.step()  # c's first try, now, at once: the lease is not yet expired for c
        lease = cluster.lease()
        cluster.store.update({**lease, "spec": {**lease["spec"], "holderIdentity": "c"}})

    b.store.before_write = c_wins
    cluster.run(60)
    # b's update carried the resourceVersion it had read: Conflict, so b did not take the Lease
    assert b.log == [] and cluster.spec()["holderIdentity"] == "c"
    assert b.store.errors == [Conflict]
    assert "c" in b.leaders_seen


def test_create_race_loses_with_already_exists_and_stands_by() -> None:
    cluster = Cluster()
    b = cluster.add("b", start=False)
    b.store.before_write = lambda: cluster.store.create(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {"holderIdentity": "x", "leaseDurationSeconds": 15, "leaseTransitions": 0},
        }
    )
    b.elector.start()
    cluster.run(10)
    assert not b.elector.is_leader and b.elector.leader == "x"
    assert b.store.errors == [NotFound, AlreadyExists]  # it read nothing, then lost the creation


def test_renew_conflict_falls_back_to_reading_the_lease_and_keeps_leading() -> None:
    cluster = Cluster()
    a = cluster.add("a")
    cluster.run(5)

    def touch() -> None:  # someone (kubectl annotate) changes the Lease's metadata: its resourceVersion moves
        lease = cluster.lease()
        cluster.store.update({**lease, "metadata": {**lease["metadata"], "annotations": {"x": "y"}}})

    a.store.before_write = touch
    a.store.calls.clear()
    a.store.errors.clear()
    cluster.run(6)
    assert a.store.calls == ["update", "get", "update"]  # fast path Conflict, then read and write again
    assert a.store.errors == [Conflict]
    assert a.elector.is_leader and cluster.spec()["renewTime"] == stamp(6)
    assert cluster.lease()["metadata"]["annotations"] == {"x": "y"}


def test_leader_that_finds_another_holder_steps_down_at_once() -> None:
    cluster = Cluster()
    a = cluster.add("a")
    cluster.run(5)
    lease = cluster.lease()
    cluster.store.update({**lease, "spec": {**lease["spec"], "holderIdentity": "intruder"}})
    cluster.run(6)
    assert a.log == [(0.0, "started"), (6.0, "stopped")]
    assert not a.elector.running and a.leaders_seen == ["a", "intruder"]
    assert cluster.spec()["holderIdentity"] == "intruder"  # not released: it is not a's


def test_is_leader_lapses_by_itself_when_the_loop_is_late() -> None:
    cluster = Cluster()
    a = cluster.add("a")
    cluster.run(4)  # renewed at 4: the next round would give up at 4 + RP + RD
    for timer in a.process.timers:  # the process hangs (its timers do not run)
        timer.cancel()
    cluster.clock.run(4 + RP + RD - 0.001)
    assert a.elector.is_leader
    cluster.clock.run(4 + RP + RD)
    assert not a.elector.is_leader


def test_on_started_leading_may_stop_the_elector() -> None:
    clock = SimClock()
    store = MemoryStore(clock=clock)
    log: list[str] = []
    holder: list[LeaderElector] = []

    def started() -> None:
        log.append("started")
        holder[0].stop()

    elector = LeaderElector(
        store,
        clock,
        identity="a",
        on_started_leading=started,
        on_stopped_leading=lambda: log.append("stopped"),
    )
    holder.append(elector)
    elector.start()
    clock.run(30)
    assert log == ["started", "stopped"]
    assert store.get(LEASE_KEY, NS, NAME)["spec"]["holderIdentity"] == ""


def test_events_are_recorded_on_the_lease() -> None:
    clock = SimClock()
    store = MemoryStore(clock=clock)
    events: list[tuple[str, str, str, str]] = []

    class Rec:
        def event(self, obj: Any, type_: str, reason: str, message: str, **_: Any) -> None:
            events.append((obj["metadata"]["name"], type_, reason, message))

    elector = LeaderElector(
        store,
        clock,
        identity="a",
        on_started_leading=lambda: None,
        on_stopped_leading=lambda: None,
        recorder=Rec(),
    )
    elector.start()
    clock.run(3)
    elector.stop()
    assert events == [
        (NAME, "Normal", "LeaderElection", "a became leader"),
        (NAME, "Normal", "LeaderElection", "a stopped leading"),
    ]


def test_lease_of_another_namespace_and_name() -> None:
    cluster = Cluster()
    cluster.add("a", namespace="default", name="other")
    cluster.run(1)
    assert cluster.store.get(LEASE_KEY, "default", "other")["spec"]["holderIdentity"] == "a"
    with pytest.raises(NotFound):
        cluster.lease()


def test_check_reports_a_stuck_leader() -> None:
    cluster = Cluster()
    a = cluster.add("a")
    cluster.run(4)
    assert a.elector.check(20) is None
    for timer in a.process.timers:
        timer.cancel()
    cluster.clock.run(4 + LD + 20 + 1)
    assert a.elector.check(20) == f"failed election to renew leadership on lease {NS}/{NAME}"


def test_conflict_type_is_what_a_stale_write_raises() -> None:
    """The premise of the optimistic-concurrency tests: the embedded store refuses a stale resourceVersion."""
    cluster = Cluster()
    cluster.add("a")
    cluster.run(0)
    stale = cluster.lease()
    cluster.run(RP)
    with pytest.raises(Conflict):
        cluster.store.update(stale)
