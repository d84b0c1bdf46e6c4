"""The berth command raises Python's garbage-collector thresholds before it runs; berth simulate, a run that ends
by itself, raises the middle generation's further."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

import pytest

from berth.cli import main
from berth.gc_policy import BATCH_THRESHOLDS, THRESHOLDS
from berth.sim.engine import Simulation


def test_the_berth_command_sets_the_collector_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    monkeypatch.setattr(sys, "argv", ["berth", "version"])
    try:
        with pytest.raises(SystemExit) as done:
            main()
        assert done.value.code == 0
        assert gc.get_threshold() == (20_000, 20, 10) == THRESHOLDS
    finally:
        gc.set_threshold(*before)


def test_berth_simulate_collects_the_middle_generation_rarely_while_it_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "node.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', pods: '10'}}\n"
    )
    during: list[tuple[int, ...]] = []
    run = Simulation.run

    def watched_run(self: Simulation, *args: Any, **kwargs: Any) -> Any:
        during.append(gc.get_threshold())
        return run(self, *args, **kwargs)

    monkeypatch.setattr(Simulation, "run", watched_run)
    before = gc.get_threshold()
    monkeypatch.setattr(sys, "argv", ["berth", "simulate", str(manifest), "-q"])
    try:
        with pytest.raises(SystemExit) as done:
            main()
        assert done.value.code == 0
        assert during == [(20_000, 1_000, 10)] and BATCH_THRESHOLDS == (20_000, 1_000, 10)
        assert gc.get_threshold() == THRESHOLDS  # the berth command's, again once the run is over
        assert "n1" in capsys.readouterr().out
    finally:
        gc.set_threshold(*before)
