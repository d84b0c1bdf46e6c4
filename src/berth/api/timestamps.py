"""metav1.Time on the wire: RFC 3339 timestamps read and written as the API server does."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["format_time", "parse_time", "unix_seconds"]

_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def format_time(when: datetime) -> str:
    """RFC 3339 in whole seconds, UTC, as metav1.Time marshals."""
    return when.astimezone(UTC).strftime(_TIME_FORMAT)


def parse_time(text: object) -> datetime | None:
    """An RFC 3339 time (``Z`` or offset, optional fraction) as aware UTC, or None when absent/invalid."""
    if not isinstance(text, str) or not text:
        return None
    try:
        when = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    return when.astimezone(UTC)


def unix_seconds(text: object) -> float | None:
    """Unix seconds of an RFC 3339 timestamp (None when absent or malformed)."""
    when = parse_time(text)
    return None if when is None else when.timestamp()
