"""A real `berth serve` process for the end-to-end tests, and the real kubectl pointed at it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import yaml

START_SECONDS = 30.0
STOP_SECONDS = 10.0
KUBECTL = shutil.which("kubectl")


@dataclass
class Served:
    """A running server: its URL, data directory, kubeconfig and bearer token."""

    process: subprocess.Popen[bytes]
    url: str
    data_dir: Path

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig"

    @property
    def ca(self) -> Path:
        return self.data_dir / "pki" / "ca.crt"

    @property
    def token(self) -> str:
        return (self.data_dir / "token").read_text().strip()

    def client(self, token: str | None = None) -> httpx.Client:
        """An HTTPS client trusting the server's CA, with the token (or another one)."""
        headers = {"Authorization": f"Bearer {token if token is not None else self.token}"}
        return httpx.Client(
            base_url=self.url,
            verify=ssl.create_default_context(cafile=str(self.ca)),
            headers=headers,
            timeout=10.0,
        )

    def kubectl(
        self, *args: str, stdin: str | None = None, binary: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl against the server (bounded in time); the result, whatever its exit code."""
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), "HOME": str(self.data_dir)}
        return subprocess.run(
            [binary or KUBECTL or "kubectl", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )

    def apply(self, *docs: dict[str, object]) -> str:
        """`kubectl create -f -` of the documents; stdout (fails the test on a non-zero exit)."""
        done = self.kubectl("create", "-f", "-", stdin=yaml.safe_dump_all(docs))
        assert done.returncode == 0, done.stderr
        return done.stdout


def _wait_ready(proc: subprocess.Popen[bytes], data_dir: Path) -> str:
    deadline = time.monotonic() + START_SECONDS
    assert proc.stderr is not None
    line = proc.stderr.readline().decode()
    match = re.search(r"listening on (https://\S+);", line)
    assert match, (
        f"berth serve did not start: {line}{proc.stderr.read().decode() if proc.poll() is not None else ''}"
    )
    url = match.group(1)
    ca = data_dir / "pki" / "ca.crt"
    while time.monotonic() < deadline:
        try:
            if (
                httpx.get(
                    f"{url}/readyz", verify=ssl.create_default_context(cafile=str(ca)), timeout=2.0
                ).status_code
                == 200
            ):
                return url
        except httpx.HTTPError:
            time.sleep(0.05)
    raise AssertionError("berth serve did not become ready")


def start(data_dir: Path, *args: str) -> Served:
    """Start `berth serve --data-dir DATA_DIR --listen 127.0.0.1:0 ARGS...` and wait until it is ready."""
    cmd: Sequence[str] = [
        sys.executable,
        "-m",
        "berth",
        "serve",
        "--data-dir",
        str(data_dir),
        "--listen",
        "127.0.0.1:0",
        *args,
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        return Served(proc, _wait_ready(proc, data_dir), data_dir)
    except BaseException:
        stop(proc)
        raise


@contextmanager
def running(data_dir: Path, *args: str) -> Iterator[Served]:
    """A started server (see `start`), always stopped afterwards."""
    served = start(data_dir, *args)
    try:
        yield served
    finally:
        stop(served.process)


def stop(proc: subprocess.Popen[bytes]) -> int:
    """SIGTERM, then SIGKILL if it has not exited within STOP_SECONDS; the exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stderr is not None:
        proc.stderr.close()
    return proc.returncode
