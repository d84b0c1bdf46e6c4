"""The feature examples of examples/README.md (ElasticQuota, gangs, disruption, rate limit), each run as the
README shows it through the ``berth`` CLI, and the outcome each is there to show pinned.

The runs are deterministic (virtual clock, seed 0), so placements, messages and virtual timestamps are
exact. Virtual time 0 is 2024-01-01T00:00:00Z.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import Run
from typer.testing import CliRunner

from berth.cli import app

REPO = Path(__file__).resolve().parents[2]
T0 = "2024-01-01T00:00:"  # prefix of the virtual timestamps of the first minute

ELASTICQUOTA = "berth simulate examples/elasticquota/ --scheduler-config examples/elasticquota-scheduler-config.yaml -o wide"
GANG = "berth simulate examples/gang/ --scheduler-config examples/gang-scheduler-config.yaml --until 2m"
DISRUPTION = "berth simulate examples/disruption/ -o wide"
DISRUPTION_IN_PROGRESS = "berth simulate examples/disruption/ --until 2m15s"
RATE_LIMIT = "berth simulate examples/rate-limit/ -o yaml"

TUNE_FILTER_FAILURE = (
    "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption "
    "victims found for incoming pod."
)
BATCH_AFTER_DRAIN = (
    "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu. preemption: 0/3 nodes are "
    "available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
)
DRAIN_TIMEOUT_ERROR = (
    'error when evicting pods/"web-5d9b449ddb-zx5kv" -n "default": global timeout reached: 3m0s'
)
DRAIN_TIMEOUT = (
    f'at 240s: There are pending pods in node "node-1" when an error occurred: {DRAIN_TIMEOUT_ERROR}\n'
    "pod/web-5d9b449ddb-zx5kv (blocked: The disruption budget web-pdb allows 1 disruptions per 1h)\n"
    f'at 240s: error: unable to drain node "node-1" due to error: {DRAIN_TIMEOUT_ERROR}, '
    "continuing command...\n"
)


# ----- helpers --------------------------------------------------------------------------------------------
@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from the repository root, as the README's commands are written."""
    monkeypatch.chdir(REPO)


def berth(command: str, *extra: str) -> Run:
    """Run a ``berth ...`` command line in-process, with optional extra arguments appended."""
    argv = shlex.split(command)
    assert argv[0] == "berth"
    result = CliRunner().invoke(app, argv[1:] + list(extra))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def tables(stdout: str) -> list[list[dict[str, str]]]:
    """Parse kubectl-style tables (blocks separated by blank lines); a cell spans from its header's column
    to the next header's column, the last one to the end of the line."""
    out = []
    for block in stdout.strip("\n").split("\n\n"):
        header, *lines = block.splitlines()
        cols = [(m.start(), m.group()) for m in re.finditer(r"\S+(?: \S+)*", header)]
        rows = []
        for line in lines:
            row = {}
            for i, (start, name) in enumerate(cols):
                end = cols[i + 1][0] if i + 1 < len(cols) else len(line)
                row[name] = line[start:end].strip()
            rows.append(row)
        out.append(rows)
    return out


def table(stdout: str, *columns: str) -> list[dict[str, str]]:
    """The rows of the one table whose header starts with ``columns``."""
    found = [t for t in tables(stdout) if t and list(t[0])[: len(columns)] == list(columns)]
    assert len(found) == 1, f"{len(found)} tables with columns {columns}"
    return found[0]


def pods_of(items: list[dict[str, Any]], app_label: str | None = None) -> list[dict[str, Any]]:
    return [
        o
        for o in items
        if o["kind"] == "Pod"
        and (app_label is None or (o["metadata"].get("labels") or {}).get("app") == app_label)
    ]


def events(items: list[dict[str, Any]], reason: str) -> list[dict[str, Any]]:
    return [o for o in items if o["kind"] == "Event" and o["reason"] == reason]


def scheduled_node(items: list[dict[str, Any]], pod_name: str) -> str:
    """The node a pod was bound to, from its Scheduled event (the pod itself may be gone)."""
    (event,) = [e for e in events(items, "Scheduled") if e["involvedObject"]["name"] == pod_name]
    return str(event["message"].rsplit(" to ", 1)[1])


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in obj["status"].get("conditions") or [] if c["type"] == kind), None)


# ----- the commands tested are the documented ones -----------------------------------------------------------
@pytest.mark.parametrize(
    ("command", "documents"),
    [
        (ELASTICQUOTA, ["README.md", "examples/README.md", "docs/quotas-and-gangs.md"]),
        (GANG, ["README.md", "examples/README.md", "docs/quotas-and-gangs.md"]),
        (DISRUPTION, ["README.md", "examples/README.md", "docs/disruption.md"]),
        (DISRUPTION_IN_PROGRESS, ["docs/disruption.md"]),
        (RATE_LIMIT, ["README.md", "examples/README.md"]),
    ],
)
def test_the_tested_commands_are_the_documented_ones(command: str, documents: list[str]) -> None:
    for doc in documents:
        assert command in (REPO / doc).read_text(), f"{doc} does not show `{command}`"


# ----- ElasticQuota --------------------------------------------------------------------------------------------
@pytest.mark.usefixtures("in_repo")
def test_elasticquota_readme_command_team_b_reclaims_its_min() -> None:
    """team-b gets its min back at 1m: its two 4-CPU pods run on node-1, where team-a's borrowed pods were;
    team-a keeps two pods on node-2 and its two replacements stay Pending; both quotas end at used 8 CPU."""
    r = berth(ELASTICQUOTA)
    assert r.exit_code == 0, r.stderr
    placed = Counter(
        (p["NAMESPACE"], p["STATUS"], p["NODE"])
        for p in table(r.stdout, "NAMESPACE", "NAME", "READY", "STATUS")
    )
    assert placed == {
        ("team-a", "Running", "node-2"): 2,
        ("team-a", "Pending", "<none>"): 2,
        ("team-b", "Running", "node-1"): 2,
    }
    quotas = [
        (q["NAMESPACE"], q["NAME"], q["USED"], q["MAX"]) for q in table(r.stdout, "NAMESPACE", "NAME", "USED")
    ]
    assert quotas == [
        ("team-a", "team-a", '{"cpu":"8"}', '{"cpu":"16"}'),
        ("team-b", "team-b", '{"cpu":"8"}', '{"cpu":"16"}'),
    ]


@pytest.mark.usefixtures("in_repo")
def test_elasticquota_preemption_and_messages() -> None:
    """CapacityScheduling's PostFilter preempts exactly the two borrowed team-a pods of node-1, one for each
    team-b pod; the messages are scheduler-plugins' (``total ElasticQuota used is more than min`` for
    team-b, then ``more than Max`` / ``more than min`` for team-a's replacements)."""
    r = berth(ELASTICQUOTA, "-o", "json")
    assert r.exit_code == 0, r.stderr
    items = r.objects()
    by_uid = {p["metadata"]["uid"]: p["metadata"]["name"] for p in pods_of(items)}
    team_b = sorted(p["metadata"]["name"] for p in pods_of(items) if p["metadata"]["namespace"] == "team-b")
    team_a = [p for p in pods_of(items) if p["metadata"]["namespace"] == "team-a"]

    # the two victims: team-a pods bound to node-1 at 0s, gone at the end, one per team-b pod, at 1m
    preempted = events(items, "Preempted")
    victims = sorted(e["involvedObject"]["name"] for e in preempted)
    assert len(victims) == 2
    assert all(e["involvedObject"]["namespace"] == "team-a" for e in preempted)
    assert {scheduled_node(items, v) for v in victims} == {"node-1"}
    assert not set(victims) & {p["metadata"]["name"] for p in team_a}
    preemptors = []
    for e in preempted:
        m = re.fullmatch(r"Preempted by pod (\S+) on node node-1", e["message"])
        assert m is not None, e["message"]
        preemptors.append(by_uid[m.group(1)])
        assert e["firstTimestamp"] == "2024-01-01T00:01:00Z"
    assert sorted(preemptors) == team_b

    # team-b: refused at 1m by the min check, bound to node-1 once the victims are gone (30 s grace)
    for name in team_b:
        got = [
            (e["reason"], e["message"], e["firstTimestamp"])
            for e in events(items, "FailedScheduling") + events(items, "Scheduled")
            if e["involvedObject"]["name"] == name
        ]
        assert sorted(got) == [
            (
                "FailedScheduling",
                f"0/2 nodes are available: Pod team-b/{name} is rejected in PreFilter because total "
                "ElasticQuota used is more than min.",
                "2024-01-01T00:01:00Z",
            ),
            ("Scheduled", f"Successfully assigned team-b/{name} to node-1", "2024-01-01T00:01:30Z"),
        ]

    # team-a: the two left run on node-2; the replacements (created at 1m) stay Pending, first over Max
    # (the victims still terminate), then over the sum of mins
    placed = sorted((p["metadata"]["creationTimestamp"], p["spec"].get("nodeName", "")) for p in team_a)
    assert placed == [
        (f"{T0}00Z", "node-2"),
        (f"{T0}00Z", "node-2"),
        ("2024-01-01T00:01:00Z", ""),
        ("2024-01-01T00:01:00Z", ""),
    ]
    for p in team_a:
        name = p["metadata"]["name"]
        if p["spec"].get("nodeName"):
            assert p["status"]["phase"] == "Running"
            continue
        assert p["status"]["phase"] == "Pending"
        no_victims = (
            f"0/2 nodes are available: 1 No victims found on node node-1 for preemptor pod {name}, "
            f"1 No victims found on node node-2 for preemptor pod {name}."
        )
        over_max = f"0/2 nodes are available: Pod team-a/{name} is rejected in PreFilter because ElasticQuota team-a is more than Max. {no_victims}"
        over_min = f"0/2 nodes are available: Pod team-a/{name} is rejected in PreFilter because total ElasticQuota used is more than min. {no_victims}"
        failed = sorted(
            (e["firstTimestamp"], e["message"])
            for e in events(items, "FailedScheduling")
            if e["involvedObject"]["name"] == name
        )
        assert [m for _, m in failed] == [over_max, over_min]
        assert failed[0][0] == "2024-01-01T00:01:00Z"
        cond = condition(p, "PodScheduled")
        assert cond is not None
        assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", over_min)

    quotas = {
        o["metadata"]["name"]: (o["spec"]["min"], o["spec"]["max"], o["status"]["used"])
        for o in items
        if o["kind"] == "ElasticQuota"
    }
    assert quotas == {
        "team-a": ({"cpu": "8"}, {"cpu": "16"}, {"cpu": "8"}),
        "team-b": ({"cpu": "8"}, {"cpu": "16"}, {"cpu": "8"}),
    }


# ----- gangs ---------------------------------------------------------------------------------------------------
@pytest.mark.usefixtures("in_repo")
def test_gang_readme_command_all_or_nothing() -> None:
    """``train`` (minMember 3) is placed whole, one member per node; ``tune`` (minMember 4, 8 CPU with 6
    left) gets no node at all, although three of its members would fit."""
    r = berth(GANG)
    assert r.exit_code == 0, r.stderr
    placed = {
        p["NAME"]: (p["STATUS"], p["NODE"]) for p in table(r.stdout, "NAMESPACE", "NAME", "READY", "STATUS")
    }
    assert placed == {
        "train-0": ("Running", "node-2"),
        "train-1": ("Running", "node-3"),
        "train-2": ("Running", "node-1"),
        "tune-0": ("Pending", "<none>"),
        "tune-1": ("Pending", "<none>"),
        "tune-2": ("Pending", "<none>"),
        "tune-3": ("Pending", "<none>"),
    }
    groups = [
        (g["NAME"], g["PHASE"], g["MINMEMBER"], g["RUNNING"])
        for g in table(r.stdout, "NAMESPACE", "NAME", "PHASE")
    ]
    assert groups == [("train", "Running", "3", "3"), ("tune", "Scheduling", "4", "")]


@pytest.mark.usefixtures("in_repo")
def test_gang_members_wait_at_permit_and_are_rejected_together() -> None:
    """The tune members reach Permit (they are rejected there, never bound): when the fourth finds no room,
    Coscheduling's PostFilter rejects the waiting ones; those still waiting when the group's 30 s timeout
    passes are rejected together (the timed-out one, the others through Unreserve)."""
    r = berth(GANG, "-o", "json")
    assert r.exit_code == 0, r.stderr
    items = r.objects()
    tune = [f"tune-{i}" for i in range(4)]
    assert not [e for e in events(items, "Scheduled") if e["involvedObject"]["name"] in tune]
    failed: dict[str, set[str]] = {name: set() for name in tune}
    for e in events(items, "FailedScheduling"):
        failed[e["involvedObject"]["name"]].add(e["message"])
    rejected_by_group = {
        name: f"{TUNE_FILTER_FAILURE}, PodGroup default/tune gets rejected due to Pod {name} is unschedulable "
        "even after PostFilter."
        for name in tune
    }
    assert failed == {
        "tune-0": {"optimistic rejection in PostFilter", "rejection in Unreserve"},
        "tune-1": {"optimistic rejection in PostFilter", rejected_by_group["tune-1"]},
        "tune-2": {"optimistic rejection in PostFilter", rejected_by_group["tune-2"]},
        "tune-3": {
            "optimistic rejection in PostFilter",
            rejected_by_group["tune-3"],
            "rejected due to timeout after waiting 30s at plugin Coscheduling",
        },
    }
    # the timeout and the Unreserve rejection it causes happen at the same instant, 30 s after the wait began
    at_timeout = sorted(
        (e["involvedObject"]["name"], e["message"], e["firstTimestamp"], e["count"])
        for e in events(items, "FailedScheduling")
        if e["message"]
        in ("rejection in Unreserve", "rejected due to timeout after waiting 30s at plugin Coscheduling")
    )
    assert at_timeout == [
        ("tune-0", "rejection in Unreserve", f"{T0}32Z", 1),
        ("tune-3", "rejected due to timeout after waiting 30s at plugin Coscheduling", f"{T0}32Z", 1),
    ]
    for p in pods_of(items):
        name = p["metadata"]["name"]
        if name in tune:
            cond = condition(p, "PodScheduled")
            assert cond is not None and (cond["status"], cond["reason"]) == ("False", "Unschedulable")
            assert "nodeName" not in p["spec"]
    status = {o["metadata"]["name"]: o["status"] for o in items if o["kind"] == "PodGroup"}
    assert status == {
        "train": {"phase": "Running", "scheduleStartTime": f"{T0}00Z", "running": 3},
        "tune": {"phase": "Scheduling", "scheduleStartTime": f"{T0}00Z"},
    }


@pytest.mark.usefixtures("in_repo")
def test_gang_tune_is_never_partly_bound_over_the_whole_run() -> None:
    """Without ``--until`` (10 minutes) the tune group tries again after the timeout and is again refused as a
    whole: no member is ever bound."""
    r = berth(GANG.replace(" --until 2m", ""), "-o", "json")
    assert r.exit_code == 0, r.stderr
    items = r.objects()
    bound = sorted(e["involvedObject"]["name"] for e in events(items, "Scheduled"))
    assert bound == ["train-0", "train-1", "train-2"]
    (timeout,) = [
        e for e in events(items, "FailedScheduling") if e["message"].startswith("rejected due to timeout")
    ]
    assert (timeout["involvedObject"]["name"], timeout["count"]) == ("tune-3", 2)
    assert {p["metadata"]["name"]: p["status"]["phase"] for p in pods_of(items)} == {
        "train-0": "Running",
        "train-1": "Running",
        "train-2": "Running",
        "tune-0": "Pending",
        "tune-1": "Pending",
        "tune-2": "Pending",
        "tune-3": "Pending",
    }


@pytest.mark.usefixtures("in_repo")
def test_gang_without_coscheduling_three_tune_pods_run() -> None:
    """The contrast the example's comment states: without the configuration three tune pods run."""
    r = berth("berth simulate examples/gang/ --until 2m -o json")
    assert r.exit_code == 0, r.stderr
    items = r.objects()
    nodes = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in pods_of(items)}
    assert nodes == {
        "train-0": "node-2",
        "train-1": "node-3",
        "train-2": "node-1",
        "tune-0": "node-1",
        "tune-1": "node-3",
        "tune-2": "node-2",
        "tune-3": None,
    }
    cond = condition(next(p for p in pods_of(items) if p["metadata"]["name"] == "tune-3"), "PodScheduled")
    assert cond is not None and cond["message"] == TUNE_FILTER_FAILURE


# ----- disruption ------------------------------------------------------------------------------------------------
@pytest.mark.usefixtures("in_repo")
def test_disruption_readme_command_final_state() -> None:
    """After the preemption and the drain: node-1 cordoned and empty, the six web pods and ``urgent`` on
    node-2 and node-3, every batch pod Pending, the PDB back to one allowed disruption."""
    r = berth(DISRUPTION)
    assert r.exit_code == 0, r.stderr
    assert r.stderr == ""
    nodes = {n["NAME"]: n["STATUS"] for n in table(r.stdout, "NAME", "STATUS", "ROLES")}
    assert nodes == {"node-1": "Ready,SchedulingDisabled", "node-2": "Ready", "node-3": "Ready"}
    placed = Counter(
        (p["NAME"].split("-")[0], p["STATUS"], p["NODE"], p["PRIORITY"])
        for p in table(r.stdout, "NAMESPACE", "NAME", "READY", "STATUS")
    )
    assert placed == {
        ("batch", "Pending", "<none>", "10"): 6,
        ("urgent", "Running", "node-2", "1000"): 1,
        ("web", "Running", "node-2", "1000"): 2,
        ("web", "Running", "node-3", "1000"): 4,
    }
    (pdb,) = table(r.stdout, "NAMESPACE", "NAME", "MIN AVAILABLE")
    assert (pdb["NAME"], pdb["MIN AVAILABLE"], pdb["MAX UNAVAILABLE"], pdb["ALLOWED DISRUPTIONS"]) == (
        "web-pdb",
        "N/A",
        "1",
        "1",
    )


@pytest.mark.usefixtures("in_repo")
def test_disruption_preemptions_and_messages() -> None:
    """``urgent`` preempts two batch pods on node-2 at 1m; the replacements of the drained web pods preempt
    the two batch pods of node-3 (at 2m and 2m15s); the two batch pods of node-1 are evicted by the drain.
    None of the six original batch pods is left, and their replacements stay Pending."""
    r = berth(DISRUPTION, "-o", "json")
    assert r.exit_code == 0, r.stderr
    items = r.objects()
    by_uid = {p["metadata"]["uid"]: p for p in pods_of(items)}

    urgent = [
        (e["reason"], e["message"], e["firstTimestamp"])
        for e in items
        if e["kind"] == "Event" and e["involvedObject"]["name"] == "urgent"
    ]
    assert urgent == [
        ("FailedScheduling", "0/3 nodes are available: 3 Insufficient cpu.", "2024-01-01T00:01:00Z"),
        ("Scheduled", "Successfully assigned default/urgent to node-2", "2024-01-01T00:01:10Z"),
    ]

    preemptions = []
    for e in events(items, "Preempted"):
        m = re.fullmatch(r"Preempted by pod (\S+) on node (\S+)", e["message"])
        assert m is not None, e["message"]
        victim = e["involvedObject"]["name"]
        assert victim.startswith("batch-")
        assert scheduled_node(items, victim) == m.group(2)
        preemptor = by_uid[m.group(1)]
        who = preemptor["metadata"]["name"].split("-")[0]
        preemptions.append((e["firstTimestamp"], m.group(2), who, preemptor["metadata"]["creationTimestamp"]))
    assert sorted(preemptions) == [
        ("2024-01-01T00:01:00Z", "node-2", "urgent", "2024-01-01T00:01:00Z"),
        ("2024-01-01T00:01:00Z", "node-2", "urgent", "2024-01-01T00:01:00Z"),
        ("2024-01-01T00:02:00Z", "node-3", "web", "2024-01-01T00:02:00Z"),
        ("2024-01-01T00:02:15Z", "node-3", "web", "2024-01-01T00:02:15Z"),
    ]
    # the web replacements fail Filter (node-1 cordoned, the others full), then preempt: no "preemption:" part
    for p in pods_of(items, "web"):
        if p["metadata"]["creationTimestamp"] == f"{T0}00Z":
            continue
        (failed,) = [
            e
            for e in events(items, "FailedScheduling")
            if e["involvedObject"]["name"] == p["metadata"]["name"]
        ]
        assert (
            failed["message"] == "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu."
        )
        assert p["status"]["nominatedNodeName"] == p["spec"]["nodeName"] == "node-3"

    original_batch = {e["involvedObject"]["name"] for e in events(items, "Scheduled")} - {
        p["metadata"]["name"] for p in pods_of(items)
    }
    drained = {v for v in original_batch if v.startswith("batch-")} - {
        e["involvedObject"]["name"] for e in events(items, "Preempted")
    }
    assert {scheduled_node(items, v) for v in drained} == {"node-1"} and len(drained) == 2
    batch = pods_of(items, "batch")
    assert len(batch) == 6
    for p in batch:
        assert p["status"]["phase"] == "Pending" and "nodeName" not in p["spec"]
        cond = condition(p, "PodScheduled")
        assert cond is not None and cond["message"] == BATCH_AFTER_DRAIN


# what the drain of node-1 looks like every 5 s: (healthy web pods, web pods terminating, web pods not
# yet bound, the PDB's currentHealthy and disruptionsAllowed)
DRAIN_TIMELINE = [
    ("1m55s", 6, 0, 0, 6, 1),
    ("2m", 5, 1, 1, 5, 0),  # the first web pod is evicted; its replacement waits for a preempted batch pod
    ("2m5s", 5, 1, 1, 5, 0),  # the second eviction is refused: the budget allows none
    ("2m10s", 6, 1, 0, 6, 1),  # the replacement runs
    ("2m15s", 5, 2, 1, 5, 0),  # so the second web pod goes
    ("2m20s", 5, 2, 1, 5, 0),
    ("2m25s", 6, 2, 0, 6, 1),
    ("2m30s", 6, 1, 0, 6, 1),  # the first evicted pod is gone after its 30 s grace period
    ("2m45s", 6, 0, 0, 6, 1),
    ("3m", 6, 0, 0, 6, 1),
]


@pytest.mark.usefixtures("in_repo")
def test_disruption_pdb_never_goes_below_its_budget() -> None:
    """Snapshots of the drain (the run is deterministic, so ``--until T`` shows the state at T): web pods
    leave one at a time, and the healthy count never drops below the PDB's desiredHealthy (6 - 1 = 5)."""
    seen = []
    for until, *_ in DRAIN_TIMELINE:
        r = berth(DISRUPTION, "--until", until, "-o", "json")
        assert r.exit_code == 0, r.stderr
        items = r.objects()
        web = pods_of(items, "web")
        terminating = [p for p in web if p["metadata"].get("deletionTimestamp")]
        healthy = [p for p in web if p["status"].get("phase") == "Running" and p not in terminating]
        unbound = [p for p in web if not p["spec"].get("nodeName")]
        (pdb,) = [o for o in items if o["kind"] == "PodDisruptionBudget"]
        assert (pdb["status"]["desiredHealthy"], pdb["status"]["expectedPods"]) == (5, 6)
        assert len(healthy) >= pdb["status"]["desiredHealthy"]
        for p in terminating:
            assert p["spec"]["nodeName"] == "node-1"
            cond = condition(p, "DisruptionTarget")
            assert cond is not None
            assert (cond["status"], cond["reason"]) == ("True", "EvictionByEvictionAPI")
        seen.append(
            (
                until,
                len(healthy),
                len(terminating),
                len(unbound),
                pdb["status"]["currentHealthy"],
                pdb["status"]["disruptionsAllowed"],
            )
        )
    assert seen == DRAIN_TIMELINE


@pytest.mark.usefixtures("in_repo")
def test_disruption_drain_in_progress_command() -> None:
    """docs/disruption.md's ``--until 2m15s``: both node-1 web pods terminating, the second replacement not
    yet bound, the Deployment at 5/6 and the PDB allowing no more disruption."""
    r = berth(DISRUPTION_IN_PROGRESS)
    assert r.exit_code == 0, r.stderr
    web = Counter(
        (p["STATUS"], p["NODE"])
        for p in table(r.stdout, "NAMESPACE", "NAME", "READY", "STATUS")
        if p["NAME"].startswith("web-")
    )
    assert web == {
        ("Terminating", "node-1"): 2,
        ("Running", "node-2"): 2,
        ("Running", "node-3"): 3,
        ("Pending", "<none>"): 1,
    }
    deployments = {d["NAME"]: d["READY"] for d in table(r.stdout, "NAMESPACE", "NAME", "READY", "UP-TO-DATE")}
    assert deployments == {"batch": "0/6", "web": "5/6"}
    (pdb,) = table(r.stdout, "NAMESPACE", "NAME", "MIN AVAILABLE")
    assert pdb["ALLOWED DISRUPTIONS"] == "0"


# ----- rate limit ------------------------------------------------------------------------------------------------
def _web_by_node(items: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for p in pods_of(items, "web"):
        out.setdefault(p["spec"]["nodeName"], []).append(p)
    return out


@pytest.mark.usefixtures("in_repo")
def test_rate_limit_readme_command_refuses_the_second_eviction() -> None:
    """The PDB allows two disruptions but ``berth.dev/max-disruptions: "1/1h"`` one per hour: the drain of
    node-1 evicts one web pod at 1m, is refused the other until its 3-minute timeout, and reports it."""
    r = berth(RATE_LIMIT)
    assert r.exit_code == 0
    assert r.stderr == DRAIN_TIMEOUT
    items = yaml.safe_load(r.stdout)["items"]
    (node1,) = [o for o in items if o["kind"] == "Node" and o["metadata"]["name"] == "node-1"]
    assert node1["spec"] == {"unschedulable": True}

    web = _web_by_node(items)
    assert sorted(web) == ["node-1", "node-2"]
    (kept,) = web["node-1"]  # the one the rate limit protected: untouched
    assert kept["metadata"]["creationTimestamp"] == f"{T0}00Z"
    assert kept["status"]["phase"] == "Running"
    assert "deletionTimestamp" not in kept["metadata"]
    assert condition(kept, "DisruptionTarget") is None
    assert sorted(p["metadata"]["creationTimestamp"] for p in web["node-2"]) == [
        f"{T0}00Z",
        f"{T0}00Z",
        "2024-01-01T00:01:00Z",  # the evicted pod's replacement
    ]

    (pdb,) = [o for o in items if o["kind"] == "PodDisruptionBudget"]
    history = json.loads(pdb["metadata"]["annotations"]["berth.dev/disruption-history"])
    (evicted,) = history
    assert evicted["time"] == "2024-01-01T00:01:00Z"
    assert scheduled_node(items, evicted["pod"]) == "node-1"
    assert evicted["pod"] not in {p["metadata"]["name"] for p in pods_of(items)}
    # the budget itself would have allowed the second eviction: only the rate limit refused it
    status = pdb["status"]
    assert (status["expectedPods"], status["currentHealthy"], status["desiredHealthy"]) == (4, 4, 2)
    assert status["disruptionsAllowed"] == 2


@pytest.mark.parametrize(
    ("limit", "evicted_at", "history_at"),
    [
        (None, ["2024-01-01T00:01:00Z", "2024-01-01T00:01:00Z"], None),  # no limit: both go at once
        (
            '"1/2m"',
            ["2024-01-01T00:01:00Z", "2024-01-01T00:03:00Z"],
            ["2024-01-01T00:03:00Z"],
        ),  # after the window
    ],
)
def test_rate_limit_refuses_only_within_its_window(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    limit: str | None,
    evicted_at: list[str],
    history_at: list[str] | None,
) -> None:
    """Control runs of the same example: without the annotation the drain evicts both node-1 pods at 1m;
    with a 2-minute window the second eviction goes through once the window has passed (3m), inside the
    drain's timeout. The history keeps only the evictions inside the window."""
    example = tmp_path / "examples" / "rate-limit"
    shutil.copytree(REPO / "examples" / "rate-limit", example)
    manifest = example / "01-cluster.yaml"
    text = manifest.read_text()
    annotation = '    annotations: {berth.dev/max-disruptions: "1/1h"}\n'
    assert text.count(annotation) == 1
    replacement = "" if limit is None else annotation.replace('"1/1h"', limit)
    manifest.write_text(text.replace(annotation, replacement))
    monkeypatch.chdir(tmp_path)

    r = berth(RATE_LIMIT)
    assert r.exit_code == 0
    assert r.stderr == ""
    items = yaml.safe_load(r.stdout)["items"]
    web = _web_by_node(items)
    assert sorted(web) == ["node-2"]
    created = sorted(p["metadata"]["creationTimestamp"] for p in web["node-2"])
    assert created == [f"{T0}00Z", f"{T0}00Z", *evicted_at]  # the two replacements appear at eviction time
    (pdb,) = [o for o in items if o["kind"] == "PodDisruptionBudget"]
    annotations = pdb["metadata"].get("annotations") or {}
    if history_at is None:
        assert "berth.dev/disruption-history" not in annotations
    else:
        history = json.loads(annotations["berth.dev/disruption-history"])
        assert [h["time"] for h in history] == history_at
