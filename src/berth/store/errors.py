"""Typed store errors carrying the Kubernetes Status reason, HTTP code and the API server's wording."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "AlreadyExists",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "Gone",
    "InternalError",
    "Invalid",
    "NotFound",
    "ResourceExpired",
    "StoreError",
    "TooManyRequests",
    "qualified_resource",
]


def qualified_resource(plural: str, group: str) -> str:
    """`schema.GroupResource.String()`: ``pods`` or ``priorityclasses.scheduling.k8s.io``."""
    return f"{plural}.{group}" if group else plural


class StoreError(Exception):
    """Base of all store errors: `.reason` (metav1.StatusReason), `.code` (HTTP) and `.message`."""

    reason = "Unknown"
    code = 500

    def __init__(self, message: str, *, name: str = "", group: str = "", kind: str = "") -> None:
        """`message` is the full API-server message; name/group/kind fill metav1.StatusDetails."""
        super().__init__(message)
        self.message = message
        self.name = name
        self.group = group
        self.kind = kind

    def details(self) -> dict[str, Any]:
        """The metav1.StatusDetails dict (empty keys omitted)."""
        out: dict[str, Any] = {}
        if self.name:
            out["name"] = self.name
        if self.group:
            out["group"] = self.group
        if self.kind:
            out["kind"] = self.kind
        return out

    def to_status(self) -> dict[str, Any]:
        """The error as a wire-form metav1.Status object."""
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        details = self.details()
        if details:
            status["details"] = details
        return status


class NotFound(StoreError):
    """404: ``pods "x" not found``."""

    reason = "NotFound"
    code = 404

    @classmethod
    def of(cls, plural: str, group: str, name: str) -> NotFound:
        """The error for a missing object of resource `plural` in `group`."""
        return cls(
            f'{qualified_resource(plural, group)} "{name}" not found', name=name, group=group, kind=plural
        )


class AlreadyExists(StoreError):
    """409: ``pods "x" already exists``."""

    reason = "AlreadyExists"
    code = 409

    @classmethod
    def of(cls, plural: str, group: str, name: str) -> AlreadyExists:
        """The error for creating an object whose name is taken."""
        return cls(
            f'{qualified_resource(plural, group)} "{name}" already exists',
            name=name,
            group=group,
            kind=plural,
        )


class Conflict(StoreError):
    """409: optimistic-concurrency failure (stale resourceVersion)."""

    reason = "Conflict"
    code = 409

    @classmethod
    def of(cls, plural: str, group: str, name: str) -> Conflict:
        """The error for an update based on a stale resourceVersion."""
        return cls(
            f'Operation cannot be fulfilled on {qualified_resource(plural, group)} "{name}": the object has been '
            "modified; please apply your changes to the latest version and try again",
            name=name,
            group=group,
            kind=plural,
        )


class Invalid(StoreError):
    """422: ``Pod "x" is invalid: <field>: <message>``; `.causes` lists (field, message) pairs."""

    reason = "Invalid"
    code = 422

    def __init__(
        self,
        message: str,
        *,
        causes: Sequence[tuple[str, str]] = (),
        name: str = "",
        group: str = "",
        kind: str = "",
    ) -> None:
        """`causes` are (field path, message) pairs."""
        super().__init__(message, name=name, group=group, kind=kind)
        self.causes: list[tuple[str, str]] = list(causes)

    @classmethod
    def of(cls, kind: str, group: str, name: str, causes: Sequence[tuple[str, str]]) -> Invalid:
        """The error for an object failing validation (message formatted like apierrors.NewInvalid)."""
        qualified_kind = f"{kind}.{group}" if group else kind
        parts = [f"{f}: {m}" if f else m for f, m in causes]
        body = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
        return cls(
            f'{qualified_kind} "{name}" is invalid: {body}', causes=causes, name=name, group=group, kind=kind
        )

    def details(self) -> dict[str, Any]:
        """StatusDetails including the causes."""
        out = super().details()
        if self.causes:
            out["causes"] = [
                {"reason": "FieldValueInvalid", "message": m, "field": f} for f, m in self.causes
            ]
        return out


class TooManyRequests(StoreError):
    """429: e.g. an eviction blocked by a PodDisruptionBudget; `.retry_after_seconds` when known."""

    reason = "TooManyRequests"
    code = 429

    def __init__(self, message: str, *, retry_after_seconds: int = 0, **kw: str) -> None:
        """`retry_after_seconds` is reported in the Status details when > 0."""
        super().__init__(message, **kw)
        self.retry_after_seconds = retry_after_seconds

    def details(self) -> dict[str, Any]:
        """StatusDetails including retryAfterSeconds."""
        out = super().details()
        if self.retry_after_seconds > 0:
            out["retryAfterSeconds"] = self.retry_after_seconds
        return out


class Forbidden(StoreError):
    """403: ``pods "x" is forbidden: <why>``."""

    reason = "Forbidden"
    code = 403

    @classmethod
    def of(cls, plural: str, group: str, name: str, why: str) -> Forbidden:
        """The error for an operation refused by policy or admission."""
        if not plural:
            msg = f"forbidden: {why}"
        elif not name:
            msg = f"{qualified_resource(plural, group)} is forbidden: {why}"
        else:
            msg = f'{qualified_resource(plural, group)} "{name}" is forbidden: {why}'
        return cls(msg, name=name, group=group, kind=plural)


class Gone(StoreError):
    """410: the requested data is gone."""

    reason = "Gone"
    code = 410


class ResourceExpired(Gone):
    """410 with reason Expired: ``too old resource version: X (Y)`` for watches/lists from a compacted RV."""

    reason = "Expired"


class BadRequest(StoreError):
    """400: malformed request (e.g. an unsupported field selector)."""

    reason = "BadRequest"
    code = 400


class InternalError(StoreError):
    """500: ``Internal error occurred: <why>``."""

    reason = "InternalError"
    code = 500

    @classmethod
    def of(cls, why: str) -> InternalError:
        """The error wrapping an unexpected failure."""
        return cls(f"Internal error occurred: {why}")
