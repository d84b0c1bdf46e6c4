"""Crash harness for the SQLite journal: a writer child killed with SIGKILL, then recovery checked.

`child` (run as ``python journal_crash.py child DIR BOOT``) opens ``MemoryStore.open(DIR)`` and writes in a loop
(create, bind, status patch, update, delete, evict), printing one line per *acknowledged* write, flushed, before
the next write starts::

    BOOT <recovered revision>
    <OP> <namespace> <name> <resourceVersion> <uid> <nodeName or ->
    PENDING <namespace> <name>      (before a DELETE or EVICT: the object may be gone without an ack)

`run_crashes` starts the child, kills it with SIGKILL at seeded random moments, reopens the store in-process and
checks that every acknowledged object is there with at least its acknowledged resourceVersion, the same uid and
the acknowledged node (deleted/evicted ones are gone), that the recovered revision is at least the largest
acknowledged one, and that uids never repeat. Used by tests/store/test_store_journal.py (a few kills) and by
benchmarks/crash_journal.py (the long run).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from berth.api.errors import NotFound
from berth.store import MemoryStore

POD = ("", "Pod")
NODE = ("", "Node")
HERE = Path(__file__).resolve()
REMOVED = ("DELETE", "EVICT")


def _pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "crash"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "terminationGracePeriodSeconds": 0},
    }


def child(data_dir: Path, boot: int, ops: int | None) -> None:
    """The writer: acknowledged writes are printed (and flushed) one per line; runs `ops` rounds or forever."""
    out = sys.stdout

    def ack(op: str, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        node = (obj.get("spec") or {}).get("nodeName") or "-"
        out.write(
            f"{op} {meta.get('namespace', '')} {meta['name']} {meta['resourceVersion']} {meta['uid']} {node}\n"
        )
        out.flush()

    store = MemoryStore.open(data_dir)
    out.write(f"BOOT {store.revision}\n")
    out.flush()
    for n in ("n0", "n1"):  # bootstrap: create what is missing (a crash may have cut the first start short)
        try:
            store.get(NODE, "", n)
        except NotFound:
            ack("CREATE", store.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}}))
    names: list[str] = []
    i = 0
    while ops is None or i < ops:
        if i % 7 == 3:
            pod = store.create(
                {**_pod(""), "metadata": {"generateName": f"g{boot}-", "namespace": "default"}}
            )
        else:
            pod = store.create(_pod(f"w{boot}-{i}"))
        ack("CREATE", pod)
        names.append(pod["metadata"]["name"])
        if i >= 1:
            ack("BIND", store.bind("default", names[i - 1], f"n{i % 2}"))
        if i >= 2:
            status = {"status": {"phase": "Running", "podIP": f"10.0.{i % 250}.{i % 200}"}}
            ack("STATUS", store.patch(POD, "default", names[i - 2], status, subresource="status"))
        if i >= 3:
            obj = store.get(POD, "default", names[i - 3])
            obj = {**obj, "metadata": {**obj["metadata"], "labels": {"app": "crash", "round": str(i)}}}
            ack("UPDATE", store.update(obj))
        if i >= 4 and i % 5 in (0, 1) and not names[i - 4].startswith("g"):
            out.write(f"PENDING default {names[i - 4]}\n")
            out.flush()
            if i % 5 == 0:
                ack("DELETE", store.delete(POD, "default", names[i - 4], grace_period_seconds=0))
            else:  # two writes: the DisruptionTarget condition, then the deletion
                ack("EVICT", store.evict("default", names[i - 4], grace_period_seconds=0))
        i += 1
    store.close()
    out.write("DONE\n")
    out.flush()


@dataclass
class Ack:
    """The last acknowledged write of one object."""

    op: str
    rv: int
    uid: str
    node: str
    pending_delete: bool = False


@dataclass
class CrashReport:
    """What `run_crashes` saw."""

    kills: int = 0
    boots: int = 0
    acknowledged_writes: int = 0
    objects_checked: int = 0
    max_revision: int = 0
    recovery_seconds: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0


def _start(
    data_dir: Path, boot: int, ops: int | None
) -> tuple[subprocess.Popen[str], list[str], threading.Thread]:
    cmd = [sys.executable, str(HERE), "child", str(data_dir), str(boot)]
    if ops is not None:
        cmd.append(str(ops))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return proc, lines, reader


def _absorb(
    lines: list[str], acks: dict[tuple[str, str, str], Ack], uids: dict[str, str], report: CrashReport
) -> int:
    """Fold the child's lines into `acks`; returns the BOOT revision (-1 when absent)."""
    boot_rev = -1
    for line in lines:
        parts = line.split()
        if not parts or parts[0] == "DONE":
            continue
        if parts[0] == "BOOT":
            boot_rev = int(parts[1])
            continue
        if parts[0] == "PENDING":  # a deletion was started: until its ack, the object may be present or gone
            acks[("Pod", parts[1], parts[2])].pending_delete = True
            continue
        if len(parts) == 5:  # cluster-scoped: empty namespace
            parts.insert(1, "")
        op, ns, name, rv, uid, node = parts
        kind = "Node" if name in ("n0", "n1") and ns == "" else "Pod"
        if op == "CREATE":
            owner = uids.setdefault(uid, f"{kind} {ns}/{name}")
            if owner != f"{kind} {ns}/{name}":
                report.problems.append(f"uid {uid} reused by {kind} {ns}/{name} (first {owner})")
        acks[(kind, ns, name)] = Ack(op, int(rv), uid, node)
        report.acknowledged_writes += 1
        report.max_revision = max(report.max_revision, int(rv))
    return boot_rev


def verify(data_dir: Path, acks: dict[tuple[str, str, str], Ack], report: CrashReport) -> None:
    """Reopen the store and check every acknowledged write (problems go to `report.problems`)."""
    t0 = time.perf_counter()
    store = MemoryStore.open(data_dir)
    report.recovery_seconds.append(round(time.perf_counter() - t0, 4))
    try:
        if store.revision < report.max_revision:
            report.problems.append(f"revision {store.revision} < acknowledged {report.max_revision}")
        stored = {
            (key[1], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
            for key in (POD, NODE)
            for o in store.list(key)[0]
        }
        for (kind, ns, name), ack in acks.items():
            report.objects_checked += 1
            obj = stored.get((kind, ns, name))
            if ack.op in REMOVED:
                if obj is not None:
                    report.problems.append(f"{kind} {ns}/{name} deleted at {ack.rv} but present")
                continue
            if obj is None and ack.pending_delete:
                continue  # killed during the deletion: committed, not yet acknowledged
            if obj is None:
                report.problems.append(f"{kind} {ns}/{name} acknowledged at {ack.rv} ({ack.op}) but missing")
                continue
            meta = obj["metadata"]
            if int(meta["resourceVersion"]) < ack.rv:
                report.problems.append(
                    f"{kind} {ns}/{name} at {meta['resourceVersion']} < acknowledged {ack.rv}"
                )
            if meta["uid"] != ack.uid:
                report.problems.append(f"{kind} {ns}/{name} uid {meta['uid']} != acknowledged {ack.uid}")
            node = (obj.get("spec") or {}).get("nodeName") or "-"
            if ack.node != "-" and node != ack.node:
                report.problems.append(f"{kind} {ns}/{name} on {node}, acknowledged bound to {ack.node}")
    finally:
        store.close()


def run_crashes(
    data_dir: Path, *, kills: int, seed: int = 0, max_delay: float = 0.6, final_ops: int = 50
) -> CrashReport:
    """Kill the writer `kills` times at seeded random moments (0.05 to `max_delay` s after it booted), checking
    recovery after each kill; then run it once to completion (`final_ops` rounds) and check again."""
    rng = random.Random(seed)
    report = CrashReport()
    acks: dict[tuple[str, str, str], Ack] = {}
    uids: dict[str, str] = {}
    t_start = time.perf_counter()
    for boot in range(kills + 1):
        last = boot == kills
        proc, lines, reader = _start(data_dir, boot, final_ops if last else None)
        report.boots += 1
        if last:
            proc.wait(timeout=60)
        else:
            deadline = time.monotonic() + 30
            while not lines and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.005)  # wait for BOOT: the kill lands while the child writes
            time.sleep(rng.uniform(0.05, max_delay))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            report.kills += 1
        reader.join(timeout=30)
        err = proc.stderr.read() if proc.stderr is not None else ""
        if proc.stderr is not None:
            proc.stderr.close()
        if last and proc.returncode != 0:
            report.problems.append(f"final run exited {proc.returncode}: {err[-2000:]}")
        elif not last and proc.returncode != -signal.SIGKILL:
            report.problems.append(f"boot {boot} exited {proc.returncode} before the kill: {err[-2000:]}")
        boot_rev = _absorb(lines, acks, uids, report)
        if boot_rev < 0:
            report.problems.append(f"boot {boot} never opened the store: {err[-2000:]}")
        verify(data_dir, acks, report)
        if report.problems:
            break
    report.wall_seconds = round(time.perf_counter() - t_start, 3)
    return report


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "child":
        child(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else None)
    else:
        sys.exit("usage: journal_crash.py child DIR BOOT [OPS]")
