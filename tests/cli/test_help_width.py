"""``--help`` is laid out for the terminal's width and never cut ("…" or "...") at 80 columns."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


def _help(columns: int, *command: str) -> str:
    """The help as a terminal ``columns`` wide shows it (click's test runner would force 80 columns)."""
    berth = Path(sys.executable).parent / "berth"
    env = {**os.environ, "COLUMNS": str(columns)}
    run = subprocess.run(
        [str(berth), *command, "--help"], capture_output=True, text=True, env=env, check=False
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("command", [(), ("simulate",), ("explain",), ("deschedule",), ("serve",), ("run",)])
def test_narrow_terminal_wraps_and_cuts_nothing(command: tuple[str, ...]) -> None:
    text = _help(80, *command)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    assert "..." not in re.sub(r"(paths[}\]]?|\[ARGS\])\.\.\.", "", text)


def test_simulate_option_help_is_whole() -> None:
    narrow = _flat(_help(80, "simulate"))
    for phrase in (
        "--scheduler-config <path> KubeSchedulerConfiguration file.",
        "--descheduling-interval <str> Virtual time between descheduling cycles. [default: 5m]",
        "-o, --output <table|wide|json|yaml> Output format. [default: table]",
        "--descheduler-policy <path> Run this DeschedulerPolicy (descheduler/v1alpha2) periodically.",
    ):
        assert phrase in narrow
    wide = _help(200, "simulate").splitlines()
    policy = next(line for line in wide if "--descheduler-policy" in line)
    assert (
        _flat(policy).strip()
        == "--descheduler-policy <path> Run this DeschedulerPolicy (descheduler/v1alpha2) periodically."
    )


def test_command_list_has_each_whole_summary() -> None:
    text = _flat(_help(80))
    assert (
        "explain Run a scenario and show, for one pod (or a Reservation's reserve pod), each node's Filter "
        "verdicts, every plugin's scores, the reservations it used or was refused by, and the choice."
    ) in text
