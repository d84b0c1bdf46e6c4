"""The berth command raises Python's garbage-collector thresholds before it runs."""

from __future__ import annotations

import gc
import sys

import pytest

from berth.cli import main
from berth.gc_policy import THRESHOLDS


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
