"""Property: every gang ends either fully bound or not bound at all, with nothing left reserved."""

from __future__ import annotations

from gang_helpers import bound, pod_group, simulate
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod


@settings(max_examples=15, deadline=None)
@given(
    nodes=st.integers(1, 3),
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=4),
    gated=st.lists(st.booleans(), min_size=4, max_size=4),
    timeout=st.integers(1, 20),
)
def test_gangs_all_or_nothing(nodes: int, sizes: list[int], gated: list[bool], timeout: int) -> None:
    objs = []
    for g, size in enumerate(sizes):
        name = f"g{g}"
        objs.append(pod_group(name, size, timeout=timeout))
        for i in range(size):
            member = make_pod(f"{name}-{i}").pod_group(name).req(cpu="1")
            if gated[g] and i == size - 1:
                member.gate("wait")
            objs.append(member.obj())
    sim = simulate(
        [(0, [make_node(f"n{i}").obj() for i in range(nodes)]), (1, objs)], until=1 + timeout * 3 + 0.5
    )
    placed = bound(sim)
    for g, size in enumerate(sizes):
        count = sum(1 for n in placed if n.startswith(f"g{g}-"))
        assert count in (0, size)
    waiting_groups = {
        w.pod.labels.get("scheduling.x-k8s.io/pod-group") for w in sim.scheduler.waiting.values()
    }
    for g in waiting_groups:
        assert not any(n.startswith(f"{g}-") for n in placed)
