"""A live progress line for terminal runs, as a lifecycle-hook observer.

It is registered for the duration of one run by the CLI, like any plugin would be, and stays
silent when standard error is not a terminal (CI logs, pipes).
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn

from automl_core.hookspecs import hookimpl


class ProgressDisplay:
    """Trials done, best loss so far and time left."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.enabled = self.console.is_terminal and sys.stderr.isatty()
        self.best = math.inf
        self.done = 0
        self.progress: Progress | None = None
        self.task_id: Any = None

    @hookimpl
    def on_run_start(self, run: Any) -> None:
        if not self.enabled:
            return
        total = run.budget_trials
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed} trials"),
            TextColumn("best loss {task.fields[best]}"),
            TextColumn("{task.fields[left]}"),
            console=self.console,
            transient=False,
        )
        self.progress.start()
        self.task_id = self.progress.add_task(run.dataset, total=total, best="-", left="")
        self.run = run

    @hookimpl
    def on_trial_end(self, run: Any, trial: Any, result: Any) -> None:
        self.done += 1
        if result.ok and result.loss < self.best:
            self.best = result.loss
        if self.progress is not None:
            self.progress.update(
                self.task_id, completed=self.done, best=f"{self.best:.4f}", left=self._time_left()
            )

    def _time_left(self) -> str:
        if self.run.budget_seconds is None:
            return ""
        left = max(0.0, self.run.budget_seconds - (time.time() - self.run.started_at))
        return f"{left:.0f}s left"

    @hookimpl
    def on_run_end(self, run: Any, summary: Any) -> None:
        if self.progress is not None:
            self.progress.stop()
