"""``berth whatif``: would a pod, a gang or a Reservation fit in a cluster now, and if not, what would make it fit.

Every answer is a dry run of the real control plane on a copy of the cluster (a snapshot's objects, or a live
cluster's as ``read_cluster`` reads them), on a virtual clock, exactly as ``berth deschedule`` copies one: the
copy first does what the cluster would do at that instant (its pending pods are scheduled), then the subject
is created and the scheduler runs until it is placed (preemption included: the victims' graceful deletion
runs its course) or refused. So every plugin — reservations, ElasticQuota, coscheduling, preemption and its
PodDisruptionBudgets — answers as in ``berth simulate``.

When the subject does not fit, three changes are tried, each by another dry run on a fresh copy with the
change made, never estimated: a higher priority (the existing PriorityClasses above the pod's, lowest first,
then a class of value 1000000000), more quota (the headroom its ElasticQuota lacks, exactly), and more nodes
(the fewest copies of one existing node shape). A subject that has the name of an object in the cluster
replaces that object in the copy. Nothing is ever written to the cluster.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from berth.api.elasticquota import quota_limits
from berth.api.errors import StatusError
from berth.api.podgroup import POD_GROUP_GROUPS, POD_GROUP_LABEL
from berth.api.quantity import format_resource
from berth.api.reservation import RESERVATION_API_VERSION
from berth.api.resources import node_allocatable, pod_requests
from berth.clock import SimClock
from berth.controlplane.plane import ControlPlane, install_admission
from berth.scheduler.framework.config import SchedulerConfig
from berth.scheduler.trace import Tracer
from berth.sim.deschedule import load_snapshot
from berth.sim.explain import Subject

__all__ = [
    "HIGHEST_USER_PRIORITY",
    "Answer",
    "Question",
    "Suggestion",
    "Trial",
    "WhatIfError",
    "answer",
    "question_from",
    "try_question",
]

Obj = dict[str, Any]

HIGHEST_USER_PRIORITY = 1_000_000_000
"""The largest value a user's PriorityClass may have (kube reserves those above for system classes)."""
SETTLE_SECONDS = 10.0
"""Virtual time given to the scheduler beyond the longest grace period and Permit wait."""
DEFAULT_GRACE_SECONDS = 30.0
DEFAULT_PERMIT_SECONDS = 60.0
NOT_ATTEMPTED = "never attempted by the scheduler"
COSCHEDULING = "Coscheduling"
NO_COSCHEDULING = (
    "no scheduler profile enables Coscheduling: the gang's pods were placed one by one "
    "(the answer still counts the gang all or nothing)"
)
MAX_NEW_NODES = 16
"""The most copies of one node shape tried."""

_POD = ("", "Pod")
_EVENT = ("", "Event")
_HOSTNAME = "kubernetes.io/hostname"
_TERMINAL = ("Succeeded", "Failed")
_AVAILABLE = re.compile(r"^0/(\d+) nodes are available: (.*)$", re.S)
_PART = re.compile(r", (?=\d+ )")


class Runner(Protocol):
    """One dry run of the question on these objects (with a priority, watching some nodes)."""

    def __call__(
        self,
        objs: Sequence[Obj],
        priority: tuple[str, int] | None = None,
        watch: frozenset[str] = frozenset(),
    ) -> Trial: ...


class WhatIfError(ValueError):
    """A question ``berth whatif`` cannot ask (bad input file, a subject the cluster refuses)."""


# --- the question -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """What is asked: one pod (``Pod``), the pods of one gang (``PodGroup``, with its PodGroup object when given)
    or one Koordinator Reservation (``Reservation``), as read from ``source``."""

    kind: str
    objects: tuple[Obj, ...]
    source: str

    @property
    def pods(self) -> list[Obj]:
        """The subject's pods (none for a Reservation)."""
        return [o for o in self.objects if o.get("kind") == "Pod"]

    @property
    def pod_group(self) -> Obj | None:
        """The gang's PodGroup object, if the file has one."""
        return next((o for o in self.objects if o.get("kind") == "PodGroup"), None)

    @property
    def title(self) -> str:
        """``Pod default/web``, ``Gang default/g1 (3 pods)`` or ``Reservation r1``."""
        if self.kind == "Reservation":
            return f"Reservation {_name(self.objects[0])}"
        if self.kind == "Pod":
            return f"Pod {_ref(self.objects[0])}"
        pods = self.pods
        return f"Gang {_ns(pods[0])}/{_group_of(pods[0])} ({len(pods)} pods)"


def _ns(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "default")


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _ref(obj: Mapping[str, Any]) -> str:
    return f"{_ns(obj)}/{_name(obj)}"


def _group_of(pod: Mapping[str, Any]) -> str:
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(POD_GROUP_LABEL) or "")


def _who(obj: Mapping[str, Any]) -> str:
    """``Pod "default/web"`` or ``Reservation "r1"``, as the manifest loader names objects."""
    cluster_scoped = obj.get("kind") in ("Reservation", "Node", "PriorityClass", "Namespace")
    return f'{obj.get("kind")} "{_name(obj) if cluster_scoped else _ref(obj)}"'


def question_from(kind: str, objects: Sequence[tuple[Obj, str]], source: str) -> Question:
    """The question of ``--pod`` (kind ``Pod``), ``--gang`` (``PodGroup``) or ``--reservation``
    (``Reservation``) from the file's objects (each with the place it was read from); WhatIfError naming the
    file, the object, the field and the value when the file does not hold such a question."""
    wanted = "Pod" if kind in ("Pod", "PodGroup") else "Reservation"
    for obj, where in objects:
        known = ("Pod", "PodGroup") if kind == "PodGroup" else (wanted,)
        if obj.get("kind") not in known:
            raise WhatIfError(
                f'{where}: {_who(obj)}: kind: Unsupported value: "{obj.get("kind")}" '
                f"(--{_option(kind)} reads {' and '.join(known)} objects)"
            )
    subjects = [(o, w) for o, w in objects if o.get("kind") == wanted]
    if not subjects:
        raise WhatIfError(f"{source}: no {wanted} in the file")
    if kind != "PodGroup" and len(subjects) > 1:
        raise WhatIfError(
            f"{subjects[1][1]}: {_who(subjects[1][0])}: a second {wanted} (--{_option(kind)} takes one; "
            "--gang takes the pods of one gang)"
        )
    for obj, where in subjects:
        node = (obj.get("spec") or {}).get("nodeName")
        if obj.get("kind") == "Pod" and node:
            raise WhatIfError(
                f'{where}: {_who(obj)}: spec.nodeName: Invalid value: "{node}": the pod is already assigned '
                "(a what-if pod is left to the scheduler)"
            )
    if kind == "PodGroup":
        _check_gang(objects)
    return Question(kind, tuple(copy.deepcopy(o) for o, _ in objects), source)


def _option(kind: str) -> str:
    return {"Pod": "pod", "PodGroup": "gang", "Reservation": "reservation"}[kind]


def _check_gang(objects: Sequence[tuple[Obj, str]]) -> None:
    groups = [(o, w) for o, w in objects if o.get("kind") == "PodGroup"]
    if len(groups) > 1:
        raise WhatIfError(f"{groups[1][1]}: {_who(groups[1][0])}: a second PodGroup (--gang takes one gang)")
    first: tuple[str, str] | None = None
    for obj, where in objects:
        if obj.get("kind") != "Pod":
            continue
        group = _group_of(obj)
        if not group:
            raise WhatIfError(
                f'{where}: {_who(obj)}: metadata.labels["{POD_GROUP_LABEL}"]: Required value '
                "(--gang reads the pods of one PodGroup)"
            )
        if first is None:
            first = (_ns(obj), group)
        elif (_ns(obj), group) != first:
            raise WhatIfError(
                f'{where}: {_who(obj)}: metadata.labels["{POD_GROUP_LABEL}"]: Invalid value: "{group}": '
                f"not the gang {first[0]}/{first[1]} of the file's first pod"
            )
    if groups and first is not None:
        obj, where = groups[0]
        if (_ns(obj), _name(obj)) != first:
            raise WhatIfError(
                f'{where}: {_who(obj)}: metadata.name: Invalid value: "{_name(obj)}": the pods belong to '
                f"PodGroup {first[0]}/{first[1]}"
            )


# --- one dry run ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Victim:
    """A pod the subject's preemption evicted."""

    namespace: str
    name: str
    node: str
    priority: int

    def to_dict(self) -> dict[str, Any]:
        """Its JSON form."""
        return {"namespace": self.namespace, "name": self.name, "node": self.node, "priority": self.priority}


@dataclass(frozen=True)
class Trial:
    """The outcome of one dry run: where each subject went (None: not placed), the nominations, the victims,
    the failure message of the first subject refused, and per ElasticQuota (``namespace/name``) the amount
    of the subject's requests taken beyond its min (borrowed from the other quotas)."""

    fits: bool
    nodes: dict[str, str | None]
    nominated: dict[str, str]
    victims: tuple[Victim, ...]
    message: str
    borrowed: dict[str, dict[str, int]] = field(default_factory=dict)
    used_nodes: frozenset[str] = frozenset()
    """Of the nodes a dry run was asked to watch, those holding a pod at its end."""
    notes: tuple[str, ...] = ()
    """What the user should know about how the answer was reached (printed as warnings)."""


def _horizon(objects: Iterable[Obj]) -> float:
    """Virtual seconds after which a dry run stops: the longest grace period of a pod (a victim's graceful
    deletion) plus the longest Permit wait of a gang, and a margin."""
    grace = DEFAULT_GRACE_SECONDS
    permit = DEFAULT_PERMIT_SECONDS
    for o in objects:
        spec = o.get("spec") or {}
        if o.get("kind") == "Pod" and spec.get("terminationGracePeriodSeconds") is not None:
            grace = max(grace, float(spec["terminationGracePeriodSeconds"]))
        elif o.get("kind") == "PodGroup" and spec.get("scheduleTimeoutSeconds") is not None:
            permit = max(permit, float(spec["scheduleTimeoutSeconds"]))
    return grace + permit + SETTLE_SECONDS


def _quota_usage(
    pods: Iterable[Obj], quotas: Iterable[Obj]
) -> dict[str, tuple[str, dict[str, int], dict[str, int]]]:
    """Per namespace with an ElasticQuota: the quota's name, its min and the requests of the namespace's pods
    that hold resources (assigned, not finished, not terminating)."""
    out: dict[str, tuple[str, dict[str, int], dict[str, int]]] = {}
    for q in quotas:
        mins, _ = quota_limits(q)
        out[_ns(q)] = (_name(q), dict(mins), {})
    for p in pods:
        row = out.get(_ns(p))
        meta = p.get("metadata") or {}
        if (
            row is None
            or not (p.get("spec") or {}).get("nodeName")
            or (p.get("status") or {}).get("phase") in _TERMINAL
            or meta.get("deletionTimestamp")
        ):
            continue
        for r, v in pod_requests(p).items():
            row[2][r] = row[2].get(r, 0) + v
    return out


def _borrowed(
    before: Mapping[str, tuple[str, dict[str, int], dict[str, int]]],
    after: Mapping[str, tuple[str, dict[str, int], dict[str, int]]],
) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for ns, (name, mins, used_after) in after.items():
        used_before = before.get(ns, (name, mins, {}))[2]
        row = {}
        for r, m in mins.items():
            more = max(0, used_after.get(r, 0) - m) - max(0, used_before.get(r, 0) - m)
            if more > 0:
                row[r] = more
        if row:
            out[f"{ns}/{name}"] = row
    return out


def _list(store: Any, key: tuple[str, str]) -> list[Obj]:
    items, _ = store.list(key)
    return list(items)


def _subject_objects(
    question: Question, objects: Sequence[Obj], priority: tuple[str, int] | None
) -> list[Obj]:
    """The objects to create for the subject: without identity or status, the gang's PodGroup made when
    neither the file nor the cluster has one (minMember: every pod of the file), with ``priority`` (a
    PriorityClass name and value) instead of the pods' own."""
    out: list[Obj] = []
    for obj in question.objects:
        o = copy.deepcopy(obj)
        meta = o.setdefault("metadata", {})
        for k in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"):
            meta.pop(k, None)
        o.pop("status", None)
        if priority is not None and o.get("kind") == "Pod":
            spec = o.setdefault("spec", {})
            spec.pop("priority", None)
            spec.pop("preemptionPolicy", None)
            spec["priorityClassName"] = priority[0]
        out.append(o)
    if question.kind == "PodGroup" and question.pod_group is None:
        pod = question.pods[0]
        ns, group = _ns(pod), _group_of(pod)
        if not any(o.get("kind") == "PodGroup" and (_ns(o), _name(o)) == (ns, group) for o in objects):
            out.insert(
                0,
                {
                    "apiVersion": f"{POD_GROUP_GROUPS[0]}/v1alpha1",
                    "kind": "PodGroup",
                    "metadata": {"name": group, "namespace": ns},
                    "spec": {"minMember": len(question.pods)},
                },
            )
    return out


def _identity(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    cluster_scoped = obj.get("kind") in ("Reservation", "Node", "PriorityClass", "Namespace")
    return (str(obj.get("kind")), "" if cluster_scoped else _ns(obj), _name(obj))


def _min_member(question: Question, created: Sequence[Obj], objects: Sequence[Obj]) -> int:
    pod = question.pods[0]
    key = (_ns(pod), _group_of(pod))
    for o in [*created, *objects]:
        if o.get("kind") == "PodGroup" and (_ns(o), _name(o)) == key:
            return int((o.get("spec") or {}).get("minMember") or len(question.pods))
    return len(question.pods)


def try_question(
    objects: Sequence[Obj],
    question: Question,
    *,
    now: datetime,
    config: SchedulerConfig | None = None,
    seed: int = 0,
    validated: bool = False,
    priority: tuple[str, int] | None = None,
    watch_nodes: frozenset[str] = frozenset(),
) -> Trial:
    """One dry run: the cluster `objects` copied into an embedded store at `now`, its pending work done, then
    the subject created (with `priority`: under that PriorityClass, created in the copy if missing) and the
    scheduler run until it is placed or refused; the trial says which of `watch_nodes` hold pods then."""
    created = _subject_objects(question, objects, priority)
    replaced = {_identity(o) for o in created}
    kept = [o for o in objects if _identity(o) not in replaced]
    if priority is not None and not any(
        o.get("kind") == "PriorityClass" and _name(o) == priority[0] for o in kept
    ):
        kept.append(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": priority[0]},
                "value": priority[1],
            }
        )
    store, clock = load_snapshot(kept, now=now, seed=seed, validated=validated)
    install_admission(store)
    plane = ControlPlane(store, clock, config=config, seed=seed, garbage_collection=False)
    tracer: Tracer | None = None
    if watch_nodes:
        wanted = [
            Subject(str(o["kind"]), "" if o["kind"] == "Reservation" else _ns(o), _name(o))
            for o in created
            if o.get("kind") in ("Pod", "Reservation")
        ]
        tracer = plane.scheduler.tracer = Tracer(lambda pod: any(w.wants(pod) for w in wanted))
    try:
        plane.replay()
        _run_until(plane, clock, 0.0, lambda: False)
        quotas = _list(store, ("scheduling.x-k8s.io", "ElasticQuota"))
        pods = _list(store, _POD)
        before = _quota_usage(pods, quotas)
        priorities = {(_ns(p), _name(p)): int((p.get("spec") or {}).get("priority") or 0) for p in pods}
        subjects: list[Obj] = []
        for obj in created:
            try:
                made = store.create(obj)
            except StatusError as e:
                raise WhatIfError(f"{question.source}: {_who(obj)}: {e}") from None
            if made.get("kind") in ("Pod", "Reservation"):
                subjects.append(made)
        start = clock.now()
        horizon = start + _horizon([*kept, *created])
        need = _min_member(question, created, kept) if question.kind == "PodGroup" else len(subjects)
        outcome = _Outcome(store, subjects, need, priorities, frozenset(plane.scheduler.frameworks))
        _run_until(plane, clock, horizon, outcome.settled)
        trial = outcome.trial(before, quotas)
        if question.kind == "PodGroup" and not any(
            COSCHEDULING in fw.plugins for fw in plane.scheduler.frameworks.values()
        ):
            trial = dataclasses.replace(trial, notes=(NO_COSCHEDULING,))
        if tracer is not None:
            # a node the subject's pods could use at some attempt (a gang's may be rejected at Permit since),
            # or one holding a pod at the end
            used = {str((p.get("spec") or {}).get("nodeName")) for p in _list(store, _POD)}
            used.update(n for t in tracer.traces for n in t.feasible)
            trial = dataclasses.replace(trial, used_nodes=frozenset(watch_nodes & used))
        return trial
    finally:
        plane.close()


def _run_until(plane: ControlPlane[Any], clock: SimClock, until: float, done: Callable[[], bool]) -> None:
    """Run the control plane and the timers due by virtual time `until`, stopping early when `done()`."""
    while True:
        plane.run_until_idle()
        if done():
            return
        nxt = clock.peek()
        if nxt is None or nxt > until:
            return
        clock.step()


class _Outcome:
    """The subject's state in the copy, read from the store."""

    def __init__(
        self,
        store: Any,
        subjects: Sequence[Obj],
        need: int,
        priorities: Mapping[tuple[str, str], int],
        profiles: frozenset[str],
    ) -> None:
        self.store = store
        self.profiles = profiles
        self.subjects = list(subjects)
        self.need = need
        self.priorities = priorities  # of the pods before the subject came

    def _current(self) -> list[Obj]:
        out = []
        for s in self.subjects:
            key = (
                (RESERVATION_API_VERSION.split("/")[0], "Reservation") if s["kind"] == "Reservation" else _POD
            )
            ns = "" if s["kind"] == "Reservation" else _ns(s)
            try:
                out.append(self.store.get(key, ns, _name(s)))
            except StatusError:
                out.append(s)
        return out

    @staticmethod
    def _node(obj: Mapping[str, Any]) -> str | None:
        if obj.get("kind") == "Reservation":
            node = (obj.get("status") or {}).get("nodeName")
        else:
            node = (obj.get("spec") or {}).get("nodeName")
        return str(node) if node else None

    @staticmethod
    def _failure(obj: Mapping[str, Any]) -> str | None:
        kind = "Scheduled" if obj.get("kind") == "Reservation" else "PodScheduled"
        for c in (obj.get("status") or {}).get("conditions") or ():
            if c.get("type") == kind and c.get("status") == "False":
                return str(c.get("message") or c.get("reason") or "")
        return None

    def settled(self) -> bool:
        """Every subject placed, or each either placed or refused with no nomination pending."""
        current = self._current()
        placed = [o for o in current if self._node(o)]
        if len(placed) == len(current):
            return True
        return all(
            self._node(o)
            or (self._failure(o) is not None and not (o.get("status") or {}).get("nominatedNodeName"))
            for o in current
        )

    def trial(
        self, before: Mapping[str, tuple[str, dict[str, int], dict[str, int]]], quotas: Sequence[Obj]
    ) -> Trial:
        current = self._current()
        nodes = {self._label(o): self._node(o) for o in current}
        nominated = {
            self._label(o): str(o["status"]["nominatedNodeName"])
            for o in current
            if not self._node(o) and (o.get("status") or {}).get("nominatedNodeName")
        }
        placed = sum(1 for n in nodes.values() if n)
        fits = placed >= self.need
        message = ""
        if not fits:
            failures = [m for o in current if not self._node(o) and (m := self._failure(o)) is not None]
            # a gang's first FitError (its other pods were rejected for its sake)
            message = next((m for m in failures if m.startswith("0/")), failures[0] if failures else "")
            if not message:
                message = self._not_attempted(current)
        after = _quota_usage(
            _list(self.store, _POD), _list(self.store, ("scheduling.x-k8s.io", "ElasticQuota"))
        )
        return Trial(
            fits, nodes, nominated, self._victims(), message, _borrowed(before, after) if fits else {}
        )

    def _not_attempted(self, current: Sequence[Obj]) -> str:
        """Why a subject that has no failure was not placed: gates, a schedulerName no profile serves."""
        for o in current:
            spec = o.get("spec") or {}
            if o.get("kind") == "Reservation":
                spec = (spec.get("template") or {}).get("spec") or {}
            if o.get("kind") == "Pod" and spec.get("schedulingGates"):
                return f"{NOT_ATTEMPTED}: {self._label(o)} has spec.schedulingGates"
            name = spec.get("schedulerName") or "default-scheduler"
            if name not in self.profiles:
                return f'{NOT_ATTEMPTED}: no scheduler profile serves schedulerName "{name}"'
        return "not placed within the dry run"

    @staticmethod
    def _label(obj: Mapping[str, Any]) -> str:
        return _name(obj) if obj.get("kind") == "Reservation" else _ref(obj)

    def _victims(self) -> tuple[Victim, ...]:
        uids = {str(s["metadata"]["uid"]) for s in self.subjects}
        out: list[Victim] = []
        for e in _list(self.store, _EVENT):
            if e.get("reason") != "Preempted":
                continue
            m = re.fullmatch(r"Preempted by pod (\S+) on node (\S+)", str(e.get("message") or ""))
            if m is None or m.group(1) not in uids:
                continue
            ref = e.get("involvedObject") or {}
            ns, name = str(ref.get("namespace") or "default"), str(ref.get("name") or "")
            out.append(Victim(ns, name, m.group(2), self._priority(ns, name)))
        return tuple(sorted(set(out), key=lambda v: (v.node, v.namespace, v.name)))

    def _priority(self, ns: str, name: str) -> int:
        return self.priorities.get((ns, name), 0)


# --- the answer -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Suggestion:
    """A change that was tried on a copy: ``priority``, ``quota`` or ``nodes``, what it is, and the outcome of
    the dry run with it (``fits``)."""

    kind: str
    summary: str
    details: dict[str, Any]
    trial: Trial

    def to_dict(self) -> dict[str, Any]:
        """Its JSON form."""
        return {
            "kind": self.kind,
            "summary": self.summary,
            **self.details,
            "fits": self.trial.fits,
            "nodes": self.trial.nodes,
            "victims": [v.to_dict() for v in self.trial.victims],
        }


@dataclass(frozen=True)
class Answer:
    """What ``berth whatif`` prints."""

    question: Question
    trial: Trial
    suggestions: tuple[Suggestion, ...]

    @property
    def reasons(self) -> list[tuple[int, str]]:
        """The message's per-node reasons with the number of nodes each, as kube groups them."""
        return reason_counts(self.trial.message)

    @property
    def node(self) -> str | None:
        """The node of a single pod or Reservation (None for a gang, or when it does not fit)."""
        if self.question.kind == "PodGroup" or not self.trial.fits:
            return None
        return next(iter(self.trial.nodes.values()), None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (stable keys)."""
        t = self.trial
        return {
            "kind": self.question.kind,
            "subject": self.question.title,
            "fits": t.fits,
            "node": self.node,
            "nodes": t.nodes,
            "nominatedNodes": t.nominated,
            "victims": [v.to_dict() for v in t.victims],
            "quotaBorrowed": {
                q: {r: format_resource(r, v) for r, v in sorted(amounts.items())}
                for q, amounts in sorted(t.borrowed.items())
            },
            "reasons": [{"reason": r, "nodes": n} for n, r in self.reasons],
            "message": t.message,
            "suggestions": [s.to_dict() for s in self.suggestions],
        }

    def to_json(self) -> str:
        """The JSON document, indented."""
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def to_table(self) -> str:
        """The answer for people."""
        from berth.sim.whatif_output import render_answer

        return render_answer(self)


def reason_counts(message: str) -> list[tuple[int, str]]:
    """``0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint(s).`` as
    ``[(2, "Insufficient cpu"), (3, "node(s) had untolerated taint(s)")]``; a PreFilter refusal (no counts) as
    one reason held by every node. Only the Filter part counts (not the PostFilter's, after it)."""
    m = _AVAILABLE.match(message.strip())
    if m is None:
        return []
    total, body = int(m.group(1)), m.group(2)
    first = body.split(". ", 1)[0].removesuffix(".")
    out: list[tuple[int, str]] = []
    for p in _PART.split(first):
        count, _, reason = p.partition(" ")
        if not count.isdigit() or not reason:
            return [(total, first)]
        out.append((int(count), reason))
    return out


def answer(
    objects: Sequence[Obj],
    question: Question,
    *,
    now: datetime,
    config: SchedulerConfig | None = None,
    seed: int = 0,
    validated: bool = False,
) -> Answer:
    """Ask `question` of the cluster `objects` at `now`, and when the subject does not fit, try the changes."""

    def run(
        objs: Sequence[Obj], priority: tuple[str, int] | None = None, watch: frozenset[str] = frozenset()
    ) -> Trial:
        return try_question(
            objs,
            question,
            now=now,
            config=config,
            seed=seed,
            validated=validated,
            priority=priority,
            watch_nodes=watch,
        )

    trial = run(objects)
    if trial.fits or trial.message.startswith(NOT_ATTEMPTED):
        return Answer(question, trial, ())
    suggestions: list[Suggestion] = []
    if question.kind != "Reservation":
        found = _priority_suggestion(objects, question, trial, run)
        if found is not None:
            suggestions.append(found)
        quota = _quota_suggestion(objects, question, trial, run)
        if quota is not None:
            suggestions.append(quota)
    nodes = _nodes_suggestion(objects, question, run)
    if nodes is not None:
        suggestions.append(nodes)
    return Answer(question, trial, tuple(suggestions))


def _pod_priority(pod: Mapping[str, Any], objects: Sequence[Obj]) -> int:
    spec = pod.get("spec") or {}
    if spec.get("priority") is not None:
        return int(spec["priority"])
    classes = [o for o in objects if o.get("kind") == "PriorityClass"]
    name = spec.get("priorityClassName")
    if name:
        return next((int(o.get("value") or 0) for o in classes if _name(o) == name), 0)
    defaults = [int(o.get("value") or 0) for o in classes if o.get("globalDefault")]
    return min(defaults) if defaults else 0


def _priority_suggestion(
    objects: Sequence[Obj], question: Question, trial: Trial, run: Runner
) -> Suggestion | None:
    """The lowest PriorityClass above the pods' priority under which the subject fits (by preempting), or a
    class of the highest user priority when no existing one does."""
    pods = question.pods
    if not pods:
        return None
    own = max(_pod_priority(p, objects) for p in pods)
    classes = sorted(
        (
            (int(o.get("value") or 0), _name(o))
            for o in objects
            if o.get("kind") == "PriorityClass"
            and not _name(o).startswith("system-")
            and int(o.get("value") or 0) > own
            and o.get("preemptionPolicy") != "Never"
        ),
    )
    candidates: list[tuple[str, int, bool]] = [(n, v, True) for v, n in classes]
    if own < HIGHEST_USER_PRIORITY and all(v < HIGHEST_USER_PRIORITY for v, _ in classes):
        candidates.append(("berth-whatif-highest", HIGHEST_USER_PRIORITY, False))
    for name, value, exists in candidates:
        t = run(objects, (name, value))
        if t.fits:
            if exists:
                summary = f"priorityClassName {name} (priority {value})"
            else:
                summary = f"a PriorityClass of value {value} (no existing class above {own} is enough)"
            return Suggestion(
                "priority",
                summary,
                {"priorityClassName": name if exists else None, "priority": value},
                t,
            )
    return None


def _quota_suggestion(
    objects: Sequence[Obj], question: Question, trial: Trial, run: Runner
) -> Suggestion | None:
    """When the pods' ElasticQuota refused them: the headroom missing, per resource, and the dry run with the
    quota's max (or min, for the total-min rule) raised by exactly that much."""
    msg = trial.message
    over_max = "is more than Max" in msg
    over_min = "total ElasticQuota used is more than min" in msg
    if not (over_max or over_min):
        return None
    ns = _ns(question.pods[0])
    quotas = [o for o in objects if o.get("kind") == "ElasticQuota"]
    mine = next((q for q in quotas if _ns(q) == ns), None)
    if mine is None:
        return None
    asked = {_identity(p) for p in question.pods}  # replaced in the copy: not the cluster's any more
    pods = [o for o in objects if o.get("kind") == "Pod" and _identity(o) not in asked]
    usage = _quota_usage(pods, quotas)
    request: dict[str, int] = {}
    for p in question.pods:
        for r, v in pod_requests(p).items():
            request[r] = request.get(r, 0) + v
    mins, maxs = quota_limits(mine)
    missing: dict[str, int] = {}
    if over_max:
        used = usage.get(ns, ("", {}, {}))[2]
        for r, m in (maxs or {}).items():
            short = used.get(r, 0) + request.get(r, 0) - m
            if short > 0:
                missing[r] = short
        field_name = "max"
    else:
        total_min: dict[str, int] = {}
        total_used: dict[str, int] = {}
        for _, q_min, q_used in usage.values():
            for r, v in q_min.items():
                total_min[r] = total_min.get(r, 0) + v
            for r, v in q_used.items():
                total_used[r] = total_used.get(r, 0) + v
        for r, m in total_min.items():
            short = total_used.get(r, 0) + request.get(r, 0) - m
            if short > 0:
                missing[r] = short
        field_name = "min"
    if not missing:
        return None
    changed = copy.deepcopy(mine)
    spec = changed.setdefault("spec", {})
    base = dict(maxs or {}) if field_name == "max" else dict(mins)
    spec[field_name] = {
        r: format_resource(r, base.get(r, 0) + missing.get(r, 0)) for r in sorted({*base, *missing})
    }
    if field_name == "min" and maxs is not None:
        spec["max"] = {
            r: format_resource(r, max(v, base.get(r, 0) + missing.get(r, 0))) for r, v in sorted(maxs.items())
        }
    t = run([changed if o is mine else o for o in objects])
    shown = {r: format_resource(r, v) for r, v in sorted(missing.items())}
    return Suggestion(
        "quota",
        f"raise ElasticQuota {ns}/{_name(mine)} {field_name} by "
        + ", ".join(f"{r} {v}" for r, v in shown.items()),
        {"quota": f"{ns}/{_name(mine)}", "field": field_name, "missing": shown},
        t,
    )


def _shape_key(node: Mapping[str, Any]) -> str:
    labels = {k: v for k, v in ((node.get("metadata") or {}).get("labels") or {}).items() if k != _HOSTNAME}
    taints = (node.get("spec") or {}).get("taints") or []
    return json.dumps(
        [sorted(node_allocatable(node).items()), sorted(labels.items()), taints], sort_keys=True
    )


def _copy_node(node: Mapping[str, Any], name: str) -> Obj:
    meta = node.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    if _HOSTNAME in labels:
        labels[_HOSTNAME] = name
    spec = {k: v for k, v in (node.get("spec") or {}).items() if k in ("taints",)}
    status = {
        k: v
        for k, v in (node.get("status") or {}).items()
        if k in ("allocatable", "capacity", "conditions", "nodeInfo")
    }
    out: Obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
    }
    if status:
        out["status"] = copy.deepcopy(status)
    return out


def _nodes_suggestion(objects: Sequence[Obj], question: Question, run: Runner) -> Suggestion | None:
    """The fewest copies of one existing node shape (allocatable, labels, taints) with which the subject fits,
    over the shapes of the schedulable nodes (ties: the shape whose first node comes first by name)."""
    nodes = sorted(
        (o for o in objects if o.get("kind") == "Node" and not (o.get("spec") or {}).get("unschedulable")),
        key=_name,
    )
    shapes: dict[str, Obj] = {}
    for n in nodes:
        shapes.setdefault(_shape_key(n), n)
    taken = {_name(n) for n in objects if n.get("kind") == "Node"}
    pending = sum(1 for o in objects if o.get("kind") == "Pod" and not (o.get("spec") or {}).get("nodeName"))
    limit = min(MAX_NEW_NODES, max(1, len(question.pods)) + pending)
    # fewest first: k copies of every shape still in the running, then k + 1; a shape whose copies no pod
    # took (not the subject, not a pending pod) is out: more identical empty nodes would stay empty too
    active = list(shapes.values())
    for k in range(1, limit + 1):
        for sample in list(active):
            names = _new_names(_name(sample), k, taken)
            t = run([*objects, *(_copy_node(sample, n) for n in names)], watch=frozenset(names))
            if t.fits:
                alloc = node_allocatable(sample)
                shown = {r: format_resource(r, v) for r, v in sorted(alloc.items())}
                return Suggestion(
                    "nodes",
                    f"add {k} node(s) like {_name(sample)} ("
                    + ", ".join(f"{r} {v}" for r, v in shown.items())
                    + ")",
                    {"count": k, "like": _name(sample), "allocatable": shown, "added": names},
                    t,
                )
            if not t.used_nodes:
                active.remove(sample)
        if not active:
            break
    return None


def _new_names(base: str, count: int, taken: set[str]) -> list[str]:
    out: list[str] = []
    i = 1
    while len(out) < count:
        name = f"{base}-new-{i}"
        if name not in taken:
            out.append(name)
        i += 1
    return out
