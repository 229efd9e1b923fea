"""Checks of an executor: results come back whole, limits are honoured where claimed, and
shutting down stops what is still running.

The evaluators here are module-level classes so that an executor running trials in other
processes can pickle them.
"""

from __future__ import annotations

import os
import tempfile
import time
from concurrent.futures import wait
from dataclasses import dataclass
from pathlib import Path

from automl_core.contracts import Evaluator, Executor
from automl_core.trial import Result, Status, Trial
from automl_engine.testing.components import Component, NotApplicable, check, describe_kind

EXECUTOR = "executor"
describe_kind(EXECUTOR, "Executors")
#: How long a check waits for results that should arrive at once.
PATIENCE_S = 120.0


class NumberedEvaluator(Evaluator):
    """Loss = the trial's id / 10, and the trial's config echoed in the metrics."""

    def evaluate(self, trial: Trial) -> Result:
        return Result(Status.OK, trial.id / 10, metrics={"echo": float(trial.config["x"])})


@dataclass
class SleepingEvaluator(Evaluator):
    """Leaves ``started-N`` (holding the id of the process running it) in ``folder``, sleeps
    ``seconds``, then leaves ``trial-N``: a trial that was stopped leaves the first file and
    not the second."""

    seconds: float
    folder: str

    def evaluate(self, trial: Trial) -> Result:
        (Path(self.folder) / f"started-{trial.id}").write_text(str(os.getpid()))
        time.sleep(self.seconds)
        (Path(self.folder) / f"trial-{trial.id}").write_text("finished")
        return Result(Status.OK, 0.0)


@dataclass
class GreedyEvaluator(Evaluator):
    """Allocates ``megabytes`` and touches every page of it."""

    megabytes: int

    def evaluate(self, trial: Trial) -> Result:
        block = bytearray(self.megabytes * 2**20)
        block[::4096] = b"x" * len(block[::4096])
        return Result(Status.OK, float(len(block)))


def _built(component: Component) -> Executor:
    executor = component.build()
    capacity = executor.capacity
    assert isinstance(capacity, int) and capacity >= 1, f"capacity {capacity!r}, expected >= 1"
    return executor


def _limited(component: Component) -> Executor:
    executor = _built(component)
    if not executor.enforces_limits:
        executor.shutdown()
        raise NotApplicable("the executor does not claim to enforce limits (enforces_limits)")
    return executor


def _wait_for(path: Path, what: str) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not path.exists():
        assert time.monotonic() < deadline, f"{what} within {PATIENCE_S:.0f}s"
        time.sleep(0.05)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, killed but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:  # no /proc (macOS): the signal's answer stands
        return True


def _assert_stopped(folder: Path, what: str) -> None:
    """The trial in ``folder`` started, its process is gone (waited for, up to
    :data:`PATIENCE_S`), and it never finished: the mechanism, not a race against a sleep."""
    started = folder / "started-0"
    assert started.exists(), "the trial never started"
    pid = int(started.read_text())
    deadline = time.monotonic() + PATIENCE_S
    while process_alive(pid):
        assert pid != os.getpid(), f"{what}: the trial runs in the caller's process"
        assert time.monotonic() < deadline, f"{what}: its process {pid} still runs"
        time.sleep(0.05)
    assert not (folder / "trial-0").exists(), f"{what}: the trial finished"


@check(EXECUTOR)
def check_executor_returns_each_result_to_its_trial(component: Component) -> None:
    """``submit`` returns a future per trial that resolves to that trial's result, whatever
    the order they finish in; twice ``capacity`` trials are submitted at once, as the run
    loop may when results come back together."""
    executor = _built(component)
    evaluator = NumberedEvaluator()  # one evaluator for the run, as the run loop hands it
    try:
        count = 2 * executor.capacity
        futures = {i: executor.submit(evaluator, Trial(i, {"x": i * 1.5})) for i in range(count)}
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
    outlasts ``set_limits(trial_time=1)`` with a TIMEOUT result, and the trial does not go
    on running: its process ends without the trial finishing."""
    executor = _limited(component)
    with tempfile.TemporaryDirectory() as folder:
        try:
            executor.set_limits(1.0, None)
            future = executor.submit(SleepingEvaluator(3.0, folder), Trial(0, {}))
            result = future.result(timeout=PATIENCE_S)
            assert result.status is Status.TIMEOUT, f"expected TIMEOUT, got {result.status}"
            _assert_stopped(Path(folder), "at its time limit")
        finally:
            executor.shutdown()


@check(EXECUTOR)
def check_executor_reports_a_memout_at_its_memory_limit(component: Component) -> None:
    """A trial that allocates 4 GB under ``set_limits(trial_memory_mb=1536)`` ends with a
    MEMOUT result (not a crash of the executor), and the next trial runs."""
    executor = _limited(component)
    try:
        executor.set_limits(None, 1536)
        result = executor.submit(GreedyEvaluator(4096), Trial(0, {})).result(timeout=PATIENCE_S)
        small = executor.submit(GreedyEvaluator(8), Trial(1, {})).result(timeout=PATIENCE_S)
    finally:
        executor.shutdown()
    assert result.status is Status.MEMOUT, f"expected a MEMOUT result, got {result.status}"
    assert small.status is Status.OK, f"the trial after the memory-out: {small.status}"


@check(EXECUTOR)
def check_executor_shutdown_stops_running_trials(component: Component) -> None:
    """``shutdown`` while a trial runs stops it rather than waiting (the run's wall time
    has ended): the trial, seen started, has its process ended and never finishes."""
    executor = _limited(component)
    with tempfile.TemporaryDirectory() as folder:
        try:
            executor.submit(SleepingEvaluator(3.0, folder), Trial(0, {}))
            _wait_for(Path(folder) / "started-0", "the trial did not start")
        finally:
            executor.shutdown()
        _assert_stopped(Path(folder), "after shutdown()")
