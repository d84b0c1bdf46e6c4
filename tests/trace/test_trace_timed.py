"""``berth trace openb --timed``: pods arrive and leave at the trace's recorded times; a pod that does not fit
waits and is placed when a departure frees room; one deleted while waiting never runs."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from openb_helpers import NODE_HEADER, write_trace
from typer.testing import CliRunner

from berth.cli import app
from berth.sim.traces.openb import load_nodes, load_pod_times, load_pods
from berth.sim.traces.replay import replay_timed, timed_events

runner = CliRunner()

NODES = ["n-0,16000,65536,2,T4", "n-1,16000,65536,1,P100"]


def row(name: str, gpus: int, milli: int, created: int, deleted: int | str) -> str:
    """A pod row of 1 CPU and 16 GiB with its creation and deletion times."""
    return f"{name},1000,16384,{gpus},{milli},,LS,Running,{created},{deleted},{created}"


PODS = [
    row("a", 1, 1000, 0, 100),
    row("b", 1, 1000, 10, 50),
    row("c", 1, 1000, 20, 200),
    row("d", 1, 1000, 30, 300),  # no GPU left: waits until b leaves at 50
    row("e", 1, 600, 40, 45),  # waits, deleted at 45 while waiting: never runs
    row("f", 0, 0, 60, 60),  # CPU only, created and deleted the same second
    row("g", 0, 0, 70, ""),  # never deleted
]


def test_events_free_room_before_arrivals_and_keep_zero_lifetime_pods_in_order(tmp_path: Path) -> None:
    d = write_trace(tmp_path, NODES, PODS)
    pods, times = load_pods(d), load_pod_times(d)
    assert [(t, k, pods[i].name) for t, k, i in timed_events(pods, times)] == [
        (0, 1, "a"),
        (10, 1, "b"),
        (20, 1, "c"),
        (30, 1, "d"),
        (40, 1, "e"),
        (45, 0, "e"),
        (50, 0, "b"),
        (60, 1, "f"),
        (60, 2, "f"),
        (70, 1, "g"),
        (100, 0, "a"),
        (200, 0, "c"),
        (300, 0, "d"),
    ]


def test_a_waiting_pod_takes_the_room_a_departure_frees(tmp_path: Path) -> None:
    d = write_trace(tmp_path, NODES, PODS)
    pods = load_pods(d)
    result = replay_timed(load_nodes(d), pods, load_pod_times(d), "BestFit", seed=0)
    placed = {p.pod: (p.node, p.devices) for p in result.placements}
    assert placed["d"] == placed["b"]  # the one GPU b gave back
    assert placed["e"] == (None, ())
    assert placed["f"][0] is not None and placed["g"][0] is not None
    assert (result.pods_scheduled, result.pods_failed) == (6, 1)
    assert result.series_time == [0, 10, 20, 30, 40, 45, 50, 60, 60, 70, 100, 200, 300]
    milli = [1000, 2000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000, 2000, 1000, 0]
    assert result.series_allocation == [m / 3000 for m in milli]
    present = [1000, 2000, 3000, 4000, 4600, 4000, 3000, 3000, 3000, 3000, 2000, 1000, 0]
    assert result.series_arrived == [m / 3000 for m in present]


def test_cli_report_and_emit(tmp_path: Path) -> None:
    d = write_trace(tmp_path / "t", NODES, PODS)
    report = tmp_path / "r.json"
    r = runner.invoke(
        app, ["trace", "openb", str(d), "--timed", "--policy", "BestFit", "--report", str(report)]
    )
    assert (r.exit_code, r.stderr) == (0, "")
    assert r.stdout.startswith(
        "policy BestFit seed 42: 6 pods scheduled, 1 failed; GPU allocation 0.00% at 0.00%"
    )
    data = json.loads(report.read_text())
    assert (data["timed"], data["podsArrived"], data["podsScheduled"], data["podsFailed"]) == (True, 7, 6, 1)
    assert data["series"]["time"] == [0, 10, 20, 30, 40, 45, 50, 60, 60, 70, 100, 200, 300]

    r = runner.invoke(app, ["trace", "openb", str(d), "--timed", "--emit"])
    assert r.exit_code == 0
    docs = list(yaml.safe_load_all(r.stdout))
    assert [n["metadata"]["name"] for n in docs[:-1]] == ["n-0", "n-1"]
    steps = docs[-1]["spec"]["steps"]
    assert docs[-1]["metadata"]["name"] == "openb-default-timed"
    summary = [
        (
            s["at"],
            [c["metadata"]["name"] for c in s.get("create", [])],
            [x["name"] for x in s.get("delete", [])],
        )
        for s in steps
    ]
    assert summary == [
        ("0s", ["a"], []),
        ("10s", ["b"], []),
        ("20s", ["c"], []),
        ("30s", ["d"], []),
        ("40s", ["e"], []),
        ("45s", [], ["e"]),
        ("50s", [], ["b"]),
        ("60s", ["f"], ["f"]),
        ("70s", ["g"], []),
        ("100s", [], ["a"]),
        ("200s", [], ["c"]),
        ("300s", [], ["d"]),
    ]


def test_bad_input(tmp_path: Path) -> None:
    d = write_trace(tmp_path / "t", NODES, PODS)
    r = runner.invoke(app, ["trace", "openb", str(d), "--timed", "--inflation", "1.3"])
    assert (r.exit_code, r.stderr) == (
        2,
        "error: --inflation and --timed exclude each other (--timed replays the recorded times)\n",
    )

    d2 = write_trace(tmp_path / "t2", NODES, [row("a", 1, 1000, 50, 40)])
    r = runner.invoke(app, ["trace", "openb", str(d2), "--timed"])
    assert (r.exit_code, r.stderr) == (
        2,
        "error: csv/openb_pod_list_default.csv: line 2, column deletion_time: 40 is before creation_time 50\n",
    )

    d3 = tmp_path / "t3"
    (d3 / "csv").mkdir(parents=True)
    (d3 / "csv" / "openb_node_list_gpu_node.csv").write_text("\n".join([NODE_HEADER, *NODES]) + "\n")
    (d3 / "csv" / "openb_pod_list_multigpu20.csv").write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1024,2,1000\n"
    )
    r = runner.invoke(app, ["trace", "openb", str(d3), "--timed", "--pod-list", "multigpu20"])
    assert (r.exit_code, r.stderr) == (
        2,
        "error: csv/openb_pod_list_multigpu20.csv: line 1: missing column(s) creation_time, deletion_time "
        "(--timed replays the recorded times; this pod list has none)\n",
    )
