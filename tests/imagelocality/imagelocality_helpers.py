"""Image entries of ``status.images`` for the ImageLocality tests."""

from __future__ import annotations

from typing import Any

MB = 1024 * 1024


def image(size_mb: float, *names: str) -> dict[str, Any]:
    """One ``status.images`` entry of ``size_mb`` MiB."""
    return {"names": list(names), "sizeBytes": int(size_mb * MB)}
