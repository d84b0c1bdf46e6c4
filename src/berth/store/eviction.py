"""The pod eviction subresource (``POST pods/<name>/eviction``) as a function every Berth component calls.

`evict` follows kube-apiserver's ``EvictionREST.Create``:

* terminal (Succeeded/Failed), Pending and already-terminating pods are deleted without consulting budgets;
* a pod matched by no PodDisruptionBudget is deleted; by more than one → InternalError (500);
* a pod that is not Ready is deleted without debit when the budget's ``unhealthyPodEvictionPolicy`` is
  ``AlwaysAllow``, or (``IfHealthyBudget``, the default) when ``currentHealthy >= desiredHealthy > 0``;
* otherwise the budget is checked and debited (``disruptionsAllowed - 1`` and ``disruptedPods[pod] = now``,
  written to the PDB status first, re-read and retried on Conflict as kube does) and the pod is deleted;
  an exhausted budget raises `EvictionBlocked` (429 TooManyRequests) with the cause kube reports.

Before the delete the pod gets the condition ``DisruptionTarget=True`` (reason ``EvictionByEvictionAPI``).
``dry_run`` runs every check and writes nothing.

Berth extensions:

* **Disruption rate limit.** A PDB annotated ``berth.dev/max-disruptions: "N/WINDOW"`` (e.g. ``"1/1h"``)
  allows at most N budget-debiting evictions per WINDOW (a Go duration). The history lives on the PDB itself,
  in the annotation ``berth.dev/disruption-history``: a JSON list of ``{"pod": NAME, "time": RFC3339}``
  written after each debit and pruned to the window on every write (``status.disruptedPods`` cannot serve,
  since the disruption controller drops entries once their pods are gone). Evictions that do not debit the
  budget (terminal, pending or unhealthy pods) are neither limited nor recorded.
* **PreferAvoidPods.** ``evict(..., avoid=True)`` adds the pod's controller to the node's
  ``scheduler.alpha.kubernetes.io/preferAvoidPods`` annotation (kube's ``AvoidPods`` JSON). Entries Berth
  writes carry an ``evictionTime`` and expire after `AVOID_TTL_SECONDS`; expired entries are ignored by the
  NodePreferAvoidPods score plugin and pruned on the next write. Entries without a parseable ``evictionTime``
  (written by hand) never expire.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from berth.api.conditions import is_pod_ready, set_status_condition
from berth.api.contracts import Store
from berth.api.errors import Conflict, Forbidden, InternalError, NotFound, StatusError, TooManyRequests
from berth.api.labels import LabelSelectorError, Selector, compile_label_selector
from berth.api.timestamps import format_time, parse_time
from berth.api.wellknown import parse_duration

__all__ = [
    "ANNOTATION_DISRUPTION_HISTORY",
    "ANNOTATION_MAX_DISRUPTIONS",
    "ANNOTATION_PREFER_AVOID_PODS",
    "AVOID_TTL_SECONDS",
    "DELETION_TIMEOUT_SECONDS",
    "MAX_DISRUPTED_POD_SIZE",
    "NODE_KEY",
    "PDB_KEY",
    "POD_KEY",
    "EvictionBlocked",
    "EvictionTimeout",
    "RateLimit",
    "add_prefer_avoid",
    "evict",
    "is_pod_ready",
    "matching_budgets",
    "parse_rate_limit",
    "pdb_selector",
    "set_disruption_allowed_condition",
]

Obj = dict[str, Any]

POD_KEY = ("", "Pod")
NODE_KEY = ("", "Node")
PDB_KEY = ("policy", "PodDisruptionBudget")

DELETION_TIMEOUT_SECONDS = 120.0
"""How long an entry of status.disruptedPods keeps its pod out of currentHealthy (kube's DeletionTimeout)."""
MAX_DISRUPTED_POD_SIZE = 2000
"""Evictions are refused while status.disruptedPods holds more entries than this (kube's MaxDisruptedPodSize)."""
EVICTIONS_RETRY_STEPS = 20
"""Attempts at the PDB status write before giving up on conflicts (kube's EvictionsRetry.Steps)."""

ANNOTATION_MAX_DISRUPTIONS = "berth.dev/max-disruptions"
ANNOTATION_DISRUPTION_HISTORY = "berth.dev/disruption-history"
ANNOTATION_PREFER_AVOID_PODS = "scheduler.alpha.kubernetes.io/preferAvoidPods"
AVOID_TTL_SECONDS = 3600.0
"""Lifetime of a preferAvoidPods entry written by `evict(avoid=True)` (Berth's choice)."""

MSG_VIOLATES_BUDGET = "Cannot evict pod as it would violate the pod's disruption budget."
MSG_MULTIPLE_BUDGETS = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
)
CAUSE_TYPE = "DisruptionBudget"

CONDITION_DISRUPTION_TARGET = "DisruptionTarget"
REASON_EVICTION_API = "EvictionByEvictionAPI"
MESSAGE_EVICTION_API = "Eviction API: evicting"

CONDITION_DISRUPTION_ALLOWED = "DisruptionAllowed"
REASON_SUFFICIENT_PODS = "SufficientPods"
REASON_INSUFFICIENT_PODS = "InsufficientPods"


class EvictionBlocked(TooManyRequests):
    """429: the eviction would violate a disruption budget; `.causes` lists (type, message) pairs."""

    def __init__(self, message: str, causes: list[tuple[str, str]], *, retry_after_seconds: int = 0) -> None:
        """`causes` are metav1.StatusCause (type, message) pairs, e.g. ("DisruptionBudget", "...")."""
        super().__init__(message, retry_after_seconds=retry_after_seconds)
        self.causes = causes

    def details(self) -> dict[str, Any]:
        """StatusDetails including the causes."""
        out = super().details()
        if self.causes:
            out["causes"] = [{"reason": t, "message": m} for t, m in self.causes]
        return out


class EvictionTimeout(StatusError):
    """504: the PDB status write kept conflicting (kube's NewTimeoutError)."""

    reason = "Timeout"
    code = 504


# ----- small shared helpers -------------------------------------------------------------------------------


def pdb_selector(pdb: Mapping[str, Any]) -> Selector | None:
    """The PDB's compiled spec.selector (None selector → nothing, {} → everything); None when invalid."""
    try:
        return compile_label_selector((pdb.get("spec") or {}).get("selector"))
    except LabelSelectorError:
        return None


def matching_budgets(store: Store, pod: Mapping[str, Any]) -> list[Obj]:
    """The PDBs of the pod's namespace whose selector matches it (an empty or null selector matches nothing)."""
    meta = pod["metadata"]
    labels = meta.get("labels") or {}
    out: list[Obj] = []
    for pdb in store.list(PDB_KEY, meta.get("namespace") or "default")[0]:
        sel = pdb_selector(pdb)
        if sel is None or sel.is_everything() or sel.is_nothing():
            continue
        if sel.matches(labels):
            out.append(pdb)
    return out


def set_disruption_allowed_condition(status: dict[str, Any], now: str) -> None:
    """pdbhelper.UpdateDisruptionAllowedCondition on a private status dict (meta.SetStatusCondition rules)."""
    allowed = int(status.get("disruptionsAllowed") or 0)
    cond_status, reason = (
        ("True", REASON_SUFFICIENT_PODS) if allowed > 0 else ("False", REASON_INSUFFICIENT_PODS)
    )
    set_status_condition(
        status,
        CONDITION_DISRUPTION_ALLOWED,
        cond_status,
        reason,
        "",
        int(status.get("observedGeneration") or 0),
        now,
    )


# ----- rate limit -----------------------------------------------------------------------------------------


class RateLimit:
    """A parsed ``berth.dev/max-disruptions`` value: at most `count` disruptions per `window` seconds."""

    __slots__ = ("count", "text", "window", "window_text")

    def __init__(self, count: int, window: float, text: str, window_text: str) -> None:
        """Build from the parsed parts and the annotation text."""
        self.count = count
        self.window = window
        self.text = text
        self.window_text = window_text


def parse_rate_limit(value: object) -> RateLimit:
    """Parse ``"N/DURATION"`` (N >= 0, DURATION a positive Go duration); raises ValueError naming the value."""
    if isinstance(value, str) and "/" in value:
        count_text, _, window_text = value.partition("/")
        if count_text.isdigit():
            try:
                window = parse_duration(window_text)
            except ValueError:
                window = -1.0
            if window > 0:
                return RateLimit(int(count_text), window, value, window_text)
    raise ValueError(
        f'invalid disruption rate limit "{value}": must be N/DURATION with a positive duration (e.g. "1/1h")'
    )


def _history(pdb: Mapping[str, Any]) -> list[tuple[str, datetime]]:
    raw = ((pdb.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_DISRUPTION_HISTORY)
    if not raw:
        return []
    try:
        items = json.loads(raw)
    except ValueError:
        return []
    out: list[tuple[str, datetime]] = []
    for it in items if isinstance(items, list) else ():
        when = parse_time(it.get("time")) if isinstance(it, Mapping) else None
        if when is not None:
            out.append((str(it.get("pod") or ""), when))
    return out


def _rate_limit_check(pdb: Mapping[str, Any], now: datetime) -> None:
    raw = ((pdb.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_MAX_DISRUPTIONS)
    if raw is None:
        return
    name = pdb["metadata"]["name"]
    try:
        limit = parse_rate_limit(raw)
    except ValueError:
        limit = RateLimit(0, 1.0, str(raw), str(raw))  # unparseable: refuse rather than disrupt unbounded
    since = now - timedelta(seconds=limit.window)
    recent = sorted(t for _, t in _history(pdb) if t > since)
    if len(recent) < limit.count:
        return
    retry = 0
    if recent and limit.count > 0:
        retry = max(1, math.ceil((recent[len(recent) - limit.count] - since).total_seconds()))
    raise EvictionBlocked(
        MSG_VIOLATES_BUDGET,
        [
            (
                CAUSE_TYPE,
                f"The disruption budget {name} allows {limit.count} disruptions per {limit.window_text}",
            )
        ],
        retry_after_seconds=retry,
    )


def _record_history(store: Store, pdb: Mapping[str, Any], pod_name: str, now: datetime) -> None:
    """Append (pod, now) to the PDB's history annotation, pruned to the rate-limit window."""
    for _ in range(EVICTIONS_RETRY_STEPS):
        meta = pdb["metadata"]
        try:
            window = parse_rate_limit((meta.get("annotations") or {}).get(ANNOTATION_MAX_DISRUPTIONS)).window
        except ValueError:
            return
        since = now - timedelta(seconds=window)
        kept = [(p, t) for p, t in _history(pdb) if t > since]
        kept.append((pod_name, now))
        value = json.dumps([{"pod": p, "time": format_time(t)} for p, t in kept], separators=(",", ":"))
        patch = {
            "metadata": {
                "resourceVersion": meta["resourceVersion"],
                "annotations": {ANNOTATION_DISRUPTION_HISTORY: value},
            }
        }
        try:
            store.patch(PDB_KEY, meta["namespace"], meta["name"], patch)
            return
        except Conflict:
            pdb = store.get(PDB_KEY, meta["namespace"], meta["name"])


# ----- PreferAvoidPods ------------------------------------------------------------------------------------


def _controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def _avoid_entries(node: Mapping[str, Any]) -> list[Obj]:
    raw = ((node.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_PREFER_AVOID_PODS)
    if not raw:
        return []
    try:
        doc = json.loads(raw)
    except ValueError:
        return []
    entries = doc.get("preferAvoidPods") if isinstance(doc, Mapping) else None
    return [e for e in entries or () if isinstance(e, dict)]


def add_prefer_avoid(store: Store, pod: Mapping[str, Any], now: datetime) -> None:
    """Put the pod's controller on its node's preferAvoidPods list (pruning expired entries)."""
    ref = _controller_ref(pod)
    node_name = (pod.get("spec") or {}).get("nodeName")
    if ref is None or not node_name:
        return
    signature = {
        "apiVersion": ref.get("apiVersion", ""),
        "kind": ref.get("kind", ""),
        "name": ref.get("name", ""),
        "uid": ref.get("uid", ""),
        "controller": True,
    }
    meta = pod["metadata"]
    entry = {
        "podSignature": {"podController": signature},
        "evictionTime": format_time(now),
        "reason": "Evicted",
        "message": f"pod {meta.get('namespace') or 'default'}/{meta['name']} was evicted from this node",
    }
    for _ in range(EVICTIONS_RETRY_STEPS):
        try:
            node = store.get(NODE_KEY, "", node_name)
        except NotFound:
            return
        kept: list[Obj] = []
        for e in _avoid_entries(node):
            controller = (e.get("podSignature") or {}).get("podController") or {}
            if controller.get("uid") == signature["uid"] and controller.get("kind") == signature["kind"]:
                continue
            when = parse_time(e.get("evictionTime"))
            if when is not None and (now - when).total_seconds() >= AVOID_TTL_SECONDS:
                continue
            kept.append(e)
        kept.append(entry)
        value = json.dumps({"preferAvoidPods": kept}, separators=(",", ":"))
        rv = node["metadata"]["resourceVersion"]
        patch = {"metadata": {"resourceVersion": rv, "annotations": {ANNOTATION_PREFER_AVOID_PODS: value}}}
        try:
            store.patch(NODE_KEY, "", node_name, patch)
            return
        except Conflict:
            continue


# ----- the eviction ---------------------------------------------------------------------------------------


def _default_now(store: Store) -> datetime:
    stamp = store.timestamp()
    parsed = parse_time(stamp)
    if parsed is None:
        raise ValueError(f"the store's timestamp {stamp!r} is not RFC 3339")
    return parsed


def _can_ignore_budget(pod: Mapping[str, Any]) -> bool:
    """canIgnorePDB: terminal or Pending pods, and pods already being deleted."""
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    return phase in ("Succeeded", "Failed", "Pending") or bool(pod["metadata"].get("deletionTimestamp"))


def _still_processing(name: str) -> EvictionBlocked:
    return EvictionBlocked(
        MSG_VIOLATES_BUDGET,
        [(CAUSE_TYPE, f"The disruption budget {name} is still being processed by the server.")],
        retry_after_seconds=10,
    )


def _check_and_decrement(
    store: Store, pdb: Mapping[str, Any], pod_name: str, dry_run: bool, now: datetime
) -> Obj:
    """kube's checkAndDecrement plus Berth's rate limit; returns the PDB as written (or as it would be)."""
    meta = pdb["metadata"]
    name = meta["name"]
    status = pdb.get("status") or {}
    if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        raise _still_processing(name)
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise Forbidden.of("poddisruptionbudget", "policy", name, "pdb disruptions allowed is negative")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_POD_SIZE:
        raise Forbidden.of(
            "poddisruptionbudget",
            "policy",
            name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        )
    if allowed == 0:
        raise EvictionBlocked(
            MSG_VIOLATES_BUDGET,
            [
                (
                    CAUSE_TYPE,
                    f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} healthy pods "
                    f"and has {int(status.get('currentHealthy') or 0)} currently",
                )
            ],
        )
    _rate_limit_check(pdb, now)
    new_status = dict(status)
    new_status["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        set_disruption_allowed_condition(new_status, format_time(now))
    if dry_run:
        return {**pdb, "status": new_status}
    disrupted = dict(status.get("disruptedPods") or {})
    disrupted[pod_name] = format_time(now)
    new_status["disruptedPods"] = disrupted
    return store.update_status({**pdb, "status": new_status})


def _debit(store: Store, pdb: Obj, pod_name: str, dry_run: bool, now: datetime) -> None:
    """Verify-and-decrement with kube's conflict retries (re-reading the PDB after a failed attempt)."""
    meta = pdb["metadata"]
    for attempt in range(EVICTIONS_RETRY_STEPS):
        if attempt:
            pdb = store.get(PDB_KEY, meta["namespace"], meta["name"])
        try:
            written = _check_and_decrement(store, pdb, pod_name, dry_run, now)
        except Conflict:
            continue
        if not dry_run and ANNOTATION_MAX_DISRUPTIONS in (written["metadata"].get("annotations") or {}):
            _record_history(store, written, pod_name, now)
        return
    raise EvictionTimeout(f'couldn\'t update PodDisruptionBudget "{meta["name"]}" due to conflicts')


def _add_condition_and_delete(
    store: Store, pod: Obj, grace_period_seconds: int | None, precondition: bool, now: datetime
) -> Obj:
    """addConditionAndDeletePod: mark DisruptionTarget=True on the latest pod, then delete it."""
    meta = pod["metadata"]
    ns, name = meta.get("namespace") or "default", meta["name"]
    if not precondition:
        pod = store.get(POD_KEY, ns, name)  # kube's getLatestPod: the condition goes on the latest version
    stamp = format_time(now)
    status = dict(pod.get("status") or {})
    conditions = [dict(c) for c in status.get("conditions") or ()]
    for c in conditions:
        if c.get("type") == CONDITION_DISRUPTION_TARGET:
            if c.get("status") != "True":
                c["lastTransitionTime"] = stamp
            c.update(status="True", reason=REASON_EVICTION_API, message=MESSAGE_EVICTION_API)
            break
    else:
        conditions.append(
            {
                "type": CONDITION_DISRUPTION_TARGET,
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": stamp,
                "reason": REASON_EVICTION_API,
                "message": MESSAGE_EVICTION_API,
            }
        )
    status["conditions"] = conditions
    updated = store.update_status({**pod, "status": status})
    rv = updated["metadata"].get("resourceVersion") if precondition else None
    return store.delete(POD_KEY, ns, name, grace_period_seconds=grace_period_seconds, resource_version=rv)


def evict(
    store: Store,
    namespace: str,
    name: str,
    *,
    dry_run: bool = False,
    grace_period_seconds: int | None = None,
    avoid: bool = False,
    now: datetime | None = None,
) -> Obj:
    """Evict pod ``namespace/name`` as the eviction subresource does (see the module docstring).

    Returns the pod as deleted or marked for deletion (with ``dry_run``: the pod as stored, nothing written).
    Raises NotFound, `EvictionBlocked` (429), InternalError (500, several budgets), Forbidden, Conflict or
    `EvictionTimeout`. ``now`` (default: the store's time) stamps disruptedPods, the pod
    condition and preferAvoidPods entries.
    """
    when = now if now is not None else _default_now(store)
    pod = store.get(POD_KEY, namespace, name)
    result = _evict(store, pod, dry_run, grace_period_seconds, when)
    if avoid and not dry_run:
        add_prefer_avoid(store, pod, when)
    return result


def _evict(store: Store, pod: Obj, dry_run: bool, grace: int | None, now: datetime) -> Obj:
    if _can_ignore_budget(pod):
        if dry_run:
            return pod
        return _add_condition_and_delete(store, pod, grace, False, now)
    budgets = matching_budgets(store, pod)
    if len(budgets) > 1:
        raise InternalError(MSG_MULTIPLE_BUDGETS)
    if not budgets:
        return pod if dry_run else _add_condition_and_delete(store, pod, grace, False, now)
    pdb = budgets[0]
    if not is_pod_ready(pod):
        spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
        current, desired = int(status.get("currentHealthy") or 0), int(status.get("desiredHealthy") or 0)
        if spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow" or (current >= desired > 0):
            if dry_run:
                return pod
            try:
                return _add_condition_and_delete(store, pod, grace, True, now)
            except Conflict:
                raise _still_processing(pdb["metadata"]["name"]) from None
    _debit(store, pdb, pod["metadata"]["name"], dry_run, now)
    if dry_run:
        return pod
    return _add_condition_and_delete(store, pod, grace, False, now)
