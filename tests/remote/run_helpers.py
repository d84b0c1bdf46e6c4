"""`berth run` processes against a `berth serve --api-only` for the end-to-end tests of issue 14."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "serve"))

from serve_helpers import STOP_SECONDS, Served, running

__all__ = ["Run", "Served", "eventually", "running", "running_berth", "start_run", "stop_run"]

START_SECONDS = 30.0


@dataclass
class Run:
    """A `berth run` process and the file its stderr goes to."""

    process: subprocess.Popen[bytes]
    log: Path

    def text(self) -> str:
        """Everything it logged so far."""
        return self.log.read_text(errors="replace")

    @property
    def status_url(self) -> str:
        """Where it serves /metrics and /healthz."""
        match = re.search(r"serving /metrics and /healthz on (\S+)", self.text())
        assert match, self.text()
        return match.group(1)

    def wait_for(self, needle: str, seconds: float = START_SECONDS) -> None:
        """Wait until its log contains `needle` (fails the test, with the log, if it exits or time runs out)."""
        deadline = time.monotonic() + seconds
        while needle not in self.text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"berth run never logged {needle!r}:\n{self.text()[-3000:]}")
            time.sleep(0.05)


def start_run(served: Served, log: Path, *args: str) -> Run:
    """Start `berth run --kubeconfig <served's> --metrics-listen 127.0.0.1:0 ARGS...` with its stderr in
    `log`."""
    cmd = [
        sys.executable,
        "-m",
        "berth",
        "run",
        "--kubeconfig",
        str(served.kubeconfig),
        "--metrics-listen=127.0.0.1:0",
        *args,
    ]
    with log.open("wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    return Run(proc, log)


def stop_run(run: Run) -> int:
    """SIGTERM, then SIGKILL if it has not exited within STOP_SECONDS; the exit code."""
    proc = run.process
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


@contextmanager
def running_berth(served: Served, log: Path, *args: str) -> Iterator[Run]:
    """A started `berth run` that has synced its caches, always stopped afterwards."""
    run = start_run(served, log, *args)
    try:
        run.wait_for("caches synced")
        yield run
    finally:
        stop_run(run)


def eventually(check: Callable[[], Any], seconds: float = 30.0) -> Any:
    """Retry `check` until it returns a true value without raising AssertionError; its last value."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            value = check()
            if value:
                return value
        except AssertionError:
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached in {seconds:g}s: {check.__doc__ or check}")
        time.sleep(0.1)


def pod_placement(served: Served) -> dict[str, str]:
    """Each pod of namespace ``default``: its node ("" while unbound)."""
    with served.client() as c:
        items = c.get("/api/v1/namespaces/default/pods").json()["items"]
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in items}


def scheduled_counts(served: Served) -> dict[str, int]:
    """How many Scheduled events each pod of namespace ``default`` got (a pod bound twice would have two)."""
    with served.client() as c:
        items = c.get("/api/v1/namespaces/default/events").json()["items"]
    counts: dict[str, int] = {}
    for e in items:
        if e["reason"] == "Scheduled":
            name = e["involvedObject"]["name"]
            counts[name] = counts.get(name, 0) + int(e.get("count") or 1)
    return counts
