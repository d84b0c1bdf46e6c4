"""Where an API server is and how to authenticate to it, read by kubernetes-asyncio's config loader.

``load_kubeconfig`` reads the kubeconfig files (``--kubeconfig``, else every file of ``$KUBECONFIG`` merged as
kubectl merges them, else ``~/.kube/config``), selects a context and lets ``kubernetes_asyncio.config`` (the
asynchronous twin of the official Kubernetes Python client, whose loader it shares) resolve it: the cluster's
server, ``certificate-authority``/``-data``, ``insecure-skip-tls-verify``, ``tls-server-name`` and
``proxy-url``; the user's ``client-certificate``/``client-key`` (``-data`` written to private temporary
files), ``token``/``tokenFile``, username and password, auth providers and ``exec`` credential plugins
(``client.authentication.k8s.io`` v1, v1beta1 and v1alpha1, with ``KUBERNETES_EXEC_INFO``). When no file is
found, the in-cluster service account (``KUBERNETES_SERVICE_HOST``/``_PORT`` and the token and CA under
``SERVICE_ACCOUNT_DIR``) is used, as client-go does. The result is a `Connection`: the server, an
``ssl.SSLContext`` holding the CA and the client certificate, and the Authorization header, refreshed
where it can expire (an exec plugin's token at its ``expirationTimestamp`` or when the server answers 401;
a service account token re-read every minute). Only this package imports the Kubernetes client library.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import datetime as dt
import logging
import os
import ssl
import threading
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import yaml
from kubernetes_asyncio.client import Configuration
from kubernetes_asyncio.config.config_exception import ConfigException
from kubernetes_asyncio.config.dateutil import parse_rfc3339
from kubernetes_asyncio.config.exec_provider import ExecProvider
from kubernetes_asyncio.config.incluster_config import InClusterConfigLoader
from kubernetes_asyncio.config.kube_config import ConfigNode, KubeConfigLoader, KubeConfigMerger

__all__ = [
    "SERVICE_ACCOUNT_DIR",
    "Connection",
    "Credentials",
    "KubeconfigError",
    "connection_for",
    "load_in_cluster",
    "load_kubeconfig",
    "tls_context",
]

#: Where a pod's service account token, CA and namespace are mounted (tests point it elsewhere).
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")

#: An exec plugin's token is renewed this long before its expirationTimestamp.
EXEC_EXPIRY_MARGIN = dt.timedelta(seconds=10)

# The loader logs an exec plugin's failure before raising it; the raised error is what Berth reports.
logging.getLogger("kubernetes_asyncio").addHandler(logging.NullHandler())

_T = TypeVar("_T")


class KubeconfigError(Exception):
    """A kubeconfig (or in-cluster configuration) that cannot be used; the message names the file and context."""


class Credentials(Protocol):
    """A source of the Authorization header that can renew it."""

    def authorization(self, stale: str | None = None) -> str | None:
        """The header value to send; ``stale`` is one the server just refused (401), to be replaced if it
        still is the current one. Raises `KubeconfigError` when a renewal fails."""
        ...


@dataclass(frozen=True, slots=True)
class Connection:
    """Where and how to reach an API server."""

    server: str
    token: str | None = None  # a static bearer token
    verify: bool | ssl.SSLContext = True  # an SSLContext holds the CA and the client certificate, if any
    cert: tuple[str, str] | None = None  # client certificate and key files (already in ``verify``'s context)
    credentials: Credentials | None = None  # a renewable Authorization header (exec plugin, service account)
    proxy: str | None = None  # the cluster's proxy-url
    tls_server_name: str | None = None  # the name to send (SNI) and to verify instead of the server's host
    source: str = ""  # the file and context, or "in-cluster config", for messages

    def authorization(self, stale: str | None = None) -> str | None:
        """The Authorization header value (see `Credentials.authorization`)."""
        if self.credentials is not None:
            return self.credentials.authorization(stale)
        return f"Bearer {self.token}" if self.token else None


def tls_context(ca_file: str | None, cert: tuple[str, str] | None, *, insecure: bool) -> ssl.SSLContext:
    """A client TLS context trusting ``ca_file`` (default: the system's roots), or nothing when ``insecure``,
    and presenting the client certificate ``cert`` (certificate file, key file) if given."""
    if insecure:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        ctx = ssl.create_default_context(cafile=ca_file)
    if cert is not None:
        ctx.load_cert_chain(*cert)
    return ctx


def connection_for(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    server: str | None = None,
    token: str | None = None,
    insecure: bool = False,
) -> Connection:
    """The connection a command line asks for: ``server`` (with ``token``, no kubeconfig) if given, else the
    kubeconfig's (or in-cluster) one with ``token`` replacing its credentials and ``insecure`` its CA."""
    if server:
        return Connection(server, token, not insecure, source=server)
    conn = load_kubeconfig(kubeconfig, context, insecure=insecure)
    if token:
        conn = dataclasses.replace(conn, token=token, credentials=None)
    return conn


def load_kubeconfig(
    path: str | None = None, context: str | None = None, *, insecure: bool = False
) -> Connection:
    """The connection of ``context`` (default: current-context) in ``path`` (default: the files of $KUBECONFIG,
    merged, then ~/.kube/config); with no path given and no file found, the in-cluster configuration.
    ``insecure`` skips verifying the server's certificate (``--insecure-skip-tls-verify``)."""
    if path is not None:
        files = [path]
    else:
        listed = os.environ.get("KUBECONFIG", "")
        candidates = [p for p in listed.split(os.pathsep) if p] or [str(Path.home() / ".kube" / "config")]
        files = [p for p in candidates if Path(p).expanduser().exists()]
        if not files:
            if os.environ.get("KUBERNETES_SERVICE_HOST"):
                return load_in_cluster(insecure=insecure)
            looked = f"$KUBECONFIG ({listed})" if listed.strip(os.pathsep) else candidates[0]
            raise KubeconfigError(
                f"no kubeconfig: {looked} not found, and not in a cluster (KUBERNETES_SERVICE_HOST is unset)"
            )
    files = [str(Path(p).expanduser()) for p in files]
    # kubectl's merge: the first file to set current-context wins (the loader would let the last one win)
    current = next((c for c in (_check_file(f).get("current-context") for f in files) if c), None)
    where = os.pathsep.join(files)
    try:
        merger = KubeConfigMerger(files[0])
        for file in files[1:]:
            merger.load_config(file)
    except (ConfigException, OSError, yaml.YAMLError, KeyError, TypeError, AttributeError) as e:
        raise KubeconfigError(f"{where}: not a valid kubeconfig: {_one_line(e)}") from None
    merged = merger.config
    if merged is None:  # pragma: no cover - every file was checked to exist
        raise KubeconfigError(f"{where}: no configuration found")
    name, user = _select(merged, context or current, where)
    source = f'{where}, context "{name}"'
    loader = KubeConfigLoader(config_dict=merged, active_context=name, config_base_path=None)
    settings = Configuration()
    try:
        _run(loader.load_and_set(settings))
    except ConfigException as e:
        raise KubeconfigError(f"{source}: {_one_line(e)}") from None
    except OSError as e:
        raise KubeconfigError(f"{source}: {_os_error(e)}") from None
    except (ValueError, KeyError, TypeError) as e:
        raise KubeconfigError(f"{source}: {_one_line(e)}") from None
    server = str(settings.host)
    header: str | None = settings.api_key.get("BearerToken")
    credentials: Credentials | None = None
    token: str | None = None
    exec_config = user.get("exec") if isinstance(user.get("exec"), Mapping) else None
    if header and exec_config is not None and "auth-provider" not in user:
        expiry = getattr(loader, "exec_plugin_expiry", None)
        credentials = _ExecCredentials(ConfigNode("exec", dict(exec_config)), header, expiry, source)
    elif header and header.startswith("Bearer "):
        token = header.removeprefix("Bearer ")
    elif header:
        credentials = _StaticCredentials(header)
    cert = (settings.cert_file, settings.key_file) if settings.cert_file and settings.key_file else None
    verify = _verify(server, settings.ssl_ca_cert, cert, insecure or not settings.verify_ssl, source)
    return Connection(
        server,
        token,
        verify,
        cert,
        credentials,
        settings.proxy or None,
        settings.tls_server_name or None,
        source,
    )


def load_in_cluster(*, insecure: bool = False) -> Connection:
    """The in-cluster connection: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, trusting the
    service account's ca.crt, with its token (re-read every minute, as the kubelet rotates it)."""
    source = f"in-cluster config ({SERVICE_ACCOUNT_DIR})"
    loader = InClusterConfigLoader(
        token_filename=str(SERVICE_ACCOUNT_DIR / "token"),
        cert_filename=str(SERVICE_ACCOUNT_DIR / "ca.crt"),
        try_refresh_token=True,
    )
    settings = Configuration()
    try:
        loader.load_and_set(settings)
    except ConfigException as e:
        raise KubeconfigError(f"{source}: {_one_line(e)}") from None
    except OSError as e:
        raise KubeconfigError(f"{source}: {_os_error(e)}") from None
    server = str(settings.host)
    return Connection(
        server,
        verify=_verify(server, settings.ssl_ca_cert, None, insecure, source),
        credentials=_HookCredentials(settings),
        source=source,
    )


# --- credentials -------------------------------------------------------------------------------------------


class _StaticCredentials:
    """A header that never changes (basic auth, an auth provider's token)."""

    def __init__(self, header: str) -> None:
        self._header = header

    def authorization(self, stale: str | None = None) -> str | None:
        """The header."""
        return self._header


class _HookCredentials:
    """The header a kubernetes-asyncio Configuration keeps current through its ``refresh_api_key_hook``."""

    def __init__(self, settings: Configuration) -> None:
        self._settings = settings
        self._lock = threading.Lock()

    def authorization(self, stale: str | None = None) -> str | None:
        """The current header (the hook re-reads the token file when its copy is a minute old)."""
        with self._lock:
            hook: Any = self._settings.refresh_api_key_hook
            if hook is not None:
                result = hook(self._settings)
                if asyncio.iscoroutine(result):
                    _run(result)
            header = self._settings.api_key.get("BearerToken")
        return str(header) if header else None


class _ExecCredentials:
    """An exec credential plugin's token: re-run the plugin when the token expires or is refused."""

    def __init__(self, exec_config: Any, header: str, expiry: dt.datetime | None, source: str) -> None:
        self._exec = exec_config
        self._header = header
        self._expiry = expiry
        self._source = source
        self._lock = threading.Lock()

    def authorization(self, stale: str | None = None) -> str | None:
        """The plugin's current token, renewed first if it expired or is the refused ``stale`` one."""
        with self._lock:
            expired = (
                self._expiry is not None and dt.datetime.now(dt.UTC) >= self._expiry - EXEC_EXPIRY_MARGIN
            )
            if expired or (stale is not None and stale == self._header):
                self._renew()
            return self._header

    def _renew(self) -> None:
        try:
            status = _run(ExecProvider(self._exec).run())
        except ConfigException as e:
            raise KubeconfigError(f"{self._source}: {_one_line(e)}") from None
        except OSError as e:
            raise KubeconfigError(f"{self._source}: exec: {_os_error(e)}") from None
        token = status.get("token") if isinstance(status, Mapping) else None
        if not token:
            raise KubeconfigError(f"{self._source}: exec: the plugin's ExecCredential has no status.token")
        self._header = f"Bearer {token}"
        stamp = status.get("expirationTimestamp")
        self._expiry = parse_rfc3339(stamp) if stamp else None


# --- helpers -----------------------------------------------------------------------------------------------


def _run(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run one of the loader's coroutines to completion from synchronous code (on a thread of its own when
    this thread already runs an event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _one_line(e: BaseException) -> str:
    """An exception's message on one line (a plugin's stderr or a YAML error spans several)."""
    if isinstance(e, KeyError) and e.args:
        return f"missing {e.args[0]!r}"
    return " ".join(str(e).split()) or type(e).__name__


def _os_error(e: OSError) -> str:
    """``FILE: reason`` of a failed file or process operation."""
    return f"{e.filename}: {e.strerror}" if e.filename and e.strerror else _one_line(e)


def _check_file(file: str) -> dict[str, Any]:
    """The parsed kubeconfig; refuses a file that cannot be read or is not a kubeconfig, naming it."""
    try:
        text = Path(file).read_text()
    except OSError as e:
        raise KubeconfigError(f"{file}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise KubeconfigError(f"{file}: not a kubeconfig (not text)") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None) or _one_line(e)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise KubeconfigError(f"{file}: invalid YAML: {problem}{at}") from None
    if not isinstance(doc, dict):
        raise KubeconfigError(
            f"{file}: not a kubeconfig (expected a mapping with clusters, contexts and users)"
        )
    for section in ("clusters", "contexts", "users"):
        entries = doc.get(section)
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("name"), str) for e in entries
        ):
            raise KubeconfigError(f"{file}: not a kubeconfig ({section} must be a list of named entries)")
    return doc


def _entries(merged: ConfigNode, section: str) -> Sequence[dict[str, Any]]:
    """The entries of one section of the merged configuration, as plain dicts."""
    raw = merged.value.get(section) or []
    return [e.value if isinstance(e, ConfigNode) else e for e in raw]


def _body(entries: Sequence[dict[str, Any]], name: str, key: str) -> dict[str, Any] | None:
    """The ``key`` mapping of the entry called ``name`` (``{}`` if it has none), or None if no entry is."""
    for entry in entries:
        if entry.get("name") == name:
            body = entry.get(key)
            return body if isinstance(body, dict) else {}
    return None


def _select(merged: ConfigNode, name: str | None, where: str) -> tuple[str, dict[str, Any]]:
    """Check that the context, its cluster and its user exist; the context's name and its user's mapping.
    A context without a user gets an empty one (the loader needs one to read an https cluster)."""
    if not name:
        raise KubeconfigError(f"{where}: no current-context (use --context)")
    name = str(name)
    ctx = _body(_entries(merged, "contexts"), name, "context")
    if ctx is None:
        raise KubeconfigError(f'{where}: context "{name}" not found')
    cluster_name = ctx.get("cluster")
    if not cluster_name:
        raise KubeconfigError(f'{where}: context "{name}" names no cluster')
    cluster = _body(_entries(merged, "clusters"), str(cluster_name), "cluster")
    if cluster is None:
        raise KubeconfigError(f'{where}: cluster "{cluster_name}" not found (context "{name}")')
    if not cluster.get("server"):
        raise KubeconfigError(f'{where}: cluster "{cluster_name}" has no server (context "{name}")')
    user_name = ctx.get("user")
    if not user_name:
        user_name = ctx["user"] = "berth:no-user"
        merged.value.setdefault("users", []).append({"name": user_name, "user": {}})
    user = _body(_entries(merged, "users"), str(user_name), "user")
    if user is None:
        raise KubeconfigError(f'{where}: user "{user_name}" not found (context "{name}")')
    return name, user


def _verify(
    server: str, ca_file: str | None, cert: tuple[str, str] | None, insecure: bool, source: str
) -> bool | ssl.SSLContext:
    """What httpx verifies the server with: False (insecure, no client certificate), True (the default
    roots), or a context with the cluster's CA and the client certificate; bad files are refused here."""
    if not server.startswith("https:"):
        return not insecure
    if cert is None and (insecure or ca_file is None):
        return not insecure
    try:
        ctx = tls_context(ca_file, None, insecure=insecure)
    except (ssl.SSLError, OSError) as e:
        raise KubeconfigError(f"{source}: certificate-authority: {_ssl_reason(e)}") from None
    if cert is not None:
        try:
            ctx.load_cert_chain(*cert)
        except (ssl.SSLError, OSError) as e:
            raise KubeconfigError(f"{source}: client certificate: {_ssl_reason(e)}") from None
    return ctx


def _ssl_reason(e: BaseException) -> str:
    """A short reason for a TLS file that could not be loaded."""
    if isinstance(e, ssl.SSLError):
        return str(e.reason or e.strerror or e).lower().replace("_", " ")
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return _one_line(e)
