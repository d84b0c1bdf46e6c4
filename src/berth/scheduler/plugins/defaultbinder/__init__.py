"""DefaultBinder: writes the pod's binding through the handle."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.errors import StatusError
from berth.scheduler.framework import (
    BINDING_ANNOTATIONS_KEY,
    Code,
    CycleState,
    Handle,
    PodInfo,
    Registry,
    Status,
)

NAME = "DefaultBinder"
_SUCCESS = Status()


class DefaultBinder:
    """Binds the pod to the chosen node (the pods/binding subresource); failures become an Error status."""

    name = NAME

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Bind ``pod`` to ``node_name``."""
        try:
            self._handle.bind_pod(pod, node_name, state.get(BINDING_ANNOTATIONS_KEY))
        except StatusError as exc:  # the API refused the binding: kube reports it as an Error status
            return Status(Code.ERROR, (str(exc),))
        return _SUCCESS


def new(args: Mapping[str, Any], handle: Handle) -> DefaultBinder:
    """Factory (the plugin takes no args)."""
    return DefaultBinder(handle)


def register(registry: Registry) -> None:
    """Add DefaultBinder to ``registry``."""
    registry.register(NAME, new)


__all__ = ["NAME", "DefaultBinder", "new", "register"]
