"""One run: recipe -> components -> search -> final model (docs/architecture.md's data flow).

:func:`run` is the whole life of one search, built from parts that each live in a module of
their own: :mod:`~automl_engine.compose` resolves the recipe into a task and components,
:mod:`~automl_engine.loop` asks, executes, stores and tells until a budget ends, and the
task finishes the run (:func:`~automl_engine.phases.finalise` calls
:meth:`~automl_engine.tasks.Task.finish`: on
data, the final model is chosen (:mod:`~automl_engine.final_model`), refitted, scored on the
test rows and saved (:mod:`~automl_engine.finishing`); on a benchmark, the regret is computed).
A failure of the strategy ends the search early, but everything already evaluated is kept
and the model of the best trial so far is still saved before the error is raised.

The search and the finishing are hooks (``run_search``, ``run_finishing``,
:mod:`automl_engine.phases`): the engine implements them last, so a plugin can wrap them.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import yaml

from automl_core.contracts import Benchmark
from automl_core.errors import AutoMLError
from automl_core.plugins import Plugins, load_plugins
from automl_engine.build_once import BuildOnce
from automl_engine.compose import prepare, record_setup
from automl_engine.dataset import Dataset
from automl_engine.history import RunHistory
from automl_engine.loop import close_strategy, replay
from automl_engine.observers import Observers
from automl_engine.phases import finalise, with_engine_phases
from automl_engine.proposals import StrategyError
from automl_engine.recipe import Recipe
from automl_engine.run_folder import (
    HISTORY_FILE,
    RECIPE_FILE,
    RunError,
    RunInfo,
    RunSummary,
    stored_elapsed,
    stored_policy,
)
from automl_engine.run_lock import LOCK_FILE, RunFolderLock
from automl_engine.tasks import cannot_resume_on
from automl_engine.validation import check_recipe
from automl_engine.wall_time import run_deadlines

#: Recipe sections that must not change when a run is resumed: they define what the trials
#: already in the history mean.
RESUME_FIXED = ("task", "space", "search", "seed", "metafeatures", "warmstart")

#: ``run`` and what its callers handle; the rest of a run folder is :mod:`run_folder`'s.
__all__ = ["HISTORY_FILE", "RECIPE_FILE", "RunError", "RunSummary", "finalise", "run"]


def run(
    recipe: Recipe,
    run_dir: str | Path,
    *,
    plugins: Plugins | None = None,
    observers: tuple[object, ...] = (),
    benchmark: Benchmark | None = None,
    resume: bool = False,
    dataset: Dataset | None = None,
    deadline: float | None = None,
    started: float | None = None,
) -> RunSummary:
    """Run ``recipe`` into ``run_dir`` (created; must not hold an earlier run's history).

    ``resume=True`` continues the interrupted run in ``run_dir`` instead: its finished trials
    are told to the strategy again (so it neither forgets nor repeats them), trials that were
    running are run again under their own ids, and the budget counts what was already spent.
    ``benchmark`` is the recipe's benchmark already built (a suite shares one).

    ``dataset`` is data held in memory, searched instead of loading ``task.dataset`` (which
    must then be ``memory:<name>``); its fingerprint is stored, and resuming needs the same
    data again.

    The recipe's ``budget.wall_time`` is the whole run's, from this call to the saved model:
    the set-up (data, meta-features, warm start, policy), the search, the ensemble and the
    refit. The search stops early enough for what follows it
    (:meth:`~automl_engine.tasks.Task.time_to_finish`); ensemble members are refitted in
    decreasing weight, and an ensemble whose members could not all be refitted in time is
    chosen again among those that were. ``deadline`` (a ``time.monotonic()`` value) may end
    the refit sooner. ``started`` (a ``time.monotonic()`` value, default now) is when the
    wall time starts: a caller that did work of its own first (the command line, ``fit``)
    counts it in.
    """
    started = time.monotonic() if started is None else started
    # the run's registry: the components the check builds are the run's (BuildOnce)
    plugins = BuildOnce.around(plugins or load_plugins())
    for warning in check_recipe(recipe, plugins):
        warnings.warn(warning, stacklevel=2)
    plugins.checked()
    run_dir = Path(run_dir)
    created = not run_dir.exists()
    lock = RunFolderLock(run_dir).acquire()  # before the folder is looked at: one writer
    try:
        return _run_locked(
            recipe, run_dir, plugins, observers, benchmark, resume, dataset, deadline, started
        )
    except BaseException:
        if created:
            _remove_if_unused(run_dir)
        raise
    finally:
        lock.release()


def _run_locked(
    recipe: Recipe,
    run_dir: Path,
    plugins: Plugins,
    observers: tuple[object, ...],
    benchmark: Benchmark | None,
    resume: bool,
    dataset: Dataset | None,
    deadline: float | None,
    started: float,
) -> RunSummary:
    """:func:`run`, once the folder's lock is held."""
    _check_run_folder(run_dir, recipe, resume)
    policy = stored_policy(run_dir) if resume else None
    spent = stored_elapsed(run_dir) if resume else 0.0
    if resume:
        _check_same_data(run_dir, dataset)
    deadline, timed = run_deadlines(started, recipe.budget.wall_time, spent, deadline)
    setup = prepare(recipe, plugins, benchmark, dataset, policy, spent, timed)
    setup.task.use_folder(run_dir)  # the folder exists: the lock made it
    if not resume:
        (run_dir / RECIPE_FILE).write_text(yaml.safe_dump(recipe.raw, sort_keys=False))
    for observer in observers:
        plugins.manager.register(observer)
    info = RunInfo(
        run_dir,
        recipe,
        setup.task.description.dataset,
        setup.task.description.task,
        setup.metric_name,
        time.time(),
        recipe.budget.trials,
        recipe.budget.wall_time,
    )
    with RunHistory(run_dir / HISTORY_FILE) as history:
        requeued = replay(setup, history) if resume else []
        if resume:
            info.trials_before = len(history.trials(finished_only=True))
            best = history.best(1)
            info.best_before = best[0].loss if best else None
        if not resume:
            record_setup(history, setup, plugins)
        lifecycle = Observers(plugins)
        lifecycle.run_start(info)
        phases = with_engine_phases(plugins).manager.hook
        failure: StrategyError | None = None
        try:
            stopped = phases.run_search(
                setup=setup,
                history=history,
                observers=lifecycle,
                run=info,
                requeued=requeued,
                started=started,
            )
        except StrategyError as error:
            failure, stopped = error, f"error: {str(error).splitlines()[0]}"
        finally:
            setup.executor.shutdown()
            close_strategy(setup.strategy)
        summary = phases.run_finishing(
            setup=setup,
            history=history,
            plugins=plugins,
            run=info,
            stopped=stopped,
            started=started,
            deadline=deadline,
        )
        lifecycle.run_end(info, summary)
    for observer in observers:
        plugins.manager.unregister(observer)
    if failure is not None:
        raise RunError(
            f"{failure}\nThe {summary.n_trials} trials so far are kept in {run_dir}", summary
        ) from failure
    return summary


def _remove_if_unused(run_dir: Path) -> None:
    """Remove the folder a run created and then failed in before writing anything but its
    lock (a set-up error): a mistake in a recipe leaves no empty run folders behind."""
    if {p.name for p in run_dir.iterdir()} <= {LOCK_FILE}:
        (run_dir / LOCK_FILE).unlink(missing_ok=True)
        run_dir.rmdir()


def _check_run_folder(run_dir: Path, recipe: Recipe, resume: bool) -> None:
    """A new run needs a folder without a history; a resumed one, the history of the same
    search (the recipe's task, space, search and seed unchanged; budgets may grow)."""
    path = run_dir / HISTORY_FILE
    if not resume:
        if path.exists():
            raise AutoMLError(
                f"{run_dir} already holds a run ({HISTORY_FILE}); choose another folder, "
                "or resume it (automl run --resume / automl resume)"
            )
        return
    if not path.exists():
        raise AutoMLError(f"cannot resume: {run_dir} holds no run ({HISTORY_FILE} is missing)")
    with RunHistory(path) as history:
        stored = history.get_meta("recipe")
    if stored is None:
        raise AutoMLError(
            f"cannot resume: the history {path} records no run (an empty or truncated file, "
            "or a run killed before it started); start the run again in a new folder"
        )
    changed = [key for key in RESUME_FIXED if stored.get(key) != recipe.raw.get(key)]
    if changed:
        raise AutoMLError(
            f"cannot resume {run_dir} with a different {', '.join(changed)}: the trials "
            "already run were for the stored recipe (recipe.yaml in the run folder); only "
            "budget, executor, ensemble and name may change"
        )


def _check_same_data(run_dir: Path, dataset: Dataset | None) -> None:
    """A resumed run on data held in memory continues on the same data (checked before
    anything is built on it)."""
    with RunHistory(run_dir / HISTORY_FILE) as history:
        why = cannot_resume_on(history, dataset)
    if why is not None:
        raise AutoMLError(f"cannot resume {run_dir} {why}")
