"""NodePorts: kube's host-port conflict table (0.0.0.0 versus specific IPs, protocols)."""

from __future__ import annotations

import pytest
from plugin_helpers import new_state

from berth.scheduler.framework import ClusterEvent, Code
from berth.scheduler.plugins.nodeports import ERR_REASON, NodePorts, conflicts
from builders import host_port, make_node, make_pod, make_table


def _ports(*specs: str) -> list[dict[str, object]]:
    """'UDP/127.0.0.1/8080' → container host ports."""
    out = []
    for s in specs:
        proto, ip, port = s.split("/")
        out.append(host_port(int(port), ip, proto))
    return out


@pytest.mark.parametrize(
    ("wanted", "existing", "fits"),
    [
        pytest.param([], [], True, id="nothing running"),
        pytest.param(["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/9090"], True, id="other port"),
        pytest.param(["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], False, id="same udp port"),
        pytest.param(["TCP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], False, id="same tcp port"),
        pytest.param(["TCP/127.0.0.1/8080"], ["TCP/127.0.0.2/8080"], True, id="different host ip"),
        pytest.param(["UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], True, id="different protocol"),
        pytest.param(
            ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"],
            ["UDP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
            False,
            id="second udp port conflict",
        ),
        pytest.param(
            ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
            ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
            False,
            id="first tcp port conflict",
        ),
        pytest.param(
            ["TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], False, id="first tcp port conflict due to 0.0.0.0"
        ),
        pytest.param(
            ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"],
            ["TCP/127.0.0.1/8001"],
            False,
            id="TCP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            ["TCP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], False, id="second tcp port conflict to 0.0.0.0"
        ),
        pytest.param(["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], True, id="second different protocol"),
        pytest.param(
            ["UDP/127.0.0.1/8001"],
            ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
            False,
            id="UDP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(["TCP//8080"], ["TCP/10.0.0.1/8080"], False, id="empty host ip means 0.0.0.0"),
        pytest.param(["/10.0.0.1/8080"], ["TCP/10.0.0.1/8080"], False, id="empty protocol means TCP"),
    ],
)
def test_filter(wanted: list[str], existing: list[str], fits: bool) -> None:
    plugin = NodePorts()
    used = [make_pod("e").ports(*_ports(*existing)).info()] if existing else []
    table = make_table([make_node("n").obj(), make_node("free").obj()], {"n": used})
    pod = make_pod("p").ports(*_ports(*wanted)).info()
    state = new_state()
    _, pre = plugin.pre_filter(state, pod, table)
    assert pre.code == (Code.SUCCESS if wanted else Code.SKIP)
    status = plugin.filter(state, pod, table.info(0))
    verdicts = plugin.filter_nodes(state, pod, table)
    assert verdicts.status_of(0) == status
    assert verdicts.passed[1]
    if fits:
        assert status.is_success()
    else:
        assert status.code == Code.UNSCHEDULABLE
        assert status.reasons == (ERR_REASON,)


def test_port_freed_when_pod_removed() -> None:
    plugin = NodePorts()
    existing = make_pod("e").ports(*_ports("TCP/0.0.0.0/80")).info()
    table = make_table([make_node("n").obj()], {"n": [existing]})
    pod = make_pod("p").ports(*_ports("TCP/0.0.0.0/80")).info()
    assert not plugin.filter_nodes(new_state(), pod, table).passed[0]
    table.remove_pod(0, existing)
    assert plugin.filter_nodes(new_state(), pod, table).passed[0]


def test_conflicts_ignores_non_positive_ports() -> None:
    assert not conflicts({("0.0.0.0", "TCP", 0): 1}, ("0.0.0.0", "TCP", 0))


def test_events() -> None:
    assert NodePorts().events_to_register() == [
        ClusterEvent("Pod", frozenset({"Delete"})),
        ClusterEvent("Node", frozenset({"Add", "Update"})),
    ]
