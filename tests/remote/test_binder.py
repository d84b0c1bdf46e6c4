"""Bindings in the background: `AsyncBinder`'s outcomes (lost answers recognised, transient failures retried,
refusals reported) and the control plane's handling of a failed one (forget, requeue, FailedScheduling)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx
import pytest

from berth.clock import SimClock
from berth.controlplane.plane import ControlPlane, install_admission
from berth.remote.binder import AsyncBinder, BindOutcome, BindRequest
from berth.remote.client import KubeClient
from berth.remote.eventsink import EventSink
from berth.store import MemoryStore
from builders import make_node, make_pod

BINDING = "/api/v1/namespaces/default/pods/p/binding"
POD = "/api/v1/namespaces/default/pods/p"
Obj = dict[str, Any]


def _status(code: int, reason: str, message: str) -> httpx.Response:
    return httpx.Response(code, json={"kind": "Status", "code": code, "reason": reason, "message": message})


def _pod(node: str = "", uid: str = "u1") -> httpx.Response:
    return httpx.Response(
        200, json={"kind": "Pod", "metadata": {"name": "p", "uid": uid}, "spec": {"nodeName": node}}
    )


def _bind(answers: list[Callable[[], httpx.Response]]) -> tuple[BindOutcome, list[str]]:
    """Bind p to n1 against scripted answers; the outcome and the requests made."""
    made: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        made.append(f"{request.method} {request.url.path}")
        return answers.pop(0)()

    outcomes: list[BindOutcome] = []
    client = KubeClient("http://berth.test", transport=httpx.MockTransport(handle))
    binder = AsyncBinder(client, outcomes.append, workers=2, sleep=lambda _s: None)
    binder.submit(BindRequest("default", "p", "n1", "u1"))
    assert binder.wait_idle(10)
    binder.close()
    assert len(outcomes) == 1
    return outcomes[0], made


def test_a_binding_succeeds_in_one_request() -> None:
    outcome, made = _bind([lambda: httpx.Response(201, json={"kind": "Status", "status": "Success"})])
    assert (outcome.error, outcome.attempts, made) == (None, 1, [f"POST {BINDING}"])


def test_a_binding_applied_but_answered_by_an_error_is_recognised() -> None:
    def lost() -> httpx.Response:
        raise httpx.ReadTimeout("the answer was lost")

    outcome, made = _bind([lost, lambda: _pod("n1")])
    assert (outcome.error, outcome.attempts, made) == (None, 1, [f"POST {BINDING}", f"GET {POD}"])


def test_transient_failures_are_retried_then_reported() -> None:
    down = lambda: _status(500, "InternalError", "etcd is down")  # noqa: E731
    outcome, _ = _bind([down, lambda: _pod(), lambda: _status(201, "", "")])
    assert (outcome.error, outcome.attempts) == (None, 2)
    outcome, _ = _bind([down, _pod, down, _pod, down, _pod, down, _pod])
    assert outcome.attempts == 4 and outcome.error is not None
    assert (outcome.error.code, outcome.error.message) == (500, "etcd is down")


def test_a_pod_assigned_elsewhere_or_gone_is_a_refusal() -> None:
    conflict = _status(
        409,
        "Conflict",
        'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n2"',
    )
    outcome, made = _bind([lambda: conflict, lambda: _pod("n2")])
    assert outcome.error is not None and outcome.error.reason == "Conflict" and outcome.attempts == 1
    outcome, made = _bind(
        [lambda: _status(404, "NotFound", 'pods "p" not found'), lambda: _status(404, "NotFound", "x")]
    )
    assert outcome.error is not None and outcome.error.reason == "NotFound"
    assert made == [f"POST {BINDING}", f"GET {POD}"]


class _QueuedBindings(MemoryStore):
    """An embedded store whose bindings are only recorded, as if queued for the background."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.bindings: list[tuple[str, str]] = []

    def bind(
        self,
        namespace: str,
        name: str,
        node_name: str,
        *,
        uid: str | None = None,
        annotations: Mapping[str, str] | None = None,
    ) -> Obj:
        self.bindings.append((name, node_name))
        pod: Obj = self.get(("", "Pod"), namespace, name)
        return pod


def test_a_failed_background_binding_is_forgotten_and_retried() -> None:
    clock = SimClock()
    store = _QueuedBindings(clock=clock)
    install_admission(store)
    store.create(make_node("n1").obj())
    pod = store.create(make_pod("p").req(cpu="1").obj())
    plane: ControlPlane[_QueuedBindings] = ControlPlane(store, clock, kubelet=False, controllers=())
    binding = plane.scheduler.binding
    binding.deferred = True  # as berth run's, over a store binding in the background
    stats = plane.scheduler.stats
    plane.replay()
    plane.run_until_idle()
    uid = pod["metadata"]["uid"]
    assert store.bindings == [("p", "n1")]
    assert plane.scheduler.cache.is_assumed(uid)
    assert (list(binding.in_flight), stats.scheduled, _reasons(store)) == ([uid], 0, [])  # not yet decided
    plane.binding_failed("default", "p", uid, "etcd is down")
    # the failed Bind's path: forgotten, PodScheduled=False (an error), queued again with backoff
    assert not plane.scheduler.cache.is_assumed(uid)
    assert (binding.in_flight, stats.errors, stats.scheduled) == ({}, 1, 0)
    plane.events.flush()
    (condition,) = store.get(("", "Pod"), "default", "p")["status"]["conditions"]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False",
        "SchedulerError",
        "Binding rejected: etcd is down",
    )
    plane.run_until_idle()
    assert store.bindings == [("p", "n1")]  # backing off
    clock.run(until=clock.now() + 2.5)  # its backoff runs out
    plane.run_until_idle()
    assert store.bindings == [("p", "n1"), ("p", "n1")]  # scheduled again after its backoff
    plane.binding_succeeded("default", "p", uid, "n1")
    plane.run_until_idle()
    assert (binding.in_flight, stats.scheduled) == ({}, 1)
    events = [e for e in store.list(("", "Event"), "default")[0] if e["reason"] != "Scheduled"]
    assert [(e["type"], e["reason"], e["message"], e["source"]["component"]) for e in events] == [
        ("Warning", "FailedScheduling", "Binding rejected: etcd is down", "default-scheduler")
    ]
    assert _reasons(store) == ["FailedScheduling", "Scheduled"]
    # a pod with no binding in flight (gone, or bound) needs nothing
    plane.binding_failed("default", "nobody", "u0", "gone")
    plane.run_until_idle()
    assert store.bindings == [("p", "n1"), ("p", "n1")]


def _reasons(store: MemoryStore) -> list[str]:
    return sorted(e["reason"] for e in store.list(("", "Event"), "default")[0])


def test_the_event_sink_writes_in_order_and_drops_when_full(caplog: pytest.LogCaptureFixture) -> None:
    release = threading.Event()
    written: list[int] = []

    def write(i: int) -> Callable[[], object]:
        def go() -> object:
            release.wait(10)
            written.append(i)
            return None

        return go

    sink = EventSink(max_queued=2)
    for i in range(6):  # the worker holds the first; two wait; three are dropped
        sink.submit(write(i))
        while i == 0 and not sink._queue.empty():  # the worker has taken the first
            time.sleep(0.01)
    release.set()
    sink.close()
    assert (written, sink.sent, sink.dropped) == ([0, 1, 2], 3, 3)
    assert caplog.text.count("event queue full: 1 Event(s) dropped so far") == 1
