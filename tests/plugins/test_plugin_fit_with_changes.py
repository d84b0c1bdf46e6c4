"""NodeResourcesFit's arithmetic status (used by preemption dry runs) equals its Filter's on a what-if view."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_helpers import new_state

from berth.scheduler.framework.nodetable import AdjustedNodeInfo
from berth.scheduler.plugins.noderesources.args import parse_fit_args
from berth.scheduler.plugins.noderesources.fit import Fit
from builders import make_node, make_pod, make_table


def _fit() -> Fit:
    return Fit(parse_fit_args({}))


def test_exact_boundaries() -> None:
    on_node = [make_pod(f"v{i}").req(cpu="900m", memory="1Gi").info() for i in range(4)]
    table = make_table([make_node("n").capacity(cpu="4", memory="8Gi", pods=5).obj()], {"n": on_node})
    pod = make_pod("big").req(cpu="3", memory="1Gi").info()
    fit, state = _fit(), new_state()
    fit.pre_filter(state, pod, table)
    # 400m free: removing two 900m pods gives 2200m (< 3000m), three give 3100m
    assert fit.fits_with_changes(state, pod, table, 0, on_node[:2], []).reasons == ("Insufficient cpu",)
    assert fit.fits_with_changes(state, pod, table, 0, on_node[:3], []).is_success()
    # a nominated 200m pod counted on the node takes the margin away again
    nominated = [make_pod("nom").req(cpu="200m").info()]
    assert fit.fits_with_changes(state, pod, table, 0, on_node[:3], nominated).reasons == (
        "Insufficient cpu",
    )
    # the pod limit: 4 pods + 1 nominated + the preemptor > 5 pods
    small = make_pod("small").req(cpu="10m").info()
    state = new_state()
    fit.pre_filter(state, small, table)
    assert fit.fits_with_changes(state, small, table, 0, [], []).is_success()
    assert fit.fits_with_changes(state, small, table, 0, [], [make_pod("nom2").info()]).reasons == (
        "Too many pods",
    )


amounts = st.sampled_from(["0", "100m", "500m", "1", "2"])


@settings(max_examples=150, deadline=None)
@given(
    existing=st.lists(st.tuples(amounts, st.sampled_from(["0", "1Gi", "3Gi"])), max_size=6),
    removed_mask=st.lists(st.booleans(), min_size=6, max_size=6),
    added=st.lists(st.tuples(amounts, st.sampled_from(["0", "1Gi"])), max_size=2),
    req=st.tuples(amounts, st.sampled_from(["0", "1Gi", "4Gi"])),
    pod_limit=st.integers(min_value=1, max_value=8),
)
def test_agrees_with_filter_on_adjusted_view(
    existing: list[tuple[str, str]],
    removed_mask: list[bool],
    added: list[tuple[str, str]],
    req: tuple[str, str],
    pod_limit: int,
) -> None:
    on_node = [make_pod(f"e{i}").req(cpu=c, memory=m).info() for i, (c, m) in enumerate(existing)]
    table = make_table([make_node("n").capacity(cpu="4", memory="8Gi", pods=pod_limit).obj()], {"n": on_node})
    removed = [p for p, gone in zip(on_node, removed_mask, strict=False) if gone]
    extra = [make_pod(f"a{i}").req(cpu=c, memory=m).info() for i, (c, m) in enumerate(added)]
    pod = make_pod("p").req(cpu=req[0], memory=req[1]).info()
    fit, state = _fit(), new_state()
    fit.pre_filter(state, pod, table)
    expected = fit.filter(state, pod, AdjustedNodeInfo(table, 0, removed, extra))
    assert fit.fits_with_changes(state, pod, table, 0, removed, extra) == expected
