"""The disruption controller: PodDisruptionBudget status, as kube-controller-manager's ``disruption`` controller.

For every PDB it keeps ``status`` true: ``expectedPods`` and ``desiredHealthy`` from ``minAvailable`` /
``maxUnavailable`` (an int, or a percentage of the owning controllers' scale rounded up: ReplicaSet and
Deployment ``spec.replicas`` via the pods' controller ownerReferences, as kube's getExpectedScale),
``currentHealthy`` (Ready pods not being deleted and not recently evicted), ``disruptionsAllowed``
(``currentHealthy - desiredHealthy``, never below 0, and 0 while no pod is expected), ``disruptedPods``
(entries written by the eviction API, dropped once their pod is being deleted, gone, or older than 2 minutes),
``observedGeneration`` and the ``DisruptionAllowed`` condition (SufficientPods / InsufficientPods, or
SyncFailed with the error when the status cannot be computed, e.g. a pod's controller is unknown).

It is fed store events (`handle_event`) and reconciles each PDB on a clock timer at the current time (bursts
coalesce into one sync); a timer also fires when the next ``disruptedPods`` entry expires. Pods are indexed
per budget from the events, so a sync never scans the whole namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from berth.api.conditions import is_pod_ready, set_status_condition
from berth.api.contracts import Recorder, Store
from berth.api.errors import Conflict, NotFound
from berth.api.labels import Selector
from berth.api.timestamps import format_time, parse_time
from berth.clock import Clock, Timer
from berth.store.eviction import (
    CONDITION_DISRUPTION_ALLOWED,
    DELETION_TIMEOUT_SECONDS,
    PDB_KEY,
    POD_KEY,
    pdb_selector,
    set_disruption_allowed_condition,
)

__all__ = [
    "REASON_SYNC_FAILED",
    "RECONCILE_PRIORITY",
    "BudgetStatus",
    "DisruptionController",
    "go_print_label_selector",
]

RECONCILE_PRIORITY = 10
REASON_SYNC_FAILED = "SyncFailed"
RS_KEY = ("apps", "ReplicaSet")
DEPLOYMENT_KEY = ("apps", "Deployment")
_APPS_GROUPS = ("apps", "extensions")

_Key = tuple[str, str]  # (namespace, name)


class SyncError(Exception):
    """The status of a PDB cannot be computed (the message is what the SyncFailed condition says)."""


class BudgetStatus:
    """The computed numbers of one PDB (before they are written)."""

    __slots__ = ("current_healthy", "desired_healthy", "disrupted", "expected", "recheck_at")

    def __init__(
        self,
        expected: int,
        desired_healthy: int,
        current_healthy: int,
        disrupted: dict[str, str],
        recheck_at: float | None,
    ) -> None:
        """Hold the counts, the kept disruptedPods entries and when to look again (Unix seconds)."""
        self.expected = expected
        self.desired_healthy = desired_healthy
        self.current_healthy = current_healthy
        self.disrupted = disrupted
        self.recheck_at = recheck_at

    @property
    def disruptions_allowed(self) -> int:
        """currentHealthy - desiredHealthy, 0 when negative or when no pod is expected."""
        allowed = self.current_healthy - self.desired_healthy
        return 0 if self.expected <= 0 or allowed <= 0 else allowed


def scaled(value: object, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent rounding up; raises SyncError for a bad value."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        return -(-int(value[:-1]) * total // 100)
    raise SyncError(f"invalid value for IntOrString: invalid type: string is not a percentage: {value!r}")


def go_print_label_selector(sel: Mapping[str, Any] | None) -> str:
    """A metav1.LabelSelector as Go's ``%v`` prints the pointer (its generated String())."""
    if sel is None:
        return "nil"
    labels = sel.get("matchLabels") or {}
    exprs = sel.get("matchExpressions") or []
    ml = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    me = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in exprs
    )
    return f"&LabelSelector{{MatchLabels:map[string]string{{{ml}}},MatchExpressions:[]LabelSelectorRequirement{{{me}}},}}"


def _controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def _group(ref: Mapping[str, Any]) -> str:
    api_version = str(ref.get("apiVersion") or "")
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def _fingerprint(pod: Mapping[str, Any]) -> tuple[object, ...]:
    """What of a pod the status depends on."""
    meta = pod["metadata"]
    ref = _controller_of(pod)
    return (
        meta.get("uid"),
        bool(meta.get("deletionTimestamp")),
        is_pod_ready(pod),
        None if ref is None else (ref.get("kind"), ref.get("uid"), ref.get("name"), ref.get("apiVersion")),
    )


class _Budget:
    """A PDB as the controller indexes it."""

    __slots__ = ("members", "raw_selector", "selector")

    def __init__(self, raw_selector: object, selector: Selector | None) -> None:
        self.raw_selector = raw_selector
        self.selector = selector
        self.members: dict[str, Mapping[str, Any]] = {}  # pod name -> latest pod


class DisruptionController:
    """Reconciles PodDisruptionBudget status from PDB, Pod, ReplicaSet and Deployment events."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        recorder: Recorder | None = None,
        priority: int = RECONCILE_PRIORITY,
    ) -> None:
        """Create the controller over `store`; Events (NoPods, UnmanagedPods, ...) go to `recorder` if given.

        PDBs and pods already in the store are indexed and every PDB is queued once.
        """
        self.store = store
        self.clock = clock
        self.recorder = recorder
        self.priority = priority
        epoch = parse_time(store.timestamp(0.0))
        self._epoch = epoch.timestamp() if epoch is not None else 0.0
        self._budgets: dict[str, dict[str, _Budget]] = {}  # namespace -> name -> budget
        self._pod_budgets: dict[_Key, set[str]] = {}  # pod -> names of the budgets it belongs to
        self._prints: dict[_Key, tuple[object, ...]] = {}
        self._replicas: dict[str, object] = {}  # controller uid -> last seen spec.replicas
        self._pending: dict[_Key, Timer] = {}
        self._recheck: dict[_Key, Timer] = {}
        for pdb in store.list(PDB_KEY)[0]:
            self._on_budget("ADDED", pdb)
        for pod in store.list(POD_KEY)[0]:
            self.handle_pod("ADDED", pod)

    # ----- time -------------------------------------------------------------------------------
    def _now(self) -> float:
        return self._epoch + self.clock.now()

    def _stamp(self, at: float) -> str:
        return format_time(datetime.fromtimestamp(at, UTC))

    # ----- events -----------------------------------------------------------------------------
    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to an ADDED/MODIFIED/DELETED event of a Pod, PodDisruptionBudget, ReplicaSet or Deployment."""
        kind = obj.get("kind")
        if kind == "Pod":
            self.handle_pod(type_, obj)
        elif kind == "PodDisruptionBudget":
            self._on_budget(type_, obj)
        elif kind in ("ReplicaSet", "Deployment", "StatefulSet", "ReplicationController"):
            self._on_scale(type_, obj)

    def _on_budget(self, type_: str, pdb: Mapping[str, Any]) -> None:
        meta = pdb["metadata"]
        ns, name = meta.get("namespace") or "default", meta["name"]
        key = (ns, name)
        budgets = self._budgets.setdefault(ns, {})
        if type_ == "DELETED":
            budget = budgets.pop(name, None)
            if budget is not None:
                for pod_name in budget.members:
                    self._pod_budgets.get((ns, pod_name), set()).discard(name)
            for timers in (self._pending, self._recheck):
                timer = timers.pop(key, None)
                if timer is not None:
                    timer.cancel()
            return
        raw = (pdb.get("spec") or {}).get("selector")
        budget = budgets.get(name)
        if budget is None or budget.raw_selector != raw:
            if budget is not None:
                for pod_name in budget.members:
                    self._pod_budgets.get((ns, pod_name), set()).discard(name)
            budget = budgets[name] = _Budget(raw, pdb_selector(pdb))
            if budget.selector is not None and not budget.selector.is_nothing():
                for pod in self.store.list(POD_KEY, ns, label_selector=budget.selector)[0]:
                    budget.members[pod["metadata"]["name"]] = pod
                    self._pod_budgets.setdefault((ns, pod["metadata"]["name"]), set()).add(name)
        self._enqueue(key)

    def handle_pod(self, type_: str, pod: Mapping[str, Any]) -> None:
        """React to a Pod event: the budgets that select it, now or before, are synced when it matters."""
        meta = pod["metadata"]
        ns = meta.get("namespace") or "default"
        budgets = self._budgets.get(ns)
        if not budgets and not self._pod_budgets:
            return  # no budget selects a pod now or did before (the common case: no budgets at all)
        name = meta["name"]
        key = (ns, name)
        budgets = budgets or {}
        if not budgets and key not in self._pod_budgets:
            return  # no budget selects it now or did before (the common case: a namespace without budgets)
        old = self._pod_budgets.get(key) or set()
        if type_ == "DELETED":
            self._pod_budgets.pop(key, None)
            self._prints.pop(key, None)
            for b in sorted(old):
                budget = budgets.get(b)
                if budget is not None:
                    budget.members.pop(name, None)
                self._enqueue((ns, b))
            return
        labels = meta.get("labels") or {}
        new = {
            b
            for b, budget in budgets.items()
            if budget.selector is not None and budget.selector.matches(labels)
        }
        if not new and not old:
            return
        fingerprint = _fingerprint(pod)
        changed = self._prints.get(key) != fingerprint
        self._prints[key] = fingerprint
        # sorted: the budgets' syncs (their writes and events) must not follow the string-hash order of a set
        for b in sorted(old - new):
            budgets[b].members.pop(name, None)
            self._enqueue((ns, b))
        for b in sorted(new):
            budgets[b].members[name] = pod
            if changed or b not in old:
                self._enqueue((ns, b))
        if new:
            self._pod_budgets[key] = new
        else:
            self._pod_budgets.pop(key, None)
            self._prints.pop(key, None)

    def _on_scale(self, type_: str, obj: Mapping[str, Any]) -> None:
        meta = obj["metadata"]
        uid = meta.get("uid") or ""
        replicas = None if type_ == "DELETED" else (obj.get("spec") or {}).get("replicas", 1)
        if type_ == "DELETED":
            self._replicas.pop(uid, None)
        elif self._replicas.get(uid, ()) == replicas:
            return
        else:
            self._replicas[uid] = replicas
        ns = meta.get("namespace") or "default"
        for b in self._budgets.get(ns) or {}:
            self._enqueue((ns, b))

    # ----- queueing ---------------------------------------------------------------------------
    def _enqueue(self, key: _Key) -> None:
        if key in self._pending:
            return
        self._pending[key] = self.clock.call_at(self.clock.now(), lambda: self._run(key), self.priority)

    def _enqueue_at(self, key: _Key, when: float) -> None:
        """Sync `key` at Unix time `when` (the earliest requested time wins)."""
        at = when - self._epoch
        timer = self._recheck.get(key)
        if timer is not None and timer.active:
            if timer.when <= at:
                return
            timer.cancel()

        def fire() -> None:
            self._recheck.pop(key, None)
            self._enqueue(key)

        self._recheck[key] = self.clock.call_at(at, fire, self.priority)

    def _run(self, key: _Key) -> None:
        self._pending.pop(key, None)
        self.sync(*key)

    def pending(self) -> int:
        """Number of syncs waiting to run now."""
        return len(self._pending)

    # ----- reconcile --------------------------------------------------------------------------
    def _event(self, obj: Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        if self.recorder is not None:
            self.recorder.event(obj, type_, reason, message)

    def sync(self, namespace: str, name: str) -> None:
        """Recompute and write the status of PDB ``namespace/name`` (kube's sync/trySync/failSafe)."""
        try:
            pdb = self.store.get(PDB_KEY, namespace, name)
        except NotFound:
            return
        budget = (self._budgets.get(namespace) or {}).get(name)
        pods = list(budget.members.values()) if budget is not None else []
        try:
            if budget is None or budget.selector is None:
                raise SyncError(
                    f"invalid selector {go_print_label_selector((pdb.get('spec') or {}).get('selector'))}"
                )
            if not pods:
                self._event(pdb, "Normal", "NoPods", "No matching pods found")
            try:
                computed = self.compute(pdb, pods, self._now())
            except SyncError as e:
                self._event(
                    pdb,
                    "Warning",
                    "CalculateExpectedPodCountFailed",
                    f"Failed to calculate the number of expected pods: {e}",
                )
                raise
            self._write_status(pdb, computed)
        except Conflict:
            self._enqueue((namespace, name))
            return
        except SyncError as e:
            self._fail_safe(pdb, str(e))
            return
        if computed.recheck_at is not None:
            self._enqueue_at((namespace, name), computed.recheck_at)

    def compute(self, pdb: Mapping[str, Any], pods: list[Mapping[str, Any]], now: float) -> BudgetStatus:
        """The status numbers of `pdb` over its `pods` at Unix time `now` (raises SyncError)."""
        expected, desired, unmanaged = self._expected_pod_count(pdb, pods)
        if unmanaged:
            self._event(
                pdb,
                "Warning",
                "UnmanagedPods",
                "Pods selected by this PodDisruptionBudget (selector: "
                f"{go_print_label_selector((pdb.get('spec') or {}).get('selector'))}) were found to be unmanaged. "
                "As a result, the status of the PDB cannot be calculated correctly, which may result in undefined "
                'behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an '
                "integer value.",
            )
        disrupted, recheck = self._disrupted_pods(pdb, pods, now)
        current = 0
        for pod in pods:
            meta = pod["metadata"]
            if meta.get("deletionTimestamp"):
                continue
            since = disrupted.get(meta["name"])
            if since is not None:
                when = parse_time(since)
                if when is not None and when.timestamp() + DELETION_TIMEOUT_SECONDS > now:
                    continue
            if is_pod_ready(pod):
                current += 1
        return BudgetStatus(expected, desired, current, disrupted, recheck)

    def _expected_pod_count(
        self, pdb: Mapping[str, Any], pods: list[Mapping[str, Any]]
    ) -> tuple[int, int, list[str]]:
        spec = pdb.get("spec") or {}
        max_unavailable, min_available = spec.get("maxUnavailable"), spec.get("minAvailable")
        if max_unavailable is not None:
            expected, unmanaged = self._expected_scale(pods)
            return expected, max(0, expected - scaled(max_unavailable, expected)), unmanaged
        if min_available is not None:
            if isinstance(min_available, int):
                return len(pods), min_available, []
            expected, unmanaged = self._expected_scale(pods)
            return expected, scaled(min_available, expected), unmanaged
        return 0, 0, []

    def _expected_scale(self, pods: list[Mapping[str, Any]]) -> tuple[int, list[str]]:
        """getExpectedScale: the sum of the scales of the pods' controllers, and the unmanaged pods."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = _controller_of(pod)
            if ref is None:
                unmanaged.append(pod["metadata"]["name"])
                continue
            if ref.get("uid") in scales:
                continue
            found = self._find_controller(ref, pod["metadata"].get("namespace") or "default")
            if found is None:
                raise SyncError(f'found no controllers for pod "{pod["metadata"]["name"]}"')
            scales[found[0]] = found[1]
        return sum(scales.values()), unmanaged

    def _find_controller(self, ref: Mapping[str, Any], ns: str) -> tuple[str, int] | None:
        """kube's finders for the kinds Berth has: Deployment (through its ReplicaSet), ReplicaSet, StatefulSet,
        ReplicationController."""
        direct = {
            ("StatefulSet", True): ("apps", "StatefulSet"),
            ("ReplicationController", False): ("", "ReplicationController"),
        }
        key = direct.get((str(ref.get("kind")), _group(ref) in _APPS_GROUPS))
        if key is not None and (key[0] == "apps" or _group(ref) == ""):
            try:
                owner_obj = self.store.get(key, ns, str(ref.get("name") or ""))
            except NotFound:
                return None
            if owner_obj["metadata"].get("uid") != ref.get("uid"):
                return None
            return str(owner_obj["metadata"]["uid"]), int((owner_obj.get("spec") or {}).get("replicas", 1))
        if ref.get("kind") != "ReplicaSet" or _group(ref) not in _APPS_GROUPS:
            return None
        try:
            rs = self.store.get(RS_KEY, ns, str(ref.get("name") or ""))
        except NotFound:
            return None
        if rs["metadata"].get("uid") != ref.get("uid"):
            return None
        owner = _controller_of(rs)
        if owner is not None and owner.get("kind") == "Deployment":
            if _group(owner) not in _APPS_GROUPS:
                return None
            try:
                d = self.store.get(DEPLOYMENT_KEY, ns, str(owner.get("name") or ""))
            except NotFound:
                return None
            if d["metadata"].get("uid") != owner.get("uid"):
                return None
            return str(d["metadata"]["uid"]), int((d.get("spec") or {}).get("replicas", 1))
        return str(rs["metadata"]["uid"]), int((rs.get("spec") or {}).get("replicas", 1))

    def _disrupted_pods(
        self, pdb: Mapping[str, Any], pods: list[Mapping[str, Any]], now: float
    ) -> tuple[dict[str, str], float | None]:
        """buildDisruptedPodMap: the entries still pending and the time the next one expires."""
        recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
        result: dict[str, str] = {}
        recheck: float | None = None
        if not recorded:
            return result, recheck
        meta = pdb["metadata"]
        for pod in pods:
            pmeta = pod["metadata"]
            if pmeta.get("deletionTimestamp"):
                continue
            stamp = recorded.get(pmeta["name"])
            if stamp is None:
                continue
            when = parse_time(stamp)
            expected_deletion = (when.timestamp() if when is not None else 0.0) + DELETION_TIMEOUT_SECONDS
            if expected_deletion <= now:  # kube: Before(now); at the instant itself virtual time stands still
                ns = meta.get("namespace") or "default"
                # kube prints the PDB's namespace twice here
                self._event(
                    pod,
                    "Warning",
                    "NotDeleted",
                    f"Pod was expected by PDB {ns}/{ns} to be deleted but it wasn't",
                )
            else:
                if recheck is None or expected_deletion < recheck:
                    recheck = expected_deletion
                result[pmeta["name"]] = stamp
        return result, recheck

    def _write_status(self, pdb: Mapping[str, Any], c: BudgetStatus) -> None:
        """updatePdbStatus: write when anything differs (or the condition is stale)."""
        status = pdb.get("status") or {}
        generation = int(pdb["metadata"].get("generation") or 0)
        allowed = c.disruptions_allowed
        if (
            status.get("currentHealthy") == c.current_healthy
            and status.get("desiredHealthy") == c.desired_healthy
            and status.get("expectedPods") == c.expected
            and status.get("disruptionsAllowed") == allowed
            and (status.get("disruptedPods") or {}) == c.disrupted
            and int(status.get("observedGeneration") or 0) == generation
            and _condition_up_to_date(status, allowed)
        ):
            return
        new: dict[str, Any] = {}
        if generation:
            new["observedGeneration"] = generation
        if c.disrupted:
            new["disruptedPods"] = c.disrupted
        new["disruptionsAllowed"] = allowed
        new["currentHealthy"] = c.current_healthy
        new["desiredHealthy"] = c.desired_healthy
        new["expectedPods"] = c.expected
        if status.get("conditions"):
            new["conditions"] = status["conditions"]
        set_disruption_allowed_condition(new, self._stamp(self._now()))
        self.store.update_status({**pdb, "status": new})

    def _fail_safe(self, pdb: Mapping[str, Any], message: str) -> None:
        """failSafe: disruptionsAllowed 0 and DisruptionAllowed=False/SyncFailed with the error."""
        new = dict(pdb.get("status") or {})
        new["disruptionsAllowed"] = 0
        set_status_condition(
            new,
            CONDITION_DISRUPTION_ALLOWED,
            "False",
            REASON_SYNC_FAILED,
            message,
            int(new.get("observedGeneration") or 0),
            self._stamp(self._now()),
        )
        try:
            self.store.update_status({**pdb, "status": new})
        except Conflict:
            self._enqueue((pdb["metadata"].get("namespace") or "default", pdb["metadata"]["name"]))


def _condition_up_to_date(status: Mapping[str, Any], allowed: int) -> bool:
    """pdbhelper.ConditionsAreUpToDate (the generation check is done by the caller)."""
    for c in status.get("conditions") or ():
        if c.get("type") == CONDITION_DISRUPTION_ALLOWED:
            if allowed > 0:
                return bool(c.get("status") == "True" and c.get("reason") == "SufficientPods")
            return bool(c.get("status") == "False" and c.get("reason") == "InsufficientPods")
    return False
