"""The initial objects: read first, created before anything runs, every refusal reported (issue 15 §2)."""

from __future__ import annotations

from typing import Any

from berth.api.manifest import Manifest, load_manifests
from berth.sim.engine import Simulation
from berth.sim.initial import create_initial_objects
from berth.sim.scenario import Plan, Step, build_plan
from builders import make_node, make_pod


def _pc(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def _scenario(*steps: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "s"},
        "spec": {"steps": list(steps)},
    }


def _names(sim: Simulation, kind: str) -> list[str]:
    return [o["metadata"]["name"] for o in sim.objects() if o["kind"] == kind]


def test_plain_objects_come_first_as_the_initial_step_with_their_sources() -> None:
    node, pod = make_node("n").obj(), make_pod("p").obj()
    early = make_pod("early").obj()
    plan = build_plan(
        [
            Manifest(_scenario({"at": "0s", "create": [early]}, {"at": "1m", "cordon": "n"}), "s.yaml#0"),
            Manifest(node, "a.yaml#0"),
            Manifest(pod, "b.yaml"),
        ]
    )
    assert [(s.at, s.initial, s.create, s.sources) for s in plan.steps] == [
        (0.0, True, [node, pod], ["a.yaml#0", "b.yaml"]),
        (0.0, False, [early], []),
        (60.0, False, [], []),
    ]
    assert plan.initial is plan.steps[0]


def test_a_plan_of_scenario_steps_only_has_no_initial_step() -> None:
    plan = build_plan([Manifest(_scenario({"at": "0s", "create": [make_node("n").obj()]}), "s.yaml")])
    assert plan.initial is None
    assert Plan([Step(0.0, [make_node("n").obj()])]).initial is None


def test_every_refusal_is_reported_in_read_order() -> None:
    sim = Simulation()
    objs = [
        make_node("n").obj(),
        make_pod("web-1").priority_class("high").obj(),  # refused: "high" comes later
        _pc("high", 1000),
        make_pod("web-2").priority_class("high").obj(),
        make_pod("web-3").priority(7).obj(),
        make_node("n").obj(),
        make_pod("web-4").priority_class("low").obj(),
    ]
    sources = [f"in.yaml#{i}" for i in range(len(objs))]
    refused, rest = create_initial_objects(sim.store, Plan([Step(0.0, objs, initial=True, sources=sources)]))
    assert refused == [
        'Error from server (Forbidden): error when creating "in.yaml#1": pods "web-1" is forbidden: '
        "no PriorityClass with name high was found",
        'Error from server (Forbidden): error when creating "in.yaml#4": pods "web-3" is forbidden: '
        "the integer value of priority (7) must not be provided in pod spec; priority admission controller "
        "computed 0 from the given PriorityClass name",
        'Error from server (AlreadyExists): error when creating "in.yaml#5": nodes "n" already exists',
        'Error from server (Forbidden): error when creating "in.yaml#6": pods "web-4" is forbidden: '
        "no PriorityClass with name low was found",
    ]
    assert rest.steps == []
    assert _names(sim, "Pod") == ["web-2"]
    assert sim.clock.now() == 0.0
    assert sim.scheduler.stats.attempts == 0


def test_admitted_initial_objects_are_created_and_the_run_goes_on_without_them() -> None:
    sim = Simulation()
    later = Step(30.0, [make_pod("later").req(cpu="1").obj()])
    plan = Plan(
        [
            Step(
                0.0,
                [_pc("high", 1000), make_node("n").capacity(cpu="2").obj()],
                initial=True,
                sources=["a", "b"],
            ),
            Step(0.0, [make_pod("now").priority_class("high").req(cpu="1").obj()]),
            later,
        ],
        until=60.0,
    )
    refused, rest = create_initial_objects(sim.store, plan)
    assert (refused, rest.steps, rest.until) == ([], plan.steps[1:], 60.0)
    assert _names(sim, "Node") == ["n"]
    assert _names(sim, "Pod") == []  # steps have not run
    sim.run(rest)
    pods = {
        o["metadata"]["name"]: (o["spec"]["priority"], o["spec"].get("nodeName"))
        for o in sim.objects()
        if o["kind"] == "Pod"
    }
    assert pods == {"now": (1000, "n"), "later": (0, "n")}
    assert sim.step_errors == []


def test_a_refused_step_object_is_reported_by_the_run_which_goes_on() -> None:
    sim = Simulation()
    plan = build_plan(
        [
            Manifest(make_node("n").obj(), "a.yaml"),
            Manifest(
                _scenario(
                    {"at": "10s", "create": [make_pod("bad").priority_class("nope").obj()]},
                    {"at": "20s", "create": [make_pod("good").obj()]},
                ),
                "s.yaml",
            ),
        ]
    )
    refused, rest = create_initial_objects(sim.store, plan)
    assert refused == []
    sim.run(rest, until=30.0)
    assert sim.step_errors == [
        'at 10s: Error from server (Forbidden): pods "bad" is forbidden: no PriorityClass with name nope was found'
    ]
    assert _names(sim, "Pod") == ["good"]


def test_a_plan_without_initial_objects_is_returned_unchanged() -> None:
    sim = Simulation()
    plan = Plan([Step(5.0, [make_node("n").obj()])])
    assert create_initial_objects(sim.store, plan) == ([], plan)


def test_a_second_global_default_class_at_time_zero_is_refused() -> None:
    sim = Simulation()
    first, second = _pc("first", 10), _pc("second", 20)
    first["globalDefault"] = second["globalDefault"] = True
    plan = build_plan([Manifest(first, "classes.yaml#0"), Manifest(second, "classes.yaml#1")])
    refused, _ = create_initial_objects(sim.store, plan)
    assert refused == [
        'Error from server (Forbidden): error when creating "classes.yaml#1": priorityclasses.scheduling.k8s.io '
        '"second" is forbidden: PriorityClass first is already marked as default. Only one default can exist'
    ]


def test_initial_pods_and_nodes_are_not_validated_again_other_kinds_are(monkeypatch: Any) -> None:
    sim = Simulation()
    validated: list[str] = []
    check = sim.store._check_valid
    monkeypatch.setattr(
        sim.store, "_check_valid", lambda info, obj: (validated.append(obj["kind"]), check(info, obj))
    )
    objs = [_pc("high", 10), make_node("n").obj(), make_pod("p").obj()]
    refused, _ = create_initial_objects(sim.store, build_plan([Manifest(o, "a.yaml") for o in objs]))
    assert refused == []
    assert validated == ["PriorityClass", "Namespace"]  # the pod's namespace, created by admission
    assert _names(sim, "Pod") == ["p"] and _names(sim, "Node") == ["n"]


def test_what_pod_admission_fills_in_passes_validation() -> None:
    # ADMITTED_AS_VALIDATED holds while admission only fills in values validation accepts: a pod with the
    # defaults and priority of a globalDefault PriorityClass (preemptionPolicy Never), or of a named one
    from berth.api.validation import validate_object

    sim = Simulation()
    default = {**_pc("low", -5), "globalDefault": True, "preemptionPolicy": "Never"}
    sim.store.create(default)
    sim.store.create(_pc("high", 1000))
    for pod in (make_pod("a").obj(), make_pod("b").obj()):
        if pod["metadata"]["name"] == "b":
            pod["spec"]["priorityClassName"] = "high"
        stored = sim.store.create(pod, validated=True)
        validate_object(stored)
        assert stored["spec"]["priority"] in (-5, 1000)


ALIASED = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n}
  status: {allocatable: {cpu: "4", memory: 4Gi, pods: "10"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: a}
  spec: &spec
    containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: b}
  spec: *spec
"""


def test_manifests_of_a_file_that_may_hold_an_alias_may_share_and_the_others_do_not(tmp_path: Any) -> None:
    aliased, plain, listed = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "c.json"
    aliased.write_text(ALIASED)
    plain.write_text(
        ALIASED.replace("spec: &spec", "spec:").replace("spec: *spec", "spec: {containers: [{name: c}]}")
    )
    listed.write_text('{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "m"}}')
    loaded = load_manifests([str(aliased), str(plain), str(listed)])
    assert [(m.source, m.shares) for m in loaded] == [
        (f"{aliased} items[0]", True),
        (f"{aliased} items[1]", True),
        (f"{aliased} items[2]", True),
        (f"{plain} items[0]", False),
        (f"{plain} items[1]", False),
        (f"{plain} items[2]", False),
        (str(listed), False),
    ]
    assert loaded[1].obj["spec"] is loaded[2].obj["spec"]  # what an alias makes
    assert build_plan(loaded[3:]).steps[0].unshared
    assert not build_plan(loaded).steps[0].unshared


def test_handed_over_initial_objects_are_kept_by_the_store_unless_they_may_share(tmp_path: Any) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(ALIASED)
    for text, kept in ((ALIASED, False), (ALIASED.replace("spec: &spec", "spec:"), None)):
        if kept is None:  # without the alias the second pod needs a spec of its own
            text = text.replace("spec: *spec", "spec: {containers: [{name: c, image: busybox}]}")
            kept = True
        path.write_text(text)
        plan = build_plan(load_manifests([str(path)]))
        sim = Simulation()
        refused, _ = create_initial_objects(sim.store, plan, hand_over=True)
        assert refused == []
        pod_a = sim.store.get(("", "Pod"), "default", "a")
        assert (pod_a is plan.steps[0].create[1]) is kept
        assert pod_a["spec"]["priority"] == 0 and pod_a["metadata"]["namespace"] == "default"
        sim2 = Simulation()
        create_initial_objects(sim2.store, build_plan(load_manifests([str(path)])))
        assert sim2.store.get(("", "Pod"), "default", "a") == pod_a  # the same object as a copy would be
