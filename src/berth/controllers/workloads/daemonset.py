"""The DaemonSet controller, as kube-controller-manager's (``pkg/controller/daemon``).

A node should run the daemon pod when the template's ``spec.nodeName`` (if any), ``nodeSelector`` and required
node affinity match it and every NoSchedule/NoExecute taint of the node is tolerated by the template's
tolerations plus the ones kube adds to every daemon pod (``AddOrUpdateDaemonPodTolerations``); a pod already
there keeps running while no NoExecute taint is untolerated. Each pod is made from the template with kube's
labels (``controller-revision-hash``, ``pod-template-generation``), those tolerations, and its node affinity
replaced by one required term ``matchFields metadata.name In [<node>]``, so the default scheduler places it.
Matching orphans are adopted. Extra pods on a node, pods on nodes that should not run one, failed pods and
pods aimed at nodes that no longer exist are deleted; ``RollingUpdate`` replaces pods of an old template at most
``maxUnavailable`` (1) at a time. Nodes added, removed or relabelled resync every DaemonSet. Status and events
as kube's. Not done: ControllerRevision objects, ``maxSurge``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from berth.api.conditions import is_pod_ready
from berth.api.errors import NotFound, StatusError
from berth.api.labels import LabelSelectorError, Selector, compile_label_selector
from berth.api.nodeselector import required_node_affinity
from berth.api.taints import (
    EFFECT_NO_EXECUTE,
    EFFECT_NO_SCHEDULE,
    find_untolerated,
    parse_taints,
    parse_tolerations,
)
from berth.controllers.workloads.common import (
    POD_KEY,
    controller_ref,
    int_field,
    scaled_value,
    set_controller,
)
from berth.controllers.workloads.hashing import compute_hash
from berth.controllers.workloads.replicaset import is_pod_available
from berth.controllers.workloads.syncbase import SyncController

__all__ = ["DAEMON_TOLERATIONS", "DS_KEY", "DaemonSetController", "daemon_pod_tolerations", "target_node"]

DS_KEY = ("apps", "DaemonSet")
NODE_KEY = ("", "Node")
GENERATION_LABEL = "pod-template-generation"
"""extensions.DaemonSetTemplateGenerationKey (deprecated, still set by kube)."""
REVISION_LABEL = "controller-revision-hash"
Obj = dict[str, Any]

DAEMON_TOLERATIONS: tuple[tuple[str, str], ...] = (
    ("node.kubernetes.io/not-ready", EFFECT_NO_EXECUTE),
    ("node.kubernetes.io/unreachable", EFFECT_NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", EFFECT_NO_SCHEDULE),
    ("node.kubernetes.io/memory-pressure", EFFECT_NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", EFFECT_NO_SCHEDULE),
    ("node.kubernetes.io/unschedulable", EFFECT_NO_SCHEDULE),
)
"""(key, effect) of the Exists tolerations every daemon pod gets (util.AddOrUpdateDaemonPodTolerations)."""
_HOST_NETWORK_TOLERATION = ("node.kubernetes.io/network-unavailable", EFFECT_NO_SCHEDULE)
_BLOCKING = frozenset({EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE})
_EVICTING = frozenset({EFFECT_NO_EXECUTE})


def daemon_pod_tolerations(pod_spec: Mapping[str, Any]) -> list[Obj]:
    """The pod spec's tolerations with kube's daemon tolerations added (those already there kept once)."""
    out: list[Obj] = [dict(t) for t in pod_spec.get("tolerations") or ()]
    wanted = list(DAEMON_TOLERATIONS)
    if pod_spec.get("hostNetwork"):
        wanted.append(_HOST_NETWORK_TOLERATION)
    for key, effect in wanted:
        toleration = {"key": key, "operator": "Exists", "effect": effect}
        if toleration not in out:
            out.append(toleration)
    return out


def target_node(pod: Mapping[str, Any]) -> str | None:
    """util.GetTargetNodeName: the pod's node, or the node its ``matchFields metadata.name`` term names."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or ():
        for field in term.get("matchFields") or ():
            values: list[Any] = list(field.get("values") or ())
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and len(values) == 1:
                return str(values[0])
    return None


def _with_node_affinity(affinity: Mapping[str, Any] | None, node: str) -> Obj:
    """util.ReplaceDaemonSetPodNodeNameNodeAffinity: the required node terms replaced by one matchFields term."""
    out: Obj = copy.deepcopy(dict(affinity or {}))
    node_affinity = out.setdefault("nodeAffinity", {})
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
    return out


def _terminating(pod: Mapping[str, Any]) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def _created(pod: Mapping[str, Any]) -> tuple[str, str]:
    meta = pod["metadata"]
    return (str(meta.get("creationTimestamp") or ""), str(meta.get("name") or ""))


class DaemonSetController(SyncController):
    """Reconciles DaemonSets against the nodes and the pods they own."""

    def should_run(self, ds: Mapping[str, Any], node: Mapping[str, Any]) -> tuple[bool, bool]:
        """NodeShouldRunDaemonPod: (should run a pod there, should keep a pod already there running)."""
        template = (ds.get("spec") or {}).get("template") or {}
        pod_spec = template.get("spec") or {}
        name = node["metadata"]["name"]
        if pod_spec.get("nodeName") and pod_spec["nodeName"] != name:
            return False, False
        labels = node["metadata"].get("labels") or {}
        if not required_node_affinity(template).matches(labels, name):
            return False, False
        taints = parse_taints((node.get("spec") or {}).get("taints"))
        tolerations = parse_tolerations(daemon_pod_tolerations(pod_spec))
        if find_untolerated(taints, tolerations, _BLOCKING) is not None:
            return False, find_untolerated(taints, tolerations, _EVICTING) is None
        return True, True

    def sync(self, namespace: str, name: str) -> None:
        """Bring one DaemonSet's pods to one per eligible node and write its status."""
        try:
            ds = self.store.get(DS_KEY, namespace, name)
        except NotFound:
            self._forget(namespace, name)
            return
        if ds["metadata"].get("deletionTimestamp"):
            return
        spec = ds.get("spec") or {}
        try:
            selector = compile_label_selector(spec.get("selector"))
        except LabelSelectorError:
            return
        status = ds.get("status") or {}
        revision = compute_hash(spec.get("template") or {}, status.get("collisionCount"))
        nodes = sorted(self.store.list(NODE_KEY)[0], key=lambda n: str(n["metadata"]["name"]))
        by_node: dict[str, list[Mapping[str, Any]]] = {}
        strays: list[Mapping[str, Any]] = []
        node_names = {n["metadata"]["name"] for n in nodes}
        for pod in self._claim(ds, selector):
            target = target_node(pod)
            if target is None or target not in node_names:
                strays.append(pod)
            else:
                by_node.setdefault(target, []).append(pod)
        for pods in by_node.values():
            pods.sort(key=_created)
        self._write_status(ds, nodes, by_node, revision)
        try:
            self._manage(ds, nodes, by_node, strays, revision)
        except StatusError:
            self._retry_later(namespace, name)
            return
        self._forget(namespace, name)

    def _claim(self, ds: Mapping[str, Any], selector: Selector) -> list[Mapping[str, Any]]:
        """ClaimPods: owned pods that match the selector (the others released) and orphans that match it,
        adopted."""
        uid = ds["metadata"]["uid"]
        pods: list[Mapping[str, Any]] = []
        for pod in self.pods.owned_by(uid):
            if selector.matches(pod["metadata"].get("labels") or {}):
                pods.append(pod)
            else:
                set_controller(self.store, pod, uid, None)
        if selector.is_everything():
            return pods
        for pod in self.pods.orphans(ds["metadata"].get("namespace", "")):
            if _terminating(pod) or not selector.matches(pod["metadata"].get("labels") or {}):
                continue
            adopted = set_controller(self.store, pod, uid, controller_ref(ds))
            if adopted is not None:
                pods.append(adopted)
        return pods

    def _manage(
        self,
        ds: Mapping[str, Any],
        nodes: Sequence[Mapping[str, Any]],
        by_node: Mapping[str, list[Mapping[str, Any]]],
        strays: Sequence[Mapping[str, Any]],
        revision: str,
    ) -> None:
        create: list[str] = []
        delete: list[Mapping[str, Any]] = [
            p for p in strays if not _terminating(p) and not (p.get("spec") or {}).get("nodeName")
        ]
        for node in nodes:
            name = node["metadata"]["name"]
            run, keep = self.should_run(ds, node)
            pods = [p for p in by_node.get(name, ()) if not _terminating(p)]
            if run and not by_node.get(name):
                create.append(name)
            elif keep:
                running: list[Mapping[str, Any]] = []
                for pod in pods:
                    if (pod.get("status") or {}).get("phase") == "Failed":
                        self.recorder.event(
                            ds,
                            "Warning",
                            "FailedDaemonPod",
                            f"Found failed daemon pod {pod['metadata'].get('namespace', '')}/"
                            f"{pod['metadata']['name']} on node {name}, will try to kill it",
                        )
                        delete.append(pod)
                    else:
                        running.append(pod)
                delete.extend(running[1:])
            else:
                delete.extend(pods)
        for node_name in create:
            self._create(ds, node_name, revision)
        for pod in delete:
            self._delete(ds, pod)
        self._roll(ds, nodes, by_node, revision, {id(p) for p in delete})

    def _roll(
        self,
        ds: Mapping[str, Any],
        nodes: Sequence[Mapping[str, Any]],
        by_node: Mapping[str, list[Mapping[str, Any]]],
        revision: str,
        deleted: set[int],
    ) -> None:
        """RollingUpdate (maxSurge 0): replace old-template pods while at most maxUnavailable are unavailable."""
        spec = ds.get("spec") or {}
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        min_ready = int_field(spec, "minReadySeconds", 0)
        now = self._now()
        desired = 0
        unavailable = 0
        old_available: list[Mapping[str, Any]] = []
        for node in nodes:
            if not self.should_run(ds, node)[0]:
                continue
            desired += 1
            pods = [p for p in by_node.get(node["metadata"]["name"], ()) if id(p) not in deleted]
            live = [p for p in pods if not _terminating(p)]
            if not live or not is_pod_available(live[0], min_ready, now):
                unavailable += 1
                for p in live:
                    if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) != revision:
                        self._delete(ds, p)  # an unavailable old pod costs nothing to replace
                continue
            if (live[0]["metadata"].get("labels") or {}).get(REVISION_LABEL) != revision:
                old_available.append(live[0])
        raw = (strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1)
        max_unavailable = scaled_value(raw, desired, True)
        for pod in old_available[: max(0, max_unavailable - unavailable)]:
            self._delete(ds, pod)

    def _new_pod(self, ds: Mapping[str, Any], node: str, revision: str) -> Obj:
        meta = ds["metadata"]
        template = (ds.get("spec") or {}).get("template") or {}
        tmeta = template.get("metadata") or {}
        labels = dict(tmeta.get("labels") or {})
        labels[REVISION_LABEL] = revision
        labels[GENERATION_LABEL] = str(meta.get("generation") or 1)
        pmeta: Obj = {
            "generateName": f"{meta['name']}-",
            "namespace": meta.get("namespace", "default"),
            "labels": labels,
        }
        for field in ("annotations", "finalizers"):
            if tmeta.get(field):
                pmeta[field] = copy.deepcopy(tmeta[field])
        pmeta["ownerReferences"] = [controller_ref(ds)]
        pod_spec: Obj = copy.deepcopy(template.get("spec") or {})
        pod_spec["tolerations"] = daemon_pod_tolerations(pod_spec)
        pod_spec["affinity"] = _with_node_affinity(pod_spec.get("affinity"), node)
        return {"apiVersion": "v1", "kind": "Pod", "metadata": pmeta, "spec": pod_spec}

    def _create(self, ds: Mapping[str, Any], node: str, revision: str) -> None:
        try:
            created = self.store.create(self._new_pod(ds, node, revision))
        except StatusError as e:
            self.recorder.event(ds, "Warning", "FailedCreate", f"Error creating: {e}")
            raise
        self.recorder.event(ds, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")

    def _delete(self, ds: Mapping[str, Any], pod: Mapping[str, Any]) -> None:
        meta = pod["metadata"]
        try:
            self.store.delete(POD_KEY, meta.get("namespace", ""), meta["name"])
        except NotFound:
            return
        except StatusError as e:
            self.recorder.event(ds, "Warning", "FailedDelete", f"Error deleting: {e}")
            raise
        self.recorder.event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {meta['name']}")

    def _write_status(
        self,
        ds: Mapping[str, Any],
        nodes: Sequence[Mapping[str, Any]],
        by_node: Mapping[str, list[Mapping[str, Any]]],
        revision: str,
    ) -> None:
        spec = ds.get("spec") or {}
        min_ready = int_field(spec, "minReadySeconds", 0)
        now = self._now()
        desired = current = misscheduled = ready = available = updated = 0
        for node in nodes:
            run, _ = self.should_run(ds, node)
            pods = by_node.get(node["metadata"]["name"]) or []
            if run:
                desired += 1
                if not pods:
                    continue
                current += 1
                pod = pods[0]
                if is_pod_ready(pod):
                    ready += 1
                    if is_pod_available(pod, min_ready, now):
                        available += 1
                if (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) == revision:
                    updated += 1
            elif pods:
                misscheduled += 1
        old: Mapping[str, Any] = ds.get("status") or {}
        status: Obj = {
            "currentNumberScheduled": current,
            "numberMisscheduled": misscheduled,
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "observedGeneration": ds["metadata"].get("generation", 0),
            "updatedNumberScheduled": updated,
            "numberAvailable": available,
            "numberUnavailable": desired - available,
        }
        keep = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady")
        status = {k: v for k, v in status.items() if v or k in keep}
        if old.get("collisionCount") is not None:
            status["collisionCount"] = old["collisionCount"]
        if old.get("conditions"):
            status["conditions"] = old["conditions"]
        if status != old:
            try:
                self.store.update_status({**ds, "status": status})
            except StatusError:
                return
        if min_ready > 0 and ready != available:
            meta = ds["metadata"]
            self._requeue(meta.get("namespace", ""), meta["name"], float(min_ready))
