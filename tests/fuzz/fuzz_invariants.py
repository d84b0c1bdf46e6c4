"""The invariants a cluster must keep after every step, checked from the store's objects (and, for the cache
check, against the scheduler's cache and NodeTable).

Each check returns `Violation`s (an invariant name and a one-line description). The rules, exactly:

* ``overcommit``: on every node, the requests of the pods bound to it that have not finished (phase neither
  Succeeded nor Failed; terminating pods still hold their resources) plus, for every Reservation placed on it in
  phase Available or Waiting, its unallocated remainder ``max(0, reserved - held by its owners)`` per resource
  are at most the node's allocatable, for every resource; the pods counted are at most its ``pods``.
* ``reservation-owner``: when a pod is bound with a ``reservation-allocated`` annotation, or a bound pod gets one
  (pre-allocation), the Reservation it names exists and the pod matches its owners (their ``app`` label
  selector) at that moment; a pod is bound into an ``allocateOnce`` Reservation only if no other pod was bound
  into it before (the monitor sees every binding); a pod whose annotation names an existing Reservation runs on
  that Reservation's node.
* ``reservation-allocated``: for every Reservation in phase Available or Waiting, ``status.allocated`` equals
  the summed requests (over the resources in ``status.allocatable``) of its owners, and ``status.currentOwners``
  lists exactly them: the pods on its node whose annotation names its uid and that are neither being deleted
  nor finished (while Waiting, terminating pre-allocated pods still count).
* ``quota-used``: every ElasticQuota's ``status.used`` equals, for each resource its min or max names, the
  summed requests of its namespace's pods in phase Running (the elasticquota controller's rule, as upstream).
* ``quota-max``: for every resource its ``max`` names, the pods of the namespace that the scheduler has placed
  and that have not finished (bound, or assumed while waiting at Permit) request at most ``max``.
* ``gang``: when a member of a PodGroup is bound, at least ``minMember`` members of the group are bound or
  assumed by the scheduler (the monitor counts at the moment of every binding).
* ``pdb-budget``: an eviction that debits a budget (store/eviction.py: the pod is not terminal, Pending or
  terminating, exactly one PodDisruptionBudget selects it, and it is Ready or the unhealthy-pod policy does
  not let it go without a debit) is allowed only while the budget's ``status.disruptionsAllowed`` is at
  least 1, lowers it by exactly 1 and records the pod in ``status.disruptedPods``; and at that moment the
  pods selected by the budget that are Ready, not being deleted and not already in ``disruptedPods``, less
  the evicted pod, are still at least the budget's desired healthy count computed independently (an integer
  ``minAvailable``; otherwise from the Deployment/ReplicaSet scale of the selected pods).
* ``pdb-status``: on the settled cluster each budget's ``currentHealthy``, ``desiredHealthy`` and
  ``disruptionsAllowed`` equal the independent computation.
* ``pod-state``: every pod that has not finished, is not being deleted and is served by a profile is bound,
  nominated (``status.nominatedNodeName``), gated (``spec.schedulingGates``, or held by a PreEnqueue plugin),
  waiting at Permit, or has a ``PodScheduled=False`` condition with a reason; a bound pod has
  ``PodScheduled=True`` and no scheduling gates.
* ``cache``: the scheduler cache's NodeTable has exactly the store's nodes, each row's allocatable, labels,
  taints and cordon flag as the node's, and on each row exactly the pods the store has bound there and not finished,
  the pods assumed there while waiting at Permit, and one virtual pod per Available/Waiting Reservation
  there; each row's requested, non-zero requested and pod count are their sums.
* ``determinism`` (checked by the drivers): the same actions and seed give the same final objects.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from berth.api.conditions import is_pod_ready
from berth.api.errors import NotFound
from berth.api.podgroup import POD_GROUP_LABEL
from berth.api.quantity import resource_amount
from berth.api.reservation import ANNOTATION_RESERVATION_ALLOCATED
from berth.api.resources import node_allocatable, pod_nonzero_requests, pod_requests
from berth.api.watch import WatchEvent
from berth.sim.engine import Simulation

Obj = dict[str, Any]
POD = ("", "Pod")
NODE = ("", "Node")
RS = ("apps", "ReplicaSet")
DEPLOY = ("apps", "Deployment")
PDB = ("policy", "PodDisruptionBudget")
RESERVATION = ("scheduling.koordinator.sh", "Reservation")
EQ = ("scheduling.x-k8s.io", "ElasticQuota")
PODGROUP = ("scheduling.x-k8s.io", "PodGroup")
TERMINAL = ("Succeeded", "Failed")
HOLDING = ("Available", "Waiting")


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken invariant: its name and what was seen."""

    invariant: str
    message: str

    def __str__(self) -> str:
        return f"{self.invariant}: {self.message}"


# ----- small readers ----------------------------------------------------------------------------------------------


def _meta(o: Mapping[str, Any]) -> Mapping[str, Any]:
    return o.get("metadata") or {}


def _ref(o: Mapping[str, Any]) -> str:
    m = _meta(o)
    ns = m.get("namespace")
    return f"{ns}/{m.get('name')}" if ns else str(m.get("name"))


def _phase(o: Mapping[str, Any]) -> str:
    return str((o.get("status") or {}).get("phase") or "")


def _node_of(pod: Mapping[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _finished(pod: Mapping[str, Any]) -> bool:
    return _phase(pod) in TERMINAL


def _deleting(o: Mapping[str, Any]) -> bool:
    return bool(_meta(o).get("deletionTimestamp"))


def _allocated_uid(pod: Mapping[str, Any]) -> str | None:
    raw = (_meta(pod).get("annotations") or {}).get(ANNOTATION_RESERVATION_ALLOCATED)
    if not isinstance(raw, str):
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return str(data.get("uid") or "") if isinstance(data, dict) else None


def _amounts(rl: object) -> dict[str, int]:
    if not isinstance(rl, Mapping):
        return {}
    return {str(k): resource_amount(str(k), v) for k, v in rl.items()}


def _add(into: dict[str, int], amounts: Mapping[str, int], only: Iterable[str] | None = None) -> None:
    keep = None if only is None else set(only)
    for r, v in amounts.items():
        if keep is None or r in keep:
            into[r] = into.get(r, 0) + v


def _nonzero(d: Mapping[str, int]) -> dict[str, int]:
    return {k: v for k, v in d.items() if v}


def _owner_app(reservation: Mapping[str, Any]) -> str | None:
    """The ``app`` the fuzzer's reservations select their owners by (owners: [{labelSelector: app=X}])."""
    owners = (reservation.get("spec") or {}).get("owners") or []
    if len(owners) != 1:
        return None
    return ((owners[0].get("labelSelector") or {}).get("matchLabels") or {}).get("app")


def _pdb_app(pdb: Mapping[str, Any]) -> str | None:
    return (((pdb.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}).get("app")


def _selected(pdb: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    app, ns = _pdb_app(pdb), _meta(pdb).get("namespace")
    return [
        p
        for p in pods
        if _meta(p).get("namespace") == ns and (_meta(p).get("labels") or {}).get("app") == app
    ]


def _controller(o: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in _meta(o).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def desired_healthy(
    store: Any, pdb: Mapping[str, Any], selected: list[Mapping[str, Any]]
) -> tuple[int, int] | None:
    """The budget's expected pod count and desired healthy count, from its spec and the selected pods (their
    number for an integer ``minAvailable``, else the scale of their Deployments/ReplicaSets); None when that
    scale cannot be known (a pod without a ReplicaSet controller, or whose controller is gone)."""
    spec = pdb.get("spec") or {}
    min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
    if isinstance(min_available, int):
        return len(selected), min_available
    scales: dict[str, int] = {}
    for pod in selected:
        ref = _controller(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return None
        ns = _meta(pod).get("namespace") or "default"
        rs = next((o for o in store.list(RS, ns)[0] if _meta(o).get("uid") == ref.get("uid")), None)
        if rs is None:
            return None
        top: Mapping[str, Any] = rs
        owner = _controller(rs)
        if owner is not None and owner.get("kind") == "Deployment":
            dep = next(
                (o for o in store.list(DEPLOY, ns)[0] if _meta(o).get("uid") == owner.get("uid")), None
            )
            if dep is None:
                return None
            top = dep
        scales[str(_meta(top).get("uid"))] = int((top.get("spec") or {}).get("replicas", 1))
    expected = sum(scales.values())

    def scaled(v: object) -> int:
        if isinstance(v, int):
            return v
        pct = int(str(v).rstrip("%"))
        return -(-pct * expected // 100)

    if max_unavailable is not None:
        return expected, max(0, expected - scaled(max_unavailable))
    return expected, scaled(min_available)


def healthy(pdb: Mapping[str, Any], selected: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Selected pods that are Ready, not being deleted and not already recorded in ``disruptedPods``."""
    disrupted = (pdb.get("status") or {}).get("disruptedPods") or {}
    return [p for p in selected if not _deleting(p) and _meta(p)["name"] not in disrupted and is_pod_ready(p)]


# ----- the monitor: what happens during a step -------------------------------------------------------------------


class Monitor:
    """Follows every committed write of the store (synchronously, as it happens) for the invariants that are
    about moments rather than states: budget debits, gang bindings, allocateOnce bindings."""

    def __init__(self, sim: Simulation, *, gangs: bool) -> None:
        self.sim = sim
        self.store = sim.store
        self.gangs = gangs
        self.step = 0
        self.action = ""
        self.violations: list[Violation] = []
        self.debits = 0
        self.gang_bindings = 0
        self.reservation_bindings = 0
        self._pdbs: dict[tuple[str, str], Obj] = {}
        self._bound: dict[str, str] = {}  # pod uid -> node it was seen bound to
        self._allocated: dict[str, str] = {}  # bound pod uid -> reservation uid its annotation names
        # allocateOnce reservation uid -> pods bound into it
        self._once: dict[str, set[str]] = defaultdict(set)
        self.store.subscribe(self._on_event)

    def begin_step(self, step: int, action: str) -> None:
        self.step = step
        self.action = action

    def take(self) -> list[Violation]:
        out, self.violations = self.violations, []
        return out

    def _on_event(self, ev: WatchEvent) -> None:
        kind = ev.key[1]
        if kind == "PodDisruptionBudget":
            self._on_pdb(ev)
        elif kind == "Pod":
            self._on_pod(ev)

    # budgets
    def _on_pdb(self, ev: WatchEvent) -> None:
        obj = ev.object
        key = (str(_meta(obj).get("namespace")), str(_meta(obj).get("name")))
        old = self._pdbs.get(key)
        if ev.type == "DELETED":
            self._pdbs.pop(key, None)
            return
        self._pdbs[key] = obj
        if old is None:
            return
        before = old.get("status") or {}
        after = obj.get("status") or {}
        new = sorted(set(after.get("disruptedPods") or {}) - set(before.get("disruptedPods") or {}))
        if not new:
            return
        self.debits += 1
        allowed_before = int(before.get("disruptionsAllowed") or 0)
        allowed_after = int(after.get("disruptionsAllowed") or 0)
        where = f"PDB {key[0]}/{key[1]} evicting {', '.join(new)}"
        if len(new) != 1 or allowed_before < 1 or allowed_after != allowed_before - 1:
            self.violations.append(
                Violation(
                    "pdb-budget",
                    f"{where}: disruptionsAllowed {allowed_before} -> {allowed_after} with {len(new)} new disruptedPods",
                )
            )
            return
        pods = self.store.list(POD, key[0])[0]
        selected = _selected(obj, pods)
        counts = desired_healthy(self.store, obj, selected)
        if counts is None:
            return
        desired = counts[1]
        remaining = [p for p in healthy(old, selected) if _meta(p)["name"] != new[0]]
        if len(remaining) < desired:
            self.violations.append(
                Violation(
                    "pdb-budget",
                    f"{where}: leaves {len(remaining)} healthy pods, desired {desired} "
                    f"(status said currentHealthy {before.get('currentHealthy')}, "
                    f"desiredHealthy {before.get('desiredHealthy')}, disruptionsAllowed {allowed_before})",
                )
            )

    # bindings
    def _on_pod(self, ev: WatchEvent) -> None:
        pod = ev.object
        uid = str(_meta(pod).get("uid") or "")
        if ev.type == "DELETED":
            self._bound.pop(uid, None)
            self._allocated.pop(uid, None)
            return
        node = _node_of(pod)
        if not node:
            return
        rsv_uid = _allocated_uid(pod) or ""
        newly_bound = uid not in self._bound
        newly_allocated = bool(rsv_uid) and self._allocated.get(uid) != rsv_uid
        self._bound[uid] = node
        self._allocated[uid] = rsv_uid
        if newly_bound and self.gangs:
            group = (_meta(pod).get("labels") or {}).get(POD_GROUP_LABEL)
            if group:
                self._gang_bound(pod, group)
        if newly_allocated:
            self.reservation_bindings += 1
            self._reservation_allocated(pod, rsv_uid, at_binding=newly_bound)

    def _gang_bound(self, pod: Mapping[str, Any], group: str) -> None:
        ns = str(_meta(pod).get("namespace") or "default")
        try:
            pg = self.store.get(PODGROUP, ns, group)
        except NotFound:  # no PodGroup: Coscheduling treats the pod as a lone pod
            return
        self.gang_bindings += 1
        min_member = int((pg.get("spec") or {}).get("minMember") or 0)
        cache = self.sim.scheduler.cache
        members = [
            p
            for p in self.store.list(POD, ns)[0]
            if (_meta(p).get("labels") or {}).get(POD_GROUP_LABEL) == group
        ]
        placed = [p for p in members if _node_of(p) or cache.is_assumed(str(_meta(p).get("uid")))]
        if len(placed) < min_member:
            self.violations.append(
                Violation(
                    "gang",
                    f"{_ref(pod)} bound to {_node_of(pod)} while only {len(placed)} of PodGroup {ns}/{group}'s "
                    f"{len(members)} members are placed (minMember {min_member})",
                )
            )

    def _reservation_allocated(self, pod: Mapping[str, Any], rsv_uid: str, *, at_binding: bool) -> None:
        """A pod was bound into a reservation (``at_binding``) or a running pod was pre-allocated to one: it must
        be one of the reservation's owners now; into an allocateOnce reservation only one pod may be bound."""
        rsv = next((r for r in self.store.list(RESERVATION)[0] if _meta(r).get("uid") == rsv_uid), None)
        if rsv is None:
            self.violations.append(
                Violation(
                    "reservation-owner",
                    f"{_ref(pod)} allocated to a Reservation (uid {rsv_uid}) that is gone",
                )
            )
            return
        app = (_meta(pod).get("labels") or {}).get("app")
        want = _owner_app(rsv)
        how = "bound into" if at_binding else "pre-allocated to"
        if app != want:
            self.violations.append(
                Violation(
                    "reservation-owner",
                    f"{_ref(pod)} (app={app}) {how} Reservation {_meta(rsv).get('name')} whose owners are app={want}",
                )
            )
        if not at_binding or (rsv.get("spec") or {}).get("allocateOnce", True) is False:
            return
        held = self._once[rsv_uid]
        held.add(str(_meta(pod).get("uid")))
        if len(held) > 1:
            self.violations.append(
                Violation(
                    "reservation-owner",
                    f"{_ref(pod)} bound into allocateOnce Reservation {_meta(rsv).get('name')}, "
                    f"which already had {len(held) - 1} owner(s) bound into it",
                )
            )


# ----- the state checks -------------------------------------------------------------------------------------------


class _State:
    """The store's objects, read once per check."""

    def __init__(self, sim: Simulation) -> None:
        store = sim.store
        self.store = store
        self.nodes = {n["metadata"]["name"]: n for n in store.list(NODE)[0]}
        self.pods = store.list(POD)[0]
        self.reservations = store.list(RESERVATION)[0]
        self.rsv_by_uid = {r["metadata"]["uid"]: r for r in self.reservations}
        self.quotas = store.list(EQ)[0]
        self.pdbs = store.list(PDB)[0]
        self.on_node: dict[str, list[Obj]] = defaultdict(list)
        for p in self.pods:
            node = _node_of(p)
            if node and not _finished(p):
                self.on_node[node].append(p)

    def holders(self, rsv: Mapping[str, Any], *, including_terminating: bool) -> list[Obj]:
        """Pods on the reservation's node annotated with its uid that have not finished (and, unless
        ``including_terminating``, are not being deleted)."""
        node = (rsv.get("status") or {}).get("nodeName") or ""
        uid = rsv["metadata"]["uid"]
        return [
            p
            for p in self.on_node.get(node, ())
            if _allocated_uid(p) == uid and (including_terminating or not _deleting(p))
        ]

    def remainder(self, rsv: Mapping[str, Any]) -> dict[str, int]:
        """Reserved but not held by its owners (terminating owners still hold theirs), per resource."""
        reserved = _amounts((rsv.get("status") or {}).get("allocatable"))
        held: dict[str, int] = {}
        for p in self.holders(rsv, including_terminating=True):
            _add(held, pod_requests(p), reserved)
        return {r: max(0, v - held.get(r, 0)) for r, v in reserved.items()}

    def placed_reservations(self, node: str) -> list[Obj]:
        return [
            r
            for r in self.reservations
            if (r.get("status") or {}).get("nodeName") == node and _phase(r) in HOLDING
        ]


def check_overcommit(st: _State) -> list[Violation]:
    out = []
    for name, node in st.nodes.items():
        alloc = node_allocatable(node)
        used: dict[str, int] = {}
        pods = st.on_node.get(name, [])
        for p in pods:
            _add(used, pod_requests(p))
        placed = st.placed_reservations(name)
        for rsv in placed:
            _add(used, {k: v for k, v in st.remainder(rsv).items() if k != "pods"})
        used["pods"] = len(pods)
        names = sorted(x["metadata"]["name"] for x in placed)
        for r, v in sorted(used.items()):
            if v > alloc.get(r, 0):
                out.append(
                    Violation(
                        "overcommit",
                        f"node {name}: {r} {v} > allocatable {alloc.get(r, 0)} "
                        f"({len(pods)} pods, reservations {names})",
                    )
                )
    return out


def check_reservations(st: _State) -> list[Violation]:
    out = []
    for p in st.pods:
        uid = _allocated_uid(p)
        if not uid:
            continue
        rsv = st.rsv_by_uid.get(uid)
        if rsv is None:
            continue
        rnode = (rsv.get("status") or {}).get("nodeName")
        if _node_of(p) and _node_of(p) != rnode:
            out.append(
                Violation(
                    "reservation-owner",
                    f"{_ref(p)} on {_node_of(p)} allocated Reservation {rsv['metadata']['name']} on {rnode}",
                )
            )
    for rsv in st.reservations:
        status = rsv.get("status") or {}
        if _phase(rsv) not in HOLDING:
            continue
        reserved = _amounts(status.get("allocatable"))
        owners = st.holders(rsv, including_terminating=_phase(rsv) == "Waiting")
        want: dict[str, int] = {}
        for p in owners:
            _add(want, pod_requests(p), reserved)
        got = _nonzero(_amounts(status.get("allocated")))
        if got != _nonzero(want):
            out.append(
                Violation(
                    "reservation-allocated",
                    f"Reservation {rsv['metadata']['name']} ({_phase(rsv)}): status.allocated {got} != "
                    f"owners' requests {_nonzero(want)} (owners {sorted(_meta(p)['name'] for p in owners)})",
                )
            )
        listed = sorted(str(o.get("uid")) for o in status.get("currentOwners") or [])
        actual = sorted(str(_meta(p).get("uid")) for p in owners)
        if listed != actual:
            out.append(
                Violation(
                    "reservation-allocated",
                    f"Reservation {rsv['metadata']['name']} ({_phase(rsv)}): status.currentOwners "
                    f"{sorted(str(o.get('name')) for o in status.get('currentOwners') or [])} != owners "
                    f"{sorted(_meta(p)['name'] for p in owners)}",
                )
            )
    return out


def check_quotas(st: _State, sim: Simulation) -> list[Violation]:
    out = []
    assumed = {w.pod.uid for w in sim.scheduler.waiting.values()}
    for q in st.quotas:
        ns = _meta(q).get("namespace")
        spec = q.get("spec") or {}
        mins, maxs = _amounts(spec.get("min")), _amounts(spec.get("max"))
        names = set(mins) | set(maxs)
        pods = [p for p in st.pods if _meta(p).get("namespace") == ns]
        running: dict[str, int] = {}
        placed: dict[str, int] = {}
        for p in pods:
            req = pod_requests(p)
            if _phase(p) == "Running":
                _add(running, req, names)
            if not _finished(p) and (_node_of(p) or _meta(p).get("uid") in assumed):
                _add(placed, req)
        got = dict(sorted(_amounts((q.get("status") or {}).get("used")).items()))
        want = {r: running.get(r, 0) for r in sorted(names)}
        if got != want:
            out.append(
                Violation("quota-used", f"ElasticQuota {ns}/{_meta(q)['name']}: status.used {got} != {want}")
            )
        for r, bound in sorted(maxs.items()):
            if placed.get(r, 0) > bound:
                out.append(
                    Violation(
                        "quota-max",
                        f"ElasticQuota {ns}/{_meta(q)['name']}: placed pods request {r} {placed[r]} > max {bound}",
                    )
                )
    return out


def check_pdb_status(st: _State) -> list[Violation]:
    out = []
    for pdb in st.pdbs:
        status = pdb.get("status") or {}
        selected = _selected(pdb, st.pods)
        counts = desired_healthy(st.store, pdb, selected)
        if counts is None:
            continue
        expected, desired = counts
        current = len(healthy(pdb, selected))
        want_allowed = current - desired if expected > 0 and current > desired else 0
        got = (status.get("currentHealthy"), status.get("desiredHealthy"), status.get("disruptionsAllowed"))
        if got != (current, desired, want_allowed):
            out.append(
                Violation(
                    "pdb-status",
                    f"PDB {_ref(pdb)}: status (currentHealthy, desiredHealthy, disruptionsAllowed) {got} != "
                    f"({current}, {desired}, {want_allowed})",
                )
            )
    return out


def check_pod_states(st: _State, sim: Simulation) -> list[Violation]:
    out = []
    sched = sim.scheduler
    waiting = set(sched.waiting)
    gated = {qp.pod.uid for qp in sched.queue.pending() if qp.where == "gated"}
    for p in st.pods:
        if _finished(p) or _deleting(p):
            continue
        uid = _meta(p).get("uid")
        status = p.get("status") or {}
        conds = [c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"]
        spec = p.get("spec") or {}
        if _node_of(p):
            if not conds or conds[-1].get("status") != "True":
                out.append(
                    Violation("pod-state", f"{_ref(p)} is bound to {_node_of(p)} without PodScheduled=True")
                )
            if spec.get("schedulingGates"):
                out.append(
                    Violation("pod-state", f"{_ref(p)} is bound to {_node_of(p)} with scheduling gates")
                )
            continue
        if not sched.responsible_for(p):
            continue
        if status.get("nominatedNodeName") or spec.get("schedulingGates") or uid in gated or uid in waiting:
            continue
        if conds and conds[-1].get("status") == "False" and conds[-1].get("reason"):
            continue
        out.append(
            Violation(
                "pod-state", f"{_ref(p)} is pending without a PodScheduled=False reason, nomination or gate"
            )
        )
    return out


def check_cache(st: _State, sim: Simulation) -> list[Violation]:
    out = []
    cache = sim.scheduler.cache
    table = cache.table
    rows = set(table.names[: table.size])
    if rows != set(st.nodes):
        return [Violation("cache", f"NodeTable rows {sorted(rows)} != store nodes {sorted(st.nodes)}")]
    assumed: dict[str, list[str]] = defaultdict(list)
    pods_by_uid = {str(_meta(p).get("uid")): p for p in st.pods}
    for uid, w in sim.scheduler.waiting.items():
        assumed[w.node_name].append(uid)
    for name, node in st.nodes.items():
        i = table.index[name]
        alloc = node_allocatable(node)
        for r in sorted(set(alloc) | {"cpu", "memory", "pods"}):
            col = table.allocatable.get(r)
            have = 0 if col is None else int(col[i])
            if have != alloc.get(r, 0):
                out.append(
                    Violation("cache", f"node {name}: NodeTable allocatable {r} {have} != {alloc.get(r, 0)}")
                )
        if bool(table.unschedulable[i]) != bool((node.get("spec") or {}).get("unschedulable")):
            out.append(
                Violation("cache", f"node {name}: NodeTable unschedulable {bool(table.unschedulable[i])}")
            )
        if dict(table.labels[i]) != (_meta(node).get("labels") or {}):
            out.append(Violation("cache", f"node {name}: NodeTable labels {dict(table.labels[i])}"))
        taints = sorted((t.key, t.value, t.effect) for t in table.taints[i])
        want_taints = sorted(
            (t.get("key"), t.get("value", ""), t.get("effect"))
            for t in (node.get("spec") or {}).get("taints") or ()
        )
        if taints != want_taints:
            out.append(Violation("cache", f"node {name}: NodeTable taints {taints} != {want_taints}"))
        want: dict[str, tuple[dict[str, int], tuple[int, int]]] = {}
        for p in st.on_node.get(name, ()):
            want[str(_meta(p).get("uid"))] = (pod_requests(p), pod_nonzero_requests(p))
        for uid in assumed.get(name, ()):
            waiting = pods_by_uid.get(uid)
            if waiting is not None:
                want[uid] = (pod_requests(waiting), pod_nonzero_requests(waiting))
        for rsv in st.placed_reservations(name):
            rem = st.remainder(rsv)
            want[rsv["metadata"]["uid"]] = (
                {k: v for k, v in rem.items() if v and k != "pods"},
                (rem.get("cpu", 0), rem.get("memory", 0)),
            )
        have_uids = set(table.pods[i])
        if have_uids != set(want):
            extra = sorted(_label(pods_by_uid, st, u) for u in have_uids - set(want))
            missing = sorted(_label(pods_by_uid, st, u) for u in set(want) - have_uids)
            out.append(Violation("cache", f"node {name}: cache holds extra {extra}, lacks {missing}"))
            continue
        requested: dict[str, int] = {}
        nz_cpu = nz_mem = 0
        for req, (c, m) in want.values():
            _add(requested, req)
            nz_cpu += c
            nz_mem += m
        for r in sorted(set(requested) | set(table.requested)):
            have = int(table.requested[r][i]) if r in table.requested else 0
            if have != requested.get(r, 0):
                out.append(
                    Violation(
                        "cache",
                        f"node {name}: NodeTable requested {r} {have} != store's {requested.get(r, 0)}",
                    )
                )
        if (int(table.nonzero_cpu[i]), int(table.nonzero_memory[i])) != (nz_cpu, nz_mem):
            out.append(
                Violation(
                    "cache",
                    f"node {name}: NodeTable non-zero requested {(int(table.nonzero_cpu[i]), int(table.nonzero_memory[i]))} "
                    f"!= {(nz_cpu, nz_mem)}",
                )
            )
        if int(table.pod_count[i]) != len(want):
            out.append(
                Violation(
                    "cache", f"node {name}: NodeTable pod count {int(table.pod_count[i])} != {len(want)}"
                )
            )
    return out


def _label(pods_by_uid: Mapping[str, Obj], st: _State, uid: str) -> str:
    if uid in pods_by_uid:
        return f"pod {_ref(pods_by_uid[uid])}"
    if uid in st.rsv_by_uid:
        return f"reservation {st.rsv_by_uid[uid]['metadata']['name']}"
    return f"uid {uid}"


def check_all(sim: Simulation, monitor: Monitor, *, mode: str) -> list[Violation]:
    """Every invariant on the settled cluster, after the moments the monitor saw."""
    st = _State(sim)
    out = monitor.take()
    out += check_overcommit(st)
    out += check_reservations(st)
    out += check_quotas(st, sim)
    out += check_pdb_status(st)
    out += check_pod_states(st, sim)
    out += check_cache(st, sim)
    return out
