"""The optuna-tpe strategy: through the real run loop on the oboe benchmark and auto-sklearn's
space, and directly for the rules the run loop relies on (several asks before a tell,
conditions and forbidden clauses, repeats, warm start, failures, determinism, exhaustion)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("optuna", reason="needs optuna: pip install -e contrib/automl-optuna")

from ConfigSpace import ConfigurationSpace, EqualsCondition, GreaterThanCondition, OrConjunction
from optuna.trial import TrialState
from peer_checks import check_oboe_run, check_pipeline_run, grid_pool, ok, pool_loss

from automl_core.contracts import SearchContext, WarmStart
from automl_core.space import PipelineComponent, Stage
from automl_core.trial import Result, Status, Trial
from automl_engine.proposals import start
from automl_optuna.adapters import condition_holds, topological_order
from automl_optuna.strategy import OptunaTPE
from automl_spaces.pipeline_space import PipelineSpace
from automl_spaces.pool_space import PoolSpace


def three_model_space() -> PipelineSpace:
    """A space of exactly three configurations: one stage, three components, no parameters."""
    components = tuple(PipelineComponent(name, "model", lambda p, c: None) for name in "abc")
    return PipelineSpace("tiny", "classification", (Stage("model", components),), lambda c, x: 0)


def strategy_on(space, seed: int = 0, warm: list | None = None, **params) -> OptunaTPE:
    strategy = OptunaTPE(**params)
    strategy.setup(SearchContext(space=space, seed=seed, warm_start=WarmStart(warm or [])))
    return strategy


def synthetic_loss(config: dict) -> float:
    """A deterministic loss that depends on a few of the pipeline's choices."""
    loss = 0.1 if config["classifier:__choice__"] == "decision_tree" else 0.3
    return loss + (0.2 if config["feature_preprocessor:__choice__"] != "no_preprocessing" else 0)


# ---------------------------------------------------------------------------------------------
# Through the run loop
# ---------------------------------------------------------------------------------------------


def test_oboe_run_proposes_each_candidate_once_and_beats_the_median(plugins, tmp_path):
    trials = check_oboe_run("optuna-tpe", plugins, tmp_path)
    assert {t.trial.origin for t in trials} == {"random", "model"}  # TPE took over


def test_pipeline_run_proposes_valid_configurations(plugins, cheap_space, cheap_include, tmp_path):
    check_pipeline_run("optuna-tpe", plugins, cheap_space, cheap_include, tmp_path)


# ---------------------------------------------------------------------------------------------
# Directly, on a pipeline space
# ---------------------------------------------------------------------------------------------


def first_configs(space, seed: int, n: int) -> list[dict]:
    strategy = strategy_on(space, seed=seed, n_startup_trials=3)
    configs = []
    for trial_id in range(n):
        candidate = strategy.ask()
        configs.append(candidate.config)
        strategy.tell(Trial(trial_id, candidate.config), ok(synthetic_loss(candidate.config)))
    return configs


def test_same_seed_same_configurations_other_seed_others(cheap_space):
    first = first_configs(cheap_space, seed=3, n=6)  # three random, three from TPE
    assert first_configs(cheap_space, seed=3, n=6) == first
    assert first_configs(cheap_space, seed=4, n=6) != first


def test_suggestions_follow_conditions_and_skip_forbidden_configurations(cheap_space):
    strategy = strategy_on(cheap_space, n_startup_trials=5)
    constants = {n for n, h in cheap_space.configspace.items() if type(h).__name__ == "Constant"}
    for trial_id in range(40):
        candidate = strategy.ask()
        config = candidate.config
        assert cheap_space.validate(config) == config  # active values only, none forbidden
        (optuna_trial,) = strategy.pending[cheap_space.key(config)]
        assert set(optuna_trial.params) == set(config) - constants  # exactly the active ones
        strategy.tell(Trial(trial_id, config), ok(synthetic_loss(config)))
    states = [t.state for t in strategy.study.get_trials(deepcopy=False)]
    assert states.count(TrialState.COMPLETE) >= 40
    assert TrialState.FAIL in states  # forbidden combinations were sampled and closed


def test_several_asks_before_tells_on_a_pipeline_space(cheap_space):
    strategy = strategy_on(cheap_space, n_startup_trials=2)
    asked = [strategy.ask() for _ in range(6)]  # TPE's start-up and model phases
    keys = {cheap_space.key(c.config) for c in asked}
    assert len(keys) == 6
    for trial_id, candidate in reversed(list(enumerate(asked))):  # results out of order
        strategy.tell(Trial(trial_id, candidate.config), ok(synthetic_loss(candidate.config)))
    more = [strategy.ask() for _ in range(3)]
    assert {c.origin for c in more} == {"model"}
    assert not keys & {cheap_space.key(c.config) for c in more}


def test_repeats_are_told_the_known_loss_and_a_finite_space_runs_out():
    space = three_model_space()
    strategy = strategy_on(space, n_startup_trials=1, max_retries=5)
    proposed = []
    while (candidate := strategy.ask()) is not None:
        proposed.append(candidate.config["model:__choice__"])
        loss = {"a": 0.3, "b": 0.1, "c": 0.2}[proposed[-1]]
        strategy.tell(Trial(len(proposed), candidate.config), ok(loss))
    assert sorted(proposed) == ["a", "b", "c"]
    complete = strategy.study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    assert len(complete) > 3  # the repeats TPE sampled were observations too
    assert {t.value for t in complete} == {0.3, 0.1, 0.2}


# ---------------------------------------------------------------------------------------------
# Directly, on a pool
# ---------------------------------------------------------------------------------------------


def test_pool_is_searched_to_exhaustion_with_asks_ahead_of_tells():
    space = grid_pool()
    strategy = strategy_on(space, n_startup_trials=4)
    proposed, waiting = [], []
    while (candidate := strategy.ask()) is not None:
        proposed.append(candidate.config["candidate"])
        waiting.append(Trial(len(proposed), candidate.config))
        if len(waiting) == 3:  # three workers: tell the oldest when a fourth is asked
            trial = waiting.pop(0)
            strategy.tell(trial, ok(pool_loss(space, trial.config)))
    assert sorted(proposed) == [i for i in range(25) if i != 7]  # all offered, each once
    assert strategy.ask() is None


def test_pool_search_learns_and_tells_optuna_the_candidates():
    space = grid_pool()
    strategy = strategy_on(space, n_startup_trials=4)
    losses, origins = [], []
    for trial_id in range(12):
        candidate = strategy.ask()
        losses.append(pool_loss(space, candidate.config))
        origins.append(candidate.origin)
        strategy.tell(Trial(trial_id, candidate.config), ok(losses[-1]))
    assert min(losses) == 0.0  # the optimum among 24 candidates
    by_model = [loss for loss, origin in zip(losses, origins, strict=True) if origin == "model"]
    assert np.mean(by_model) < np.mean([pool_loss(space, c) for c in space.candidates()])
    complete = strategy.study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    grid_points = {tuple(row[:2]) for row in space.encodings}
    assert len(complete) == 12
    assert all((t.params["x0"], t.params["x1"]) in grid_points for t in complete)


def test_warm_start_goes_first_and_is_not_proposed_again():
    space = grid_pool()
    warm = [{"candidate": 12}, {"candidate": 7}, {"candidate": 3}]  # 7 is not offered
    strategy = OptunaTPE(n_startup_trials=4)  # the run loop serves the warm start
    proposals = start(strategy, SearchContext(space=space, seed=0, warm_start=WarmStart(warm)))
    asked = []
    for trial_id in range(10):
        candidate = proposals.ask()
        asked.append(candidate)
        strategy.tell(Trial(trial_id, candidate.config), ok(pool_loss(space, candidate.config)))
    assert [c.config for c in asked[:2]] == [{"candidate": 12}, {"candidate": 3}]
    assert [c.origin for c in asked[:2]] == ["warmstart", "warmstart"]
    assert len({c.config["candidate"] for c in asked}) == 10
    assert proposals.refused == 0  # TPE never proposed the warm start's again itself


def test_failures_are_told_as_the_worst_finite_loss():
    space = grid_pool()
    strategy = strategy_on(space)
    asked = [strategy.ask() for _ in range(4)]
    crashed = Result.failure(Status.CRASHED, "boom")
    strategy.tell(Trial(0, asked[0].config), crashed)  # before any finite loss: held back
    assert not strategy.study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    strategy.tell(Trial(1, asked[1].config), ok(0.25))
    strategy.tell(Trial(2, asked[2].config), ok(0.75))
    strategy.tell(Trial(3, asked[3].config), crashed)
    values = [t.value for t in strategy.study.get_trials(states=(TrialState.COMPLETE,))]
    assert sorted(values) == [0.25, 0.25, 0.75, 0.75]  # each crash: the worst loss so far


def test_replayed_results_are_learned_and_not_proposed_again():
    space = grid_pool()
    strategy = strategy_on(space)
    for trial_id, candidate in enumerate([0, 4, 20, 24]):  # a resumed run's history
        config = {"candidate": candidate}
        strategy.tell(Trial(trial_id, config), ok(pool_loss(space, config)))
    proposed = [strategy.ask().config["candidate"] for _ in range(20)]
    assert not {0, 4, 20, 24} & set(proposed) and len(set(proposed)) == 20
    assert len(strategy.study.get_trials(states=(TrialState.COMPLETE,))) == 4


# ---------------------------------------------------------------------------------------------
# The ConfigSpace walk, and bad input
# ---------------------------------------------------------------------------------------------


def test_topological_order_and_conditions_on_a_nested_space():
    space = ConfigurationSpace({"z": (1, 5), "a": ["x", "y"], "b": (0.0, 1.0), "d": ["p", "q"]})
    either = OrConjunction(
        EqualsCondition(space["z"], space["a"], "x"),
        GreaterThanCondition(space["z"], space["b"], 0.5),
    )
    space.add(either, EqualsCondition(space["d"], space["z"], 3))
    order = topological_order(space)
    assert order.index("z") > max(order.index("a"), order.index("b"))
    assert order.index("d") > order.index("z")
    assert condition_holds(either, {"a": "y", "b": 0.7})  # one branch is enough
    assert not condition_holds(either, {"a": "y", "b": 0.2})
    assert not condition_holds(space.parent_conditions_of["d"][0], {"a": "y"})  # z inactive


def test_bad_parameters_and_spaces_are_rejected_clearly():
    with pytest.raises(ValueError, match="max_retries"):
        OptunaTPE(max_retries=0)
    with pytest.raises(ValueError, match="multivariate"):
        OptunaTPE(multivariate=False, group=True)
    with pytest.raises(TypeError, match="PipelineSpace or a PoolSpace"):
        OptunaTPE().setup(SearchContext(space=object(), seed=0))
    flat = PoolSpace("flat", np.ones((3, 2)))
    with pytest.raises(ValueError, match="same encoding"):
        OptunaTPE().setup(SearchContext(space=flat, seed=0))
