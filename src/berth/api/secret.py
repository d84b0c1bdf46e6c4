"""v1 ``Secret`` as kube-apiserver stores it: ``stringData`` merged into ``data`` (base64), type Opaque by
default. Berth keeps a Secret's contents otherwise as given."""

from __future__ import annotations

import base64
from typing import Any

__all__ = ["default_secret"]


def default_secret(obj: dict[str, Any]) -> None:
    """In place: ``type`` Opaque when unset; each ``stringData`` entry written into ``data`` base64-encoded
    (overriding a ``data`` entry of the same key) and ``stringData`` dropped, as the API server does on write."""
    if not obj.get("type"):
        obj["type"] = "Opaque"
    strings = obj.pop("stringData", None)
    if not isinstance(strings, dict) or not strings:
        return
    data = obj.get("data")
    if not isinstance(data, dict):
        data = obj["data"] = {}
    for key, value in strings.items():
        data[key] = base64.b64encode(str(value).encode()).decode()
