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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    log: Path | None = None

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

    def cpu_seconds(self) -> float:
        """User + system CPU seconds the server process has used so far."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self) -> float:
        """The server's peak resident memory so far (VmHWM), in MiB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
        return 0.0

    def stderr_tail(self, chars: int = 2000) -> str:
        """The end of what the server wrote on stderr (when started with a `log` file)."""
        return self.log.read_text(errors="replace")[-chars:] if self.log is not None else ""

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


def _listening_line(proc: subprocess.Popen[bytes], log: Path | None, deadline: float) -> str:
    """The server's first stderr line (`berth serve: listening on ...`), from its pipe or its log file."""
    if log is None:
        assert proc.stderr is not None
        return proc.stderr.readline().decode()
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if "\n" in text or proc.poll() is not None:
            return text.split("\n", 1)[0] + "\n" if "\n" in text else text
        time.sleep(0.05)
    return log.read_text(errors="replace")


def _wait_ready(proc: subprocess.Popen[bytes], data_dir: Path, log: Path | None = None) -> str:
    deadline = time.monotonic() + START_SECONDS
    line = _listening_line(proc, log, deadline)
    match = re.search(r"listening on (https://\S+);", line)
    if not match:
        rest = ""
        if proc.poll() is not None:
            rest = (
                log.read_text(errors="replace")
                if log is not None
                else (proc.stderr.read().decode() if proc.stderr else "")
            )
        raise AssertionError(f"berth serve did not start: {line}{rest}")
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


def start(data_dir: Path, *args: str, log: Path | None = None) -> Served:
    """Start `berth serve --data-dir DATA_DIR --listen 127.0.0.1:0 ARGS...` and wait until it is ready; with
    `log` its stderr goes to that file (a long run's output would fill a pipe nobody reads)."""
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
    if log is None:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    else:
        with log.open("wb") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    try:
        return Served(proc, _wait_ready(proc, data_dir, log), data_dir, log)
    except BaseException:
        stop(proc)
        raise


@contextmanager
def running(data_dir: Path, *args: str, log: Path | None = None) -> Iterator[Served]:
    """A started server (see `start`), always stopped afterwards."""
    served = start(data_dir, *args, log=log)
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


def eventually(check: Callable[[], Any], what: str, limit: float = 20.0) -> Any:
    """Poll `check` until it returns something truthy (bounded: fails the test after `limit` seconds)."""
    deadline = time.monotonic() + limit
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.05)
