"""Error types of the Kubernetes API: status errors (one class per metav1.StatusReason) and bad manifests.

`StatusError` and its subclasses carry the HTTP code, the Status ``reason`` and the API server's wording;
every store raises them and every layer catches them by type. `error_from_status` turns a wire-form
``Status`` back into the matching exception, so the server and a remote client each translate in one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "AlreadyExists",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "Gone",
    "InternalError",
    "Invalid",
    "InvalidObjectError",
    "NotFound",
    "QuantityError",
    "RequestEntityTooLarge",
    "ResourceExpired",
    "ResourceVersionTooLarge",
    "StatusError",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "error_from_status",
    "qualified_resource",
]


class InvalidObjectError(ValueError):
    """An object failed validation.

    ``str()`` renders as ``[<source>: ]<kind> "<name>": <path>: <message>`` where *name* is
    ``"ns/name"`` for namespaced objects and *message* follows apimachinery's field.Error style.
    """

    def __init__(
        self, kind: str, name: str, path: str, value: object, message: str, *, source: str | None = None
    ) -> None:
        """Record the offending object (kind, name), field path, bad value and message."""
        self.kind = kind
        self.name = name
        self.path = path
        self.value = value
        self.message = message
        self.source = source
        super().__init__(self._render())

    def _render(self) -> str:
        text = f'{self.kind} "{self.name}": {self.path}: {self.message}'
        return f"{self.source}: {text}" if self.source else text

    def with_source(self, source: str) -> InvalidObjectError:
        """Return a copy of this error that names *source* (e.g. a manifest file)."""
        return InvalidObjectError(self.kind, self.name, self.path, self.value, self.message, source=source)

    def __str__(self) -> str:
        """Render the full error line."""
        return self._render()

    def __reduce__(self) -> tuple[object, ...]:
        """Support pickling (keyword-only ``source``)."""
        return (_rebuild, (self.kind, self.name, self.path, self.value, self.message, self.source))


def _rebuild(
    kind: str, name: str, path: str, value: object, message: str, source: str | None
) -> InvalidObjectError:
    return InvalidObjectError(kind, name, path, value, message, source=source)


class QuantityError(ValueError):
    """A string (or number) is not a valid Kubernetes resource quantity; ``.value`` holds it."""

    def __init__(self, value: object, reason: str = "") -> None:
        """Record the bad *value* and an optional *reason*."""
        self.value = value
        self.reason = reason
        text = f"invalid quantity {_quote(value)}"
        super().__init__(f"{text}: {reason}" if reason else text)


def _quote(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def qualified_resource(plural: str, group: str) -> str:
    """`schema.GroupResource.String()`: ``pods`` or ``priorityclasses.scheduling.k8s.io``."""
    return f"{plural}.{group}" if group else plural


class StatusError(Exception):
    """A Kubernetes API status error: `.reason` (metav1.StatusReason), `.code` (HTTP) and `.message`.

    Raised by every store (embedded, served, remote) and caught by type in every layer, plugins included.
    """

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


class NotFound(StatusError):
    """404: ``pods "x" not found``."""

    reason = "NotFound"
    code = 404

    @classmethod
    def of(cls, plural: str, group: str, name: str) -> NotFound:
        """The error for a missing object of resource `plural` in `group`."""
        return cls(
            f'{qualified_resource(plural, group)} "{name}" not found', name=name, group=group, kind=plural
        )


class AlreadyExists(StatusError):
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


class Conflict(StatusError):
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


class Invalid(StatusError):
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


class TooManyRequests(StatusError):
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


class Forbidden(StatusError):
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


class Gone(StatusError):
    """410: the requested data is gone."""

    reason = "Gone"
    code = 410


class ResourceExpired(Gone):
    """410 with reason Expired: ``too old resource version: X (Y)`` for watches/lists from a compacted RV."""

    reason = "Expired"


class ResourceVersionTooLarge(StatusError):
    """504 Timeout: a read asked for a resourceVersion the store has not reached (kube's
    ``NewTooLargeResourceVersionError``: retry after a second)."""

    reason = "Timeout"
    code = 504

    @classmethod
    def of(cls, asked: int, current: int) -> ResourceVersionTooLarge:
        """The error for a read of `asked` when the store is at `current`."""
        return cls(f"Timeout: Too large resource version: {asked}, current: {current}")

    def details(self) -> dict[str, Any]:
        """The StatusDetails: kube's ResourceVersionTooLarge cause and a retry after 1 s."""
        return {
            **super().details(),
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        }


class BadRequest(StatusError):
    """400: malformed request (e.g. an unsupported field selector)."""

    reason = "BadRequest"
    code = 400


class Unauthorized(StatusError):
    """401: the request carries no valid credentials."""

    reason = "Unauthorized"
    code = 401


class UnsupportedMediaType(StatusError):
    """415: the request body's Content-Type is not one the endpoint accepts."""

    reason = "UnsupportedMediaType"
    code = 415

    @classmethod
    def of(cls, accepted: tuple[str, ...]) -> UnsupportedMediaType:
        """kube's negotiation error listing the `accepted` media types."""
        return cls(
            "the body of the request was in an unknown format - accepted media types include: "
            + ", ".join(accepted)
        )


class RequestEntityTooLarge(StatusError):
    """413: ``Request entity too large: <why>``."""

    reason = "RequestEntityTooLarge"
    code = 413

    @classmethod
    def of(cls, why: str) -> RequestEntityTooLarge:
        """The error for an oversized request."""
        return cls(f"Request entity too large: {why}")


class InternalError(StatusError):
    """500: ``Internal error occurred: <why>``."""

    reason = "InternalError"
    code = 500

    @classmethod
    def of(cls, why: str) -> InternalError:
        """The error wrapping an unexpected failure."""
        return cls(f"Internal error occurred: {why}")


_BY_REASON: dict[str, type[StatusError]] = {
    cls.reason: cls
    for cls in (
        NotFound,
        AlreadyExists,
        Conflict,
        Invalid,
        TooManyRequests,
        Forbidden,
        Gone,
        ResourceExpired,
        BadRequest,
        InternalError,
        Unauthorized,
        RequestEntityTooLarge,
        UnsupportedMediaType,
    )
}


def error_from_status(status: Mapping[str, Any], code: int = 0) -> StatusError:
    """The exception for a wire-form metav1.Status (its ``reason``, else its HTTP ``code``)."""
    message = str(status.get("message") or "")
    details = status.get("details") or {}
    kw = {
        "name": str(details.get("name") or ""),
        "group": str(details.get("group") or ""),
        "kind": str(details.get("kind") or ""),
    }
    http = int(status.get("code") or code or 0)
    cls = _BY_REASON.get(str(status.get("reason") or ""))
    if cls is None:
        cls = next(
            (c for c in _BY_REASON.values() if c.code == http and c is not ResourceExpired), StatusError
        )
    if cls is Invalid:
        causes = [
            (str(c.get("field") or ""), str(c.get("message") or "")) for c in details.get("causes") or ()
        ]
        return Invalid(message, causes=causes, **kw)
    if cls is TooManyRequests:
        return TooManyRequests(message, retry_after_seconds=int(details.get("retryAfterSeconds") or 0), **kw)
    err = cls(message, **kw)
    if cls is StatusError:
        err.code = http or 500
        err.reason = str(status.get("reason") or "Unknown")
    return err
