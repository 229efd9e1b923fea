"""The final model's choice (automl_engine.final_model): never worse than the best trial on the
validation rows, no member that does no better than a constant predictor, and a selection
made again, not renormalised, when members cannot be refitted in time."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from toy_plugin import DoublesPlugin, ToyPlugin, toy_recipe

from automl_core import hookimpl
from automl_core.contracts import Ensembler
from automl_core.plugins import load_plugins
from automl_core.trial import Trial
from automl_engine.final_model import (
    EnsemblerError,
    Scored,
    blend,
    choose_final_model,
    constant_loss,
)
from automl_engine.history import StoredTrial
from automl_engine.metrics import get_metric
from automl_engine.recipe import parse_recipe
from automl_engine.runner import run

BALANCED_ACCURACY = get_metric("balanced_accuracy")


class Fixed(Ensembler):
    """Returns the weights it was built with (cut to the pool offered) and records each pool
    it saw, as the number of models offered."""

    def __init__(self, weights: list[float]) -> None:
        self.weights = weights
        self.offered: list[int] = []

    def fit(self, predictions: Any, y: np.ndarray, loss: Any) -> np.ndarray:
        self.offered.append(len(predictions))
        weights = np.zeros(len(predictions))
        weights[: len(self.weights)] = self.weights[: len(predictions)]
        return weights if weights.sum() > 0 else np.ones(len(predictions))


class Broken(Ensembler):
    def fit(self, predictions: Any, y: np.ndarray, loss: Any) -> np.ndarray:
        return np.array([0.5])  # one weight, whatever the pool


class Raising(Ensembler):
    def fit(self, predictions: Any, y: np.ndarray, loss: Any) -> np.ndarray:
        raise RuntimeError("out of memory in the blend")


def imbalanced_case(seed: int = 0) -> tuple[np.ndarray, list[np.ndarray]]:
    """Validation targets with 6 % minority (class 1) and, best first: two good models with
    errors on different rows, then a near-constant one whose probabilities sit just on the
    wrong side of 0.5 for almost every row (balanced accuracy near 0, below a constant
    predictor's 0.5): the kind of member that wins every tie under a hard-label loss."""
    rng = np.random.default_rng(seed)
    y = (rng.random(600) < 0.06).astype(int)
    models = []
    for flip_rate in (0.03, 0.06):
        p1 = np.where(y == 1, 0.8, 0.2)
        flipped = rng.random(len(y)) < flip_rate
        p1 = np.where(flipped, 1 - p1, p1) + rng.normal(0, 0.05, len(y))
        models.append(np.clip(p1, 0.01, 0.99))
    wrong_side = np.where(y == 1, 0.499, 0.501)
    models.append(wrong_side)
    return y, [np.column_stack([1 - p, p]) for p in models]


def scored(models: list[np.ndarray], fit_times: list[float] | None = None) -> list[Scored]:
    fit_times = fit_times or [1.0] * len(models)
    return [
        Scored(StoredTrial(Trial(i, {"i": i}), "ok", 0.0, fit_time=t), m)
        for i, (m, t) in enumerate(zip(models, fit_times, strict=True))
    ]


def ids(choice: Any) -> list[int]:
    return [t.trial.id for t in choice.members]


def test_a_member_no_better_than_a_constant_predictor_is_never_offered():
    y, models = imbalanced_case()
    assert BALANCED_ACCURACY.loss(y, models[2]) > constant_loss(BALANCED_ACCURACY, y, models[0])
    ensembler = Fixed([0.0, 0.0, 1.0])  # would put everything on the third model offered
    choice = choose_final_model(scored(models), ensembler, y, BALANCED_ACCURACY)
    assert ensembler.offered == [2]
    assert choice.no_better_than_constant == [2] and 2 not in ids(choice)


def test_a_blend_worse_than_the_best_trial_gives_way_to_it():
    y, models = imbalanced_case()
    good, _, near_constant = models
    # the near-constant model never reaches the ensembler; the two offered are the good one
    # and its copy, whose blend only ties the best trial: a tie is not strictly below
    choice = choose_final_model(scored([good, near_constant, good]), Fixed([0.1, 0.9]), y,
                                BALANCED_ACCURACY)  # fmt: skip
    assert choice.no_better_than_constant == [1]
    assert ids(choice) == [0] and list(choice.weights) == [1.0]
    assert "is not below the best trial's" in choice.reason
    assert choice.validation_loss == choice.single_best_loss == BALANCED_ACCURACY.loss(y, good)


def right_on(y: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Probabilities confidently right (0.9) on ``rows`` and slightly wrong (0.45 on the true
    class) elsewhere: two such models right on different rows blend to all right."""
    right, wrong = np.eye(2)[y] * 0.8 + 0.1, np.eye(2)[1 - y] * 0.1 + 0.45
    return np.where(rows[:, None], right, wrong)


def test_a_blend_better_than_the_best_trial_is_kept_with_its_loss():
    y, rows = np.array([0, 1] * 5), np.arange(10)
    a, b = right_on(y, rows < 6), right_on(y, rows >= 4)
    accuracy = get_metric("accuracy")
    choice = choose_final_model(scored([a, b]), Fixed([0.5, 0.5]), y, accuracy)
    assert choice.is_ensemble and ids(choice) == [0, 1]
    assert choice.validation_loss == accuracy.loss(y, blend([a, b], choice.weights)) == 0.0
    assert choice.single_best_loss == pytest.approx(0.4)  # a: right on 6 rows of 10
    assert choice.record()["kind"] == "ensemble"


def test_members_too_slow_to_refit_leave_the_pool_and_the_selection_runs_again():
    y, rows = np.array([0, 1] * 5), np.arange(10)
    models = [right_on(y, rows < 6), right_on(y, rows >= 4), right_on(y, (rows < 3) | (rows >= 7))]
    ensembler = Fixed([0.25, 0.5, 0.25])

    def too_slow(members: list[StoredTrial], weights: np.ndarray) -> list[StoredTrial]:
        return [t for t in members if t.trial.id == 1]

    choice = choose_final_model(scored(models), ensembler, y, get_metric("log_loss"), too_slow)
    assert ensembler.offered == [3, 2]  # selected again, over the two that fit
    assert ids(choice) == [0, 2] and choice.too_slow_to_refit == [1]
    # the ensembler's new weights over the two, not the old ones renormalised (1/2, 1/2)
    assert choice.weights.tolist() == pytest.approx([1 / 3, 2 / 3])
    assert choice.validation_loss < choice.single_best_loss


def test_when_nothing_but_the_best_fits_in_time_the_best_trial_is_chosen():
    y, rows = np.array([0, 1] * 5), np.arange(10)
    a, b = right_on(y, rows < 6), right_on(y, rows >= 4)  # their blend beats a alone
    accuracy = get_metric("accuracy")
    assert choose_final_model(scored([a, b]), Fixed([0.5, 0.5]), y, accuracy).is_ensemble

    def all_but_the_first(members: list[StoredTrial], weights: np.ndarray) -> list[StoredTrial]:
        return members[1:]

    choice = choose_final_model(scored([a, b]), Fixed([0.5, 0.5]), y, accuracy, all_but_the_first)
    assert ids(choice) == [0] and choice.too_slow_to_refit == [1]
    assert choice.reason == "the best trial: no ensemble of two or more could be refitted in time"


def test_regression_takes_the_better_of_the_mean_and_the_median_as_its_constant():
    y = np.array([0.0, 0.0, 0.0, 1.0, 10.0])  # skewed: mean 2.2, median 0
    mae = get_metric("mae")
    assert constant_loss(mae, y, y) == pytest.approx(mae.loss(y, np.zeros(5))) == 2.2
    mse = get_metric("mse")
    assert constant_loss(mse, y, y) == pytest.approx(mse.loss(y, np.full(5, 2.2)))


def test_a_regression_trial_below_the_constant_predictor_is_never_offered():
    rng = np.random.default_rng(1)
    y = rng.normal(size=200)
    good, noise = y + rng.normal(0, 0.3, 200), -y  # r2 well above 0, and far below
    r2 = get_metric("r2")
    assert constant_loss(r2, y, good) == pytest.approx(1.0)  # r2 of the mean is 0
    ensembler = Fixed([0.5, 0.5])
    choice = choose_final_model(scored([good, noise]), ensembler, y, r2)
    assert ensembler.offered == [] and ids(choice) == [0]
    assert choice.no_better_than_constant == [1]
    assert "fewer than two trials beat a constant predictor" in choice.reason


def test_no_ensembler_and_no_trials():
    y, models = imbalanced_case()
    assert ids(choose_final_model(scored(models), None, y, BALANCED_ACCURACY)) == [0]
    empty = choose_final_model([], Fixed([1.0]), y, BALANCED_ACCURACY)
    assert empty.members == [] and not empty.is_ensemble


def test_weights_of_the_wrong_shape_are_an_error_that_names_them():
    y, models = imbalanced_case()
    with pytest.raises(EnsemblerError, match=r"weights \[0.5\] for 2 models"):
        choose_final_model(scored(models), Broken(), y, BALANCED_ACCURACY)
    infinite = type("Infinite", (Ensembler,), {"fit": lambda self, p, y, loss: [np.inf, 1.0]})
    with pytest.raises(EnsemblerError, match=r"expected one finite"):
        choose_final_model(scored(models), infinite(), y, BALANCED_ACCURACY)


def test_an_ensembler_that_raises_is_reported_with_its_traceback():
    y, models = imbalanced_case()
    with pytest.raises(EnsemblerError, match=r"RuntimeError: out of memory") as caught:
        choose_final_model(scored(models), Raising(), y, BALANCED_ACCURACY)
    assert "Traceback" in str(caught.value) and "in fit" in str(caught.value)


class BrokenPlugin:
    @hookimpl
    def register_ensemblers(self, register: Any) -> None:
        register("broken", Broken)
        register("raising", Raising)


@pytest.mark.parametrize(
    ("name", "said"), [("broken", "it returned weights"), ("raising", "RuntimeError: out of")]
)
def test_a_failing_ensembler_leaves_the_best_trial_as_the_model(tmp_path, name, said):
    plugins = load_plugins(extra=[ToyPlugin(), DoublesPlugin(), BrokenPlugin()], entry_points=False)
    recipe = parse_recipe(toy_recipe(ensemble=name, budget={"trials": 3}))
    with pytest.warns(UserWarning, match=rf"ensembler '{name}' failed; the best trial .*{said}"):
        summary = run(recipe, tmp_path / "run", plugins=plugins)
    assert summary.ensemble == {summary.best_trial: 1.0}
    assert f"ensembler '{name}' failed: {said}" in summary.final_model["reason"]
    assert (tmp_path / "run" / "model.skops").is_file()
