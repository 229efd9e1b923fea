"""The smac3 strategy: through the real run loop on the oboe benchmark and auto-sklearn's space,
and directly for the rules the run loop relies on (several asks before a tell, warm start,
failures, determinism, exhaustion of a pool)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

pytest.importorskip("smac", reason="needs smac: pip install -e contrib/automl-smac3")

from peer_checks import check_oboe_run, check_pipeline_run, grid_pool, ok, pool_loss
from smac.runhistory.enumerations import StatusType

from automl_core.contracts import SearchContext, WarmStart
from automl_core.trial import Result, Status, Trial
from automl_smac3.strategy import SMAC3
from automl_spaces.pool_space import PoolSpace

#: Cheaper model steps for tests (SMAC's own defaults cost seconds per step on 2 cores).
FAST = {"local_search_max_steps": 5, "challengers": 2000, "n_trees": 3}


def strategy_on(space, seed: int = 0, warm: list | None = None, **params) -> SMAC3:
    strategy = SMAC3(**{**FAST, **params})
    strategy.setup(SearchContext(space=space, seed=seed, warm_start=WarmStart(warm or [])))
    return strategy


# ---------------------------------------------------------------------------------------------
# Through the run loop
# ---------------------------------------------------------------------------------------------


def test_oboe_run_proposes_each_candidate_once_and_beats_the_median(plugins, tmp_path):
    trials = check_oboe_run(
        {"strategy": "smac3", "params": {"expected_trials": 30, **FAST}}, plugins, tmp_path
    )
    origins = {t.trial.origin for t in trials}
    assert "initial" in origins and "model" in origins  # SMAC's model took over


def test_pipeline_run_proposes_valid_configurations(plugins, cheap_space, cheap_include, tmp_path):
    check_pipeline_run(
        {"strategy": "smac3", "params": {"expected_trials": 6, **FAST}},
        plugins,
        cheap_space,
        cheap_include,
        tmp_path,
    )


# ---------------------------------------------------------------------------------------------
# Directly
# ---------------------------------------------------------------------------------------------


def first_configs(space, seed: int, n: int) -> list[dict]:
    strategy = strategy_on(space, seed=seed, expected_trials=8)
    configs = []
    for trial_id in range(n):
        candidate = strategy.ask()
        configs.append(candidate.config)
        loss = 0.1 if candidate.config["classifier:__choice__"] == "decision_tree" else 0.3
        strategy.tell(Trial(trial_id, candidate.config), ok(loss + 0.01 * trial_id))
    return configs


def test_same_seed_same_configurations_other_seed_others(cheap_space):
    first = first_configs(cheap_space, seed=3, n=5)
    assert first_configs(cheap_space, seed=3, n=5) == first
    assert first_configs(cheap_space, seed=4, n=5) != first
    assert all(cheap_space.validate(c) == c for c in first)


def test_several_asks_before_tells_on_a_pipeline_space(cheap_space):
    strategy = strategy_on(cheap_space, expected_trials=4)
    asked = [strategy.ask() for _ in range(6)]  # more than the initial design
    keys = {cheap_space.key(c.config) for c in asked}
    assert len(keys) == 6
    for trial_id, candidate in reversed(list(enumerate(asked))):  # results out of order
        strategy.tell(Trial(trial_id, candidate.config), ok(0.1 * trial_id))
    more = [strategy.ask() for _ in range(3)]  # the model's proposals, after all the tells
    assert {c.origin for c in more} <= {"model", "random"}
    assert not keys & {cheap_space.key(c.config) for c in more}
    assert strategy.smac.runhistory.finished == 6


def test_pool_is_searched_to_exhaustion_with_asks_ahead_of_tells():
    space = grid_pool()
    strategy = strategy_on(space, expected_trials=12)
    proposed, waiting = [], []
    while (candidate := strategy.ask()) is not None:
        proposed.append(candidate.config["candidate"])
        waiting.append(Trial(len(proposed), candidate.config))
        if len(waiting) == 3:  # three workers: tell the oldest when a fourth is asked
            trial = waiting.pop(0)
            strategy.tell(trial, ok(pool_loss(space, trial.config)))
    assert sorted(proposed) == [i for i in range(25) if i != 7]  # all offered, each once
    assert strategy.ask() is None


def test_pool_search_learns_and_tells_smac_the_candidates():
    space = grid_pool()
    strategy = strategy_on(space, expected_trials=12)
    losses, origins = [], []
    for trial_id in range(15):
        candidate = strategy.ask()
        losses.append(pool_loss(space, candidate.config))
        origins.append(candidate.origin)
        strategy.tell(Trial(trial_id, candidate.config), ok(losses[-1]))
    assert min(losses) == 0.0  # the optimum among 24 candidates
    by_model = [loss for loss, origin in zip(losses, origins, strict=True) if origin == "model"]
    assert np.mean(by_model) < np.mean([pool_loss(space, c) for c in space.candidates()])
    told = strategy.smac.runhistory.get_configs()
    assert len(told) == 15 and strategy.smac.runhistory.running == 0
    grid_points = {tuple(row[:2]) for row in space.encodings}
    assert all((c["x0"], c["x1"]) in grid_points for c in told)  # candidates, not proposals


def test_warm_start_goes_first_and_is_not_proposed_again():
    space = grid_pool()
    warm = [{"candidate": 12}, {"candidate": 7}, {"candidate": 3}]  # 7 is not offered
    strategy = strategy_on(space, warm=warm, expected_trials=12)
    asked = []
    for trial_id in range(10):
        candidate = strategy.ask()
        asked.append(candidate)
        strategy.tell(Trial(trial_id, candidate.config), ok(pool_loss(space, candidate.config)))
    assert [c.config for c in asked[:2]] == [{"candidate": 12}, {"candidate": 3}]
    assert [c.origin for c in asked[:2]] == ["warmstart", "warmstart"]
    assert len({c.config["candidate"] for c in asked}) == 10


def test_failures_are_told_as_crashes_with_the_worst_finite_loss():
    space = grid_pool()
    strategy = strategy_on(space, expected_trials=12)
    asked = [strategy.ask() for _ in range(4)]
    crashed = Result.failure(Status.CRASHED, "boom")
    strategy.tell(Trial(0, asked[0].config), crashed)  # before any finite loss: held back
    assert strategy.smac.runhistory.finished == 0
    strategy.tell(Trial(1, asked[1].config), ok(0.25))
    strategy.tell(Trial(2, asked[2].config), ok(0.75))
    strategy.tell(Trial(3, asked[3].config), crashed)
    values = list(strategy.smac.runhistory.values())
    crashes = [v.cost for v in values if v.status == StatusType.CRASHED]
    assert crashes == [0.25, 0.75]  # the worst finite loss when each crash was told
    assert all(math.isfinite(v.cost) for v in values)
    assert strategy.ask() is not None  # SMAC's model still fits on the finite costs


def test_replayed_results_are_learned_and_not_proposed_again():
    space = grid_pool()
    strategy = strategy_on(space, expected_trials=12)
    for trial_id, candidate in enumerate([0, 4, 20, 24]):  # a resumed run's history
        config = {"candidate": candidate}
        strategy.tell(Trial(trial_id, config), ok(pool_loss(space, config)))
    proposed = [strategy.ask().config["candidate"] for _ in range(20)]
    assert not {0, 4, 20, 24} & set(proposed) and len(set(proposed)) == 20
    assert strategy.smac.runhistory.finished == 4


def test_output_folder_is_removed_with_the_strategy():
    strategy = strategy_on(grid_pool())
    folder = strategy.output_directory
    assert folder.is_dir()
    strategy._cleanup()  # what happens when the strategy is collected, or at exit
    assert not os.path.exists(folder)


def test_bad_parameters_and_spaces_are_rejected_clearly():
    with pytest.raises(ValueError, match="expected_trials"):
        SMAC3(expected_trials=0)
    with pytest.raises(ValueError, match="crash_cost"):
        SMAC3(crash_cost=math.inf)
    with pytest.raises(TypeError, match="PipelineSpace or a PoolSpace"):
        SMAC3().setup(SearchContext(space=object(), seed=0))
    flat = PoolSpace("flat", np.ones((3, 2)))
    with pytest.raises(ValueError, match="same encoding"):
        SMAC3().setup(SearchContext(space=flat, seed=0))
