"""benchmarks/report.py: runs with non-default arguments never overwrite the recorded results."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import report  # noqa: E402


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("workloads", nargs="*")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--init-pods", type=int, default=1000)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=("basic", "reservations"))
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--name", default="x")
    return ap


@pytest.mark.parametrize(
    ("argv", "slug"),
    [
        ([], ""),
        (["--nodes", "5000"], ""),  # the default given explicitly is still the default
        (["SchedulingBasic"], ""),  # positional choices do not count
        (["--child", "c", "--name", "other"], ""),  # hidden and ignored options do not count
        (["--nodes", "20", "--init-pods", "2"], "nodes20-init-pods2"),
        (["--quick", "--only", "basic"], "quick-onlybasic"),
    ],
)
def test_the_slug_names_the_non_default_options(
    argv: list[str], slug: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "_run", {"slug": "", "results": None})
    report.parse_args(_parser(), argv, ignore=("name",))
    assert report.result_path("bench", Path("/r")) == Path("/r") / (
        f"bench-{slug}.json" if slug else "bench.json"
    )


def test_a_benchmark_with_non_default_arguments_writes_a_separate_file(tmp_path: Path) -> None:
    recorded = tmp_path / "scheduling_basic.json"
    recorded.write_text('{"recorded": true}\n')
    argv = ["--nodes", "20", "--init-pods", "2", "--pods", "10", "--skip-cli", "--results-dir", str(tmp_path)]
    run = subprocess.run(
        [sys.executable, str(BENCH / "scheduling_basic.py"), *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert recorded.read_text() == '{"recorded": true}\n'
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["scheduling_basic-nodes20-init-pods2-pods10-skip-cli.json", "scheduling_basic.json"]
    figures = json.loads((tmp_path / written[0]).read_text())
    assert figures["workload"] == "SchedulingBasic"
    assert "cliSimulateJsonSeconds" not in figures
