"""Admission defaults for StatefulSets, DaemonSets, Services and Secrets, as kube-apiserver applies them on every
write (`berth.api.statefulset.default_stateful_set`, `berth.api.daemonset.default_daemon_set`,
`berth.api.service.default_service`, `berth.api.secret.default_secret`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from berth.api.daemonset import default_daemon_set
from berth.api.secret import default_secret
from berth.api.service import default_service
from berth.api.statefulset import default_stateful_set
from berth.store.memory import admits_kinds, status_blind

__all__ = ["apps_admission"]

AdmissionFn = Callable[[str, dict[str, Any], dict[str, Any] | None], dict[str, Any]]

_DEFAULTS: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {
    ("apps/v1", "StatefulSet"): default_stateful_set,
    ("apps/v1", "DaemonSet"): default_daemon_set,
    ("v1", "Service"): default_service,
    ("v1", "Secret"): default_secret,
}


def apps_admission() -> AdmissionFn:
    """The admission function that defaults StatefulSets, DaemonSets, Services and Secrets (others pass
    unchanged)."""

    @admits_kinds(*(kind for _, kind in _DEFAULTS))
    @status_blind  # a status write keeps the stored spec, defaulted when it was written
    def admit(operation: str, obj: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        default = _DEFAULTS.get((str(obj.get("apiVersion")), str(obj.get("kind"))))
        if default is not None:
            default(obj)
        return obj

    return admit
