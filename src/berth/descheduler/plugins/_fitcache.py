"""NodeFit answers for many pods at once: pods NodeFit cannot tell apart share one answer.

`NodeFit.mask` depends on a pod's nodeSelector, node affinity and tolerations, its requests, its own node
and — only when it has pod anti-affinity — its name, namespace and labels. Replicas of one workload on one
node therefore get the same mask and the same answer to upstream's ``PodFitsAnyNode`` /
``PodFitsAnyOtherNode``; `FitMasks` computes them once for such pods (told apart by the ``repr`` of those
fields: equal fields written in another order only cost a second computation).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from berth.descheduler.nodefit import NodeFit
from berth.descheduler.view import ClusterView

__all__ = ["FitMasks"]

Mask = npt.NDArray[np.bool_]
Indices = npt.NDArray[np.intp]
_Key = tuple[str, tuple[tuple[str, int], ...], str]


class FitMasks:
    """NodeFit masks (over `NodeFit`'s nodes) and fit answers of pods, cached per pod shape, requests and
    node."""

    def __init__(self, fit: NodeFit, view: ClusterView) -> None:
        """Answer with `fit` over the pods of `view`."""
        self.fit = fit
        self.view = view
        self._masks: dict[_Key, Mask] = {}
        self._answers: dict[tuple[_Key, int, bool], bool] = {}
        self._pinned: dict[int, Indices] = {}

    def indices(self, node_names: Iterable[Any]) -> Indices:
        """The positions of the named nodes in the masks (kept alive as long as this object)."""
        index = self.fit.index
        got = np.array([index[str(n)] for n in node_names], dtype=np.intp)
        self._pinned[id(got)] = got
        return got

    def _key(self, pod: Mapping[str, Any]) -> _Key | None:
        spec = pod.get("spec") or {}
        affinity = spec.get("affinity") or {}
        if affinity.get("podAntiAffinity"):
            return None
        return (
            repr((spec.get("nodeSelector"), affinity.get("nodeAffinity"), spec.get("tolerations"))),
            tuple(sorted(self.view.requests(pod).items())),
            str(spec.get("nodeName") or ""),
        )

    def mask(self, pod: Mapping[str, Any]) -> Mask:
        """`NodeFit.mask` of the pod (shared with the pods it cannot be told apart from; do not modify)."""
        key = self._key(pod)
        if key is None:
            return self.fit.mask(pod)
        got = self._masks.get(key)
        if got is None:
            got = self.fit.mask(pod)
            self._masks[key] = got
        return got

    def _answer(self, pod: Mapping[str, Any], indices: Indices, other: bool) -> bool:
        if not len(indices):
            return False
        picked = self.mask(pod)[indices]
        if other:
            own = self.fit.index.get(str((pod.get("spec") or {}).get("nodeName") or ""))
            if own is not None:
                picked = picked & (indices != own)
        return bool(picked.any())

    def _cached(self, pod: Mapping[str, Any], indices: Indices, other: bool) -> bool:
        key = self._key(pod)
        if key is None or id(indices) not in self._pinned:
            return self._answer(pod, indices, other)
        slot = (key, id(indices), other)
        got = self._answers.get(slot)
        if got is None:
            got = self._answers[slot] = self._answer(pod, indices, other)
        return got

    def fits_any(self, pod: Mapping[str, Any], indices: Indices) -> bool:
        """Upstream's ``PodFitsAnyNode`` over the nodes at `indices`."""
        return self._cached(pod, indices, False)

    def fits_any_other(self, pod: Mapping[str, Any], indices: Indices) -> bool:
        """Upstream's ``PodFitsAnyOtherNode``: as `fits_any`, leaving out the pod's own node."""
        return self._cached(pod, indices, True)
