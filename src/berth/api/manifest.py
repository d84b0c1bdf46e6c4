"""Loading manifests: YAML (multi-document) and JSON files or directories of them, validated.

Every object is validated before anything is returned, so one bad object anywhere aborts the
whole load. ``kind: List`` (and any ``*List`` kind with ``items``) is flattened; namespaced
objects without a namespace get ``"default"``.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import msgspec
import yaml

from berth.api.kinds import UnknownKindError, lookup_kind
from berth.api.validation import validate_object
from berth.api.wellknown import DEFAULT_NAMESPACE

__all__ = ["MANIFEST_EXTENSIONS", "Manifest", "ManifestError", "load_manifests", "parse_manifest_text"]

MANIFEST_EXTENSIONS = (".yaml", ".yml", ".json")

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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


def _documents(text: str, path: str) -> list[Any]:
    if path.endswith(".json"):
        try:
            return [msgspec.json.decode(text)]
        except msgspec.DecodeError:
            pass
        try:  # slower, but reports the line of the error
            return [json.loads(text)]
        except json.JSONDecodeError as e:
            raise ManifestError(f"{path}:{e.lineno}: invalid JSON: {e.msg}") from None
    try:
        return list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        problem = getattr(e, "problem", None) or str(e)
        raise ManifestError(f"{where}: invalid YAML: {problem}") from None


def _flatten(doc: Any, source: str, out: list[Manifest]) -> None:
    if not isinstance(doc, dict):
        raise ManifestError(f"{source}: expected an object, got {type(doc).__name__}")
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise ManifestError(f"{source}: items: expected a list")
        for j, item in enumerate(items):
            _flatten(item, f"{source} items[{j}]", out)
        return
    out.append(Manifest(doc, source))


def parse_manifest_text(text: str, path: str) -> list[Manifest]:
    """Parse one file's text (JSON when *path* ends in .json, else YAML) into unvalidated objects."""
    docs = _documents(text, path)
    multi = len(docs) > 1
    out: list[Manifest] = []
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        _flatten(doc, f"{path}#{i}" if multi else path, out)
    return out


def _default_namespace(obj: dict[str, Any]) -> None:
    try:
        info = lookup_kind(str(obj.get("apiVersion")), str(obj.get("kind")))
    except UnknownKindError:
        return  # validation reports it
    md = obj.get("metadata")
    if info.namespaced and isinstance(md, dict) and not md.get("namespace"):
        md["namespace"] = DEFAULT_NAMESPACE


def load_manifests(paths: Sequence[str]) -> list[Manifest]:
    """Load, flatten, namespace-default and validate every object in *paths* (files or directories).

    Raises ManifestError for a missing path or unparsable file, InvalidObjectError (naming the
    source) for the first invalid object; nothing is returned unless everything is valid.
    """
    files: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            files.extend(_walk(p))
        elif os.path.exists(p):
            files.append(p)
        else:
            raise ManifestError(f"{p}: path does not exist")
    out: list[Manifest] = []
    with _gc_paused():
        for f in files:
            try:
                with open(f, encoding="utf-8") as fh:
                    text = fh.read()
            except (OSError, UnicodeDecodeError) as e:
                raise ManifestError(f"{f}: cannot read: {e}") from None
            out.extend(parse_manifest_text(text, f))
        for m in out:
            _default_namespace(m.obj)
            validate_object(m.obj, source=m.source)
    return out
