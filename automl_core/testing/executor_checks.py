"""Checks of an executor: results come back whole, limits are honoured where claimed, and
shutting down stops what is still running.

The evaluators here are module-level classes so that an executor running trials in other
processes can pickle them.
"""

from __future__ import annotations

import tempfile
import time
from concurrent.futures import wait
from dataclasses import dataclass
from pathlib import Path

from automl_core.contracts import Evaluator, Executor
from automl_core.testing.components import Component, NotApplicable, check
from automl_core.trial import Result, Status, Trial

EXECUTOR = "executor"
#: How long a check waits for results that should arrive at once.
PATIENCE_S = 120.0


class NumberedEvaluator(Evaluator):
    """Loss = the trial's id / 10, and the trial's config echoed in the metrics."""

    def evaluate(self, trial: Trial) -> Result:
        return Result(Status.OK, trial.id / 10, metrics={"echo": float(trial.config["x"])})


@dataclass
class SleepingEvaluator(Evaluator):
    """Sleeps ``seconds``, then leaves a file named after the trial in ``folder``: a trial
    that was stopped leaves none."""

    seconds: float
    folder: str

    def evaluate(self, trial: Trial) -> Result:
        time.sleep(self.seconds)
        (Path(self.folder) / f"trial-{trial.id}").write_text("finished")
        return Result(Status.OK, 0.0)


def _built(component: Component) -> Executor:
    executor = component.build()
    capacity = executor.capacity
    assert isinstance(capacity, int) and capacity >= 1, f"capacity {capacity!r}, expected >= 1"
    return executor


@check(EXECUTOR)
def check_executor_returns_each_result_to_its_trial(component: Component) -> None:
    """``submit`` returns a future per trial that resolves to that trial's result, with
    ``capacity`` trials in flight at once (the run loop keeps that many)."""
    executor = _built(component)
    try:
        count = max(2, 2 * executor.capacity)
        futures = {
            i: executor.submit(NumberedEvaluator(), Trial(i, {"x": i * 1.5})) for i in range(count)
        }
        _, waiting = wait(list(futures.values()), timeout=PATIENCE_S)
        assert not waiting, f"{len(waiting)} of {count} results did not arrive"
        for i, future in futures.items():
            result = future.result()
            assert result.status is Status.OK and result.loss == i / 10, f"trial {i}: {result}"
            assert result.metrics.get("echo") == i * 1.5, f"trial {i} got another's result"
    finally:
        executor.shutdown()


@check(EXECUTOR)
def check_executor_stops_a_trial_at_its_time_limit(component: Component) -> None:
    """An executor that claims to enforce limits (``enforces_limits``) ends a trial that
    outlasts ``set_limits(trial_time=...)`` with a TIMEOUT result, and the trial does not
    finish."""
    executor = _built(component)
    if not executor.enforces_limits:
        executor.shutdown()
        raise NotApplicable("the executor does not claim to enforce limits")
    with tempfile.TemporaryDirectory() as folder:
        try:
            executor.set_limits(1.0, None)
            future = executor.submit(SleepingEvaluator(30.0, folder), Trial(0, {}))
            result = future.result(timeout=PATIENCE_S)
        finally:
            executor.shutdown()
        assert result.status is Status.TIMEOUT, f"expected a TIMEOUT result, got {result.status}"
        assert not (Path(folder) / "trial-0").exists(), "the trial ran on past its limit"


@check(EXECUTOR)
def check_executor_shutdown_stops_running_trials(component: Component) -> None:
    """``shutdown`` while trials run stops them rather than waiting (the run's wall time
    has ended): a trial that would have finished 3 seconds later never does."""
    executor = _built(component)
    if not executor.enforces_limits:
        executor.shutdown()
        raise NotApplicable("the executor runs trials in the caller (it cannot stop them)")
    with tempfile.TemporaryDirectory() as folder:
        executor.submit(SleepingEvaluator(3.0, folder), Trial(0, {}))
        time.sleep(0.5)  # let it start
        executor.shutdown()
        time.sleep(4.0)  # past the moment it would have finished
        assert not (Path(folder) / "trial-0").exists(), "shutdown() let a running trial finish"
