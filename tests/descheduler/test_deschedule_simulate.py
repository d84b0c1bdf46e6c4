"""``berth simulate --descheduler-policy``: the example balanced by LowNodeUtilization (final placement and
the descheduler's Events), ``--descheduling-interval`` deciding when cycles run, given uids kept (owner
references by uid), and the bad input that exits 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from berth.cli import app
from builders import make_node, make_pod

Obj = dict[str, Any]

EXAMPLE = Path(__file__).parents[2] / "examples" / "descheduler"
CLUSTER = EXAMPLE / "01-cluster.yaml"
SCALE_OUT = EXAMPLE / "02-scale-out.yaml"
POLICY = EXAMPLE / "policy.yaml"
COMPONENT = "sigs.k8s.io/descheduler"


@dataclass
class Run:
    """The outcome of one ``berth simulate``."""

    exit_code: int
    stdout: str
    stderr: str

    def objects(self) -> list[Obj]:
        """The final objects of a successful ``-o json`` run."""
        assert (self.exit_code, self.stderr) == (0, ""), self.stderr
        doc = json.loads(self.stdout)
        assert doc["kind"] == "List"
        return list(doc["items"])

    def of(self, kind: str) -> list[Obj]:
        """The final objects of one kind."""
        return [o for o in self.objects() if o["kind"] == kind]

    def placement(self) -> dict[str, str | None]:
        """Pod name -> node name."""
        return {p["metadata"]["name"]: p["spec"].get("nodeName") for p in self.of("Pod")}

    def descheduled(self) -> list[Obj]:
        """The descheduler's Events, in time order (then by pod name)."""
        events = [e for e in self.of("Event") if e.get("action") == "Descheduled"]
        return sorted(events, key=lambda e: (e["lastTimestamp"], e["involvedObject"]["name"]))


def simulate(*argv: str) -> Run:
    """``berth simulate ARGV... -o json`` in-process."""
    result = CliRunner().invoke(app, ["simulate", *argv, "-o", "json"])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def example(*args: str) -> Run:
    """The example's two files with its policy."""
    return simulate(str(CLUSTER), str(SCALE_OUT), "--descheduler-policy", str(POLICY), *args)


def descheduled_event(pod: str, uid: str, node: str, plugin: str, at: str) -> Obj:
    """The Event the descheduler records for an eviction, as the store writes it (metadata aside)."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": pod,
            "uid": uid,
            "namespace": "default",
        },
        "reason": plugin,
        "message": f"pod eviction from {node} node by {COMPONENT}",
        "type": "Normal",
        "source": {"component": COMPONENT},
        "firstTimestamp": at,
        "lastTimestamp": at,
        "count": 1,
        "action": "Descheduled",
        "reportingComponent": COMPONENT,
        "reportingInstance": COMPONENT,
    }


def _scheduled_uid(run: Run, pod: str) -> str:
    """The uid of `pod` as its Scheduled Event names it (the pod itself may be gone)."""
    (event,) = [
        e for e in run.of("Event") if e["reason"] == "Scheduled" and e["involvedObject"]["name"] == pod
    ]
    return str(event["involvedObject"]["uid"])


def _without_metadata(event: Obj) -> Obj:
    return {k: v for k, v in event.items() if k != "metadata"}


# --- the example --------------------------------------------------------------------------------------------


def test_example_final_placement() -> None:
    run = example()
    # before the 5m cycle node-1 and node-2 held four pods each; one of each moved to the new nodes
    assert run.placement() == {
        "web-74886fcc66-bqdcf": "node-1",
        "web-74886fcc66-wbzg9": "node-1",
        "web-74886fcc66-zx5kv": "node-1",
        "web-74886fcc66-cb76t": "node-2",
        "web-74886fcc66-vfhxc": "node-2",
        "web-74886fcc66-zv9ng": "node-2",
        "web-74886fcc66-p28hx": "node-3",
        "web-74886fcc66-gdkg4": "node-4",
    }
    assert {p["metadata"]["name"]: p["status"]["phase"] for p in run.of("Pod")} == dict.fromkeys(
        run.placement(), "Running"
    )
    assert {p["metadata"]["name"]: p["metadata"]["creationTimestamp"] for p in run.of("Pod")} == {
        **dict.fromkeys(run.placement(), "2024-01-01T00:00:00Z"),
        "web-74886fcc66-p28hx": "2024-01-01T00:05:00Z",
        "web-74886fcc66-gdkg4": "2024-01-01T00:05:00Z",
    }


def test_example_descheduled_events() -> None:
    run = example()
    events = run.descheduled()
    assert [_without_metadata(e) for e in events] == [
        descheduled_event(
            "web-74886fcc66-5wxqf",
            _scheduled_uid(run, "web-74886fcc66-5wxqf"),
            "node-2",
            "LowNodeUtilization",
            "2024-01-01T00:05:00Z",
        ),
        descheduled_event(
            "web-74886fcc66-9xvvz",
            _scheduled_uid(run, "web-74886fcc66-9xvvz"),
            "node-1",
            "LowNodeUtilization",
            "2024-01-01T00:05:00Z",
        ),
    ]
    assert [(e["metadata"]["namespace"], e["metadata"]["creationTimestamp"]) for e in events] == [
        ("default", "2024-01-01T00:05:00Z"),
        ("default", "2024-01-01T00:05:00Z"),
    ]
    # the replacements were created and placed in the same instant as the evictions
    created = sorted(
        e["message"]
        for e in run.of("Event")
        if e["reason"] == "SuccessfulCreate" and e["lastTimestamp"] == "2024-01-01T00:05:00Z"
    )
    assert created == ["Created pod: web-74886fcc66-gdkg4", "Created pod: web-74886fcc66-p28hx"]


def test_without_a_policy_nothing_moves() -> None:
    run = simulate(str(CLUSTER), str(SCALE_OUT))
    assert sorted(run.placement().values()) == ["node-1"] * 4 + ["node-2"] * 4
    assert run.descheduled() == []


def test_the_same_seed_gives_the_same_run() -> None:
    assert example().stdout == example().stdout


# --- the interval -------------------------------------------------------------------------------------------


def test_a_one_minute_interval_balances_when_the_nodes_join() -> None:
    # the nodes join at 1m; the 1m cycle runs after that step and moves the same two pods
    run = example("--descheduling-interval", "1m")
    assert [(e["involvedObject"]["name"], e["message"], e["lastTimestamp"]) for e in run.descheduled()] == [
        (
            "web-74886fcc66-5wxqf",
            "pod eviction from node-2 node by sigs.k8s.io/descheduler",
            "2024-01-01T00:01:00Z",
        ),
        (
            "web-74886fcc66-9xvvz",
            "pod eviction from node-1 node by sigs.k8s.io/descheduler",
            "2024-01-01T00:01:00Z",
        ),
    ]
    assert sorted(run.placement().values()) == ["node-1"] * 3 + ["node-2"] * 3 + ["node-3", "node-4"]


def test_an_interval_longer_than_the_run_never_deschedules() -> None:
    # the Scenario ends at 12m: no cycle at 15m
    run = example("--descheduling-interval", "15m")
    assert run.descheduled() == []
    assert sorted(run.placement().values()) == ["node-1"] * 4 + ["node-2"] * 4


LIFETIME_30S: Obj = {
    "apiVersion": "descheduler/v1alpha2",
    "kind": "DeschedulerPolicy",
    "profiles": [
        {
            "name": "lifetime",
            "pluginConfig": [{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 30}}],
            "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}},
        }
    ],
}


def _one_replica(tmp_path: Path) -> tuple[Path, Path]:
    """One Deployment replica on two nodes, and a policy evicting every pod older than 30s."""
    deployment: Obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "app", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "app"}},
            "template": {
                "metadata": {"labels": {"app": "app"}},
                "spec": {
                    "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]
                },
            },
        },
    }
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(yaml.safe_dump_all([make_node("a").obj(), make_node("b").obj(), deployment]))
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump(LIFETIME_30S))
    return cluster, policy


@pytest.mark.parametrize(
    ("interval", "cycles"),
    [
        # every cycle finds the replica older than 30s and evicts it; the replacement is created at once
        ("1m", ["00:01:00", "00:02:00", "00:03:00", "00:04:00"]),
        ("2m", ["00:02:00", "00:04:00"]),
        ("90s", ["00:01:30", "00:03:00", "00:04:30"]),  # a cycle at the last instant too
        (None, []),  # the default, 5m: no cycle before 4m30s
    ],
)
def test_cycles_run_at_every_interval(tmp_path: Path, interval: str | None, cycles: list[str]) -> None:
    cluster, policy = _one_replica(tmp_path)
    args = [str(cluster), "--descheduler-policy", str(policy), "--until", "4m30s"]
    if interval is not None:
        args += ["--descheduling-interval", interval]
    run = simulate(*args)
    events = run.descheduled()
    assert [e["lastTimestamp"] for e in events] == [f"2024-01-01T{t}Z" for t in cycles]
    assert {e["reason"] for e in events} <= {"PodLifeTime"}
    # one eviction per cycle, each of the replacement the cycle before created
    assert len({e["involvedObject"]["uid"] for e in events}) == len(cycles)
    # one live replica at the end (an evicted one may still be terminating)
    assert len([p for p in run.of("Pod") if "deletionTimestamp" not in p["metadata"]]) == 1


def test_the_default_interval_is_five_minutes(tmp_path: Path) -> None:
    cluster, policy = _one_replica(tmp_path)
    run = simulate(str(cluster), "--descheduler-policy", str(policy), "--until", "11m")
    assert [e["lastTimestamp"] for e in run.descheduled()] == [
        "2024-01-01T00:05:00Z",
        "2024-01-01T00:10:00Z",
    ]


@pytest.mark.parametrize(
    ("interval", "message"),
    [
        ("0s", 'must be positive, not "0s"'),
        ("-1m", 'must be positive, not "-1m"'),
        ("90", 'invalid duration "90"'),  # a Go duration needs its unit
        ("soon", 'invalid duration "soon"'),
        ("", 'invalid duration ""'),
    ],
)
def test_a_bad_interval_exits_2(interval: str, message: str) -> None:
    run = example(f"--descheduling-interval={interval}")
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == f"error: --descheduling-interval: {message}\n"


def test_a_bad_policy_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "policy.yaml"
    bad.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "descheduler/v1alpha2",
                "kind": "DeschedulerPolicy",
                "profiles": [
                    {
                        "name": "balance",
                        "pluginConfig": [
                            {
                                "name": "LowNodeUtilization",
                                "args": {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 101}},
                            }
                        ],
                        "plugins": {"balance": {"enabled": ["LowNodeUtilization"]}},
                    }
                ],
            }
        )
    )
    run = simulate(str(CLUSTER), "--descheduler-policy", str(bad))
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == (
        f'error: {bad}: profile "balance": plugin "LowNodeUtilization": args.targetThresholds.cpu: '
        "101 is out of range 0-100\n"
    )
    missing = simulate(str(CLUSTER), "--descheduler-policy", str(tmp_path / "none.yaml"))
    assert (missing.exit_code, missing.stdout) == (2, "")
    assert missing.stderr == (
        f"error: {tmp_path / 'none.yaml'}: cannot read the descheduler policy: No such file or directory\n"
    )


def test_a_profile_naming_no_priority_class_is_skipped_each_cycle_as_upstream(tmp_path: Path) -> None:
    # the class is looked up when a cycle builds the profile: the running descheduler logs "unable to create a
    # profile" and skips it for that cycle (a later step may create the class); simulate reports it on stderr
    cluster, _ = _one_replica(tmp_path)
    policy = json.loads(json.dumps(LIFETIME_30S))
    policy["profiles"][0]["pluginConfig"].insert(
        0, {"name": "DefaultEvictor", "args": {"priorityThreshold": {"name": "no-such-class"}}}
    )
    path = tmp_path / "threshold.yaml"
    path.write_text(yaml.safe_dump(policy))
    run = simulate(
        str(cluster), "--descheduler-policy", str(path), "--descheduling-interval", "1m", "--until", "2m"
    )
    assert run.exit_code == 0
    why = (
        f'{path}: unable to create a profile: profile "lifetime": plugin "DefaultEvictor": '
        "args.priorityThreshold.name: unable to get priority value from the priority class: "
        'priorityclasses.scheduling.k8s.io "no-such-class" not found'
    )
    assert run.stderr == f"at 60s: {why}\nat 120s: {why}\n"
    assert "LifeTime" not in run.stdout  # no eviction happened


# --- given uids ---------------------------------------------------------------------------------------------

RS_UID = "0b9f3c1e-5a3d-4d8e-9a51-3c2f6f0e7a01"
POD_UID = "7d0c2b4a-1111-4c4c-8d8d-000000000001"


def _replica_set(replicas: int) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web", "namespace": "default", "uid": RS_UID},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]
                },
            },
        },
    }


def _given_pod() -> Obj:
    return (
        make_pod("web-given")
        .uid(POD_UID)
        .label(app="web")
        .req(cpu="1")
        .owner("ReplicaSet", "web", RS_UID)
        .created("2023-06-01T00:00:00Z")
        .obj()
    )


@pytest.fixture
def write(tmp_path: Path) -> Callable[[list[Obj]], Path]:
    def put(docs: list[Obj]) -> Path:
        path = tmp_path / "input.yaml"
        path.write_text(yaml.safe_dump_all(docs))
        return path

    return put


def test_given_uids_are_kept_and_owner_references_by_uid_link(write: Callable[[list[Obj]], Path]) -> None:
    node = make_node("a").obj()
    node["metadata"]["uid"] = "node-a-uid"
    run = simulate(str(write([node, _replica_set(2), _given_pod()])), "--until", "1m")
    (rs,) = run.of("ReplicaSet")
    assert rs["metadata"]["uid"] == RS_UID
    assert rs["status"]["replicas"] == 2
    pods = {p["metadata"]["name"]: p for p in run.of("Pod")}
    # the ReplicaSet counts the given pod as its own: it creates one pod, not two
    assert sorted(pods) == ["web-cb76t", "web-given"]
    given = pods["web-given"]
    assert given["metadata"]["uid"] == POD_UID
    assert given["metadata"]["creationTimestamp"] == "2023-06-01T00:00:00Z"
    assert given["spec"]["nodeName"] == "a"
    for pod in pods.values():
        assert [(r["kind"], r["name"], r["uid"]) for r in pod["metadata"]["ownerReferences"]] == [
            ("ReplicaSet", "web", RS_UID)
        ]
    (stored_node,) = run.of("Node")
    assert stored_node["metadata"]["uid"] == "node-a-uid"
    # a generated uid is never a given one
    uids = [o["metadata"]["uid"] for o in run.objects()]
    assert len(uids) == len(set(uids))


def test_an_owner_reference_by_uid_is_what_the_descheduler_evicts_for(
    write: Callable[[list[Obj]], Path], tmp_path: Path
) -> None:
    # the given pod is old (created 2023): PodLifeTime evicts it at 1m, its ReplicaSet replaces it
    policy = tmp_path / "policy.yaml"
    lifetime = json.loads(json.dumps(LIFETIME_30S))
    lifetime["profiles"][0]["pluginConfig"][0]["args"]["maxPodLifeTimeSeconds"] = 3600
    policy.write_text(yaml.safe_dump(lifetime))
    docs = [make_node("a").obj(), make_node("b").obj(), _replica_set(1), _given_pod()]
    run = simulate(
        str(write(docs)),
        "--descheduler-policy",
        str(policy),
        "--descheduling-interval",
        "1m",
        "--until",
        "2m30s",
    )
    assert [
        (e["involvedObject"]["name"], e["involvedObject"]["uid"], e["lastTimestamp"])
        for e in run.descheduled()
    ] == [("web-given", POD_UID, "2024-01-01T00:01:00Z")]
    (pod,) = run.of("Pod")
    assert pod["metadata"]["name"] != "web-given"
    assert [r["uid"] for r in pod["metadata"]["ownerReferences"]] == [RS_UID]
    assert pod["metadata"]["creationTimestamp"] == "2024-01-01T00:01:00Z"


def test_a_duplicate_uid_exits_2(write: Callable[[list[Obj]], Path]) -> None:
    twin = _given_pod()
    twin["metadata"]["name"] = "web-twin"
    run = simulate(str(write([make_node("a").obj(), _given_pod(), twin])))
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == (
        f'error: Pod "web-twin": metadata.uid: Duplicate value: "{POD_UID}" (already the uid of Pod "web-given")\n'
    )


def test_a_duplicate_uid_in_a_later_step_exits_2(write: Callable[[list[Obj]], Path]) -> None:
    node = make_node("b").obj()
    node["metadata"]["uid"] = RS_UID
    scenario: Obj = {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "later"},
        "spec": {"steps": [{"at": "1m", "create": [node]}]},
    }
    run = simulate(str(write([make_node("a").obj(), _replica_set(1), scenario])))
    assert (run.exit_code, run.stdout) == (2, "")
    assert run.stderr == (
        f'error: Node "b": metadata.uid: Duplicate value: "{RS_UID}" (already the uid of ReplicaSet "web")\n'
    )
