"""`berth serve` killed with SIGKILL mid-run: nothing acknowledged is lost, no pod is bound twice."""

from __future__ import annotations

from pathlib import Path

from serve_crash import run_server_crashes


def test_three_kills_during_a_pod_run(tmp_path: Path) -> None:
    report = run_server_crashes(tmp_path / "data", pods=60, kills=3, seed=7)
    assert report.problems == []
    assert (report.kills, report.acknowledged) == (3, 60)
    assert report.checks >= 60 * 4  # every acknowledged pod checked after each restart and at the end
