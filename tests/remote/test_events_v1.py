"""Events through ``events.k8s.io/v1`` (issue 14): `berth serve` serves the core Events in the newer shape too
(one stored object, two shapes, as kube-apiserver), and `berth run` writes its Events there as kube-scheduler's
events/v1 broadcaster does — falling back to ``v1`` where the group is not served."""

from __future__ import annotations

import json
import re
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml
from run_helpers import eventually, running, running_berth

from berth.remote.eventwriter import EventWriter, micro_time
from berth.server.rest import Request, RestAPI
from berth.store import MemoryStore

Obj = dict[str, Any]
V1 = "/apis/events.k8s.io/v1/namespaces/default/events"
CORE = "/api/v1/namespaces/default/events"
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def _call(api: RestAPI, method: str, path: str, body: Any = None, **query: str) -> tuple[int, Obj]:
    raw = json.dumps(body).encode() if body is not None else b""
    ctype = "application/merge-patch+json" if method == "PATCH" else ""
    return api.handle(Request(method, path, {k: [v] for k, v in query.items()}, raw, content_type=ctype))


def _new_event(**changes: Any) -> Obj:
    event: Obj = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "p.1", "namespace": "default"},
        "eventTime": "2026-11-25T04:00:00.123456Z",
        "reportingController": "berth-scheduler",
        "reportingInstance": "berth-scheduler-host",
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": {"apiVersion": "v1", "kind": "Pod", "name": "p", "namespace": "default", "uid": "u1"},
        "note": "Successfully assigned default/p to n1",
        "type": "Normal",
    }
    event.update(changes)
    return event


def test_the_server_serves_one_event_in_both_shapes() -> None:
    api = RestAPI(MemoryStore())
    code, created = _call(api, "POST", V1, _new_event())
    assert code == 201
    assert (created["apiVersion"], created["note"], created["regarding"]["name"]) == (
        "events.k8s.io/v1",
        "Successfully assigned default/p to n1",
        "p",
    )
    code, core = _call(api, "GET", f"{CORE}/p.1")
    assert code == 200
    assert {k: core.get(k) for k in ("apiVersion", "message", "reportingComponent", "reportingInstance")} == {
        "apiVersion": "v1",
        "message": "Successfully assigned default/p to n1",
        "reportingComponent": "berth-scheduler",
        "reportingInstance": "berth-scheduler-host",
    }
    assert core["involvedObject"]["uid"] == "u1"
    # a repeat: the series, patched through the newer group, read through both
    series = {"count": 2, "lastObservedTime": "2026-11-25T04:00:05.000000Z"}
    code, patched = _call(api, "PATCH", f"{V1}/p.1", {"series": series})
    assert (code, patched["series"]) == (200, series)
    code, listed = _call(api, "GET", V1, fieldSelector="regarding.name=p")
    assert (code, listed["kind"], listed["apiVersion"]) == (200, "EventList", "events.k8s.io/v1")
    assert [(e["metadata"]["name"], e["series"]["count"]) for e in listed["items"]] == [("p.1", 2)]
    assert _call(api, "GET", V1, fieldSelector="regarding.name=q")[1]["items"] == []
    # a core Event read through the newer group: its deprecated fields, eventTime null
    old = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "old", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Pulled",
        "message": "pulled",
        "type": "Normal",
        "source": {"component": "kubelet"},
        "count": 3,
        "firstTimestamp": "2026-11-25T04:00:00Z",
        "lastTimestamp": "2026-11-25T04:01:00Z",
    }
    assert _call(api, "POST", CORE, old)[0] == 201
    code, seen = _call(api, "GET", f"{V1}/old")
    assert {k: seen.get(k) for k in ("eventTime", "note", "deprecatedCount", "deprecatedSource")} == {
        "eventTime": None,
        "note": "pulled",
        "deprecatedCount": 3,
        "deprecatedSource": {"component": "kubelet"},
    }
    assert _call(api, "DELETE", f"{V1}/old")[0] == 200
    assert _call(api, "GET", f"{CORE}/old")[0] == 404


def test_the_newer_group_validates_as_kube() -> None:
    api = RestAPI(MemoryStore())
    code, status = _call(
        api,
        "POST",
        V1,
        _new_event(eventTime=None, type="Odd", deprecatedCount=2, action=""),
    )
    assert code == 422
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        'Event.events.k8s.io "p.1" is invalid: [eventTime: Required value, type: Invalid value: "": has '
        'invalid value: Odd, deprecatedCount: Invalid value: "": needs to be unset, action: Required value]'
    )
    assert [c["field"] for c in status["details"]["causes"]] == [
        "eventTime",
        "type",
        "deprecatedCount",
        "action",
    ]


class _Recorded:
    """A RemoteStore stand-in noting each write."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, Any]] = []

    def create(self, obj: Obj) -> Obj:
        self.writes.append(("create", obj))
        return obj

    def patch(self, key: tuple[str, str], namespace: str, name: str, patch: Obj) -> Obj:
        self.writes.append(("patch", (key, namespace, name, patch)))
        return patch


def _core_event() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "p.17", "namespace": "default"},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "p",
            "namespace": "default",
            "uid": "u",
        },
        "reason": "FailedScheduling",
        "message": "0/1 nodes are available: 1 Insufficient cpu.",
        "type": "Warning",
        "source": {"component": "berth-scheduler"},
        "firstTimestamp": "2026-11-25T04:00:00Z",
        "lastTimestamp": "2026-11-25T04:00:00Z",
        "count": 1,
        "action": "Scheduling",
        "reportingComponent": "berth-scheduler",
        "reportingInstance": "berth-scheduler",
    }


def test_the_writer_writes_what_kube_schedulers_broadcaster_writes() -> None:
    store = _Recorded()
    writer = EventWriter(store, events_v1=True, hostname="node-a")  # type: ignore[arg-type]
    writer.create(_core_event())
    writer.patch("default", "p.17", {"count": 2, "lastTimestamp": "2026-11-25T04:00:09Z"})
    (_, created), (_, (key, ns, name, patch)) = store.writes
    assert MICRO.match(created.pop("eventTime"))
    assert created == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "p.17", "namespace": "default"},
        "reportingController": "berth-scheduler",
        "reportingInstance": "berth-scheduler-node-a",
        "action": "Scheduling",
        "reason": "FailedScheduling",
        "regarding": {"apiVersion": "v1", "kind": "Pod", "name": "p", "namespace": "default", "uid": "u"},
        "note": "0/1 nodes are available: 1 Insufficient cpu.",
        "type": "Warning",
    }
    assert (key, ns, name) == (("events.k8s.io", "Event"), "default", "p.17")
    assert MICRO.match(patch["series"].pop("lastObservedTime"))
    assert patch == {"series": {"count": 2}}
    # without events.k8s.io: the v1 writes unchanged; an Event without action takes its reason
    plain = _Recorded()
    EventWriter(plain, events_v1=False).create(_core_event())  # type: ignore[arg-type]
    assert plain.writes == [("create", _core_event())]
    assert EventWriter(store, events_v1=True).as_events_v1({**_core_event(), "action": ""})["action"] == (  # type: ignore[arg-type]
        "FailedScheduling"
    )
    long = EventWriter(store, events_v1=True).as_events_v1({**_core_event(), "message": "x" * 2000})  # type: ignore[arg-type]
    assert (len(long["note"]), long["note"][-5:]) == (1024, "x ...")  # kube-scheduler's truncateMessage
    assert micro_time() < "9999"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")
def test_berth_run_writes_kube_schedulers_events(tmp_path: Path) -> None:
    with running(tmp_path / "data", "--api-only", log=tmp_path / "serve.log") as served:
        served.apply(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": "n1"},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
            }
        )
        with running_berth(served, tmp_path / "run.log", "--leader-elect=false") as run:
            run.wait_for("starting the scheduler")
            served.apply(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "p", "namespace": "default"},
                    "spec": {
                        "schedulerName": "berth-scheduler",
                        "containers": [{"name": "c", "image": "busybox"}],
                    },
                }
            )

            def scheduled() -> list[Obj]:
                done = served.kubectl("get", "events.v1.events.k8s.io", "-n", "default", "-o", "yaml")
                assert done.returncode == 0, done.stderr
                items: list[Obj] = yaml.safe_load(done.stdout)["items"]
                return [e for e in items if e.get("reason") == "Scheduled"]

            (event,) = eventually(scheduled)
        uid = served.kubectl("get", "pod", "p", "-o", "jsonpath={.metadata.uid}").stdout
        assert event["apiVersion"] == "events.k8s.io/v1"
        assert MICRO.match(event["eventTime"]), event["eventTime"]
        assert event["regarding"] == {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "p",
            "namespace": "default",
            "uid": uid,
        }
        assert {
            k: event.get(k) for k in ("reportingController", "reportingInstance", "action", "note", "type")
        } == {
            "reportingController": "berth-scheduler",
            "reportingInstance": f"berth-scheduler-{socket.gethostname()}",
            "action": "Binding",
            "note": "Successfully assigned default/p to n1",
            "type": "Normal",
        }
        assert event["metadata"]["name"].startswith("p.")
        # the same Event through v1: kubectl get events and kubectl events list it
        listed = served.kubectl("get", "events", "-n", "default")
        assert "Successfully assigned default/p to n1" in listed.stdout, listed.stderr
        shown = served.kubectl("events", "-n", "default", "--for", "pod/p")
        assert "Successfully assigned default/p to n1" in shown.stdout, shown.stderr
