"""The ``extenders`` of a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1 ``Extender``).

Field names, the default HTTP timeout and the validation rules (and their messages) are kube-scheduler's:
a prioritizing extender needs a positive weight, at most one extender binds, a managed resource is a valid
extended resource name managed by one extender only. Fields Berth does not know are rejected, not dropped.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.api.names import qualified_name_errors
from berth.api.wellknown import parse_go_duration

DEFAULT_EXTENDER_TIMEOUT = 5.0  # kube's DefaultExtenderTimeout (seconds)

EXTENDER_FIELDS = frozenset(
    (
        "urlPrefix",
        "filterVerb",
        "preemptVerb",
        "prioritizeVerb",
        "weight",
        "bindVerb",
        "enableHTTPS",
        "tlsConfig",
        "httpTimeout",
        "nodeCacheCapable",
        "managedResources",
        "ignorable",
    )
)
TLS_FIELDS = frozenset(
    ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")
)
MANAGED_FIELDS = frozenset(("name", "ignoredByScheduler"))


class ExtenderConfigError(ValueError):
    """An invalid ``extenders`` entry (the message names the field path and the value)."""


@dataclass(frozen=True, slots=True)
class ExtenderTLSConfig:
    """kube's ExtenderTLSConfig: how to reach an HTTPS extender (PEM data already base64-decoded)."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


@dataclass(frozen=True, slots=True)
class ManagedResource:
    """An extended resource an extender manages; ``ignored_by_scheduler`` keeps NodeResourcesFit off it."""

    name: str
    ignored_by_scheduler: bool = False


@dataclass(frozen=True, slots=True)
class ExtenderConfig:
    """One scheduler extender, as configured."""

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    enable_https: bool = False
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: float = DEFAULT_EXTENDER_TIMEOUT
    node_cache_capable: bool = False
    managed_resources: tuple[ManagedResource, ...] = field(default_factory=tuple)
    ignorable: bool = False


def _quote(value: Any) -> str:
    """A value as kube's field errors print it (strings quoted, like Go's %q)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int | float) else json.dumps(value, default=str)


def _invalid(path: str, value: Any, detail: str) -> ExtenderConfigError:
    return ExtenderConfigError(f"{path}: Invalid value: {_quote(value)}: {detail}")


def _check_fields(doc: Mapping[str, Any], known: frozenset[str], path: str) -> None:
    for key in doc:
        if key not in known:
            raise ExtenderConfigError(f'{path}: unknown field "{key}"')


def _string(doc: Mapping[str, Any], key: str, path: str) -> str:
    value = doc.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _invalid(f"{path}.{key}", value, "must be a string")
    return value


def _bool(doc: Mapping[str, Any], key: str, path: str) -> bool:
    value = doc.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _invalid(f"{path}.{key}", value, "must be a boolean")
    return value


def _pem(doc: Mapping[str, Any], key: str, path: str) -> bytes:
    """A ``[]byte`` field: base64 in JSON/YAML, as Go encodes byte slices."""
    value = doc.get(key)
    if value is None or value == "":
        return b""
    if not isinstance(value, str):
        raise _invalid(f"{path}.{key}", value, "must be a base64-encoded string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise _invalid(f"{path}.{key}", value, "must be a base64-encoded string") from None


def _tls(doc: Any, path: str) -> ExtenderTLSConfig | None:
    if doc is None:
        return None
    if not isinstance(doc, Mapping):
        raise _invalid(path, doc, "must be an object")
    _check_fields(doc, TLS_FIELDS, path)
    tls = ExtenderTLSConfig(
        insecure=_bool(doc, "insecure", path),
        server_name=_string(doc, "serverName", path),
        cert_file=_string(doc, "certFile", path),
        key_file=_string(doc, "keyFile", path),
        ca_file=_string(doc, "caFile", path),
        cert_data=_pem(doc, "certData", path),
        key_data=_pem(doc, "keyData", path),
        ca_data=_pem(doc, "caData", path),
    )
    if tls.insecure and (tls.ca_file or tls.ca_data):  # client-go's TLSConfigFor refuses the pair
        raise _invalid(
            f"{path}.insecure",
            True,
            "specifying a root certificates file with the insecure flag is not allowed",
        )
    for key, value in (("certFile", tls.cert_file), ("keyFile", tls.key_file), ("caFile", tls.ca_file)):
        if value and not os.access(value, os.R_OK):  # found when the configuration loads, as kube-scheduler
            raise _invalid(f"{path}.{key}", value, f"open {value}: no such file or not readable")
    return tls


def _timeout(value: Any, path: str) -> float:
    """``httpTimeout`` (a Go duration such as ``"5s"``); absent or zero means kube's default of 5 s."""
    if value is None:
        return DEFAULT_EXTENDER_TIMEOUT
    if not isinstance(value, str):
        raise _invalid(path, value, 'must be a duration such as "5s"')
    try:
        seconds = parse_go_duration(value)
    except ValueError as e:
        raise _invalid(path, value, str(e)) from None
    if seconds < 0:
        raise _invalid(path, value, "must not be negative")
    return seconds or DEFAULT_EXTENDER_TIMEOUT


def is_extended_resource_name(name: str) -> bool:
    """kube's IsExtendedResourceName: not native (domain-prefixed, outside kubernetes.io), not
    ``requests.*``, and valid as a quota name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def _managed(items: Any, path: str, seen: set[str]) -> tuple[ManagedResource, ...]:
    if items is None:
        return ()
    if not isinstance(items, list):
        raise _invalid(path, items, "must be a list")
    out: list[ManagedResource] = []
    for j, item in enumerate(items):
        ipath = f"{path}[{j}]"
        if not isinstance(item, Mapping):
            raise _invalid(ipath, item, "must be an object")
        _check_fields(item, MANAGED_FIELDS, ipath)
        name = _string(item, "name", ipath)
        errs = qualified_name_errors(name)
        if errs:
            raise _invalid(f"{ipath}.name", name, errs[0])
        if not is_extended_resource_name(name):
            raise _invalid(f"{ipath}.name", name, "is an invalid extended resource name")
        if name in seen:
            raise _invalid(f"{ipath}.name", name, "duplicate extender managed resource name")
        seen.add(name)
        out.append(ManagedResource(name, _bool(item, "ignoredByScheduler", ipath)))
    return tuple(out)


def parse_extenders(items: Any, path: str = "extenders") -> list[ExtenderConfig]:
    """Parse and validate the ``extenders`` list of a KubeSchedulerConfiguration (None gives none)."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise _invalid(path, items, "must be a list")
    out: list[ExtenderConfig] = []
    managed_seen: set[str] = set()
    binders = 0
    for i, doc in enumerate(items):
        epath = f"{path}[{i}]"
        if not isinstance(doc, Mapping):
            raise _invalid(epath, doc, "must be an object")
        _check_fields(doc, EXTENDER_FIELDS, epath)
        url = _string(doc, "urlPrefix", epath)
        if not url:
            raise ExtenderConfigError(f"{epath}.urlPrefix: Required value")
        if not url.startswith(("http://", "https://")):
            raise _invalid(f"{epath}.urlPrefix", url, "must be an http:// or https:// URL")
        weight = doc.get("weight", 0)
        if weight is None:
            weight = 0
        if not isinstance(weight, int) or isinstance(weight, bool):
            raise _invalid(f"{epath}.weight", weight, "must be an integer")
        prioritize = _string(doc, "prioritizeVerb", epath)
        if prioritize and weight <= 0:
            raise _invalid(f"{epath}.weight", weight, "must have a positive weight applied to it")
        bind = _string(doc, "bindVerb", epath)
        if bind:
            binders += 1
        out.append(
            ExtenderConfig(
                url_prefix=url,
                filter_verb=_string(doc, "filterVerb", epath),
                preempt_verb=_string(doc, "preemptVerb", epath),
                prioritize_verb=prioritize,
                bind_verb=bind,
                weight=weight,
                enable_https=_bool(doc, "enableHTTPS", epath),
                tls_config=_tls(doc.get("tlsConfig"), f"{epath}.tlsConfig"),
                http_timeout=_timeout(doc.get("httpTimeout"), f"{epath}.httpTimeout"),
                node_cache_capable=_bool(doc, "nodeCacheCapable", epath),
                managed_resources=_managed(
                    doc.get("managedResources"), f"{epath}.managedResources", managed_seen
                ),
                ignorable=_bool(doc, "ignorable", epath),
            )
        )
    if binders > 1:
        raise _invalid(
            path, f"found {binders} extenders implementing bind", "only one extender can implement bind"
        )
    return out


def ignored_by_scheduler(extenders: list[ExtenderConfig]) -> list[str]:
    """The managed resources NodeResourcesFit must ignore (``ignoredByScheduler: true``), in order."""
    return [r.name for e in extenders for r in e.managed_resources if r.ignored_by_scheduler]
