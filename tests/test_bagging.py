"""A bagged search (``task.resampling: {cv: k, bag: true}``): every trial validated on all
rows, its k fold models kept, the final model their average (no refit), and the ensemble
chosen on the out-of-fold predictions (issue 44)."""

from __future__ import annotations

import time
import warnings
from typing import ClassVar

import numpy as np
import pytest
from toy_plugin import BestTwoEnsembler, DoublesPlugin, ToyPlugin, toy_recipe

from automl_core.errors import RecipeError
from automl_core.hookspecs import hookimpl
from automl_core.plugins import load_plugins
from automl_engine import finishing
from automl_engine.evaluator import Resampling, usable_splits
from automl_engine.fold_models import FOLDER, FoldModels, Parts, fold_key
from automl_engine.history import RunHistory
from automl_engine.model import BaggedPipeline
from automl_engine.model_trust import declared_model_types
from automl_engine.recipe import parse_recipe, parse_resampling
from automl_engine.run_folder import HISTORY_FILE, load_saved_model
from automl_engine.runner import run
from automl_engine.tasks import load_task_data

BAGGED = {
    "dataset": "sklearn:breast_cancer",
    "metric": "balanced_accuracy",
    "resampling": {"cv": 3, "bag": True},
    "test_size": 0.25,
}


class RecordingEnsembler(BestTwoEnsembler):
    """Best-two, remembering the predictions it was given."""

    given: ClassVar[list[np.ndarray]] = []

    def fit(self, predictions, y, loss):
        RecordingEnsembler.given = [np.asarray(p) for p in predictions]
        return super().fit(predictions, y, loss)


class RecordingPlugin:
    @hookimpl
    def register_ensemblers(self, register):
        register("recording", RecordingEnsembler)


@pytest.fixture
def plugins():
    return load_plugins(extra=[ToyPlugin(), DoublesPlugin(), RecordingPlugin()], entry_points=False)


def bagged_run(plugins, folder, seed=4, **changes):
    recipe = parse_recipe(toy_recipe(task=BAGGED, budget={"trials": 6}, seed=seed, **changes))
    return recipe, run(recipe, folder, plugins=plugins)


def test_the_bagged_model_predicts_with_the_fold_models_it_was_validated_with(
    plugins, tmp_path, monkeypatch
):
    def no_refit(*args, **kwargs):
        raise AssertionError("a bagged search refits nothing")

    monkeypatch.setattr(finishing, "_fit_member", no_refit)
    recipe, summary = bagged_run(plugins, tmp_path / "run", ensemble="recording")
    assert summary.refit_seconds == 0.0 and summary.bagged_seconds is not None
    saved = load_saved_model(tmp_path / "run", allowed=declared_model_types(plugins))["model"]
    assert list(summary.ensemble) and len(saved.estimators) == len(summary.ensemble)
    _, train, _, _ = load_task_data(recipe, plugins)
    y = saved.label_encoder.transform(train.y)
    splits = usable_splits(train.name, y, "classification", Resampling("cv", folds=3), recipe.seed)
    with RunHistory(tmp_path / "run" / HISTORY_FILE, read_only=True) as history:
        for trial_id, member in zip(summary.ensemble, saved.estimators, strict=True):
            assert isinstance(member, BaggedPipeline) and len(member.folds) == 3
            stored = history.predictions(trial_id)  # out of fold, every training row
            assert stored.shape[0] == train.n_rows
            for fold, (_, valid) in zip(member.folds, splits, strict=True):
                again = fold.predict_proba(train.X.iloc[valid])
                np.testing.assert_allclose(again, stored[valid], atol=1e-6)
        # the ensemble was chosen on those out-of-fold predictions, and its weights kept
        best = [t.trial.id for t in history.best(len(RecordingEnsembler.given))]
        for given, trial_id in zip(RecordingEnsembler.given, best, strict=True):
            np.testing.assert_array_equal(given, history.predictions(trial_id))
    assert summary.final_model["kind"] == "ensemble"  # with this seed the two beat the best
    assert list(summary.ensemble) == best[:2]
    np.testing.assert_allclose(saved.weights, [0.5, 0.5])
    proba = saved.predict_proba(train.X.iloc[:5])
    expected = sum(0.5 * m.predict_proba(train.X.iloc[:5]) for m in saved.estimators)
    np.testing.assert_allclose(proba, expected)


def test_a_bagged_regression_model_averages_its_folds(plugins, tmp_path):
    task = {**BAGGED, "dataset": "sklearn:diabetes", "metric": "r2"}
    recipe = parse_recipe(toy_recipe(task=task, space="toy-regression", budget={"trials": 3}))
    run(recipe, tmp_path / "run", plugins=plugins)
    saved = load_saved_model(tmp_path / "run", allowed=declared_model_types(plugins))["model"]
    (member,) = saved.estimators
    _, train, _, _ = load_task_data(recipe, plugins)
    X = train.X.iloc[:7]
    expected = np.mean([fold.predict(X) for fold in member.folds], axis=0)
    np.testing.assert_allclose(saved.predict(X), expected)
    assert not np.allclose(member.folds[0].predict(X), member.folds[1].predict(X))


def test_only_the_best_trials_keep_their_fold_models(plugins, tmp_path, monkeypatch):
    from automl_engine import tasks

    monkeypatch.setattr(tasks, "ENSEMBLE_POOL", 3)
    kept_while_searching = []

    def after_each_trial(self, history):
        stored_trial(self, history)
        kept_while_searching.append(self.evaluator.fold_models.stored())
        assert kept_while_searching[-1] == {t.trial.id for t in history.best(3)}

    stored_trial = tasks.DataTask.trial_stored
    monkeypatch.setattr(tasks.DataTask, "trial_stored", after_each_trial)
    _, summary = bagged_run(plugins, tmp_path / "run")
    assert len(kept_while_searching) == 6 and max(map(len, kept_while_searching)) == 3
    # once the model is saved (it holds its members' folds), only the members' are kept
    kept = FoldModels(tmp_path / "run" / FOLDER, fold_key()).stored()
    assert kept == set(summary.ensemble)


def test_a_fold_model_file_not_signed_by_this_user_is_not_loaded(plugins, tmp_path):
    store = FoldModels(tmp_path, fold_key())
    store.write(7, [{"a": 1}])
    assert store.read(7) == [{"a": 1}]
    content = store.path(7).read_bytes()
    store.path(7).write_bytes(content[:-1] + bytes([content[-1] ^ 1]))  # altered
    assert store.read(7) is None
    other = FoldModels(tmp_path, b"k" * 32)  # another user's, another machine's key
    store.write(8, [{"b": 2}])
    assert other.read(8) is None and other.read(99) is None


def test_members_whose_fold_models_cannot_be_read_are_refitted(plugins, tmp_path, monkeypatch):
    monkeypatch.setattr(FoldModels, "read", lambda self, trial_id: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, summary = bagged_run(plugins, tmp_path / "run")
    assert any("cannot be read back" in str(w.message) for w in caught)
    assert summary.refit_seconds > 0 and summary.model_path
    saved = load_saved_model(tmp_path / "run", allowed=declared_model_types(plugins))["model"]
    assert not isinstance(saved.estimators[0], BaggedPipeline)


def test_bag_is_read_with_cv_only():
    assert parse_resampling({"cv": 4, "bag": True}) == Resampling("cv", folds=4, bag=True)
    assert parse_resampling({"cv": 4}).bag is False
    with pytest.raises(RecipeError, match="bag only with cv"):
        parse_resampling({"holdout": 0.3, "bag": True})
    with pytest.raises(RecipeError, match=r"task\.resampling\.bag: got 'yes', expected true or"):
        parse_resampling({"cv": 4, "bag": "yes"})


def test_a_fold_model_file_records_its_parts_and_goes_with_them(tmp_path):
    """Saving costs time per numpy array and per scikit-learn estimator (skops writes and
    takes apart each on its own), so the estimate of a member's saving time reads how many
    its fold models hold."""
    from sklearn.tree import DecisionTreeClassifier

    store = FoldModels(tmp_path, fold_key())
    trees = [DecisionTreeClassifier(), DecisionTreeClassifier()]
    store.write(1, [{"w": np.zeros(3), "b": [np.ones(2), np.arange(4)]}, np.eye(2), trees])
    store.write(2, [{"a": 1}])
    assert store.parts(1) == Parts(arrays=4, estimators=2)
    assert store.parts(2) == Parts() and store.parts(3) == Parts()
    store.keep_only({2})
    assert store.stored() == {2} and not store.parts_path(1).exists()


def test_a_members_saving_estimate_grows_with_its_arrays_and_estimators(tmp_path):
    """Members of about the same size: one of many arrays (a boosted model's trees) and one
    of many estimators (a forest's trees) are expected to take longer to save than one of a
    single large array."""
    from types import SimpleNamespace

    from sklearn.tree import DecisionTreeClassifier

    from automl_core.trial import Trial
    from automl_engine.history import StoredTrial

    store = FoldModels(tmp_path, fold_key())
    store.write(1, [np.zeros(200_000)])
    store.write(2, [np.zeros(20) for _ in range(10_000)])
    store.write(
        3, [DecisionTreeClassifier(max_depth=d) for d in range(2_000)] + [np.zeros(190_000)]
    )
    evaluator = SimpleNamespace(fold_models=store, splits=[None] * 5)
    estimate = {
        trial_id: finishing.bagged_member_estimate(
            StoredTrial(Trial(id=trial_id, config={}), "ok", 0.1, predict_time=0.0), evaluator
        )
        for trial_id in (1, 2, 3)
    }
    sizes = [store.path(i).stat().st_size for i in (1, 2, 3)]
    assert max(sizes) < 1.5 * min(sizes)
    assert estimate[2] - estimate[1] >= 9_000 * finishing.BAGGED_SECONDS_PER_ARRAY > 0
    assert estimate[3] - estimate[1] >= 1_900 * finishing.BAGGED_SECONDS_PER_ESTIMATOR > 0


def test_a_best_trial_too_slow_to_save_in_time_gives_way_to_the_best_that_fits(
    plugins, tmp_path, monkeypatch
):
    """Bagged, the best trial's fold models are saved, not refitted; when their saving is
    expected to outlast the run (a 512-tree forest's 2,670 estimators take ~8 s with skops),
    the final model is the best trial whose saving fits -- the trial the search kept time
    back for -- as on the refit path, instead of a run that ends seconds past its budget."""
    _, unbounded = bagged_run(plugins, tmp_path / "unbounded")
    slow = unbounded.best_trial

    def estimate(stored, evaluator):
        assert evaluator.fold_models is not None  # the bagged estimate is the one asked
        return 1000.0 if stored.trial.id == slow else 0.01

    monkeypatch.setattr(finishing, "refit_estimate", estimate)
    recipe = parse_recipe(toy_recipe(task=BAGGED, budget={"trials": 6}, seed=4))
    with pytest.warns(UserWarning, match=rf"best trial \({slow}\) needs ~1000.0s to save its fold"):
        summary = run(recipe, tmp_path / "bounded", plugins=plugins, deadline=time.monotonic() + 60)
    assert summary.best_trial == slow and summary.refit_seconds == 0.0
    (kept,) = summary.ensemble
    with RunHistory(tmp_path / "bounded" / HISTORY_FILE, read_only=True) as history:
        assert kept == [t.trial.id for t in history.best(2)][1]  # the next best: it fits
    saved = load_saved_model(tmp_path / "bounded", allowed=declared_model_types(plugins))
    (member,) = saved["model"].estimators
    assert isinstance(member, BaggedPipeline)  # still the fold models: nothing refitted
