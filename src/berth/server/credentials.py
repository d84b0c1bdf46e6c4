"""What ``berth serve --data-dir DIR`` needs before kubectl can talk to it: TLS and a bearer token.

`ServerCredentials.ensure` prepares, under the data directory::

    DIR/pki/ca.crt, DIR/pki/ca.key          self-signed CA "berth-ca" (EC P-256, 10 years)
    DIR/pki/server.crt, DIR/pki/server.key  serving certificate signed by that CA (1 year, serverAuth)
    DIR/token                               the bearer token (secrets.token_urlsafe(32))
    DIR/kubeconfig                          cluster "berth", user "berth-admin", context "berth"

Keys, the token and the kubeconfig (it holds the token) are written with mode 0600, every file atomically.
On a first start everything is created; on later starts the CA, the token and the serving certificate are
reused. The serving certificate is re-issued when it does not cover the listen host any more, expires within
30 days, or was not signed by the CA on disk; the kubeconfig is rewritten only when its content would change
(a new host or port, a new CA or token).

The serving certificate's subject alternative names are DNS ``localhost``, IP ``127.0.0.1``, IP ``::1`` and
the listen host when it is another IP address or name. A wildcard listen address (``0.0.0.0``, ``::`` or
empty) adds the machine's host name, and the kubeconfig then points at the loopback address instead.

With ``--tls-cert-file/--tls-private-key-file`` the user's certificate and key serve instead of the
generated ones. The kubeconfig then carries no CA data (``insecure-skip-tls-verify: false``): the user's
certificate must be trusted by the client machine's system trust store and name the listen host.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import hmac
import ipaddress
import os
import re
import secrets
import socket
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = [
    "CLUSTER_NAME",
    "CONTEXT_NAME",
    "USER_NAME",
    "CredentialsError",
    "ServerCredentials",
    "kubeconfig_server_host",
    "serving_names",
]

CLUSTER_NAME = "berth"
CONTEXT_NAME = "berth"
USER_NAME = "berth-admin"
CA_COMMON_NAME = "berth-ca"

CA_VALIDITY = dt.timedelta(days=3650)
SERVING_VALIDITY = dt.timedelta(days=365)
RENEW_BEFORE = dt.timedelta(days=30)
_BACKDATE = dt.timedelta(minutes=5)  # tolerate small clock skew between server and clients

_PRIVATE = 0o600
_PUBLIC = 0o644
_WILDCARDS = {"", "0.0.0.0", "::", "*"}
_HOSTNAME = re.compile(
    r"^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$"
)

_PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
_Name = x509.DNSName | x509.IPAddress


class CredentialsError(ValueError):
    """Credentials that cannot be used: a half-given or unreadable user certificate, a bad host or port."""


# --- host names -----------------------------------------------------------------------------------------


def _bare_host(host: str) -> str:
    """The host without IPv6 brackets, IPv6 zone or surrounding whitespace, lower-cased."""
    h = host.strip().lower()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    return h


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


def _dns_name(host: str) -> str:
    try:
        name = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise CredentialsError(f"invalid listen host {host!r}") from None
    if not _HOSTNAME.match(name):
        raise CredentialsError(f"invalid listen host {host!r}")
    return name


def kubeconfig_server_host(host: str) -> str:
    """The host a client should dial for a server listening on ``host``: loopback for a wildcard address,
    IPv6 addresses in brackets (ready for a URL)."""
    h = _bare_host(host)
    if h in _WILDCARDS:
        h = "::1" if h == "::" else "127.0.0.1"
    ip = _ip(h)
    if ip is not None:
        return f"[{ip.compressed}]" if ip.version == 6 else ip.compressed
    return _dns_name(h)


def serving_names(host: str) -> frozenset[_Name]:
    """The subject alternative names a generated serving certificate for ``host`` carries."""
    names: set[_Name] = {
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("::1")),
    }
    h = _bare_host(host)
    if h in _WILDCARDS:
        with contextlib.suppress(CredentialsError, OSError):
            names.add(x509.DNSName(_dns_name(socket.gethostname().lower())))
        return frozenset(names)
    ip = _ip(h)
    if ip is not None:
        names.add(x509.IPAddress(ipaddress.ip_address(ip.compressed)))
    else:
        names.add(x509.DNSName(_dns_name(h)))
    return frozenset(names)


# --- files ------------------------------------------------------------------------------------------------


def _write_atomic(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory, with ``mode``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            os.chmod(tmp, mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _tighten(path: Path, mode: int) -> None:
    """Make sure a file holding a secret is not readable by others (e.g. after a copy)."""
    if path.stat().st_mode & 0o777 & ~mode:
        os.chmod(path, mode)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


# --- keys and certificates --------------------------------------------------------------------------------


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: _PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _load_key(data: bytes | None) -> _PrivateKey | None:
    if data is None:
        return None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        return None
    return key if isinstance(key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) else None


def _load_cert(data: bytes | None) -> x509.Certificate | None:
    if data is None:
        return None
    try:
        return x509.load_pem_x509_certificate(data)
    except ValueError:
        return None


def _spki(key: Any) -> bytes:
    der: bytes = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return der


def _fresh(cert: x509.Certificate, now: dt.datetime) -> bool:
    return cert.not_valid_before_utc <= now + _BACKDATE and cert.not_valid_after_utc - RENEW_BEFORE > now


def _issue_ca(now: dt.datetime) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = _new_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_COMMON_NAME)])
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ski, critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _issue_serving(
    ca_key: _PrivateKey, ca_cert: x509.Certificate, host: str, names: frozenset[_Name], now: dt.datetime
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = _new_key()
    common_name = (_bare_host(host) or "localhost")[:64]
    if common_name in _WILDCARDS:
        common_name = "localhost"
    ordered = sorted(names, key=lambda n: (isinstance(n, x509.IPAddress), str(n.value)))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(min(now + SERVING_VALIDITY, ca_cert.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(ordered), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def _ca_usable(key: _PrivateKey | None, cert: x509.Certificate | None, now: dt.datetime) -> bool:
    if key is None or cert is None or _spki(key.public_key()) != _spki(cert.public_key()):
        return False
    try:
        ca = cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        return False
    return ca and _fresh(cert, now)


def _serving_usable(
    key: _PrivateKey | None,
    cert: x509.Certificate | None,
    ca_cert: x509.Certificate,
    names: frozenset[_Name],
    now: dt.datetime,
) -> bool:
    if key is None or cert is None or _spki(key.public_key()) != _spki(cert.public_key()):
        return False
    if not _fresh(cert, now):
        return False
    try:
        cert.verify_directly_issued_by(ca_cert)
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except (ValueError, TypeError, InvalidSignature, x509.ExtensionNotFound):
        return False
    have = set(san.get_values_for_type(x509.DNSName)) | {
        ipaddress.ip_address(ip.compressed) for ip in san.get_values_for_type(x509.IPAddress)
    }
    want = {n.value for n in names}
    return ExtendedKeyUsageOID.SERVER_AUTH in eku and want <= have


# --- token and kubeconfig ---------------------------------------------------------------------------------


def _ensure_token(path: Path) -> str:
    data = _read(path)
    if data is not None:
        token = data.decode("utf-8", "replace").strip()
        if token and token.isprintable() and not any(c.isspace() for c in token):
            _tighten(path, _PRIVATE)
            return token
    token = secrets.token_urlsafe(32)
    _write_atomic(path, (token + "\n").encode(), _PRIVATE)
    return token


def _kubeconfig(server: str, token: str, ca_pem: bytes | None) -> dict[str, Any]:
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode("ascii")
    else:
        cluster["insecure-skip-tls-verify"] = False
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CLUSTER_NAME, "cluster": cluster}],
        "users": [{"name": USER_NAME, "user": {"token": token}}],
        "contexts": [{"name": CONTEXT_NAME, "context": {"cluster": CLUSTER_NAME, "user": USER_NAME}}],
        "current-context": CONTEXT_NAME,
        "preferences": {},
    }


def _ensure_kubeconfig(path: Path, doc: dict[str, Any]) -> None:
    data = _read(path)
    if data is not None:
        try:
            current = yaml.safe_load(data)
        except yaml.YAMLError:
            current = None
        if current == doc:
            _tighten(path, _PRIVATE)
            return
    text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
    _write_atomic(path, text.encode(), _PRIVATE)


# --- the public face --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ServerCredentials:
    """The TLS files, the bearer token and the kubeconfig of one ``berth serve`` data directory.

    ``ca_file`` is None when the user brought their own serving certificate. Make one with `ensure`.
    """

    cert_file: Path
    key_file: Path
    ca_file: Path | None
    token: str
    kubeconfig_path: Path
    server_url: str

    @classmethod
    def ensure(
        cls,
        data_dir: Path,
        host: str,
        port: int,
        tls_cert: Path | None = None,
        tls_key: Path | None = None,
        *,
        now: dt.datetime | None = None,
    ) -> ServerCredentials:
        """Create or reuse the credentials in ``data_dir`` for a server listening on ``host:port``.

        ``tls_cert``/``tls_key`` (both or neither) replace the generated serving certificate. ``now``
        (timezone-aware; default: the current time) decides validity and renewal. Raises
        `CredentialsError` for a bad host, port or user certificate.
        """
        if not 0 < port < 65536:
            raise CredentialsError(f"invalid port {port}: must be 1-65535")
        if (tls_cert is None) != (tls_key is None):
            raise CredentialsError("--tls-cert-file and --tls-private-key-file must be given together")
        when = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
        url_host = kubeconfig_server_host(host)
        server_url = f"https://{url_host}:{port}"
        names = serving_names(host)
        if tls_cert is not None and tls_key is not None:
            try:  # check the user's pair before writing anything
                _server_context(Path(tls_cert), Path(tls_key))
            except (OSError, ssl.SSLError) as e:
                raise CredentialsError(f"cannot use {tls_cert} with {tls_key}: {e}") from None

        data_dir = Path(data_dir).absolute()
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        token = _ensure_token(data_dir / "token")
        kubeconfig_path = data_dir / "kubeconfig"

        if tls_cert is not None and tls_key is not None:
            cert_file, key_file = Path(tls_cert).absolute(), Path(tls_key).absolute()
            _ensure_kubeconfig(kubeconfig_path, _kubeconfig(server_url, token, None))
            return cls(cert_file, key_file, None, token, kubeconfig_path, server_url)

        pki = data_dir / "pki"
        pki.mkdir(mode=0o700, exist_ok=True)
        ca_file, ca_key_file = pki / "ca.crt", pki / "ca.key"
        cert_file, key_file = pki / "server.crt", pki / "server.key"

        ca_key, ca_cert = _load_key(_read(ca_key_file)), _load_cert(_read(ca_file))
        if ca_key is None or ca_cert is None or not _ca_usable(ca_key, ca_cert, when):
            ca_key, ca_cert = _issue_ca(when)
            _write_atomic(ca_key_file, _key_pem(ca_key), _PRIVATE)
            _write_atomic(ca_file, ca_cert.public_bytes(serialization.Encoding.PEM), _PUBLIC)
        else:
            _tighten(ca_key_file, _PRIVATE)

        key, cert = _load_key(_read(key_file)), _load_cert(_read(cert_file))
        if not _serving_usable(key, cert, ca_cert, names, when):
            key, cert = _issue_serving(ca_key, ca_cert, host, names, when)
            _write_atomic(key_file, _key_pem(key), _PRIVATE)
            _write_atomic(cert_file, cert.public_bytes(serialization.Encoding.PEM), _PUBLIC)
        else:
            _tighten(key_file, _PRIVATE)

        ca_pem = ca_cert.public_bytes(serialization.Encoding.PEM)
        _ensure_kubeconfig(kubeconfig_path, _kubeconfig(server_url, token, ca_pem))
        return cls(cert_file, key_file, ca_file, token, kubeconfig_path, server_url)

    def ssl_context(self) -> ssl.SSLContext:
        """A new server-side TLS context (TLS 1.2 or later) serving ``cert_file`` with ``key_file``."""
        return _server_context(self.cert_file, self.key_file)

    def token_matches(self, header_value: str | None) -> bool:
        """Whether an ``Authorization`` header value is ``Bearer <token>`` with this server's token.

        The scheme is case-insensitive (RFC 7235); the token is compared in constant time. Anything else
        (no header, another scheme, an empty or different token, extra words) does not match.
        """
        if not header_value:
            return False
        expected = f"Bearer {self.token}".encode()
        if hmac.compare_digest(header_value.encode("latin-1", "replace"), expected):
            return True  # the exact header kubectl and the clients send, checked in one comparison
        scheme, _, given = header_value.strip().partition(" ")
        if scheme.lower() != "bearer" or not given or any(c.isspace() for c in given):
            return False
        return hmac.compare_digest(given.encode("utf-8"), self.token.encode("utf-8"))


def _server_context(cert_file: Path, key_file: Path) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(certfile=str(cert_file), keyfile=str(key_file))
    return ctx
