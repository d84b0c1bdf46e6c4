"""Scheduler extenders (KubeSchedulerConfiguration ``extenders``) behave as kube-scheduler's: filter,
prioritize, bind, managed resources and ignorable errors, against a real extender HTTP server."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from extender_server import FakeExtender, running

from berth.api.manifest import Manifest
from berth.scheduler.framework.config import SchedulerConfig, parse_config
from berth.scheduler.trace import Tracer
from berth.sim.engine import Simulation
from builders import make_node, make_pod

GPU = "example.com/gpu"


def config(*extenders: dict[str, Any]) -> SchedulerConfig:
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "extenders": list(extenders),
        }
    )


def nodes(*names: str, cpu: str = "4") -> list[dict[str, Any]]:
    return [make_node(n).capacity(cpu=cpu, memory="8Gi", pods="110").obj() for n in names]


def run(cfg: SchedulerConfig, docs: list[dict[str, Any]]) -> tuple[Simulation, dict[str, dict[str, Any]]]:
    sim = Simulation(config=cfg)
    sim.run_manifests([Manifest(d, "test") for d in docs], until=5.0)
    pods = {o["metadata"]["name"]: o for o in sim.objects() if o["kind"] == "Pod"}
    return sim, pods


def condition(pod: dict[str, Any]) -> tuple[str, str]:
    c = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    return c["reason"], c["message"]


def keep(*kept: str, failed: str = "no free gpu", unresolvable: tuple[str, ...] = ()) -> Any:
    """A filter handler keeping ``kept`` (by node names, or as Node objects), failing the others."""

    def handler(body: dict[str, Any]) -> tuple[int, Any]:
        names = body["NodeNames"] or [n["metadata"]["name"] for n in body["Nodes"]["items"]]
        result: dict[str, Any] = {
            "FailedNodes": {n: failed for n in names if n not in kept and n not in unresolvable},
            "FailedAndUnresolvableNodes": {n: "gpu model mismatch" for n in names if n in unresolvable},
            "Error": "",
        }
        if body["NodeNames"] is not None:
            result["NodeNames"] = [n for n in names if n in kept]
        else:
            result["Nodes"] = {"items": [n for n in body["Nodes"]["items"] if n["metadata"]["name"] in kept]}
        return 200, result

    return handler


@pytest.fixture
def filtering() -> Iterator[FakeExtender]:
    with running({"filter": keep("n2")}) as ext:
        yield ext


# ----- filter ------------------------------------------------------------------------------------------
def test_filter_keeps_only_the_nodes_the_extender_keeps(filtering: FakeExtender) -> None:
    cfg = config({"urlPrefix": filtering.url, "filterVerb": "filter"})
    _, pods = run(cfg, [*nodes("n1", "n2", "n3"), make_pod("p").req(cpu="1").obj()])
    assert pods["p"]["spec"]["nodeName"] == "n2"
    (body,) = filtering.bodies("filter")
    assert sorted(body) == ["NodeNames", "Nodes", "Pod"]
    assert body["NodeNames"] is None
    assert [n["metadata"]["name"] for n in body["Nodes"]["items"]] == ["n1", "n2", "n3"]
    assert body["Pod"]["metadata"]["name"] == "p"


def test_node_cache_capable_extender_gets_node_names(filtering: FakeExtender) -> None:
    cfg = config({"urlPrefix": filtering.url, "filterVerb": "filter", "nodeCacheCapable": True})
    _, pods = run(cfg, [*nodes("n1", "n2", "n3"), make_pod("p").req(cpu="1").obj()])
    assert pods["p"]["spec"]["nodeName"] == "n2"
    (body,) = filtering.bodies("filter")
    assert body["Nodes"] is None
    assert body["NodeNames"] == ["n1", "n2", "n3"]


def test_extender_sees_only_the_nodes_that_passed_the_filter_plugins(filtering: FakeExtender) -> None:
    cfg = config({"urlPrefix": filtering.url, "filterVerb": "filter", "nodeCacheCapable": True})
    docs = [*nodes("n1", "n2"), *nodes("small", cpu="500m"), make_pod("p").req(cpu="1").obj()]
    _, pods = run(cfg, docs)
    assert filtering.bodies("filter")[0]["NodeNames"] == ["n1", "n2"]
    assert pods["p"]["spec"]["nodeName"] == "n2"


def test_failed_nodes_reasons_join_the_fit_error() -> None:
    with running({"filter": keep(unresolvable=("n3",))}) as ext:
        cfg = config({"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True})
        docs = [*nodes("n1", "n2", "n3"), *nodes("small", cpu="500m"), make_pod("p").req(cpu="1").obj()]
        _, pods = run(cfg, docs)
    assert pods["p"]["spec"].get("nodeName") is None
    assert condition(pods["p"]) == (
        "Unschedulable",
        "0/4 nodes are available: 1 Insufficient cpu, 1 gpu model mismatch, 2 no free gpu. "
        "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, "
        "3 No preemption victims found for incoming pod.",
    )


def test_extenders_filter_in_turn() -> None:
    with running({"filter": keep("n2", "n3")}) as first, running({"filter": keep("n3")}) as second:
        cfg = config(
            {"urlPrefix": first.url, "filterVerb": "filter", "nodeCacheCapable": True},
            {"urlPrefix": second.url, "filterVerb": "filter", "nodeCacheCapable": True},
        )
        _, pods = run(cfg, [*nodes("n1", "n2", "n3"), make_pod("p").req(cpu="1").obj()])
    assert pods["p"]["spec"]["nodeName"] == "n3"
    assert second.bodies("filter")[0]["NodeNames"] == ["n2", "n3"]


def test_claiming_an_unknown_node_fails_the_attempt() -> None:
    with running({"filter": lambda body: (200, {"NodeNames": ["ghost"]})}) as ext:
        cfg = config({"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True})
        _, pods = run(cfg, [*nodes("n1", "n2"), make_pod("p").obj()])
    assert condition(pods["p"]) == (
        "SchedulerError",
        f'extender "{ext.url}" claims a filtered node "ghost" which is not found in the input node list',
    )


def test_error_field_of_the_answer_fails_the_attempt() -> None:
    with running({"filter": lambda body: (200, {"Error": "gpu inventory unavailable"})}) as ext:
        cfg = config({"urlPrefix": ext.url, "filterVerb": "filter"})
        _, pods = run(cfg, [*nodes("n1"), make_pod("p").obj()])
    assert condition(pods["p"]) == ("SchedulerError", "gpu inventory unavailable")


def test_lowercase_answer_keys_are_read_like_go() -> None:
    answer = {"nodenames": ["n1"], "failedNodes": {"n2": "busy"}}
    with running({"filter": lambda body: (200, answer)}) as ext:
        cfg = config({"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True})
        _, pods = run(cfg, [*nodes("n1", "n2"), make_pod("p").obj()])
    assert pods["p"]["spec"]["nodeName"] == "n1"


# ----- errors and ignorable ----------------------------------------------------------------------------
def test_error_from_an_extender_fails_the_attempt() -> None:
    with running({"filter": lambda body: (500, {})}) as ext:
        cfg = config({"urlPrefix": ext.url, "filterVerb": "filter"})
        sim, pods = run(cfg, [*nodes("n1", "n2"), make_pod("p").obj()])
    assert pods["p"]["spec"].get("nodeName") is None
    assert condition(pods["p"]) == (
        "SchedulerError",
        f"failed filter with extender at URL {ext.url}/filter, code 500",
    )
    assert sim.scheduler.stats.errors >= 1


def test_error_from_an_ignorable_extender_is_skipped() -> None:
    with running({"filter": lambda body: (500, {})}) as broken, running({"filter": keep("n1")}) as good:
        cfg = config(
            {"urlPrefix": broken.url, "filterVerb": "filter", "ignorable": True},
            {"urlPrefix": good.url, "filterVerb": "filter"},
        )
        _, pods = run(cfg, [*nodes("n1", "n2"), make_pod("p").obj()])
        # the ignorable extender is called after the others, as kube orders them
        assert good.calls and broken.calls
    assert pods["p"]["spec"]["nodeName"] == "n1"


def test_unreachable_ignorable_extender_is_skipped() -> None:
    with running({}) as ext:
        url = ext.url
    cfg = config({"urlPrefix": url, "filterVerb": "filter", "ignorable": True})
    _, pods = run(cfg, [*nodes("n1"), make_pod("p").obj()])
    assert pods["p"]["spec"]["nodeName"] == "n1"


def test_unreachable_extender_fails_the_attempt_with_the_post_error() -> None:
    with running({}) as ext:
        url = ext.url
    cfg = config({"urlPrefix": url, "filterVerb": "filter"})
    _, pods = run(cfg, [*nodes("n1"), make_pod("p").obj()])
    reason, message = condition(pods["p"])
    assert reason == "SchedulerError"
    assert message.startswith(f'Post "{url}/filter": ')


def test_http_timeout_is_the_extenders() -> None:
    def slow(body: dict[str, Any]) -> tuple[int, Any]:
        time.sleep(0.5)
        return 200, {"NodeNames": ["n1"]}

    with running({"filter": slow}) as ext:
        cfg = config({"urlPrefix": ext.url, "filterVerb": "filter", "httpTimeout": "50ms"})
        _, pods = run(cfg, [*nodes("n1"), make_pod("p").obj()])
    assert condition(pods["p"])[1] == (
        f'Post "{ext.url}/filter": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    )


# ----- managed resources -------------------------------------------------------------------------------
def test_extender_is_consulted_only_for_pods_using_its_resources() -> None:
    with running({"filter": keep("n2")}) as ext:
        cfg = config(
            {
                "urlPrefix": ext.url,
                "filterVerb": "filter",
                "managedResources": [{"name": GPU, "ignoredByScheduler": True}],
            }
        )
        docs = [
            *nodes("n1", "n2"),
            make_pod("plain").req(cpu="1").obj(),
            make_pod("gpu").req(cpu="1").lim(**{GPU: "1"}).obj(),
        ]
        _, pods = run(cfg, docs)
    assert [b["Pod"]["metadata"]["name"] for b in ext.bodies("filter")] == ["gpu"]
    # nodes report no example.com/gpu: NodeResourcesFit ignores it (ignoredByScheduler)
    assert pods["gpu"]["spec"]["nodeName"] == "n2"
    assert pods["plain"]["spec"]["nodeName"] in ("n1", "n2")


def test_init_container_requests_count_for_interest() -> None:
    with running({"filter": keep("n1")}) as ext:
        cfg = config(
            {
                "urlPrefix": ext.url,
                "filterVerb": "filter",
                "managedResources": [{"name": GPU, "ignoredByScheduler": True}],
            }
        )
        pod = make_pod("p").req(cpu="1").init_container("init", image="busybox", **{GPU: "1"}).obj()
        _, pods = run(cfg, [*nodes("n1", "n2"), pod])
    assert len(ext.bodies("filter")) == 1
    assert pods["p"]["spec"]["nodeName"] == "n1"


def test_managed_resource_not_ignored_still_needs_node_capacity() -> None:
    with running({"filter": keep("n1", "n2")}) as ext:
        cfg = config({"urlPrefix": ext.url, "filterVerb": "filter", "managedResources": [{"name": GPU}]})
        _, pods = run(cfg, [*nodes("n1", "n2"), make_pod("p").req(**{GPU: "1"}).obj()])
    assert condition(pods["p"])[1].startswith("0/2 nodes are available: 2 Insufficient example.com/gpu.")
    assert ext.calls == []


# ----- prioritize --------------------------------------------------------------------------------------
def test_extender_scores_change_the_choice() -> None:
    scores = {"n1": 0, "n2": 0, "n3": 10}
    with running(
        {"prioritize": lambda body: (200, [{"Host": h, "Score": s} for h, s in scores.items()])}
    ) as ext:
        cfg = config({"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 1})
        docs = [*nodes("n1", "n2", "n3"), *[make_pod(f"p{i}").req(cpu="1").obj() for i in range(3)]]
        _, pods = run(cfg, docs)
    # +100 on n3 outweighs LeastAllocated spreading for all three pods
    assert {p["spec"]["nodeName"] for p in pods.values()} == {"n3"}
    assert sorted(ext.bodies("prioritize")[0]) == ["NodeNames", "Nodes", "Pod"]


def test_prioritize_errors_are_ignored() -> None:
    with running({"prioritize": lambda body: (500, {})}) as ext:
        cfg = config({"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 5})
        _, pods = run(cfg, [*nodes("n1", "n2"), make_pod("p").obj()])
    assert pods["p"]["spec"]["nodeName"] in ("n1", "n2")
    assert ext.verbs() == ["prioritize"]


def test_one_feasible_node_is_not_prioritized() -> None:
    with running({"prioritize": lambda body: (200, [])}) as ext:
        cfg = config({"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 1})
        _, pods = run(cfg, [*nodes("n1"), make_pod("p").obj()])
    assert pods["p"]["spec"]["nodeName"] == "n1"
    assert ext.calls == []


# ----- bind --------------------------------------------------------------------------------------------
def test_bind_verb_replaces_the_default_binder() -> None:
    sim_box: list[Simulation] = []

    def bind(body: dict[str, Any]) -> tuple[int, Any]:
        sim_box[0].store.bind(body["PodNamespace"], body["PodName"], body["Node"], uid=body["PodUID"])
        return 200, {"Error": ""}

    with running({"bind": bind}) as ext:
        sim = Simulation(config=config({"urlPrefix": ext.url, "bindVerb": "bind"}))
        sim_box.append(sim)
        pod = make_pod("p").uid("uid-p").obj()
        sim.run_manifests([Manifest(d, "t") for d in [*nodes("n1"), pod]], until=5.0)
    (body,) = ext.bodies("bind")
    assert body == {"PodName": "p", "PodNamespace": "default", "PodUID": "uid-p", "Node": "n1"}
    bound = next(o for o in sim.objects() if o["kind"] == "Pod")
    assert bound["spec"]["nodeName"] == "n1"


def test_bind_answer_error_fails_the_attempt() -> None:
    with running({"bind": lambda body: (200, {"Error": "node n1 is draining"})}) as ext:
        cfg = config({"urlPrefix": ext.url, "bindVerb": "bind"})
        _, pods = run(cfg, [*nodes("n1"), make_pod("p").obj()])
    assert pods["p"]["spec"].get("nodeName") is None
    assert condition(pods["p"]) == ("SchedulerError", "node n1 is draining")


def test_ignorable_binder_error_falls_back_to_the_default_binder() -> None:
    with running({"bind": lambda body: (503, {})}) as ext:
        cfg = config({"urlPrefix": ext.url, "bindVerb": "bind", "ignorable": True})
        _, pods = run(cfg, [*nodes("n1"), make_pod("p").obj()])
    assert ext.verbs() == ["bind"]
    assert pods["p"]["spec"]["nodeName"] == "n1"


def test_binder_not_interested_leaves_binding_to_the_default_binder() -> None:
    with running({"bind": lambda body: (500, {})}) as ext:
        cfg = config({"urlPrefix": ext.url, "bindVerb": "bind", "managedResources": [{"name": GPU}]})
        _, pods = run(cfg, [*nodes("n1"), make_pod("p").obj()])
    assert ext.calls == []
    assert pods["p"]["spec"]["nodeName"] == "n1"


def test_no_extenders_by_default() -> None:
    sim = Simulation()
    assert not sim.scheduler.extenders
    assert sim.scheduler.scheduling.extenders.for_pod(make_pod("p").info()) == ()


# ----- preempt -----------------------------------------------------------------------------------------
def priority_class(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def preemption_docs() -> list[dict[str, Any]]:
    return [
        priority_class("high", 1000),
        *nodes("n1", "n2", cpu="1"),
        make_pod("l1").uid("uid-l1").req(cpu="1").node("n1").grace(0).obj(),
        make_pod("l2").uid("uid-l2").req(cpu="1").node("n2").grace(0).obj(),
        make_pod("high").req(cpu="1").priority_class("high").obj(),
    ]


@pytest.mark.parametrize("node_cache_capable", [False, True])
def test_preempt_verb_chooses_the_candidates_and_victims(node_cache_capable: bool) -> None:
    answer = {"NodeNameToMetaVictims": {"n2": {"Pods": [{"UID": "uid-l2"}], "NumPDBViolations": 0}}}
    with running({"preempt": lambda body: (200, answer)}) as ext:
        cfg = config({"urlPrefix": ext.url, "preemptVerb": "preempt", "nodeCacheCapable": node_cache_capable})
        _, pods = run(cfg, preemption_docs())
    (body,) = ext.bodies("preempt")
    assert body["Pod"]["metadata"]["name"] == "high"
    if node_cache_capable:
        assert body["NodeNameToVictims"] is None
        assert body["NodeNameToMetaVictims"] == {
            "n1": {"Pods": [{"UID": "uid-l1"}], "NumPDBViolations": 0},
            "n2": {"Pods": [{"UID": "uid-l2"}], "NumPDBViolations": 0},
        }
    else:
        assert body["NodeNameToMetaVictims"] is None
        sent = {n: [p["metadata"]["name"] for p in v["Pods"]] for n, v in body["NodeNameToVictims"].items()}
        assert sent == {"n1": ["l1"], "n2": ["l2"]}
    assert "l2" not in pods
    assert pods["l1"]["spec"]["nodeName"] == "n1"
    assert pods["high"]["spec"]["nodeName"] == "n2"


def test_preempt_verb_keeping_no_candidate_prevents_preemption() -> None:
    with running({"preempt": lambda body: (200, {"NodeNameToMetaVictims": {}})}) as ext:
        cfg = config({"urlPrefix": ext.url, "preemptVerb": "preempt"})
        _, pods = run(cfg, preemption_docs())
    assert set(pods) == {"l1", "l2", "high"}
    assert condition(pods["high"]) == (
        "Unschedulable",
        "0/2 nodes are available: 2 Insufficient cpu. preemption: no candidate node for preemption.",
    )


def test_preempt_verb_naming_a_pod_not_on_the_node_is_an_error() -> None:
    answer = {"NodeNameToMetaVictims": {"n2": {"Pods": [{"UID": "uid-l1"}], "NumPDBViolations": 0}}}
    with running({"preempt": lambda body: (200, answer)}) as ext:
        cfg = config({"urlPrefix": ext.url, "preemptVerb": "preempt"})
        _, pods = run(cfg, preemption_docs())
    assert set(pods) == {"l1", "l2", "high"}
    # (kube reports a PostFilter error inside the FitError; Berth's runtime fails the attempt with it)
    assert (
        f"preemption: extender: {ext.url} claims to preempt pod (UID: &{{uid-l1}}) on node: n2, but the pod "
        "is not found on that node"
    ) in condition(pods["high"])[1]


def test_explain_trace_shows_the_extenders_verdicts() -> None:
    with running({"filter": keep("n2")}) as ext:
        sim = Simulation(
            config=config({"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True})
        )
        sim.scheduler.tracer = Tracer(lambda pod: pod.name == "p")
        sim.run_manifests([Manifest(d, "t") for d in [*nodes("n1", "n2"), make_pod("p").obj()]], until=5.0)
    (trace,) = sim.scheduler.tracer.of("default/p")
    assert trace.filter_plugins[-1] == "Extender"
    assert {n: v["Extender"] for n, v in trace.filter.items()} == {"n1": "no free gpu", "n2": "passed"}
    assert trace.selected == "n2"
