"""The progress bar of `berth simulate`: drawn on a terminal for runs over a second, four times a second at
most, never when standard error is not a terminal or with --quiet."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import berth.cli
from berth.cli import app
from berth.sim.engine import Simulation, run_end
from berth.sim.progress import INTERVAL_SECONDS, SimProgress
from berth.sim.scenario import Plan, Step
from builders import make_node, make_pod

BAR = "━" * 40
FINAL = f"simulate {BAR} 5m0s / 5m0s bound 3 pending 1"


class Wall:
    """A wall clock that moves `step` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.t = 0.0
        self.step = step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def _terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=80, color_system=None), out


def _frames(text: str) -> list[str]:
    """The lines rich drew, one per frame (each redraw starts with a carriage return and erase-line)."""
    text = text.replace("\x1b[?25l", "").replace("\x1b[?25h", "")
    return [f.replace("\x1b[2K", "").rstrip("\n") for f in text.split("\r") if f.replace("\x1b[2K", "")]


def _plan() -> Plan:
    objs = [make_node("n1").obj()]
    objs += [make_pod(f"p{i}").req(cpu="100m").obj() for i in range(2)]
    objs.append(make_pod("huge").req(cpu="1000").obj())
    return Plan([Step(0.0, objs), Step(60.0, [make_pod("late").req(cpu="100m").obj()])])


def test_the_final_frame_shows_virtual_time_and_pods() -> None:
    console, out = _terminal()
    sim = Simulation()
    plan = _plan()
    progress = SimProgress(console, wall=Wall(0.5))
    progress.attach(sim, run_end(plan, 300.0))
    sim.run(plan, 300.0)
    progress.close()
    frames = _frames(out.getvalue())
    assert frames[-1] == FINAL
    # the first frame is drawn a second (of the injected wall clock) in, in the middle of the first instant
    assert frames[0] == f"simulate {' ' * 40} 0s / 5m0s bound 1 pending 2"
    assert progress.shown
    assert sim.on_tick is None and sim.scheduler.on_decision is None  # the hooks are given back


def test_a_short_run_draws_nothing() -> None:
    console, out = _terminal()
    sim = Simulation()
    plan = _plan()
    progress = SimProgress(console, wall=Wall(0.001))  # the whole run takes well under a second of wall time
    progress.attach(sim, run_end(plan, 300.0))
    sim.run(plan, 300.0)
    progress.close()
    assert not progress.shown
    assert out.getvalue() == ""


def test_redraws_are_at_most_four_a_second() -> None:
    console, out = _terminal()
    sim = Simulation()
    wall = Wall(0.001)
    progress = SimProgress(console, delay=0.0, wall=wall)
    plan = Plan([Step(float(t), [make_pod(f"p{t}").obj()]) for t in range(0, 3000, 10)])
    progress.attach(sim, run_end(plan, 3000.0))
    sim.run(plan, 3000.0)
    progress.close()
    # rich draws once when it starts and twice when it stops; every other frame is a throttled redraw
    throttled = len(_frames(out.getvalue())) - 3
    assert INTERVAL_SECONDS == 0.25
    assert 0 < throttled <= int(wall.t / INTERVAL_SECONDS) + 1


def test_the_cli_draws_on_a_terminal_and_not_with_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.json"
    plan = _plan()
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": plan.steps[0].create}))
    console, out = _terminal()
    monkeypatch.setattr(berth.cli, "_terminal_console", lambda: console)
    monkeypatch.setattr("berth.sim.progress.DELAY_SECONDS", 0.0)
    result = CliRunner().invoke(app, ["simulate", str(path), "--until", "5m"])
    assert result.exit_code == 0, result.stderr
    assert _frames(out.getvalue())[-1] == f"simulate {BAR} 5m0s / 5m0s bound 2 pending 1"

    console, out = _terminal()
    result = CliRunner().invoke(app, ["simulate", str(path), "--until", "5m", "--quiet"])
    assert result.exit_code == 0, result.stderr
    assert out.getvalue() == ""


def _on_pty(*args: str) -> tuple[int, str]:
    """Run ``berth`` with its standard error on a pseudo-terminal (standard output on a pipe): exit code and
    what reached the terminal."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "berth", *args],
            stdout=subprocess.DEVNULL,
            stderr=follower,
            env={**os.environ, "COLUMNS": "80"},
        )
        os.close(follower)
        follower = -1
        chunks: list[bytes] = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closes when the process ends
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = proc.wait(timeout=60)
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    return code, b"".join(chunks).decode()


def test_a_short_run_on_a_terminal_writes_nothing_to_it(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _plan().steps[0].create}))
    assert _on_pty("simulate", str(path), "--until", "1m") == (0, "")
    assert _on_pty("simulate", str(path), "--until", "1m", "--quiet") == (0, "")
