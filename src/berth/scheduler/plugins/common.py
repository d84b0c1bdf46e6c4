"""What the simple built-in plugins share: the cluster events they wait for, and the parts of a Filter or
Score that many of them would otherwise write out again."""

from __future__ import annotations

from berth.scheduler.framework import (
    ClusterEvent,
    CycleState,
    NodeInfo,
    NodeTable,
    PodInfo,
    Verdicts,
    default_normalize,
)
from berth.scheduler.framework.nodetable import BoolArray, IntArray
from berth.scheduler.framework.status import SUCCESS, Status

# a node was added, or changed (labels, taints, cordon, capacity): it may now admit a pod
NODE_ADD_OR_UPDATE = ClusterEvent("Node", frozenset({"Add", "Update"}))
# an assigned pod was deleted: what it held on its node (resources, ports) is free again
POD_DELETE = ClusterEvent("Pod", frozenset({"Delete"}))


class NodeObjectFilter:
    """Mixin of a Filter plugin whose verdict reads only the node object, never the pods counted on it.

    Removing pods (preemption) cannot change such a verdict (see Framework.run_filter_node), and a pod it
    rejected is worth retrying only once a node is added or changed.
    """

    filter_ignores_node_pods = True

    def events_to_register(self) -> list[ClusterEvent]:
        """A node added or changed may admit the pod."""
        return [NODE_ADD_OR_UPDATE]


class PodHoldingsFilter:
    """Mixin of a Filter plugin that rejects a node for what the pods on it already hold (resources, host
    ports): a pod it rejected is worth retrying once a pod is deleted, or a node is added or changed."""

    def events_to_register(self) -> list[ClusterEvent]:
        """A deleted pod frees what it held; a new or changed node may have room."""
        return [POD_DELETE, NODE_ADD_OR_UPDATE]


class OneReasonFilter:
    """Base of a Filter plugin whose every rejection is the status ``reject``.

    A subclass says whether the pod fits one node (:meth:`fits`) and on which rows of the table it fits
    (:meth:`passing_rows`, which must agree); this class gives the per-node and batched Filter forms.
    """

    name: str
    reject: Status

    def fits(self, pod: PodInfo, node: NodeInfo) -> bool:
        """Whether ``pod`` may run on ``node``."""
        raise NotImplementedError

    def passing_rows(self, pod: PodInfo, table: NodeTable) -> BoolArray | None:
        """Per row of ``table`` whether ``pod`` may run there; None when it may on every row."""
        raise NotImplementedError

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Per-node form."""
        return SUCCESS if self.fits(pod, node) else self.reject

    def filter_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        """Batched form over every row."""
        passed = self.passing_rows(pod, table)
        if passed is None:
            return Verdicts.all_pass(table.size)
        return Verdicts.single(passed, self.reject)


class DefaultNormalizeScore:
    """Mixin of a Score plugin whose raw scores are rescaled by kube's DefaultNormalizeScore: to 0..100 by the
    maximum, reversed when ``reverse_scores`` (a lower raw score is better)."""

    reverse_scores = False

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        """DefaultNormalizeScore (reversed when ``reverse_scores``)."""
        return default_normalize(scores, reverse=self.reverse_scores)


__all__ = [
    "NODE_ADD_OR_UPDATE",
    "POD_DELETE",
    "DefaultNormalizeScore",
    "NodeObjectFilter",
    "OneReasonFilter",
    "PodHoldingsFilter",
]
