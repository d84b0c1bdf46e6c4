"""Pure Deployment arithmetic: surge/unavailable fenceposts, ReplicaSet sums, orders and annotations."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from berth.controllers.workloads.common import (
    DESIRED_REPLICAS,
    HASH_LABEL,
    MAX_REPLICAS,
    REVISION,
    REVISION_HISTORY,
    int_field,
    scaled_value,
)

__all__ = [
    "by_creation",
    "equal_ignore_hash",
    "is_rolling",
    "max_surge",
    "max_unavailable",
    "replicas",
    "resolve_fenceposts",
]

Obj = Mapping[str, Any]

SKIPPED_ANNOTATIONS = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        REVISION,
        REVISION_HISTORY,
        DESIRED_REPLICAS,
        MAX_REPLICAS,
        "deprecated.deployment.rollback.to",
    }
)


def replicas(obj: Obj) -> int:
    """``spec.replicas`` (default 1) of a Deployment or ReplicaSet."""
    return int_field(obj.get("spec") or {}, "replicas", 1)


def status_count(rs: Obj | None, field: str) -> int:
    """An int field of a ReplicaSet's status (0 when absent or when `rs` is None)."""
    if rs is None:
        return 0
    return int((rs.get("status") or {}).get(field) or 0)


def is_rolling(d: Obj) -> bool:
    """The Deployment's strategy is RollingUpdate (the default)."""
    kind = ((d.get("spec") or {}).get("strategy") or {}).get("type", "RollingUpdate")
    return bool(kind == "RollingUpdate")


def resolve_fenceposts(d: Obj) -> tuple[int, int]:
    """(maxSurge rounded up, maxUnavailable rounded down) for the desired replicas; both 0 → (0, 1)."""
    rolling = ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    desired = replicas(d)
    surge = scaled_value(rolling.get("maxSurge", "25%"), desired, True)
    unavailable = scaled_value(rolling.get("maxUnavailable", "25%"), desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: Obj) -> int:
    """deploymentutil.MaxSurge (0 for Recreate)."""
    return resolve_fenceposts(d)[0] if is_rolling(d) else 0


def max_unavailable(d: Obj) -> int:
    """deploymentutil.MaxUnavailable (0 for Recreate or 0 replicas; at most the replicas)."""
    desired = replicas(d)
    if not is_rolling(d) or desired == 0:
        return 0
    return min(resolve_fenceposts(d)[1], desired)


def spec_sum(rss: Iterable[Obj | None]) -> int:
    """GetReplicaCountForReplicaSets: the sum of ``spec.replicas``."""
    return sum(replicas(rs) for rs in rss if rs is not None)


def status_sum(rss: Iterable[Obj | None], field: str) -> int:
    """The sum of one status field over ReplicaSets."""
    return sum(status_count(rs, field) for rs in rss if rs is not None)


def active(rss: Iterable[Obj | None]) -> list[Obj]:
    """FilterActiveReplicaSets: those with ``spec.replicas`` > 0."""
    return [rs for rs in rss if rs is not None and replicas(rs) > 0]


def _created(rs: Obj) -> tuple[str, str]:
    meta = rs["metadata"]
    return str(meta.get("creationTimestamp") or ""), str(meta.get("name", ""))


def by_creation(rss: Iterable[Obj]) -> list[Obj]:
    """ReplicaSetsByCreationTimestamp: oldest first, then by name."""
    return sorted(rss, key=_created)


def revision(rs: Obj) -> int:
    """deploymentutil.Revision: the revision annotation as an int (0 when absent or bad)."""
    raw = (rs["metadata"].get("annotations") or {}).get(REVISION, "")
    try:
        return int(raw)
    except ValueError:
        return 0


def by_revision(rss: Iterable[Obj]) -> list[Obj]:
    """ReplicaSetsByRevision: lowest revision first, then oldest."""
    return sorted(rss, key=lambda rs: (revision(rs), _created(rs)))


def by_size(rss: Iterable[Obj], newer_first: bool) -> list[Obj]:
    """ReplicaSetsBySizeNewer / BySizeOlder: larger first; equal sizes newer (or older) first."""
    ordered = by_creation(rss)
    if newer_first:
        ordered.reverse()
    return sorted(ordered, key=lambda rs: -replicas(rs))


def _semantic_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in meta.items() if v not in (None, {}, [], "")}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != HASH_LABEL}
    if labels:
        out["labels"] = labels
    else:
        out.pop("labels", None)
    return out


def equal_ignore_hash(t1: Obj, t2: Obj) -> bool:
    """deploymentutil.EqualIgnoreHash: pod templates equal once the pod-template-hash label is dropped."""
    if t1.get("spec") != t2.get("spec"):
        return False
    return _semantic_meta(t1.get("metadata") or {}) == _semantic_meta(t2.get("metadata") or {})


def round_half_away(x: float) -> int:
    """Go's math.Round (halves away from zero)."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def copy_annotations(d: Obj, annotations: dict[str, str]) -> bool:
    """copyDeploymentAnnotationsToReplicaSet into `annotations`; True when one changed."""
    changed = False
    for k, v in ((d["metadata"].get("annotations")) or {}).items():
        if k in SKIPPED_ANNOTATIONS or annotations.get(k) == v:
            continue
        annotations[k] = v
        changed = True
    return changed


def set_revision(annotations: dict[str, str], new_revision: str) -> bool:
    """The ReplicaSet part of SetNewReplicaSetAnnotations: raise the revision, keep the history."""
    old = annotations.get(REVISION)
    try:
        old_int = int(old) if old is not None else 0
    except ValueError:
        return False
    if old_int >= int(new_revision):
        return False
    annotations[REVISION] = new_revision
    if old is not None:
        history = annotations.get(REVISION_HISTORY, "")
        annotations[REVISION_HISTORY] = f"{history},{old}" if history else old
    return True


def set_replicas_annotations(annotations: dict[str, str], desired: int, maximum: int) -> bool:
    """SetReplicasAnnotations: desired-replicas and max-replicas; True when one changed."""
    changed = False
    for key, value in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(maximum))):
        if annotations.get(key) != value:
            annotations[key] = value
            changed = True
    return changed


def annotation_int(rs: Obj, key: str) -> int | None:
    """An int annotation of a ReplicaSet, or None when absent or bad."""
    raw = (rs["metadata"].get("annotations") or {}).get(key)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return None


def proportion(rs: Obj, d: Obj, to_add: int, added: int) -> int:
    """deploymentutil.GetProportion: this ReplicaSet's share of a proportional scale."""
    if replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = _fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _fraction(rs: Obj, d: Obj) -> int:
    if replicas(d) == 0:
        return -replicas(rs)
    maximum = replicas(d) + max_surge(d)
    before = annotation_int(rs, MAX_REPLICAS)
    if not before:
        before = int((d.get("status") or {}).get("replicas") or 0)
        if before == 0:
            return 0
    return round_half_away(replicas(rs) * maximum / before) - replicas(rs)


def sort_key_new_first(rss: Sequence[Obj]) -> list[Obj]:
    """Newest first (reverse ReplicaSetsByCreationTimestamp)."""
    return list(reversed(by_creation(rss)))
