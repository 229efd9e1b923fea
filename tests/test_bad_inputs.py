"""Bad input, faults and limits, one case a function: each was a raw traceback, a silent
success or an overrun before issue 20, and is a clear error (what, where, what was
expected) or a kept promise now. Add a case here when a new one is found."""

from __future__ import annotations

import os
import pickle
import sqlite3
import warnings

import numpy as np
import pandas as pd
import pytest
import yaml
from toy_plugin import DoublesPlugin, HangingPlugin, ToyPlugin, toy_recipe

from automl_core.cli import exit_status, main
from automl_core.errors import AutoMLError, DatasetError, RecipeError
from automl_core.history import HistoryError, RunHistory
from automl_core.plugins import LOAD_PLUGINS_ENV, load_plugins
from automl_core.recipe import apply_overrides, load_recipe, parse_recipe
from automl_core.run_folder import HISTORY_FILE, MODEL_FILE, load_saved_model
from automl_core.runner import run
from automl_core.trial import Status
from automl_core.validation import check_recipe

#: A recipe over the installed plugins' space, for the command-line cases.
RECIPE = {
    "task": {"dataset": "sklearn:iris"},
    "space": {
        "name": "autosklearn-classification",
        "params": {"include": {"classifier": ["decision_tree"]}},
    },
    "search": {"strategy": "mcts", "surrogate": "rf"},
    "budget": {"trials": 3},
}


def validate(tmp_path, capsys, *overrides: str, recipe: dict | None = None) -> tuple[int, str]:
    """``automl validate`` on ``recipe`` with ``--set`` overrides: (exit code, stderr)."""
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe or RECIPE))
    arguments = ["validate", str(path)]
    for override in overrides:
        arguments += ["--set", override]
    code = main(arguments)
    return code, capsys.readouterr().err


# --- validate means it will run --------------------------------------------------------------


def test_an_out_of_range_strategy_parameter_is_refused(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "search.params.c_ucb=-1")
    assert code == 2 and "search.params" in err and "c_ucb must be a number >= 0" in err


def test_a_progressive_widening_above_one_is_refused(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "search.params.pw=5")
    assert code == 2 and "pw must be a number in (0, 1]" in err


def test_a_missing_csv_file_is_refused(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, f"task.dataset=csv:{tmp_path / 'nope.csv'}")
    assert code == 2 and "task.dataset" in err and "not found" in err


def test_a_folder_given_as_a_csv_file_is_refused(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, f"task.dataset=csv:{tmp_path}")
    assert code == 2 and "is not a file" in err


def test_an_unknown_sklearn_dataset_is_refused_with_the_closest_name(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "task.dataset=sklearn:irisx")
    assert code == 2 and "unknown sklearn dataset 'irisx'; did you mean 'iris'" in err


def test_a_regression_metric_on_a_classification_space_is_refused(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "task.metric=r2")
    assert code == 2 and "task.metric: got 'r2', expected a classification metric" in err


def test_zero_workers_are_refused(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "executor={name: processes, params: {workers: 0}}")
    assert code == 2 and "executor.params" in err and "workers must be at least 1" in err


def test_a_parameter_of_the_wrong_type_is_refused_before_the_run(tmp_path, capsys):
    overrides = "search={strategy: random, params: {max_retries: abc}}"
    code, err = validate(tmp_path, capsys, overrides)
    assert code == 2 and "search.params.max_retries: got 'abc', expected an integer" in err


def test_a_number_yaml_reads_as_text_gets_a_hint(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "budget.wall_time=1e3")
    assert code == 2 and "YAML reads '1e3' as text; write 1.0e+03" in err


def test_a_strategy_that_needs_a_surrogate_without_one_is_refused(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "search={strategy: mcts}")
    assert code == 2 and "search.surrogate: got None" in err and "surrogate: rf" in err


def test_a_surrogate_a_strategy_ignores_is_a_warning(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "search={strategy: random, surrogate: rf}")
    assert code == 0 and "warning: search.surrogate: 'rf' is ignored" in err


def test_a_halving_strategy_on_a_benchmark_without_budgets_is_refused(tmp_path, capsys):
    pytest.importorskip("automl_metadata")
    from automl_core.metastore import save_metadata
    from automl_core.testing.data_checks import kit_metadata

    save_metadata(kit_metadata(), tmp_path / "table")
    recipe = {
        "task": {"benchmark": {"name": "table", "params": {"path": str(tmp_path / "table")}}},
        "search": "asha",
        "budget": {"trials": 3},
    }
    code, err = validate(tmp_path, capsys, "task.dataset=d1", recipe=recipe)
    assert code == 2 and "search.strategy: got 'asha'" in err and "races_budgets" in err
    # a suite is checked on its first dataset
    code, err = validate(tmp_path, capsys, "task.suite=all", recipe=recipe)
    assert code == 2 and "search.strategy: got 'asha'" in err


def test_a_suite_naming_a_split_the_benchmark_lacks_is_refused(tmp_path, capsys):
    pytest.importorskip("automl_metadata")
    from automl_core.metastore import save_metadata
    from automl_core.testing.data_checks import kit_metadata

    save_metadata(kit_metadata(), tmp_path / "table")
    recipe = {
        "task": {"benchmark": {"name": "table", "params": {"path": str(tmp_path / "table")}}},
        "search": "random",
        "budget": {"trials": 3},
    }
    code, err = validate(tmp_path, capsys, "task.suite=tset", recipe=recipe)
    assert code == 2 and "task.suite: got 'tset', expected one of ['all']" in err
    assert validate(tmp_path, capsys, "task.suite=all", recipe=recipe)[0] == 0


def test_set_works_on_a_shorthand_section():
    data = {**RECIPE, "search": "random"}
    recipe = parse_recipe(apply_overrides(data, ["search.strategy=smbo"]))
    assert recipe.search.strategy.name == "smbo"


def test_a_folder_given_as_a_recipe_says_so(tmp_path, capsys):
    assert main(["validate", str(tmp_path)]) == 2
    assert "a folder" in capsys.readouterr().err


def test_a_recipe_file_too_large_is_refused_before_parsing(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("task: {dataset: sklearn:iris}\nbudget: {trials: 1}\n" + "# x\n" * 300_000)
    with pytest.raises(RecipeError, match="a recipe file of at most 1,000,000 bytes"):
        load_recipe(path)


def test_yaml_aliases_cannot_expand_a_recipe_into_gigabytes(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 10) + "]")
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines))
    with pytest.raises(RecipeError, match="aliases are expanded"):
        load_recipe(path)


def test_a_plugin_filter_that_names_nothing_installed_warns(monkeypatch):
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "automl-no-such-plugin")
    with pytest.warns(UserWarning, match=r"names \['automl-no-such-plugin'\]: no installed"):
        load_plugins()


def test_trial_limits_with_an_executor_that_cannot_enforce_them_are_refused():
    plugins = load_plugins(extra=[ToyPlugin(), DoublesPlugin()], entry_points=False)
    recipe = parse_recipe(
        toy_recipe(budget={"trials": 2, "trial_memory_mb": 900}, executor="sequential")
    )
    with pytest.raises(RecipeError, match=r"enforces budget\.trial_memory_mb"):
        check_recipe(recipe, plugins)


# --- data the pipelines cannot use -------------------------------------------------------------


def test_a_csv_file_with_two_rows_is_too_small_for_its_resampling(plugins, tmp_path):
    path = tmp_path / "two.csv"
    path.write_text("a,y\n1,x\n2,y\n")
    recipe = parse_recipe(toy_recipe(task={"dataset": f"csv:{path}"}))
    with pytest.raises(DatasetError, match=r"2 training rows, too few for holdout 0\.3"):
        run(recipe, tmp_path / "run", plugins=plugins)
    assert not (tmp_path / "run").exists()  # refused before the run folder was made


def test_infinite_feature_values_are_refused_with_their_columns(plugins, tmp_path):
    frame = pd.DataFrame({"a": np.arange(20.0), "b": np.arange(20.0), "y": ["p", "q"] * 10})
    frame.loc[3, "b"] = np.inf
    frame.loc[5, "b"] = -np.inf
    frame.to_csv(tmp_path / "inf.csv", index=False)
    recipe = parse_recipe(toy_recipe(task={"dataset": f"csv:{tmp_path / 'inf.csv'}"}))
    with pytest.raises(DatasetError, match=r"2 infinite values in the columns \['b'\]"):
        run(recipe, tmp_path / "run", plugins=plugins)


def test_duplicate_csv_column_names_are_refused_not_renamed(plugins, tmp_path):
    (tmp_path / "dup.csv").write_text("a,a,y\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n")
    recipe = parse_recipe(toy_recipe(task={"dataset": f"csv:{tmp_path / 'dup.csv'}"}))
    with pytest.raises(DatasetError, match=r"names the columns \['a'\] more than once"):
        run(recipe, tmp_path / "run", plugins=plugins)


# --- a run in which nothing succeeded ----------------------------------------------------------


def test_a_run_whose_every_trial_failed_exits_non_zero_with_how_they_ended(
    plugins, tmp_path, capsys
):
    space = {"name": "toy-classification", "params": {"include": {"classifier": ["crashing"]}}}
    summary = run(
        parse_recipe(toy_recipe(space=space, budget={"trials": 2})), tmp_path / "r", plugins=plugins
    )
    assert summary.best_trial is None
    assert exit_status(summary) == 1
    err = capsys.readouterr().err
    assert "no trial succeeded: 2 trials (2 crashed; trial budget reached)" in err
    assert "the first crashed: RuntimeError: this component always fails" in err


# --- storage faults ----------------------------------------------------------------------------


def finished_run(plugins, tmp_path, trials: int = 3):
    recipe = parse_recipe(toy_recipe(budget={"trials": trials}))
    run(recipe, tmp_path / "run", plugins=plugins)
    return recipe, tmp_path / "run"


def test_a_truncated_history_is_a_clear_error_naming_the_file(plugins, tmp_path):
    recipe, folder = finished_run(plugins, tmp_path)
    path = folder / HISTORY_FILE
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(HistoryError, match=rf"the history {path} is damaged"):
        run(recipe, folder, plugins=plugins, resume=True)


def test_an_empty_history_cannot_be_resumed_and_says_why(plugins, tmp_path):
    recipe, folder = finished_run(plugins, tmp_path)
    (folder / HISTORY_FILE).write_bytes(b"")
    with pytest.raises(AutoMLError, match="records no run"):
        run(recipe, folder, plugins=plugins, resume=True)


def test_show_on_a_damaged_history_is_an_error_not_a_traceback(plugins, tmp_path, capsys):
    _, folder = finished_run(plugins, tmp_path)
    path = folder / HISTORY_FILE
    path.write_bytes(b"not a database at all" * 100)
    assert main(["show", str(folder)]) == 2
    assert f"the history {path} is damaged" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_run_folder_is_a_clear_error(plugins, tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises((HistoryError, PermissionError)):
            run(parse_recipe(toy_recipe()), folder, plugins=plugins)
    finally:
        folder.chmod(0o700)


def test_a_full_disk_stops_the_run_with_what_was_stored_intact_and_resumable(
    plugins, tmp_path, monkeypatch
):
    """SQLite's own ``max_page_count`` makes the history file full at a known size: the
    same error (SQLITE_FULL) a full disk gives."""
    opened = RunHistory.__init__

    def capped(self, path):
        opened(self, path)
        self._db.execute("PRAGMA max_page_count = 12")

    monkeypatch.setattr(RunHistory, "__init__", capped)
    recipe = parse_recipe(toy_recipe(budget={"trials": 60}))
    with pytest.raises(
        HistoryError, match=r"database or disk is full.*trials stored before are intact"
    ):
        run(recipe, tmp_path / "run", plugins=plugins)
    monkeypatch.setattr(RunHistory, "__init__", opened)
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        stored = [t for t in history.trials() if t.finished]
    assert stored  # some trials were stored before the disk filled up
    summary = run(recipe, tmp_path / "run", plugins=plugins, resume=True)
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        after = {t.trial.id: t for t in history.trials()}
    assert summary.n_trials == 60
    assert all(after[t.trial.id].loss == t.loss for t in stored)  # nothing stored was lost


# --- untrusted files ---------------------------------------------------------------------------


class RunsCode:
    """A pickle that runs code when it is loaded (writes a marker file)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_crafted_pickled_model_is_not_loaded_without_trust(plugins, tmp_path, capsys):
    _, folder = finished_run(plugins, tmp_path)
    (folder / MODEL_FILE).unlink()
    marker = tmp_path / "ran"
    (folder / "model.joblib").write_bytes(pickle.dumps(RunsCode(str(marker))))
    data = tmp_path / "x.csv"
    pd.DataFrame({"a": [1.0]}).to_csv(data, index=False)
    assert main(["predict", str(folder), str(data)]) == 2
    assert "is a pickle: loading it runs whatever code" in capsys.readouterr().err
    assert not marker.exists()


def test_a_model_file_naming_untrusted_types_is_refused(plugins, tmp_path):
    import skops.io

    _, folder = finished_run(plugins, tmp_path)
    skops.io.dump({"model": os.system}, folder / MODEL_FILE)
    with pytest.raises(AutoMLError, match="names types outside the trusted packages"):
        load_saved_model(folder)


def test_a_saved_model_loads_back_and_predicts_the_same(plugins, tmp_path):
    _, folder = finished_run(plugins, tmp_path)
    stored = load_saved_model(folder, packages={"toy_plugin"})
    X = pd.DataFrame(np.random.default_rng(0).random((5, 30)), columns=stored["features"])
    assert stored["model"].predict(X).shape == (5,)


# --- budgets that bind -------------------------------------------------------------------------


def hanging_plugins():
    return load_plugins(extra=[ToyPlugin(), DoublesPlugin(), HangingPlugin()], entry_points=False)


def test_a_hanging_trial_is_stopped_at_the_run_s_wall_time_by_the_default_executor(tmp_path):
    """No executor named and a wall time: trials run in a worker process, so one that hangs
    (a fit that sleeps a minute) is stopped when the run's time is up, not awaited."""
    space = {"name": "toy-classification", "params": {"include": {"classifier": ["sleeping"]}}}
    recipe = parse_recipe(toy_recipe(space=space, budget={"wall_time": 4}))
    assert recipe.executor.name == "processes"
    summary = run(recipe, tmp_path / "run", plugins=hanging_plugins())
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        trials = history.trials()
    assert summary.stopped_because == "wall-time budget reached"
    assert [t.status for t in trials] == [Status.TIMEOUT.value]
    assert "stopped at the run's wall time" in trials[0].error


def test_a_set_up_that_leaves_no_time_to_search_stops_before_searching(tmp_path):
    recipe = parse_recipe(
        toy_recipe(
            warmstart={"starter": "slow", "params": {"seconds": 6.0}}, budget={"wall_time": 5}
        )
    )
    with pytest.raises(
        AutoMLError, match=r"set-up used the run's whole budget.wall_time \(5s\) before any trial"
    ):
        run(recipe, tmp_path / "run", plugins=hanging_plugins())
    assert not (tmp_path / "run").exists()  # stopped before the run folder was made


def test_the_search_leaves_time_for_the_best_trial_s_refit(plugins, tmp_path):
    """The time a data task needs after its search: the best trial's refit estimate (its
    fit time per row seen, times all rows, times the safety margin) plus the overhead, and
    with an ensemble a tenth of the wall time."""
    from automl_core.compose import prepare
    from automl_core.finishing import ENSEMBLE_SHARE, FINISH_OVERHEAD_S, refit_estimate
    from automl_core.history import StoredTrial
    from automl_core.trial import Result, Trial

    recipe = parse_recipe(toy_recipe(budget={"wall_time": 60}, executor="sequential"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        setup = prepare(recipe, plugins)
    best = StoredTrial.of(Trial(0, {}), Result(Status.OK, 0.1, fit_time=4.0, duration=5.0))
    task = setup.task
    assert task.time_to_finish(None, recipe) == FINISH_OVERHEAD_S
    assert task.time_to_finish(best, recipe) == pytest.approx(
        FINISH_OVERHEAD_S + refit_estimate(best, task.evaluator)
    )
    assert refit_estimate(best, task.evaluator) > 4.0 * 1.4  # scaled up from 70% of rows
    ensembled = parse_recipe(toy_recipe(budget={"wall_time": 60}, ensemble="best-two"))
    assert task.time_to_finish(best, ensembled) == pytest.approx(
        task.time_to_finish(best, recipe) + ENSEMBLE_SHARE * 60
    )
    setup.executor.shutdown()


def test_history_errors_keep_sqlite_s_error_as_their_cause(tmp_path):
    path = tmp_path / HISTORY_FILE
    path.write_bytes(b"x" * 4096)
    with pytest.raises(HistoryError) as raised:
        RunHistory(path)
    assert isinstance(raised.value.__cause__, sqlite3.DatabaseError)
