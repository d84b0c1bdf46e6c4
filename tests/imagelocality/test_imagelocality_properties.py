"""Property: on random clusters the batched and per-node ImageLocality forms agree with a direct model."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from imagelocality_helpers import MB

from berth.scheduler.framework import CycleState, NodeTable, PodInfo
from berth.scheduler.plugins.imagelocality import ImageLocality
from builders import make_node, make_pod, make_table

NODE_NAMES = ("a:latest", "a:v1", "b:latest", "reg:5000/c:latest", "reg:5000/c", "d@sha256:01", "e:latest")
POD_REFS = ("a", "a:v1", "b", "b:latest", "reg:5000/c", "reg:5000/c:latest", "d@sha256:01", "e", "zzz")
SIZES = (0, 5 * MB, 23 * MB, 40 * MB, 300 * MB, 999 * MB, 2500 * MB, 123_456_789)

images_st = st.lists(
    st.builds(
        lambda names, size: {"names": names, "sizeBytes": size},
        st.lists(st.sampled_from(NODE_NAMES), min_size=1, max_size=3),
        st.sampled_from(SIZES),
    ),
    max_size=4,
)


@st.composite
def clusters(draw: st.DrawFn) -> NodeTable:
    n = draw(st.integers(1, 8))
    table = make_table(make_node(f"n{i}").images(*draw(images_st)).obj() for i in range(n))
    # later node changes: image pulls / garbage collection, and a node leaving
    for _ in range(draw(st.integers(0, 2))):
        table.set_node(make_node(f"n{draw(st.integers(0, n - 1))}").images(*draw(images_st)).obj())
    if n > 1 and draw(st.booleans()):
        table.remove_node(f"n{draw(st.integers(0, n - 1))}")
    return table


pods_st = st.builds(
    lambda c, i: make_pod().images(*c).init_images(*i).info(),
    st.lists(st.sampled_from(POD_REFS), min_size=0, max_size=3),
    st.lists(st.sampled_from(POD_REFS), max_size=2),
)


def model(table: NodeTable, pod: PodInfo) -> list[int]:
    """kube's Score written out directly from the node objects (cache semantics: first size seen)."""
    first_size: dict[str, int] = {}
    holders: dict[str, set[int]] = {}
    for i, node in enumerate(table.nodes):
        for img in node["status"].get("images") or ():
            for name in img["names"]:
                first_size.setdefault(name, img["sizeBytes"])
                holders.setdefault(name, set()).add(i)
    spec: dict[str, Any] = dict(pod.obj["spec"])
    containers = list(spec.get("initContainers") or ()) + list(spec["containers"])
    out = []
    for i in range(table.size):
        total = 0
        for c in containers:
            ref = c["image"]
            if ref.rfind(":") <= ref.rfind("/"):
                ref += ":latest"
            if i in holders.get(ref, ()):
                total += int(float(first_size[ref]) * (float(len(holders[ref])) / float(table.size)))
        hi = 1000 * MB * len(containers)
        total = 23 * MB if total < 23 * MB else min(total, hi)
        out.append(100 * (total - 23 * MB) // (hi - 23 * MB) if containers else 0)
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=clusters(), pod=pods_st, data=st.data())
def test_batched_equals_per_node_equals_model(table: NodeTable, pod: PodInfo, data: st.DataObject) -> None:
    pl = ImageLocality()
    state = CycleState()
    idx = np.array(data.draw(st.permutations(range(table.size))), dtype=np.int64)[
        : data.draw(st.integers(0, table.size))
    ]
    per_node = [pl.score(state, pod, table.info(int(i))) for i in idx]
    batched = pl.score_nodes(state, pod, table, idx).tolist()
    expected = model(table, pod)
    assert batched == per_node
    assert per_node == [expected[int(i)] for i in idx]
    assert all(0 <= s <= 100 for s in batched)
