"""Caruana et al.'s ensemble selection: weights worked out by hand on small problems, the
guarantees of the algorithm on random ones, the checks of parameters and inputs, and a run
through the core."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from automl_core.plugins import load_plugins
from automl_engine.metrics import get_metric
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import load_saved_model
from automl_engine.runner import run
from automl_ensemble import CaruanaEnsemble
from automl_ensemble import plugin as ensemble_plugin

MSE = get_metric("mse").loss
ACCURACY = get_metric("accuracy").loss
LOG_LOSS = get_metric("log_loss").loss


def blend(predictions, weights):
    return sum(w * np.asarray(p, float) for w, p in zip(weights, predictions, strict=True))


# --- weights known by hand ------------------------------------------------------------------


def offset_models():
    """Regression targets (integers, so every sum below is exact) and three models: errors +1
    and -1 on every row, and a constant far from every target."""
    y = np.array([3.0, -1.0, 0.0, 2.0, -4.0, 1.0, 5.0, -2.0])
    return y, [y + 1, y - 1, np.full_like(y, 10.0)]


def test_opposite_errors_are_averaged_and_a_useless_model_gets_nothing():
    # Round 1: +1 and -1 both have MSE 1 (a tie, broken at random), the constant far more.
    # After an odd round the ensemble holds one more of one of them (error +-1/(2j+1)); the
    # other brings it back to error 0, a tie never beats 0, and any constant drags it off.
    # So every even round ends at counts j, j, 0, and round 2 is the earliest at loss 0:
    # the ensemble returned holds one of each, weights 0.5, 0.5, 0, whatever the size.
    y, models = offset_models()
    ensembler = CaruanaEnsemble(size=50)
    weights = ensembler.fit(models, y, MSE)
    assert weights.tolist() == [0.5, 0.5, 0.0] and ensembler.rounds_ == 2
    assert MSE(y, blend(models, weights)) == 0.0
    assert ensembler.trajectory_[1::2] == [0.0] * 25  # every even round is exact
    assert CaruanaEnsemble(size=5).fit(models, y, MSE).tolist() == [0.5, 0.5, 0.0]


def complementary_classifiers():
    """Ten rows of a binary problem. Model A is confidently right on rows 0..5 (0.9 on the
    true class) and slightly wrong on rows 6..9 (0.45); model B the other way round."""
    y = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1])
    rows_a = np.arange(10) < 6
    truth = np.where(rows_a, 0.9, 0.45), np.where(rows_a, 0.45, 0.9)
    models = []
    for p_true in truth:
        proba = np.empty((10, 2))
        proba[np.arange(10), y] = p_true
        proba[np.arange(10), 1 - y] = 1 - p_true
        models.append(proba)
    return y, models


def test_two_half_right_classifiers_need_a_blend():
    y, (a, b) = complementary_classifiers()
    assert ACCURACY(y, a) == pytest.approx(0.4) and ACCURACY(y, b) == pytest.approx(0.6)
    # Round 1 takes A (loss 0.4). Round 2: A again stays at 0.4; B makes the true class
    # (0.9 + 0.45) / 2 = 0.675 on every row: loss 0. Hence exactly 1/2, 1/2.
    assert CaruanaEnsemble(size=2).fit([a, b], y, ACCURACY).tolist() == [0.5, 0.5]
    # With more rounds the blend stays perfect (any weight w on A with 1/9 < w < 8/9 is), and
    # the earliest perfect round, round 2, is the one returned.
    assert CaruanaEnsemble(size=50).fit([a, b], y, ACCURACY).tolist() == [0.5, 0.5]


def test_a_duplicated_best_model_takes_all_the_weight_and_the_seed_picks_the_copy():
    # y is 0; the best model predicts 0.1 (MSE 0.01), and there are two copies of it. The
    # others predict 5 and 3: any blend holding them predicts more than 0.1, so is worse, and
    # every round adds one of the copies, the loss unchanged: round 1 is returned.
    y = np.zeros(6)
    best = np.full(6, 0.1)
    models = [np.full(6, 5.0), best, np.full(6, 3.0), best.copy()]
    chosen = set()
    for seed in range(8):
        weights = CaruanaEnsemble(size=50, seed=seed).fit(models, y, MSE)
        assert weights[0] == weights[2] == 0.0 and sorted(weights[[1, 3]]) == [0.0, 1.0]
        chosen.add(int(np.argmax(weights)))
    assert chosen == {1, 3}  # the tie between the copies is the seed's


def test_sorted_initialisation_starts_from_the_best_single_models():
    # MSEs on their own: y + 1 and y - 1 have 1, the constant 10 has less than the constant
    # 20. With init 3 and size 3 the three best are each selected once, with no greedy round.
    y, models = offset_models()
    models = [*models, np.full_like(y, 20.0)]
    weights = CaruanaEnsemble(size=3, init=3).fit(models, y, MSE)
    assert weights == pytest.approx([1 / 3, 1 / 3, 1 / 3, 0.0])
    # init beyond the usable models starts from all of them, then goes greedy: after the two
    # offset models (error 0), the third round adds one of them again (error +-1/3), worse:
    # the two initial models are returned.
    ensembler = CaruanaEnsemble(size=3, init=3)
    assert ensembler.fit(models[:2], y, MSE).tolist() == [0.5, 0.5]
    assert len(ensembler.order_) == 3 and ensembler.rounds_ == 2
    # the ensemble returned holds at least the initial models, even when one is worse
    ensembler = CaruanaEnsemble(size=4, init=2)
    weights = ensembler.fit([models[0], models[2]], y, MSE)
    assert ensembler.rounds_ >= 2 and np.all(weights > 0)


# --- guarantees on random problems -----------------------------------------------------------


def random_classification(seed: int, n_models: int = 8, n: int = 60, k: int = 3):
    """Models of varied quality: each mixes the one-hot truth with Dirichlet noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    onehot = np.eye(k)[y]
    models = []
    for quality in rng.uniform(0.0, 0.6, size=n_models):
        noise = rng.dirichlet(np.ones(k), size=n)
        models.append(quality * onehot + (1 - quality) * noise)
    return y, models


def random_regression(seed: int, n_models: int = 12, n: int = 80):
    """Models with their own bias, noise level and shrinkage towards 0."""
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n) * 3
    models = [
        rng.uniform(0.3, 1.2) * y + rng.normal(0, 1) + rng.normal(0, rng.uniform(0.2, 3), n)
        for _ in range(n_models)
    ]
    return y, models


PROBLEMS = [("classification", LOG_LOSS, seed) for seed in range(4)] + [
    ("regression", MSE, seed) for seed in range(4)
]


@pytest.mark.parametrize(("task", "loss", "seed"), PROBLEMS)
def test_the_ensemble_is_never_worse_than_the_best_single_model(task, loss, seed):
    # For a convex loss this is guaranteed: adding the best single model again is always a
    # candidate, and it moves the blend along the segment towards that model. (For accuracy
    # and other non-convex losses auto-sklearn's procedure guarantees only the first round.)
    y, models = (random_classification if task == "classification" else random_regression)(seed)
    ensembler = CaruanaEnsemble(size=20)
    weights = ensembler.fit(models, y, loss)
    best_single = min(loss(y, p) for p in models)
    assert loss(y, blend(models, weights)) <= best_single + 1e-12
    assert ensembler.trajectory_[0] == best_single  # round 1 picks the best model
    # the earliest round with the lowest loss (up to float rounding) is the one returned
    lowest = min(ensembler.trajectory_)
    returned = ensembler.trajectory_[ensembler.rounds_ - 1]
    assert returned == pytest.approx(lowest, rel=1e-12, abs=1e-12)
    assert all(t > lowest + 1e-12 for t in ensembler.trajectory_[: ensembler.rounds_ - 1])
    assert returned == pytest.approx(loss(y, blend(models, weights)))


@pytest.mark.parametrize("size", [1, 7, 50])
def test_weights_are_counts_over_the_round_returned(size):
    y, models = random_classification(seed=11)
    ensembler = CaruanaEnsemble(size=size)
    weights = ensembler.fit(models, y, ACCURACY)
    assert weights.shape == (len(models),) and 1 <= ensembler.rounds_ <= size
    assert np.all(weights >= 0) and weights.sum() == pytest.approx(1.0)
    counts = weights * ensembler.rounds_
    assert np.allclose(counts, np.round(counts))


def test_each_round_costs_one_loss_evaluation_per_distinct_model():
    y, models = random_regression(seed=3, n_models=5)
    models = [*models, models[2].copy()]  # six models, five distinct predictions
    calls = []

    def counting_mse(y_true, blend):
        calls.append(len(blend))
        return MSE(y_true, blend)

    CaruanaEnsemble(size=7).fit(models, y, counting_mse)
    assert len(calls) == 5 + 7 * 5  # each distinct model alone once (for ties), then rounds


def test_float32_probabilities_do_not_trip_log_loss():
    # The core stores predictions as float32: their row sums are off by ~1e-7, more than
    # scikit-learn's log_loss allows without a warning on every call.
    y, models = random_classification(seed=2, n_models=4, n=200, k=5)
    stored = [m.astype(np.float32) for m in models]
    assert not np.allclose(stored[0].astype(float).sum(axis=1), 1.0, rtol=1e-8, atol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        weights = CaruanaEnsemble(size=10).fit(stored, y, LOG_LOSS)
    assert weights.sum() == pytest.approx(1.0)


# --- determinism, parameters, inputs -----------------------------------------------------------


def test_the_seed_makes_it_deterministic_and_decides_the_ties():
    y, models = random_regression(seed=5, n_models=4)
    models = [models[0]] * 5 + models[1:]  # five identical models: ties in every round they win
    runs = [CaruanaEnsemble(size=40, seed=seed) for seed in (0, 0, 1)]
    weights = [ensembler.fit(models, y, MSE) for ensembler in runs]
    assert weights[0].tolist() == weights[1].tolist()
    assert runs[0].order_ == runs[1].order_
    assert weights[0].tolist() != weights[2].tolist()
    # the seed only decides between the copies: their total is the same
    assert weights[0][:5].sum() == pytest.approx(weights[2][:5].sum())
    # fitting again with the same object gives the same answer (the generator is per fit)
    assert runs[0].fit(models, y, MSE).tolist() == weights[0].tolist()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"size": 0}, r"size must be an integer >= 1, got 0"),
        ({"size": -3}, r"size must be an integer >= 1"),
        ({"size": 2.5}, r"size must be an integer >= 1, got 2.5"),
        ({"size": "50"}, r"size must be an integer >= 1, got '50'"),
        ({"size": True}, r"size must be an integer >= 1, got True"),
        ({"seed": -1}, r"seed must be an integer >= 0"),
        ({"seed": 0.5}, r"seed must be an integer"),
        ({"init": -1}, r"init must be an integer >= 0"),
        ({"init": 6, "size": 5}, r"init must be at most size \(5\)"),
    ],
)
def test_bad_parameters_are_refused_naming_the_parameter(params, message):
    with pytest.raises(ValueError, match=message):
        CaruanaEnsemble(**params)


def test_numpy_integers_are_accepted():
    ensembler = CaruanaEnsemble(size=np.int64(5), seed=np.int32(2))
    assert ensembler.size == 5 and type(ensembler.size) is int and ensembler.seed == 2


def test_bad_inputs_are_refused_with_the_cause():
    y, models = offset_models()
    ensembler = CaruanaEnsemble(size=3)
    with pytest.raises(ValueError, match="predictions is empty"):
        ensembler.fit([], y, MSE)
    with pytest.raises(ValueError, match=r"predictions\[2\] has shape \(7,\), but"):
        ensembler.fit([models[0], models[1], models[2][:7]], y, MSE)
    with pytest.raises(ValueError, match=r"y has 7 rows but the predictions have 8"):
        ensembler.fit(models, y[:7], MSE)
    with pytest.raises(ValueError, match=r"predictions\[0\] has shape \(8, 1, 1\)"):
        ensembler.fit([m.reshape(8, 1, 1) for m in models], y, MSE)


def test_a_model_with_nan_or_inf_is_never_selected():
    y, (plus, minus, _) = offset_models()
    broken = y.copy()  # perfect, but for one NaN: it must not be chosen
    broken[3] = np.nan
    infinite = np.where(np.arange(len(y)) == 0, np.inf, y)
    with pytest.warns(RuntimeWarning, match=r"predictions \[1, 3\] contain NaN or infinite"):
        weights = CaruanaEnsemble(size=10).fit([plus, broken, minus, infinite], y, MSE)
    assert weights.tolist() == [0.5, 0.0, 0.5, 0.0]
    with pytest.raises(ValueError, match="every model's predictions contain NaN"):
        CaruanaEnsemble().fit([broken, infinite], y, MSE)


def test_a_loss_that_cannot_rank_any_blend_is_an_error():
    y, models = offset_models()
    with pytest.raises(ValueError, match="loss is NaN or infinite for every candidate"):
        CaruanaEnsemble().fit(models, y, lambda _y, _p: float("nan"))


# --- through the core ----------------------------------------------------------------------


def test_registered_as_caruana_with_its_parameters():
    plugins = load_plugins(extra=[ensemble_plugin], entry_points=False)
    registration = plugins.get("ensembler", "caruana")
    assert registration.parameters() == {"size": 50, "seed": 0, "init": 0}
    ensembler = plugins.create("ensembler", "caruana", {"size": 20})
    assert isinstance(ensembler, CaruanaEnsemble) and ensembler.size == 20


def test_a_run_with_the_caruana_ensemble(tmp_path, caruana_recipe):
    sklearn_plugin = pytest.importorskip("automl_sklearn.plugin")  # the space, not a dependency
    plugins = load_plugins(extra=[sklearn_plugin, ensemble_plugin], entry_points=False)
    recipe = parse_recipe(
        caruana_recipe(
            "sklearn:breast_cancer",
            ["decision_tree", "k_nearest_neighbors", "sgd"],
            ["no_preprocessing", "select_percentile_classification"],
            size=20,
            trials=6,
            seed=1,
        )
    )
    summary = run(recipe, tmp_path / "run", plugins=plugins)
    weights = np.array(list(summary.ensemble.values()))
    assert len(weights) >= 2  # with this seed the blend beats the single best trial
    assert weights.sum() == pytest.approx(1.0) and np.all(weights > 0)
    # the zero weights are dropped and the rest renormalised: still counts out of the
    # earliest best round, at most 20
    assert any(np.allclose(weights * r, np.round(weights * r)) for r in range(1, 21))
    saved = load_saved_model(tmp_path / "run")["model"]
    assert len(saved.estimators) == len(summary.ensemble)
    assert saved.weights == pytest.approx(weights)
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    predictions = saved.predict(X)
    assert set(np.unique(predictions)) <= set(np.unique(y))
    assert np.mean(predictions == y) > 0.85
    assert summary.test_scores["balanced_accuracy"] > 0.8
