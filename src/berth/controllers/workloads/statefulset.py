"""The StatefulSet controller, as kube-controller-manager's (``pkg/controller/statefulset``).

Pods are named ``<set>-<ordinal>`` for ordinals ``spec.ordinals.start`` up to ``start + replicas - 1``, carry
the template's labels plus ``controller-revision-hash`` (``<set>-<hash of the template>``),
``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index``, hostname = pod name and subdomain
= ``spec.serviceName``, and the set as controlling owner. Each volumeClaimTemplate gives a claim
``<template>-<set>-<ordinal>`` (created when missing) mounted as the template's volume.

``podManagementPolicy: OrderedReady`` (the default) creates the pods one at a time in ordinal order, each once
every lower one is Running and Ready, and on scale-down deletes the highest ordinal first, one at a time, only
while the others are healthy; ``Parallel`` creates and deletes without waiting. Failed pods are deleted and
made again. ``updateStrategy: RollingUpdate`` (the default) replaces pods of an old template from the highest
ordinal down to ``partition``, one at a time, each once the others are healthy; ``OnDelete`` waits for the
user to delete them. Events as kube's: ``SuccessfulCreate`` "create Pod web-0 in StatefulSet web successful",
``SuccessfulDelete``, ``FailedCreate``.

Each template the set has had is recorded as a ControllerRevision ``<set>-<hash>`` (kube's history; older ones
are not pruned to ``revisionHistoryLimit``). Orphans named ``<set>-<ordinal>`` that match the selector are
adopted. Not done: ``maxUnavailable`` > 1, the claims' retention policy.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from berth.api.conditions import is_pod_ready
from berth.api.errors import AlreadyExists, NotFound, StatusError
from berth.api.labels import LabelSelectorError, Selector, compile_label_selector
from berth.api.statefulset import PARALLEL, POD_INDEX_LABEL, POD_NAME_LABEL, REVISION_LABEL
from berth.controllers.workloads.common import POD_KEY, controller_ref, int_field, set_controller
from berth.controllers.workloads.hashing import compute_hash
from berth.controllers.workloads.replicaset import is_pod_available
from berth.controllers.workloads.syncbase import SyncController

__all__ = ["STS_KEY", "StatefulSetController", "pod_ordinal"]

STS_KEY = ("apps", "StatefulSet")
REVISION_KEY = ("apps", "ControllerRevision")
HASH_LABEL = "controller.kubernetes.io/hash"
"""ControllerRevisionHashLabelKey of kube's history package."""
PVC_KEY = ("", "PersistentVolumeClaim")
Obj = dict[str, Any]


def pod_ordinal(set_name: str, pod_name: str) -> int | None:
    """The ordinal of a pod named ``<set>-<ordinal>``, or None (kube's getParentNameAndOrdinal)."""
    prefix, sep, tail = pod_name.rpartition("-")
    if not sep or prefix != set_name or not tail.isdigit():
        return None
    return int(tail)


def _terminating(pod: Mapping[str, Any]) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def _running_and_ready(pod: Mapping[str, Any]) -> bool:
    return _phase(pod) == "Running" and is_pod_ready(pod)


def _revision(pod: Mapping[str, Any]) -> str:
    return str((pod["metadata"].get("labels") or {}).get(REVISION_LABEL) or "")


class StatefulSetController(SyncController):
    """Reconciles StatefulSets against the pods named after them."""

    def sync(self, namespace: str, name: str) -> None:
        """Move one StatefulSet's pods one step towards ``spec`` and write its status."""
        try:
            sts = self.store.get(STS_KEY, namespace, name)
        except NotFound:
            self._forget(namespace, name)
            return
        if sts["metadata"].get("deletionTimestamp"):
            return
        spec = sts.get("spec") or {}
        try:
            selector = compile_label_selector(spec.get("selector"))
        except LabelSelectorError:
            return
        update_revision = f"{name}-{compute_hash(spec.get('template') or {}, None)}"
        try:
            self._record_revision(sts, update_revision)
        except StatusError:
            self._retry_later(namespace, name)
            return
        pods = self._claim(sts, selector)
        self._write_status(sts, pods, update_revision)
        try:
            self._step(sts, pods, update_revision)
        except StatusError:
            self._retry_later(namespace, name)
            return
        self._forget(namespace, name)

    def _record_revision(self, sts: Mapping[str, Any], revision: str) -> None:
        """The ControllerRevision of the set's current template (kube's history): ``<set>-<hash>``, owned by the
        set, labelled with its selector and ``controller.kubernetes.io/hash``, the template as a patch in
        ``data``, ``revision`` one above the highest so far. Made once per template."""
        meta = sts["metadata"]
        ns = meta.get("namespace", "")
        try:
            self.store.get(REVISION_KEY, ns, revision)
            return
        except NotFound:
            pass
        highest = 0
        for other in self.store.list(REVISION_KEY, ns)[0]:
            ref = next(
                (r for r in other["metadata"].get("ownerReferences") or () if r.get("controller")), None
            )
            if ref is not None and ref.get("uid") == meta["uid"]:
                highest = max(highest, int(other.get("revision") or 0))
        spec = sts.get("spec") or {}
        labels = dict((spec.get("selector") or {}).get("matchLabels") or {})
        labels[HASH_LABEL] = revision.removeprefix(f"{meta['name']}-")
        template = copy.deepcopy(spec.get("template") or {})
        template["$patch"] = "replace"
        history = {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": {
                "name": revision,
                "namespace": ns,
                "labels": labels,
                "ownerReferences": [controller_ref(sts)],
            },
            "data": {"spec": {"template": template}},
            "revision": highest + 1,
        }
        try:
            self.store.create(history)
        except AlreadyExists:
            return

    def _claim(self, sts: Mapping[str, Any], selector: Selector) -> dict[int, Mapping[str, Any]]:
        """ClaimPods with kube's isMemberOf filter: the set's pods by ordinal; owned pods that no longer match
        the selector are released, orphans named ``<set>-<ordinal>`` that match it are adopted."""
        meta = sts["metadata"]
        name, uid = meta["name"], meta["uid"]
        pods: dict[int, Mapping[str, Any]] = {}
        for pod in self.pods.owned_by(uid):
            ordinal = pod_ordinal(name, pod["metadata"]["name"])
            if ordinal is None:
                continue
            if selector.matches(pod["metadata"].get("labels") or {}):
                pods[ordinal] = pod
            else:
                set_controller(self.store, pod, uid, None)
        if selector.is_everything():
            return pods
        for pod in self.pods.orphans(meta.get("namespace", "")):
            ordinal = pod_ordinal(name, pod["metadata"]["name"])
            if (
                ordinal is None
                or _terminating(pod)
                or not selector.matches(pod["metadata"].get("labels") or {})
            ):
                continue
            adopted = set_controller(self.store, pod, uid, controller_ref(sts))
            if adopted is not None:
                pods[ordinal] = adopted
        return pods

    # ----- one step ---------------------------------------------------------------------------
    def _step(self, sts: Mapping[str, Any], pods: dict[int, Mapping[str, Any]], revision: str) -> None:
        spec = sts.get("spec") or {}
        monotonic = spec.get("podManagementPolicy") != PARALLEL
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        replicas = int_field(spec, "replicas", 1)
        wanted = range(start, start + replicas)
        for ordinal in wanted:
            pod = pods.get(ordinal)
            if pod is not None and _phase(pod) in ("Failed", "Succeeded") and not _terminating(pod):
                self._delete(sts, pod)
                pods.pop(ordinal)
                pod = None
            if pod is None:
                self._create(sts, ordinal, revision)
                if monotonic:
                    return
                continue
            if monotonic and (_terminating(pod) or not _running_and_ready(pod)):
                return
        condemned = sorted((o for o in pods if o not in wanted), reverse=True)
        unhealthy = [o for o in sorted(pods) if not _running_and_ready(pods[o]) or _terminating(pods[o])]
        for ordinal in condemned:
            pod = pods[ordinal]
            if _terminating(pod):
                if monotonic:
                    return
                continue
            if monotonic and unhealthy and unhealthy[0] != ordinal:
                return
            self._delete(sts, pod)
            if monotonic:
                return
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        for ordinal in sorted((o for o in wanted if o - start >= partition), reverse=True):
            pod = pods.get(ordinal)
            if pod is None:
                continue
            if _revision(pod) != revision and not _terminating(pod):
                self._delete(sts, pod)
                return
            if not _running_and_ready(pod):
                return

    def _new_pod(self, sts: Mapping[str, Any], ordinal: int, revision: str) -> Obj:
        """newVersionedStatefulSetPod: the template with the set's identity and claims."""
        meta = sts["metadata"]
        spec = sts.get("spec") or {}
        template = spec.get("template") or {}
        tmeta = template.get("metadata") or {}
        name = f"{meta['name']}-{ordinal}"
        labels = dict(tmeta.get("labels") or {})
        labels.update({REVISION_LABEL: revision, POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal)})
        pmeta: Obj = {"name": name, "namespace": meta.get("namespace", "default"), "labels": labels}
        for field in ("annotations", "finalizers"):
            if tmeta.get(field):
                pmeta[field] = copy.deepcopy(tmeta[field])
        pmeta["ownerReferences"] = [controller_ref(sts)]
        pod_spec: Obj = copy.deepcopy(template.get("spec") or {})
        pod_spec["hostname"] = name
        if spec.get("serviceName"):
            pod_spec["subdomain"] = spec["serviceName"]
        volumes = [v for v in pod_spec.get("volumes") or ()]
        claimed = {str((c.get("metadata") or {}).get("name")) for c in spec.get("volumeClaimTemplates") or ()}
        volumes = [v for v in volumes if v.get("name") not in claimed]
        for claim in spec.get("volumeClaimTemplates") or ():
            cname = str((claim.get("metadata") or {}).get("name"))
            volumes.append(
                {"name": cname, "persistentVolumeClaim": {"claimName": f"{cname}-{meta['name']}-{ordinal}"}}
            )
        if volumes:
            pod_spec["volumes"] = volumes
        return {"apiVersion": "v1", "kind": "Pod", "metadata": pmeta, "spec": pod_spec}

    def _create_claims(self, sts: Mapping[str, Any], ordinal: int, pod_name: str) -> None:
        meta = sts["metadata"]
        spec = sts.get("spec") or {}
        selector_labels = (spec.get("selector") or {}).get("matchLabels") or {}
        for claim in spec.get("volumeClaimTemplates") or ():
            cmeta = claim.get("metadata") or {}
            cname = f"{cmeta.get('name')}-{meta['name']}-{ordinal}"
            labels = {**(cmeta.get("labels") or {}), **selector_labels}
            obj: Obj = {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": cname, "namespace": meta.get("namespace", "default"), "labels": labels},
                "spec": copy.deepcopy(claim.get("spec") or {}),
            }
            try:
                self.store.create(obj)
            except AlreadyExists:
                continue
            except StatusError as e:
                self.recorder.event(
                    sts,
                    "Warning",
                    "FailedCreate",
                    f"create Claim {cname} for Pod {pod_name} in StatefulSet {meta['name']} failed error: {e}",
                )
                raise
            self.recorder.event(
                sts,
                "Normal",
                "SuccessfulCreate",
                f"create Claim {cname} Pod {pod_name} in StatefulSet {meta['name']} success",
            )

    def _create(self, sts: Mapping[str, Any], ordinal: int, revision: str) -> None:
        pod = self._new_pod(sts, ordinal, revision)
        name, set_name = pod["metadata"]["name"], sts["metadata"]["name"]
        self._create_claims(sts, ordinal, name)
        try:
            self.store.create(pod)
        except StatusError as e:
            self.recorder.event(
                sts,
                "Warning",
                "FailedCreate",
                f"create Pod {name} in StatefulSet {set_name} failed error: {e}",
            )
            raise
        self.recorder.event(
            sts, "Normal", "SuccessfulCreate", f"create Pod {name} in StatefulSet {set_name} successful"
        )

    def _delete(self, sts: Mapping[str, Any], pod: Mapping[str, Any]) -> None:
        meta = pod["metadata"]
        set_name = sts["metadata"]["name"]
        try:
            self.store.delete(POD_KEY, meta.get("namespace", ""), meta["name"])
        except NotFound:
            return
        except StatusError as e:
            self.recorder.event(
                sts,
                "Warning",
                "FailedDelete",
                f"delete Pod {meta['name']} in StatefulSet {set_name} failed error: {e}",
            )
            raise
        self.recorder.event(
            sts,
            "Normal",
            "SuccessfulDelete",
            f"delete Pod {meta['name']} in StatefulSet {set_name} successful",
        )

    # ----- status -----------------------------------------------------------------------------
    def _write_status(
        self, sts: Mapping[str, Any], pods: Mapping[int, Mapping[str, Any]], revision: str
    ) -> None:
        spec = sts.get("spec") or {}
        old: Mapping[str, Any] = sts.get("status") or {}
        current_revision = str(old.get("currentRevision") or revision)
        min_ready = int_field(spec, "minReadySeconds", 0)
        now = self._now()
        replicas = ready = available = current = updated = 0
        for pod in pods.values():
            if _terminating(pod):
                continue
            replicas += 1
            if _running_and_ready(pod):
                ready += 1
                if is_pod_available(pod, min_ready, now):
                    available += 1
            rev = _revision(pod)
            current += rev == current_revision
            updated += rev == revision
        strategy = (spec.get("updateStrategy") or {}).get("type", "RollingUpdate")
        if strategy == "RollingUpdate" and updated == replicas and ready == replicas:
            current, current_revision = updated, revision
        status: Obj = {
            "observedGeneration": sts["metadata"].get("generation", 0),
            "replicas": replicas,
            "readyReplicas": ready,
            "currentReplicas": current,
            "updatedReplicas": updated,
            "currentRevision": current_revision,
            "updateRevision": revision,
            "collisionCount": int(old.get("collisionCount") or 0),
            "availableReplicas": available,
        }
        status = {
            k: v for k, v in status.items() if v or k in ("replicas", "availableReplicas", "collisionCount")
        }
        if status != old:
            try:
                self.store.update_status({**sts, "status": status})
            except StatusError:
                return
        if min_ready > 0 and ready != available:
            meta = sts["metadata"]
            self._requeue(meta.get("namespace", ""), meta["name"], float(min_ready))
