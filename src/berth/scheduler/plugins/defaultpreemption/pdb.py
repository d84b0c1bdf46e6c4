"""PodDisruptionBudgets as preemption reads them: which victims would violate a budget."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from berth.api.labels import LabelSelectorError, Selector, compile_label_selector
from berth.scheduler.framework.podinfo import PodInfo

PDB_KEY = ("policy", "PodDisruptionBudget")


class Budget:
    """One PodDisruptionBudget compiled: namespace, selector (None matches nothing), allowance, disrupted pods."""

    __slots__ = ("allowed", "disrupted", "name", "namespace", "selector")

    def __init__(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        self.name: str = meta.get("name") or ""
        self.namespace: str = meta.get("namespace") or "default"
        selector: Selector | None
        try:
            selector = compile_label_selector(spec.get("selector"))
        except (LabelSelectorError, TypeError, ValueError):
            selector = None  # an invalid selector matches no pod
        if selector is not None and (selector.is_everything() or selector.is_nothing()):
            selector = None  # a nil or empty selector matches nothing here
        self.selector = selector
        allowed = status.get("disruptionsAllowed")
        self.allowed: int = int(allowed) if isinstance(allowed, int | float) else 0
        disrupted = status.get("disruptedPods")
        self.disrupted: frozenset[str] = (
            frozenset(disrupted) if isinstance(disrupted, Mapping) else frozenset()
        )

    def matches(self, pod: PodInfo) -> bool:
        """Whether the budget covers ``pod`` (same namespace, selector matches its labels)."""
        return (
            self.selector is not None
            and self.namespace == pod.namespace
            and bool(pod.labels)
            and self.selector.matches(pod.labels)
        )


class BudgetCache:
    """Compiled budgets, rebuilt only for PDB objects whose resourceVersion changed."""

    __slots__ = ("_compiled",)

    def __init__(self) -> None:
        self._compiled: dict[tuple[str, str, str], Budget] = {}

    def compile(self, objs: Iterable[Mapping[str, Any]]) -> list[Budget]:
        """The budgets of ``objs`` in order."""
        out: list[Budget] = []
        fresh: dict[tuple[str, str, str], Budget] = {}
        for obj in objs:
            meta = obj.get("metadata") or {}
            key = (
                meta.get("namespace") or "",
                meta.get("name") or "",
                str(meta.get("resourceVersion") or ""),
            )
            b = self._compiled.get(key)
            if b is None or not key[2]:
                b = Budget(obj)
            fresh[key] = b
            out.append(b)
        self._compiled = fresh
        return out


def split_by_pdb_violation(
    pods: Sequence[PodInfo], budgets: Sequence[Budget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """kube's filterPodsWithPDBViolation: (violating, non-violating), each in the order of ``pods``.

    Every matching budget not already listing the pod in disruptedPods is debited once per pod; a pod whose
    debit takes any budget below zero is violating.
    """
    if not budgets:
        return [], list(pods)
    left = [b.allowed for b in budgets]
    violating: list[PodInfo] = []
    fine: list[PodInfo] = []
    for p in pods:
        violated = False
        if p.labels:
            for i, b in enumerate(budgets):
                if not b.matches(p) or p.name in b.disrupted:
                    continue
                left[i] -= 1
                if left[i] < 0:
                    violated = True
        (violating if violated else fine).append(p)
    return violating, fine
