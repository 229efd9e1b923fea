"""Successive halving, Hyperband and ASHA: the schedule against the formulas, promotions,
parallel asks, model-based sampling, and real runs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml
from ConfigSpace import ConfigurationSpace, Float, Integer
from scipy.stats import norm
from sklearn.ensemble import RandomForestRegressor

from automl_core.contracts import Fidelity, SearchContext, Surrogate, WarmStart
from automl_core.space import PipelineComponent, Stage
from automl_core.trial import Result, Status, Trial
from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.proposals import Proposals
from automl_engine.run_folder import HISTORY_FILE
from automl_halving.schedule import Rung, halving_bracket, hyperband_brackets, rung_budgets
from automl_halving.strategy import (
    AsynchronousHalving,
    Bracket,
    Hyperband,
    Slot,
    SuccessiveHalving,
)
from automl_spaces.pipeline_space import PipelineSpace
from automl_spaces.pool_space import PoolSpace

# -- the schedule --------------------------------------------------------------------------------


def test_hyperband_brackets_are_those_of_the_hyperband_paper():
    """Li et al. (2018), Table 1: R = 81, eta = 3."""
    sizes = [[rung.size for rung in b] for b in hyperband_brackets(1, 81, 3)]
    budgets = [[rung.budget for rung in b] for b in hyperband_brackets(1, 81, 3)]
    assert sizes == [[81, 27, 9, 3, 1], [34, 11, 3, 1], [15, 5, 1], [8, 2], [5]]
    assert budgets == [[1, 3, 9, 27, 81], [3, 9, 27, 81], [9, 27, 81], [27, 81], [81]]


def test_successive_halving_is_auto_sklearn_2s_posh_bracket():
    """eta = 4, 32 -> 512 iterations: 16 pipelines at 32, 4 at 128, 1 at 512."""
    assert halving_bracket(32, 512, 4) == [Rung(16, 32), Rung(4, 128), Rung(1, 512)]
    assert rung_budgets(1 / 9, 1, 3) == pytest.approx([1 / 9, 1 / 3, 1])


@pytest.mark.parametrize("eta,low,high", [(3, 1 / 27, 1), (2, 16, 2588), (4, 0.05, 1)])
def test_every_bracket_follows_the_formula(eta, low, high):
    s_max = math.floor(math.log(high / low, eta) + 1e-9)
    for s, rungs in zip(range(s_max, -1, -1), hyperband_brackets(low, high, eta), strict=True):
        n = math.ceil((s_max + 1) / (s + 1) * eta**s)
        assert [r.size for r in rungs] == [math.floor(n * eta**-i + 1e-9) for i in range(s + 1)]
        assert [r.budget for r in rungs] == pytest.approx(
            [high * eta ** (i - s) for i in range(s + 1)]
        )


def test_a_bad_range_is_refused():
    with pytest.raises(ValueError, match="eta must be greater than 1"):
        hyperband_brackets(1, 9, 1)
    with pytest.raises(ValueError, match="min_budget < max_budget"):
        halving_bracket(1, 1, 3)


# -- strategies on a pool, driven by hand --------------------------------------------------------


def pool(size: int = 200, width: int = 3, seed: int = 0) -> PoolSpace:
    return PoolSpace("points", np.random.default_rng(seed).random((size, width)))


def loss_of(space: PoolSpace, config: dict, budget: float) -> float:
    """Distance to a corner, plus noise that shrinks as the budget grows (a learning curve)."""
    point = space.encodings[config["candidate"]]
    noise = 0.3 * (1 - budget) * math.sin(1000 * config["candidate"])
    return float(np.linalg.norm(point - 0.1) + noise)


NINTH_TO_FULL = Fidelity("subsample", 1 / 9, 1.0)


def started(strategy, space, fidelity=NINTH_TO_FULL, seed=0, **context):
    strategy.setup(SearchContext(space=space, seed=seed, fidelity=fidelity, **context))
    return strategy


def drive(strategy, space, trials: int) -> list[Trial]:
    """Sequential ask/tell; the trials in order."""
    done = []
    for index in range(trials):
        candidate = strategy.ask()
        if candidate is None:
            break
        trial = Trial(index, candidate.config, candidate.budget, candidate.origin)
        strategy.tell(trial, Result(Status.OK, loss_of(space, trial.config, trial.budget)))
        done.append(trial)
    return done


def test_successive_halving_promotes_the_best_third_of_each_rung():
    space = pool()
    trials = drive(started(SuccessiveHalving(eta=3), space), space, 13)
    budgets = [t.budget for t in trials]
    assert budgets == pytest.approx([1 / 9] * 9 + [1 / 3] * 3 + [1.0])
    first = sorted(trials[:9], key=lambda t: loss_of(space, t.config, 1 / 9))
    assert [t.config for t in trials[9:12]] == [t.config for t in first[:3]]
    second = sorted(trials[9:12], key=lambda t: loss_of(space, t.config, 1 / 3))
    assert trials[12].config == second[0].config
    assert [t.origin for t in trials[9:]] == ["promotion"] * 4


def test_hyperband_cycles_through_its_brackets():
    space = pool()
    trials = drive(started(Hyperband(eta=3), space), space, 13 + 6 + 3 + 13)
    budgets = [round(t.budget, 4) for t in trials]
    third, ninth = round(1 / 3, 4), round(1 / 9, 4)
    assert budgets[:13] == [ninth] * 9 + [third] * 3 + [1.0]
    assert budgets[13:19] == [third] * 5 + [1.0]  # bracket s = 1: 5 at 1/3, 1 at 1
    assert budgets[19:22] == [1.0] * 3  # bracket s = 0: 3 at full budget
    assert budgets[22:] == budgets[:13]  # and round again


def test_parallel_asks_open_the_next_bracket_instead_of_waiting():
    space = pool()
    strategy = started(SuccessiveHalving(eta=3), space)
    asked = [strategy.ask() for _ in range(12)]  # nothing told yet
    assert all(c is not None for c in asked)
    assert [c.budget for c in asked] == pytest.approx([1 / 9] * 12)
    keys = {space.key(c.config) for c in asked}
    assert len(keys) == 12  # new configurations, never a repeat
    for index, candidate in reversed(list(enumerate(asked))):  # results in any order
        trial = Trial(index, candidate.config, candidate.budget)
        strategy.tell(trial, Result(Status.OK, loss_of(space, trial.config, trial.budget)))
    promoted = strategy.ask()
    assert promoted.budget == pytest.approx(1 / 3) and promoted.origin == "promotion"


def test_a_failed_trial_is_never_promoted():
    space = pool()
    strategy = started(SuccessiveHalving(eta=3), space)
    failed = set()
    for index in range(9):
        candidate = strategy.ask()
        trial = Trial(index, candidate.config, candidate.budget)
        if index < 7:
            failed.add(space.key(trial.config))
            strategy.tell(trial, Result.failure(Status.CRASHED, "boom"))
        else:
            strategy.tell(trial, Result(Status.OK, 0.5))
    promoted = [strategy.ask() for _ in range(2)]
    assert all(c.origin == "promotion" for c in promoted)
    assert not {space.key(c.config) for c in promoted} & failed


def test_the_warm_start_fills_the_first_bracket_first():
    space = pool()
    warm = WarmStart(configs=[{"candidate": 7}, {"candidate": 3}])
    strategy = started(SuccessiveHalving(eta=3), space, warm_start=warm)
    first = [strategy.ask() for _ in range(3)]
    assert [c.config for c in first[:2]] == [{"candidate": 7}, {"candidate": 3}]
    assert [c.origin for c in first] == ["warmstart", "warmstart", "random"]


def test_a_small_pool_shrinks_the_bracket_and_revisits_at_larger_budgets():
    space = pool(size=5)
    trials = drive(started(Hyperband(eta=3), space), space, 40)
    pairs = [(space.key(t.config), round(t.budget, 6)) for t in trials]
    assert len(pairs) == len(set(pairs))  # never the same configuration at the same budget
    assert len(trials) > 5 and {t.origin for t in trials} >= {"random", "promotion"}


def test_successive_halving_on_a_small_pool_goes_on_at_larger_budgets():
    space = pool(size=5)
    trials = drive(started(SuccessiveHalving(eta=3), space), space, 40)
    pairs = [(space.key(t.config), round(t.budget, 6)) for t in trials]
    assert len(pairs) == len(set(pairs))
    first = [t for t in trials if t.budget == pytest.approx(1 / 9)]
    assert len(first) == 5  # every candidate once at the smallest budget
    assert len(trials) > 8  # then brackets that start higher up, not the end of the run
    assert {space.key(t.config) for t in trials if t.budget == pytest.approx(1.0)} == {
        space.key({"candidate": i}) for i in range(5)
    }  # until every candidate has had the full budget


def test_a_bracket_closed_early_scales_its_later_rungs_alike():
    bracket = Bracket([Rung(9, 1 / 9), Rung(3, 1 / 3), Rung(1, 1.0)])
    bracket.slots = [Slot({"candidate": i}, "random") for i in range(4)]
    bracket.shrink()  # 4 of 9: the later rungs keep 4/9 of their size, at least one
    assert bracket.rungs == [Rung(4, 1 / 9), Rung(1, 1 / 3), Rung(1, 1.0)]
    bracket = Bracket([Rung(27, 1 / 27), Rung(9, 1 / 9), Rung(3, 1 / 3), Rung(1, 1.0)])
    bracket.slots = [Slot({"candidate": i}, "random") for i in range(18)]
    bracket.shrink()
    assert [rung.size for rung in bracket.rungs] == [18, 6, 2, 1]
    bracket = Bracket([Rung(9, 1 / 9), Rung(3, 1 / 3), Rung(1, 1.0)])
    bracket.shrink()  # nothing to start at all: an empty bracket
    assert [rung.size for rung in bracket.rungs] == [0, 0, 0]
    # in a run: a pool of 5 fills 5 of the first rung's 9, so 1 (not 3) is promoted
    space = pool(size=5)
    trials = drive(started(SuccessiveHalving(eta=3), space), space, 7)
    assert [t.budget for t in trials] == pytest.approx([1 / 9] * 5 + [1 / 3, 1.0])


def test_the_same_seed_gives_the_same_search():
    space = pool()
    one = drive(started(Hyperband(), space, seed=4), space, 30)
    two = drive(started(Hyperband(), space, seed=4), space, 30)
    other = drive(started(Hyperband(), space, seed=5), space, 30)
    assert [t.config for t in one] == [t.config for t in two]
    assert [t.config for t in one] != [t.config for t in other]


def test_a_task_without_a_budget_range_is_refused():
    with pytest.raises(ValueError, match="needs a budget range"):
        started(Hyperband(), pool(), fidelity=None)
    with pytest.raises(ValueError, match="eta must be a number > 1"):
        Hyperband(eta=1)


def test_asha_promotes_without_waiting_for_a_full_rung():
    space = pool()
    strategy = started(AsynchronousHalving(eta=3), space)
    asked = [strategy.ask() for _ in range(3)]
    assert [c.budget for c in asked] == pytest.approx([1 / 9] * 3)
    losses = [0.9, 0.2, 0.5]
    for index, (candidate, loss) in enumerate(zip(asked, losses, strict=True)):
        strategy.tell(Trial(index, candidate.config, candidate.budget), Result(Status.OK, loss))
    promoted = strategy.ask()  # 3 finished at the lowest rung: the best one moves up
    assert promoted.origin == "promotion" and promoted.config == asked[1].config
    assert promoted.budget == pytest.approx(1 / 3)
    assert strategy.ask().budget == pytest.approx(1 / 9)  # nothing else to promote: a new one


def test_asha_keeps_every_worker_busy_and_finds_good_configurations():
    space = pool()
    trials = drive(started(AsynchronousHalving(eta=3), space), space, 60)
    assert len(trials) == 60
    top = [t for t in trials if t.budget == pytest.approx(1.0)]
    assert top  # some configurations reached the full budget
    everything = sorted(loss_of(space, {"candidate": i}, 1.0) for i in range(space.size))
    best = min(loss_of(space, t.config, 1.0) for t in top)
    assert best <= everything[len(everything) // 10]  # among the best tenth of the pool


def test_asha_promotes_from_the_highest_rung_first():
    space = pool()
    strategy = started(AsynchronousHalving(eta=3), space)
    ids = iter(range(100))

    def tell(candidates, losses):
        for candidate, loss in zip(candidates, losses, strict=True):
            trial = Trial(next(ids), candidate.config, candidate.budget)
            strategy.tell(trial, Result(Status.OK, loss))

    first = [strategy.ask() for _ in range(9)]  # nothing finished: nine new ones
    tell(first, [0.1 * (i + 1) for i in range(9)])
    up = [strategy.ask() for _ in range(3)]  # the best third moves up to 1/3
    assert [c.config for c in up] == [c.config for c in first[:3]]
    newcomers = [strategy.ask() for _ in range(3)]  # nothing else to promote: new ones
    assert [c.budget for c in newcomers] == pytest.approx([1 / 9] * 3)
    tell(newcomers, [0.01, 0.02, 0.03])  # now in the lowest rung's best third...
    tell(up, [0.5, 0.4, 0.6])  # ...while the middle rung has one to promote
    top = strategy.ask()
    assert top.origin == "promotion" and top.budget == pytest.approx(1.0)
    assert top.config == up[1].config
    then = [strategy.ask() for _ in range(3)]
    assert [c.config for c in then] == [c.config for c in newcomers]
    assert [c.budget for c in then] == pytest.approx([1 / 3] * 3)


def test_asha_on_a_used_up_pool_pushes_the_best_unpromoted_further():
    """Four candidates: one promotion by the 1/eta rule, then (nothing new left) the best
    unpromoted configuration of the highest rung that has one, until all reach the top."""
    space = pool(size=4)
    trials = drive(started(AsynchronousHalving(eta=3), space), space, 40)
    pairs = {(t.config["candidate"], round(t.budget, 6)) for t in trials}
    assert len(trials) == len(pairs) == 12  # every candidate at every budget, once
    new = [i for i, t in enumerate(trials) if t.origin == "random"]
    assert len(new) == 4
    after = trials[new[-1] + 1 :]
    assert all(t.origin == "promotion" for t in after)
    # the first push after the pool ran out: the best at 1/3 goes to the full budget
    at_third = [t for t in trials[: new[-1]] if t.budget == pytest.approx(1 / 3)]
    best = min(at_third, key=lambda t: loss_of(space, t.config, t.budget))
    assert after[0].config == best.config and after[0].budget == pytest.approx(1.0)


# -- model-based sampling (BOHB) -----------------------------------------------------------------


class ForestSurrogate(Surrogate):
    """A random forest whose trees' spread is the uncertainty."""

    def fit(self, X: np.ndarray, y: np.ndarray) -> ForestSurrogate:
        self.forest = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, y)
        return self

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        per_tree = np.stack([tree.predict(X) for tree in self.forest.estimators_])
        return per_tree.mean(axis=0), per_tree.std(axis=0)


def test_with_a_surrogate_new_configurations_come_from_the_model():
    space = pool(size=400)
    ratios = []
    for seed in range(4):
        strategy = Hyperband(eta=3, min_points=5)
        strategy = started(strategy, space, seed=seed, surrogate_factory=ForestSurrogate)
        trials = drive(strategy, space, 60)
        origins = [t.origin for t in trials]
        assert origins[:5] == ["random"] * 5  # no model before min_points results
        by_model = [t for t in trials if t.origin.startswith("model@")]
        by_chance = [t for t in trials if t.origin == "random"]
        assert len(by_model) > 10
        ratios.append(
            np.mean([loss_of(space, t.config, 1.0) for t in by_model])
            / np.mean([loss_of(space, t.config, 1.0) for t in by_chance])
        )
    # the model's picks are better than the random ones of the same runs (0.56-0.84 measured)
    assert np.mean(ratios) < 0.85


class Scripted(Surrogate):
    """Predicts the loss from the first encoded column and its standard deviation from the
    second, whatever it was fitted on; keeps every (X, y) it was fitted on."""

    def __init__(self) -> None:
        self.fits: list[tuple[np.ndarray, np.ndarray]] = []

    def fit(self, X: np.ndarray, y: np.ndarray) -> Scripted:
        self.fits.append((np.array(X), np.array(y)))
        return self

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return X[:, 0].copy(), X[:, 1].copy()


def told(strategy, space, results: list[tuple[int, float, float | None]]) -> None:
    """Tell (candidate, budget, loss) results, a loss of None as a crash."""
    for index, (candidate, budget, loss) in enumerate(results):
        result = Result.failure(Status.CRASHED, "boom") if loss is None else Result(Status.OK, loss)
        strategy.tell(Trial(index, {"candidate": candidate}, budget), result)


def test_results_replayed_on_resume_inform_the_sampler_but_no_bracket():
    """On resume the finished trials are told without having been asked here: they count
    towards the model's ``min_points`` and are never proposed again, but no bracket holds
    them, so none is promoted however good."""
    space = pool()
    strategy = started(
        SuccessiveHalving(eta=3, min_points=3, random_fraction=0.0),
        space,
        surrogate_factory=Scripted,
    )
    replayed = [{"candidate": index} for index in range(3)]
    for index, config in enumerate(replayed):
        strategy.tell(Trial(index, config, 1 / 9), Result(Status.OK, 0.0))  # the best losses
    first = drive(strategy, space, 9)
    assert all(t.origin == "model@0.111111" for t in first)  # a model at once
    assert len(strategy.new.surrogate.fits[0][1]) == 3  # fitted on the replayed results
    assert not {t.config["candidate"] for t in first} & {0, 1, 2}
    promoted = [strategy.ask() for _ in range(3)]
    assert all(c.origin == "promotion" for c in promoted)
    ranked = sorted(first, key=lambda t: loss_of(space, t.config, t.budget))
    assert [c.config for c in promoted] == [t.config for t in ranked[:3]]


def test_the_model_maximises_expected_improvement_not_the_predicted_loss():
    # (predicted loss, its standard deviation) of each candidate
    encodings = [[0.4, 0], [0.5, 0], [0.6, 0], [0.35, 0.0], [0.45, 0.3], [0.9, 0.01]]
    space = PoolSpace("scripted", np.array(encodings, dtype=float))
    strategy = started(
        SuccessiveHalving(min_points=3, random_fraction=0.0), space, surrogate_factory=Scripted
    )
    told(strategy, space, [(0, 1 / 9, 0.4), (1, 1 / 9, 0.5), (2, 1 / 9, 0.6)])
    # EI below the best loss 0.4: 0.05 for a certain 0.35, about 0.096 for 0.45 +- 0.3
    mean, std = np.array([0.35, 0.45, 0.9]), np.array([1e-12, 0.3, 0.01])
    z = (0.4 - mean) / std
    ei = (0.4 - mean) * norm.cdf(z) + std * norm.pdf(z)
    assert int(np.argmax(ei)) == 1 and int(np.argmin(mean)) == 0
    candidate = strategy.ask()
    assert candidate.origin == "model@0.111111" and candidate.config == {"candidate": 4}


def test_the_model_breaks_ties_at_random():
    """Candidates the model cannot tell apart are equally likely: not the first listed."""
    space = PoolSpace("flat", np.tile([0.5, 0.1], (50, 1)))
    picks = set()
    for seed in range(10):
        strategy = SuccessiveHalving(min_points=3, random_fraction=0.0)
        started(strategy, space, seed=seed, surrogate_factory=Scripted)
        told(strategy, space, [(0, 1 / 9, 0.4), (1, 1 / 9, 0.5), (2, 1 / 9, 0.6)])
        candidate = strategy.ask()
        assert candidate.origin == "model@0.111111"
        picks.add(candidate.config["candidate"])
    assert len(picks) >= 5


def test_the_model_is_fitted_on_the_largest_budget_with_enough_results():
    space = pool()
    strategy = started(
        SuccessiveHalving(min_points=3, random_fraction=0.0), space, surrogate_factory=Scripted
    )
    told(
        strategy,
        space,
        [(i, 1 / 9, 0.1 * i) for i in range(6)]  # 6 at 1/9
        + [(i, 1 / 3, 0.2 + 0.1 * i) for i in range(3)]  # 3 at 1/3: enough, and larger
        + [(0, 1.0, 0.3), (1, 1.0, 0.4)],  # 2 at full budget: too few
    )
    assert strategy.ask().origin == "model@0.333333"
    _, losses = strategy.new.surrogate.fits[-1]
    assert sorted(losses) == pytest.approx([0.2, 0.3, 0.4])


def test_failures_count_as_the_worst_loss_of_their_budget():
    space = pool()
    strategy = started(
        SuccessiveHalving(min_points=3, random_fraction=0.0), space, surrogate_factory=Scripted
    )
    told(strategy, space, [(0, 1 / 9, 0.3), (1, 1 / 9, None), (2, 1 / 9, 0.7), (3, 1 / 9, None)])
    assert strategy.ask().origin.startswith("model@")
    _, losses = strategy.new.surrogate.fits[-1]
    assert sorted(losses) == pytest.approx([0.3, 0.7, 0.7, 0.7])


def test_random_fraction_is_the_share_of_new_configurations_left_to_chance():
    space = pool()
    origins = {}
    for fraction in (0.0, 0.5, 1.0):
        strategy = Hyperband(min_points=3, random_fraction=fraction)
        trials = drive(started(strategy, space, surrogate_factory=Scripted), space, 60)
        new = [t.origin for t in trials[3:] if t.origin != "promotion"]  # after min_points
        origins[fraction] = [o.startswith("model@") for o in new]
    assert all(origins[0.0]) and not any(origins[1.0])
    assert 0.25 < np.mean(origins[0.5]) < 0.75


def pipeline_space() -> PipelineSpace:
    """Two models with their own hyper-parameters: a small conditional space."""
    smooth = PipelineComponent(
        "smooth",
        "model",
        lambda p, c: p,
        lambda: ConfigurationSpace({"x": Float("x", (0.0, 1.0)), "y": Float("y", (0.0, 1.0))}),
    )
    stepped = PipelineComponent(
        "stepped",
        "model",
        lambda p, c: p,
        lambda: ConfigurationSpace({"k": Integer("k", (1, 20))}),
    )
    stage = Stage("model", (smooth, stepped))
    return PipelineSpace("synthetic", "regression", (stage,), assemble=lambda choices, c: None)


def pipeline_loss(config: dict, budget: float) -> float:
    if config["model:__choice__"] == "stepped":
        return 1.0 + abs(config["model:stepped:k"] - 7) / 20
    x, y = config["model:smooth:x"], config["model:smooth:y"]
    return (x - 0.3) ** 2 + (y - 0.6) ** 2 + 0.2 * (1 - budget)


def drive_pipeline(strategy, space, trials: int) -> list[Trial]:
    done = []
    for index in range(trials):
        candidate = strategy.ask()
        trial = Trial(index, candidate.config, candidate.budget, candidate.origin)
        strategy.tell(trial, Result(Status.OK, pipeline_loss(trial.config, trial.budget)))
        done.append(trial)
    return done


def test_bohb_on_a_pipeline_space_proposes_valid_new_configurations():
    space = pipeline_space()
    strategy = Hyperband(min_points=4, n_candidates=32)
    trials = drive_pipeline(started(strategy, space, surrogate_factory=ForestSurrogate), space, 40)
    assert sum(t.origin.startswith("model@") for t in trials) >= 8
    assert all(space.validate(t.config) == t.config for t in trials)
    new = [space.key(t.config) for t in trials if t.origin != "promotion"]
    assert len(new) == len(set(new))  # never a configuration proposed before
    by_model = [pipeline_loss(t.config, 1.0) for t in trials if t.origin.startswith("model@")]
    by_chance = [pipeline_loss(t.config, 1.0) for t in trials if t.origin == "random"]
    assert np.mean(by_model) < np.mean(by_chance)


def test_bohb_on_a_pipeline_space_keeps_candidates_encoded(monkeypatch):
    """Candidates are scored as rows; only a chosen row becomes a configuration, and a
    configuration the sampler proposed is never encoded again to fit the model."""
    space = pipeline_space()
    strategy = Hyperband(min_points=4, n_candidates=64)
    started(strategy, space, surrogate_factory=ForestSurrogate)
    encoded, decoded = [], []
    original_encode, original_decode = space.encode, space.decode
    monkeypatch.setattr(space, "encode", lambda c: encoded.append(len(c)) or original_encode(c))
    monkeypatch.setattr(space, "decode", lambda v: decoded.append(1) or original_decode(v))
    trials = drive_pipeline(strategy, space, 40)
    new = [t for t in trials if t.origin != "promotion"]
    assert sum(t.origin.startswith("model@") for t in new) >= 8
    assert encoded == []  # every observed configuration was proposed here, as a row
    assert len(decoded) < 2 * len(new)  # not one per scored candidate (64+ per model sample)


class NearestToTheBest(Surrogate):
    """Predicts a loss growing with the distance to the best configuration fitted on, with a
    constant spread: expected improvement is then highest for the nearest candidate."""

    def fit(self, X: np.ndarray, y: np.ndarray) -> NearestToTheBest:
        self.best = X[int(np.argmin(y))]
        return self

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.linalg.norm(X - self.best, axis=1), np.ones(len(X))


def test_model_candidates_include_neighbours_of_the_best(monkeypatch):
    space = pipeline_space()
    asked_about, offered = [], set()

    def neighbour_vectors(vector, rng, n):
        found = PipelineSpace.neighbour_vectors(space, vector, rng, n)
        asked_about.append(space.key(space.decode(vector)))
        offered.update(space.key(space.decode(row)) for row in found)
        return found

    monkeypatch.setattr(space, "neighbour_vectors", neighbour_vectors)
    strategy = SuccessiveHalving(min_points=4, random_fraction=0.0, n_candidates=4)
    started(strategy, space, surrogate_factory=NearestToTheBest)
    trials = drive_pipeline(strategy, space, 5)
    assert [t.origin for t in trials] == ["random"] * 4 + ["model@0.111111"]
    ranked = sorted(trials[:4], key=lambda t: pipeline_loss(t.config, t.budget))
    assert asked_about == [space.key(t.config) for t in ranked[:3]]  # the three best
    assert space.key(trials[4].config) in offered  # a neighbour was nearest to the best


# -- real runs -----------------------------------------------------------------------------------

RECIPE = {
    "name": "hyperband",
    "task": {"dataset": "sklearn:breast_cancer", "metric": "balanced_accuracy"},
    "space": {
        "name": "autosklearn-classification",
        "params": {"include": {"classifier": ["random_forest", "sgd", "decision_tree"]}},
    },
    "search": {"strategy": "successive_halving", "fidelity": {"kind": "iterations"}},
    "budget": {"trials": 13},
    "seed": 0,
}


def run_recipe(recipe: dict, tmp_path, capsys) -> list:
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    out = tmp_path / "run"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    with RunHistory(out / HISTORY_FILE) as history:
        return history.trials()


def test_a_real_run_records_every_budget_and_promotes_the_best(tmp_path, capsys):
    pytest.importorskip("automl_sklearn")  # the space's plugin, not a dependency of this one
    trials = run_recipe(RECIPE, tmp_path, capsys)
    assert [round(t.trial.budget, 4) for t in trials] == [0.1111] * 9 + [0.3333] * 3 + [1.0]
    first = sorted(trials[:9], key=lambda t: (t.loss, t.trial.id))
    assert {yaml.safe_dump(t.trial.config) for t in trials[9:12]} == {
        yaml.safe_dump(t.trial.config) for t in first[:3]
    }
    assert all(t.status == "ok" for t in trials)


def test_hyperband_on_learning_curves_spends_train_sizes(tmp_path, capsys):
    pytest.importorskip("automl_metadata")  # the lcdb benchmark's plugin
    recipe = {
        "name": "lcdb",
        "task": {"benchmark": "lcdb", "dataset": "6"},
        "search": {"strategy": "hyperband", "params": {"eta": 4}},
        "budget": {"trials": 40},
        "seed": 0,
    }
    trials = run_recipe(recipe, tmp_path, capsys)
    budgets = sorted({t.trial.budget for t in trials})
    assert len(trials) == 40 and len(budgets) >= 3
    assert budgets[0] >= 16 and budgets[-1] == pytest.approx(max(budgets))
    pairs = [(yaml.safe_dump(t.trial.config), t.trial.budget) for t in trials]
    assert len(pairs) == len(set(pairs))


def test_every_halving_strategy_says_it_races_budgets():
    """A run whose policy calls for successive halving keeps these strategies as they are
    (``SearchStrategy.races_budgets``) rather than replacing them."""
    from automl_core.plugins import load_plugins

    plugins = load_plugins()
    for name in ("successive_halving", "hyperband", "asha"):
        assert plugins.get("search_strategy", name).obj.races_budgets is True
    assert plugins.get("search_strategy", "random").obj.races_budgets is False


def test_a_used_up_pool_never_asks_one_configuration_twice_at_a_budget():
    """Once a small pool is used up, a bracket revisits configurations that another bracket
    may later promote to the same budget. The run loop refuses a repeat, so the promoted slot
    takes the result that budget already has (or will have) instead of waiting forever:
    with several trials in flight the brackets still finish and nothing is refused."""
    space = pool(size=12)
    strategy = started(Hyperband(), space)
    proposals = Proposals(strategy, space)
    in_flight: list[Trial] = []
    asked: list[Trial] = []
    for index in range(150):
        candidate = proposals.ask()
        if candidate is not None:
            trial = Trial(index, candidate.config, candidate.budget, candidate.origin)
            asked.append(trial)
            in_flight.append(trial)
        if len(in_flight) == 3 or (candidate is None and in_flight):
            done = in_flight.pop(0)
            strategy.tell(done, Result(Status.OK, loss_of(space, done.config, done.budget)))
        if candidate is None and not in_flight:
            break
    keys = [(space.key(t.config), t.budget) for t in asked]
    assert len(keys) == len(set(keys)) and proposals.refused == 0
    full = [t for t in asked if t.budget == 1.0]
    assert len(full) >= 5  # brackets kept finishing: configurations reached the full budget
