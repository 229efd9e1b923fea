"""Multi-fidelity budgets in the core: iterations declared by components, subsamples of the
training rows, the recipe's ``search.fidelity``, and which trials count as the best."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from toy_plugin import COMPONENTS, ToyPlugin, assemble, toy_recipe

from automl_core.contracts import DEFAULT_DATA_FIDELITY, Fidelity, SearchContext
from automl_core.errors import RecipeError
from automl_core.hookspecs import hookimpl
from automl_core.plugins import load_plugins
from automl_core.random_search import RandomSearch
from automl_core.space import BuildContext, Iterations, PipelineComponent, Stage
from automl_core.trial import Candidate, Result, Status, Trial
from automl_engine.cli import main
from automl_engine.evaluator import (
    MIN_SUBSAMPLE_ROWS,
    PipelineEvaluator,
    Resampling,
    interleaved_order,
    subsample_size,
)
from automl_engine.history import RunHistory
from automl_engine.metrics import get_metric
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_engine.sources import load_dataset
from automl_spaces.pipeline_space import PipelineSpace

FOREST = PipelineComponent(
    "forest",
    "classifier",
    lambda p, c: RandomForestClassifier(n_estimators=p.get("n_estimators", 64), random_state=0),
    tasks=frozenset({"classification"}),
    iterations=Iterations("n_estimators", 4, 64),
)


def space() -> PipelineSpace:
    rescaling = tuple(c for c in COMPONENTS if c.stage == "rescaling")
    tree = next(c for c in COMPONENTS if c.name == "decision_tree" and c.stage == "classifier")
    classifiers = (FOREST, tree)
    stages = (Stage("rescaling", rescaling), Stage("classifier", classifiers))
    return PipelineSpace("forest-or-tree", "classification", stages, assemble)


FOREST_CONFIG = {"rescaling:__choice__": "none", "classifier:__choice__": "forest"}
TREE_CONFIG = {
    "rescaling:__choice__": "none",
    "classifier:__choice__": "decision_tree",
    "classifier:decision_tree:max_depth": 3,
    "classifier:decision_tree:min_samples_leaf": 1,
}


def test_iterations_scale_with_the_budget_between_min_and_full():
    declared = Iterations("n_estimators", 32, 512)
    assert declared.at_budget(1 / 16, 512) == 32
    assert declared.at_budget(1 / 4, 512) == 128
    assert declared.at_budget(1 / 100, 512) == 32  # never below min
    assert declared.at_budget(1 / 4, 20) == 20  # never above the configured count
    assert declared.at_budget(1.0, 300) == 300


def test_build_shortens_only_the_components_that_declare_iterations():
    pipeline = space()
    cut = pipeline.build(FOREST_CONFIG, BuildContext("classification", budget=0.25))
    full = pipeline.build(FOREST_CONFIG, BuildContext("classification"))
    assert cut.named_steps["model"].n_estimators == 16
    assert full.named_steps["model"].n_estimators == 64
    assert pipeline.iterative(FOREST_CONFIG) and not pipeline.iterative(TREE_CONFIG)
    tree = pipeline.build(TREE_CONFIG, BuildContext("classification", budget=0.25))
    assert tree.named_steps["model"].max_depth == 3


def test_every_prefix_of_the_interleaved_order_is_nearly_stratified():
    labels = np.array([0] * 90 + [1] * 9 + [2] * 1)
    order = interleaved_order(len(labels), labels, seed=4)
    assert sorted(order) == list(range(100))
    assert set(labels[order[:3]]) == {0, 1, 2}  # one of every class first
    for size in (10, 30, 50):
        counts = np.bincount(labels[order[:size]], minlength=3)
        assert np.all(np.abs(counts - size * np.array([0.9, 0.09, 0.01])) <= 1.5)
    assert not np.array_equal(order, interleaved_order(len(labels), labels, seed=5))
    assert sorted(interleaved_order(7, None, seed=0)) == list(range(7))


def test_subsamples_have_a_floor_and_never_exceed_the_rows():
    assert subsample_size(10_000, 0.1) == 1000
    assert subsample_size(500, 0.1) == MIN_SUBSAMPLE_ROWS
    assert subsample_size(60, 0.1) == 60


def evaluator(fidelity: str) -> PipelineEvaluator:
    data = load_dataset(load_plugins(entry_points=False), "sklearn:breast_cancer")
    return PipelineEvaluator(
        data, space(), get_metric("accuracy"), Resampling("holdout", 0.3), seed=1, fidelity=fidelity
    )


def test_the_evaluator_spends_a_budget_as_iterations_or_as_a_subsample():
    by_iterations = evaluator("iterations")
    forest = by_iterations.evaluate(Trial(0, FOREST_CONFIG, budget=1 / 8))
    tree = by_iterations.evaluate(Trial(1, TREE_CONFIG, budget=1 / 8))
    full = by_iterations.evaluate(Trial(2, TREE_CONFIG))
    assert forest.ok and forest.info == {"budget": 1 / 8, "fidelity": "iterations"}
    assert tree.ok and tree.info == {"budget": 1 / 8, "fidelity": "subsample"}  # not iterative
    assert full.ok and full.info == {}
    subsampled = evaluator("subsample").evaluate(Trial(3, FOREST_CONFIG, budget=1 / 8))
    assert subsampled.info == {"budget": 1 / 8, "fidelity": "subsample"}
    # scored on the same validation rows whatever the budget
    assert len(forest.predictions) == len(tree.predictions) == len(full.predictions)


def test_a_smaller_subsample_fits_a_different_model():
    subsample = evaluator("subsample")
    small = subsample.evaluate(Trial(0, TREE_CONFIG, budget=0.26))  # 104 of 398 rows
    again = subsample.evaluate(Trial(1, TREE_CONFIG, budget=0.26))
    whole = subsample.evaluate(Trial(2, TREE_CONFIG, budget=1.0))
    np.testing.assert_array_equal(small.predictions, again.predictions)  # same rows
    assert not np.array_equal(small.predictions, whole.predictions)


def test_search_fidelity_in_the_recipe():
    recipe = parse_recipe(
        toy_recipe(search={"strategy": "random", "fidelity": {"kind": "subsample", "min": 0.2}})
    )
    assert recipe.search.fidelity.kind == "subsample" and recipe.search.fidelity.min == 0.2
    assert parse_recipe(toy_recipe(search={"strategy": "random", "fidelity": "iterations"}))
    for bad, path in [
        ({"kind": "subsample", "min": 0}, "search.fidelity.min"),
        ({"min": 0.5, "max": 0.5}, "search.fidelity"),
        ({"kind": "epochs", "speed": 2}, "search.fidelity.speed"),
        ({"kind": "epochs"}, "search.fidelity.kind"),  # not a way a data task spends budget
        ({"max": 2}, "search.fidelity"),  # a data task's budgets are fractions
        ({"min": 0.5, "max": 0.4}, "search.fidelity"),
        (3, "search.fidelity"),
    ]:
        with pytest.raises(RecipeError) as error:
            parse_recipe(toy_recipe(search={"strategy": "random", "fidelity": bad}))
        assert error.value.path == path
    # a benchmark's budgets are in its own units: checked against it when the run starts
    lookup = {"benchmark": "lcdb", "dataset": "6"}
    search = {"strategy": "random", "fidelity": {"kind": "train_size", "min": 64, "max": 512}}
    assert parse_recipe(toy_recipe(task=lookup, space=None, search=search))


class HalfBudgets(RandomSearch):
    """Random search that asks for a third of the budget on every other trial, and keeps
    the fidelity it was handed."""

    contexts: ClassVar[list[Fidelity | None]] = []

    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        HalfBudgets.contexts.append(context.fidelity)
        self.asked = 0

    def ask(self) -> Candidate | None:
        candidate = super().ask()
        assert candidate is not None
        self.asked += 1
        return Candidate(candidate.config, 1 / 3 if self.asked % 2 else 1.0, candidate.origin)


class HalfBudgetsPlugin:
    @hookimpl
    def register_search_strategies(self, register):
        register("half-budgets", HalfBudgets)


def test_the_strategy_gets_the_recipe_fidelity_and_trials_carry_budgets(tmp_path, capsys):
    plugins = load_plugins(extra=[ToyPlugin(), HalfBudgetsPlugin()], entry_points=False)
    HalfBudgets.contexts.clear()
    recipe = toy_recipe(
        search={"strategy": "half-budgets", "fidelity": {"kind": "subsample", "min": 0.25}},
        budget={"trials": 6},
    )
    summary = run(parse_recipe(recipe), tmp_path / "run", plugins=plugins)
    assert HalfBudgets.contexts == [Fidelity("subsample", 0.25, 1.0)]
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        budgets = [t.trial.budget for t in history.trials()]
        best = history.best(1)[0]
    assert budgets == [1 / 3, 1.0] * 3
    assert best.trial.budget == 1.0  # the best is taken among the full-budget trials
    assert summary.n_trials == 6
    assert main(["show", str(tmp_path / "run")]) == 0
    lines = capsys.readouterr().out.splitlines()[2:]
    rows = [line.split() for line in lines if not line.startswith("final model:")]
    assert [row[2] for row in rows] == ["1"] * 3 + ["0.3333"] * 3  # budget column, largest first


def test_a_data_task_without_search_fidelity_gets_the_default(plugins, tmp_path):
    from automl_engine.compose import prepare

    setup = prepare(parse_recipe(toy_recipe()), plugins)
    assert setup.strategy.context.fidelity == DEFAULT_DATA_FIDELITY
    assert setup.task.evaluator.fidelity == DEFAULT_DATA_FIDELITY.kind


def test_best_ranks_the_largest_budget_first_and_each_configuration_once(tmp_path):
    with RunHistory(tmp_path / "h.sqlite") as history:
        for id_, config, budget, loss in [
            (0, {"x": 0}, 1 / 9, 0.05),  # lucky at a small budget
            (1, {"x": 1}, 1 / 9, 0.30),
            (2, {"x": 1}, 1 / 3, 0.20),
            (3, {"x": 1}, 1.0, 0.25),
            (4, {"x": 2}, 1.0, 0.10),
            (5, {"x": 3}, 1 / 3, 0.15),
        ]:
            trial = Trial(id_, config, budget)
            history.start(trial)
            history.finish(trial, Result(Status.OK, loss))
        ranked = [t.trial.id for t in history.best(10)]
    assert ranked == [4, 3, 5, 0]  # {"x": 1} once, at its largest budget
