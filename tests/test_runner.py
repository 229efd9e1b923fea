"""The run loop end to end on real data, with the toy space and test doubles of every kind."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from toy_plugin import FailingStrategy, FixedWarmStarter, toy_recipe

from automl_core.errors import AutoMLError, DatasetError
from automl_engine.dataset import Dataset, check_dataset
from automl_engine.history import RunHistory
from automl_engine.model_trust import declared_model_types
from automl_engine.recipe import RecipeError, parse_recipe
from automl_engine.run_folder import HISTORY_FILE, RunError, load_saved_model
from automl_engine.runner import run
from automl_engine.tasks import load_task_data, split_test


def history_of(run_dir):
    with RunHistory(run_dir / HISTORY_FILE) as history:
        return history.trials(), {
            k: history.get_meta(k) for k in ("recipe", "plugins", "versions", "summary")
        }


def test_end_to_end_run_stores_trials_refits_and_saves(plugins, tmp_path):
    recipe = parse_recipe(
        toy_recipe(
            task={"dataset": "sklearn:breast_cancer", "test_size": 0.25, "resampling": {"cv": 3}}
        )
    )
    summary = run(recipe, tmp_path / "run", plugins=plugins)
    trials, meta = history_of(tmp_path / "run")
    assert summary.n_trials == len(trials) == 6
    assert summary.stopped_because == "trial budget reached"
    assert all(t.finished for t in trials)
    ok = [t for t in trials if t.status == "ok"]
    assert summary.best_loss == min(t.loss for t in ok)
    assert 0 <= summary.best_loss < 0.5  # a real model on breast cancer beats chance
    assert set(ok[0].metrics) >= {"accuracy", "balanced_accuracy", "roc_auc", "log_loss"}
    assert summary.test_scores["balanced_accuracy"] > 0.8
    assert meta["plugins"]["search"] == {
        "name": "random",
        "distribution": "automl-core",
        "version": "0.1.0",
    }
    assert meta["recipe"]["name"] == "toy" and "python" in meta["versions"]
    saved = load_saved_model(tmp_path / "run", allowed=declared_model_types(plugins))
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    predictions = saved["model"].predict(X)
    assert set(np.unique(predictions)) <= set(np.unique(y))
    assert np.mean(predictions == y) > 0.85
    assert (tmp_path / "run" / "recipe.yaml").is_file()
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["n_trials"] == 6


def test_a_runs_set_up_imports_skops_without_torch_or_dask():
    """Saving a model needs skops, imported in a run's set-up; scikit-learn's walk of its own
    packages (skops lists the estimators at import) would import torch and dask too, where
    they are installed, through its array-API adapters: seconds of the run's budget. The
    adapters still import for real afterwards."""
    pytest.importorskip("torch")  # without it there is nothing to avoid
    code = (
        "import sys\n"
        "from automl_engine.run_folder import import_skops\n"
        "import_skops()\n"
        "print('torch' in sys.modules, 'dask' in sys.modules)\n"
        "import sklearn.externals.array_api_compat.torch as adapter\n"
        "print(hasattr(adapter, 'asarray'), 'torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "True", "True"]


def test_same_seed_gives_the_same_trials(plugins, tmp_path):
    recipe = parse_recipe(toy_recipe())
    run(recipe, tmp_path / "a", plugins=plugins)
    run(recipe, tmp_path / "b", plugins=plugins)
    first, _ = history_of(tmp_path / "a")
    second, _ = history_of(tmp_path / "b")
    assert [t.trial.config for t in first] == [t.trial.config for t in second]
    assert [t.loss for t in first] == [t.loss for t in second]
    other = parse_recipe(toy_recipe(seed=4))
    run(other, tmp_path / "c", plugins=plugins)
    third, _ = history_of(tmp_path / "c")
    assert [t.trial.config for t in first] != [t.trial.config for t in third]


def test_a_crashing_component_is_recorded_and_the_search_goes_on(plugins, tmp_path):
    recipe = parse_recipe(toy_recipe(budget={"trials": 12}))
    summary = run(recipe, tmp_path / "run", plugins=plugins)
    trials, _ = history_of(tmp_path / "run")
    crashed = [t for t in trials if t.status == "crashed"]
    assert crashed, "the toy space has a component that always crashes; 12 trials should hit it"
    assert all(t.trial.config["classifier:__choice__"] == "crashing" for t in crashed)
    assert all("this component always fails" in t.error and "Traceback" in t.error for t in crashed)
    assert all(math.isinf(t.loss) for t in crashed)
    assert len(trials) == 12 and summary.best_loss is not None


def test_warm_start_metafeatures_and_surrogate_flow_through_the_contracts(plugins, tmp_path):
    FixedWarmStarter.seen_tasks.clear()
    recipe = parse_recipe(
        toy_recipe(
            search={"strategy": "greedy-surrogate", "params": {"initial": 2}, "surrogate": "mean"},
            metafeatures="row-count",
            warmstart={"starter": "fixed", "configs": 2},
            budget={"trials": 5},
        )
    )
    run(recipe, tmp_path / "run", plugins=plugins)
    (task,) = FixedWarmStarter.seen_tasks
    assert task.metafeatures == {"rows": 569.0, "features": 30.0}
    assert task.n_rows == 569 and task.metric == "balanced_accuracy"
    trials, _ = history_of(tmp_path / "run")
    assert [t.trial.origin for t in trials][-1] == "model"


def test_random_search_starts_with_the_warm_start(plugins, tmp_path):
    recipe = parse_recipe(toy_recipe(warmstart={"starter": "fixed", "configs": 3}))
    run(recipe, tmp_path / "run", plugins=plugins)
    trials, _ = history_of(tmp_path / "run")
    assert [t.trial.origin for t in trials[:3]] == ["warmstart"] * 3
    assert [t.trial.config["classifier:decision_tree:max_depth"] for t in trials[:3]] == [2, 4, 6]
    assert {t.trial.origin for t in trials[3:]} == {"random"}


def test_the_ensembler_weights_become_the_final_model(plugins, tmp_path):
    """When the ensemble beats the best trial on the validation rows, its weights are the
    saved model's; else the best trial alone is. Which happens depends on the trials (on
    scikit-learn's version too), so seeds are run until an ensemble wins (seed 10 of the
    toy's converged logistic regressions, with scikit-learn 1.9), and every run is checked
    for the rule."""
    kinds = []
    for seed in range(16):
        recipe = parse_recipe(
            toy_recipe(
                ensemble="best-two",
                task={"dataset": "sklearn:breast_cancer", "test_size": 0.3},
                budget={"trials": 12},
                seed=seed,
            )
        )
        summary = run(recipe, tmp_path / f"run{seed}", plugins=plugins)
        allowed = declared_model_types(plugins)
        model = load_saved_model(tmp_path / f"run{seed}", allowed=allowed)["model"]
        kinds.append(summary.final_model["kind"])
        if kinds[-1] == "ensemble":
            assert list(summary.ensemble.values()) == [0.5, 0.5]
            assert len(model.estimators) == 2
            break
        assert "is not below the best trial's" in summary.final_model["reason"]
        assert list(summary.ensemble.values()) == [1.0] and len(model.estimators) == 1
    assert kinds[-1] == "ensemble", kinds
    assert set(summary.ensemble) == {
        t.trial.id for t in RunHistory(tmp_path / f"run{seed}" / HISTORY_FILE).best(2)
    }


def test_a_failing_strategy_keeps_what_was_computed(plugins, tmp_path):
    recipe = parse_recipe(toy_recipe(search={"strategy": "failing", "params": {"fail_at": 4}}))
    with pytest.raises(
        RunError, match=r"search strategy raised in ask\(\): ValueError: strategy bug on purpose"
    ) as info:
        run(recipe, tmp_path / "run", plugins=plugins)
    trials, meta = history_of(tmp_path / "run")
    assert len(trials) == 3 and all(t.finished for t in trials)
    assert info.value.summary.model_path is not None  # the best so far is still saved
    assert meta["summary"]["stopped_because"].startswith("error: the search strategy raised")
    strategy = FailingStrategy.last
    assert strategy.closed and strategy.context.trial_budget == 6


def test_regression_end_to_end(plugins, tmp_path):
    recipe = parse_recipe(
        toy_recipe(
            task={"dataset": "sklearn:diabetes", "metric": "r2"},
            space="toy-regression",
            budget={"trials": 4},
        )
    )
    summary = run(recipe, tmp_path / "run", plugins=plugins)
    assert summary.metric == "r2" and summary.best_loss < 1.0  # better than predicting the mean


def test_space_and_metric_must_fit_the_dataset_task(plugins, tmp_path):
    wrong_space = parse_recipe(toy_recipe(task={"dataset": "sklearn:diabetes"}))
    with pytest.raises(AutoMLError, match="sklearn:diabetes is a regression dataset"):
        run(wrong_space, tmp_path / "a", plugins=plugins)
    wrong_metric = parse_recipe(
        toy_recipe(
            task={"dataset": "sklearn:diabetes", "metric": "accuracy"}, space="toy-regression"
        )
    )
    with pytest.raises(
        AutoMLError, match=r"task\.metric: got 'accuracy', expected a regression metric"
    ):
        run(wrong_metric, tmp_path / "b", plugins=plugins)


def test_an_existing_run_folder_is_not_overwritten(plugins, tmp_path):
    recipe = parse_recipe(toy_recipe(budget={"trials": 1}))
    run(recipe, tmp_path / "run", plugins=plugins)
    with pytest.raises(AutoMLError, match="already holds a run"):
        run(recipe, tmp_path / "run", plugins=plugins)


def test_wall_time_budget_stops_the_search(plugins, tmp_path):
    # 8 s: the set-up (data, the model format's import) took over 5 s on a VM running five
    # processes on its two cores; a budget the set-up eats is refused before any trial
    recipe = parse_recipe(toy_recipe(budget={"wall_time": 8}))
    summary = run(recipe, tmp_path / "run", plugins=plugins)
    assert summary.stopped_because == "wall-time budget reached"
    with RunHistory(tmp_path / "run" / HISTORY_FILE, read_only=True) as history:
        began = float(history.get_meta("started_at"))
        started = [t.started_at - began for t in history.trials()]
    assert started and max(started) < 8  # no trial was started after the wall time


def test_lifecycle_hooks_see_every_trial(plugins, tmp_path):
    from automl_core import hookimpl

    class Recorder:
        def __init__(self):
            self.events = []

        @hookimpl
        def on_run_start(self, run):
            self.events.append(("start", run.dataset))

        @hookimpl
        def on_trial_end(self, trial, result):
            self.events.append(("trial", trial.id))

        @hookimpl
        def on_run_end(self, summary):
            self.events.append(("end", summary.n_trials))

    recorder = Recorder()
    run(
        parse_recipe(toy_recipe(budget={"trials": 3})),
        tmp_path / "run",
        plugins=plugins,
        observers=(recorder,),
    )
    assert recorder.events == [
        ("start", "sklearn:breast_cancer"),
        ("trial", 0),
        ("trial", 1),
        ("trial", 2),
        ("end", 3),
    ]


def test_a_sources_own_test_rows_are_the_test_split(breast_cancer_frame):
    X, y = breast_cancer_frame
    dataset = Dataset("bc", X, y, "classification", test_rows=np.arange(0, 569, 5))
    train, test = split_test(check_dataset(dataset), 0.5, seed=0)  # test_size is ignored
    assert test.n_rows == 114 and train.n_rows == 455
    assert test.X.iloc[1].equals(X.iloc[5].rename(1))
    for bad, message in [
        (np.arange(569), "must leave some rows for training"),
        (np.array([0, 600]), "outside 0..568"),
        (np.array([0.5]), "1-d array of row numbers"),
    ]:
        with pytest.raises(DatasetError, match=message):
            check_dataset(Dataset("bc", X, y, "classification", test_rows=bad))


@pytest.fixture
def breast_cancer_frame():
    data = load_breast_cancer(as_frame=True)
    return data.data, data.target.to_numpy()


def test_a_strategy_is_never_set_up_on_a_space_kind_it_does_not_claim(tmp_path):
    """``space_kinds`` is a contract the run keeps, not only the conformance kit: a
    pool-only strategy named for a pipeline space is a recipe error, before any trial."""
    from toy_plugin import DoublesPlugin, ToyPlugin

    from automl_core import hookimpl
    from automl_core.errors import RecipeError
    from automl_core.plugins import load_plugins
    from automl_core.random_search import RandomSearch

    class PoolsOnly(RandomSearch):
        space_kinds = frozenset({"pool"})

    class Plugin:
        @hookimpl
        def register_search_strategies(self, register):
            register("pools-only", PoolsOnly)

    plugins = load_plugins(extra=[ToyPlugin(), DoublesPlugin(), Plugin()], entry_points=False)
    with pytest.raises(RecipeError, match=r"'pools-only' searches pool spaces only") as caught:
        run(parse_recipe(toy_recipe(search="pools-only")), tmp_path / "run", plugins=plugins)
    assert caught.value.path == "search.name"
    assert not (tmp_path / "run" / HISTORY_FILE).exists()


def test_max_rows_searches_a_stratified_sample_and_leaves_the_test_rows_alone(plugins, tmp_path):
    task = {"dataset": "sklearn:breast_cancer", "test_size": 0.25, "max_rows": 100}
    recipe = parse_recipe(toy_recipe(task=task))
    _, train, test, _ = load_task_data(recipe, plugins)
    assert train.n_rows == 100 and test is not None and test.n_rows == 143
    full_share = np.mean(load_breast_cancer().target)
    assert abs(np.mean(train.y) - full_share) < 0.02  # stratified
    again = load_task_data(recipe, plugins)[1]
    assert again.X.equals(train.X)  # seeded
    summary = run(recipe, tmp_path / "run", plugins=plugins)
    assert summary.n_trials == 6 and summary.test_scores["balanced_accuracy"] > 0.8
    with pytest.raises(RecipeError, match=r"task\.max_rows"):
        parse_recipe(toy_recipe(task={**task, "max_rows": 2}))
