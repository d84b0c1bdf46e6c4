"""The series of an HTML report (``--report-html``): a sampler that records the cluster every ``--sample`` of
virtual time.

`Timeline.attach` puts a clock timer on the simulation's virtual clock at t = 0, step, 2·step, ... (a priority
after every other timer due at the same time, so each sample sees the state everything due by then left).
Each sample reads utilisation as numpy column sums of the scheduler's NodeTable (no per-node Python loop):
cluster-wide and per node group (grouped by instance-type label, else by node shape), the pending pods and
how long they have waited (from the scheduling queue), the pods bound since the previous sample and their
scheduling latency (creation to binding in virtual time, from a store subscription to Pod events), cumulative preemptions and evictions, the occupancy of
Reservations, the used amounts of ElasticQuotas and the PodGroups still short of ``minMember``. `finish`
adds the final placement (node x resource, binned when there are many nodes) and the top FailedScheduling
reasons. `data` is the JSON embedded in the page.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from berth.api.elasticquota import ELASTIC_QUOTA_GROUPS, quota_limits
from berth.api.errors import InvalidObjectError, StatusError
from berth.api.nodegroups import NO_LABEL, group_label, shape_key
from berth.api.podgroup import POD_GROUP_GROUPS, gang_waiting
from berth.api.resources import node_allocatable
from berth.api.watch import ADDED, DELETED, WatchEvent
from berth.sim.engine import Simulation
from berth.sim.html_report import natural_key

__all__ = ["DEFAULT_SAMPLE", "HEATMAP_MAX_ROWS", "Timeline", "failed_reasons"]

DEFAULT_SAMPLE = 10.0
HEATMAP_MAX_ROWS = 500
"""Above this many nodes the placement heat map shows bins of consecutive nodes (their summed figures)."""
SAMPLE_PRIORITY = 1 << 30
_RESERVATION = ("scheduling.koordinator.sh", "Reservation")
_COUNTED = re.compile(r"^(\d+)\s+(.*)$")
_POD = re.compile(r"\bPod \S+/\S+ ")


def _amount(rl: object, resource: str) -> int:
    if not isinstance(rl, Mapping) or resource not in rl:
        return 0
    try:
        return node_allocatable({"status": {"allocatable": {resource: rl[resource]}}}).get(resource, 0)
    except InvalidObjectError:
        return 0


def failed_reasons(events: Sequence[Mapping[str, Any]], top: int = 10) -> list[dict[str, Any]]:
    """The most frequent reasons in FailedScheduling events: each message's ``0/N nodes are available: 2 A,
    1 B.`` part (not its preemption part) split into reasons, weighted by node count x the event's count; a
    reason without a node count (a PreFilter rejection: the pod's name left out) counts the event's count."""
    counts: Counter[str] = Counter()
    for ev in events:
        if ev.get("reason") != "FailedScheduling":
            continue
        times = int(ev.get("count") or 1)
        msg = str(ev.get("message") or "")
        _head, sep, rest = msg.partition(" nodes are available: ")
        if not sep:
            counts[msg.strip().rstrip(".")] += times
            continue
        body = re.split(
            r"\. (?:preemption: )?\d+/\d+ nodes are available: |\. preemption:", rest, maxsplit=1
        )[0]
        body = _POD.sub("Pod ", body.strip().rstrip("."))
        for part in body.split(", "):
            m = _COUNTED.match(part.strip())
            if m:
                counts[m.group(2)] += int(m.group(1)) * times
            elif part.strip():
                counts[part.strip()] += times
    return [
        {"reason": r, "count": c} for r, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    ]


def _columns(table: Any, resource: str, n: int) -> tuple[Any, Any]:
    """The requested and allocatable columns of ``resource`` over the first ``n`` rows of the node table
    (zeros for a resource no node has; pods requested = the pod count)."""
    zeros = np.zeros(n, dtype=np.int64)
    if resource == "pods":
        req = table.pod_count[:n]
    else:
        req = table.req(resource)[:n] if resource in table.requested else zeros
    alloc = table.alloc(resource)[:n] if resource in table.allocatable else zeros
    return req, alloc


class Timeline:
    """Samples of a Simulation every ``step`` virtual seconds (see the module doc)."""

    def __init__(self, step: float = DEFAULT_SAMPLE) -> None:
        if step <= 0:
            raise ValueError("the sample step must be positive")
        self.step = step
        self.sim: Simulation | None = None
        self.end = 0.0
        self._start = 0.0
        self.time: list[float] = []
        self.resources: list[str] = []
        self.requested: dict[str, list[int]] = {}
        self.allocatable: dict[str, list[int]] = {}
        self.group_label = ""
        self.groups: list[str] = []
        self.group_requested: dict[str, list[list[int]]] = {}
        self.group_allocatable: dict[str, list[list[int]]] = {}
        self.pending: list[int] = []
        self.pending_wait_mean: list[float] = []
        self.pending_wait_max: list[float] = []
        self.bound: list[int] = []  # pods bound since the previous sample
        self.latency_mean: list[float | None] = []  # their creation-to-binding time (virtual seconds)
        self.latency_max: list[float | None] = []
        self._created: dict[str, float] = {}  # uid -> virtual creation time of the pods not bound yet
        self._latencies: list[float] = []
        self.scheduled: list[int] = []
        self.attempts: list[int] = []
        self.preemptions: list[int] = []
        self.victims: list[int] = []
        self.evictions: list[int] = []
        self.reserved: list[list[int]] = []  # [cpu, memory] of Available reservations
        self.reservation_allocated: list[list[int]] = []
        self.quotas: dict[str, dict[str, Any]] = {}
        self.gangs_waiting: list[int] = []
        self.gangs: dict[str, dict[str, Any]] = {}
        self._layout = -1
        self._codes: np.ndarray[Any, np.dtype[np.int64]] = np.zeros(0, dtype=np.int64)
        self.final: dict[str, Any] = {}
        self.failed: list[dict[str, Any]] = []

    # ----- sampling ---------------------------------------------------------------------------------
    def attach(self, sim: Simulation, end: float) -> None:
        """Sample ``sim`` at every multiple of the step up to ``end`` (virtual seconds)."""
        self.sim = sim
        self.end = end
        start = self._start = sim.clock.now()
        pods, _ = sim.store.list(("", "Pod"))
        for pod in pods:
            if not (pod.get("spec") or {}).get("nodeName"):
                self._created[str((pod.get("metadata") or {}).get("uid"))] = start
        sim.store.subscribe(self._pod_event, ("", "Pod"))
        sim.clock.call_at(start, self._tick, SAMPLE_PRIORITY)

    def _pod_event(self, ev: WatchEvent) -> None:
        """Note when a pod is created and how long it took to be bound (virtual time)."""
        obj = ev.object
        uid = str((obj.get("metadata") or {}).get("uid"))
        if ev.type == DELETED:
            self._created.pop(uid, None)
            return
        bound = bool((obj.get("spec") or {}).get("nodeName"))
        assert self.sim is not None
        if ev.type == ADDED:
            if not bound:
                self._created[uid] = self.sim.clock.now()
        elif bound:
            t0 = self._created.pop(uid, None)
            if t0 is not None:
                self._latencies.append(self.sim.clock.now() - t0)

    def _tick(self) -> None:
        assert self.sim is not None
        self.sample()
        nxt = self._start + len(self.time) * self.step  # no drift from adding the step up
        if nxt <= self.end + 1e-9:
            self.sim.clock.call_at(nxt, self._tick, SAMPLE_PRIORITY)

    def _group_codes(self) -> None:
        """Each node's group index (recomputed only when the table's rows changed)."""
        assert self.sim is not None
        table = self.sim.scheduler.cache.table
        if table.layout == self._layout and len(self._codes) == table.size:
            return
        self._layout = table.layout
        n = table.size
        label = group_label(table.labels[:n])
        self.group_label = label
        if label:
            keys = [lb.get(label, NO_LABEL) for lb in table.labels[:n]]
        else:
            cpu = table.alloc("cpu")[:n]
            mem = table.alloc("memory")[:n]
            keys = [shape_key(c, m) for c, m in zip(cpu.tolist(), mem.tolist(), strict=True)]
        index: dict[str, int] = {g: i for i, g in enumerate(self.groups)}
        codes = []
        for k in keys:
            i = index.get(k)
            if i is None:
                i = index[k] = len(self.groups)
                self.groups.append(k)
            codes.append(i)
        self._codes = np.asarray(codes, dtype=np.int64)

    def sample(self) -> None:
        """Record one point of every series at the clock's current time."""
        sim = self.sim
        assert sim is not None
        table = sim.scheduler.cache.table
        n = table.size
        self.time.append(sim.clock.now())
        self._group_codes()
        ng = len(self.groups)
        names = [*sorted((set(table.allocatable) | {"cpu", "memory"}) - {"pods"}), "pods"]
        for r in names:
            if r not in self.requested:
                k = len(self.time) - 1
                self.resources.append(r)
                self.requested[r] = [0] * k
                self.allocatable[r] = [0] * k
                self.group_requested[r] = [[0] * ng for _ in range(k)]
                self.group_allocatable[r] = [[0] * ng for _ in range(k)]
            req, alloc = _columns(table, r, n)
            self.requested[r].append(int(req.sum()))
            self.allocatable[r].append(int(alloc.sum()))
            # float64 sums are exact below 2**53 (petabytes of memory in bytes)
            greq = np.bincount(self._codes, weights=req, minlength=ng)
            galloc = np.bincount(self._codes, weights=alloc, minlength=ng)
            self.group_requested[r].append([int(v) for v in greq])
            self.group_allocatable[r].append([int(v) for v in galloc])
        now = sim.clock.now()
        waits = [now - qp.initial_attempt for qp in sim.scheduler.queue.pending()]
        self.pending.append(len(waits))
        self.pending_wait_mean.append(round(sum(waits) / len(waits), 6) if waits else 0.0)
        self.pending_wait_max.append(round(max(waits), 6) if waits else 0.0)
        lat = self._latencies
        self.bound.append(len(lat))
        self.latency_mean.append(round(sum(lat) / len(lat), 6) if lat else None)
        self.latency_max.append(round(max(lat), 6) if lat else None)
        self._latencies = []
        st = sim.scheduler.stats
        self.scheduled.append(st.scheduled)
        self.attempts.append(st.attempts)
        self.preemptions.append(st.preemption_attempts)
        self.victims.append(int(st.preemption_victims.total))
        self.evictions.append(len(sim.descheduled) + sum(len(d.evicted) for d in sim.drains))
        self._sample_objects()

    def _sample_objects(self) -> None:
        assert self.sim is not None
        store = self.sim.store
        k = len(self.time) - 1
        reserved = [0, 0]
        allocated = [0, 0]
        try:
            reservations, _ = store.list(_RESERVATION)
        except (StatusError, KeyError):  # the kind is not served
            reservations = []
        for obj in reservations:
            status = obj.get("status") or {}
            if status.get("phase") != "Available":
                continue
            for i, r in enumerate(("cpu", "memory")):
                reserved[i] += _amount(status.get("allocatable"), r)
                allocated[i] += _amount(status.get("allocated"), r)
        self.reserved.append(reserved)
        self.reservation_allocated.append(allocated)
        for group in ELASTIC_QUOTA_GROUPS:
            try:
                quotas, _ = store.list((group, "ElasticQuota"))
            except (StatusError, KeyError):
                continue
            for obj in quotas:
                meta = obj.get("metadata") or {}
                key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
                try:
                    mins, maxs = quota_limits(obj)
                except InvalidObjectError:
                    mins, maxs = {}, None
                row = self.quotas.setdefault(key, {"used": {"cpu": [None] * k, "memory": [None] * k}})
                row["min"] = {"cpu": mins.get("cpu", 0), "memory": mins.get("memory", 0)}
                row["max"] = None if maxs is None else {"cpu": maxs.get("cpu"), "memory": maxs.get("memory")}
                used = (obj.get("status") or {}).get("used")
                for r in ("cpu", "memory"):
                    series = row["used"][r]
                    series.extend([None] * (k - len(series)))
                    series.append(_amount(used, r))
        waiting = 0
        for group in POD_GROUP_GROUPS:
            try:
                groups, _ = store.list((group, "PodGroup"))
            except (StatusError, KeyError):
                continue
            for obj in groups:
                meta = obj.get("metadata") or {}
                key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
                status = obj.get("status") or {}
                need = int((obj.get("spec") or {}).get("minMember") or 0)
                row = self.gangs.setdefault(
                    key, {"minMember": need, "firstSeen": self.time[-1], "waitedUntil": None}
                )
                row["minMember"] = need
                row["phase"] = str(status.get("phase") or "Pending")
                if gang_waiting(
                    need,
                    row["phase"],
                    int(status.get("scheduled") or 0),
                    int(status.get("running") or 0),
                    int(status.get("succeeded") or 0),
                ):
                    waiting += 1
                elif row["waitedUntil"] is None:
                    row["waitedUntil"] = self.time[-1]
        self.gangs_waiting.append(waiting)

    # ----- the end of the run -----------------------------------------------------------------------
    def finish(self) -> None:
        """Record the final placement and the FailedScheduling reasons (after the run)."""
        sim = self.sim
        assert sim is not None
        table = sim.scheduler.cache.table
        n = table.size
        order = sorted(range(n), key=lambda i: natural_key(table.names[i]))
        idx = np.asarray(order, dtype=np.int64)
        known = self.resources or ["cpu", "memory", "pods"]
        resources = [r for r in known if r in ("cpu", "memory", "pods") or any(self.allocatable.get(r, ()))]
        req_cols = []
        alloc_cols = []
        for r in resources:
            req, alloc = _columns(table, r, n)
            req_cols.append(req[idx] if n else req)
            alloc_cols.append(alloc[idx] if n else alloc)
        names = [table.names[i] for i in order]
        size = max(1, -(-n // HEATMAP_MAX_ROWS)) if n > HEATMAP_MAX_ROWS else 1
        rows: list[str] = []
        requested: list[list[int]] = []
        allocatable: list[list[int]] = []
        for start in range(0, n, size):
            stop = min(n, start + size)
            rows.append(names[start] if size == 1 else f"{names[start]} … {names[stop - 1]}")
            requested.append([int(c[start:stop].sum()) for c in req_cols])
            allocatable.append([int(c[start:stop].sum()) for c in alloc_cols])
        events, _ = sim.store.list(("", "Event"))
        self.final = {
            "resources": resources,
            "nodes": rows,
            "nodesPerRow": size,
            "nodeCount": n,
            "requested": requested,
            "allocatable": allocatable,
        }
        self.failed = failed_reasons(events)

    def data(self) -> dict[str, Any]:
        """The embedded JSON of the report."""
        ng = len(self.groups)
        for r in self.resources:  # pad earlier group rows when groups appeared later
            for rows in (self.group_requested[r], self.group_allocatable[r]):
                for row in rows:
                    row.extend([0] * (ng - len(row)))
        k = len(self.time)
        for q in self.quotas.values():
            for series in q["used"].values():
                series.extend([None] * (k - len(series)))
        return {
            "kind": "simulate",
            "sampleSeconds": self.step,
            "time": self.time,
            "resources": self.resources,
            "utilisation": {
                "requested": self.requested,
                "allocatable": self.allocatable,
                "groupLabel": self.group_label or "shape",
                "groups": self.groups,
                "groupRequested": self.group_requested,
                "groupAllocatable": self.group_allocatable,
            },
            "pending": self.pending,
            "pendingWaitMean": self.pending_wait_mean,
            "pendingWaitMax": self.pending_wait_max,
            "bound": self.bound,
            "latencyMean": self.latency_mean,
            "latencyMax": self.latency_max,
            "scheduled": self.scheduled,
            "attempts": self.attempts,
            "preemptions": self.preemptions,
            "preemptionVictims": self.victims,
            "evictions": self.evictions,
            "reservations": {"reserved": self.reserved, "allocated": self.reservation_allocated},
            "quotas": self.quotas,
            "gangsWaiting": self.gangs_waiting,
            "gangs": self.gangs,
            "placement": self.final,
            "failedReasons": self.failed,
        }
