"""``--report-html``: the data embedded in the page equals the run's figures (utilisation, pending pods,
quotas, reservations, FailedScheduling reasons), ``--sample`` and path checks, the trace report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from berth.cli import app
from berth.sim.html_report import asset_text, embedded_data, render_html
from berth.sim.timeline import failed_reasons

runner = CliRunner()
EXAMPLES = Path(__file__).parents[2] / "examples"

SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {node.kubernetes.io/instance-type: big}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}, capacity: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {node.kubernetes.io/instance-type: small}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}, capacity: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  containers: [{name: c, image: pause, resources: {requests: {cpu: "1", memory: 1Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p2}
spec:
  containers: [{name: c, image: pause, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
---
apiVersion: berth.dev/v1alpha1
kind: Scenario
metadata: {name: s}
spec:
  until: 30s
  steps:
  - at: 5s
    create:
    - apiVersion: v1
      kind: Pod
      metadata: {name: huge}
      spec:
        containers: [{name: c, image: pause, resources: {requests: {cpu: "8"}}}]
  - at: 12s
    create:
    - apiVersion: v1
      kind: Pod
      metadata: {name: p3}
      spec:
        containers: [{name: c, image: pause, resources: {requests: {cpu: "1"}}}]
"""


def simulate(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, ["simulate", *args, "-q"])
    return r.exit_code, r.stdout, r.stderr


def report_of(tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "report.html"
    code, _, err = simulate(tmp_path, *args, "--report-html", str(out))
    assert code == 0, err
    data: dict[str, Any] = embedded_data(out.read_text())
    return data


def test_series_equal_the_run(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    d = report_of(tmp_path, str(tmp_path / "s.yaml"))
    assert d["kind"] == "simulate"
    assert d["sampleSeconds"] == 10.0
    assert d["time"] == [0.0, 10.0, 20.0, 30.0]
    u = d["utilisation"]
    # t=0: p1 + p2; t=10: huge pending; t=20, 30: p3 bound too
    assert u["requested"]["cpu"] == [1500, 1500, 2500, 2500]
    assert u["allocatable"]["cpu"] == [6000] * 4
    assert u["requested"]["memory"] == [2 << 30] * 4
    assert u["allocatable"]["memory"] == [12 << 30] * 4
    assert u["requested"]["pods"] == [2, 2, 3, 3]
    assert u["allocatable"]["pods"] == [20] * 4
    assert u["groupLabel"] == "node.kubernetes.io/instance-type"
    assert sorted(u["groups"]) == ["big", "small"]
    big = u["groups"].index("big")
    assert [row[big] for row in u["groupAllocatable"]["cpu"]] == [4000] * 4
    assert [sum(row) for row in u["groupRequested"]["cpu"]] == u["requested"]["cpu"]
    assert d["pending"] == [0, 1, 1, 1]
    assert d["pendingWaitMax"] == [0.0, 5.0, 15.0, 25.0]
    assert d["scheduled"][-1] == 3
    assert d["bound"] == [2, 0, 1, 0]  # p1, p2 at 0s; p3 at 12s
    assert d["latencyMean"] == [0.0, None, 0.0, None]
    p = d["placement"]
    assert p["nodes"] == ["node-a", "node-b"]
    assert p["resources"] == ["cpu", "memory", "pods"]
    assert p["allocatable"] == [[4000, 8 << 30, 10], [2000, 4 << 30, 10]]
    assert [sum(col) for col in zip(*p["requested"], strict=True)] == [2500, 2 << 30, 3]
    assert d["failedReasons"] == [{"reason": "Insufficient cpu", "count": d["failedReasons"][0]["count"]}]
    assert d["failedReasons"][0]["count"] >= 2  # both nodes, at least once


def test_sample_step(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    d = report_of(tmp_path, str(tmp_path / "s.yaml"), "--sample", "15s")
    assert d["time"] == [0.0, 15.0, 30.0]
    assert d["utilisation"]["requested"]["cpu"] == [1500, 2500, 2500]


@pytest.mark.parametrize("value", ["0s", "-5s", "soon"])
def test_bad_sample_exits_2(tmp_path: Path, value: str) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    code, out, err = simulate(
        tmp_path, str(tmp_path / "s.yaml"), "--report-html", str(tmp_path / "r.html"), "--sample", value
    )
    assert code == 2
    assert err.startswith("error: --sample: ") or "--sample" in err
    assert len(err.strip().splitlines()) == 1
    assert out == ""
    assert not (tmp_path / "r.html").exists()


def test_report_html_missing_folder_fails_first(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(SCENARIO)
    target = tmp_path / "nowhere" / "r.html"
    code, out, err = simulate(tmp_path, str(tmp_path / "s.yaml"), "--report-html", str(target))
    assert code == 2
    assert out == ""
    assert err.strip().splitlines() == [
        f'error: --report-html: cannot write "{target}": directory "{target.parent}" does not exist'
    ]


def test_quota_series(tmp_path: Path) -> None:
    d = report_of(
        tmp_path,
        str(EXAMPLES / "elasticquota"),
        "--scheduler-config",
        str(EXAMPLES / "elasticquota-scheduler-config.yaml"),
    )
    q = d["quotas"]
    assert set(q) == {"team-a/team-a", "team-b/team-b"}
    # team-a borrows team-b's min until team-b asks for it at 1m, then keeps its own min
    assert q["team-a/team-a"]["used"]["cpu"][0] == 16000
    assert q["team-a/team-a"]["used"]["cpu"][-1] == 8000
    assert q["team-b/team-b"]["used"]["cpu"][0] == 0
    assert q["team-b/team-b"]["used"]["cpu"][-1] == 8000
    assert q["team-a/team-a"]["min"]["cpu"] == 8000
    assert q["team-a/team-a"]["max"]["cpu"] == 16000
    assert d["preemptionVictims"][-1] == 2
    assert d["pending"][6] == 4  # 1m: team-b's two pods and team-a's evicted ones are waiting
    # team-b's pods, created at 1m, are bound once team-a's borrowed pods are gone
    assert sum(d["bound"]) == d["scheduled"][-1]
    assert max(v for v in d["latencyMax"] if v is not None) > 0


def test_reservation_occupancy(tmp_path: Path) -> None:
    d = report_of(tmp_path, str(EXAMPLES / "reservation" / "02-multiple-owners"))
    reserved = d["reservations"]["reserved"]
    allocated = d["reservations"]["allocated"]
    assert reserved[0] == [6000, 20 << 30]
    assert allocated[0] == [0, 0]
    assert reserved[-1] == [6000, 20 << 30]
    assert allocated[-1] == [4000, 20 << 30]


def test_failed_reasons_parsing() -> None:
    events = [
        {
            "reason": "FailedScheduling",
            "count": 2,
            "message": "0/3 nodes are available: 2 Insufficient cpu, 1 node(s) had untolerated taint {a: b}. "
            "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
        },
        {"reason": "FailedScheduling", "count": 1, "message": "0/3 nodes are available: 3 Insufficient cpu."},
        {
            "reason": "FailedScheduling",
            "message": "0/3 nodes are available: Pod ns/x is rejected in PreFilter because of quota.",
        },
        {"reason": "Scheduled", "message": "ignored"},
    ]
    assert failed_reasons(events) == [
        {"reason": "Insufficient cpu", "count": 7},
        {"reason": "node(s) had untolerated taint {a: b}", "count": 2},
        {"reason": "Pod is rejected in PreFilter because of quota", "count": 1},
    ]


def test_page_is_self_contained() -> None:
    page = render_html({"kind": "simulate", "x": "</script><!--"}, "T <1>", "s & t")
    assert embedded_data(page) == {"kind": "simulate", "x": "</script><!--"}
    assert "<title>T &lt;1&gt;</title>" in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page
    assert asset_text("berth-charts.js") in page
    assert page.count("<script") == 2


def test_trace_report(tmp_path: Path) -> None:
    from openb_helpers import pod_row, write_trace

    nodes = ["n-0,16000,65536,2,T4", "n-1,16000,65536,1,P100"]
    pods = [pod_row("p-a", 4000, 1, 600), pod_row("p-b", 4000, 1, 1000), pod_row("p-c", 4000, 1, 500)]
    folder = write_trace(tmp_path / "t", nodes, pods)
    report, page = tmp_path / "r.json", tmp_path / "r.html"
    r = runner.invoke(
        app,
        [
            "trace",
            "openb",
            str(folder),
            "--policy",
            "BestFit",
            "--inflation",
            "1.0",
            "--seed",
            "1",
            "--report",
            str(report),
            "--report-html",
            str(page),
        ],
    )
    assert r.exit_code == 0, r.stderr
    import json

    want = json.loads(report.read_text())
    d = embedded_data(page.read_text())
    assert d["kind"] == "trace"
    assert d["allocation"] == want["series"]["gpuAllocationRatio"]
    assert d["arrived"] == want["series"]["arrivedGpuRatio"]
    assert d["fragmentation"] == want["series"]["fragmentationRatio"]
    assert d["placement"]["nodes"] == ["n-0", "n-1"]
    assert d["placement"]["allocatable"] == [[2], [1]]
    assert sum(d["placement"]["podsPlaced"]) == d["podsScheduled"] == 3


def test_trace_report_html_missing_folder(tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "r.html"
    r = runner.invoke(app, ["trace", "openb", str(tmp_path), "--report-html", str(target)])
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [
        f'error: --report-html: cannot write "{target}": directory "{target.parent}" does not exist'
    ]


def test_heat_map_bins_large_clusters() -> None:
    from berth.sim.engine import Simulation
    from berth.sim.scenario import Plan
    from berth.sim.timeline import Timeline

    sim = Simulation(seed=0)
    for i in range(1200):
        cpu = "4" if i % 2 else "8"
        sim.store.create(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"n{i}"},
                "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}},
            }
        )
    timeline = Timeline(10.0)
    timeline.attach(sim, 0.0)
    sim.run(Plan(steps=[]), 0.0)
    timeline.finish()
    d = timeline.data()
    p = d["placement"]
    assert (p["nodeCount"], p["nodesPerRow"], len(p["nodes"])) == (1200, 3, 400)
    assert p["nodes"][0] == "n0 … n2"  # natural order: n0, n1, n2, ..., n10
    assert p["allocatable"][0][p["resources"].index("cpu")] == 8000 + 4000 + 8000
    assert sum(row[p["resources"].index("cpu")] for row in p["allocatable"]) == 1200 * 6000
    assert d["utilisation"]["allocatable"]["cpu"] == [1200 * 6000]
    assert sorted(d["utilisation"]["groups"]) == ["4 cpu / 8 GiB", "8 cpu / 8 GiB"]


def test_gang_waits(tmp_path: Path) -> None:
    d = report_of(
        tmp_path, str(EXAMPLES / "gang"), "--scheduler-config", str(EXAMPLES / "gang-scheduler-config.yaml")
    )
    # train (3 workers) is placed whole at once; tune (4 workers on 6 free cpu) waits to the end
    assert d["gangs"]["default/train"]["waitedUntil"] == 0.0
    assert d["gangs"]["default/tune"]["waitedUntil"] is None
    assert d["gangs"]["default/tune"]["minMember"] == 4
    assert d["gangsWaiting"] == [1] * len(d["time"])
    assert d["failedReasons"][0] == {"reason": "Insufficient cpu", "count": d["failedReasons"][0]["count"]}


def test_sampling_does_not_change_the_run(tmp_path: Path) -> None:
    args = [
        str(EXAMPLES / "gang"),
        "--scheduler-config",
        str(EXAMPLES / "gang-scheduler-config.yaml"),
        "-o",
        "json",
    ]
    plain = simulate(tmp_path, *args)
    sampled = simulate(tmp_path, *args, "--report-html", str(tmp_path / "r.html"), "--sample", "3s")
    assert plain == sampled
    assert plain[0] == 0
