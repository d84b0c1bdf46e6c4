"""``berth cordon``, ``uncordon`` and ``drain`` against an API server, as kubectl does them.

The drain cordons the node, picks the pods with kubectl's filters (`berth.descheduler.drain.pods_to_evict`),
evicts each through the pods' eviction subresource, retries an eviction refused with 429 every 5 seconds,
polls every second until each evicted pod is gone, and gives up when ``timeout`` passes. It blocks; the
clock and the sleep are parameters so a simulated cluster can stand behind the client.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from berth.descheduler.drain import RETRY_SECONDS, DrainError, go_duration, pods_to_evict
from berth.remote.client import APIError, KubeClient

__all__ = ["POLL_SECONDS", "DrainOutcome", "cordon_node", "drain_node", "uncordon_node"]

POLL_SECONDS = 1.0
"""kubectl polls an evicted pod every second until it is gone."""


def cordon_node(client: KubeClient, node: str) -> str:
    """Mark ``node`` unschedulable; kubectl's message (``node/x cordoned`` or ``already cordoned``)."""
    current = client.get_node(node)
    if (current.get("spec") or {}).get("unschedulable"):
        return f"node/{node} already cordoned"
    client.patch_node(node, {"spec": {"unschedulable": True}})
    return f"node/{node} cordoned"


def uncordon_node(client: KubeClient, node: str) -> str:
    """Mark ``node`` schedulable again; kubectl's message."""
    current = client.get_node(node)
    if not (current.get("spec") or {}).get("unschedulable"):
        return f"node/{node} already uncordoned"
    client.patch_node(node, {"spec": {"unschedulable": None}})
    return f"node/{node} uncordoned"


@dataclass(slots=True)
class _Pending:
    namespace: str
    name: str
    uid: str
    due: float  # when to (re)try the eviction, or to poll for deletion
    evicted: bool = False


@dataclass(slots=True)
class DrainOutcome:
    """How a drain ended: ``error`` empty on success; the pods evicted (``ns/name``)."""

    node: str
    error: str = ""
    evicted: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the drain finished."""
        return not self.error


def _gone(client: KubeClient, p: _Pending) -> bool:
    try:
        pod = client.get_pod(p.namespace, p.name)
    except APIError as e:
        if e.code == 404:
            return True
        raise
    return (pod.get("metadata") or {}).get("uid") != p.uid


def drain_node(
    client: KubeClient,
    node: str,
    *,
    force: bool = False,
    timeout: float = 0.0,
    grace_period_seconds: int | None = None,
    out: Callable[[str], None] = print,
    now: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    retry_seconds: float = RETRY_SECONDS,
    poll_seconds: float = POLL_SECONDS,
) -> DrainOutcome:
    """Drain ``node`` (``timeout`` 0: none), printing kubectl's lines through ``out``.

    Raises DrainError before evicting anything when pods without a controller are found and ``force`` is
    off (the node stays cordoned), and APIError when the node cannot be read or cordoned."""
    out(cordon_node(client, node))
    started = now()
    chosen, errors, warnings = pods_to_evict(client.pods_on_node(node), force=force)
    if errors:
        raise DrainError("; ".join(errors))
    for w in warnings:
        out(f"Warning: {w}")
    outcome = DrainOutcome(node)
    pending = [
        _Pending(
            p["metadata"].get("namespace") or "default",
            p["metadata"]["name"],
            p["metadata"].get("uid", ""),
            started,
        )
        for p in chosen
    ]
    failures: list[str] = []
    while pending:
        t = now()
        if timeout and t - started >= timeout:
            outcome.error = f"drain did not complete within {go_duration(timeout)}"
            return outcome
        for p in [p for p in pending if p.due <= t]:
            if p.evicted:
                if _gone(client, p):
                    out(f"pod/{p.name} evicted")
                    pending.remove(p)
                else:
                    p.due = t + poll_seconds
                continue
            try:
                client.evict(p.namespace, p.name, grace_period_seconds)
            except APIError as e:
                if e.code == 404:
                    pending.remove(p)
                elif e.code == 429:
                    out(
                        f'error when evicting pods/"{p.name}" -n "{p.namespace}" (will retry after '
                        f"{go_duration(retry_seconds)}): {e.message}"
                    )
                    p.due = t + retry_seconds
                else:
                    failures.append(f'error when evicting pods/"{p.name}" -n "{p.namespace}": {e.message}')
                    pending.remove(p)
                continue
            out(f"evicting pod {p.namespace}/{p.name}")
            outcome.evicted.append(f"{p.namespace}/{p.name}")
            p.evicted = True
            if _gone(client, p):
                out(f"pod/{p.name} evicted")
                pending.remove(p)
            else:
                p.due = t + poll_seconds
        if pending:
            wake = min(p.due for p in pending)
            if timeout:
                wake = min(wake, started + timeout)
            sleep(max(0.0, wake - now()))
    if failures:
        outcome.error = "\n".join(failures)
        return outcome
    out(f"node/{node} drained")
    return outcome
