"""HTTP media types as the API server reads them: a Content-Type's type, and an Accept header's ranges."""

from __future__ import annotations

__all__ = ["JSON_RANGES", "accepted", "media_params", "media_type"]

JSON_RANGES = frozenset({"application/json", "application/*", "*/*"})
"""Accept ranges a JSON answer satisfies."""


def media_type(content_type: str) -> str:
    """The ``type/subtype`` of a Content-Type (or one media range), lower-cased, parameters dropped."""
    return content_type.split(";", 1)[0].strip().lower()


def media_params(media_range: str) -> tuple[str, dict[str, str]]:
    """``type/subtype`` and the parameters (names lower-cased, values unquoted) of one media range."""
    parts = [p.strip() for p in media_range.split(";")]
    params: dict[str, str] = {}
    for p in parts[1:]:
        key, _, value = p.partition("=")
        params[key.strip().lower()] = value.strip().strip('"')
    return parts[0].lower(), params


def accepted(accept: str) -> list[tuple[str, dict[str, str]]]:
    """The media ranges of an Accept header, in the client's order."""
    return [media_params(r) for r in accept.split(",") if r.strip()]
