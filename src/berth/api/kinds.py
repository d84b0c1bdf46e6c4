"""Registry of the object kinds Berth knows (group, version, resource names, scope)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BUILTIN_GROUPS",
    "KindInfo",
    "UnknownKindError",
    "all_kinds",
    "is_builtin_group",
    "kind_by_plural_or_short",
    "lookup_kind",
]


class UnknownKindError(KeyError):
    """An apiVersion/kind or resource name that Berth does not know."""

    def __str__(self) -> str:
        """The plain message (KeyError would quote it)."""
        return str(self.args[0]) if self.args else "unknown kind"


@dataclass(frozen=True, slots=True)
class KindInfo:
    """Static facts about one kind: where it lives in the API and how it is addressed."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...]
    has_status: bool

    @property
    def api_version(self) -> str:
        """``"v1"`` for the core group, else ``"group/version"``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        """The lowercase singular resource name (``"pod"``)."""
        return self.kind.lower()


_X_K8S = "scheduling.x-k8s.io"
_SIGS_K8S = "scheduling.sigs.k8s.io"
_KOORD = "scheduling.koordinator.sh"
_RBAC = "rbac.authorization.k8s.io"
_ADMISSION = "admissionregistration.k8s.io"

BUILTIN_GROUPS: tuple[str, ...] = (
    "",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    _RBAC,
    "storage.k8s.io",
    _ADMISSION,
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
)
"""The groups kube-apiserver serves itself, in its discovery priority order (kube-aggregator's
``apiVersionPriorities``: the core group, then the named groups by descending group priority)."""


def is_builtin_group(group: str) -> bool:
    """Whether `group` is one of kube-apiserver's own groups (not a CRD's)."""
    return group in BUILTIN_GROUPS


_KINDS: tuple[KindInfo, ...] = (
    KindInfo("", "v1", "Pod", "pods", True, ("po",), True),
    KindInfo("", "v1", "Node", "nodes", False, ("no",), True),
    KindInfo("", "v1", "Namespace", "namespaces", False, ("ns",), True),
    KindInfo("", "v1", "Event", "events", True, ("ev",), False),
    # the same stored Events in the newer shape (berth.server.eventsv1 converts)
    KindInfo("events.k8s.io", "v1", "Event", "events", True, ("ev",), False),
    KindInfo("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, ("pc",), False),
    KindInfo("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("pdb",), True),
    KindInfo("apps", "v1", "ReplicaSet", "replicasets", True, ("rs",), True),
    KindInfo("apps", "v1", "Deployment", "deployments", True, ("deploy",), True),
    # -- built-in kinds that make pods (StatefulSet, DaemonSet) or feed scheduling (Service) --
    KindInfo("apps", "v1", "StatefulSet", "statefulsets", True, ("sts",), True),
    KindInfo("apps", "v1", "DaemonSet", "daemonsets", True, ("ds",), True),
    KindInfo("batch", "v1", "Job", "jobs", True, (), True),
    KindInfo("batch", "v1", "CronJob", "cronjobs", True, ("cj",), True),
    KindInfo("", "v1", "Service", "services", True, ("svc",), True),
    # -- built-in kinds stored as given (metadata validated; nothing runs them) --
    KindInfo("", "v1", "ConfigMap", "configmaps", True, ("cm",), False),
    KindInfo("", "v1", "Secret", "secrets", True, (), False),
    KindInfo("", "v1", "ServiceAccount", "serviceaccounts", True, ("sa",), False),
    KindInfo("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ("pvc",), True),
    KindInfo("", "v1", "PersistentVolume", "persistentvolumes", False, ("pv",), True),
    KindInfo("", "v1", "Endpoints", "endpoints", True, ("ep",), False),
    KindInfo("", "v1", "LimitRange", "limitranges", True, ("limits",), False),
    KindInfo("", "v1", "ResourceQuota", "resourcequotas", True, ("quota",), True),
    KindInfo("", "v1", "ReplicationController", "replicationcontrollers", True, ("rc",), True),
    KindInfo("", "v1", "PodTemplate", "podtemplates", True, (), False),
    KindInfo("apps", "v1", "ControllerRevision", "controllerrevisions", True, (), False),
    KindInfo(
        "autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, ("hpa",), True
    ),
    KindInfo("networking.k8s.io", "v1", "Ingress", "ingresses", True, ("ing",), True),
    KindInfo("networking.k8s.io", "v1", "IngressClass", "ingressclasses", False, (), False),
    KindInfo("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, ("netpol",), False),
    KindInfo("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True, (), False),
    KindInfo(_RBAC, "v1", "Role", "roles", True, (), False),
    KindInfo(_RBAC, "v1", "RoleBinding", "rolebindings", True, (), False),
    KindInfo(_RBAC, "v1", "ClusterRole", "clusterroles", False, (), False),
    KindInfo(_RBAC, "v1", "ClusterRoleBinding", "clusterrolebindings", False, (), False),
    KindInfo("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, ("sc",), False),
    KindInfo("storage.k8s.io", "v1", "CSIDriver", "csidrivers", False, (), False),
    KindInfo("storage.k8s.io", "v1", "CSINode", "csinodes", False, (), False),
    KindInfo("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", False, (), True),
    KindInfo("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", False, (), False),
    KindInfo(
        _ADMISSION,
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        False,
        (),
        False,
    ),
    KindInfo(
        _ADMISSION, "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", False, (), False
    ),
    KindInfo("coordination.k8s.io", "v1", "Lease", "leases", True, (), False),
    KindInfo(_KOORD, "v1alpha1", "Reservation", "reservations", False, (), True),
    KindInfo(_KOORD, "v1alpha1", "PodMigrationJob", "podmigrationjobs", False, ("pmj",), True),
    KindInfo(_X_K8S, "v1alpha1", "ElasticQuota", "elasticquotas", True, ("eq", "eqs"), True),
    KindInfo(_X_K8S, "v1alpha1", "PodGroup", "podgroups", True, ("pg", "pgs"), True),
    KindInfo(_SIGS_K8S, "v1alpha1", "ElasticQuota", "elasticquotas", True, ("eq", "eqs"), True),
    KindInfo(_SIGS_K8S, "v1alpha1", "PodGroup", "podgroups", True, ("pg", "pgs"), True),
    KindInfo("berth.dev", "v1alpha1", "Scenario", "scenarios", False, (), True),
)

_BY_GVK: dict[tuple[str, str], KindInfo] = {(k.api_version, k.kind): k for k in _KINDS}
_BY_NAME: dict[str, KindInfo] = {}
for _k in _KINDS:
    # first registration wins, so the preferred group (listed first) owns the short names
    for _name in (_k.plural, _k.singular, _k.kind, *_k.short_names):
        _BY_NAME.setdefault(_name, _k)
    for _name in (_k.plural, _k.singular):
        if _k.group:
            _BY_NAME.setdefault(f"{_name}.{_k.group}", _k)
            _BY_NAME.setdefault(f"{_name}.{_k.version}.{_k.group}", _k)


def lookup_kind(api_version: str, kind: str) -> KindInfo:
    """The KindInfo for an apiVersion/kind pair; raises UnknownKindError."""
    info = _BY_GVK.get((api_version, kind))
    if info is None:
        raise UnknownKindError(f'unknown kind "{kind}" in apiVersion "{api_version}"')
    return info


def all_kinds() -> tuple[KindInfo, ...]:
    """Every registered kind, in registration order."""
    return _KINDS


def kind_by_plural_or_short(name: str) -> KindInfo:
    """Resolve a kubectl-style resource name: plural, singular, Kind, short name, or ``plural.group``.

    Names shared by two groups resolve to the preferred (first registered) one, e.g.
    ``elasticquotas`` -> scheduling.x-k8s.io; qualify with the group to pick the other.
    """
    info = _BY_NAME.get(name) or _BY_NAME.get(name.lower())
    if info is None:
        raise UnknownKindError(f'the server doesn\'t have a resource type "{name}"')
    return info
