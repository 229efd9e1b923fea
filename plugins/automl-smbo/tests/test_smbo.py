"""SMBO's behaviour with a surrogate defined here (any third-party surrogate must do), on a
pool and on a conditional pipeline space with known objectives."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from ConfigSpace import ConfigurationSpace, Float, Integer
from scipy.stats import norm
from sklearn.neighbors import KNeighborsRegressor

from automl_core.contracts import SearchContext, Surrogate, WarmStart
from automl_core.random_search import RandomSearch
from automl_core.space import PipelineComponent, Stage
from automl_core.trial import Result, Status, Trial
from automl_engine.proposals import start
from automl_smbo.acquisition import make_acquisition
from automl_smbo.optimizer import PerComponentSearch, best_first, climb
from automl_smbo.strategy import SMBO
from automl_smbo.targets import transform_losses
from automl_spaces.component_rows import ComponentSelector
from automl_spaces.pipeline_space import PipelineSpace
from automl_spaces.pool_space import PoolSpace


class NeighbourSurrogate(Surrogate):
    """A third-party surrogate: k-nearest-neighbour mean, std growing with the distance."""

    def __init__(self) -> None:
        self.prepared = None

    def prepare(self, columns) -> None:
        self.prepared = list(columns)

    def fit(self, X: np.ndarray, y: np.ndarray) -> NeighbourSurrogate:
        self.y = np.array(y)
        self.model = KNeighborsRegressor(n_neighbors=min(3, len(y))).fit(X, y)
        self.scale = float(np.std(y)) + 1e-9
        return self

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        distance, _ = self.model.kneighbors(X, n_neighbors=1)
        return self.model.predict(X), self.scale * distance[:, 0]


def branin(x: np.ndarray) -> np.ndarray:
    """Branin on [0, 1]^2 (rescaled from [-5, 10] x [0, 15]); minimum 0.397887."""
    a, b = 15 * x[..., 0] - 5, 15 * x[..., 1]
    return (
        (b - 5.1 / (4 * np.pi**2) * a**2 + 5 / np.pi * a - 6) ** 2
        + 10 * (1 - 1 / (8 * np.pi)) * np.cos(a)
        + 10
    )


@pytest.fixture(scope="module")
def branin_pool() -> PoolSpace:
    points = np.random.default_rng(7).random((600, 2))
    return PoolSpace("branin", points)


def pipeline_space() -> PipelineSpace:
    """Two 'models' with their own parameters: a conditional space like the real ones."""

    def smooth() -> ConfigurationSpace:
        return ConfigurationSpace({"x": Float("x", (0.0, 1.0)), "y": Float("y", (0.0, 1.0))})

    def stepped() -> ConfigurationSpace:
        return ConfigurationSpace({"k": Integer("k", (1, 20))})

    stage = Stage(
        "model",
        (
            PipelineComponent("smooth", "model", lambda p, c: p, smooth),
            PipelineComponent("stepped", "model", lambda p, c: p, stepped),
        ),
    )
    return PipelineSpace("synthetic", "regression", (stage,), assemble=lambda choices, c: None)


def pipeline_loss(config: dict) -> float:
    if config["model:__choice__"] == "stepped":
        return 2.0 + abs(config["model:stepped:k"] - 7) / 10
    return float(branin(np.array([config["model:smooth:x"], config["model:smooth:y"]]))) / 50


def pool_loss(space: PoolSpace):
    return lambda config: float(branin(space.encodings[config["candidate"]]))


def search(strategy, space, loss, seed: int, trials: int, **context) -> list[float]:
    strategy.setup(
        SearchContext(space=space, seed=seed, surrogate_factory=NeighbourSurrogate, **context)
    )
    losses = []
    for i in range(trials):
        candidate = strategy.ask()
        trial = Trial(i, candidate.config)
        value = loss(candidate.config)
        strategy.tell(trial, Result(Status.OK, value))
        losses.append(value)
    return losses


# --- acquisition ----------------------------------------------------------------------------


def test_expected_improvement_matches_its_closed_form():
    mean, std, best = np.array([0.5, 0.3, 0.3]), np.array([0.1, 0.1, 0.0]), 0.4
    z = (best - mean[:2]) / std[:2]
    expected = (best - mean[:2]) * norm.cdf(z) + std[:2] * norm.pdf(z)
    ei = make_acquisition("ei")(mean, std, best)
    np.testing.assert_allclose(ei[:2], expected)
    assert ei[2] == pytest.approx(0.1)  # certain improvement of 0.1
    pi = make_acquisition("pi")(mean, std, best)
    assert pi[0] < 0.5 < pi[1] and pi[2] == 1.0
    lcb = make_acquisition("lcb", kappa=1.0)(mean, std, best)
    np.testing.assert_allclose(lcb, -(mean - std))
    with pytest.raises(ValueError, match="unknown acquisition 'ucb'; one of ei, pi, lcb"):
        make_acquisition("ucb")


def test_ties_are_broken_at_random_not_by_position():
    rng = np.random.default_rng(0)
    firsts = {int(best_first(np.zeros(50), rng)[0]) for _ in range(20)}
    assert len(firsts) > 10
    assert list(best_first(np.array([0.1, 0.3, 0.2]), rng)) == [1, 2, 0]


# --- search ---------------------------------------------------------------------------------


def test_smbo_finds_the_pool_optimum_faster_than_random(branin_pool):
    loss = pool_loss(branin_pool)
    optimum = branin(branin_pool.encodings).min()
    seeds = range(6)
    smbo = [min(search(SMBO(), branin_pool, loss, s, 30)) - optimum for s in seeds]
    random = [min(search(RandomSearch(), branin_pool, loss, s, 30)) - optimum for s in seeds]
    assert np.mean(smbo) < np.mean(random) / 2


def test_smbo_beats_random_on_a_conditional_pipeline_space():
    space = pipeline_space()
    smbo = [min(search(SMBO(), space, pipeline_loss, s, 30)) for s in range(4)]
    random = [min(search(RandomSearch(), space, pipeline_loss, s, 30)) for s in range(4)]
    # measured over 8 seeds: 0.021 vs 0.082 (Branin's minimum / 50 = 0.008)
    assert np.mean(smbo) < np.mean(random) / 2


def test_pending_trials_are_never_proposed_twice(branin_pool):
    for space in (branin_pool, pipeline_space()):
        strategy = SMBO(initial_design=3, random_fraction=0.0)
        search(
            strategy, space, pool_loss(branin_pool) if space is branin_pool else pipeline_loss, 0, 5
        )
        asked = [strategy.ask() for _ in range(12)]  # no tell in between
        keys = [space.key(c.config) for c in asked]
        assert len(set(keys)) == 12
        assert sum(c.origin.startswith("acquisition") for c in asked) == 12


def test_the_same_seed_gives_the_same_trials(branin_pool):
    space = pipeline_space()
    first = search(SMBO(), space, pipeline_loss, 3, 15)
    assert search(SMBO(), space, pipeline_loss, 3, 15) == first
    assert search(SMBO(), space, pipeline_loss, 4, 15) != first


def test_warm_start_and_default_come_first_and_prepare_sees_the_columns():
    space = pipeline_space()
    warm = {"model:__choice__": "stepped", "model:stepped:k": 7}
    strategy = SMBO(initial_design=4)
    proposals = start(  # the run loop serves the warm start; it counts in the design
        strategy,
        SearchContext(
            space=space,
            seed=0,
            surrogate_factory=NeighbourSurrogate,
            warm_start=WarmStart(configs=[warm, {"model:__choice__": "nope"}]),
        ),
    )
    origins = [proposals.ask().origin for _ in range(5)]
    assert origins == ["warmstart", "default", "initial", "initial", "random"]
    columns = {c.name: c for c in strategy.surrogate.prepared}
    assert columns["model:__choice__"].categories == 2
    assert columns["model:smooth:x"].conditional and columns["model:smooth:x"].categories == 0


def test_failed_trials_count_as_the_worst_loss(branin_pool):
    strategy = SMBO(initial_design=4, random_fraction=0.0)
    strategy.setup(SearchContext(space=branin_pool, seed=0, surrogate_factory=NeighbourSurrogate))
    ok_losses = []
    for i in range(6):
        candidate = strategy.ask()
        result = (
            Result.failure(Status.CRASHED, "boom")
            if i % 2
            else Result(Status.OK, pool_loss(branin_pool)(candidate.config))
        )
        ok_losses += [result.loss] if result.ok else []
        strategy.tell(Trial(i, candidate.config), result)
    assert strategy.ask().origin == "acquisition"
    fitted = strategy.surrogate.y  # what the surrogate was fitted on for that ask
    assert len(fitted) == 6 and np.isfinite(fitted).all()
    assert sorted(fitted) == sorted(ok_losses + [max(ok_losses)] * 3)


@pytest.mark.parametrize("transform", ["log", "copula"])
def test_the_surrogate_is_fitted_to_the_transformed_losses(branin_pool, transform):
    """``target_transform``: the surrogate sees a monotone transform of the losses (the same
    order, so the same best trial), and EI's incumbent is the transformed best."""
    strategy = SMBO(initial_design=5, random_fraction=0.0, target_transform=transform)
    losses = search(strategy, branin_pool, pool_loss(branin_pool), 0, 8)
    assert strategy.ask().origin == "acquisition"
    fitted = strategy.surrogate.y
    np.testing.assert_allclose(fitted, transform_losses(np.array(losses), transform))
    assert not np.allclose(fitted, losses)
    assert np.argmin(fitted) == np.argmin(losses)


class CopulaPreferringSurrogate(NeighbourSurrogate):
    preferred_target_transform = "copula"


def test_by_default_the_surrogate_is_fitted_to_the_transform_it_prefers(branin_pool):
    """``target_transform: auto``: the surrogate's ``preferred_target_transform`` (the
    forest's is the copula), the losses themselves for a surrogate that names none, and a
    transform the recipe names wins over the preference."""
    for factory, params, expected in [
        (CopulaPreferringSurrogate, {}, "copula"),
        (NeighbourSurrogate, {}, "none"),
        (CopulaPreferringSurrogate, {"target_transform": "none"}, "none"),
    ]:
        strategy = SMBO(initial_design=5, random_fraction=0.0, **params)
        strategy.setup(SearchContext(space=branin_pool, seed=0, surrogate_factory=factory))
        losses = []
        for i in range(8):
            candidate = strategy.ask()
            losses.append(float(pool_loss(branin_pool)(candidate.config)))
            strategy.tell(Trial(i, candidate.config), Result(Status.OK, losses[-1]))
        strategy.ask()
        assert strategy.fitted_transform == expected
        expected_targets = transform_losses(np.array(losses), expected)
        np.testing.assert_allclose(strategy.surrogate.y, expected_targets)


def test_a_surrogate_preferring_an_unknown_transform_is_refused_naming_it(branin_pool):
    class Odd(NeighbourSurrogate):
        preferred_target_transform = "sqrt"

    with pytest.raises(ValueError, match=r"Odd.preferred_target_transform is 'sqrt'"):
        SMBO().setup(SearchContext(space=branin_pool, seed=0, surrogate_factory=Odd))


@pytest.mark.parametrize("refit_every", [1, 4])
def test_the_surrogate_is_fitted_again_every_so_many_results(branin_pool, refit_every):
    """``refit_every``: between fits the asks score with the last fit (a batch of its next
    best candidates, none proposed twice); the fit comes back once that many results have."""
    fits: list[int] = []

    class Counting(NeighbourSurrogate):
        def fit(self, X, y):
            fits.append(len(y))
            return super().fit(X, y)

    strategy = SMBO(initial_design=4, random_fraction=0.0, refit_every=refit_every)
    strategy.setup(SearchContext(space=branin_pool, seed=0, surrogate_factory=Counting))
    proposed = []
    for i in range(16):
        candidate = strategy.ask()
        proposed.append(candidate.config["candidate"])
        strategy.tell(
            Trial(i, candidate.config), Result(Status.OK, pool_loss(branin_pool)(candidate.config))
        )
    model_based = 16 - 4
    assert len(fits) == -(-model_based // refit_every)  # one fit per refit_every results
    assert fits == [4 + refit_every * k for k in range(len(fits))]  # the results it had seen
    assert len(set(proposed)) == 16


def test_the_transforms_keep_the_order_and_even_out_a_heavy_tail():
    losses = np.array([0.5, 0.1, 1000.0, 0.2, 3.0, 0.2])
    for name in ("log", "copula"):
        targets = transform_losses(losses, name)
        assert np.array_equal(np.argsort(targets, kind="stable"), np.argsort(losses, kind="stable"))
        assert targets[1] < targets[3] == targets[5] < targets[0] < targets[4] < targets[2]
    # the tail no longer dominates: the worst loss is a few standard deviations out at most
    copula = transform_losses(losses, "copula")
    assert copula.max() == pytest.approx(norm.ppf(5.5 / 6))  # the rank of 1000, not 1000
    logged = transform_losses(losses, "log")
    assert (logged.max() - np.median(logged)) / logged.std() < 3
    assert np.isfinite(transform_losses(np.full(4, 0.3), "log")).all()  # no spread at all
    assert np.array_equal(transform_losses(losses, "none"), losses)


def test_a_finite_pool_is_exhausted_cleanly():
    pool = PoolSpace("tiny", np.arange(5.0)[:, None], available=np.array([1, 1, 0, 1, 1], bool))
    asked = search(SMBO(initial_design=2), pool, lambda c: float(c["candidate"]), 0, 4)
    assert sorted(asked) == [0.0, 1.0, 3.0, 4.0]
    strategy = SMBO(initial_design=2)
    search(strategy, pool, lambda c: float(c["candidate"]), 0, 4)
    assert strategy.ask() is None


def test_without_a_surrogate_the_error_says_what_to_write():
    with pytest.raises(ValueError, match=r"needs a surrogate: name one in .* search.surrogate"):
        SMBO().setup(SearchContext(space=pipeline_space(), seed=0))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"random_fraction": 1.5}, "random_fraction"),
        ({"pending_lie": "median"}, "pending_lie"),
        ({"initial_design": 0}, "initial_design"),
        ({"acquisition": "ucb"}, "unknown acquisition"),
        ({"target_transform": "sqrt"}, "target_transform must be one of"),
        ({"refit_every": 0}, "refit_every must be an integer >= 1"),
    ],
)
def test_bad_parameters_are_refused(params, message):
    with pytest.raises(ValueError, match=message):
        SMBO(**params)


def test_a_space_without_encoded_rows_is_refused_with_what_it_lacks():
    class ConfigsOnly:
        def sample(self, rng, n):
            return [{"x": float(rng.random())} for _ in range(n)]

    with pytest.raises(TypeError, match="lacks columns, sample_vectors, neighbour_vectors"):
        SMBO().setup(
            SearchContext(space=ConfigsOnly(), seed=0, surrogate_factory=NeighbourSurrogate)
        )


@pytest.mark.parametrize("kind", ["pool", "pipeline"])
def test_the_initial_design_can_take_so_many_configurations_of_each_component(kind):
    """``initial_per_component: 2``: after the space's default (a pipeline space has one),
    two random configurations of every component of the last stage (the model)."""
    from automl_engine.testing.spaces import pipeline_space, pool_space

    space = pool_space() if kind == "pool" else pipeline_space()
    strategy = SMBO(initial_per_component=2)
    strategy.setup(SearchContext(space=space, seed=0, surrogate_factory=NeighbourSurrogate))
    initial = [strategy.ask() for _ in range(len(strategy.queue))]
    components = space.blocks().stages[-1].names
    drawn = initial[-2 * len(components) :]
    models = [space.active_components(c.config)[space.blocks().stages[-1].name] for c in drawn]
    assert models == [name for name in components for _ in range(2)]
    assert all(c.origin == "initial" for c in drawn)
    assert [c.origin for c in initial[: -len(drawn)]] == (["default"] if kind == "pipeline" else [])
    with pytest.raises(ValueError, match="initial_stage 'nope' is not a stage"):
        SMBO(initial_per_component=2, initial_stage="nope").setup(
            SearchContext(space=space, seed=0, surrogate_factory=NeighbourSurrogate)
        )
    with pytest.raises(ValueError, match="initial_per_component must be an integer >= 1"):
        SMBO(initial_per_component=0)


# --- per-component acquisition ---------------------------------------------------------------


def decoded_score(space: PipelineSpace):
    """The acquisition of a row: minus its loss (what a perfect surrogate's mean gives)."""
    return lambda rows: np.array([-pipeline_loss(space.decode(row)) for row in rows])


def test_a_climb_keeps_what_keeps_accepts():
    space = pipeline_space()
    rng = np.random.default_rng(0)
    selector = ComponentSelector(space)
    climbers = space.encode(space.restrict(include={"model": ["stepped"]}).sample(rng, 3))

    def stepped(rows: np.ndarray) -> np.ndarray:
        return selector(rows)[:, 0] == 1

    climbed = climb(space, decoded_score(space), climbers, rng, 5, 2, keeps=stepped)
    rows = np.vstack(climbed.rows)
    assert len(rows) and stepped(rows).all()
    best = space.decode(rows[np.argmax(np.concatenate(climbed.scores))])
    assert abs(best["model:stepped:k"] - 7) <= 2


def test_the_acquisition_is_maximised_in_every_component_and_ranked_together():
    space = pipeline_space()
    rng = np.random.default_rng(0)
    ranked = PerComponentSearch("model", starts=4).rank(
        space, decoded_score(space), np.empty((0, 0)), rng
    )
    configs = [space.decode(row) for row in ranked.rows]
    models = [c["model:__choice__"] for c in configs]
    assert {"smooth", "stepped"} <= set(models) and {"random", "local"} <= set(ranked.origins)
    assert np.all(np.diff(ranked.scores) <= 0)  # best first
    best_stepped = configs[models.index("stepped")]
    assert abs(best_stepped["model:stepped:k"] - 7) <= 2  # each component climbed its own way
    assert models[0] == "smooth"  # the best of all, over components


def test_smbo_with_per_component_acquisition_beats_random_on_a_pipeline_space(monkeypatch):
    space = pipeline_space()
    searched = []
    rank = PerComponentSearch.rank
    monkeypatch.setattr(
        PerComponentSearch, "rank", lambda self, *a: searched.append(self.stage) or rank(self, *a)
    )
    strategy = [
        min(search(SMBO(acquisition_stage="last"), space, pipeline_loss, s, 30)) for s in range(8)
    ]
    random = [min(search(RandomSearch(), space, pipeline_loss, s, 30)) for s in range(8)]
    # measured: 0.022 vs 0.082 (the joint local search: 0.022)
    assert np.mean(strategy) < np.mean(random) / 2
    assert searched and set(searched) == {"model"}  # the model-based asks searched per model
    with pytest.raises(ValueError, match="acquisition_stage 'nope' is not a stage"):
        SMBO(acquisition_stage="nope").setup(
            SearchContext(space=space, seed=0, surrogate_factory=NeighbourSurrogate)
        )
    with pytest.raises(ValueError, match="component_starts"):
        SMBO(component_starts=0)


def test_on_a_pool_per_component_acquisition_changes_nothing(branin_pool):
    loss = pool_loss(branin_pool)
    plain = search(SMBO(), branin_pool, loss, 0, 15)
    assert search(SMBO(acquisition_stage="last"), branin_pool, loss, 0, 15) == plain


def test_local_search_refreshes_its_random_candidates_from_a_stock():
    """The reservoir is sampled once; each later call replaces ``refresh`` rows with rows
    from a stock sampled ``STOCK_REFRESHES`` refreshes at a time."""
    from automl_smbo.optimizer import STOCK_REFRESHES, LocalSearch

    space = pipeline_space()
    calls: list[int] = []
    sample_vectors = space.sample_vectors

    def counted(rng, n):
        calls.append(n)
        return sample_vectors(rng, n)

    space.sample_vectors = counted
    search, rng = LocalSearch(n_random=32, refresh=8), np.random.default_rng(0)
    rows = [search.random_rows(space, rng).copy() for _ in range(STOCK_REFRESHES + 2)]
    assert calls == [32, 8 * STOCK_REFRESHES, 8 * STOCK_REFRESHES]
    for before, after in pairwise(rows):
        changed = ~np.all(before == after, axis=1)
        assert 0 < changed.sum() <= 8  # each call replaces some rows, at most ``refresh``
