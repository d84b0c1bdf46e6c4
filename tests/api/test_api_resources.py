"""Tests for berth.api.resources (PodRequests semantics, allocatable, host ports)."""

from typing import Any

import pytest

from berth.api.errors import InvalidObjectError
from berth.api.resources import (
    container_ports,
    node_allocatable,
    pod_nonzero_requests,
    pod_requests,
    pod_requests_and_nonzero,
)
from builders import make_pod

MI = 1 << 20
GI = 1 << 30


def c(
    name: str,
    requests: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    restart_policy: str | None = None,
) -> dict[str, Any]:
    extra = {"restartPolicy": restart_policy} if restart_policy else {}
    res: dict[str, Any] = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    return {"name": name, "resources": res, **extra}


@pytest.mark.parametrize(
    ("p", "requests", "nonzero"),
    [
        (make_pod().ns("ns").spec(containers=[c("a")]).obj(), {}, (100, 200 * MI)),
        (make_pod().ns("ns").spec(containers=[{"name": "a"}]).obj(), {}, (100, 200 * MI)),
        (
            make_pod().ns("ns").spec(containers=[c("a", {"cpu": "0", "memory": "0"})]).obj(),
            {},
            (0, 0),
        ),  # explicit zeros stay zero
        (make_pod().ns("ns").spec(containers=[c("a", {"cpu": "0"})]).obj(), {}, (0, 200 * MI)),
        (
            make_pod()
            .ns("ns")
            .spec(containers=[c("a", {"cpu": "500m", "memory": "1Gi"}), c("b", {"cpu": "250m"})])
            .obj(),
            {"cpu": 750, "memory": GI},
            (750, GI + 200 * MI),
        ),
        # limits default missing requests
        (
            make_pod()
            .ns("ns")
            .spec(containers=[c("a", {"cpu": "100m"}, {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": 1})])
            .obj(),
            {"cpu": 100, "memory": GI, "nvidia.com/gpu": 1},
            (100, GI),
        ),
        # init containers: max(sum of containers, each init)
        (
            make_pod()
            .ns("ns")
            .spec(
                containers=[c("a", {"cpu": "1", "memory": "1Gi"})],
                initContainers=[c("i", {"cpu": "2", "memory": "100Mi"})],
            )
            .obj(),
            {"cpu": 2000, "memory": GI},
            (2000, GI),
        ),
        (
            make_pod()
            .ns("ns")
            .spec(containers=[c("a", {"cpu": "1"})], initContainers=[c("i", {"ephemeral-storage": "1Gi"})])
            .obj(),
            {"cpu": 1000, "ephemeral-storage": GI},
            (1000, 200 * MI),
        ),
        # sidecars add to the sum and to later init containers' peak
        (
            make_pod()
            .ns("ns")
            .spec(
                containers=[c("a", {"cpu": "500m", "memory": "1Gi"})],
                initContainers=[
                    c("i1", {"cpu": "2"}),
                    c("s", {"cpu": "100m", "memory": "10Mi"}, restart_policy="Always"),
                    c("i2", {"cpu": "1950m"}),
                ],
                overhead={"cpu": "10m"},
            )
            .obj(),
            {"cpu": 2060, "memory": GI + 10 * MI},
            (2060, GI + 10 * MI),
        ),
        # a sidecar before a big init container
        (
            make_pod()
            .ns("ns")
            .spec(
                containers=[c("a", {"cpu": "1"})],
                initContainers=[c("s", {"cpu": "1"}, restart_policy="Always"), c("i", {"cpu": "3"})],
            )
            .obj(),
            {"cpu": 4000},
            (4000, 400 * MI),  # the sidecar's default memory counts in the sum and in the init peak
        ),
        # overhead
        (
            make_pod()
            .ns("ns")
            .spec(containers=[c("a", {"cpu": "1"})], overhead={"cpu": "250m", "memory": "120Mi"})
            .obj(),
            {"cpu": 1250, "memory": 120 * MI},
            (1250, 320 * MI),
        ),
        # exact sums, rounded once: 3 x 0.0001 cpu = 0.0003 -> 1m
        (
            make_pod()
            .ns("ns")
            .spec(
                containers=[c("a", {"cpu": "0.0001"}), c("b", {"cpu": "0.0001"}), c("c", {"cpu": "0.0001"})]
            )
            .obj(),
            {"cpu": 1},
            (1, 600 * MI),
        ),
        (
            make_pod()
            .ns("ns")
            .spec(containers=[c("a", {"memory": "0.1Ki"}), c("b", {"memory": "0.1Ki"})])
            .obj(),
            {"memory": 205},
            (200, 205),
        ),
        (
            make_pod().ns("ns").spec(containers=[c("a", {"cpu": 2, "memory": 1073741824})]).obj(),
            {"cpu": 2000, "memory": GI},
            (2000, GI),
        ),
    ],
)
def test_pod_requests(p: dict[str, Any], requests: dict[str, int], nonzero: tuple[int, int]) -> None:
    assert pod_requests(p) == requests
    assert pod_nonzero_requests(p) == nonzero
    # both at once (a pod without init containers or overhead takes a shorter path): the same answers
    assert pod_requests_and_nonzero(p) == (requests, nonzero)


@pytest.mark.parametrize(
    ("p", "message"),
    [
        (
            make_pod().ns("ns").spec(containers=[c("a", {"cpu": "500x"})]).obj(),
            'Pod "ns/p": spec.containers[0].resources.requests.cpu: invalid quantity "500x"',
        ),
        (
            make_pod().ns("ns").spec(containers=[c("a", None, {"memory": "1KB"})]).obj(),
            'Pod "ns/p": spec.containers[0].resources.limits.memory: invalid quantity "1KB"',
        ),
        (
            make_pod().ns("ns").spec(containers=[c("a")], initContainers=[c("i", {"cpu": ""})]).obj(),
            'Pod "ns/p": spec.initContainers[0].resources.requests.cpu: invalid quantity ""',
        ),
        (
            make_pod().ns("ns").spec(containers=[c("a")], overhead={"cpu": "x"}).obj(),
            'Pod "ns/p": spec.overhead.cpu: invalid quantity "x"',
        ),
    ],
)
def test_pod_requests_errors(p: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidObjectError) as info:
        pod_requests(p)
    assert str(info.value) == message
    with pytest.raises(InvalidObjectError) as info:
        pod_requests_and_nonzero(p)
    assert str(info.value) == message


def test_node_allocatable() -> None:
    node = {
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"},
            "allocatable": {"cpu": "3800m", "memory": "15Gi"},
        },
    }
    assert node_allocatable(node) == {
        "cpu": 3800,
        "memory": 15 * GI,
        "pods": 110,
        "ephemeral-storage": 100 * GI,
    }
    assert node_allocatable({"kind": "Node", "metadata": {"name": "n"}}) == {}
    with pytest.raises(InvalidObjectError) as info:
        node_allocatable(
            {"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1K"}}}
        )
    assert str(info.value) == 'Node "n": status.allocatable.cpu: invalid quantity "1K"'


def test_container_ports() -> None:
    p = (
        make_pod()
        .ns("ns")
        .spec(
            containers=[
                {"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81}]},
                {
                    "name": "b",
                    "ports": [{"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"}],
                },
                {"name": "c", "ports": [{"containerPort": 9, "hostPort": 0}]},
            ],
            initContainers=[{"name": "i", "ports": [{"containerPort": 1, "hostPort": 1}]}],
        )
        .obj()
    )
    assert container_ports(p) == (("0.0.0.0", "TCP", 8080), ("10.0.0.1", "UDP", 53))
    assert container_ports(make_pod().ns("ns").spec(containers=[c("a")]).obj()) == ()
