"""The ReplicaSet controller: keep ``spec.replicas`` active pods from the template, and report status.

As kube-controller-manager's: active pods (not terminal, not being deleted) are counted, so a deleted,
evicted or finished pod is replaced; orphans matching the selector are adopted and owned pods that no longer
match are released; at most 500 pods are created or deleted per sync; scale-down picks pods in kube's rank
order (see `ranking`). Events: SuccessfulCreate/SuccessfulDelete, FailedCreate/FailedDelete on errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.conditions import is_pod_ready
from berth.api.errors import NotFound, StatusError
from berth.api.labels import LabelSelectorError, Selector, compile_label_selector, selector_from_set
from berth.controllers.workloads.common import (
    BURST_REPLICAS,
    POD_KEY,
    RS_KEY,
    controller_of,
    controller_ref,
    int_field,
    is_pod_active,
    ready_since,
    set_controller,
)
from berth.controllers.workloads.ranking import pods_to_delete
from berth.controllers.workloads.syncbase import SyncController

__all__ = ["ReplicaSetController", "pod_from_template"]

Obj = dict[str, Any]
"""(namespace, name, delay seconds) → sync that ReplicaSet again after the delay."""


def pod_from_template(rs: Mapping[str, Any]) -> Obj:
    """controller.GetPodFromTemplate: a new pod (generateName ``<rs>-``) from the ReplicaSet's template."""
    meta = rs["metadata"]
    template = (rs.get("spec") or {}).get("template") or {}
    tmeta = template.get("metadata") or {}
    pmeta: Obj = {"generateName": f"{meta['name']}-", "namespace": meta.get("namespace", "default")}
    for field in ("labels", "annotations", "finalizers"):
        if tmeta.get(field):
            pmeta[field] = tmeta[field]
    pmeta["ownerReferences"] = [controller_ref(rs)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pmeta, "spec": template.get("spec") or {}}


def is_pod_available(pod: Mapping[str, Any], min_ready_seconds: int, now: float) -> bool:
    """podutil.IsPodAvailable: Ready for at least minReadySeconds (`now`: Unix seconds).

    kube asks for "strictly longer"; a virtual-time sync lands at the exact instant the period ends, where
    kube's would run a moment later, so the end of the period counts here.
    """
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds == 0:
        return True
    since = ready_since(pod)
    return since is not None and since + min_ready_seconds <= now


class ReplicaSetController(SyncController):
    """Reconciles ReplicaSets against the pods they own."""

    # ----- the sync ---------------------------------------------------------------------------
    def sync(self, namespace: str, name: str) -> None:
        """Bring one ReplicaSet's pods to ``spec.replicas`` and write its status."""
        try:
            rs = self.store.get(RS_KEY, namespace, name)
        except NotFound:
            self._forget(namespace, name)
            return
        spec = rs.get("spec") or {}
        try:
            selector = compile_label_selector(spec.get("selector"))
        except LabelSelectorError:
            return  # kube: "error converting pod selector to selector", nothing to do until it is fixed
        deleting = bool(rs["metadata"].get("deletionTimestamp"))
        active = self._claim(rs, selector, deleting)
        error: tuple[str, str] | None = None
        if not deleting:
            error = self._manage(rs, active)
        self._write_status(rs, active, error)
        if error is not None:
            self._retry_later(namespace, name)
        else:
            self._forget(namespace, name)

    def _claim(self, rs: Mapping[str, Any], selector: Selector, deleting: bool) -> list[Mapping[str, Any]]:
        """ClaimPods over active pods: keep owned+matching, release owned+not matching, adopt orphans."""
        meta = rs["metadata"]
        uid = meta["uid"]
        active: list[Mapping[str, Any]] = []
        for pod in self.pods.owned_by(uid):
            if not is_pod_active(pod):
                continue
            if selector.matches(pod["metadata"].get("labels") or {}):
                active.append(pod)
            elif not deleting:
                set_controller(self.store, pod, uid, None)
        if deleting or selector.is_everything():
            return active
        for pod in self.pods.orphans(meta.get("namespace", "")):
            if is_pod_active(pod) and selector.matches(pod["metadata"].get("labels") or {}):
                adopted = set_controller(self.store, pod, uid, controller_ref(rs))
                if adopted is not None:
                    active.append(adopted)
        return active

    def _manage(self, rs: Mapping[str, Any], active: list[Mapping[str, Any]]) -> tuple[str, str] | None:
        """Create or delete pods; returns (reason, message) of the first failure, or None."""
        replicas = int_field(rs.get("spec") or {}, "replicas", 1)
        diff = len(active) - replicas
        if diff < 0:
            pod = pod_from_template(rs)
            for _ in range(min(-diff, BURST_REPLICAS)):
                try:
                    created = self.store.create(pod)
                except StatusError as e:
                    self.recorder.event(rs, "Warning", "FailedCreate", f"Error creating: {e}")
                    return "FailedCreate", str(e)
                self.recorder.event(
                    rs, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}"
                )
        elif diff > 0:
            victims = pods_to_delete(active, self._related(rs), min(diff, BURST_REPLICAS), self._now())
            for victim in victims:
                meta = victim["metadata"]
                try:
                    self.store.delete(POD_KEY, meta.get("namespace", ""), meta["name"])
                except NotFound:
                    continue
                except StatusError as e:
                    self.recorder.event(rs, "Warning", "FailedDelete", f"Error deleting: {e}")
                    return "FailedDelete", str(e)
                self.recorder.event(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {meta['name']}")
        return None

    def _related(self, rs: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """Pods of every ReplicaSet with the same controller as `rs` (its own pods when it has none)."""
        owner = controller_of(rs)
        if owner is None:
            return self.pods.owned_by(rs["metadata"]["uid"])
        items, _ = self.store.list(RS_KEY, rs["metadata"].get("namespace", ""))
        related: list[Mapping[str, Any]] = []
        for other in items:
            ref = controller_of(other)
            if ref is not None and ref.get("uid") == owner.get("uid"):
                related.extend(self.pods.owned_by(other["metadata"]["uid"]))
        return related

    # ----- status -----------------------------------------------------------------------------
    def _write_status(
        self, rs: Mapping[str, Any], active: list[Mapping[str, Any]], error: tuple[str, str] | None
    ) -> None:
        spec = rs.get("spec") or {}
        min_ready = int_field(spec, "minReadySeconds", 0)
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        fully = selector_from_set(template_labels)
        now = self._now()
        labeled = ready = available = 0
        for pod in active:
            if fully.matches(pod["metadata"].get("labels") or {}):
                labeled += 1
            if is_pod_ready(pod):
                ready += 1
                if is_pod_available(pod, min_ready, now):
                    available += 1
        old: Mapping[str, Any] = rs.get("status") or {}
        conditions = [dict(c) for c in old.get("conditions") or ()]
        failure = next((c for c in conditions if c.get("type") == "ReplicaFailure"), None)
        if error is not None and failure is None:
            conditions.append(
                {
                    "type": "ReplicaFailure",
                    "status": "True",
                    "lastTransitionTime": self.store.timestamp(),
                    "reason": error[0],
                    "message": error[1],
                }
            )
        elif error is None and failure is not None:
            conditions.remove(failure)
        status: Obj = {"replicas": len(active)}
        for field, value in (
            ("fullyLabeledReplicas", labeled),
            ("readyReplicas", ready),
            ("availableReplicas", available),
            ("observedGeneration", rs["metadata"].get("generation", 0)),
        ):
            if value:
                status[field] = value
        if conditions:
            status["conditions"] = conditions
        if status != old:
            try:
                self.store.update_status({**rs, "status": status})
            except StatusError:
                return
        replicas = int_field(spec, "replicas", 1)
        if error is None and min_ready > 0 and ready == replicas and available != replicas:
            meta = rs["metadata"]
            self._requeue(meta.get("namespace", ""), meta["name"], float(min_ready))
