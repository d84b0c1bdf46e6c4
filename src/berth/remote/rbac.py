"""The RBAC objects `berth run` needs in a cluster: a ServiceAccount, a ClusterRole with exactly the verbs it uses,
a ClusterRoleBinding, and a Role and RoleBinding for its leader-election Lease.

Modelled on kube-scheduler's bootstrap policy (``system:kube-scheduler``): read (get, list, watch) of every kind
the informers follow, ``pods/binding`` create, ``pods/status`` patch, pod deletion for preemption, Event writes;
plus what Berth's own components write: the eviction API (descheduler, PodMigrationJob controller), pod
annotations (reservation allocation, explanations), Reservations (preemption, migration, garbage collection)
and the ``status`` of Reservations, ElasticQuotas, PodGroups and PodMigrationJobs; and, for the metrics
port's delegated authentication, TokenReviews and SubjectAccessReviews (``system:auth-delegator``). Of the
Lease, as client-go's ``LeaseLock`` uses it, ``create`` (which RBAC cannot restrict to a name) and ``get``/``update`` of the one named
Lease; kube-scheduler grants these cluster-wide with a note to scope them to ``kube-system``, so Berth's are a
Role in the Lease's namespace, as kube-controller-manager's ``system::leader-locking-*`` Role is.
"""

from __future__ import annotations

import re
from typing import Any

from berth.controlplane.leaderelection import DEFAULT_NAME, DEFAULT_NAMESPACE

__all__ = ["cluster_rules", "lease_rules", "rbac_objects"]

_RBAC = "rbac.authorization.k8s.io"
_READ = ["get", "list", "watch"]
_KOORD = "scheduling.koordinator.sh"
_PLUGINS = ("scheduling.x-k8s.io", "scheduling.sigs.k8s.io")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

Obj = dict[str, Any]


def _rule(groups: list[str], resources: list[str], verbs: list[str], names: list[str] | None = None) -> Obj:
    rule: Obj = {"apiGroups": list(groups), "resources": list(resources)}
    if names:
        rule["resourceNames"] = list(names)
    rule["verbs"] = list(verbs)
    return rule


def cluster_rules() -> list[Obj]:
    """The ClusterRole's rules: what `berth run` reads and writes at the cluster scope."""
    return [
        # Events (events.k8s.io/v1, or v1 where not served) of the scheduler, controllers and descheduler; a
        # repeated one is patched (its series or count)
        _rule(["", "events.k8s.io"], ["events"], ["create", "patch"]),
        # fundamental kinds, followed by the informers; Services, ReplicationControllers, ReplicaSets and
        # StatefulSets for PodTopologySpread's default constraints (their selectors), as kube-scheduler's
        _rule([""], ["nodes", "namespaces", "services", "replicationcontrollers"], _READ),
        # preemption deletes victims (and so may the PodMigrationJob controller); reservation allocation and
        # explanations annotate pods
        _rule([""], ["pods"], [*_READ, "delete", "patch"]),
        _rule([""], ["pods/binding", "pods/eviction"], ["create"]),
        # PodScheduled conditions, nominatedNodeName, the DisruptionTarget condition of a victim
        _rule([""], ["pods/status"], ["patch"]),
        _rule(["scheduling.k8s.io"], ["priorityclasses"], _READ),
        _rule(["policy"], ["poddisruptionbudgets"], _READ),
        # the workloads of pods (migration, descheduler, topology spread's default constraints)
        _rule(["apps"], ["replicasets", "deployments", "statefulsets"], _READ),
        # Reservations: made by preemption and migration, labelled by migration, ended by their controller
        _rule([_KOORD], ["reservations"], [*_READ, "create", "update", "delete"]),
        _rule([_KOORD], ["reservations/status"], ["update"]),
        # PodMigrationJobs: made by the descheduler, driven by their controller
        _rule([_KOORD], ["podmigrationjobs"], [*_READ, "create", "update"]),
        _rule([_KOORD], ["podmigrationjobs/status"], ["update"]),
        # scheduler-plugins' kinds, in their current and their older group
        _rule(list(_PLUGINS), ["elasticquotas", "podgroups"], _READ),
        _rule(list(_PLUGINS), ["elasticquotas/status", "podgroups/status"], ["patch"]),
        # who may read /metrics: the reviews of delegated authentication (kube's system:auth-delegator)
        _rule(["authentication.k8s.io"], ["tokenreviews"], ["create"]),
        _rule(["authorization.k8s.io"], ["subjectaccessreviews"], ["create"]),
    ]


def lease_rules(lease_name: str = DEFAULT_NAME) -> list[Obj]:
    """The Role's rules: the leader-election Lease `lease_name` (create cannot be limited to a name)."""
    return [
        _rule(["coordination.k8s.io"], ["leases"], ["create"]),
        _rule(["coordination.k8s.io"], ["leases"], ["get", "update"], [lease_name]),
    ]


def _check(field: str, value: str, pattern: re.Pattern[str], max_length: int, what: str) -> None:
    if len(value) > max_length or not pattern.match(value):
        raise ValueError(f'{field}: invalid value "{value}": must be a {what}')


def rbac_objects(namespace: str = DEFAULT_NAMESPACE, name: str = DEFAULT_NAME) -> list[Obj]:
    """ServiceAccount `namespace/name`, ClusterRole and ClusterRoleBinding `name`, and Role and RoleBinding
    `namespace/name` for the Lease `namespace/name` (`berth run`'s ``--leader-elect-resource-namespace`` and
    ``--leader-elect-resource-name``); ValueError naming the option for a name Kubernetes would refuse."""
    _check("--namespace", namespace, _DNS_LABEL, 63, "DNS-1123 label (lower case letters, digits and '-')")
    _check(
        "--name", name, _DNS_SUBDOMAIN, 253, "DNS-1123 subdomain (lower case letters, digits, '-' and '.')"
    )

    def meta(namespaced: bool) -> Obj:
        labels = {"app.kubernetes.io/name": "berth", "app.kubernetes.io/component": "scheduler"}
        return (
            {"name": name, "namespace": namespace, "labels": labels}
            if namespaced
            else {"name": name, "labels": labels}
        )

    def subjects() -> list[Obj]:
        return [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]

    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": meta(True),
        },
        {
            "apiVersion": f"{_RBAC}/v1",
            "kind": "ClusterRole",
            "metadata": meta(False),
            "rules": cluster_rules(),
        },
        {
            "apiVersion": f"{_RBAC}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": meta(False),
            "roleRef": {"apiGroup": _RBAC, "kind": "ClusterRole", "name": name},
            "subjects": subjects(),
        },
        {
            "apiVersion": f"{_RBAC}/v1",
            "kind": "Role",
            "metadata": meta(True),
            "rules": lease_rules(name),
        },
        {
            "apiVersion": f"{_RBAC}/v1",
            "kind": "RoleBinding",
            "metadata": meta(True),
            "roleRef": {"apiGroup": _RBAC, "kind": "Role", "name": name},
            "subjects": subjects(),
        },
    ]
