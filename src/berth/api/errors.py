"""Error types raised by the ``berth.api`` layer."""

from __future__ import annotations

__all__ = ["InvalidObjectError", "QuantityError"]


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
