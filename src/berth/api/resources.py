"""Pod resource requests and node allocatable as the scheduler computes them.

Mirrors k8s.io/component-helpers ``resource.PodRequests`` (containers summed, init containers as a
peak, restartable "sidecar" init containers added to both, plus ``spec.overhead``) followed by the
scheduler's conversion: cpu in milli-units (``MilliValue()``), everything else ``Value()``.
Sums are exact (quantities are held as integer nano-units) and rounded up once at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.errors import InvalidObjectError, QuantityError
from berth.api.meta import namespaced_name
from berth.api.quantity import nano_value

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "container_ports",
    "node_allocatable",
    "pod_nonzero_requests",
    "pod_requests",
    "pod_requests_and_nonzero",
]

DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_NANO = 10**9
_MILLI_NANO = 10**6
_DEFAULT_CPU_NANO = DEFAULT_MILLI_CPU_REQUEST * _MILLI_NANO
_DEFAULT_MEM_NANO = DEFAULT_MEMORY_REQUEST * _NANO


def _bad(obj: Mapping[str, Any], default_kind: str, path: str, value: object) -> InvalidObjectError:
    return InvalidObjectError(
        str(obj.get("kind") or default_kind), namespaced_name(obj), path, value, f'invalid quantity "{value}"'
    )


def _nano(obj: Mapping[str, Any], kind: str, path: str, value: Any) -> int:
    try:
        return nano_value(value)
    except (QuantityError, TypeError):
        raise _bad(obj, kind, path, value) from None


def _resource_list(
    obj: Mapping[str, Any], kind: str, path: str, rl: Mapping[str, Any] | None
) -> dict[str, int]:
    """A ResourceList dict as {name: nano}."""
    if not rl:
        return {}
    return {k: _nano(obj, kind, f"{path}.{k}", v) for k, v in rl.items()}


def _container_requests(pod: Mapping[str, Any], field: str, i: int, c: Mapping[str, Any]) -> dict[str, int]:
    """Requests of one container, defaulting missing requests to limits (API defaulting); a bad quantity is
    reported with its path (built only then: this runs for every pod the scheduler sees)."""
    res = c.get("resources")
    if not res:
        return {}
    requests = res.get("requests")
    limits = res.get("limits")
    try:
        out = {k: nano_value(v) for k, v in requests.items()} if requests else {}
        if limits:
            for k, v in limits.items():
                if k not in out:
                    out[k] = nano_value(v)
    except (QuantityError, TypeError, AttributeError):
        path = f"{field}[{i}].resources"
        _resource_list(pod, "Pod", f"{path}.requests", requests)
        _resource_list(pod, "Pod", f"{path}.limits", limits)
        raise
    return out


def _add(into: dict[str, int], other: Mapping[str, int]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _with_defaults(reqs: dict[str, int], nonzero: bool) -> dict[str, int]:
    """A copy of one container's requests, with the scheduler's missing cpu/memory defaults if `nonzero`."""
    out = dict(reqs)
    if nonzero:
        out.setdefault("cpu", _DEFAULT_CPU_NANO)
        out.setdefault("memory", _DEFAULT_MEM_NANO)
    return out


_Parsed = tuple[list[dict[str, int]], list[tuple[dict[str, int], bool]], dict[str, int] | None]


def _parse(pod: Mapping[str, Any]) -> _Parsed:
    """Each container's and init container's requests (init: with whether it is a sidecar) and the overhead."""
    spec = pod.get("spec") or {}
    containers = [
        _container_requests(pod, "spec.containers", i, c) for i, c in enumerate(spec.get("containers") or ())
    ]
    inits = [
        (_container_requests(pod, "spec.initContainers", i, c), c.get("restartPolicy") == "Always")
        for i, c in enumerate(spec.get("initContainers") or ())
    ]
    overhead = spec.get("overhead")
    return containers, inits, _resource_list(pod, "Pod", "spec.overhead", overhead) if overhead else None


def _aggregate(parsed: _Parsed, nonzero: bool) -> dict[str, int]:
    """PodRequests in nano-units; *nonzero* applies the scheduler's missing cpu/memory defaults."""
    containers, inits, overhead = parsed
    total: dict[str, int] = {}
    for c in containers:
        _add(total, _with_defaults(c, nonzero) if nonzero else c)
    if inits:
        sidecars: dict[str, int] = {}
        peak: dict[str, int] = {}
        for c, sidecar in inits:
            reqs = _with_defaults(c, nonzero)
            if sidecar:
                _add(total, reqs)
                _add(sidecars, reqs)
                use: Mapping[str, int] = sidecars
            else:
                _add(reqs, sidecars)
                use = reqs
            for k, v in use.items():
                if k not in peak or v > peak[k]:
                    peak[k] = v
        for k, v in peak.items():
            if k not in total or v > total[k]:
                total[k] = v
    if overhead:
        _add(total, overhead)
    return total


def _to_amount(resource: str, nano: int) -> int:
    """Convert nano-units to the scheduler's integer amount, rounding the magnitude up."""
    unit = _MILLI_NANO if resource == "cpu" else _NANO
    q = -(-abs(nano) // unit)
    return q if nano >= 0 else -q


def pod_requests(pod: Mapping[str, Any]) -> dict[str, int]:
    """Effective pod requests: cpu in milli-units, other resources as integers; zero entries dropped.

    Raises InvalidObjectError naming the field path of a bad quantity.
    """
    spec = pod.get("spec") or {}
    if spec.get("initContainers") or spec.get("overhead"):
        return _amounts(_aggregate(_parse(pod), False))
    return _amounts(_containers_sums(pod, spec)[0])


def _containers_sums(pod: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[dict[str, int], int, int]:
    """The sums of the containers' requests (the pod's requests when it has neither init containers nor
    overhead), and of their cpu and memory with the scheduler's defaults for a container requesting none."""
    total: dict[str, int] = {}
    cpu = memory = 0
    for i, c in enumerate(spec.get("containers") or ()):
        reqs = _container_requests(pod, "spec.containers", i, c)
        for k, v in reqs.items():
            total[k] = total.get(k, 0) + v
        cpu += reqs.get("cpu", _DEFAULT_CPU_NANO)
        memory += reqs.get("memory", _DEFAULT_MEM_NANO)
    return total, cpu, memory


def _amounts(total: Mapping[str, int]) -> dict[str, int]:
    out = {}
    for k, v in total.items():
        amount = _to_amount(k, v)
        if amount:
            out[k] = amount
    return out


def pod_nonzero_requests(pod: Mapping[str, Any]) -> tuple[int, int]:
    """(milli cpu, memory bytes) for scoring: a missing cpu/memory request counts as 100m / 200Mi."""
    return _nonzero(_aggregate(_parse(pod), True))


def _nonzero(total: Mapping[str, int]) -> tuple[int, int]:
    return _to_amount("cpu", total.get("cpu", 0)), _to_amount("memory", total.get("memory", 0))


def pod_requests_and_nonzero(pod: Mapping[str, Any]) -> tuple[dict[str, int], tuple[int, int]]:
    """`pod_requests` and `pod_nonzero_requests` at once (the containers are read once)."""
    spec = pod.get("spec") or {}
    if spec.get("initContainers") or spec.get("overhead"):
        parsed = _parse(pod)
        return _amounts(_aggregate(parsed, False)), _nonzero(_aggregate(parsed, True))
    total, cpu, memory = _containers_sums(pod, spec)
    return _amounts(total), (_to_amount("cpu", cpu), _to_amount("memory", memory))


def node_allocatable(node: Mapping[str, Any]) -> dict[str, int]:
    """``status.allocatable`` falling back to ``status.capacity`` per resource (cpu milli, else ints)."""
    status = node.get("status") or {}
    merged: dict[str, int] = {}
    for part in ("capacity", "allocatable"):
        rl = status.get(part)
        if rl:
            for k, v in rl.items():
                merged[k] = _to_amount(k, _nano(node, "Node", f"status.{part}.{k}", v))
    return merged


def container_ports(pod: Mapping[str, Any]) -> tuple[tuple[str, str, int], ...]:
    """Host ports a pod uses: ``(hostIP or "0.0.0.0", protocol or "TCP", hostPort)`` per port with hostPort > 0.

    Only regular containers count, as in the NodePorts plugin.
    """
    spec = pod.get("spec") or {}
    out = []
    for c in spec.get("containers") or ():
        for p in c.get("ports") or ():
            hp = p.get("hostPort")
            if hp and int(hp) > 0:
                out.append((str(p.get("hostIP") or "0.0.0.0"), str(p.get("protocol") or "TCP"), int(hp)))
    return tuple(out)
