"""``berth explain``: the scheduling attempts of one pod (or one Reservation's reserve pod), node by node and
plugin by plugin, with the reservations the pod used or was refused by.

Attempts are numbered per subject from 1, the same in the text, in the JSON (``attempt``) and for
``--attempt N``. ``--node NAME`` keeps only those nodes in every table; ``--top N`` keeps the N nodes
ranked best: the scored nodes by total score (ties by name), then the feasible nodes that were not scored,
then the rejected nodes, these two groups by name — so for a failed attempt, the first N nodes by name.
(kube-scheduler-simulator has no such limit: its result annotations hold every node; the order is the one
kube-scheduler's choice follows, highest score first.)
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from berth.api.duration import go_duration
from berth.api.watch import ADDED, DELETED, WatchEvent
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.trace import PASSED, CycleTrace
from berth.sim.output import render_table

POD_KEY = ("", "Pod")
RESERVATION_KEY = ("scheduling.koordinator.sh", "Reservation")
RESERVATION_PREFIX = "Reservation(s) "


_GO_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:([0-9.]+)s)?")


def virtual_time(seconds: float) -> str:
    """A virtual time as Berth's durations are written (``--until 1m30s``): ``0s``, ``5s``, ``1m``, ``1m30s``,
    ``1h``, ``1.5s``, ``500ms`` — Go's format without the zero units."""
    text = go_duration(seconds)
    m = _GO_DURATION.fullmatch(text)
    if m is None or seconds < 1:
        return text
    parts = [f"{v}{u}" for v, u in zip(m.groups(), "hms", strict=True) if v is not None and v != "0"]
    return "".join(parts) or "0s"


class ExplainError(ValueError):
    """A request ``berth explain`` cannot answer (bad reference, unknown node, attempt out of range)."""


@dataclass(frozen=True, slots=True)
class Subject:
    """What is explained: a pod (``namespace/name``) or a Reservation (cluster-scoped ``name``)."""

    kind: str
    namespace: str
    name: str

    @property
    def label(self) -> str:
        """``pod default/web`` or ``reservation r1``."""
        return f"pod {self.namespace}/{self.name}" if self.kind == "Pod" else f"reservation {self.name}"

    @property
    def title(self) -> str:
        """``Pod default/web`` or ``Reservation r1``."""
        return f"Pod {self.namespace}/{self.name}" if self.kind == "Pod" else f"Reservation {self.name}"

    def wants(self, pod: PodInfo) -> bool:
        """Whether a scheduling attempt of ``pod`` is one of this subject's."""
        if self.kind == "Pod":
            return pod.kind == "Pod" and pod.namespace == self.namespace and pod.name == self.name
        res = pod.extra.get("reservation") or {}
        return pod.kind == "Reservation" and (res.get("metadata") or {}).get("name") == self.name

    def is_it(self, obj: dict[str, Any]) -> bool:
        """Whether a stored object is this subject."""
        meta = obj.get("metadata") or {}
        if meta.get("name") != self.name:
            return False
        return self.kind != "Pod" or (meta.get("namespace") or "default") == self.namespace


def subject_for(pod: str | None, reservation: str | None) -> Subject:
    """The subject of ``--pod NAMESPACE/NAME|NAME`` or ``--reservation NAME`` (exactly one of them)."""
    if (pod is None) == (reservation is None):
        raise ExplainError("give exactly one of --pod and --reservation")
    if reservation is not None:
        if not reservation or "/" in reservation:
            raise ExplainError(
                f'--reservation: invalid reservation name "{reservation}" (Reservations are cluster-scoped)'
            )
        return Subject("Reservation", "", reservation)
    assert pod is not None
    key = pod if "/" in pod else f"default/{pod}"
    namespace, _, name = key.partition("/")
    if not namespace or not name or "/" in name:
        raise ExplainError(f'--pod: invalid pod reference "{pod}" (expected NAMESPACE/NAME or NAME)')
    return Subject("Pod", namespace, name)


class Lifecycle:
    """When the subject was created and when its deletion began (virtual seconds), from the store's events."""

    def __init__(self, subject: Subject, now: Callable[[], float]) -> None:
        self.subject = subject
        self.now = now
        self.created: float | None = None
        self.deleted: float | None = None

    @property
    def key(self) -> tuple[str, str]:
        """The store kind to subscribe to."""
        return POD_KEY if self.subject.kind == "Pod" else RESERVATION_KEY

    def on_event(self, event: WatchEvent) -> None:
        """Note the subject's creation and the start of its deletion (a deletionTimestamp, or its removal)."""
        obj = event.object
        if not self.subject.is_it(obj):
            return
        if event.type == ADDED or self.created is None:  # a new object (perhaps again under the same name)
            self.created = self.now()
            self.deleted = None
        if self.deleted is None and (
            event.type == DELETED or (obj.get("metadata") or {}).get("deletionTimestamp")
        ):
            self.deleted = self.now()


@dataclass(frozen=True, slots=True)
class View:
    """Which nodes the tables show: ``nodes`` (None: all), then at most ``top`` of them (None: no limit)."""

    nodes: frozenset[str] | None = None
    top: int | None = None

    def kept(self, trace: CycleTrace) -> list[str] | None:
        """The nodes of ``trace`` to show, best first; None when every node is shown."""
        if self.nodes is None and self.top is None:
            return None
        known = list(dict.fromkeys([*trace.filter, *trace.total]))
        candidates = [n for n in known if self.nodes is None or n in self.nodes]
        feasible = set(trace.feasible)
        ranked = sorted(
            candidates,
            key=lambda n: (
                0 if n in trace.total else 1 if n in feasible else 2,
                -trace.total.get(n, 0),
                n,
            ),
        )
        return ranked if self.top is None else ranked[: self.top]


def _narrow(trace: CycleTrace, keep: Collection[str]) -> CycleTrace:
    """``trace`` with its per-node tables limited to ``keep``."""
    wanted = set(keep)

    def only(d: dict[str, Any]) -> dict[str, Any]:
        return {n: v for n, v in d.items() if n in wanted}

    return dataclasses.replace(
        trace,
        filter=only(trace.filter),
        raw=only(trace.raw),
        normalized=only(trace.normalized),
        total=only(trace.total),
    )


def reservation_rows(trace: CycleTrace, nodes: frozenset[str] | None = None) -> list[dict[str, str]]:
    """The reservations whose owners match the pod, with what the attempt made of each: ``allocated``,
    ``refused`` with Koordinator's reason (its own check, or a "Reservation(s) ..." Filter rejection of its
    node), or ``matched`` with why the pod did not take it there (its node was rejected, or not chosen)."""
    out = []
    for r in trace.reservations:
        if nodes is not None and r["node"] not in nodes:
            continue
        row = dict(r)
        if row["result"] == "matched":
            rejected = [(p, m) for p, m in trace.filter.get(row["node"], {}).items() if m != PASSED]
            if rejected:
                plugin, msg = rejected[0]
                if msg.startswith(RESERVATION_PREFIX):
                    row.update(result="refused", reason=msg)
                else:
                    row["reason"] = f"node rejected by {plugin}: {msg}"
            elif trace.selected:
                row["reason"] = f"node not selected ({trace.selected} was)"
        out.append(row)
    return out


def _filter_section(trace: CycleTrace) -> str:
    rows: list[list[str]] = []
    for node, per in trace.filter.items():
        rejected = [(p, msg) for p, msg in per.items() if msg != PASSED]
        if rejected:
            plugin, msg = rejected[0]
            rows.append([node, "rejected", plugin, msg])
        else:
            rows.append([node, "passed", "", ""])
    return render_table(["NODE", "FILTER", "PLUGIN", "REASON"], rows)


def _score_section(trace: CycleTrace) -> str:
    plugins = [name for name, _ in trace.score_plugins]
    weights = dict(trace.score_plugins)
    head = ["NODE", *(f"{p}(x{weights[p]})" for p in plugins), "TOTAL"]
    order = sorted(trace.total, key=lambda n: (-trace.total[n], n))
    rows = []
    for node in order:
        cells = [
            f"{trace.raw[node][p]}->{trace.normalized[node][p]}"
            + ("" if weights[p] == 1 else f"={trace.normalized[node][p] * weights[p]}")
            for p in plugins
        ]
        mark = " *" if node == trace.selected else ""
        rows.append([node + mark, *cells, str(trace.total[node])])
    return render_table(head, rows)


def render_trace(
    trace: CycleTrace, number: int, count: int, *, title: str = "", view: View | None = None
) -> str:
    """One attempt as text: PreFilter verdicts, the per-node Filter table, the Score table, the reservations
    whose owners match the pod, and the outcome."""
    view = view or View()
    kept = view.kept(trace)
    shown = trace if kept is None else _narrow(trace, kept)
    lines = [
        f"{title or 'Pod ' + trace.pod} — attempt {number} of {count} at {virtual_time(trace.time)} "
        f"(profile {trace.profile})"
    ]
    if trace.pre_filter:
        parts = [f"{p}: {v}" for p, v in trace.pre_filter.items()]
        lines.append("PreFilter: " + "; ".join(parts))
    if trace.filter:
        feasible = len(trace.feasible)
        lines.append(
            f"Filter ({feasible} of {len(trace.filter)} nodes feasible; plugins in order: "
            + ", ".join(trace.filter_plugins)
            + ")"
        )
        if kept is not None:
            lines.append(f"(showing {len(shown.filter)} of {len(trace.filter)} nodes)")
        if shown.filter:
            lines.append(_filter_section(shown).rstrip("\n"))
    if trace.total:
        skipped = len(trace.feasible) - len(trace.scored)
        extra = f"; {skipped} feasible node(s) not scored (percentageOfNodesToScore)" if skipped > 0 else ""
        lines.append(
            f"Score (raw->normalised[=x weight] per plugin; {len(trace.scored)} node(s) scored{extra})"
        )
        if shown.total:
            lines.append(_score_section(shown).rstrip("\n"))
    reservations = reservation_rows(trace, view.nodes)
    if reservations:
        lines.append("Reservations whose owners match the pod:")
        rows = [[r["name"], r["node"], r["result"], r["reason"]] for r in reservations]
        lines.append(render_table(["RESERVATION", "NODE", "RESULT", "REASON"], rows).rstrip("\n"))
    if trace.note:
        lines.append(f"Note: {trace.note}")
    if trace.selected:
        lines.append(f"Selected node: {trace.selected}")
    else:
        lines.append(f"Unschedulable: {trace.failure}")
    return "\n".join(lines) + "\n"


def render_traces(traces: Sequence[CycleTrace]) -> str:
    """Every attempt, separated by blank lines."""
    return "\n".join(render_trace(t, i + 1, len(traces)) for i, t in enumerate(traces))


def trace_json(
    trace: CycleTrace, number: int, *, subject: Subject | None = None, view: View | None = None
) -> dict[str, Any]:
    """One attempt as JSON: the trace's fields with ``attempt`` (and ``number``) as in the text, the node tables
    limited as the text's, the reservations as the text shows them."""
    view = view or View()
    kept = view.kept(trace)
    shown = trace if kept is None else _narrow(trace, kept)
    out = shown.to_dict()
    out["attempt"] = number
    out["number"] = number  # the same number, under the key earlier versions used
    out["reservations"] = reservation_rows(trace, view.nodes)
    if subject is not None and subject.kind == "Reservation":
        out["reservation"] = subject.name
    return out


@dataclass(frozen=True, slots=True)
class Request:
    """What the user asked of ``berth explain``: the attempt (1-based, negative from the end) and the view."""

    attempt: int | None = None
    view: View = View()


def select(
    subject: Subject,
    traces: Sequence[CycleTrace],
    lifecycle: Lifecycle,
    request: Request,
    nodes_known: set[str],
) -> list[tuple[int, CycleTrace]]:
    """The numbered attempts to show; ExplainError when there is none to show or the request is out of range."""
    if not traces:
        if lifecycle.created is None:
            raise ExplainError(f"{subject.label} does not exist in the scenario")
        what = f"{subject.label} was never attempted by Berth's scheduler"
        if lifecycle.deleted is not None:
            what += f" (created at {virtual_time(lifecycle.created)}, deleted at {virtual_time(lifecycle.deleted)})"
        raise ExplainError(what)
    if request.view.nodes is not None:
        seen = nodes_known | {n for t in traces for n in t.filter}
        unknown = sorted(request.view.nodes - seen)
        if unknown:
            raise ExplainError(f'--node: node "{unknown[0]}" is not in the cluster')
    numbered = list(enumerate(traces, 1))
    attempt = request.attempt
    if attempt is not None:
        if attempt == 0 or abs(attempt) > len(traces):
            raise ExplainError(
                f"--attempt: {attempt} is out of range ({subject.label} has {len(traces)} attempt(s))"
            )
        numbered = [numbered[attempt - 1 if attempt > 0 else attempt]]
    return numbered


def render_text(
    subject: Subject, numbered: Sequence[tuple[int, CycleTrace]], count: int, lifecycle: Lifecycle, view: View
) -> str:
    """The chosen attempts as text, and the deletion of the subject if it was deleted."""
    parts = [render_trace(t, i, count, title=subject.title, view=view) for i, t in numbered]
    if lifecycle.deleted is not None:
        parts.append(f"{subject.title} deleted at {virtual_time(lifecycle.deleted)}\n")
    return "\n".join(parts)


def render_json(
    subject: Subject, numbered: Sequence[tuple[int, CycleTrace]], lifecycle: Lifecycle, view: View
) -> list[dict[str, Any]]:
    """The chosen attempts as JSON (``deletedAt``, in virtual seconds, on each when the subject was deleted)."""
    out = []
    for i, t in numbered:
        d = trace_json(t, i, subject=subject, view=view)
        if lifecycle.deleted is not None:
            d["deletedAt"] = lifecycle.deleted
        out.append(d)
    return out


__all__ = [
    "ExplainError",
    "Lifecycle",
    "Request",
    "Subject",
    "View",
    "render_json",
    "render_text",
    "render_trace",
    "render_traces",
    "reservation_rows",
    "select",
    "subject_for",
    "trace_json",
    "virtual_time",
]
