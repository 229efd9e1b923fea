"""Issue 17's failure, rebuilt: on imbalanced binary data (labels -1/1, 6 % minority) a member
with near-constant probabilities on the wrong side of 0.5 never changes the blend's hard
predictions, so under balanced accuracy it tied every round; random tie-breaking gave it much
of the weight, the deadline then dropped the slow good members, the rest was renormalised,
and the saved model was that member alone (balanced accuracy 0.15 on the test rows, against
0.976 for the best trial)."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification

from automl_core.plugins import load_plugins
from automl_core.trial import Result, Status, Trial
from automl_engine.compose import prepare
from automl_engine.dataset import Dataset
from automl_engine.final_model import Scored, blend, choose_final_model
from automl_engine.history import RunHistory, StoredTrial
from automl_engine.metrics import get_metric
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE, load_saved_model
from automl_engine.runner import finalise, run
from automl_ensemble import CaruanaEnsemble
from automl_ensemble import plugin as ensemble_plugin

#: Losses that read hard predictions (the argmax): where additions tie.
HARD_LABELS = ["balanced_accuracy", "accuracy", "f1_macro"]


def near_constant_case(k: int = 2, seed: int = 0) -> tuple[np.ndarray, list[np.ndarray]]:
    """Validation targets (class 0 the majority), three good models with errors on different
    rows, and last a near-constant one: 1/k plus a hair toward a wrong class on every row."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(800) < 0.06, 1 + rng.integers(0, k - 1, 800), 0)
    models = []
    for flip_rate in (0.02, 0.04, 0.06):
        p = np.eye(k)[y] * 0.7 + 0.3 / k + rng.normal(0, 0.02, (len(y), k)).clip(0, None)
        flipped = rng.random(len(y)) < flip_rate
        p[flipped] = np.roll(p[flipped], 1, axis=1)
        models.append(p / p.sum(axis=1, keepdims=True))
    hair = np.full((len(y), k), 1 / k)
    hair[np.arange(len(y)), (y + 1) % k] += 1e-3
    models.append(hair / hair.sum(axis=1, keepdims=True))
    return y, models


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("metric", HARD_LABELS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_under_a_hard_label_loss_a_near_constant_member_wins_no_tie(metric, k, seed):
    y, models = near_constant_case(k, seed)
    loss = get_metric(metric).loss
    weights = CaruanaEnsemble(size=50, seed=seed).fit(models, y, loss)
    assert weights[-1] == 0.0, f"{weights.tolist()}"


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("metric", [*HARD_LABELS, "log_loss", "roc_auc"])
def test_for_every_metric_the_final_choice_leaves_it_out_and_beats_the_best(metric, k):
    """Under a ranking loss (roc_auc) the member may rightly take weight in Caruana's greedy
    rounds (once the blend ranks perfectly, adding it is the one addition that changes no
    rank); the core's pool, which offers only members better than a constant predictor,
    keeps it out all the same."""
    y, models = near_constant_case(k, seed=0)
    measure = get_metric(metric)
    trials = [Scored(StoredTrial(Trial(i, {}), "ok", 0.0), m) for i, m in enumerate(models)]
    trials.sort(key=lambda s: measure.loss(y, s.predictions))
    choice = choose_final_model(trials, CaruanaEnsemble(size=50), y, measure)
    assert 3 not in [t.trial.id for t in choice.members]
    assert 3 in choice.no_better_than_constant
    # the recorded loss is the chosen blend's, recomputed here from the predictions, and an
    # ensemble is kept only when that is strictly below the best trial's
    by_id = {s.trial.trial.id: s.predictions for s in trials}
    chosen = blend([by_id[t.trial.id] for t in choice.members], choice.weights)
    assert measure.loss(y, chosen) == pytest.approx(choice.validation_loss)
    assert choice.is_ensemble == (choice.validation_loss < choice.single_best_loss)


# --- the whole failure, through the run loop -----------------------------------------------


def imbalanced_minus_one_one(seed: int = 0) -> Dataset:
    X, y = make_classification(
        n_samples=1500, n_features=12, n_informative=6, weights=[0.94], random_state=seed
    )
    columns = [f"x{i}" for i in range(X.shape[1])]
    return Dataset(
        "memory:imbalanced", pd.DataFrame(X, columns=columns), 2 * y - 1, "classification"
    )


#: The two classifiers the end-to-end runs search, with no preprocessing.
SEARCHED = (["decision_tree", "k_nearest_neighbors"], ["no_preprocessing"])


@pytest.fixture(scope="module")
def plugins():
    sklearn_plugin = pytest.importorskip("automl_sklearn.plugin")  # the space, not a dependency
    return load_plugins(extra=[sklearn_plugin, ensemble_plugin], entry_points=False)


def test_the_reported_failure_keeps_the_best_trial(plugins, tmp_path, caruana_recipe):
    """Real pipelines on the -1/1 data, plus an injected trial whose stored validation
    predictions are near-constant on the wrong side, which refits in no time while the good
    trials look slow (a minute each): with a deadline 5 s away, the final model must still
    be at least as good as the best trial on the validation rows."""
    data = imbalanced_minus_one_one()
    setup = prepare(
        parse_recipe(caruana_recipe("memory:imbalanced", *SEARCHED, size=50, trials=4, seed=0)),
        plugins,
        dataset=data,
    )
    rng = np.random.default_rng(0)
    configs = setup.space.sample(rng, 4)
    with RunHistory(tmp_path / HISTORY_FILE) as history:
        for trial_id, config in enumerate(configs[:3]):
            trial = Trial(trial_id, config)
            history.start(trial)
            result = setup.task.evaluator.evaluate(trial)
            assert result.ok, result.error
            result.fit_time = 60.0  # looks too slow to refit before the deadline
            history.finish(trial, result)
        y = setup.task.evaluator.validation_targets
        hair = np.full((len(y), 2), 0.5)
        hair[np.arange(len(y)), 1 - y] += 1e-3  # the wrong class, by a hair
        injected = Trial(3, configs[3])
        history.start(injected)
        history.finish(
            injected,
            Result(
                Status.OK,
                get_metric("balanced_accuracy").loss(y, hair),
                fit_time=0.001,
                predictions=(hair / hair.sum(axis=1, keepdims=True)).astype(np.float32),
            ),
        )
        best = history.best(1)[0]
        summary = finalise(
            setup, history, plugins, tmp_path, "test", time.monotonic(), time.monotonic() + 5
        )
    assert 3 not in summary.ensemble, summary.ensemble
    assert best.trial.id in summary.ensemble
    if summary.final_model["kind"] == "ensemble":
        assert summary.final_model["validation_loss"] < best.loss
    else:
        assert summary.ensemble == {best.trial.id: 1.0}
    assert summary.test_scores["balanced_accuracy"] > 0.6


@pytest.mark.parametrize(
    "labels",
    [np.array([-1, 1]), np.array(["no", "yes"]), np.array([3, 7]), np.array(["a", "b", "c"])],
    ids=["negative", "strings", "integers", "three-strings"],
)
def test_runs_with_any_labels_end_no_worse_than_their_best_trial(
    plugins, tmp_path, labels, caruana_recipe
):
    data = imbalanced_minus_one_one(seed=1)
    codes = (data.y + 1) // 2
    if len(labels) == 3:  # a third class carved out of the majority
        codes = np.where((codes == 0) & (data.X["x0"].to_numpy() > 1), 2, codes)
    data = Dataset(data.name, data.X, labels[codes], "classification")
    summary = run(
        parse_recipe(caruana_recipe("memory:imbalanced", *SEARCHED, size=50, trials=6, seed=0)),
        tmp_path / "run",
        plugins=plugins,
        dataset=data,
    )
    chosen = summary.final_model  # the labels are what this test is about
    assert chosen["single_best_validation_loss"] == pytest.approx(summary.best_loss, abs=1e-6)
    model = load_saved_model(tmp_path / "run")["model"]
    assert set(np.unique(model.predict(data.X))) <= set(labels)
