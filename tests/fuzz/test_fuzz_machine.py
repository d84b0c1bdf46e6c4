"""The stateful property test: hypothesis drives a simulated cluster through random actions (one rule per action
of fuzz_model.SPACES, gangs only with Coscheduling, quotas only with CapacityScheduling) and checks every
invariant of fuzz_invariants after every step, and determinism (a replay gives the same objects) at the end.

The budget here is small and derandomized, so `make test` is quick and reproducible; `make fuzz` runs 10 000
seeded scenarios of the same actions (benchmarks/fuzz.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fuzz_model import MODE_ONLY, MODES, SPACES, Action, Cluster, determinism_violation
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

MAX_EXAMPLES = 60
STEPS = 40


def _params(name: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({k: st.sampled_from(v) for k, v in SPACES[name].items()})


class ClusterMachine(RuleBasedStateMachine):
    """A cluster in one scheduler configuration; each rule applies one action and checks the invariants."""

    cluster: Cluster | None = None
    broken = False

    @initialize(
        mode=st.sampled_from(MODES),
        seed=st.integers(0, 3),
        nodes=st.lists(_params("add_node"), min_size=1, max_size=3),
    )
    def start(self, mode: str, seed: int, nodes: list[dict[str, Any]]) -> None:
        self.cluster = Cluster(mode, seed)
        for node in nodes:
            self.step(("add_node", node))

    def step(self, action: Action) -> None:
        assert self.cluster is not None
        self.broken = True  # until the step is applied and checked
        self.cluster.apply(action)
        violations = self.cluster.check()
        assert violations == [], "\n".join(str(v) for v in violations)
        self.broken = False

    def teardown(self) -> None:
        cluster = self.cluster
        if cluster is None or self.broken:
            return
        v = determinism_violation(cluster.mode, cluster.actions, cluster, seed=cluster.seed)
        assert v is None, str(v)


def _rule(name: str) -> Callable[..., None]:
    only = MODE_ONLY.get(name)

    def act(self: ClusterMachine, params: dict[str, Any]) -> None:
        self.step((name, params))

    act.__name__ = name
    act.__qualname__ = f"ClusterMachine.{name}"
    wrapped = rule(params=_params(name))(act)
    if only is not None:
        wrapped = precondition(lambda self: self.cluster is not None and self.cluster.mode == only)(wrapped)
    return wrapped


for _name in SPACES:
    setattr(ClusterMachine, _name, _rule(_name))

ClusterMachine.TestCase.settings = settings(
    max_examples=MAX_EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestClusterMachine = ClusterMachine.TestCase
