"""Every extension point runs as the Scheduling Framework describes, with user plugins in a profile."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.manifest import Manifest
from berth.scheduler.builtin import builtin_registry
from berth.scheduler.framework import (
    Code,
    CycleState,
    Handle,
    NodeInfo,
    NodeStatusMap,
    NodeTable,
    PodInfo,
    PostFilterResult,
    PreFilterResult,
    Status,
    parse_config,
)
from berth.sim.engine import Simulation
from builders import make_node, make_pod

LOG: list[str] = []


class Recorder:
    """A plugin on every point, configured by its args; logs what it sees."""

    name = "Recorder"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = dict(args)
        self.handle = handle

    def pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        only = self.args.get("only")
        return (PreFilterResult(frozenset(only)) if only is not None else None), Status()

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:  # per-node form only
        if node.name in self.args.get("reject", []):
            return Status(Code.UNSCHEDULABLE, ("node(s) were rejected by Recorder",))
        return Status()

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeStatusMap
    ) -> tuple[PostFilterResult | None, Status]:
        LOG.append(f"postfilter {pod.name} " + ",".join(sorted(name for name, _ in statuses.items())))
        return None, Status(Code.UNSCHEDULABLE, ("recorder: nothing to do",))

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:  # per-node form only
        return 100 if node.name == self.args.get("prefer") else 0

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        LOG.append(f"reserve {pod.name} {node_name}")
        if pod.labels.get("fail") == "reserve":
            return Status(Code.UNSCHEDULABLE, ("reserve refused",))
        return Status()

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        LOG.append(f"unreserve {pod.name} {node_name}")

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]:
        mode = pod.labels.get("permit")
        if mode == "wait":
            return Status(Code.WAIT), 10.0
        if mode == "reject":
            return Status(Code.UNSCHEDULABLE, ("permit refused",)), 0.0
        if mode == "release":
            # allow every waiting pod, as a gang's last member does
            for w in self.handle.iterate_waiting_pods():
                w.allow(self.name)
        return Status(), 0.0

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        if pod.labels.get("fail") == "prebind":
            return Status(Code.ERROR, ("volume not ready",))
        return Status()

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        LOG.append(f"bind-skip {pod.name}")
        return Status(Code.SKIP)

    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        LOG.append(f"postbind {pod.name} {node_name}")


def simulate(
    docs: list[dict[str, Any]], args: dict[str, Any] | None = None, until: float = 60.0, weight: int = 1
) -> Simulation:
    LOG.clear()
    registry = builtin_registry()
    registry.register("Recorder", Recorder)
    cfg = parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {
                        "multiPoint": {"enabled": [{"name": "Recorder", "weight": weight}]},
                        "bind": {
                            "enabled": [{"name": "Recorder"}, {"name": "DefaultBinder"}],
                            "disabled": [{"name": "*"}],
                        },
                    },
                    "pluginConfig": [{"name": "Recorder", "args": args or {}}],
                }
            ],
        }
    )
    sim = Simulation(config=cfg, registry=registry)
    sim.run_manifests([Manifest(d, "test") for d in docs], until=until)
    return sim


def state_of(sim: Simulation, name: str) -> tuple[str | None, str | None]:
    p = sim.store.get(("", "Pod"), "default", name)
    cond = [c for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"]
    msg = cond[0].get("message") if cond and cond[0]["status"] == "False" else None
    return p["spec"].get("nodeName"), msg


def test_per_node_score_with_weight_decides() -> None:
    sim = simulate(
        [make_node("a").obj(), make_node("b").obj(), make_node("c").obj(), make_pod("p").req(cpu="1").obj()],
        {"prefer": "c"},
        weight=5,
    )
    assert state_of(sim, "p") == ("c", None)
    assert LOG == ["reserve p c", "bind-skip p", "postbind p c"]


def test_per_node_filter_and_postfilter_message() -> None:
    sim = simulate(
        [make_node("a").obj(), make_node("b").obj(), make_pod("p").req(cpu="1").obj()], {"reject": ["a", "b"]}
    )
    assert state_of(sim, "p") == (
        None,
        "0/2 nodes are available: 2 node(s) were rejected by Recorder. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod., recorder: nothing to do.",
    )
    assert LOG[0] == "postfilter p a,b"


def test_prefilter_result_narrows_nodes() -> None:
    sim = simulate(
        [make_node("a").obj(), make_node("b").obj(), make_node("c").obj(), make_pod("p").req(cpu="1").obj()],
        {"only": ["b"]},
    )
    assert state_of(sim, "p") == ("b", None)


def test_prefilter_result_with_no_existing_node() -> None:
    sim = simulate(
        [make_node("a").obj(), make_node("b").obj(), make_pod("p").req(cpu="1").obj()], {"only": []}
    )
    assert state_of(sim, "p") == (
        None,
        "0/2 nodes are available: node(s) didn't satisfy plugin(s) [Recorder]. preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling., recorder: nothing to do.",
    )


def test_reserve_failure_unreserves() -> None:
    sim = simulate([make_node("a").obj(), make_pod("p").req(cpu="1").label(fail="reserve").obj()])
    assert state_of(sim, "p") == (None, "reserve refused")
    assert LOG[:2] == ["reserve p a", "unreserve p a"]
    assert sim.scheduler.cache.table.info(0).pod_count == 0


def test_permit_reject_unreserves() -> None:
    sim = simulate([make_node("a").obj(), make_pod("p").req(cpu="1").label(permit="reject").obj()])
    assert state_of(sim, "p") == (None, "permit refused")
    assert "unreserve p a" in LOG


def test_permit_wait_times_out() -> None:
    sim = simulate([make_node("a").obj(), make_pod("p").req(cpu="1").label(permit="wait").obj()], until=5.0)
    assert sim.scheduler.cache.table.info(0).pod_count == 1  # assumed while waiting
    assert state_of(sim, "p") == (None, None)
    sim.clock.run(until=10.0)
    sim.run_until_idle()
    assert state_of(sim, "p") == (None, "rejected due to timeout after waiting 10s at plugin Recorder")
    assert sim.scheduler.cache.table.info(0).pod_count == 0
    assert LOG[-1] == "unreserve p a"


def test_permit_wait_then_allowed() -> None:
    sim = simulate(
        [
            make_node("a").obj(),
            make_pod("w").req(cpu="1").label(permit="wait").obj(),
            make_pod("x").req(cpu="1").label(permit="release").obj(),
        ]
    )
    assert state_of(sim, "w") == ("a", None)
    assert state_of(sim, "x") == ("a", None)


def test_prebind_error_forgets_and_retries_with_backoff() -> None:
    sim = simulate([make_node("a").obj(), make_pod("p").req(cpu="1").label(fail="prebind").obj()], until=3.0)
    node_name, msg = state_of(sim, "p")
    assert (node_name, msg) == (None, "volume not ready")
    p = sim.store.get(("", "Pod"), "default", "p")
    assert [c["reason"] for c in p["status"]["conditions"]] == ["SchedulerError"]
    assert sim.scheduler.stats.errors >= 2  # retried after the 1 s backoff
    assert sim.scheduler.cache.table.info(0).pod_count == 0
