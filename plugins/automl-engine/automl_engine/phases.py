"""The run's two phases as hooks: the search loop and the finishing step.

pytest's main loop is itself a hook (``pytest_runtestloop``) that plugins may wrap or
replace; a run's phases are too. The engine implements ``run_search`` and ``run_finishing``
(:mod:`automl_core.hookspecs`) here, last (``trylast``), so that a plugin's implementation
runs first: ``wrapper=True`` to act around the engine's (time it, trace it, add to its
result), or a plain one that returns a value to replace it (both hooks are ``firstresult``).
The runner registers this module on the run's plugins when they lack it, as pytest
registers its own built-in plugins; no entry point is needed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from automl_core.hookspecs import hookimpl
from automl_core.plugins import Plugins
from automl_core.trial import Trial
from automl_engine.compose import Setup
from automl_engine.finishing import Finishing
from automl_engine.history import RunHistory
from automl_engine.loop import SEARCH_END, search
from automl_engine.observers import Observers
from automl_engine.run_folder import RunInfo, RunSummary

#: The name this module is registered under on a run's plugin manager.
PLUGIN_NAME = "automl_engine.phases"


def with_engine_phases(plugins: Plugins) -> Plugins:
    """``plugins``, with this module's phases registered if they are not yet."""
    if plugins.manager.get_plugin(PLUGIN_NAME) is None:
        plugins.manager.register(sys.modules[__name__], name=PLUGIN_NAME)
    return plugins


@hookimpl(trylast=True)
def run_search(
    setup: Setup,
    history: RunHistory,
    observers: Observers,
    run: RunInfo,
    requeued: list[Trial],
    started: float,
) -> str:
    """The engine's search loop (:func:`automl_engine.loop.search`)."""
    return search(setup, history, observers, run, requeued, started)


@hookimpl(trylast=True)
def run_finishing(
    setup: Setup,
    history: RunHistory,
    plugins: Plugins,
    run: RunInfo,
    stopped: str,
    started: float,
    deadline: float | None,
) -> RunSummary:
    """The engine's finishing step (:func:`finalise`)."""
    return finalise(setup, history, plugins, run.run_dir, stopped, started, deadline)


def finalise(
    setup: Setup,
    history: RunHistory,
    plugins: Plugins,
    run_dir: Path,
    stopped: str,
    started: float,
    deadline: float | None = None,
) -> RunSummary:
    """The summary of a run whose search has ended: the best trial, then what its task adds
    when it finishes (the final model refitted by ``deadline``, a ``time.monotonic()``
    value, and saved; or the benchmark's regret); written to the folder and the history."""
    summary = RunSummary(
        run_dir=str(run_dir),
        n_trials=history.count(),
        best_trial=None,
        best_loss=None,
        best_config=None,
        metric=setup.metric_name,
        elapsed=0.0,
        stopped_because=stopped,
    )
    best = history.best(1)
    if best:
        summary.best_trial, summary.best_loss = best[0].trial.id, best[0].loss
        summary.best_config = dict(best[0].trial.config)
    # the refit runs on as many threads as a trial did, so that the trials' times predict it
    finishing = Finishing(setup.recipe, plugins, run_dir, deadline, setup.threads_per_trial)
    setup.task.finish(summary, history, finishing)
    summary.elapsed = time.monotonic() - started
    summary.timing = _timing(history.get_meta(SEARCH_END), summary.elapsed)
    summary.save(run_dir, history)
    return summary


def _timing(search_end: dict[str, float] | None, elapsed: float) -> dict[str, float]:
    """Where the wall time went (:attr:`RunSummary.timing`), from the search's record of
    its end when it was written by this process's search (not an earlier session's)."""
    now = time.time()
    if not search_end or search_end["at"] < now - elapsed:
        return {}
    return {
        "search": search_end["elapsed"],
        "reserved": search_end["reserved"],
        "finishing": round(now - search_end["at"], 3),
    }
