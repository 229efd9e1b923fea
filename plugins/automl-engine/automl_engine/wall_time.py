"""The run's wall-time arithmetic, in one place: when the run must end, what its set-up may
take, when the search stops asking (keeping back what finishing needs), and how much it keeps
back. Every clock here is ``time.monotonic()``; the run's wall time counts from its start
(the command's or ``fit``'s), its set-up included.

- :func:`run_deadlines`: the end of the run, and the deadline its set-up is timed against;
- :class:`SetupClock` / :class:`WallTimeTooShort`: the set-up's stages, stopped when they
  leave no time to search;
- :func:`time_left`: the seconds a strategy is told it has (``SearchContext.time_budget``);
- :class:`Budget`: the search's trials and seconds, less the finishing reserve;
- :func:`finish_reserve`: the seconds kept back for finishing (the refit's deadline is the
  run's end, :func:`run_deadlines`).
"""

from __future__ import annotations

import math
import time
from collections import deque
from typing import TYPE_CHECKING

from automl_core.errors import AutoMLError
from automl_engine.finishing import ENSEMBLE_POOL, FINISH_OVERHEAD_S
from automl_engine.history import RunHistory, StoredTrial
from automl_engine.run_folder import ELAPSED

if TYPE_CHECKING:
    from automl_engine.compose import Setup


def run_deadlines(
    started: float, wall_time: float | None, spent: float, deadline: float | None
) -> tuple[float | None, float | None]:
    """(the run's end, the deadline its set-up is timed against). The end is the earlier of
    the caller's ``deadline`` and ``started`` plus the wall time less what a resumed run
    already ``spent``; finishing refits by it. A resumed run whose time was already spent
    only finishes: its set-up is not timed (None)."""
    run_deadline = None if wall_time is None else started + wall_time - spent
    end = min((d for d in (deadline, run_deadline) if d is not None), default=None)
    timed = run_deadline if wall_time is None or spent < wall_time else None
    return end, timed


class SetupClock:
    """Times the stages of a run's set-up, and stops the run when they leave no time to
    search in its wall time (:data:`~automl_engine.finishing.FINISH_OVERHEAD_S` at least
    must be left for after the search)."""

    def __init__(self, deadline: float | None, wall_time: float | None, spent: float = 0.0) -> None:
        self.deadline, self.wall_time = deadline, wall_time
        self.laps: dict[str, float] = {}
        self._last = time.monotonic()
        #: when the run's wall time started (the command's or ``fit``'s start)
        self._started = (
            None if deadline is None or wall_time is None else deadline - wall_time + spent
        )

    def lap(self, stage: str) -> None:
        now = time.monotonic()
        self.laps[stage] = round(now - self._last, 3)
        self._last = now
        if self.deadline is not None and now + FINISH_OVERHEAD_S > self.deadline:
            assert self.wall_time is not None and self._started is not None
            raise WallTimeTooShort(self.wall_time, now - self._started, self.laps)


class WallTimeTooShort(AutoMLError):
    """The run's wall time ended, or left less than a run needs after its search, before
    the first trial. ``elapsed`` is the seconds since the wall time started, ``laps`` what
    each stage of the set-up took (what came before the set-up is the rest)."""

    def __init__(self, wall_time: float, elapsed: float, laps: dict[str, float]) -> None:
        self.wall_time, self.elapsed, self.laps = wall_time, elapsed, dict(laps)
        super().__init__(
            f"budget.wall_time ({wall_time:g}s) is too short: {self.detail()}. Raise "
            "budget.wall_time, or leave out the slowest stage (meta-features, warm start, "
            "resampling: auto)"
        )

    def detail(self) -> str:
        """What the time went on, in words that do not name the recipe key."""
        before = self.elapsed - sum(self.laps.values())
        stages = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in self.laps.items())
        return (
            f"{self.elapsed:.2f}s had gone before the first trial ({before:.2f}s of start-up "
            f"before the set-up, then {stages}), and a run keeps {FINISH_OVERHEAD_S:g}s after "
            f"its search for finishing, so no trial could start in {self.wall_time:g}s"
        )


def time_left(wall_time: float | None, spent: float, deadline: float | None = None) -> float | None:
    """The seconds left to a run that already searched ``spent`` of its ``wall_time``
    (None: no wall time): until ``deadline`` when there is one, so that the set-up so far
    (meta-data, meta-features, warm start) is not counted as search time."""
    if wall_time is None:
        return None
    if deadline is not None:
        return max(0.0, deadline - time.monotonic())
    return max(0.0, wall_time - spent)


#: Near the end of the search (less time left than is kept back for finishing), the
#: reserve is computed again after a trial at most this often, as a share of the wall time:
#: an ensemble's likely members change with every trial, not only with a new best.
RESERVE_REFRESH_SHARE = 0.02

#: How many of the strategy's latest asks the budget remembers: it stops asking when the
#: longest of them would not end within the wall time left.
ASKS_REMEMBERED = 5

#: The run's elapsed time is stored with a result at most this often (seconds).
ELAPSED_RECORD_S = 0.5


class Budget:
    """Counts trials and seconds; says when the search must stop asking.

    ``seconds`` is the whole run's wall time, counted from ``started`` (a
    ``time.monotonic()`` value: when the run began, so its set-up counts), plus ``spent``
    seconds of an interrupted run. The search stops ``reserve`` seconds before its end,
    the time the run needs after the search (:meth:`~automl_engine.tasks.Task.time_to_finish`),
    and does not ask the strategy again when its recent asks took longer than what is left
    (a surrogate that takes seconds to fit would otherwise run past the wall time).
    """

    def __init__(
        self,
        trials: int | None,
        seconds: float | None,
        spent: float = 0.0,
        started: float | None = None,
    ) -> None:
        self.trials = trials
        self.seconds = seconds
        self.started = (time.monotonic() if started is None else started) - spent
        self.reserve = 0.0
        self.reserved_at = 0.0
        self._asks: deque[float] = deque(maxlen=ASKS_REMEMBERED)
        self._recorded = -math.inf  # when the elapsed time was last stored

    def elapsed_to_record(self) -> dict[str, float] | None:
        """The run's elapsed seconds, to store with a result (what a resumed run counts as
        spent), at most every :data:`ELAPSED_RECORD_S`: a run killed at once under-counts
        by less than that, and cheap trials write one statement each, not four."""
        elapsed = self.elapsed()
        if elapsed - self._recorded < ELAPSED_RECORD_S:
            return None
        self._recorded = elapsed
        return {ELAPSED: elapsed}

    def record_ask(self, seconds: float) -> None:
        """How long the strategy's latest ask took."""
        self._asks.append(seconds)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def remaining_seconds(self) -> float | None:
        """Seconds the search may still use (None: no wall time)."""
        if self.seconds is None:
            return None
        return max(0.0, self.seconds - self.reserve - self.elapsed())

    def keep_back(self, seconds: float) -> None:
        """Stop the search ``seconds`` before the end, from now on."""
        self.reserve = seconds
        self.reserved_at = self.elapsed()

    def reserve_is_stale(self) -> bool:
        """Whether the reserve should be computed again after a trial that is not a new
        best: near the end of the search, and not too soon after the last time."""
        remaining = self.remaining_seconds()
        if remaining is None or self.seconds is None or remaining > self.reserve:
            return False
        return self.elapsed() - self.reserved_at >= RESERVE_REFRESH_SHARE * self.seconds

    def exhausted(self, asked: int) -> str | None:
        if self.trials is not None and asked >= self.trials:
            return "trial budget reached"
        remaining = self.remaining_seconds()
        if remaining == 0.0 or (remaining is not None and remaining < max(self._asks, default=0)):
            return "wall-time budget reached"
        return None


def finish_reserve(
    setup: Setup, history: RunHistory, best: StoredTrial | None, budget: Budget
) -> float:
    """The seconds the search leaves for finishing: what finishing ``best`` takes
    (:meth:`~automl_engine.tasks.Task.time_to_finish`), or, when that does not fit in what is
    left of the run, what finishing the best trial that does fit takes: the final model
    will be that trial alone (:func:`~automl_engine.finishing.refit_fallback`: no ensemble is
    built around a fallback), and stopping at once would waste the time until then.

    A fallback's time is its own (``others=[]``), so the ensembler is asked once, for
    ``best``: asking it again around each candidate fallback -- up to 49, three selections
    each -- kept the loop 8-11 s busy after its last trial, ending 2.4-8.2 s past a 60 s
    budget (issue 44's regression grid)."""
    ranked = history.best(ENSEMBLE_POOL) if best is not None else []
    reserve = setup.task.time_to_finish(best, setup.recipe, ranked, history)
    if budget.seconds is None or best is None:
        return reserve
    left = budget.seconds - budget.elapsed()
    if reserve <= left:
        return reserve
    for trial in ranked[1:]:
        fallback = setup.task.time_to_finish(trial, setup.recipe, [], history)
        if fallback <= left:
            return fallback
    return reserve
