"""Fluent builders of wire-form Pods and Nodes for the tests, in the shape of kube-scheduler's testing
wrappers (``st.MakePod()...Obj()``, ``st.MakeNode()...Obj()``)::

    make_pod("p").ns("a").req(cpu="1", memory="1Gi").node("n1").priority(10).label(app="a").obj()
    make_node("n1").capacity(cpu="8", memory="16Gi").gpu(2).zone("z1").taint("k", "v").obj()

Every method changes the builder and returns it; :meth:`PodBuilder.obj` / :meth:`NodeBuilder.obj` return
a deep copy of the object built so far (so one builder can go on to build the next object), and
:meth:`PodBuilder.info` returns it compiled into the scheduler's ``PodInfo``.

Also here: the small pieces the builders take (taints, tolerations, selector requirements, node affinity,
host ports); :func:`create`, which stores a built pod the way the API and a kubelet would; :func:`make_table`,
a NodeTable holding nodes and the pods counted on them, for the plugin tests; and :func:`scheduler_config`,
a parsed one-profile KubeSchedulerConfiguration.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Self

from berth.api.podgroup import POD_GROUP_LABEL
from berth.api.reservation import (
    ANNOTATION_RESERVATION_AFFINITY,
    ANNOTATION_RESERVATION_ALLOCATED,
    allocated_annotation_value,
)
from berth.scheduler.framework import NodeTable, PodInfo
from berth.scheduler.framework.config import SchedulerConfig, parse_config

Obj = dict[str, Any]
Quantity = str | int | float

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
GPU = "nvidia.com/gpu"
READY_AT = "2024-01-01T00:00:00Z"
"""The virtual clock's time 0 (the Ready condition's default ``lastTransitionTime``)."""

_OWNER_API = {
    "ReplicaSet": "apps/v1",
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
}
_uids = itertools.count()


def _resources(mapping: Mapping[str, Quantity | None] | None, kw: Mapping[str, Quantity | None]) -> Obj:
    """Resource names to amounts: ``mapping`` then keywords (``ephemeral_storage`` -> ``ephemeral-storage``)."""
    out: Obj = dict(mapping or {})
    out.update({k.replace("_", "-"): v for k, v in kw.items()})
    return out


def _merge(target: Obj, updates: Mapping[str, Any]) -> None:
    """Set each key of ``updates`` in ``target``; a None value removes the key."""
    for k, v in updates.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = v


class PodBuilder:
    """Builds a Pod: ``metadata.name`` and namespace ``default``, one container ``c`` running busybox.

    Container-level methods (:meth:`req`, :meth:`lim`, :meth:`image`, :meth:`host_port`) apply to the last
    container added (:meth:`container`, :meth:`images`), the first one when none was.
    """

    def __init__(self, name: str = "p") -> None:
        self._obj: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }

    # -- output ---------------------------------------------------------------------------------------

    def obj(self) -> Obj:
        """The wire-form Pod (a copy: later calls on the builder do not change it)."""
        return copy.deepcopy(self._obj)

    def info(self) -> PodInfo:
        """The Pod compiled into a ``PodInfo``, with a unique uid when none was set (the API assigns one)."""
        obj = self.obj()
        meta = obj["metadata"]
        if not meta.get("uid"):
            meta["uid"] = f"uid-{meta.get('name', '')}-{next(_uids)}"
        return PodInfo(obj)

    # -- metadata -------------------------------------------------------------------------------------

    @property
    def _meta(self) -> Obj:
        meta: Obj = self._obj["metadata"]
        return meta

    @property
    def _spec(self) -> Obj:
        spec: Obj = self._obj["spec"]
        return spec

    def _status(self) -> Obj:
        status: Obj = self._obj.setdefault("status", {})
        return status

    def name(self, name: str) -> Self:
        """Set ``metadata.name``."""
        self._meta["name"] = name
        return self

    def ns(self, namespace: str | None) -> Self:
        """Set ``metadata.namespace`` (None leaves it out, for the API to default)."""
        _merge(self._meta, {"namespace": namespace})
        return self

    def uid(self, uid: str | None) -> Self:
        """Set ``metadata.uid`` (None leaves it out)."""
        _merge(self._meta, {"uid": uid})
        return self

    def label(self, mapping: Mapping[str, str | None] | None = None, /, **labels: str | None) -> Self:
        """Add labels (a None value removes one); with no labels, make ``metadata.labels`` an empty map."""
        _merge(self._meta.setdefault("labels", {}), {**(mapping or {}), **labels})
        return self

    def annotate(self, mapping: Mapping[str, str | None] | None = None, /, **annotations: str | None) -> Self:
        """Add annotations (a None value removes one); with none given, an empty ``metadata.annotations``."""
        _merge(self._meta.setdefault("annotations", {}), {**(mapping or {}), **annotations})
        return self

    def owner(
        self,
        kind: str,
        name: str = "o",
        uid: str = "u",
        *,
        api_version: str | None = None,
        controller: bool | None = True,
    ) -> Self:
        """Add an ownerReference (a controller one unless ``controller`` is False / None); ``apiVersion`` is
        the kind's (apps/v1 for ReplicaSet, batch/v1 for Job, v1 otherwise) unless given."""
        ref: Obj = {
            "apiVersion": api_version or _OWNER_API.get(kind, "v1"),
            "kind": kind,
            "name": name,
            "uid": uid,
        }
        if controller is not None:
            ref["controller"] = controller
        self._meta.setdefault("ownerReferences", []).append(ref)
        return self

    def owned_by(self, obj: Mapping[str, Any], kind: str | None = None) -> Self:
        """Add a controller ownerReference to a (stored) object, optionally claiming another ``kind``."""
        meta = obj["metadata"]
        return self.owner(kind or obj["kind"], meta["name"], meta["uid"], api_version=obj["apiVersion"])

    def created(self, timestamp: str) -> Self:
        """Set ``metadata.creationTimestamp``."""
        self._meta["creationTimestamp"] = timestamp
        return self

    def terminating(self, timestamp: str = READY_AT) -> Self:
        """Set ``metadata.deletionTimestamp`` (the pod is being deleted)."""
        self._meta["deletionTimestamp"] = timestamp
        return self

    def meta(self, **fields: Any) -> Self:
        """Set other ``metadata`` fields as given (a None value removes one)."""
        _merge(self._meta, fields)
        return self

    def pod_group(self, group: str | None) -> Self:
        """Make the pod a member of the coscheduling PodGroup ``group`` (its pod-group label; none when
        ``group`` is empty)."""
        return self.label({POD_GROUP_LABEL: group}) if group else self

    def reservation_affinity(self, affinity: Mapping[str, Any]) -> Self:
        """Set the koordinator reservation-affinity annotation to ``affinity`` (JSON)."""
        return self.annotate({ANNOTATION_RESERVATION_AFFINITY: json.dumps(affinity)})

    def allocated_to(self, reservation: Mapping[str, Any] | None) -> Self:
        """Mark the pod allocated into the stored ``reservation``: the reservation-allocated annotation the
        scheduler writes when it binds a pod there (None: no change)."""
        if reservation is None:
            return self
        meta = reservation["metadata"]
        return self.annotate(
            {ANNOTATION_RESERVATION_ALLOCATED: allocated_annotation_value(meta["name"], meta["uid"])}
        )

    # -- containers -----------------------------------------------------------------------------------

    def _container(self) -> Obj:
        containers = self._spec.setdefault("containers", [])
        if not containers:
            containers.append({"name": "c", "image": "busybox"})
        last: Obj = containers[-1]
        return last

    def _resources(self, which: str, mapping: Mapping[str, Quantity | None] | None, kw: Any) -> Self:
        resources = self._container().setdefault("resources", {})
        _merge(resources.setdefault(which, {}), _resources(mapping, kw))
        return self

    def req(
        self, mapping: Mapping[str, Quantity | None] | None = None, /, **resources: Quantity | None
    ) -> Self:
        """Add resource requests to the last container (``cpu="1"``, ``memory="1Gi"``, ``{GPU: 1}``;
        ``ephemeral_storage`` stands for ``ephemeral-storage``; None removes one); with none given, an
        empty ``resources.requests``."""
        return self._resources("requests", mapping, resources)

    def lim(
        self, mapping: Mapping[str, Quantity | None] | None = None, /, **resources: Quantity | None
    ) -> Self:
        """Add resource limits to the last container (as :meth:`req`)."""
        return self._resources("limits", mapping, resources)

    def image(self, image: str | None) -> Self:
        """Set the last container's image (None leaves it out)."""
        _merge(self._container(), {"image": image})
        return self

    def _add_container(
        self, field: str, prefix: str, name: str | None, image: str | None, requests: Mapping[str, Quantity]
    ) -> Self:
        containers = self._spec.setdefault(field, [])
        c: Obj = {"name": name or f"{prefix}{len(containers)}"}
        if image is not None:
            c["image"] = image
        if requests:
            c["resources"] = {"requests": _resources(None, requests)}
        containers.append(c)
        return self

    def container(
        self, name: str | None = None, image: str | None = "busybox", **resources: Quantity
    ) -> Self:
        """Add a container (named ``c<i>`` unless given) requesting ``resources``; later container methods
        apply to it."""
        return self._add_container("containers", "c", name, image, resources)

    def images(self, *images: str, **requests: Quantity) -> Self:
        """Replace the containers by one per image, named ``c0``, ``c1``, ... (kube's makeImagePod), each
        requesting ``requests`` when given."""
        self._spec["containers"] = []
        for im in images:
            self._add_container("containers", "c", None, im, requests)
        return self

    def init_container(
        self, name: str | None = None, image: str | None = "busybox", **resources: Quantity
    ) -> Self:
        """Add an init container (named ``i<i>`` unless given) requesting ``resources``."""
        return self._add_container("initContainers", "i", name, image, resources)

    def init_images(self, *images: str) -> Self:
        """Add one init container per image, named ``i0``, ``i1``, ..."""
        for im in images:
            self.init_container(image=im)
        return self

    def host_port(self, port: int, ip: str = "", protocol: str = "") -> Self:
        """Add a container port with the same host port to the last container."""
        return self.ports(host_port(port, ip, protocol))

    def ports(self, *ports: Mapping[str, Any]) -> Self:
        """Add container ports given as dicts to the last container."""
        if ports:
            self._container().setdefault("ports", []).extend(dict(p) for p in ports)
        return self

    # -- spec -----------------------------------------------------------------------------------------

    def node(self, node_name: str | None) -> Self:
        """Bind the pod: set ``spec.nodeName`` (None or "" leaves it out)."""
        _merge(self._spec, {"nodeName": node_name or None})
        return self

    def priority(self, priority: int | None) -> Self:
        """Set ``spec.priority`` (what admission resolves from the PriorityClass; None leaves it out)."""
        _merge(self._spec, {"priority": priority})
        return self

    def priority_class(self, name: str | None) -> Self:
        """Set ``spec.priorityClassName`` (None or "" leaves it out)."""
        _merge(self._spec, {"priorityClassName": name or None})
        return self

    def preemption_policy(self, policy: str = "Never") -> Self:
        """Set ``spec.preemptionPolicy``."""
        self._spec["preemptionPolicy"] = policy
        return self

    def scheduler(self, name: str) -> Self:
        """Set ``spec.schedulerName``."""
        self._spec["schedulerName"] = name
        return self

    def gate(self, *names: str) -> Self:
        """Add scheduling gates."""
        if names:
            self._spec.setdefault("schedulingGates", []).extend({"name": n} for n in names)
        return self

    def grace(self, seconds: int) -> Self:
        """Set ``spec.terminationGracePeriodSeconds``."""
        self._spec["terminationGracePeriodSeconds"] = seconds
        return self

    def toleration(self, key: str = "", operator: str = "", value: str = "", effect: str = "") -> Self:
        """Add a toleration (empty fields left out)."""
        return self.tolerations(toleration(key, operator, value, effect))

    def tolerations(self, *tolerations: Mapping[str, Any]) -> Self:
        """Add tolerations given as dicts."""
        if tolerations:
            self._spec.setdefault("tolerations", []).extend(dict(t) for t in tolerations)
        return self

    def node_selector(self, mapping: Mapping[str, str] | None = None, /, **labels: str) -> Self:
        """Add ``spec.nodeSelector`` labels (none given: no change)."""
        if selector := {**(mapping or {}), **labels}:
            self._spec.setdefault("nodeSelector", {}).update(selector)
        return self

    def affinity(self, affinity: Mapping[str, Any] | None) -> Self:
        """Set ``spec.affinity`` as given (None or empty: no change)."""
        if affinity:
            self._spec["affinity"] = copy.deepcopy(dict(affinity))
        return self

    def _affinity(self, kind: str, when: str, items: Iterable[Mapping[str, Any]]) -> Self:
        if items := [copy.deepcopy(dict(t)) for t in items]:
            self._spec.setdefault("affinity", {}).setdefault(kind, {}).setdefault(when, []).extend(items)
        return self

    def node_affinity(self, *terms: Mapping[str, Any]) -> Self:
        """Add required node affinity ``nodeSelectorTerms``."""
        if not terms:
            return self
        na = self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        required = na.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []})
        required["nodeSelectorTerms"].extend(copy.deepcopy(dict(t)) for t in terms)
        return self

    def preferred_node_affinity(self, *weighted: tuple[int, Mapping[str, Any]]) -> Self:
        """Add preferred node affinity ``(weight, term)`` pairs."""
        prefs = [{"weight": w, "preference": dict(t)} for w, t in weighted]
        return self._affinity("nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", prefs)

    def pod_affinity(self, *terms: Mapping[str, Any]) -> Self:
        """Add required PodAffinityTerms."""
        return self._affinity("podAffinity", "requiredDuringSchedulingIgnoredDuringExecution", terms)

    def pod_anti_affinity(self, *terms: Mapping[str, Any]) -> Self:
        """Add required anti-affinity PodAffinityTerms."""
        return self._affinity("podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", terms)

    def preferred_pod_affinity(self, *weighted: Mapping[str, Any]) -> Self:
        """Add WeightedPodAffinityTerms to pod affinity."""
        return self._affinity("podAffinity", "preferredDuringSchedulingIgnoredDuringExecution", weighted)

    def preferred_pod_anti_affinity(self, *weighted: Mapping[str, Any]) -> Self:
        """Add WeightedPodAffinityTerms to pod anti-affinity."""
        return self._affinity("podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution", weighted)

    def spread(self, *constraints: Mapping[str, Any]) -> Self:
        """Add topologySpreadConstraints."""
        self._spec.setdefault("topologySpreadConstraints", []).extend(
            copy.deepcopy(dict(c)) for c in constraints
        )
        return self

    def spec(self, **fields: Any) -> Self:
        """Set other ``spec`` fields as given (``overhead=...``, ``containers=[]``; a None value removes one)."""
        _merge(self._spec, fields)
        return self

    # -- status ---------------------------------------------------------------------------------------

    def phase(self, phase: str | None) -> Self:
        """Set ``status.phase`` (None leaves it out)."""
        if phase is not None:
            self._status()["phase"] = phase
        return self

    def ready(self, ready: bool = True, at: str = READY_AT) -> Self:
        """Add a Ready condition (status True / False) last changed ``at``."""
        cond = {
            "type": "Ready",
            "status": "True" if ready else "False",
            "lastProbeTime": None,
            "lastTransitionTime": at,
        }
        self._status().setdefault("conditions", []).append(cond)
        return self

    def running(self, ready: bool = True) -> Self:
        """Phase Running with a Ready condition (``ready``) since time 0, as a kubelet reports it."""
        return self.phase("Running").ready(ready)

    def nominated(self, node_name: str | None) -> Self:
        """Set ``status.nominatedNodeName`` (None leaves it out)."""
        if node_name:
            self._status()["nominatedNodeName"] = node_name
        return self

    def start_time(self, timestamp: str | None) -> Self:
        """Set ``status.startTime`` (None leaves it out)."""
        if timestamp:
            self._status()["startTime"] = timestamp
        return self

    def status(self, **fields: Any) -> Self:
        """Set other ``status`` fields as given."""
        self._status().update(fields)
        return self


class NodeBuilder:
    """Builds a Node as a kubelet registers it: label ``kubernetes.io/hostname=<name>`` and capacity =
    allocatable = 4 cpu, 8Gi memory, 110 pods."""

    def __init__(self, name: str = "n1") -> None:
        res = {"cpu": "4", "memory": "8Gi", "pods": "110"}
        self._obj: Obj = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {HOSTNAME: name}},
            "spec": {},
            "status": {"capacity": dict(res), "allocatable": dict(res)},
        }

    def obj(self) -> Obj:
        """The wire-form Node (a copy: later calls on the builder do not change it)."""
        return copy.deepcopy(self._obj)

    @property
    def _meta(self) -> Obj:
        meta: Obj = self._obj["metadata"]
        return meta

    @property
    def _status(self) -> Obj:
        status: Obj = self._obj["status"]
        return status

    def name(self, name: str) -> Self:
        """Set ``metadata.name`` (the hostname label follows when it was the old name)."""
        labels = self._meta.get("labels") or {}
        if labels.get(HOSTNAME) == self._meta["name"]:
            labels[HOSTNAME] = name
        self._meta["name"] = name
        return self

    def capacity(
        self, mapping: Mapping[str, Quantity | None] | None = None, /, **resources: Quantity | None
    ) -> Self:
        """Set capacity and allocatable amounts (``cpu="8"``, ``{GPU: "2"}``; ``ephemeral_storage`` stands for
        ``ephemeral-storage``; None leaves a resource out)."""
        res = _resources(mapping, resources)
        _merge(self._status.setdefault("capacity", {}), res)
        _merge(self._status.setdefault("allocatable", {}), res)
        return self

    def allocatable(
        self, mapping: Mapping[str, Quantity | None] | None = None, /, **resources: Quantity | None
    ) -> Self:
        """Set allocatable amounts only (as :meth:`capacity`)."""
        _merge(self._status.setdefault("allocatable", {}), _resources(mapping, resources))
        return self

    def gpu(self, count: int) -> Self:
        """``count`` nvidia.com/gpu of capacity and allocatable (none when 0)."""
        return self.capacity({GPU: str(count) if count else None})

    def label(self, mapping: Mapping[str, str | None] | None = None, /, **labels: str | None) -> Self:
        """Add labels (a None value removes one)."""
        _merge(self._meta.setdefault("labels", {}), {**(mapping or {}), **labels})
        return self

    def unlabel(self, *keys: str) -> Self:
        """Remove labels (``unlabel(HOSTNAME)``: a node without the default hostname label)."""
        labels = self._meta.get("labels") or {}
        for k in keys:
            labels.pop(k, None)
        return self

    def zone(self, zone: str | None, key: str = ZONE) -> Self:
        """Label the node's zone (``topology.kubernetes.io/zone`` unless ``key`` is given; None: no label)."""
        if zone is not None:
            self.label({key: zone})
        return self

    def annotate(self, mapping: Mapping[str, str] | None = None, /, **annotations: str) -> Self:
        """Add annotations."""
        self._meta.setdefault("annotations", {}).update({**(mapping or {}), **annotations})
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> Self:
        """Add a taint."""
        return self.taints(taint(key, value, effect))

    def taints(self, *taints: Mapping[str, Any]) -> Self:
        """Add taints given as dicts."""
        if taints:
            self._obj["spec"].setdefault("taints", []).extend(dict(t) for t in taints)
        return self

    def unschedulable(self, unschedulable: bool = True) -> Self:
        """Set ``spec.unschedulable`` (cordon)."""
        self._obj["spec"]["unschedulable"] = unschedulable
        return self

    def images(self, *images: Mapping[str, Any]) -> Self:
        """Report ``status.images`` entries given as dicts."""
        self._status.setdefault("images", []).extend(copy.deepcopy(dict(i)) for i in images)
        return self


def make_pod(name: str = "p") -> PodBuilder:
    """A :class:`PodBuilder` for a pod ``name`` in namespace ``default``."""
    return PodBuilder(name)


def make_node(name: str = "n1") -> NodeBuilder:
    """A :class:`NodeBuilder` for a node ``name``."""
    return NodeBuilder(name)


def create(store: Any, built: Mapping[str, Any] | PodBuilder | NodeBuilder) -> Obj:
    """Create a built object through ``store`` the way it reaches the API. A Pod is created without its
    status, which is then written (when it has one) through the status subresource, as a kubelet writes
    it; a Node is created as is. Returns the stored object."""
    obj = built.obj() if isinstance(built, PodBuilder | NodeBuilder) else dict(built)
    status = obj.pop("status", None) if obj.get("kind") == "Pod" else None
    created: Obj = store.create(obj)
    if status:
        created = store.update_status({**created, "status": status})
    return created


def host_port(port: int, ip: str = "", protocol: str = "") -> Obj:
    """A container port with the same host port (``hostIP`` / ``protocol`` when given)."""
    d: Obj = {"containerPort": port, "hostPort": port}
    if ip:
        d["hostIP"] = ip
    if protocol:
        d["protocol"] = protocol
    return d


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict[str, str]:
    """A taint."""
    return {"key": key, "value": value, "effect": effect}


def toleration(key: str = "", operator: str = "", value: str = "", effect: str = "") -> dict[str, str]:
    """A toleration (empty fields left out)."""
    d = {"key": key, "operator": operator, "value": value, "effect": effect}
    return {k: v for k, v in d.items() if v}


def expr(key: str, operator: str, *values: str) -> Obj:
    """A label / node selector requirement."""
    d: Obj = {"key": key, "operator": operator}
    if values:
        d["values"] = list(values)
    return d


def affinity_required(*terms: Mapping[str, Any]) -> Obj:
    """An affinity with required node selector ``terms``."""
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    }


def affinity_preferred(*weighted: tuple[int, Mapping[str, Any]]) -> Obj:
    """An affinity with preferred ``(weight, term)`` node selector pairs."""
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "preference": dict(t)} for w, t in weighted
            ]
        }
    }


def make_table(
    nodes: Iterable[Mapping[str, Any] | NodeBuilder],
    pods: Mapping[str, Sequence[PodInfo]] | Iterable[PodInfo] = (),
) -> NodeTable:
    """A NodeTable holding ``nodes`` and the pods counted on them: per node name (a mapping), or on each
    pod's ``spec.nodeName``."""
    table = NodeTable(capacity=4)
    for node in nodes:
        table.set_node(node.obj() if isinstance(node, NodeBuilder) else node)
    placed = pods.items() if isinstance(pods, Mapping) else ((p.node_name, [p]) for p in pods)
    for node_name, infos in placed:
        i = table.index[node_name]
        for info in infos:
            table.add_pod(i, info)
    return table


def scheduler_config(
    plugins: Mapping[str, Any] | None = None,
    plugin_args: Mapping[str, Mapping[str, Any]] | None = None,
    **profile: Any,
) -> SchedulerConfig:
    """A parsed KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) with one default-scheduler profile:
    ``plugins`` per extension point, ``plugin_args`` as its pluginConfig (plugin name -> args) and other
    profile fields as given."""
    prof: Obj = {"schedulerName": "default-scheduler"}
    if plugins is not None:
        prof["plugins"] = copy.deepcopy(dict(plugins))
    if plugin_args is not None:
        prof["pluginConfig"] = [{"name": name, "args": dict(args)} for name, args in plugin_args.items()]
    prof.update(profile)
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [prof],
        }
    )
