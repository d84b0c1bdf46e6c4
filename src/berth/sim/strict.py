"""``--validate`` for the commands that read manifests: unknown fields refused, warned about or ignored.

kubectl's ``--validate`` values: ``strict`` (or ``true``, the default) refuses every object with a field its
kind's schema does not know, as the API server's ``fieldValidation=Strict`` does; ``warn`` prints the same text
as a warning and drops the fields; ``ignore`` (or ``false``) drops them silently. The schemas are the server's
(`berth.server.strictdecode`). Each refused object is one line naming its source (file, and ``#<n>``
document of a multi-document file), kind, namespace/name and the fields, with a did-you-mean where one known
field is close; all the objects of all the files are reported, not only the first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum

from berth.api.manifest import Manifest, ManifestCheck, ManifestError
from berth.server.strictdecode import (
    CleanFields,
    strict_decoding_error,
    unknown_fields,
    without_unknown_fields,
)

__all__ = ["StrictDecodingError", "Validation", "parse_validation", "strict_check"]


class Validation(StrEnum):
    """What to do with unknown fields (kubectl's ``--validate``)."""

    strict = "strict"
    warn = "warn"
    ignore = "ignore"


_ALIASES = {"true": Validation.strict, "false": Validation.ignore}


def parse_validation(value: str) -> Validation:
    """The mode of a ``--validate`` value (``true`` is strict, ``false`` ignore); ValueError with kubectl's
    message for anything else."""
    text = value.strip().lower()
    if text in _ALIASES:
        return _ALIASES[text]
    try:
        return Validation(text)
    except ValueError:
        raise ValueError(
            f'invalid - validate option "{value}"; must be one of: strict (or true), warn, ignore (or false)'
        ) from None


class StrictDecodingError(ManifestError):
    """Objects with unknown fields under ``--validate=strict``: `lines` has one line per object."""

    def __init__(self, lines: Sequence[str]) -> None:
        """Record the lines (one per refused object)."""
        self.lines = list(lines)
        super().__init__("\n".join(self.lines))


def _who(m: Manifest) -> str:
    meta = m.obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    ns, name = meta.get("namespace"), meta.get("name")
    return f'{m.obj.get("kind")} "{f"{ns}/{name}" if ns else name}"'


def strict_check(mode: Validation, warn: Callable[[str], None]) -> ManifestCheck:
    """The load check of `mode`: raises StrictDecodingError (strict), or calls `warn` with one
    ``Warning: ...`` line per object (warn); unknown fields are dropped from the objects that are kept."""

    def check(manifests: Sequence[Manifest]) -> None:
        lines: list[str] = []
        clean: CleanFields = set()
        for m in manifests:
            fields = unknown_fields(m.obj, clean=clean if m.plain else None)
            if not fields:
                continue
            lines.append(f"{m.source}: {_who(m)}: {strict_decoding_error(fields, hints=True)}")
            kept = without_unknown_fields(m.obj, fields)
            m.obj.clear()
            m.obj.update(kept)
        if not lines or mode is Validation.ignore:
            return
        if mode is Validation.strict:
            raise StrictDecodingError(lines)
        for line in lines:
            warn(f"Warning: {line}")

    return check
