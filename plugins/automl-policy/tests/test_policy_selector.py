"""The policy selector: pairwise forests, the fallback, the simulated runs, and a real run."""

from __future__ import annotations

import numpy as np
import pytest

import automl_policy.auto_sklearn_2 as auto_sklearn_2
from automl_core.contracts import TaskDescription
from automl_core.plugins import load_plugins
from automl_engine.cache import CACHE_DIR_ENV
from automl_engine.compose import prepare
from automl_engine.history import RunHistory
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_policy.auto_sklearn_2 import AutoSklearn2Selector, grid_budget, simulated_losses
from automl_policy.lcdb_runs import INNER_SPLITS, OUTER_SPLITS, Runs
from automl_policy.selector import PairwiseSelector
from automl_policy.simulate import Clock, PolicySpec, halving_anchors, simulate

# --- the pairwise selector --------------------------------------------------------------------


def sized_meta_data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Policy "small" wins below 1,000 rows, "large" above; "never" always loses."""
    rows = rng.uniform(100, 10_000, 200)
    features = np.column_stack([rows, rng.uniform(5, 50, 200)])
    small = np.where(rows < 1000, 0.1, 0.3)
    losses = np.column_stack([small, 0.4 - small, np.full(200, 0.5)])
    return features, losses


def test_each_side_of_the_boundary_gets_its_policy():
    features, losses = sized_meta_data(np.random.default_rng(0))
    selector = PairwiseSelector(["small", "large", "never"], "large").fit(features, losses)
    assert selector.select([300, 20]) == "small"
    assert selector.select([8000, 20]) == "large"
    votes = selector.votes([300, 20])
    assert votes.argmin() == 2 and votes.sum() == pytest.approx(3)  # 3 pairs, one vote each


def test_a_dataset_larger_than_every_meta_dataset_gets_the_fallback():
    features, losses = sized_meta_data(np.random.default_rng(0))
    selector = PairwiseSelector(["small", "large", "never"], "never").fit(features, losses)
    assert selector.covered([9000, 40]) and not selector.covered([20_000, 10])
    assert selector.select([20_000, 10]) == "never"
    assert not selector.covered([500, 60])  # more features than any meta-dataset


def test_datasets_where_policies_tie_carry_no_weight():
    features = np.array([[100.0, 5], [200, 5], [300, 5]])
    losses = np.array([[0.2, 0.2], [0.1, 0.3], [0.1, 0.3]])
    selector = PairwiseSelector(["a", "b"], "a").fit(features, losses)
    assert selector.forests[(0, 1)] == 1  # only "a wins" was ever seen with weight
    assert selector.select([150, 5]) == "a"


def test_selector_checks_its_inputs():
    with pytest.raises(ValueError, match="fallback"):
        PairwiseSelector(["a"], "b")
    with pytest.raises(ValueError, match="datasets x policies"):
        PairwiseSelector(["a", "b"], "a").fit(np.ones((3, 2)), np.ones((3, 3)))
    with pytest.raises(RuntimeError, match="not fitted"):
        PairwiseSelector(["a", "b"], "a").votes([1, 2])


# --- the simulated runs -----------------------------------------------------------------------


def two_learner_runs(times: tuple[float, float], valid: tuple[float, float]) -> Runs:
    """One dataset, anchors 10/30/90, two learners with constant time, validation error and
    test error = validation error + 0.01 at every anchor and split."""
    anchors = np.array([10, 30, 90])
    shape = (2, 3, OUTER_SPLITS, INNER_SPLITS)
    time = np.empty(shape, dtype=np.float32)
    error = np.empty(shape, dtype=np.float32)
    for learner in range(2):
        time[learner] = times[learner]
        error[learner] = valid[learner]
    return Runs(
        ["d"],
        ["a", "b"],
        [anchors],
        [time],
        [error],
        [error + 0.01],
        np.array([100.0]),
        np.array([5.0]),
    )


def test_full_budget_holdout_picks_the_best_it_could_afford():
    runs = two_learner_runs(times=(1.0, 1.0), valid=(0.3, 0.2))
    holdout = PolicySpec("holdout", 1, False)
    order = np.array([0, 1])
    assert simulate(runs, 0, holdout, 0, budget=5, order=order) == pytest.approx(0.21)
    # only the first learner fits into 1.5 s
    assert simulate(runs, 0, holdout, 0, budget=1.5, order=order) == pytest.approx(0.31)


def test_cross_validation_costs_one_training_per_fold():
    runs = two_learner_runs(times=(1.0, 1.0), valid=(0.3, 0.2))
    cv5 = PolicySpec("cv5", 5, False)
    # 5 s buys exactly one 5-fold evaluation
    assert simulate(runs, 0, cv5, 0, budget=5, order=np.array([0, 1])) == pytest.approx(0.31)
    # nothing finished: the worst test error of the dataset
    assert simulate(runs, 0, cv5, 0, budget=4, order=np.array([1, 0])) == pytest.approx(0.31)


def test_halving_reaches_the_full_anchor_with_the_better_learner():
    runs = two_learner_runs(times=(1.0, 1.0), valid=(0.3, 0.2))
    sh = PolicySpec("holdout+sh", 1, True)
    # rung 0 (anchor 10): both; then ceil(2/3) = 1 survivor at 30 and at 90
    assert simulate(runs, 0, sh, 0, budget=4, order=np.array([0, 1])) == pytest.approx(0.21)
    # 2.5 s: rung 0 only, its best is returned
    assert simulate(runs, 0, sh, 0, budget=2.5, order=np.array([0, 1])) == pytest.approx(0.21)


def test_halving_anchors_and_the_clock():
    assert halving_anchors(np.array([16, 23, 32, 45, 64, 91, 128, 181, 256, 362]), 3) == [2, 5, 9]
    assert halving_anchors(np.array([16, 23]), 3) == [1]
    clock = Clock(2.0)
    assert clock.spend(1.5) and not clock.spend(1.0) and clock.spent_out and clock.left == 0


def test_simulated_losses_use_the_runs_given_and_are_cached(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))

    def not_again() -> Runs:
        raise AssertionError("LCDB's runs were loaded although the caller gave them")

    monkeypatch.setattr(auto_sklearn_2, "load_runs", not_again)
    runs = two_learner_runs(times=(1.0, 1.0), valid=(0.3, 0.2))
    losses = simulated_losses(30, runs)
    assert losses.shape == (1, 6) and losses[0, 0] == pytest.approx(0.21)
    (cached,) = (p for p in (tmp_path / "policy").iterdir() if not p.name.startswith("."))
    assert cached.name == "lcdb-outcomes-v1-s1-30s.npy" and np.array_equal(np.load(cached), losses)
    monkeypatch.setattr(auto_sklearn_2, "simulate_all", lambda *args: pytest.fail("simulated"))
    assert np.array_equal(simulated_losses(30, runs), losses)  # read back from the cache


# --- the registered selector -------------------------------------------------------------------


def test_budget_grid_and_parameters():
    assert grid_budget(None) == 3600 and grid_budget(27) == 30 and grid_budget(2000) == 1800
    with pytest.raises(ValueError, match="positive"):
        grid_budget(0)
    with pytest.raises(ValueError, match="policies"):
        AutoSklearn2Selector(policies=["cv10"])
    with pytest.raises(ValueError, match="fallback"):
        AutoSklearn2Selector(policies=["cv3"], fallback="holdout+sh")


def test_the_real_selector_falls_back_beyond_lcdb_and_chooses_within_it():
    selector = AutoSklearn2Selector()
    huge = TaskDescription("x", "classification", 10_000_000, 10, "accuracy")
    policy = selector.select(huge, 30)
    assert policy.name == "holdout+sh" and policy.info["fallback"]
    assert dict(policy.resampling) == {"holdout": 0.33} and policy.halving
    small = TaskDescription("x", "classification", 700, 14, "accuracy")
    chosen = selector.select(small, 30)
    assert not chosen.info["fallback"] and chosen.info["simulated_budget_s"] == 30
    assert chosen.name in chosen.info["votes"]
    assert selector.select(small, 30) == chosen  # deterministic (and cached)


def test_resampling_auto_runs_on_real_data_and_records_the_policy(tmp_path):
    plugins = load_plugins()
    document = {
        "name": "auto",
        "task": {"dataset": "sklearn:breast_cancer", "resampling": "auto"},
        "space": "autosklearn-classification",
        "search": {"strategy": "random"},
        "executor": "sequential",
        "budget": {"trials": 2, "wall_time": 30},
        "seed": 0,
    }
    recipe = parse_recipe(document)
    setup = prepare(recipe, plugins)
    policy = setup.task.policy
    expected_kind = "cv" if "cv" in policy.resampling else "holdout"
    assert setup.task.evaluator.resampling.kind == expected_kind
    run(recipe, tmp_path / "run", plugins=plugins)
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        stored = history.get_meta("policy")
    assert stored["name"] == policy.name
    assert stored["strategy"] == ("successive_halving" if policy.halving else "random")


def test_votes_are_labelled_by_policy_in_whatever_order_the_policies_are_given():
    small = TaskDescription("x", "classification", 700, 14, "accuracy")
    forward = AutoSklearn2Selector(policies=["holdout", "cv5"], fallback="holdout")
    backward = AutoSklearn2Selector(policies=["cv5", "holdout"], fallback="holdout")
    chosen, again = forward.select(small, 30), backward.select(small, 30)
    assert chosen.name == again.name
    assert again.info["votes"] == chosen.info["votes"]
    votes = again.info["votes"]
    assert max(votes, key=votes.get) == again.name  # the winner has the most votes


def test_bagged_by_rows_bags_small_data_and_holds_out_large_data():
    from automl_core.contracts import TaskDescription
    from automl_policy.by_rows import BaggedByRows

    def task(rows):
        return TaskDescription("d", "classification", rows, 10, "balanced_accuracy")

    selector = BaggedByRows(max_bagged_rows=5000, folds=5, many_folds=8, many_folds_below=1000)
    assert selector.select(task(300), 60).resampling == {"cv": 8, "bag": True}
    assert selector.select(task(3000), 60).resampling == {"cv": 5, "bag": True}
    assert selector.select(task(30000), 60).resampling == {"holdout": 0.33}
    with pytest.raises(ValueError, match="folds must be an integer >= 2"):
        BaggedByRows(folds=1)


def test_bagged_by_rows_bags_large_data_whose_rarest_class_a_holdout_would_starve():
    """1,200 training rows, 40 of the rarest class: a 33 % holdout would validate on about
    13 of them, so with ``min_holdout_class_rows: 30`` the data is bagged though large; with
    400 of them (132 in the holdout), or for regression, rows alone decide; off by default."""
    from automl_core.contracts import TaskDescription
    from automl_policy.by_rows import BaggedByRows

    def task(rarest, kind="classification"):
        return TaskDescription("d", kind, 1200, 10, "balanced_accuracy", smallest_class_rows=rarest)

    selector = BaggedByRows(max_bagged_rows=500, many_folds_below=0, min_holdout_class_rows=30)
    imbalanced = selector.select(task(40), 60)
    assert imbalanced.resampling == {"cv": 5, "bag": True}
    assert imbalanced.info["holdout_rarest_class_rows"] == 13.2
    assert selector.select(task(400), 60).resampling == {"holdout": 0.33}
    assert selector.select(task(None, "regression"), 60).resampling == {"holdout": 0.33}
    assert BaggedByRows(max_bagged_rows=500).select(task(40), 60).resampling == {"holdout": 0.33}


def lda_on_iris(resampling: object) -> dict:
    """Two trials of LDA on iris, resampled as ``resampling`` says."""
    return {
        "name": "lda-on-iris",
        "task": {"dataset": "sklearn:iris", "resampling": resampling},
        "space": {
            "name": "autosklearn-classification",
            "params": {"include": {"classifier": ["lda"]}},
        },
        "search": {"name": "random"},
        "executor": "sequential",
        "budget": {"trials": 2},
        "seed": 0,
    }


def test_a_recipe_names_bagged_by_rows_and_runs_bagged(tmp_path):
    document = lda_on_iris({"auto": "bagged-by-rows"})
    summary = run(parse_recipe(document), tmp_path / "run", plugins=load_plugins())
    assert summary.refit_seconds == 0.0 and summary.bagged_seconds is not None
    assert (tmp_path / "run" / "fold_models").is_dir()
    with RunHistory(tmp_path / "run" / HISTORY_FILE, read_only=True) as history:
        assert history.get_meta("policy")["name"] == "bagged-cv8"  # 150 rows, below 1,000


def test_a_recipe_gives_the_selector_its_parameters(tmp_path):
    """``{auto: {name, params}}``: the thresholds reach the selector (iris has 150 training
    rows: bagged under the selector's defaults, held out with ``max_bagged_rows: 100``)."""
    by_rows = {"name": "bagged-by-rows", "params": {"max_bagged_rows": 100}}
    document = lda_on_iris({"auto": by_rows})
    recipe = parse_recipe(document)
    assert recipe.task.policy.params == {"max_bagged_rows": 100}
    run(recipe, tmp_path / "run", plugins=load_plugins())
    with RunHistory(tmp_path / "run" / HISTORY_FILE, read_only=True) as history:
        policy = history.get_meta("policy")
    assert policy["name"] == "holdout" and policy["info"] == {"rows": 150, "max_bagged_rows": 100}


def test_a_run_tells_the_selector_its_rarest_class(tmp_path):
    """The run counts the training rows of the rarest class (iris: 50): a 33 % holdout would
    hold 16.5 of them, under ``min_holdout_class_rows: 30``, so 150 rows are bagged though
    ``max_bagged_rows`` is 100."""
    params = {"max_bagged_rows": 100, "min_holdout_class_rows": 30}
    document = lda_on_iris({"auto": {"name": "bagged-by-rows", "params": params}})
    run(parse_recipe(document), tmp_path / "run", plugins=load_plugins())
    with RunHistory(tmp_path / "run" / HISTORY_FILE, read_only=True) as history:
        policy = history.get_meta("policy")
    assert policy["name"] == "bagged-cv8" and policy["info"]["holdout_rarest_class_rows"] == 16.5
