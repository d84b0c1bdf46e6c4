"""The ElasticQuota status controller (scheduler-plugins' elasticquota controller).

It keeps every ElasticQuota's ``status.used`` equal to the summed requests of the Running pods of its
namespace, for the resource names its spec.min and spec.max list (a listed resource no pod uses is "0").
Running totals are kept per namespace, so a pod event costs one small comparison and, when the value
changed, one status write. In a namespace that has never had a quota the Running pods are only remembered; their
requests are summed when the first quota there appears.

When no scheduler profile enables CapacityScheduling nothing enforces a quota's min and max: told so
(`warn_unenforced`), the controller records one Warning Event ``QuotaNotEnforced`` on each quota, naming the
profiles (Berth's addition for simulate and serve; once per quota, not again after a restart).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from berth.api.contracts import Recorder, Store
from berth.api.elasticquota import ELASTIC_QUOTA_GROUPS
from berth.api.errors import Conflict, NotFound
from berth.api.quantity import format_resource
from berth.api.resources import pod_requests
from berth.clock import Clock

__all__ = ["UNENFORCED_REASON", "ElasticQuotaController", "unenforced_message", "used_status"]

POD_KEY = ("", "Pod")
EVENT_KEY = ("", "Event")
UNENFORCED_REASON = "QuotaNotEnforced"
COMPONENT = "elasticquota-controller"


def unenforced_message(profiles: Sequence[str]) -> str:
    """The Warning's message for a quota when none of the scheduler `profiles` enables CapacityScheduling."""
    names = ", ".join(f'"{p}"' for p in profiles)
    which = "profile" if len(profiles) == 1 else "profiles"
    return (
        f"CapacityScheduling is not enabled in scheduler {which} {names}: "
        "this ElasticQuota's min and max are not enforced"
    )


def used_status(names: set[str], used: Mapping[str, int]) -> dict[str, str]:
    """status.used for the resource ``names``: the amounts of ``used`` formatted, "0" when absent."""
    return {r: format_resource(r, used.get(r, 0)) for r in sorted(names)}


def _names(obj: Mapping[str, Any]) -> set[str]:
    spec = obj.get("spec") or {}
    out: set[str] = set()
    for field in ("min", "max"):
        value = spec.get(field)
        if isinstance(value, Mapping):
            out.update(str(k) for k in value)
    return out


class ElasticQuotaController:
    """Writes status.used of ElasticQuotas from the Running pods of their namespaces."""

    def __init__(self, store: Store, clock: Clock) -> None:
        """Index the pods and quotas already in ``store`` and bring every quota's status up to date."""
        self.store = store
        self.clock = clock
        self._running: dict[str, dict[str, dict[str, int]]] = {}  # namespace -> uid -> requests
        self._used: dict[str, dict[str, int]] = {}  # namespace -> summed requests of running pods
        # namespaces never quota'd: uid -> the running pod's spec, as it was when it started running (all that
        # pod_requests reads; summed lazily)
        self._uncounted: dict[str, dict[str, Any]] = {}
        self._counted: set[str] = set()  # namespaces whose totals are kept (a quota was seen there)
        self._quotas: dict[str, dict[tuple[str, str], set[str]]] = {}  # ns -> (group, name) -> names
        self._unenforced: tuple[Recorder, str] | None = None  # where to warn, and the message
        self._warned: set[str] = set()  # uids of the quotas warned about
        for pod in store.list(POD_KEY)[0]:
            self._on_pod("ADDED", pod)
        for group in ELASTIC_QUOTA_GROUPS:
            try:
                quotas = store.list((group, "ElasticQuota"))[0]
            except (KeyError, LookupError):
                continue
            for q in quotas:
                self._on_quota("ADDED", q)

    def warn_unenforced(self, recorder: Recorder, profiles: Sequence[str]) -> None:
        """From now on, record through `recorder` one Warning per quota seen: none of the scheduler `profiles`
        (their names) enforces quotas."""
        self._unenforced = (recorder, unenforced_message(profiles))

    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to a Pod or ElasticQuota event (other kinds are ignored)."""
        kind = obj.get("kind")
        if kind == "Pod":
            self.handle_pod(type_, obj)
        elif kind == "ElasticQuota":
            self._on_quota(type_, obj)

    def handle_pod(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to a Pod event: the status of its namespace's quotas follows its running requests."""
        ns = self._on_pod(type_, obj)
        if ns is not None:
            self._sync_namespace(ns)

    def used(self, namespace: str) -> dict[str, int]:
        """The summed requests of the Running pods of ``namespace``."""
        self._count(namespace)
        return dict(self._used.get(namespace, {}))

    def _count(self, ns: str) -> None:
        """Keep the totals of ``ns`` from now on, summing the requests of the pods remembered so far."""
        if ns in self._counted:
            return
        self._counted.add(ns)
        pods = self._uncounted.pop(ns, None)
        if not pods:
            return
        running = self._running.setdefault(ns, {})
        used = self._used.setdefault(ns, {})
        for uid, spec in pods.items():
            requests = running[uid] = pod_requests({"spec": spec})
            for r, v in requests.items():
                used[r] = used.get(r, 0) + v

    # ----- bookkeeping ---------------------------------------------------------------------------
    def _on_pod(self, type_: str, pod: Mapping[str, Any]) -> str | None:
        """Update the running index; the namespace when its totals changed."""
        meta = pod.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        ns = str(meta.get("namespace") or "default")
        running = type_ != "DELETED" and (pod.get("status") or {}).get("phase") == "Running"
        if ns not in self._counted:
            waiting = self._uncounted.get(ns)
            if running:
                if waiting is None:
                    self._uncounted[ns] = {uid: pod.get("spec")}
                elif uid not in waiting:  # the version that started running, as a counted pod's
                    waiting[uid] = pod.get("spec")
            elif waiting is not None and waiting.pop(uid, None) is not None and not waiting:
                del self._uncounted[ns]
            return None
        pods = self._running.get(ns)
        known = pods is not None and uid in pods
        if running == known:
            return None
        used = self._used.setdefault(ns, {})
        if running:
            requests = pod_requests(pod)
            self._running.setdefault(ns, {})[uid] = requests
            for r, v in requests.items():
                used[r] = used.get(r, 0) + v
        else:
            assert pods is not None
            for r, v in pods.pop(uid).items():
                used[r] = used.get(r, 0) - v
                if used[r] == 0:
                    del used[r]
        return ns if ns in self._quotas else None

    def _on_quota(self, type_: str, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        ns = str(meta.get("namespace") or "default")
        group = str(obj.get("apiVersion") or "").rsplit("/", 1)[0]
        key = (group, str(meta.get("name") or ""))
        if self._unenforced is not None:
            self._warn(type_, obj)
        if type_ == "DELETED":
            quotas = self._quotas.get(ns)
            if quotas is not None:
                quotas.pop(key, None)
                if not quotas:
                    del self._quotas[ns]
            return
        names = _names(obj)
        self._count(ns)
        self._quotas.setdefault(ns, {})[key] = names
        self._sync(ns, key, names, obj)

    def _warn(self, type_: str, obj: Mapping[str, Any]) -> None:
        """The one Warning about a quota nothing enforces (not again for a quota warned about before)."""
        assert self._unenforced is not None
        meta = obj.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        if type_ == "DELETED":
            self._warned.discard(uid)
            return
        if uid in self._warned:
            return
        self._warned.add(uid)
        ns = str(meta.get("namespace") or "default")
        selector = f"involvedObject.uid={uid},reason={UNENFORCED_REASON}"
        if self.store.list(EVENT_KEY, ns, field_selector=selector)[0]:
            return
        recorder, message = self._unenforced
        recorder.event(obj, "Warning", UNENFORCED_REASON, message, component=COMPONENT)

    # ----- writing status ------------------------------------------------------------------------
    def _sync_namespace(self, ns: str) -> None:
        for key, names in list(self._quotas.get(ns, {}).items()):
            self._sync(ns, key, names, None)

    def _sync(self, ns: str, key: tuple[str, str], names: set[str], obj: Mapping[str, Any] | None) -> None:
        want = used_status(names, self._used.get(ns, {}))
        group, name = key
        store_key = (group, "ElasticQuota")
        try:
            current = obj if obj is not None else self.store.get(store_key, ns, name)
            have = (current.get("status") or {}).get("used")
            if have == want:
                return
            body: dict[str, Any] = dict(want)
            if isinstance(have, Mapping):
                body.update({k: None for k in have if k not in want})
            self._patch(store_key, ns, name, body)
        except NotFound:
            return

    def _patch(self, store_key: tuple[str, str], ns: str, name: str, used: dict[str, Any]) -> None:
        try:
            self.store.patch(store_key, ns, name, {"status": {"used": used}}, subresource="status")
        except Conflict:
            with contextlib.suppress(NotFound, Conflict):
                self.store.patch(store_key, ns, name, {"status": {"used": used}}, subresource="status")
