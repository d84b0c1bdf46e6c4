"""Loading manifests: YAML (multi-document) and JSON files or directories of them, validated.

Every object is validated before anything is returned, so one bad object anywhere aborts the
whole load. ``kind: List`` (and any ``*List`` kind with ``items``) is flattened; namespaced
objects without a namespace get ``"default"``. The path ``-`` is standard input (named ``STDIN`` in
messages, as kubectl does): JSON when it starts with ``{`` or ``[``, else YAML.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import msgspec
import yaml

from berth.api import safeyaml
from berth.api.kinds import UnknownKindError, lookup_kind
from berth.api.validation import validate_object
from berth.api.wellknown import DEFAULT_NAMESPACE

__all__ = [
    "MANIFEST_EXTENSIONS",
    "STDIN_PATH",
    "STDIN_SOURCE",
    "Manifest",
    "ManifestCheck",
    "ManifestError",
    "load_manifests",
    "parse_manifest_text",
]

MANIFEST_EXTENSIONS = (".yaml", ".yml", ".json")
STDIN_PATH = "-"
STDIN_SOURCE = "STDIN"


class ManifestError(ValueError):
    """A manifest path is missing or a file cannot be parsed into objects."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """One object loaded from a manifest, with where it came from.

    ``source`` is the file path, followed by ``#<n>`` (0-based document index) for files with
    several YAML documents and `` items[<j>]`` for members of a List.
    """

    obj: dict[str, Any]
    source: str
    shares: bool = False
    """Some of its dicts or lists may also be another object's (its file may hold a YAML alias)."""
    plain: bool = field(default=False, compare=False, repr=False)
    """It holds plain JSON values only, as msgspec decodes JSON: str, int, float, bool, None, list and dict with
    str keys (where the JSON encoding of a value tells it from every other value)."""


ManifestCheck = Callable[[Sequence["Manifest"]], None]
"""A check of every loaded object, run after namespace defaulting and before validation (e.g. strict decoding);
it raises to refuse the load, and may drop fields but adds none."""


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many fresh containers (it only slows allocation down)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _walk(path: str) -> Iterator[str]:
    """Manifest files under a directory, lexical order at each level (like kubectl -R)."""
    with os.scandir(path) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        if entry.is_dir():
            yield from _walk(entry.path)
        elif entry.name.endswith(MANIFEST_EXTENSIONS):
            yield entry.path


def _is_json(text: str, path: str) -> bool:
    """Whether *text* from *path* is read as JSON: a .json file, or standard input starting like JSON."""
    if path == STDIN_SOURCE:
        return text.lstrip()[:1] in ("{", "[")
    return path.endswith(".json")


def _documents(text: str, path: str) -> tuple[list[Any], bool]:
    """The documents of *text*, and whether msgspec decoded them from JSON (then they hold plain JSON values
    only: str, int, float, bool, None, list and dict with str keys)."""
    if _is_json(text, path):
        try:
            return [msgspec.json.decode(text)], True
        except msgspec.DecodeError:
            pass
        try:  # slower, but reports the line of the error (and reads NaN and numbers out of range)
            return [json.loads(text)], False
        except json.JSONDecodeError as e:
            raise ManifestError(f"{path}:{e.lineno}: invalid JSON: {e.msg}") from None
    try:
        return safeyaml.load_all(text), False
    except safeyaml.YAMLLimitError as e:
        raise ManifestError(f"{path}: invalid YAML: {e}") from None
    except RecursionError:
        raise ManifestError(
            f"{path}: invalid YAML: yaml: exceeded max depth of {safeyaml.MAX_DEPTH}"
        ) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        problem = getattr(e, "problem", None) or str(e)
        raise ManifestError(f"{where}: invalid YAML: {problem}") from None


def _flatten(doc: Any, source: str, out: list[Manifest], plain: bool) -> None:
    if not isinstance(doc, dict):
        raise ManifestError(f"{source}: expected an object, got {type(doc).__name__}")
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise ManifestError(f"{source}: items: expected a list")
        for j, item in enumerate(items):
            _flatten(item, f"{source} items[{j}]", out, plain)
        return
    out.append(Manifest(doc, source, plain=plain))


def parse_manifest_text(text: str, path: str) -> list[Manifest]:
    """Parse one file's text (JSON when *path* ends in .json, else YAML) into unvalidated objects."""
    docs, plain = _documents(text, path)
    multi = len(docs) > 1
    out: list[Manifest] = []
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        _flatten(doc, f"{path}#{i}" if multi else path, out, plain)
    if not _is_json(text, path) and safeyaml.may_have_aliases(text):
        out = [Manifest(m.obj, m.source, shares=True) for m in out]
    return out


def _default_namespace(obj: dict[str, Any]) -> None:
    try:
        info = lookup_kind(str(obj.get("apiVersion")), str(obj.get("kind")))
    except UnknownKindError:
        return  # validation reports it
    md = obj.get("metadata")
    if info.namespaced and isinstance(md, dict) and not md.get("namespace"):
        md["namespace"] = DEFAULT_NAMESPACE


def _read(path: str) -> tuple[str, str]:
    """The text of a manifest file, or of standard input for ``-``, and the name messages give it."""
    if path == STDIN_PATH:
        try:
            return sys.stdin.read(), STDIN_SOURCE
        except (OSError, UnicodeDecodeError) as e:
            raise ManifestError(f"{STDIN_SOURCE}: cannot read: {e}") from None
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read(), path
    except (OSError, UnicodeDecodeError) as e:
        raise ManifestError(f"{path}: cannot read: {e}") from None


def load_manifests(paths: Sequence[str], *, check: ManifestCheck | None = None) -> list[Manifest]:
    """Load, flatten, namespace-default and validate every object in *paths* (files, directories, or
    ``-`` for standard input); `check` sees all the objects before they are validated.

    Raises ManifestError for a missing path, an unparsable file or a YAML document over the API server's
    limits (`berth.api.safeyaml`), whatever `check` raises, InvalidObjectError (naming the source) for the
    first invalid object; nothing is returned unless everything is valid.
    """
    files: list[str] = []
    if list(paths).count(STDIN_PATH) > 1:
        raise ManifestError(f"{STDIN_PATH}: standard input is given more than once")
    for p in paths:
        if p == STDIN_PATH:
            files.append(p)
        elif os.path.isdir(p):
            files.extend(_walk(p))
        elif os.path.exists(p):
            files.append(p)
        else:
            raise ManifestError(f"{p}: path does not exist")
    out: list[Manifest] = []
    with _gc_paused():
        for f in files:
            text, source = _read(f)
            out.extend(parse_manifest_text(text, source))
        for m in out:
            _default_namespace(m.obj)
        if check is not None:
            check(out)
        valid_pod_specs: set[bytes] = set()  # many pods of a file share one spec: each is checked once
        for m in out:
            validate_object(m.obj, source=m.source, valid_pod_specs=valid_pod_specs if m.plain else None)
    return out
