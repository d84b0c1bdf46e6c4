"""The Reservation plugin's per-shape nomination cache (kept from pod to pod, patched where reservations or
nodes changed) gives every owner pod the same freed remainders and scores as one computed afresh, also
after cycles where no reservation fits the pod (their changes must not be lost)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from rsv_helpers import allocated_to, container, get, ref, reservation, simulate

from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.plugins.reservation import plugin as reservation_plugin
from berth.scheduler.plugins.reservation.plugin import Reservation, _PodState


def node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "20"}},
    }


def owner(name: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "a"}},
        "spec": {"schedulerName": "koord-scheduler", "containers": [container(cpu, "100Mi")]},
    }


def filler(name: str, node_name: str) -> dict[str, Any]:
    """A pod of no reservation's owners taking a whole cpu of ``node_name``."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "other"}},
        "spec": {"nodeName": node_name, "containers": [container("1", "100Mi")]},
    }


def test_cached_nominations_equal_fresh_ones_across_cycles_where_nothing_fits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compared: list[bool] = []  # per owner cycle: whether any reservation was nominated
    fast = Reservation._nominate_fast

    def checked(self: Reservation, pod: Any, ps: _PodState, cand: Any, table: Any, state: CycleState) -> None:
        fast(self, pod, ps, cand, table, state)
        kept, self._nomination_cache = self._nomination_cache, {}
        try:
            fresh_ps, fresh_state = _PodState(ps.affinity), CycleState()
            fast(self, pod, fresh_ps, cand, table, fresh_state)
        finally:
            self._nomination_cache = kept
        compared.append(fresh_ps.any_nominee)
        assert ps.any_nominee == fresh_ps.any_nominee
        if not ps.any_nominee:
            return
        assert np.array_equal(ps.score_by_row, fresh_ps.score_by_row)
        (mine,), (theirs,) = state.overlay[-1:], fresh_state.overlay[-1:]
        for r in ("cpu", "memory"):
            assert np.array_equal(mine.requested[r], theirs.requested[r])
        assert np.array_equal(mine.pods, theirs.pods)

    monkeypatch.setattr(reservation_plugin.Reservation, "_nominate_fast", checked)
    nodes = [node(f"n{i}") for i in range(3)]
    reservations = [
        reservation(f"r{i}", cpu="1", memory="1Gi", node_name=f"n{i}", allocate_once=False) for i in range(3)
    ]
    # 600m owners leave each reservation 400m; 1-cpu pods of no owner fill the nodes' free cpu, so the next
    # owner fits nowhere (nothing nominated) until the filler on n1 is gone
    first = [owner(f"a{i}", "600m") for i in range(3)]
    fillers = [filler(f"f{i}", f"n{i}") for i in range(3)]
    sim = simulate(
        nodes + reservations,
        first,
        fillers,
        [owner("b0", "600m")],
        steps=[{"at": "4s", "delete": [ref("Pod", "f1", "default")]}],
        until=60.0,
    )
    assert compared == [True, True, True, False, True]
    assert get(sim, "Pod", "b0")["spec"]["nodeName"] == "n1"
    assert allocated_to(sim, "b0") == "r1"
