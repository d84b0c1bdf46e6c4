"""PodLifeTime: kubernetes-sigs/descheduler's ``pkg/framework/plugins/podlifetime``.

A Deschedule plugin. Every pod assigned to one of the cycle's nodes (whatever its phase) that passes the
profile's evictor (filter and preEvictionFilter), ``namespaces`` and ``labelSelector``, and every criterion
given, is evicted, oldest first (``creationTimestamp``), so that the policy's limits keep the oldest:

* ``maxPodLifeTimeSeconds``: older than this many whole seconds;
* ``states``: its phase, its ``status.reason`` or a container's waiting or terminated reason is listed
  (init containers with ``includingInitContainers``, ephemeral ones with ``includingEphemeralContainers``);
* ``ownerKinds``: one of its owners' kinds is in ``include``, or none is in ``exclude``;
* ``conditions``: one of its conditions matches one filter's ``type`` / ``status`` / ``reason`` (those
  given) and, with ``minTimeSinceLastTransitionSeconds``, last changed at least that long ago;
* ``exitCodes``: a (init, with ``includingInitContainers``) container terminated with a listed code.

At least one of ``maxPodLifeTimeSeconds``, ``states``, ``conditions`` and ``exitCodes`` is required. Ages
are measured against the view's ``now``. A node-limit refusal moves on to the next pod; the total limit
ends the plugin's run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.api.timestamps import unix_seconds
from berth.descheduler.args import ArgsReader
from berth.descheduler.framework import DESCHEDULE, Handle, PluginSpec
from berth.descheduler.plugins.eviction_loop import evict_in_turn, evictor_allows
from berth.descheduler.plugins.podselection import (
    EVERY_POD,
    PodSelection,
    container_statuses,
    exit_codes,
    read_pod_selection,
    state_reasons,
)
from berth.descheduler.view import owner_refs, pod_phase

__all__ = [
    "ALLOWED_STATES",
    "NAME",
    "SPECS",
    "ConditionFilter",
    "PodLifeTime",
    "PodLifeTimeArgs",
    "parse_args",
]

Obj = dict[str, Any]
NAME = "PodLifeTime"

ALLOWED_STATES = frozenset(
    (
        # pod phases
        "Running",
        "Pending",
        "Succeeded",
        "Failed",
        "Unknown",
        # pod status reasons
        "NodeAffinity",
        "NodeLost",
        "Shutdown",
        "UnexpectedAdmissionError",
        # container waiting reasons
        "PodInitializing",
        "ContainerCreating",
        "ImagePullBackOff",
        "CrashLoopBackOff",
        "CreateContainerConfigError",
        "ErrImagePull",
        "CreateContainerError",
        "InvalidImageName",
        # container terminated reasons
        "OOMKilled",
        "Error",
        "Completed",
        "DeadlineExceeded",
        "Evicted",
        "ContainerCannotRun",
        "StartError",
    )
)
"""The values ``states`` accepts (upstream's ``podLifeTimeAllowedStates``)."""


@dataclass(frozen=True)
class ConditionFilter:
    """One ``conditions`` entry (empty strings are not checked)."""

    type: str = ""
    status: str = ""
    reason: str = ""
    min_time_since_last_transition_seconds: int | None = None


@dataclass(frozen=True)
class PodLifeTimeArgs:
    """PodLifeTimeArgs (no defaults beyond empty)."""

    selection: PodSelection = EVERY_POD
    """``namespaces`` and ``labelSelector``."""
    include_owner_kinds: frozenset[str] = frozenset()
    exclude_owner_kinds: frozenset[str] = frozenset()
    max_pod_life_time_seconds: int | None = None
    states: frozenset[str] = frozenset()
    conditions: tuple[ConditionFilter, ...] = ()
    exit_codes: frozenset[int] = frozenset()
    including_init_containers: bool = False
    including_ephemeral_containers: bool = False


def _read_conditions(reader: ArgsReader) -> tuple[ConditionFilter, ...]:
    raw = reader.value("conditions")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise reader.error("conditions", "must be a list of condition filters")
    out: list[ConditionFilter] = []
    for i, item in enumerate(raw):
        sub = ArgsReader(item, f"{reader.where}.conditions[{i}]")
        out.append(
            ConditionFilter(
                type=sub.string("type"),
                status=sub.string("status"),
                reason=sub.string("reason"),
                min_time_since_last_transition_seconds=sub.integer(
                    "minTimeSinceLastTransitionSeconds", minimum=0
                ),
            )
        )
        sub.finish()
    return tuple(out)


def parse_args(reader: ArgsReader) -> PodLifeTimeArgs:
    """Read and validate PodLifeTimeArgs (upstream's ``ValidatePodLifeTimeArgs``)."""
    selection = read_pod_selection(reader)
    owner_kinds = reader.child("ownerKinds")
    include_kinds = owner_kinds.strings("include")
    exclude_kinds = owner_kinds.strings("exclude")
    owner_kinds.finish()
    max_life = reader.integer("maxPodLifeTimeSeconds", minimum=0)
    states = reader.strings("states")
    conditions = _read_conditions(reader)
    codes = reader.integers("exitCodes")
    including_init = reader.flag("includingInitContainers")
    including_ephemeral = reader.flag("includingEphemeralContainers")
    reader.finish()

    errors: list[tuple[str, str]] = []
    if include_kinds and exclude_kinds:
        errors.append(("ownerKinds", "only one of Include/Exclude ownerKinds can be set"))
    if any(s not in ALLOWED_STATES for s in states):
        errors.append(("states", f"states must be one of [{' '.join(sorted(ALLOWED_STATES))}]"))
    for i, c in enumerate(conditions):
        if not (c.type or c.status or c.reason) and c.min_time_since_last_transition_seconds is None:
            errors.append(
                (
                    f"conditions[{i}]",
                    f"conditions[{i}]: at least one of type, status, reason, or "
                    "minTimeSinceLastTransitionSeconds must be set",
                )
            )
    if max_life is None and not states and not conditions and not codes:
        errors.append(
            (
                "",
                "at least one filtering criterion must be specified "
                "(maxPodLifeTimeSeconds, states, conditions, or exitCodes)",
            )
        )
    reader.raise_all(errors)
    return PodLifeTimeArgs(
        selection=selection,
        include_owner_kinds=frozenset(include_kinds),
        exclude_owner_kinds=frozenset(exclude_kinds),
        max_pod_life_time_seconds=max_life,
        states=frozenset(states),
        conditions=conditions,
        exit_codes=frozenset(codes),
        including_init_containers=including_init,
        including_ephemeral_containers=including_ephemeral,
    )


def _created(pod: Mapping[str, Any]) -> float:
    """Unix seconds of ``creationTimestamp`` (-inf when unset: Go's zero time, older than anything)."""
    got = unix_seconds((pod.get("metadata") or {}).get("creationTimestamp"))
    return -math.inf if got is None else got


class PodLifeTime:
    """The PodLifeTime plugin over one cycle's view."""

    name = NAME

    def __init__(self, args: PodLifeTimeArgs, handle: Handle) -> None:
        """Keep the args and the handle."""
        self.args = args
        self.handle = handle

    # ---- criteria ----------------------------------------------------------------------------------------

    def _old_enough(self, pod: Obj) -> bool:
        limit = self.args.max_pod_life_time_seconds
        if limit is None:
            return True
        age = self.handle.view.now - _created(pod)
        return age >= 0 and (math.isinf(age) or int(age) > limit)

    def _in_state(self, pod: Obj) -> bool:
        states = self.args.states
        if not states:
            return True
        status = pod.get("status") or {}
        if pod_phase(pod) in states or str(status.get("reason") or "") in states:
            return True
        statuses = container_statuses(
            pod,
            init=self.args.including_init_containers,
            ephemeral=self.args.including_ephemeral_containers,
        )
        return any(r in states for r in state_reasons(statuses))

    def _owner_kinds_match(self, pod: Obj) -> bool:
        include, exclude = self.args.include_owner_kinds, self.args.exclude_owner_kinds
        if include:
            return any(ref.get("kind") in include for ref in owner_refs(pod))
        if exclude:
            return not any(ref.get("kind") in exclude for ref in owner_refs(pod))
        return True

    def _conditions_match(self, pod: Obj) -> bool:
        filters = self.args.conditions
        if not filters:
            return True
        conditions = (pod.get("status") or {}).get("conditions") or ()
        now = self.handle.view.now
        for f in filters:
            for cond in conditions:
                if f.type and cond.get("type") != f.type:
                    continue
                if f.status and cond.get("status") != f.status:
                    continue
                if f.reason and (cond.get("reason") or "") != f.reason:
                    continue
                if f.min_time_since_last_transition_seconds is not None:
                    changed = unix_seconds(cond.get("lastTransitionTime"))
                    if changed is None:
                        continue
                    idle = now - changed
                    if idle < 0 or int(idle) < f.min_time_since_last_transition_seconds:
                        continue
                return True
        return False

    def _exit_codes_match(self, pod: Obj) -> bool:
        codes = self.args.exit_codes
        if not codes:
            return True
        statuses = container_statuses(pod, init=self.args.including_init_containers)
        return any(c in codes for c in exit_codes(statuses))

    def candidate(self, pod: Obj) -> bool:
        """Whether the pod meets every criterion and the evictor lets it go."""
        if not (
            self._old_enough(pod)
            and self._in_state(pod)
            and self._owner_kinds_match(pod)
            and self._conditions_match(pod)
            and self._exit_codes_match(pod)
            and self.args.selection.matches(pod)
        ):
            return False
        return evictor_allows(self.handle.evictor, pod)

    # ---- the extension point -----------------------------------------------------------------------------

    def deschedule(self, nodes: Sequence[Obj]) -> None:
        """Evict the candidates of `nodes`, oldest first."""
        view = self.handle.view
        chosen = [
            pod
            for node in nodes
            for pod in view.pods_on(str(node["metadata"]["name"]))
            if self.candidate(pod)
        ]
        chosen.sort(key=_created)
        evict_in_turn(self.handle.evictor, NAME, chosen, node_limit_ends=False)


def _build(args: PodLifeTimeArgs, handle: Handle) -> PodLifeTime:
    return PodLifeTime(args, handle)


SPECS: tuple[PluginSpec, ...] = (PluginSpec(NAME, frozenset((DESCHEDULE,)), parse_args, _build),)
