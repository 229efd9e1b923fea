"""The search loop: ask, execute, store, tell, until a budget ends.

It keeps ``executor.capacity`` trials in flight and stops at the first budget reached
(trials or wall time), when the strategy has nothing left to ask, or when an observer asks
to stop. A strategy that raises ends the loop with a :class:`StrategyError`; everything
already evaluated is in the history by then.
"""

from __future__ import annotations

import time
import traceback
import warnings
from concurrent.futures import FIRST_COMPLETED, Future, wait

from automl_core.contracts import SearchStrategy
from automl_core.space import SearchSpace
from automl_core.trial import Candidate, Result, Status, Trial
from automl_engine.compose import Setup
from automl_engine.history import RunHistory, StoredTrial, rank_key
from automl_engine.observers import Observers
from automl_engine.proposals import Proposals, call_plugin
from automl_engine.run_folder import ELAPSED, RunInfo
from automl_engine.wall_time import Budget, finish_reserve


def search(
    setup: Setup,
    history: RunHistory,
    observers: Observers,
    info: RunInfo,
    requeued: list[Trial] | None = None,
    started: float | None = None,
) -> str:
    """Ask, execute, store and tell until a budget ends or an observer asks to stop; returns
    why it stopped.

    ``requeued`` are trials of an interrupted run that never finished: they run first, under
    their own ids, before the strategy is asked for new ones. A stop asked by an observer is
    graceful: nothing new is asked, the trials running finish and are stored. ``started``
    (a ``time.monotonic()`` value) is when the run began: its wall time counts from there.
    """
    recipe = setup.recipe
    budget = Budget(
        recipe.budget.trials, recipe.budget.wall_time, history.get_meta(ELAPSED, 0.0), started
    )
    best = next(iter(history.best(1)), None)
    budget.keep_back(finish_reserve(setup, history, best, budget))
    evaluator = setup.task.evaluator
    in_flight: dict[Future[Result], Trial] = {}
    waiting = list(requeued or [])
    asked = history.count()
    stopped = ""
    while True:
        while len(in_flight) < max(1, setup.executor.capacity) and not stopped:
            if waiting:
                trial = waiting.pop(0)
            else:
                stopped = budget.exhausted(asked) or ""
                if stopped:
                    break
                asking = time.monotonic()
                candidate = setup.proposals.ask()
                budget.record_ask(time.monotonic() - asking)
                if candidate is None:
                    stopped = setup.proposals.ended
                    break
                trial = Trial.from_candidate(asked, candidate)
                asked += 1
            history.start(trial)
            in_flight[setup.executor.submit(evaluator, trial)] = trial
            observers.trial_start(info, trial)
        if not in_flight:
            _record_search_end(history, budget)
            return stopped
        done = {future for future in in_flight if future.done()}  # a sequential executor's
        if not done:
            done, _ = wait(
                list(in_flight), timeout=budget.remaining_seconds(), return_when=FIRST_COMPLETED
            )
        if not done:  # wall time ran out with trials still running
            for future, trial in in_flight.items():
                future.cancel()
                history.finish(
                    trial, Result.failure(Status.TIMEOUT, "stopped at the run's wall time")
                )
            _record_search_end(history, budget)
            return "wall-time budget reached"
        for future in done:
            trial = in_flight.pop(future)
            result = _result_of(future)
            history.finish(trial, result, asked, meta=budget.elapsed_to_record())
            setup.task.trial_stored(history)
            finished = StoredTrial.of(trial, result)
            improved = finished.ranks and (best is None or rank_key(finished) < rank_key(best))
            if improved:
                best = finished
            if improved or budget.reserve_is_stale():
                budget.keep_back(finish_reserve(setup, history, best, budget))
            tell = setup.strategy.tell
            call_plugin("search strategy", "tell", tell, trial, result.without_predictions())
            stopped = stopped or observers.trial_end(info, trial, result) or ""


#: The history's record of when the search ended and what it left for finishing.
SEARCH_END = "search_end"


def _record_search_end(history: RunHistory, budget: Budget) -> None:
    """When the search ended (seconds into the run) and the seconds it had kept back for
    finishing: with the summary's elapsed time, where a wall-time budget went."""
    history.set_meta(ELAPSED, budget.elapsed())
    history.set_meta(
        SEARCH_END,
        {
            "elapsed": round(budget.elapsed(), 3),
            "reserved": round(budget.reserve, 3),
            "at": time.time(),
        },
    )


def replay(setup: Setup, history: RunHistory) -> list[Trial]:
    """Bring a fresh strategy to where the interrupted run's was, and return the trials that
    were running when it stopped, to be run again.

    The strategy is called as the interrupted one was (:func:`replay_calls`): a strategy
    that is deterministic given its seed then proposes after the resume exactly what it
    would have proposed uninterrupted. A history written before the calls' order was kept
    is replayed by its results only, in trial order."""
    stored = history.trials()
    told = sorted((t for t in stored if t.tell_order is not None), key=lambda t: t.tell_order or 0)
    if told:
        differed = replay_calls(
            setup.proposals,
            [t.trial for t in stored],
            [(t.trial, t.result(), t.asked_at_tell or 0) for t in told],
        )
        if differed:
            warnings.warn(
                f"on replay, the search strategy proposed other trials than the interrupted "
                f"run's ({len(differed)}, the first trial {differed[0]}): it is not "
                "deterministic given its seed, or changed since; it goes on from the results",
                stacklevel=3,
            )
    untold = [t for t in stored if t.finished and t.tell_order is None]
    for trial in untold:  # cut at the wall time, or from an older history: results only
        call_plugin("search strategy", "tell", setup.strategy.tell, trial.trial, trial.result())
    for trial in stored:  # whatever the replay proposed, the run never repeats one of these
        setup.proposals.mark_tried(trial.trial)
    history.set_meta("resumed_at", [*history.get_meta("resumed_at", []), time.time()])
    return [t.trial for t in history.running()]


def replay_calls(
    proposals: Proposals,
    asked: list[Trial],
    told: list[tuple[Trial, Result, int]],
) -> list[int]:
    """Call the strategy behind ``proposals`` as an interrupted run did: ``asked`` are its
    trials in the order they were asked for, ``told`` the results in the order they were
    told, each with how many trials had been asked by then. The asks are made again (the
    warm start served as before, the strategy's compared with the trials asked) and each
    result told after the same asks as before; then the asks of the trials still running.
    Returns the ids of the trials whose ask proposed something else this time."""
    strategy, space = proposals.strategy, proposals.space
    differed: list[int] = []
    position = 0
    exhausted = False

    def ask_until(count: int) -> None:
        nonlocal position, exhausted
        while position < min(count, len(asked)):
            original = asked[position]
            position += 1
            if exhausted:
                differed.append(original.id)
                continue
            candidate = proposals.ask()
            exhausted = candidate is None
            if candidate is None or not _same(space, candidate, original):
                differed.append(original.id)

    for trial, result, asked_before in told:
        ask_until(asked_before)
        call_plugin("search strategy", "tell", strategy.tell, trial, result)
    ask_until(len(asked))
    return differed


def _same(space: SearchSpace, candidate: Candidate, trial: Trial) -> bool:
    return candidate.budget == trial.budget and space.key(candidate.config) == space.key(
        trial.config
    )


def close_strategy(strategy: SearchStrategy) -> None:
    """``strategy.close()``; a failure there is logged, not allowed to lose the run."""
    try:
        strategy.close()
    except Exception:
        warnings.warn(
            f"the search strategy failed to close:\n{traceback.format_exc()}", stacklevel=2
        )


def _result_of(future: Future[Result]) -> Result:
    try:
        return future.result()
    except Exception as error:  # the executor itself failed, not the pipeline
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        return Result.failure(Status.CRASHED, f"executor error: {text}")
