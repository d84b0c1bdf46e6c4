"""The seeded scenarios `make fuzz` runs: a few of them here, what they are made of, and the shrinker."""

from __future__ import annotations

from typing import Any

import fuzz_model
import pytest
from fuzz_invariants import Violation
from fuzz_model import (
    DEPLOY,
    MODES,
    Action,
    action_names,
    determinism_violation,
    run,
    scenario_actions,
    shrink,
)

SEEDS = (0, 1, 2, 3, 4, 5)


@pytest.mark.parametrize("seed", SEEDS)
def test_seeded_scenario_keeps_every_invariant(seed: int) -> None:
    mode, actions = scenario_actions(seed)
    cluster, found = run(mode, actions, seed=seed)
    assert [(step, str(v)) for step, v in found] == []
    assert determinism_violation(mode, actions, cluster, seed=seed) is None


def test_seeded_scenarios_are_reproducible_and_use_every_action() -> None:
    assert scenario_actions(7) == scenario_actions(7)
    used: dict[str, set[str]] = {m: set() for m in MODES}
    for seed in range(90):
        mode, actions = scenario_actions(seed)
        assert mode == MODES[seed % 3]
        assert 17 <= len(actions) <= 67
        used[mode].update(name for name, _ in actions)
    assert {m: sorted(names) for m, names in used.items()} == {m: sorted(action_names(m)) for m in MODES}


def test_shrink_keeps_the_violation_and_drops_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a probe invariant "two Deployments exist", a long scenario shrinks to two simplest Deployments."""

    def probe(sim: Any, monitor: Any, *, mode: str) -> list[Violation]:
        n = len(sim.store.list(DEPLOY)[0])
        return [Violation("probe", f"{n} Deployments")] if n >= 2 else []

    monkeypatch.setattr(fuzz_model, "check_all", probe)
    mode, actions = scenario_actions(11)
    workloads = [a for a in actions if a[0] == "create_workload" and a[1]["kind"] == "Deployment"]
    assert len(workloads) >= 2
    small = shrink(mode, actions, "probe", seed=11)
    simplest: Action = ("create_workload", {k: v[0] for k, v in fuzz_model.SPACES["create_workload"].items()})
    assert small == [simplest, simplest]
