"""Reading a kubeconfig: the server, credentials and TLS settings of its current (or a named) context."""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["Connection", "KubeconfigError", "load_kubeconfig"]


class KubeconfigError(Exception):
    """A kubeconfig that cannot be used (missing file, context, cluster or server)."""


@dataclass(frozen=True, slots=True)
class Connection:
    """Where and how to reach an API server."""

    server: str
    token: str | None = None
    verify: Any = True  # True, False (insecure) or an ssl.SSLContext holding the cluster's CA
    cert: tuple[str, str] | None = None  # client certificate and key files


def _named(doc: dict[str, Any], section: str, name: str, path: str) -> dict[str, Any]:
    for entry in doc.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            body = entry.get(section[:-1])
            return body if isinstance(body, dict) else {}
    raise KubeconfigError(f'{path}: {section[:-1]} "{name}" not found')


def _file_from(data: str | None, file: str | None, suffix: str) -> str | None:
    if file:
        return file
    if not data:
        return None
    fd, name = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(fd, "wb") as f:
        f.write(base64.b64decode(data))
    return name


def load_kubeconfig(path: str | None = None, context: str | None = None) -> Connection:
    """The connection of ``context`` (default: current-context) in ``path`` (default: $KUBECONFIG, then
    ~/.kube/config)."""
    where = path or (
        os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or str(Path.home() / ".kube/config")
    )
    try:
        doc = yaml.safe_load(Path(where).read_text())
    except OSError as e:
        raise KubeconfigError(f"{where}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise KubeconfigError(f"{where}: invalid YAML: {e}") from None
    if not isinstance(doc, dict):
        raise KubeconfigError(f"{where}: not a kubeconfig")
    ctx_name = context or doc.get("current-context")
    if not ctx_name:
        raise KubeconfigError(f"{where}: no current-context (use --context)")
    ctx = _named(doc, "contexts", str(ctx_name), where)
    cluster = _named(doc, "clusters", str(ctx.get("cluster") or ""), where)
    server = cluster.get("server")
    if not server:
        raise KubeconfigError(f'{where}: cluster "{ctx.get("cluster")}" has no server')
    user = _named(doc, "users", str(ctx.get("user") or ""), where) if ctx.get("user") else {}
    verify: Any = True
    if cluster.get("insecure-skip-tls-verify"):
        verify = False
    else:
        ca_data = cluster.get("certificate-authority-data")
        ca_file = cluster.get("certificate-authority")
        if ca_data:
            verify = ssl.create_default_context(cadata=base64.b64decode(ca_data).decode())
        elif ca_file:
            verify = ssl.create_default_context(cafile=ca_file)
    cert_file = _file_from(user.get("client-certificate-data"), user.get("client-certificate"), ".crt")
    key_file = _file_from(user.get("client-key-data"), user.get("client-key"), ".key")
    cert = (cert_file, key_file) if cert_file and key_file else None
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = Path(str(user["tokenFile"])).read_text().strip()
    return Connection(str(server), str(token) if token else None, verify, cert)
