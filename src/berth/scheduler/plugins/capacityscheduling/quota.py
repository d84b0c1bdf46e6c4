"""The plugin's book of ElasticQuotas: per-namespace min, max and used, and the checks PreFilter and
preemption make against them.

Rules (per resource, amounts as the scheduler counts them, cpu in milli-units):

* a resource named in no quota (neither min nor max of any) is not governed: it is never checked;
* a resource missing from a quota's max (or a quota without max) is unbounded for that quota;
* a resource missing from a quota's min counts as a min of 0;
* a check "with a request" looks only at the resources the request asks for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

Amounts = Mapping[str, int]


def add_into(into: dict[str, int], amounts: Amounts, sign: int = 1) -> None:
    """``into += sign * amounts`` per resource."""
    for r, v in amounts.items():
        into[r] = into.get(r, 0) + sign * v


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """What PreFilter computed: the pod's request, plus the nominated pods counted against its quota
    (``in_quota``) and against the total min (``total``); for a pod that borrows (its quota over min with
    ``in_quota``), ``guarded`` is ``total`` plus the unused min of the other quotas whose pending pods want
    it (None when the pod does not borrow or nobody wants that min)."""

    request: Amounts
    in_quota: Amounts
    total: Amounts
    guarded: Amounts | None = None


class QuotaInfo:
    """One namespace's ElasticQuota: its limits, the pods counted in ``used`` and their requests."""

    __slots__ = ("leaving", "leaving_used", "max", "min", "name", "namespace", "pods", "used")

    def __init__(self, namespace: str, name: str, min_: Amounts, max_: Amounts | None) -> None:
        self.namespace = namespace
        self.name = name
        self.min: dict[str, int] = dict(min_)
        self.max: dict[str, int] | None = None if max_ is None else dict(max_)
        self.used: dict[str, int] = {}
        self.pods: dict[str, Amounts] = {}  # pod uid -> its requests
        self.leaving: set[str] = set()  # counted pods being deleted (terminating)
        self.leaving_used: dict[str, int] = {}  # their summed requests

    def add_pod(self, uid: str, requests: Amounts) -> bool:
        """Count a pod once; False when it was already counted."""
        if uid in self.pods:
            return False
        self.pods[uid] = requests
        add_into(self.used, requests)
        return True

    def remove_pod(self, uid: str) -> Amounts | None:
        """Stop counting a pod; its requests, or None when it was not counted."""
        requests = self.pods.pop(uid, None)
        if requests is not None:
            add_into(self.used, requests, -1)
            if uid in self.leaving:
                self.leaving.discard(uid)
                add_into(self.leaving_used, requests, -1)
        return requests

    def mark_leaving(self, uid: str) -> bool:
        """A counted pod is being deleted; whether it was newly marked."""
        requests = self.pods.get(uid)
        if requests is None or uid in self.leaving:
            return False
        self.leaving.add(uid)
        add_into(self.leaving_used, requests)
        return True

    def staying_used(self) -> dict[str, int]:
        """``used`` without the pods being deleted."""
        used = dict(self.used)
        add_into(used, self.leaving_used, -1)
        return used

    def names(self) -> set[str]:
        """The resources this quota names (in min or max)."""
        return set(self.min) | set(self.max or ())


def over_max_with(used: Amounts, max_: Amounts | None, request: Amounts) -> bool:
    """Whether ``used + request`` exceeds ``max`` for a requested resource that max bounds."""
    if max_ is None:
        return False
    for r, v in request.items():
        if v <= 0:
            continue
        bound = max_.get(r)
        if bound is not None and used.get(r, 0) + v > bound:
            return True
    return False


def over_min_with(used: Amounts, min_: Amounts, request: Amounts, governed: AbstractSet[str]) -> bool:
    """Whether ``used + request`` exceeds ``min`` (0 when unnamed) for a requested, governed resource."""
    for r, v in request.items():
        if v <= 0 or r not in governed:
            continue
        if used.get(r, 0) + v > min_.get(r, 0):
            return True
    return False


def over_min(used: Amounts, min_: Amounts, governed: Iterable[str]) -> bool:
    """Whether ``used`` exceeds ``min`` (0 when unnamed) for any governed resource."""
    return any(used.get(r, 0) > min_.get(r, 0) for r in governed)


class QuotaBook:
    """Every namespace's quota, the governed resources and the totals of min and used."""

    __slots__ = ("_governed", "_over_min", "infos", "total_leaving", "total_min", "total_used")

    def __init__(self) -> None:
        self.infos: dict[str, QuotaInfo] = {}
        self.total_min: dict[str, int] = {}
        self.total_used: dict[str, int] = {}
        self.total_leaving: dict[str, int] = {}  # summed requests of counted pods being deleted
        self._governed: frozenset[str] = frozenset()
        self._over_min: dict[str, bool] = {}  # namespace -> used_over_min, until its used changes

    @property
    def governed(self) -> frozenset[str]:
        """The resources some quota names."""
        return self._governed

    def refresh(self) -> None:
        """Recompute governed resources and totals (after quotas change)."""
        names: set[str] = set()
        total_min: dict[str, int] = {}
        total_used: dict[str, int] = {}
        total_leaving: dict[str, int] = {}
        for q in self.infos.values():
            names |= q.names()
            add_into(total_min, q.min)
            add_into(total_used, q.used)
            add_into(total_leaving, q.leaving_used)
        self._governed = frozenset(names)
        self.total_min = total_min
        self.total_used = total_used
        self.total_leaving = total_leaving
        self._over_min.clear()

    def add_pod(self, namespace: str, uid: str, requests: Amounts) -> bool:
        """Count a pod in its namespace's quota (if any); whether it was newly counted."""
        q = self.infos.get(namespace)
        if q is None or not q.add_pod(uid, requests):
            return False
        add_into(self.total_used, requests)
        self._over_min.pop(namespace, None)
        return True

    def remove_pod(self, namespace: str, uid: str) -> bool:
        """Stop counting a pod in its namespace's quota; whether it was counted."""
        q = self.infos.get(namespace)
        if q is None:
            return False
        was_leaving = uid in q.leaving
        requests = q.remove_pod(uid)
        if requests is None:
            return False
        add_into(self.total_used, requests, -1)
        if was_leaving:
            add_into(self.total_leaving, requests, -1)
        self._over_min.pop(namespace, None)
        return True

    def mark_leaving(self, namespace: str, uid: str) -> None:
        """A counted pod of the namespace is being deleted: it still counts in ``used`` until it is gone, but
        preemption (``staying_over_min``, QuotaLedger) treats it as leaving."""
        q = self.infos.get(namespace)
        if q is not None and q.mark_leaving(uid):
            add_into(self.total_leaving, q.pods[uid])

    def staying_over_min(self, namespace: str) -> bool:
        """Whether the namespace's quota uses more than its min without its pods being deleted."""
        q = self.infos[namespace]
        if not q.leaving:
            return self.used_over_min(namespace)
        return over_min(q.staying_used(), q.min, self._governed)

    def staying_over_min_with(self, namespace: str, request: Amounts) -> bool:
        """As ``used_over_min_with``, without the namespace's pods being deleted."""
        q = self.infos[namespace]
        used = q.staying_used() if q.leaving else q.used
        return over_min_with(used, q.min, request, self._governed)

    def used_over_max_with(self, namespace: str, request: Amounts) -> bool:
        """Whether the namespace's quota would exceed its max with ``request``."""
        q = self.infos[namespace]
        return over_max_with(q.used, q.max, request)

    def used_over_min_with(self, namespace: str, request: Amounts) -> bool:
        """Whether the namespace's quota would exceed its min with ``request``."""
        q = self.infos[namespace]
        return over_min_with(q.used, q.min, request, self._governed)

    def used_over_min(self, namespace: str) -> bool:
        """Whether the namespace's quota already uses more than its min."""
        over = self._over_min.get(namespace)
        if over is None:
            q = self.infos[namespace]
            over = self._over_min[namespace] = over_min(q.used, q.min, self._governed)
        return over

    def aggregated_over_min_with(self, request: Amounts) -> bool:
        """Whether the total used of all quotas plus ``request`` exceeds the total of all min."""
        return over_min_with(self.total_used, self.total_min, request, self._governed)


class QuotaLedger:
    """A what-if view of a QuotaBook with some pods removed (the preemption dry run on one node), starting
    from the pods that stay (those being deleted are already taken out); namespaces are copied only when
    touched."""

    __slots__ = ("book", "total_used", "used")

    def __init__(self, book: QuotaBook) -> None:
        self.book = book
        self.used: dict[str, dict[str, int]] = {}
        self.total_used: dict[str, int] = dict(book.total_used)
        add_into(self.total_used, book.total_leaving, -1)

    def _used(self, namespace: str) -> Amounts:
        u = self.used.get(namespace)
        if u is not None:
            return u
        q = self.book.infos[namespace]
        if q.leaving:
            u = self.used[namespace] = q.staying_used()
            return u
        return q.used

    def change(self, namespace: str, uid: str, sign: int) -> None:
        """Remove (sign -1) or give back (sign +1) a counted pod's requests (not one being deleted)."""
        q = self.book.infos.get(namespace)
        if q is None or uid in q.leaving:
            return
        requests = q.pods.get(uid)
        if requests is None:
            return
        u = self.used.get(namespace)
        if u is None:
            u = self.used[namespace] = q.staying_used() if q.leaving else dict(q.used)
        add_into(u, requests, sign)
        add_into(self.total_used, requests, sign)

    def used_over_max_with(self, namespace: str, request: Amounts) -> bool:
        """As QuotaBook.used_over_max_with, over this view."""
        return over_max_with(self._used(namespace), self.book.infos[namespace].max, request)

    def used_over_min_with(self, namespace: str, request: Amounts) -> bool:
        """As QuotaBook.used_over_min_with, over this view."""
        q = self.book.infos[namespace]
        return over_min_with(self._used(namespace), q.min, request, self.book.governed)

    def used_over_min(self, namespace: str) -> bool:
        """As QuotaBook.used_over_min, over this view."""
        return over_min(self._used(namespace), self.book.infos[namespace].min, self.book.governed)

    def aggregated_over_min_with(self, request: Amounts) -> bool:
        """As QuotaBook.aggregated_over_min_with, over this view."""
        return over_min_with(self.total_used, self.book.total_min, request, self.book.governed)


class PendingDemand:
    """The requests of each namespace's pending pods (not bound, not nominated), counted by distinct request
    vector: a quota below its min "wants" it while one of those pods would fit in its unused min."""

    __slots__ = ("_by_ns", "_of")

    def __init__(self) -> None:
        self._by_ns: dict[str, dict[tuple[tuple[str, int], ...], int]] = {}
        self._of: dict[str, tuple[str, tuple[tuple[str, int], ...]]] = {}  # uid -> (namespace, vector)

    def __contains__(self, uid: object) -> bool:
        return uid in self._of

    def add(self, namespace: str, uid: str, requests: Amounts) -> None:
        """Count a pending pod once."""
        if uid in self._of:
            return
        vector = tuple(sorted((r, v) for r, v in requests.items() if v > 0))
        self._of[uid] = (namespace, vector)
        counts = self._by_ns.setdefault(namespace, {})
        counts[vector] = counts.get(vector, 0) + 1

    def remove(self, uid: str) -> None:
        """Stop counting a pod (bound, nominated or gone)."""
        entry = self._of.pop(uid, None)
        if entry is None:
            return
        namespace, vector = entry
        counts = self._by_ns[namespace]
        if counts[vector] <= 1:
            del counts[vector]
        else:
            counts[vector] -= 1

    def fits_in(self, namespace: str, room: Amounts, governed: AbstractSet[str]) -> bool:
        """Whether a pending pod of ``namespace`` asks for governed resources, all within ``room``."""
        for vector in self._by_ns.get(namespace, ()):
            asked = False
            for r, v in vector:
                if r not in governed:
                    continue
                if v > room.get(r, 0):
                    break
                asked = True
            else:
                if asked:
                    return True
        return False
