"""Well-known label, taint and annotation keys used across Berth, and Go duration parsing (`parse_duration`;
`parse_go_duration` words its errors as Go's ``time.ParseDuration`` does)."""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = [
    "ANNOTATION_DURATION",
    "ANNOTATION_EXIT_CODE",
    "ANNOTATION_STARTUP",
    "DEFAULT_NAMESPACE",
    "DEFAULT_SCHEDULER_NAME",
    "LABEL_ARCH",
    "LABEL_HOSTNAME",
    "LABEL_INSTANCE_TYPE",
    "LABEL_OS",
    "LABEL_REGION",
    "LABEL_ZONE",
    "SIMULATOR_ANNOTATION_PREFIX",
    "SIMULATOR_BIND_RESULT",
    "SIMULATOR_FILTER_RESULT",
    "SIMULATOR_FINALSCORE_RESULT",
    "SIMULATOR_PERMIT_RESULT",
    "SIMULATOR_POSTFILTER_RESULT",
    "SIMULATOR_PREBIND_RESULT",
    "SIMULATOR_PREFILTER_RESULT",
    "SIMULATOR_PREFILTER_STATUS",
    "SIMULATOR_PRESCORE_RESULT",
    "SIMULATOR_RESERVE_RESULT",
    "SIMULATOR_RESULT_HISTORY",
    "SIMULATOR_SCORE_RESULT",
    "SIMULATOR_SELECTED_NODE",
    "TAINT_NODE_DISK_PRESSURE",
    "TAINT_NODE_MEMORY_PRESSURE",
    "TAINT_NODE_NOT_READY",
    "TAINT_NODE_PID_PRESSURE",
    "TAINT_NODE_UNREACHABLE",
    "TAINT_NODE_UNSCHEDULABLE",
    "parse_duration",
    "parse_go_duration",
]

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_OS = "kubernetes.io/os"
LABEL_ARCH = "kubernetes.io/arch"
LABEL_INSTANCE_TYPE = "node.kubernetes.io/instance-type"

TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_NODE_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_NODE_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_NODE_PID_PRESSURE = "node.kubernetes.io/pid-pressure"

ANNOTATION_STARTUP = "berth.dev/startup"
ANNOTATION_DURATION = "berth.dev/duration"
ANNOTATION_EXIT_CODE = "berth.dev/exit-code"
"""The exit code of a pod's containers when its run (``berth.dev/duration``) ends (default 0: Succeeded)."""

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_NAMESPACE = "default"

SIMULATOR_ANNOTATION_PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
SIMULATOR_PREFILTER_STATUS = SIMULATOR_ANNOTATION_PREFIX + "prefilter-result-status"
SIMULATOR_PREFILTER_RESULT = SIMULATOR_ANNOTATION_PREFIX + "prefilter-result"
SIMULATOR_FILTER_RESULT = SIMULATOR_ANNOTATION_PREFIX + "filter-result"
SIMULATOR_POSTFILTER_RESULT = SIMULATOR_ANNOTATION_PREFIX + "postfilter-result"
SIMULATOR_PRESCORE_RESULT = SIMULATOR_ANNOTATION_PREFIX + "prescore-result"
SIMULATOR_SCORE_RESULT = SIMULATOR_ANNOTATION_PREFIX + "score-result"
SIMULATOR_FINALSCORE_RESULT = SIMULATOR_ANNOTATION_PREFIX + "finalscore-result"
SIMULATOR_RESERVE_RESULT = SIMULATOR_ANNOTATION_PREFIX + "reserve-result"
SIMULATOR_PERMIT_RESULT = SIMULATOR_ANNOTATION_PREFIX + "permit-result"
SIMULATOR_PREBIND_RESULT = SIMULATOR_ANNOTATION_PREFIX + "prebind-result"
SIMULATOR_BIND_RESULT = SIMULATOR_ANNOTATION_PREFIX + "bind-result"
SIMULATOR_SELECTED_NODE = SIMULATOR_ANNOTATION_PREFIX + "selected-node"
SIMULATOR_RESULT_HISTORY = SIMULATOR_ANNOTATION_PREFIX + "result-history"

_DURATION_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_DURATION_PART_RE = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]+)")
_MAX_DURATION_NS = (1 << 63) - 1
_MISSING_UNIT_RE = re.compile(r"[+-]?[0-9.]+")


def parse_duration(s: str) -> float:
    """Parse a Go ``time.ParseDuration`` string (``"1h30m"``, ``"500ms"``, ``"1.5s"``, ``"0"``) into seconds.

    Raises ValueError naming the value on bad input (missing unit, unknown unit, overflow).
    """
    if not isinstance(s, str):
        raise ValueError(f"invalid duration {s!r}")
    text = s
    sign = 1
    if text[:1] in ("-", "+"):
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if text == "0":
        return 0.0
    if not text:
        raise ValueError(f'invalid duration "{s}"')
    total = Fraction(0)
    pos = 0
    while pos < len(text):
        m = _DURATION_PART_RE.match(text, pos)
        if m is None:
            raise ValueError(f'invalid duration "{s}"')
        whole, frac, unit = m.group(1), m.group(2) or "", m.group(3)
        if not whole and not frac:
            raise ValueError(f'invalid duration "{s}"')
        scale = _DURATION_UNITS_NS.get(unit)
        if scale is None:
            raise ValueError(f'unknown unit "{unit}" in duration "{s}"')
        amount = Fraction(int(whole or "0"))
        if frac:
            amount += Fraction(int(frac), 10 ** len(frac))
        total += amount * scale
        pos = m.end()
    if total > _MAX_DURATION_NS + (1 if sign < 0 else 0):
        raise ValueError(f'invalid duration "{s}"')
    return float(sign * total / 1_000_000_000)


def parse_go_duration(text: str) -> float:
    """`parse_duration`, raising ValueError with Go's own message (``time: missing unit in duration "5"``,
    ``time: unknown unit "x" in duration "5x"``, ``time: invalid duration "abc"``)."""
    try:
        return parse_duration(text)
    except ValueError as e:
        msg = str(e)
    body = text[1:] if text[:1] in ("+", "-") else text
    if body and _MISSING_UNIT_RE.fullmatch(body) and body != ".":
        raise ValueError(f'time: missing unit in duration "{text}"')
    if msg.startswith("unknown unit"):
        raise ValueError(f"time: {msg}")
    raise ValueError(f'time: invalid duration "{text}"')
