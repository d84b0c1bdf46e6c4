"""The pod-template-hash: FNV-32a over a pod template (plus the collision count), encoded like kube.

kube (controller.ComputeHash) feeds FNV-32a with a spew deep-print of the Go PodTemplateSpec struct, then
the collision count as 8 little-endian bytes, and renders ``fmt.Sprint(sum32)`` through
``rand.SafeEncodeString``. The deep-print of a Go struct cannot be reproduced from wire-form JSON, so Berth
hashes the canonical JSON of the template instead (sorted keys, no whitespace): the hash is deterministic and
has kube's alphabet and shape (1-10 chars, one per decimal digit of the sum, usually 10), but it is NOT
byte-for-byte equal to kube's hash of the same template.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["SAFE_ALPHABET", "compute_hash", "fnv32a", "safe_encode"]

SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""k8s.io/apimachinery/pkg/util/rand's alphanums: no vowels, no 0/1/3 (no bad words, no look-alikes)."""

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv32a(data: bytes, h: int = _FNV_OFFSET) -> int:
    """FNV-1a, 32 bits, over `data` continuing from state `h`."""
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def safe_encode(s: str) -> str:
    """rand.SafeEncodeString: each byte of `s` mapped onto the safe alphabet (byte value modulo 27)."""
    n = len(SAFE_ALPHABET)
    return "".join(SAFE_ALPHABET[b % n] for b in s.encode())


def compute_hash(template: Mapping[str, Any], collision_count: int | None) -> str:
    """The pod-template-hash of a Deployment's pod template (see the module docstring on parity)."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    h = fnv32a(data)
    if collision_count is not None:
        h = fnv32a((collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4), h)
    return safe_encode(str(h))
