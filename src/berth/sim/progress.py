"""A progress bar for long ``berth simulate`` runs: virtual time reached of the run's end, pods bound, pods
pending in the scheduling queue.

`SimProgress` follows a `Simulation` through two cheap hooks (every scheduling decision and every jump of the
virtual clock). Each hook only compares the wall clock with the next due time, so the run pays almost nothing:
nothing is shown before ``delay`` seconds of wall time (short runs print nothing at all), and then the bar is
redrawn at most once per ``interval``. Drawing is rich's, on the console given (standard error in the CLI,
which shows it only when that is a terminal).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn

from berth.api.duration import go_duration

__all__ = ["DELAY_SECONDS", "INTERVAL_SECONDS", "SimProgress"]

DELAY_SECONDS = 1.0
"""Wall seconds before the bar first shows: a shorter run shows none."""
INTERVAL_SECONDS = 0.25
"""Wall seconds between redraws: four a second (a redraw costs rich about a millisecond)."""


class SimProgress:
    """Shows a simulation's progress on `console` while it runs (see `attach` and `close`)."""

    def __init__(
        self,
        console: Console,
        *,
        delay: float | None = None,
        interval: float | None = None,
        wall: Callable[[], float] = time.monotonic,
    ) -> None:
        """Draw on `console` after `delay` wall seconds, then every `interval` at most (defaults:
        `DELAY_SECONDS`, `INTERVAL_SECONDS`); `wall` is the wall clock (injectable for tests)."""
        self.console = console
        self.delay = DELAY_SECONDS if delay is None else delay
        self.interval = INTERVAL_SECONDS if interval is None else interval
        self.wall = wall
        self.sim: Any = None
        self.end = 0.0
        self._due = wall() + self.delay
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._chained: Callable[..., None] | None = None

    def attach(self, sim: Any, end: float) -> None:
        """Follow `sim` (a `Simulation`) whose run ends at virtual time `end` (seconds)."""
        self.sim = sim
        self.end = end
        self._chained = sim.scheduler.on_decision
        sim.scheduler.on_decision = self._on_decision
        sim.on_tick = self.tick

    def _on_decision(self, *args: Any) -> None:
        if self._chained is not None:
            self._chained(*args)
        if self.wall() >= self._due:
            self._draw()

    def tick(self) -> None:
        """The run made progress: redraw if one is due."""
        if self.wall() >= self._due:
            self._draw()

    def counts(self) -> tuple[float, int, int]:
        """(virtual seconds reached, pods bound, pods pending in the scheduling queue) now."""
        sim = self.sim
        return sim.clock.now(), sim.scheduler.stats.scheduled, len(sim.scheduler.queue)

    def _draw(self) -> None:
        now, bound, pending = self.counts()
        reached = f"{go_duration(now)} / {go_duration(self.end)}"
        done = int(min(now, self.end) * 1000)  # milliseconds: rich counts steps in integers
        if self._progress is None:
            self._progress = Progress(
                TextColumn("simulate"),
                BarColumn(),
                TextColumn("{task.fields[reached]}"),
                TextColumn("bound {task.fields[bound]}"),
                TextColumn("pending {task.fields[pending]}"),
                console=self.console,
                auto_refresh=False,  # drawn from the run's own hooks: no thread
                redirect_stdout=False,  # the run's own output goes where it would go without a bar
                redirect_stderr=False,
            )
            self._task = self._progress.add_task(
                "simulate",
                total=max(int(self.end * 1000), 1),
                completed=done,
                reached=reached,
                bound=bound,
                pending=pending,
            )
            self._progress.start()
        else:
            assert self._task is not None
            self._progress.update(self._task, completed=done, reached=reached, bound=bound, pending=pending)
        self._progress.refresh()
        self._due = self.wall() + self.interval

    @property
    def shown(self) -> bool:
        """Whether the bar has been drawn (the run lasted longer than the delay)."""
        return self._progress is not None

    def close(self) -> None:
        """The run is over: draw the final frame (only if the bar was shown) and stop following the run."""
        if self._progress is not None:
            self._draw()
            self._progress.stop()
        if self.sim is not None:
            self.sim.scheduler.on_decision = self._chained
            self.sim.on_tick = None
