"""Bad input, faults and limits, one case a function: each was a raw traceback, a silent
success or an overrun before issue 20, and is a clear error (what, where, what was
expected) or a kept promise now. Add a case here when a new one is found."""

from __future__ import annotations

import itertools
import math
import os
import pickle
import sqlite3
import warnings

import numpy as np
import pandas as pd
import pytest
import yaml
from toy_plugin import DoublesPlugin, HangingPlugin, ToyPlugin, toy_recipe

from automl_core.errors import AutoMLError, DatasetError, RecipeError
from automl_core.hookspecs import hookimpl
from automl_core.plugins import LOAD_PLUGINS_ENV, load_plugins
from automl_core.trial import Status
from automl_engine.cli import exit_status, main
from automl_engine.history import HistoryError, RunHistory
from automl_engine.model_trust import declared_model_types
from automl_engine.recipe import apply_overrides, load_recipe, parse_recipe
from automl_engine.run_folder import HISTORY_FILE, MODEL_FILE, load_saved_model
from automl_engine.runner import run
from automl_engine.validation import check_recipe

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
    assert code == 2 and "pw must be a number > 0 and <= 1" in err


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
    assert code == 2 and "executor.params" in err and "workers must be an integer >= 1" in err


def test_a_parameter_of_the_wrong_type_is_refused_before_the_run(tmp_path, capsys):
    overrides = "search={name: random, params: {max_retries: abc}}"
    code, err = validate(tmp_path, capsys, overrides)
    assert code == 2 and "search.params.max_retries: got 'abc', expected an integer" in err


def test_a_number_yaml_reads_as_text_gets_a_hint(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "budget.wall_time=1e3")
    assert code == 2 and "YAML reads '1e3' as text; write 1.0e+03" in err


def test_a_strategy_that_needs_a_surrogate_without_one_is_refused(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "search={name: mcts}")
    assert code == 2 and "search.surrogate: got None" in err and "surrogate: rf" in err


def test_a_surrogate_a_strategy_ignores_is_a_warning(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "search={name: random, surrogate: rf}")
    assert code == 0 and "warning: search.surrogate: 'rf' is ignored" in err


def test_a_halving_strategy_on_a_benchmark_without_budgets_is_refused(tmp_path, capsys):
    pytest.importorskip("automl_metadata")
    from automl_engine.metastore import save_metadata
    from automl_engine.testing.data_checks import kit_metadata

    save_metadata(kit_metadata(), tmp_path / "table")
    recipe = {
        "task": {"benchmark": {"name": "table", "params": {"path": str(tmp_path / "table")}}},
        "search": "asha",
        "budget": {"trials": 3},
    }
    code, err = validate(tmp_path, capsys, "task.dataset=d1", recipe=recipe)
    assert code == 2 and "search.name: got 'asha'" in err and "races_budgets" in err
    # a suite is checked on its first dataset
    code, err = validate(tmp_path, capsys, "task.suite=all", recipe=recipe)
    assert code == 2 and "search.name: got 'asha'" in err


def test_a_suite_naming_a_split_the_benchmark_lacks_is_refused(tmp_path, capsys):
    pytest.importorskip("automl_metadata")
    from automl_engine.metastore import save_metadata
    from automl_engine.testing.data_checks import kit_metadata

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


def test_a_read_only_run_folder_is_a_clear_error(tmp_path):
    """Root writes through file modes, so the folder is made read-only the way a read-only
    disk is: bind-mounted read-only in a mount namespace of its own (as root too)."""
    import subprocess
    import sys

    from test_run_folder_lock import read_only_mount_command

    folder = tmp_path / "run"
    folder.mkdir()
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(RECIPE))
    automl = [sys.executable, "-m", "automl_engine.cli", "run", str(recipe), "--out", str(folder)]
    command = read_only_mount_command(folder, automl)
    if command is None:
        pytest.skip("this system allows no read-only bind mount (unshare -m)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 1, done.stderr
    assert f"error: cannot read or write {folder}" in done.stderr
    assert "Read-only file system" in done.stderr and "Traceback" not in done.stderr


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
    with pytest.raises(AutoMLError, match=r"names types or functions that neither automl-core"):
        load_saved_model(folder, allowed=declared_model_types(plugins))


def test_a_saved_model_loads_back_and_predicts_the_same(plugins, tmp_path):
    _, folder = finished_run(plugins, tmp_path)
    stored = load_saved_model(folder, allowed=declared_model_types(plugins))
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
        AutoMLError, match=r"budget.wall_time \(5s\) is too short: .* before the first trial"
    ):
        run(recipe, tmp_path / "run", plugins=hanging_plugins())
    assert not (tmp_path / "run").exists()  # stopped before the run folder was made


def test_the_search_leaves_time_for_the_best_trial_s_refit(plugins, tmp_path):
    """The time a data task needs after its search: the best trial's refit estimate (its
    fit time per row seen, times all rows, times the safety margin) plus the overhead, and
    with an ensemble a tenth of the wall time."""
    from automl_core.trial import Result, Trial
    from automl_engine.compose import prepare
    from automl_engine.finishing import ENSEMBLE_SHARE, FINISH_OVERHEAD_S, refit_estimate
    from automl_engine.history import StoredTrial

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


# --- issue 43: inputs bounded everywhere, every failure a clear message -----------------------


def alias_bomb(levels: int = 6) -> str:
    """``[&a [l x10], &b [*a x10], &c [*b x10], ...]``: 10**levels values once expanded, a
    few hundred characters as written."""
    names = "abcdefghij"[:levels]
    parts = ["&a [" + ", ".join(["l"] * 10) + "]"]
    parts += [f"&{name} [" + ", ".join([f"*{previous}"] * 10) + "]"
              for previous, name in itertools.pairwise(names)]  # fmt: skip
    return "[" + ", ".join(parts) + "]"


def test_an_alias_bomb_in_set_is_refused_naming_the_argument(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, f"search.params.x={alias_bomb()}")
    assert code == 2
    assert "--set search.params.x" in err and "once its aliases are expanded" in err


def test_an_unsafe_tag_in_set_is_refused_and_does_not_run(tmp_path, capsys):
    marker = tmp_path / "ran"
    payload = f'!!python/object/apply:os.system ["touch {marker}"]'
    code, err = validate(tmp_path, capsys, f"search.params.x={payload}")
    assert code == 2 and "--set search.params.x" in err and "safe tags only" in err
    assert not marker.exists()
    assert "Traceback" not in err


def test_broken_yaml_in_set_names_the_argument(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "search.params.x=[1, 2")
    assert code == 2 and "--set search.params.x: got '[1, 2', expected valid YAML" in err


@pytest.mark.parametrize("name", ["../../../x", "/tmp/elsewhere", "a/b", ".hidden", "..", "a\\b"])
def test_a_run_name_that_is_a_path_is_refused(tmp_path, capsys, name):
    code, err = validate(tmp_path, capsys, f"name={name}")
    assert code == 2 and "name: got" in err and "a name for the run folder" in err


def test_a_run_name_cannot_put_its_folder_outside_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(RECIPE))
    assert main(["run", str(path), "--set", "name=../escaped", "--quiet"]) == 2
    assert not (tmp_path.parent / "escaped").exists() and not (tmp_path / "runs").exists()


@pytest.mark.parametrize("key", ["wall_time", "trial_time"])
def test_a_time_the_clock_cannot_represent_is_refused(tmp_path, capsys, key):
    code, err = validate(tmp_path, capsys, f"budget.{key}=1.0e+12")
    assert code == 2 and f"budget.{key}: got 1000000000000.0" in err and "<=" in err


def test_the_longest_time_a_budget_may_give_fits_every_clock():
    import threading

    from automl_engine.recipe import MAX_SECONDS

    assert MAX_SECONDS <= threading.TIMEOUT_MAX
    threading.Event().wait(0)  # the wait a run does, with its deadline this far out:
    threading.Lock().acquire(timeout=MAX_SECONDS)  # free lock: returns at once, no overflow


def test_set_null_removes_a_key_so_its_default_applies():
    data = apply_overrides(RECIPE, ["executor=processes", "executor=null", "budget.trials="])
    assert "executor" not in data and "trials" not in data["budget"]
    assert parse_recipe(apply_overrides(RECIPE, ["executor=null"])).executor.name == "sequential"


def test_a_misspelled_included_component_says_did_you_mean(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "space.params.include={classifier: [random_forrest]}")
    assert code == 2
    assert "no component 'random_forrest': did you mean 'random_forest'?" in err


def test_a_regression_space_on_a_classification_dataset_is_refused_by_validate(tmp_path, capsys):
    code, err = validate(tmp_path, capsys, "space=autosklearn-regression")
    assert code == 2
    assert "expected a classification space: sklearn:iris is a classification dataset" in err


def test_a_broken_plugin_is_named_beside_not_registered():
    class Broken:
        __name__ = "broken-surrogates"

        @hookimpl
        def register_surrogates(self, register):
            raise RuntimeError("cannot find my model file")

    plugins = load_plugins(extra=[ToyPlugin(), Broken()], entry_points=False)
    recipe = parse_recipe(toy_recipe(search={"strategy": "random", "surrogate": "deep-thing"}))
    with pytest.raises(RecipeError) as raised:
        check_recipe(recipe, plugins)
    assert "These plugins failed to load, and may provide it: broken-surrogates" in str(
        raised.value
    )
    assert "cannot find my model file" in str(raised.value)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("root:$6$SECRETHASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n", "single column"),
        ("root:SECRETHASH,x\n", "no data rows"),
    ],
)
def test_a_file_that_is_no_csv_is_not_quoted_in_the_error(plugins, tmp_path, content, said):
    secret = tmp_path / "shadow"
    secret.write_text(content)
    recipe = parse_recipe(toy_recipe(task={"dataset": f"csv:{secret}"}))
    with pytest.raises(DatasetError) as raised:
        run(recipe, tmp_path / "r", plugins=plugins)
    assert "SECRETHASH" not in str(raised.value) and said in str(raised.value)


def finished_real_run(tmp_path) -> tuple[object, object]:
    """A run of the installed plugins on iris (what `automl predict` users have)."""
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump({**RECIPE, "search": "random", "budget": {"trials": 2}}))
    folder = tmp_path / "run"
    assert main(["run", str(path), "--out", str(folder), "--quiet"]) == 0
    return folder, pd.read_csv(load_iris_csv(tmp_path))


def load_iris_csv(tmp_path):
    from sklearn.datasets import load_iris

    frame = load_iris(as_frame=True).data
    frame.to_csv(tmp_path / "iris.csv", index=False)
    return tmp_path / "iris.csv"


def test_predict_names_a_column_with_text_where_the_model_had_numbers(tmp_path, capsys):
    folder, frame = finished_real_run(tmp_path)
    capsys.readouterr()
    frame["petal width (cm)"] = frame["petal width (cm)"].astype(object)
    frame.loc[4, "petal width (cm)"] = "wide"
    frame.to_csv(tmp_path / "text.csv", index=False)
    assert main(["predict", str(folder), str(tmp_path / "text.csv")]) == 2
    err = capsys.readouterr().err
    assert "column 'petal width (cm)' must hold numbers" in err and "line 6" in err
    assert "wide" not in err and "Traceback" not in err
    frame.head(0).to_csv(tmp_path / "header.csv", index=False)
    assert main(["predict", str(folder), str(tmp_path / "header.csv")]) == 2
    assert "has a header but no rows" in capsys.readouterr().err
    frame.drop(columns=["sepal width (cm)"]).head(3).to_csv(tmp_path / "less.csv", index=False)
    assert main(["predict", str(folder), str(tmp_path / "less.csv")]) == 2
    assert "the file lacks the training features ['sepal width (cm)']" in capsys.readouterr().err


def test_a_fit_whose_time_budget_is_too_short_says_so_in_its_own_terms():
    from sklearn.datasets import load_iris

    from automl_core import AutoMLClassifier

    X, y = load_iris(return_X_y=True, as_frame=True)
    with pytest.raises(AutoMLError) as raised:
        AutoMLClassifier(time_budget=0.2, recipe=RECIPE).fit(X, y)
    message = str(raised.value)
    assert message.startswith("time_budget=0.2s is too short for a fit")
    assert "budget.wall_time" not in message  # a key the user never wrote
    shown = float(message.split("too short for a fit: ")[1].split("s had gone")[0])
    assert shown > 0  # the time that went before the first trial, the start-up included


def test_trials_killed_by_the_memory_limit_say_to_raise_it(plugins, tmp_path, capsys):
    from automl_core.trial import Result, Trial
    from automl_engine.history import StoredTrial
    from automl_engine.run_folder import memory_limit_note

    def failed(i, status, error):
        return StoredTrial.of(Trial(i, {}), Result(Status(status), math.inf, error=error))

    memouts = [failed(i, "memout", "Unable to allocate 451 KiB") for i in range(3)]
    note = memory_limit_note([*memouts, failed(3, "crashed", "exited with status 1")], 600)
    assert "budget.trial_memory_mb=600" in note and "virtual memory" in note
    assert memory_limit_note(memouts, None) == ""
    other = [failed(i, "crashed", "ValueError: bad") for i in range(3)]
    assert memory_limit_note([*other, memouts[0]], 600) == ""


def test_the_best_loss_is_said_in_the_metric_s_own_terms():
    from automl_engine.cli import describe_loss

    assert describe_loss(0.6417, "r2") == "r2: 0.3583 (loss 0.6417, lower is better)"
    assert describe_loss(0.25, "rmse").startswith("rmse: 0.2500")
    assert describe_loss(0.1, "benchmark-loss") == "loss (benchmark-loss): 0.1000"


def test_show_into_a_closed_pipe_ends_quietly(plugins, tmp_path):
    import subprocess
    import sys

    _, folder = finished_run(plugins, tmp_path, trials=40)
    shown = subprocess.Popen(
        [sys.executable, "-m", "automl_engine.cli", "show", str(folder), "--top", "40"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    shown.stdout.close()  # `| head -0`: the reader went away before the first line
    err = shown.stderr.read().decode()
    assert shown.wait(120) == 0
    assert "Broken pipe" not in err and "Traceback" not in err


def test_the_wall_time_counts_the_command_s_imports():
    from automl_engine.cli import process_age

    assert process_age() > 0.0  # this process has run for a while: the imports count
