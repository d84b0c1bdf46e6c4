"""NodeName, NodeUnschedulable, SchedulingGates, PrioritySort, DefaultBinder and the volume placeholders."""

from __future__ import annotations

from typing import Any

import pytest
from plugin_helpers import FakeHandle, new_state

from berth.api.errors import Conflict
from berth.scheduler.framework import BINDING_ANNOTATIONS_KEY, Code
from berth.scheduler.plugins.defaultbinder import DefaultBinder
from berth.scheduler.plugins.nodename import ERR_REASON as NODE_NAME_REASON
from berth.scheduler.plugins.nodename import NodeName
from berth.scheduler.plugins.nodeunschedulable import ERR_REASON_UNSCHEDULABLE, NodeUnschedulable
from berth.scheduler.plugins.queuesort import PrioritySort
from berth.scheduler.plugins.schedulinggates import SchedulingGates
from berth.scheduler.plugins.volume import NAMES as VOLUME_NAMES
from berth.scheduler.plugins.volume import VolumePlaceholder
from builders import make_node, make_pod, make_table, toleration


@pytest.mark.parametrize(
    ("node_name", "expected"),
    [("", [True, True]), ("foo", [True, False]), ("bar", [False, True]), ("missing", [False, False])],
)
def test_node_name(node_name: str, expected: list[bool]) -> None:
    plugin = NodeName()
    table = make_table([make_node("foo").obj(), make_node("bar").obj()])
    pod = make_pod("p").node(node_name or None).info()
    state = new_state()
    statuses = [plugin.filter(state, pod, table.info(i)) for i in range(2)]
    assert [s.is_success() for s in statuses] == expected
    for s in statuses:
        if not s.is_success():
            assert (s.code, s.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NODE_NAME_REASON,))
    v = plugin.filter_nodes(state, pod, table)
    assert [v.status_of(i) for i in range(2)] == statuses


@pytest.mark.parametrize(
    ("unschedulable", "tolerations", "fits"),
    [
        pytest.param(False, [], True, id="schedulable node"),
        pytest.param(True, [], False, id="unschedulable node"),
        pytest.param(
            True,
            [toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoSchedule")],
            True,
            id="tolerates the unschedulable taint",
        ),
        pytest.param(True, [toleration(operator="Exists")], True, id="wildcard toleration"),
        pytest.param(
            True,
            [toleration("node.kubernetes.io/unschedulable", "Exists", effect="NoExecute")],
            False,
            id="wrong effect",
        ),
    ],
)
def test_node_unschedulable(unschedulable: bool, tolerations: list[dict[str, str]], fits: bool) -> None:
    plugin = NodeUnschedulable()
    table = make_table([make_node("n").unschedulable(unschedulable).obj(), make_node("ok").obj()])
    pod = make_pod("p").tolerations(*tolerations).info()
    state = new_state()
    status = plugin.filter(state, pod, table.info(0))
    v = plugin.filter_nodes(state, pod, table)
    assert v.status_of(0) == status
    assert v.passed[1]
    if fits:
        assert status.is_success()
    else:
        assert (status.code, status.reasons) == (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (ERR_REASON_UNSCHEDULABLE,),
        )


@pytest.mark.parametrize(
    ("gates", "code", "reasons"),
    [
        ([], Code.SUCCESS, ()),
        (["foo"], Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting for scheduling gates: [foo]",)),
        (["foo", "bar"], Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting for scheduling gates: [foo bar]",)),
    ],
)
def test_scheduling_gates(gates: list[str], code: Code, reasons: tuple[str, ...]) -> None:
    status = SchedulingGates().pre_enqueue(make_pod("p").gate(*gates).info())
    assert (status.code, status.reasons) == (code, reasons)


@pytest.mark.parametrize(
    ("a", "b", "a_first"),
    [
        ((10, 5.0), (1, 1.0), True),
        ((1, 1.0), (10, 5.0), False),
        ((5, 1.0), (5, 2.0), True),
        ((5, 2.0), (5, 1.0), False),
        ((-1, 0.0), (0, 9.0), False),
        ((None, 3.0), (0, 4.0), True),
    ],
)
def test_priority_sort(a: tuple[int | None, float], b: tuple[int | None, float], a_first: bool) -> None:
    plugin = PrioritySort()
    pa, pb = make_pod("a").priority(a[0]).info(), make_pod("b").priority(b[0]).info()
    assert plugin.less(pa, a[1], pb, b[1]) is a_first
    assert (plugin.sort_key(pa, a[1]) < plugin.sort_key(pb, b[1])) is a_first
    assert plugin.sort_key(pa, a[1]) == (-(a[0] or 0), a[1])


def test_default_binder() -> None:
    handle = FakeHandle()
    binder = DefaultBinder(handle)  # type: ignore[arg-type]
    assert binder.bind(new_state(), make_pod("p").info(), "n1").is_success()
    assert handle.bound == [("default/p", "n1")]
    failing = DefaultBinder(FakeHandle(fail=Conflict('pods "p" already bound')))  # type: ignore[arg-type]
    status = failing.bind(new_state(), make_pod("p").info(), "n1")
    assert (status.code, status.reasons) == (Code.ERROR, ('pods "p" already bound',))


def test_default_binder_passes_binding_annotations() -> None:
    handle = FakeHandle()
    state = new_state()
    state.write(BINDING_ANNOTATIONS_KEY, {"example.com/a": "1"})
    assert DefaultBinder(handle).bind(state, make_pod("p").info(), "n1").is_success()  # type: ignore[arg-type]
    assert handle.annotations == {"example.com/a": "1"}


def test_default_binder_does_not_swallow_bugs() -> None:
    broken = DefaultBinder(FakeHandle(fail=TypeError("bug")))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        broken.bind(new_state(), make_pod("p").info(), "n1")


def test_volume_placeholders() -> None:
    assert VOLUME_NAMES == ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")
    p: Any = VolumePlaceholder("VolumeZone")
    assert p.name == "VolumeZone"
    assert p.events_to_register() == []
    for method in ("filter", "filter_nodes", "score", "pre_filter", "bind"):
        assert not hasattr(p, method)
