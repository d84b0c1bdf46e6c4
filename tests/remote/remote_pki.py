"""A throwaway PKI (CA, server and client certificates, made with `cryptography`) and a small HTTPS server
that requires a client certificate signed by the CA, for the kubeconfig tests."""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Issued:
    """A certificate and its key, PEM-encoded."""

    cert_pem: bytes
    key_pem: bytes

    @property
    def cert_b64(self) -> str:
        return base64.b64encode(self.cert_pem).decode()

    @property
    def key_b64(self) -> str:
        return base64.b64encode(self.key_pem).decode()

    def write(self, directory: Path, stem: str) -> tuple[Path, Path]:
        """Write STEM.crt and STEM.key into ``directory``; their paths."""
        cert, key = directory / f"{stem}.crt", directory / f"{stem}.key"
        cert.write_bytes(self.cert_pem)
        key.write_bytes(self.key_pem)
        return cert, key


class CA:
    """A certificate authority that issues server and client certificates."""

    def __init__(self, name: str = "test-ca") -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        ski = x509.SubjectKeyIdentifier.from_public_key(self._key.public_key())
        now = dt.datetime.now(dt.UTC)
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_usage(cert_sign=True), critical=True)
            .add_extension(ski, critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False
            )
            .sign(self._key, hashes.SHA256())
        )
        self.pem = self._cert.public_bytes(serialization.Encoding.PEM)

    @property
    def b64(self) -> str:
        return base64.b64encode(self.pem).decode()

    def issue(self, common_name: str, *, server_names: tuple[str, ...] = ()) -> Issued:
        """A leaf certificate: a server certificate for ``server_names`` (DNS names or IP addresses) if
        any are given, else a client certificate for ``common_name``."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_usage(cert_sign=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), critical=False
            )
        )
        if server_names:
            names: list[x509.GeneralName] = []
            for n in server_names:
                try:
                    names.append(x509.IPAddress(ipaddress.ip_address(n)))
                except ValueError:
                    names.append(x509.DNSName(n))
            builder = builder.add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
            ).add_extension(x509.SubjectAlternativeName(names), critical=False)
        else:
            builder = builder.add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
            )
        cert = builder.sign(self._key, hashes.SHA256())
        return Issued(
            cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            ),
        )


def _usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


class _Handler(BaseHTTPRequestHandler):
    """Answers every GET with the path and the client certificate's common name, as JSON."""

    def do_GET(self) -> None:
        peer: Any = self.request.getpeercert()
        cn = next(
            (value for rdn in (peer or {}).get("subject", ()) for key, value in rdn if key == "commonName"),
            None,
        )
        body = json.dumps({"path": self.path, "clientCN": cn}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # refused handshakes are what some tests expect


@contextmanager
def mtls_server(ca: CA, server: Issued, tmp: Path) -> Iterator[int]:
    """An HTTPS server on 127.0.0.1 presenting ``server`` and requiring a client certificate from ``ca``;
    yields its port."""
    cert, key = server.write(tmp, "server")
    ca_file = tmp / "server-ca.crt"
    ca_file.write_bytes(ca.pem)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.load_verify_locations(cafile=str(ca_file))
    ctx.verify_mode = ssl.CERT_REQUIRED
    httpd = _QuietServer(("127.0.0.1", 0), _Handler)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
