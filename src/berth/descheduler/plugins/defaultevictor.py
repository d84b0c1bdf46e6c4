"""DefaultEvictor: kubernetes-sigs/descheduler's ``pkg/framework/plugins/defaultevictor``.

The evictor plugin every profile has at ``filter`` and ``preEvictionFilter``. `DefaultEvictor.filter` says
whether a pod may be evicted at all: a pod annotated ``descheduler.alpha.kubernetes.io/evict`` always may;
with ``noEvictionPolicy: Mandatory`` a pod annotated ``descheduler.alpha.kubernetes.io/prefer-no-eviction``
never may; otherwise mirror, static and terminating pods are kept, and so is every pod that one of the
enabled *pod protections* or the other constraints (``labelSelector``, ``minReplicas``, ``minPodAge``) holds.

Pod protections, as upstream: ``PodsWithLocalStorage``, ``SystemCriticalPods`` (with ``priorityThreshold``),
``FailedBarePods`` and ``DaemonSetPods`` are on by default and may be turned off with
``podProtections.defaultDisabled``; ``PodsWithPVC`` (optionally only for
``podProtections.config.PodsWithPVC.protectedStorageClasses``), ``PodsWithoutPDB`` and
``PodsWithResourceClaims`` may be turned on with ``podProtections.extraEnabled``. The deprecated booleans
(``evictLocalStoragePods``, ``evictDaemonSetPods``, ``evictSystemCriticalPods``, ``evictFailedBarePods``,
``ignorePvcPods``, ``ignorePodsWithoutPDB``) are read when ``podProtections`` lists nothing and may not be
mixed with it. A bare pod (no ownerReferences) is never evictable, unless FailedBarePods is off and it has
failed.

`DefaultEvictor.pre_eviction_filter` checks, right before an eviction, ``nodeFit`` (the pod fits one of the
other Ready nodes, those matching ``nodeSelector`` when given) and ``namespaceLabelSelector`` (the pod's
namespace exists and its labels match).

Berth specifics: a pod's priority is ``spec.priority``, else the value of its ``priorityClassName`` when
that class exists (a pod with neither has no priority, as upstream's nil); ``priorityThreshold.name`` is
resolved when the plugin is built and an unknown class is an error then; an invalid ``nodeSelector`` is an
error when the args are read. PersistentVolumeClaims (needed only for ``protectedStorageClasses``) are looked
up in ``handle.extras[PVC_EXTRA]``, a mapping ``(namespace, name) -> PVC``; a claim that is not found there
keeps the pod, as upstream keeps a pod whose claim it cannot resolve.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.api.labels import LabelSelectorError, Selector, parse_selector
from berth.api.timestamps import unix_seconds
from berth.descheduler.args import ArgsReader, PolicyError
from berth.descheduler.framework import FILTER, PRE_EVICTION_FILTER, Handle, PluginSpec
from berth.descheduler.plugins.podselection import PREFER_NO_EVICTION
from berth.descheduler.view import is_node_ready, pod_phase
from berth.store.eviction import pdb_selector

__all__ = [
    "DAEMON_SET_PODS",
    "DEFAULT_POD_PROTECTIONS",
    "EVICT_ANNOTATION",
    "EXTRA_POD_PROTECTIONS",
    "FAILED_BARE_PODS",
    "MANDATORY",
    "NAME",
    "PODS_WITHOUT_PDB",
    "PODS_WITH_LOCAL_STORAGE",
    "PODS_WITH_PVC",
    "PODS_WITH_RESOURCE_CLAIMS",
    "PREFERRED",
    "PREFER_NO_EVICTION_ANNOTATION",
    "PVC_EXTRA",
    "SPECS",
    "SYSTEM_CRITICAL_PODS",
    "SYSTEM_CRITICAL_PRIORITY",
    "DefaultEvictor",
    "DefaultEvictorArgs",
    "has_prefer_no_eviction",
    "parse_args",
]

Obj = dict[str, Any]

NAME = "DefaultEvictor"
EVICT_ANNOTATION = "descheduler.alpha.kubernetes.io/evict"
PREFER_NO_EVICTION_ANNOTATION = PREFER_NO_EVICTION
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
SOURCE_ANNOTATION = "kubernetes.io/config.source"
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
PVC_EXTRA = "persistentVolumeClaims"
"""The `Handle.extras` key of the PersistentVolumeClaims: a mapping ``(namespace, name) -> PVC object``."""

PREFERRED = "Preferred"
MANDATORY = "Mandatory"

PODS_WITH_LOCAL_STORAGE = "PodsWithLocalStorage"
DAEMON_SET_PODS = "DaemonSetPods"
SYSTEM_CRITICAL_PODS = "SystemCriticalPods"
FAILED_BARE_PODS = "FailedBarePods"
PODS_WITH_PVC = "PodsWithPVC"
PODS_WITHOUT_PDB = "PodsWithoutPDB"
PODS_WITH_RESOURCE_CLAIMS = "PodsWithResourceClaims"

DEFAULT_POD_PROTECTIONS = (PODS_WITH_LOCAL_STORAGE, SYSTEM_CRITICAL_PODS, FAILED_BARE_PODS, DAEMON_SET_PODS)
"""Protections on unless ``podProtections.defaultDisabled`` lists them (upstream's order)."""
EXTRA_POD_PROTECTIONS = (PODS_WITH_PVC, PODS_WITHOUT_PDB, PODS_WITH_RESOURCE_CLAIMS)
"""Protections off unless ``podProtections.extraEnabled`` lists them."""

_DEPRECATED_FLAGS = (
    "evictLocalStoragePods",
    "evictDaemonSetPods",
    "evictSystemCriticalPods",
    "ignorePvcPods",
    "evictFailedBarePods",
    "ignorePodsWithoutPDB",
)


def has_prefer_no_eviction(pod: Mapping[str, Any]) -> bool:
    """Whether the pod carries the ``prefer-no-eviction`` annotation (whatever its value)."""
    return PREFER_NO_EVICTION_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})


@dataclass(frozen=True)
class DefaultEvictorArgs:
    """DefaultEvictorArgs, upstream's fields and defaults (all off / empty)."""

    node_selector: str = ""
    label_selector: Selector | None = None
    """None when absent or empty (no constraint)."""
    namespace_label_selector: Selector | None = None
    """None when absent or empty (no constraint)."""
    priority_threshold_value: int | None = None
    priority_threshold_name: str = ""
    node_fit: bool = False
    min_replicas: int = 0
    min_pod_age: float | None = None
    """Seconds (``minPodAge`` is a Go duration)."""
    no_eviction_policy: str = ""
    extra_enabled: tuple[str, ...] = ()
    default_disabled: tuple[str, ...] = ()
    protected_storage_classes: tuple[str, ...] = ()
    evict_local_storage_pods: bool = False
    evict_daemon_set_pods: bool = False
    evict_system_critical_pods: bool = False
    ignore_pvc_pods: bool = False
    ignore_pods_without_pdb: bool = False
    evict_failed_bare_pods: bool = False

    @property
    def pod_protections(self) -> tuple[str, ...]:
        """The effective protections: from ``podProtections`` when it lists anything, else from the
        deprecated booleans (upstream's ``getEffectivePodProtections``)."""
        if self.extra_enabled or self.default_disabled:
            kept = tuple(p for p in DEFAULT_POD_PROTECTIONS if p not in self.default_disabled)
            return kept + self.extra_enabled
        out: list[str] = []
        if not self.evict_local_storage_pods:
            out.append(PODS_WITH_LOCAL_STORAGE)
        if not self.evict_daemon_set_pods:
            out.append(DAEMON_SET_PODS)
        if not self.evict_system_critical_pods:
            out.append(SYSTEM_CRITICAL_PODS)
        if not self.evict_failed_bare_pods:
            out.append(FAILED_BARE_PODS)
        if self.ignore_pvc_pods:
            out.append(PODS_WITH_PVC)
        if self.ignore_pods_without_pdb:
            out.append(PODS_WITHOUT_PDB)
        return tuple(out)


def _non_empty(selector: Selector | None) -> Selector | None:
    return None if selector is None or selector.is_everything() else selector


def _read_protections(
    reader: ArgsReader,
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], list[tuple[str, str]]]:
    """extraEnabled, defaultDisabled, the protected storage classes' names and the empty-name errors."""
    protections = reader.child("podProtections")
    extra = protections.strings("extraEnabled")
    disabled = protections.strings("defaultDisabled")
    classes: list[str] = []
    empty: list[tuple[str, str]] = []
    config = protections.child("config")
    pvc = config.child(PODS_WITH_PVC)
    raw_classes = pvc.value("protectedStorageClasses")
    if raw_classes is not None:
        if not isinstance(raw_classes, list):
            raise pvc.error("protectedStorageClasses", "must be a list of {name} objects")
        for i, item in enumerate(raw_classes):
            item_reader = ArgsReader(item, f"{pvc.where}.protectedStorageClasses[{i}]")
            sc = item_reader.string("name")
            item_reader.finish()
            classes.append(sc)
            if not sc:
                empty.append(
                    (
                        f"podProtections.config.PodsWithPVC.protectedStorageClasses[{i}].name",
                        f"PodProtections.Config.PodsWithPVC.ProtectedStorageClasses[{i}] name cannot be empty",
                    )
                )
    pvc.finish()
    config.finish()
    protections.finish()
    return extra, disabled, tuple(classes), empty


def _raise_all(reader: ArgsReader, errors: Sequence[tuple[str, str]]) -> None:
    """Raise the validation errors (upstream aggregates them all), if any."""
    if len(errors) == 1:
        raise reader.error(*errors[0])
    if errors:
        raise PolicyError("; ".join(str(reader.error(f, m)) for f, m in errors))


def parse_args(reader: ArgsReader) -> DefaultEvictorArgs:
    """Read and validate DefaultEvictorArgs (upstream's ``ValidateDefaultEvictorArgs``)."""
    node_selector = reader.string("nodeSelector")
    label_selector = _non_empty(reader.label_selector("labelSelector"))
    namespace_label_selector = _non_empty(reader.label_selector("namespaceLabelSelector"))
    threshold = reader.child("priorityThreshold")
    threshold_value = threshold.integer("value")
    threshold_name = threshold.string("name")
    threshold.finish()
    node_fit = reader.flag("nodeFit")
    min_replicas = reader.integer("minReplicas", 0, minimum=0) or 0
    min_pod_age = reader.duration("minPodAge")
    no_eviction_policy = reader.string("noEvictionPolicy")
    extra, disabled, classes, empty_classes = _read_protections(reader)
    flags = {name: reader.flag(name) for name in _DEPRECATED_FLAGS}
    reader.finish()

    errors: list[tuple[str, str]] = []
    if threshold_value is not None and threshold_name:
        errors.append(
            (
                "priorityThreshold",
                "priority threshold misconfigured, only one of priorityThreshold fields can be set",
            )
        )
    if threshold_value is not None and threshold_value > SYSTEM_CRITICAL_PRIORITY:
        errors.append(
            (
                "priorityThreshold.value",
                f"priority threshold can't be greater than {SYSTEM_CRITICAL_PRIORITY}",
            )
        )
    if no_eviction_policy and no_eviction_policy not in (PREFERRED, MANDATORY):
        errors.append(("noEvictionPolicy", 'noEvictionPolicy accepts only ["Preferred" "Mandatory"] values'))
    if node_selector:
        try:
            parse_selector(node_selector)
        except LabelSelectorError as e:
            errors.append(("nodeSelector", f"invalid node selector {node_selector!r}: {e}"))
    if any(flags.values()) and (extra or disabled):
        errors.append(
            (
                "podProtections",
                "cannot use Deprecated fields alongside PodProtections.ExtraEnabled or "
                "PodProtections.DefaultDisabled",
            )
        )
    if extra or disabled:
        for i, p in enumerate(extra):
            if p not in EXTRA_POD_PROTECTIONS:
                errors.append(
                    (
                        f"podProtections.extraEnabled[{i}]",
                        f"invalid pod protection policy in ExtraEnabled: {_go_quote(p)}. "
                        f"Valid options are: [{' '.join(EXTRA_POD_PROTECTIONS)}]",
                    )
                )
        for i, p in enumerate(disabled):
            if p not in DEFAULT_POD_PROTECTIONS:
                errors.append(
                    (
                        f"podProtections.defaultDisabled[{i}]",
                        f"invalid pod protection policy in DefaultDisabled: {_go_quote(p)}. "
                        f"Valid options are: [{' '.join(DEFAULT_POD_PROTECTIONS)}]",
                    )
                )
        if len(set(disabled)) != len(disabled):
            errors.append(
                (
                    "podProtections.defaultDisabled",
                    "PodProtections.DefaultDisabled contains duplicate entries",
                )
            )
        if len(set(extra)) != len(extra):
            errors.append(
                ("podProtections.extraEnabled", "PodProtections.ExtraEnabled contains duplicate entries")
            )
        if PODS_WITH_PVC in extra:
            errors.extend(empty_classes)
    _raise_all(reader, errors)
    return DefaultEvictorArgs(
        node_selector=node_selector,
        label_selector=label_selector,
        namespace_label_selector=namespace_label_selector,
        priority_threshold_value=threshold_value,
        priority_threshold_name=threshold_name,
        node_fit=node_fit,
        min_replicas=min_replicas,
        min_pod_age=min_pod_age,
        no_eviction_policy=no_eviction_policy,
        extra_enabled=extra,
        default_disabled=disabled,
        protected_storage_classes=classes,
        evict_local_storage_pods=flags["evictLocalStoragePods"],
        evict_daemon_set_pods=flags["evictDaemonSetPods"],
        evict_system_critical_pods=flags["evictSystemCriticalPods"],
        ignore_pvc_pods=flags["ignorePvcPods"],
        ignore_pods_without_pdb=flags["ignorePodsWithoutPDB"],
        evict_failed_bare_pods=flags["evictFailedBarePods"],
    )


def _go_quote(s: str) -> str:
    """Go's %q of a plain string."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---- pod facts ---------------------------------------------------------------------------------------------

Constraint = Callable[[Obj], str | None]
"""A check: None when the pod passes, else why it is kept."""


def _meta(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    return pod.get("metadata") or {}


def _volumes(pod: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    return (pod.get("spec") or {}).get("volumes") or ()


def _owner_refs(pod: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """``metadata.ownerReferences`` as stored (not copied; empty when unset)."""
    return (pod.get("metadata") or {}).get("ownerReferences") or ()


def _has_local_storage(pod: Obj) -> bool:
    return any(v.get("hostPath") is not None or v.get("emptyDir") is not None for v in _volumes(pod))


def _has_pvc(pod: Obj) -> bool:
    return any(v.get("persistentVolumeClaim") is not None for v in _volumes(pod))


def _is_daemon_set_pod(pod: Obj) -> bool:
    return any(ref.get("kind") == "DaemonSet" for ref in _owner_refs(pod))


def _is_mirror(pod: Obj) -> bool:
    return MIRROR_ANNOTATION in (_meta(pod).get("annotations") or {})


def _is_static(pod: Obj) -> bool:
    annotations = _meta(pod).get("annotations") or {}
    return SOURCE_ANNOTATION in annotations and annotations[SOURCE_ANNOTATION] != "api"


def _is_terminating(pod: Obj) -> bool:
    return _meta(pod).get("deletionTimestamp") is not None


class DefaultEvictor:
    """The DefaultEvictor plugin over one cycle's view."""

    name = NAME

    def __init__(self, args: DefaultEvictorArgs, handle: Handle) -> None:
        """Compile the enabled protections and constraints; resolves ``priorityThreshold.name`` (an unknown
        PriorityClass is a PolicyError)."""
        self.args = args
        self.handle = handle
        self.view = handle.view
        self._threshold = self._resolve_threshold()
        self._owner_counts: dict[str, int] | None = None
        self._pdb_selectors: dict[int, Selector | None] = {}
        self._ready_nodes: list[Obj] | None = None
        self.protections = args.pod_protections
        self.constraints: list[Constraint] = self._constraints()
        enabled = set(self.protections)
        # The fast path of `filter`: the common protections inline, the rest as `_rare` checks.
        self._critical = SYSTEM_CRITICAL_PODS in enabled
        self._failed_bare_ok = FAILED_BARE_PODS not in enabled
        self._local = PODS_WITH_LOCAL_STORAGE in enabled
        self._daemon_sets = DAEMON_SET_PODS in enabled
        self._any_pvc = PODS_WITH_PVC in enabled and not args.protected_storage_classes
        common = {
            self._check_system_critical,
            self._check_priority_threshold,
            _check_bare,
            _check_bare_not_failed,
            _check_local_storage,
            _check_daemon_set,
            _check_pvc,
        }
        self._rare = [c for c in self.constraints if c not in common]

    # ---- construction --------------------------------------------------------------------------------------

    def _resolve_threshold(self) -> int:
        """The priority threshold (upstream's load-time default: SystemCriticalPriority)."""
        args = self.args
        if args.priority_threshold_value is not None:
            return args.priority_threshold_value
        if not args.priority_threshold_name:
            return SYSTEM_CRITICAL_PRIORITY
        value = self.view.priority_class_value(args.priority_threshold_name)
        where = f'profile "{self.handle.profile}": plugin "{NAME}": args.priorityThreshold.name'
        if value is None:
            raise PolicyError(
                f"{where}: unable to get priority value from the priority class: "
                f'priorityclasses.scheduling.k8s.io "{args.priority_threshold_name}" not found'
            )
        if value > SYSTEM_CRITICAL_PRIORITY:
            raise PolicyError(f"{where}: priority threshold can't be greater than {SYSTEM_CRITICAL_PRIORITY}")
        return value

    def _constraints(self) -> list[Constraint]:
        enabled = set(self.protections)
        out: list[Constraint] = []
        if SYSTEM_CRITICAL_PODS in enabled:
            out.append(self._check_system_critical)
            out.append(self._check_priority_threshold)
        if FAILED_BARE_PODS in enabled:
            out.append(_check_bare)
        else:
            out.append(_check_bare_not_failed)
        if PODS_WITH_LOCAL_STORAGE in enabled:
            out.append(_check_local_storage)
        if DAEMON_SET_PODS in enabled:
            out.append(_check_daemon_set)
        if PODS_WITH_PVC in enabled:
            out.append(self._check_storage_classes if self.args.protected_storage_classes else _check_pvc)
        if PODS_WITHOUT_PDB in enabled:
            out.append(self._check_pdb)
        if PODS_WITH_RESOURCE_CLAIMS in enabled:
            out.append(_check_resource_claims)
        if self.args.label_selector is not None:
            out.append(self._check_labels)
        if self.args.min_replicas > 1:
            out.append(self._check_min_replicas)
        if self.args.min_pod_age is not None:
            out.append(self._check_min_pod_age)
        return out

    # ---- constraints -----------------------------------------------------------------------------------------

    def priority(self, pod: Mapping[str, Any]) -> int | None:
        """The pod's priority: ``spec.priority``, else its existing class's value, else None."""
        return self.view.declared_priority(pod)

    def _check_system_critical(self, pod: Obj) -> str | None:
        priority = self.priority(pod)
        if priority is not None and priority >= SYSTEM_CRITICAL_PRIORITY:
            return "pod has system critical priority and is protected against eviction"
        return None

    def _check_priority_threshold(self, pod: Obj) -> str | None:
        priority = self.priority(pod)
        if priority is not None and priority >= self._threshold:
            return "pod has higher priority than specified priority class threshold"
        return None

    def _check_storage_classes(self, pod: Obj) -> str | None:
        claims: Mapping[tuple[str, str], Obj] = self.handle.extras.get(PVC_EXTRA) or {}
        namespace = str(_meta(pod).get("namespace") or "")
        protected = self.args.protected_storage_classes
        referred: list[str] = []
        for volume in _volumes(pod):
            source = volume.get("persistentVolumeClaim")
            if source is None:
                continue
            claim_name = str(source.get("claimName") or "")
            claim = claims.get((namespace, claim_name))
            if claim is None:
                return (
                    f'failed to get persistent volume claim "{namespace}"/"{claim_name}": '
                    f'persistentvolumeclaim "{claim_name}" not found'
                )
            storage_class = (claim.get("spec") or {}).get("storageClassName")
            if not storage_class:
                return f'failed to resolve storage class for pod "{namespace}"/"{claim_name}"'
            referred.append(str(storage_class))
        for storage_class in referred:
            if storage_class in protected:
                return f'pod using protected storage class "{storage_class}"'
        return None

    def _check_pdb(self, pod: Obj) -> str | None:
        meta = _meta(pod)
        labels = meta.get("labels") or {}
        for pdb in self.view.pdbs_in(str(meta.get("namespace") or "")):
            key = id(pdb)
            if key not in self._pdb_selectors:
                self._pdb_selectors[key] = pdb_selector(pdb)
            selector = self._pdb_selectors[key]
            if selector is not None and selector.matches(labels):
                return None
        return "pod does not have a PodDisruptionBudget and is protected against eviction"

    def _check_labels(self, pod: Obj) -> str | None:
        selector = self.args.label_selector
        assert selector is not None
        if not selector.matches(_meta(pod).get("labels") or {}):
            return "pod labels do not match the labelSelector filter in the policy parameter"
        return None

    def _owner_index(self) -> dict[str, int]:
        """How many pods (of the whole cluster) name each owner uid."""
        if self._owner_counts is None:
            counts: dict[str, int] = {}
            for p in self.view.pods:
                for uid in {str(ref.get("uid") or "") for ref in _owner_refs(p)}:
                    counts[uid] = counts.get(uid, 0) + 1
            self._owner_counts = counts
        return self._owner_counts

    def _check_min_replicas(self, pod: Obj) -> str | None:
        refs = _owner_refs(pod)
        if len(refs) != 1:
            return None
        count = self._owner_index().get(str(refs[0].get("uid") or ""), 0)
        if count < self.args.min_replicas:
            return f"owner has {count} replicas which is less than minReplicas of {self.args.min_replicas}"
        return None

    def _check_min_pod_age(self, pod: Obj) -> str | None:
        min_age = self.args.min_pod_age
        assert min_age is not None
        started = unix_seconds((pod.get("status") or {}).get("startTime"))
        if started is None or self.view.now - started < min_age:
            return f"pod age is not older than MinPodAge: {min_age:g} seconds"
        return None

    # ---- the extension points ----------------------------------------------------------------------------

    def reasons(self, pod: Obj) -> list[str]:
        """Every reason the Filter keeps the pod (empty: it may be evicted)."""
        annotations = _meta(pod).get("annotations") or {}
        if EVICT_ANNOTATION in annotations:
            return []
        if self.args.no_eviction_policy == MANDATORY and PREFER_NO_EVICTION_ANNOTATION in annotations:
            return ["pod has the prefer-no-eviction annotation and noEvictionPolicy is Mandatory"]
        out: list[str] = []
        if _is_mirror(pod):
            out.append("pod is a mirror pod")
        if _is_static(pod):
            out.append("pod is a static pod")
        if _is_terminating(pod):
            out.append("pod is terminating")
        for check in self.constraints:
            why = check(pod)
            if why is not None:
                out.append(why)
        return out

    def filter(self, pod: Obj) -> bool:
        """Whether the pod may be evicted at all (upstream's ``Filter``)."""
        meta = _meta(pod)
        annotations = meta.get("annotations") or {}
        if annotations:
            if EVICT_ANNOTATION in annotations:
                return True
            if self.args.no_eviction_policy == MANDATORY and PREFER_NO_EVICTION_ANNOTATION in annotations:
                return False
            if MIRROR_ANNOTATION in annotations:
                return False
            if SOURCE_ANNOTATION in annotations and annotations[SOURCE_ANNOTATION] != "api":
                return False
        if meta.get("deletionTimestamp") is not None:
            return False
        refs = meta.get("ownerReferences")
        if not refs:
            if not self._failed_bare_ok or pod_phase(pod) != "Failed":
                return False
        elif self._daemon_sets and any(ref.get("kind") == "DaemonSet" for ref in refs):
            return False
        spec = pod.get("spec") or {}
        if self._critical:
            priority = spec.get("priority")
            if priority is None and spec.get("priorityClassName"):
                priority = self.view.priority_class_value(str(spec["priorityClassName"]))
            # the threshold is at most SystemCriticalPriority: one comparison covers both checks
            if priority is not None and int(priority) >= self._threshold:
                return False
        volumes = spec.get("volumes")
        if volumes:
            if self._local and any(
                v.get("hostPath") is not None or v.get("emptyDir") is not None for v in volumes
            ):
                return False
            if self._any_pvc and any(v.get("persistentVolumeClaim") is not None for v in volumes):
                return False
        return all(check(pod) is None for check in self._rare)

    def ready_nodes(self) -> list[Obj]:
        """The Ready nodes (matching ``nodeSelector`` when given) that NodeFit considers."""
        if self._ready_nodes is None:
            selector = parse_selector(self.args.node_selector) if self.args.node_selector else None
            self._ready_nodes = [
                n
                for n in self.view.all_nodes
                if is_node_ready(n)
                and (selector is None or selector.matches(n["metadata"].get("labels") or {}))
            ]
        return self._ready_nodes

    def pre_eviction_filter(self, pod: Obj) -> bool:
        """Whether the pod may be evicted now: NodeFit and the namespace label selector
        (upstream's ``PreEvictionFilter``)."""
        if self.args.node_fit and not self.handle.fit.fits_any_other_node(pod, self.ready_nodes()):
            return False
        selector = self.args.namespace_label_selector
        if selector is None:
            return True
        namespace = self.view.namespaces.get(str(_meta(pod).get("namespace") or ""))
        if namespace is None:
            return False
        return selector.matches(namespace["metadata"].get("labels") or {})


def _check_bare(pod: Obj) -> str | None:
    if not _owner_refs(pod):
        return "pod does not have any ownerRefs"
    return None


def _check_bare_not_failed(pod: Obj) -> str | None:
    if not _owner_refs(pod) and pod_phase(pod) != "Failed":
        return "pod does not have any ownerRefs and is not in failed phase"
    return None


def _check_local_storage(pod: Obj) -> str | None:
    if _has_local_storage(pod):
        return "pod has local storage and is protected against eviction"
    return None


def _check_daemon_set(pod: Obj) -> str | None:
    if _is_daemon_set_pod(pod):
        return "daemonset pods are protected against eviction"
    return None


def _check_pvc(pod: Obj) -> str | None:
    if _has_pvc(pod):
        return "pod with PVC is protected against eviction"
    return None


def _check_resource_claims(pod: Obj) -> str | None:
    if (pod.get("spec") or {}).get("resourceClaims"):
        return "pod has ResourceClaims and descheduler is configured to protect ResourceClaims pods"
    return None


def _build(args: DefaultEvictorArgs, handle: Handle) -> DefaultEvictor:
    return DefaultEvictor(args, handle)


SPECS: tuple[PluginSpec, ...] = (
    PluginSpec(NAME, frozenset((FILTER, PRE_EVICTION_FILTER)), parse_args, _build),
)
