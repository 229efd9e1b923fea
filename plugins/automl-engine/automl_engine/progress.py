"""What a run tells its user while it searches, as a lifecycle-hook observer.

It is registered for the duration of one run by the CLI, like any plugin would be. On a
terminal it draws a live progress line; when standard error is not a terminal (a batch
job's log, CI, a pipe) a redrawn line would be noise or nothing at all, so it writes plain
lines instead: one per trial (or per ``every`` trials, and at each new best), each with the
time, the trial, its status, its loss and the best so far, so that the log says what
happened. ``automl run --quiet`` registers no display at all.
"""

from __future__ import annotations

import math
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn

from automl_core.hookspecs import hookimpl
from automl_core.trial import Result, Trial

if TYPE_CHECKING:
    from automl_engine.run_folder import RunInfo, RunSummary


class ProgressDisplay:
    """Trials done, best loss so far and time left: a live line on a terminal, plain log
    lines (:class:`TrialLog`) otherwise."""

    def __init__(self, console: Console | None = None, every: int = 1) -> None:
        self.console = console or Console(stderr=True)
        self.enabled = self.console.is_terminal and sys.stderr.isatty()
        self.log = None if self.enabled else TrialLog(every=every)
        self.best = math.inf
        self.done = 0
        self.progress: Progress | None = None
        self.task_id: Any = None

    @hookimpl
    def on_run_start(self, run: RunInfo) -> None:
        if self.log is not None:
            self.log.on_run_start(run)
        self.done, self.best = resumed_from(run)
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
        best = f"{self.best:.4f}" if math.isfinite(self.best) else "-"
        self.task_id = self.progress.add_task(
            run.dataset, total=total, completed=self.done, best=best, left=""
        )
        self.run = run

    @hookimpl
    def on_trial_end(self, run: RunInfo, trial: Trial, result: Result) -> None:
        if self.log is not None:
            self.log.on_trial_end(run, trial, result)
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
    def on_run_end(self, run: RunInfo, summary: RunSummary) -> None:
        if self.progress is not None:
            self.progress.stop()


def resumed_from(run: Any) -> tuple[int, float]:
    """(trials finished, best loss) before this session of the run: a resumed run's
    (:class:`~automl_engine.run_folder.RunInfo`), else none and infinity."""
    best = run.best_before
    return int(run.trials_before), math.inf if best is None else float(best)


class TrialLog:
    """Plain lines for a log file: one when the run starts, then one per ``every`` trials
    and one at each new best (what a reader of the log looks for first), e.g.
    ``[   12.3s] trial 17 ok loss 0.2143 best 0.1905``. Written as each trial ends and
    flushed, so that ``tail -f`` follows the run."""

    def __init__(self, stream: TextIO | None = None, every: int = 1) -> None:
        if every < 1:
            raise ValueError(f"every must be at least 1, got {every}")
        self.stream = stream
        self.every = every
        self.best = math.inf
        self.done = 0

    def on_run_start(self, run: RunInfo) -> None:
        budgets = [f"{run.budget_trials} trials" if run.budget_trials else ""]
        budgets.append(f"{run.budget_seconds:g}s" if run.budget_seconds else "")
        budget = ", ".join(b for b in budgets if b) or "no budget"
        self._write(f"run {run.run_dir}: {run.dataset} ({run.task}), metric {run.metric}, {budget}")
        self.done, self.best = resumed_from(run)
        if self.done:
            best = f"{self.best:.4f}" if math.isfinite(self.best) else "-"
            self._write(f"resumed after {self.done} finished trials, best {best}")

    def on_trial_end(self, run: RunInfo, trial: Trial, result: Result) -> None:
        self.done += 1
        improved = result.ok and result.loss < self.best
        if improved:
            self.best = result.loss
        if not improved and self.done % self.every:
            return
        loss = f"{result.loss:.4f}" if math.isfinite(result.loss) else "-"
        best = f"{self.best:.4f}" if math.isfinite(self.best) else "-"
        budget = "" if trial.budget is None else f" budget {trial.budget:.4g}"
        seconds = time.time() - run.started_at
        self._write(
            f"[{seconds:8.1f}s] trial {trial.id}{budget} {result.status.value} "
            f"loss {loss} best {best}"
        )

    def _write(self, line: str) -> None:
        stream = self.stream or sys.stderr  # looked up late: pytest swaps it per test
        print(line, file=stream, flush=True)
