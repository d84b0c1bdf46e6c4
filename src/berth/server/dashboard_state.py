"""The live dashboard's summary of the cluster, kept current from one store watch (no list per request).

`DashboardState` opens ``store.watch(None)`` (every kind) on first use, applies its events to small
per-object rows and numbers every change with a sequence number, so each server-sent-event stream sends
only what changed since its last delta. Rows:

* nodes: allocatable, requested (the requests of the non-terminal pods bound to the node) and reserved (the
  remaining requests, allocatable minus allocated, of the Available Reservations on the node), for cpu
  (milli), memory (bytes) and pods;
* reservations (name, node, phase, owners, allocatable/allocated cpu and memory);
* ElasticQuotas (min/max/used cpu and memory), PodGroups (phase, minMember, running/scheduled counts);
* pending pods (no node, not terminal) with the reason and message of their ``PodScheduled=False``.

`sample` makes a chart point of the report's series (see its doc) from sums kept as the rows change (per node
group: by instance-type label, else by shape, `berth.api.nodegroups`) and counters of what the watch saw.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from berth.api.contracts import Store
from berth.api.elasticquota import ELASTIC_QUOTA_GROUPS, quota_limits
from berth.api.errors import InvalidObjectError
from berth.api.nodegroups import GROUP_LABELS, NO_LABEL, shape_key
from berth.api.podgroup import POD_GROUP_GROUPS, gang_waiting
from berth.api.resources import node_allocatable, pod_requests
from berth.api.timestamps import unix_seconds
from berth.api.watch import DELETED, Watch, WatchEvent

__all__ = ["MAX_LOG", "DashboardState"]

MAX_LOG = 50_000
"""Changes remembered for the event streams; a stream further behind is told to reload the snapshot."""
SAMPLES_KEPT = 720
"""Chart points kept (at one per `sample` call, every 2 s: 24 minutes)."""
_TERMINAL = frozenset({"Succeeded", "Failed"})
_RESERVATION = ("scheduling.koordinator.sh", "Reservation")
_DIGITS = re.compile(r"(\d+)")
_PREEMPTED = "PreemptionByScheduler"
_EVICTED = "EvictionByEvictionAPI"


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key putting digit runs in numeric order: ``n2`` < ``n10``."""
    return tuple((1, int(part)) if part.isdigit() else (0, part) for part in _DIGITS.split(name) if part)


def _requests(obj: Mapping[str, Any], of: Callable[[Mapping[str, Any]], dict[str, int]]) -> dict[str, int]:
    try:
        return of(obj)
    except InvalidObjectError:
        return {}


def _amount(rl: object, resource: str) -> int:
    if not isinstance(rl, Mapping):
        return 0
    try:
        return node_allocatable({"status": {"allocatable": {resource: rl[resource]}}}).get(resource, 0)
    except (KeyError, InvalidObjectError):
        return 0


def _triple(amounts: Mapping[str, int]) -> list[int]:
    return [amounts.get("cpu", 0), amounts.get("memory", 0), amounts.get("pods", 0)]


class DashboardState:
    """The dashboard's rows, updated by `refresh` from the store's watch (see the module doc)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.watch: Watch | None = None
        self.seq = 0
        self.nodes: dict[str, dict[str, Any]] = {}
        self.node_order: list[str] | None = []
        self.reservations: dict[str, dict[str, Any]] = {}
        self.quotas: dict[str, dict[str, Any]] = {}
        self.podgroups: dict[str, dict[str, Any]] = {}
        self.pending: dict[str, dict[str, Any]] = {}
        self.bound = 0
        # pod key -> (node, [cpu, memory, 1]) of what the pod adds to its node's requested
        self._pods: dict[str, tuple[str, list[int]]] = {}
        # reservation name -> (node, [cpu, memory, 0]) of what it adds to its node's reserved
        self._reserved: dict[str, tuple[str, list[int]]] = {}
        self.log: deque[tuple[int, str, str]] = deque(maxlen=MAX_LOG)
        """(seq, table, key) of each change, oldest first."""
        self.samples: deque[dict[str, Any]] = deque(maxlen=SAMPLES_KEPT)
        # node name -> its instance-type labels (the GROUP_LABELS it has), for the per-group utilisation
        self._node_labels: dict[str, dict[str, str]] = {}
        # (label, group) -> [requested cpu, memory, pods, allocatable cpu, memory, pods, nodes] of the nodes in
        # the store, kept as rows change: per GROUP_LABELS value (label) and per shape (label "")
        self._group_sums: dict[tuple[str, str], list[int]] = {}
        self._labelled = dict.fromkeys(GROUP_LABELS, 0)  # nodes in the store with each label
        self._since: dict[str, float] = {}  # pending pod key -> creation (unix seconds)
        self._latencies: list[float] = []  # creation to binding of the pods bound since the last sample
        self.scheduled = 0  # pods seen pending, then bound (cumulative)
        self.victims = 0  # pods deleted with DisruptionTarget reason PreemptionByScheduler
        self.evictions = 0  # pods deleted with DisruptionTarget reason EvictionByEvictionAPI

    # ----- keeping current ------------------------------------------------------------------------
    def start(self) -> None:
        """Open the watch (every current object arrives as ADDED) and apply what it has."""
        if self.watch is None:
            self.watch = self.store.watch(None)
            self.refresh()

    def refresh(self) -> bool:
        """Apply the watch's pending events; whether anything changed."""
        if self.watch is None:
            self.start()
            return True
        before = self.seq
        while True:
            events = self.watch.poll()
            if not events:
                break
            for ev in events:
                self.apply(ev)
        return self.seq != before

    def close(self) -> None:
        if self.watch is not None:
            self.watch.stop()
            self.watch = None

    def _changed(self, table: str, key: str) -> None:
        self.seq += 1
        self.log.append((self.seq, table, key))

    def apply(self, ev: WatchEvent) -> None:
        """One store event applied to the rows."""
        group, kind = ev.key
        obj = ev.object
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        gone = ev.type == DELETED
        if (group, kind) == ("", "Node"):
            self._node(name, None if gone else obj)
        elif (group, kind) == ("", "Pod"):
            if gone:
                self._disrupted(obj)
            self._pod(f"{meta.get('namespace') or 'default'}/{name}", None if gone else obj)
        elif (group, kind) == _RESERVATION:
            self._reservation(name, None if gone else obj)
        elif kind == "ElasticQuota" and group in ELASTIC_QUOTA_GROUPS:
            self._quota(f"{meta.get('namespace') or 'default'}/{name}", None if gone else obj)
        elif kind == "PodGroup" and group in POD_GROUP_GROUPS:
            self._podgroup(f"{meta.get('namespace') or 'default'}/{name}", None if gone else obj)

    def _node_row(self, name: str) -> dict[str, Any]:
        row = self.nodes.get(name)
        if row is None:
            row = self.nodes[name] = {
                "name": name,
                "allocatable": [0, 0, 0],
                "requested": [0, 0, 0],
                "reserved": [0, 0, 0],
                "pods": 0,
                "ready": True,
                "unschedulable": False,
                "known": False,
            }
            self.node_order = None
        return row

    def _disrupted(self, obj: Mapping[str, Any]) -> None:
        """Count a deleted pod marked ``DisruptionTarget=True`` as a preemption victim or an eviction."""
        for cond in (obj.get("status") or {}).get("conditions") or ():
            if cond.get("type") == "DisruptionTarget" and cond.get("status") == "True":
                if cond.get("reason") == _PREEMPTED:
                    self.victims += 1
                elif cond.get("reason") == _EVICTED:
                    self.evictions += 1

    def _grouped(self, name: str, sign: int) -> None:
        """Add (sign 1) or take off (-1) node `name`'s row to or from its groups' sums (nodes in the store)."""
        row = self.nodes.get(name)
        if row is None or not row["known"]:
            return
        labels = self._node_labels.get(name, {})
        alloc = row["allocatable"]
        values = [*row["requested"], *alloc, 1]
        keys = [(k, labels.get(k, NO_LABEL)) for k in GROUP_LABELS]
        keys.append(("", shape_key(alloc[0], alloc[1])))
        for key in keys:
            sums = self._group_sums.get(key)
            if sums is None:
                sums = self._group_sums[key] = [0] * 7
            for i in range(7):
                sums[i] += sign * values[i]
            if sums[6] == 0:
                del self._group_sums[key]
        for k in labels:
            self._labelled[k] += sign

    def _node(self, name: str, obj: Mapping[str, Any] | None) -> None:
        self._grouped(name, -1)
        if obj is None:
            self._node_labels.pop(name, None)
            row = self.nodes.get(name)
            if row is not None:
                row["known"] = False
                row["allocatable"] = [0, 0, 0]
                if row["pods"] == 0 and name not in {n for n, _ in self._reserved.values()}:
                    del self.nodes[name]
                    self.node_order = None
            self._changed("nodes", name)
            return
        row = self._node_row(name)
        row["known"] = True
        row["allocatable"] = _triple(_requests(obj, node_allocatable))
        row["unschedulable"] = bool((obj.get("spec") or {}).get("unschedulable"))
        labels = (obj.get("metadata") or {}).get("labels") or {}
        typed = {k: str(labels[k]) for k in GROUP_LABELS if k in labels}
        if typed:
            self._node_labels[name] = typed
        else:
            self._node_labels.pop(name, None)
        self._grouped(name, 1)
        ready = True
        for cond in (obj.get("status") or {}).get("conditions") or ():
            if cond.get("type") == "Ready":
                ready = cond.get("status") == "True"
        row["ready"] = ready
        self._changed("nodes", name)

    def _move(
        self, table: dict[str, tuple[str, list[int]]], field: str, key: str, node: str, amounts: list[int]
    ) -> None:
        """Take `key`'s old contribution off its node's `field` and add the new one (node "" for none)."""
        old = table.pop(key, None)
        grouped = field == "requested"
        if old is not None and old[0] in self.nodes:
            row = self.nodes[old[0]]
            if grouped:
                self._grouped(old[0], -1)
            row[field] = [a - b for a, b in zip(row[field], old[1], strict=True)]
            if grouped:
                row["pods"] -= 1
                self._grouped(old[0], 1)
            self._changed("nodes", old[0])
        if node:
            row = self._node_row(node)
            if grouped:
                self._grouped(node, -1)
            row[field] = [a + b for a, b in zip(row[field], amounts, strict=True)]
            if grouped:
                row["pods"] += 1
                self._grouped(node, 1)
            table[key] = (node, amounts)
            self._changed("nodes", node)

    def _pod(self, key: str, obj: Mapping[str, Any] | None) -> None:
        node = ""
        amounts = [0, 0, 1]
        pending: dict[str, Any] | None = None
        if obj is not None:
            spec = obj.get("spec") or {}
            status = obj.get("status") or {}
            phase = str(status.get("phase") or "Pending")
            deleting = bool((obj.get("metadata") or {}).get("deletionTimestamp"))
            reqs = _requests(obj, pod_requests)
            amounts = [reqs.get("cpu", 0), reqs.get("memory", 0), 1]
            if phase not in _TERMINAL:
                node = str(spec.get("nodeName") or "")
                if not node and not deleting:
                    reason, message = "", ""
                    for cond in status.get("conditions") or ():
                        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                            reason, message = str(cond.get("reason") or ""), str(cond.get("message") or "")
                    pending = {
                        "key": key,
                        "cpu": amounts[0],
                        "memory": amounts[1],
                        "priority": int(spec.get("priority") or 0),
                        "scheduler": str(spec.get("schedulerName") or "default-scheduler"),
                        "reason": reason,
                        "message": message,
                        "created": str((obj.get("metadata") or {}).get("creationTimestamp") or ""),
                    }
        if pending is not None:
            if key not in self._since:
                created = unix_seconds(pending["created"])
                self._since[key] = time.time() if created is None else created
        else:
            since = self._since.pop(key, None)
            if since is not None and node and obj is not None:
                bound_at: float | None = None
                for cond in (obj.get("status") or {}).get("conditions") or ():
                    if cond.get("type") == "PodScheduled" and cond.get("status") == "True":
                        bound_at = unix_seconds(cond.get("lastTransitionTime"))
                self.scheduled += 1
                self._latencies.append(max(0.0, (time.time() if bound_at is None else bound_at) - since))
        old = self._pods.get(key)
        if old is None or old[0] != node or old[1] != amounts:
            was_bound = old is not None
            self._move(self._pods, "requested", key, node, amounts)
            self.bound += int(bool(node)) - int(was_bound)
        if pending is not None:
            if self.pending.get(key) != pending:
                self.pending[key] = pending
                self._changed("pending", key)
        elif self.pending.pop(key, None) is not None:
            self._changed("pending", key)

    def _reservation(self, name: str, obj: Mapping[str, Any] | None) -> None:
        if obj is None:
            self.reservations.pop(name, None)
            self._move(self._reserved, "reserved", name, "", [])
            self._changed("reservations", name)
            return
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        phase = str(status.get("phase") or "Pending")
        node = str(status.get("nodeName") or "")
        template = spec.get("template") or {}
        requests = _requests({"spec": template.get("spec") or {}}, pod_requests)
        alloc_rl = status.get("allocatable") if phase == "Available" else None
        allocatable = (
            [_amount(alloc_rl, "cpu"), _amount(alloc_rl, "memory")]
            if alloc_rl
            else [
                requests.get("cpu", 0),
                requests.get("memory", 0),
            ]
        )
        allocated = [_amount(status.get("allocated"), "cpu"), _amount(status.get("allocated"), "memory")]
        owners = []
        for owner in spec.get("owners") or ():
            if not isinstance(owner, Mapping):
                continue
            if owner.get("object"):
                o = owner["object"]
                owners.append(f"object {o.get('namespace') or 'default'}/{o.get('name') or ''}")
            elif owner.get("controller"):
                c = owner["controller"]
                owners.append(
                    f"controller {c.get('kind') or ''} {c.get('namespace') or ''}/{c.get('name') or ''}"
                )
            elif owner.get("labelSelector"):
                sel = owner["labelSelector"].get("matchLabels") or {}
                owners.append("labels " + ",".join(f"{k}={v}" for k, v in sorted(sel.items())))
        self.reservations[name] = {
            "name": name,
            "node": node,
            "phase": phase,
            "owners": owners,
            "allocatable": allocatable,
            "allocated": allocated,
            "allocateOnce": spec.get("allocateOnce", True) is not False,
        }
        self._changed("reservations", name)
        remaining = [max(0, allocatable[0] - allocated[0]), max(0, allocatable[1] - allocated[1]), 0]
        live = phase == "Available" and node
        old = self._reserved.get(name)
        new = (node, remaining) if live else None
        if old != new:
            self._move(self._reserved, "reserved", name, node if live else "", remaining)

    def _quota(self, key: str, obj: Mapping[str, Any] | None) -> None:
        if obj is None:
            self.quotas.pop(key, None)
        else:
            try:
                mins, maxs = quota_limits(obj)
            except InvalidObjectError:
                mins, maxs = {}, None
            used = (obj.get("status") or {}).get("used")
            self.quotas[key] = {
                "key": key,
                "min": [mins.get("cpu", 0), mins.get("memory", 0)],
                "max": None if maxs is None else [maxs.get("cpu", -1), maxs.get("memory", -1)],
                "used": [_amount(used, "cpu"), _amount(used, "memory")],
            }
        self._changed("quotas", key)

    def _podgroup(self, key: str, obj: Mapping[str, Any] | None) -> None:
        if obj is None:
            self.podgroups.pop(key, None)
        else:
            spec = obj.get("spec") or {}
            status = obj.get("status") or {}
            self.podgroups[key] = {
                "key": key,
                "phase": str(status.get("phase") or "Pending"),
                "minMember": int(spec.get("minMember") or 0),
                "scheduled": int(status.get("scheduled") or 0),
                "running": int(status.get("running") or 0),
                "failed": int(status.get("failed") or 0),
                "succeeded": int(status.get("succeeded") or 0),
            }
        self._changed("podgroups", key)

    # ----- reading -------------------------------------------------------------------------------
    def sorted_nodes(self) -> list[str]:
        """Node names in natural order (``n2`` before ``n10``)."""
        if self.node_order is None:
            self.node_order = sorted(self.nodes, key=natural_key)
        return self.node_order

    def totals(self) -> dict[str, Any]:
        """Cluster sums and counts (what the summary header and the chart points show)."""
        alloc = [0, 0, 0]
        req = [0, 0, 0]
        res = [0, 0, 0]
        for row in self.nodes.values():
            for i in range(3):
                alloc[i] += row["allocatable"][i]
                req[i] += row["requested"][i]
                res[i] += row["reserved"][i]
        return {
            "nodes": len(self.nodes),
            "allocatable": alloc,
            "requested": req,
            "reserved": res,
            "pending": len(self.pending),
            "bound": self.bound,
            "reservations": len(self.reservations),
            "quotas": len(self.quotas),
            "podgroups": len(self.podgroups),
        }

    def _groups(self) -> tuple[str, dict[str, dict[str, list[int]]]]:
        """The group label ("shape" when no node has an instance-type label) and each group's summed
        requested and allocatable [cpu, memory, pods] (from the sums kept as rows change: no node loop)."""
        label = next((k for k in GROUP_LABELS if self._labelled[k] > 0), "")
        groups = {g: sums for (lb, g), sums in self._group_sums.items() if lb == label}
        return label or "shape", {
            g: {"requested": groups[g][0:3], "allocatable": groups[g][3:6]}
            for g in sorted(groups, key=natural_key)
        }

    def sample(self, at: float) -> dict[str, Any]:
        """A chart point at wall time `at` (seconds), kept in `samples`: the cluster's and each node group's
        requested and allocatable [cpu, memory, pods], the pending pods and their wait since creation, the
        creation-to-binding latency of the pods bound since the previous point, cumulative scheduled pods,
        preemption victims and evictions, the Available Reservations' allocatable and allocated [cpu,
        memory], each ElasticQuota's used, min and max, and the PodGroups short of minMember."""
        t = self.totals()
        waits = [at - since for since in self._since.values()]
        lat = self._latencies
        self._latencies = []
        reserved = [0, 0]
        allocated = [0, 0]
        for r in self.reservations.values():
            if r["phase"] == "Available":
                for i in range(2):
                    reserved[i] += r["allocatable"][i]
                    allocated[i] += r["allocated"][i]
        label, groups = self._groups()
        point = {
            "t": round(at, 3),
            "cpuRequested": t["requested"][0],
            "cpuAllocatable": t["allocatable"][0],
            "memRequested": t["requested"][1],
            "memAllocatable": t["allocatable"][1],
            "pending": t["pending"],
            "bound": t["bound"],
            "requested": t["requested"],
            "allocatable": t["allocatable"],
            "groupLabel": label,
            "groups": groups,
            "pendingWaitMean": round(sum(waits) / len(waits), 6) if waits else 0.0,
            "pendingWaitMax": round(max(waits), 6) if waits else 0.0,
            "boundSince": len(lat),
            "latencyMean": round(sum(lat) / len(lat), 6) if lat else None,
            "latencyMax": round(max(lat), 6) if lat else None,
            "scheduled": self.scheduled,
            "preemptionVictims": self.victims,
            "evictions": self.evictions,
            "reserved": reserved,
            "reservationAllocated": allocated,
            "quotas": {
                k: {"used": q["used"], "min": q["min"], "max": q["max"]}
                for k, q in sorted(self.quotas.items())
            },
            "gangsWaiting": sum(
                1
                for g in self.podgroups.values()
                if gang_waiting(g["minMember"], g["phase"], g["scheduled"], g["running"], g["succeeded"])
            ),
        }
        self.samples.append(point)
        return point

    def snapshot(self, offset: int = 0, limit: int = 500) -> dict[str, Any]:
        """The `/ui/api/state` document: totals, one page of nodes (by name), every other table."""
        names = self.sorted_nodes()
        offset = max(0, offset)
        limit = max(0, min(limit, 5000))
        return {
            "seq": self.seq,
            "revision": self.store.revision,
            "totals": self.totals(),
            "nodes": {
                "total": len(names),
                "offset": offset,
                "limit": limit,
                "items": [self.nodes[n] for n in names[offset : offset + limit]],
            },
            "reservations": [self.reservations[k] for k in sorted(self.reservations)],
            "quotas": [self.quotas[k] for k in sorted(self.quotas)],
            "podgroups": [self.podgroups[k] for k in sorted(self.podgroups)],
            "pending": [self.pending[k] for k in sorted(self.pending)],
            "samples": list(self.samples),
        }

    def delta(self, since: int) -> dict[str, Any] | None:
        """What changed after sequence number `since` (rows as they are now; None for removed ones), or
        ``{"reset": True}`` when the log no longer reaches back that far; None when nothing changed."""
        if since == self.seq:
            return None
        if since > self.seq or (
            self.log and self.log[0][0] > since + 1
        ):  # a rebuilt state, or too far behind
            return {"seq": self.seq, "reset": True}
        tables: dict[str, dict[str, Any]] = {}
        sources: dict[str, dict[str, dict[str, Any]]] = {
            "nodes": self.nodes,
            "reservations": self.reservations,
            "quotas": self.quotas,
            "podgroups": self.podgroups,
            "pending": self.pending,
        }
        for seq, table, key in reversed(self.log):
            if seq <= since:
                break
            rows = tables.setdefault(table, {})
            if key not in rows:
                rows[key] = sources[table].get(key)
        out: dict[str, Any] = {"seq": self.seq, "totals": self.totals()}
        for table, rows in tables.items():
            out[table] = {
                "set": [r for r in rows.values() if r is not None],
                "del": [k for k, r in rows.items() if r is None],
            }
        return out
