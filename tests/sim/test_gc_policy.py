"""The berth command raises Python's garbage-collector thresholds before it runs; berth simulate, a run that ends
by itself, runs without the cyclic collector and ends without freeing its heap."""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from berth.cli import main
from berth.gc_policy import THRESHOLDS
from berth.sim.engine import Simulation


class _Exited(Exception):
    """os._exit, caught: the process would have ended here with ``status``."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _catch_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_exit(status: int) -> None:
        raise _Exited(status)

    monkeypatch.setattr(os, "_exit", fake_exit)


def _run_main(monkeypatch: pytest.MonkeyPatch, *argv: str) -> _Exited:
    """Run the berth command with ``argv`` in this process; how it would have ended the process."""
    monkeypatch.setattr(sys, "argv", ["berth", *argv])
    before = gc.get_threshold()
    try:
        with pytest.raises(_Exited) as done:
            main()
    finally:
        gc.set_threshold(*before)
    return done.value


NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', pods: '10'}}\n"


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


def test_berth_simulate_runs_without_the_cyclic_collector_and_leaves_its_survivors_old(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "node.yaml"
    pods = "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec: {{containers: [{{name: c}}]}}\n"
        for i in range(300)
    )
    manifest.write_text(NODE.replace("pods: '10'", "pods: '300'") + pods)
    _catch_exit(monkeypatch)
    during: list[tuple[bool, tuple[int, ...]]] = []
    run = Simulation.run

    collections_after_the_run: list[int] = []

    def watched_run(self: Simulation, *args: Any, **kwargs: Any) -> Any:
        during.append((gc.isenabled(), gc.get_threshold()))
        try:
            return run(self, *args, **kwargs)
        finally:
            gc.callbacks.append(seen)

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections_after_the_run.append(info["generation"])

    monkeypatch.setattr(Simulation, "run", watched_run)
    before = gc.get_threshold()
    monkeypatch.setattr(sys, "argv", ["berth", "simulate", str(manifest), "-q"])
    try:
        with pytest.raises(_Exited) as done:
            main()
        enabled = gc.isenabled()
    finally:
        if seen in gc.callbacks:
            gc.callbacks.remove(seen)
        gc.set_threshold(*before)
    assert done.value.status == 0
    assert during == [(False, THRESHOLDS)]
    assert enabled  # on again once the run is over, with the run's survivors out of the young generation: the
    assert collections_after_the_run == []  # output and the exit allocate without a collection walking them
    assert "n1" in capsys.readouterr().out


def test_berth_simulate_ends_without_freeing_its_heap_once_its_output_is_flushed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "node.yaml"
    manifest.write_text(NODE)
    _catch_exit(monkeypatch)
    flushed: list[str] = []
    monkeypatch.setattr(sys.stdout, "flush", lambda: flushed.append("stdout"))
    done = _run_main(monkeypatch, "simulate", str(manifest), "-q", "-o", "json")
    assert done.status == 0
    assert flushed and flushed[-1] == "stdout"  # flushed before the end
    assert json.loads(capsys.readouterr().out)["items"][0]["metadata"]["name"] == "n1"


def test_a_refused_berth_simulate_ends_at_once_with_status_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "node.yaml"
    manifest.write_text(NODE.replace("n1", "N_1"))
    _catch_exit(monkeypatch)
    done = _run_main(monkeypatch, "simulate", str(manifest), "-q")
    assert done.status == 2
    assert "N_1" in capsys.readouterr().err


def test_a_command_after_a_batch_run_in_the_same_process_ends_the_usual_way(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    manifest = tmp_path / "node.yaml"
    manifest.write_text(NODE)
    _catch_exit(monkeypatch)
    before = gc.get_threshold()
    try:
        monkeypatch.setattr(sys, "argv", ["berth", "simulate", str(manifest), "-q"])
        with pytest.raises(_Exited):
            main()
        monkeypatch.setattr(sys, "argv", ["berth", "version"])
        with pytest.raises(SystemExit) as done:
            main()
    finally:
        gc.set_threshold(*before)
    assert done.value.code == 0
