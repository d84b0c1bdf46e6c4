"""Registry of the object kinds Berth knows (group, version, resource names, scope)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KindInfo", "UnknownKindError", "all_kinds", "kind_by_plural_or_short", "lookup_kind"]


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

_KINDS: tuple[KindInfo, ...] = (
    KindInfo("", "v1", "Pod", "pods", True, ("po",), True),
    KindInfo("", "v1", "Node", "nodes", False, ("no",), True),
    KindInfo("", "v1", "Namespace", "namespaces", False, ("ns",), True),
    KindInfo("", "v1", "Event", "events", True, ("ev",), False),
    KindInfo("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, ("pc",), False),
    KindInfo("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("pdb",), True),
    KindInfo("apps", "v1", "ReplicaSet", "replicasets", True, ("rs",), True),
    KindInfo("apps", "v1", "Deployment", "deployments", True, ("deploy",), True),
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
