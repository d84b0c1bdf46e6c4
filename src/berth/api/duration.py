"""Durations printed as Go's ``time.Duration.String()`` prints them (kubectl's and kube's messages use it)."""

from __future__ import annotations

__all__ = ["go_duration"]

_NS_PER_SECOND = 1_000_000_000


def _fraction(value: int, digits: int) -> str:
    """``value`` (an integer count of 10**-digits units) as ``whole[.frac]`` with trailing zeros dropped."""
    whole, frac = divmod(value, 10**digits)
    text = str(frac).rjust(digits, "0").rstrip("0")
    return f"{whole}.{text}" if text else str(whole)


def go_duration(seconds: float) -> str:
    """``1m30.5s``, ``5m0s``, ``1h0m0s``, ``1.5s``, ``500ms``, ``1.5µs``, ``100ns``, ``0s`` (Go's format)."""
    ns = round(seconds * _NS_PER_SECOND)
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000:
        return f"{sign}{ns}ns"
    if ns < 1_000_000:
        return f"{sign}{_fraction(ns, 3)}µs"
    if ns < _NS_PER_SECOND:
        return f"{sign}{_fraction(ns, 6)}ms"
    total_seconds, frac_ns = divmod(ns, _NS_PER_SECOND)
    hours, rest = divmod(total_seconds, 3600)
    minutes, secs = divmod(rest, 60)
    sec_text = _fraction(secs * _NS_PER_SECOND + frac_ns, 9) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{sec_text}"
    if minutes:
        return f"{sign}{minutes}m{sec_text}"
    return f"{sign}{sec_text}"
