"""Checks of a surrogate: the rules of :class:`~automl_core.contracts.Surrogate` that
model-based strategies rely on, on encodings such as the spaces produce."""

from __future__ import annotations

import pickle

import numpy as np
from scipy.stats import spearmanr

from automl_core.contracts import Surrogate
from automl_core.space import INACTIVE, EncodingColumn
from automl_engine.testing.components import Component, NotApplicable, check, describe_kind
from automl_engine.testing.data_checks import kit_metadata

SURROGATE = "surrogate"
describe_kind(SURROGATE, "Surrogates")
#: Four columns as a pipeline space encodes them: a categorical choice of 3 components, a
#: number, and two hyper-parameters of one component only (INACTIVE for the others).
COLUMNS = (
    EncodingColumn("model:__choice__", categories=3),
    EncodingColumn("scaling:strength"),
    EncodingColumn("model:tree:max_depth", conditional=True),
    EncodingColumn("model:tree:criterion", categories=2, conditional=True),
)


def encoded_rows(n: int, seed: int = 0) -> np.ndarray:
    """``n`` rows in :data:`COLUMNS`' encoding; the tree's columns are INACTIVE unless
    component 1 is chosen."""
    rng = np.random.default_rng(seed)
    choice = rng.integers(0, 3, n).astype(float)
    rows = np.column_stack([choice, rng.random(n), rng.random(n), rng.integers(0, 2, n)])
    rows[choice != 1, 2:] = INACTIVE
    return rows


def losses(rows: np.ndarray) -> np.ndarray:
    """A loss that depends on every active column."""
    active = np.where(rows == INACTIVE, 0.0, rows)
    return 0.5 * active[:, 0] + (active[:, 1] - 0.4) ** 2 + 0.3 * active[:, 2] + 0.1 * active[:, 3]


def fitted(component: Component, rows: np.ndarray, y: np.ndarray, **params: object) -> Surrogate:
    surrogate = component.build(**params)
    surrogate.prepare(list(COLUMNS))
    returned = surrogate.fit(rows, y)
    assert returned is surrogate, f"fit() returned {returned!r}, expected the surrogate itself"
    return surrogate


def predicted(surrogate: Surrogate, rows: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``predict(rows)``, checked: one finite mean and one finite, non-negative standard
    deviation per row."""
    answer = surrogate.predict(rows)
    assert isinstance(answer, tuple) and len(answer) == 2, (
        f"{what}: predict() returned {type(answer).__name__}, expected (mean, std)"
    )
    mean, std = (np.asarray(a, dtype=float) for a in answer)
    assert mean.shape == (len(rows),) and std.shape == (len(rows),), (
        f"{what}: predict() of {len(rows)} rows gave shapes {mean.shape} and {std.shape}, "
        f"expected ({len(rows)},) each"
    )
    assert np.isfinite(mean).all(), f"{what}: predict() gave non-finite means {mean}"
    assert np.isfinite(std).all() and (std >= 0).all(), (
        f"{what}: predict() gave standard deviations that are negative or not finite: {std}"
    )
    return mean, std


@check(SURROGATE)
def check_surrogate_predicts_a_mean_and_std_per_row(component: Component) -> None:
    """``fit(X, y)`` returns the surrogate; ``predict(X)`` gives one finite mean and one
    finite, non-negative standard deviation per row, for rows seen and unseen."""
    rows = encoded_rows(24)
    surrogate = fitted(component, rows, losses(rows))
    predicted(surrogate, rows, "on the training rows")
    predicted(surrogate, encoded_rows(7, seed=1), "on new rows")


@check(SURROGATE)
def check_surrogate_learns_the_loss(component: Component) -> None:
    """Fitted on 60 observations of a smooth loss, the predicted means rank new rows better
    than chance (Spearman correlation above 0.3): the model is fitted to ``y``, not ignored."""
    rows, new = encoded_rows(60), encoded_rows(40, seed=2)
    mean, _ = predicted(fitted(component, rows, losses(rows)), new, "on new rows")
    correlation = float(spearmanr(mean, losses(new)).statistic)
    assert correlation > 0.3, (
        f"the predicted means do not follow the loss (rank correlation {correlation:.2f})"
    )


@check(SURROGATE)
def check_surrogate_reads_categorical_and_inactive_columns(component: Component) -> None:
    """Told by ``prepare`` which columns are categorical and which conditional, it fits
    rows whose conditional columns are all INACTIVE (no trial of that component yet), and
    predicts finite values for a category never seen in training; it learns a loss whose
    best category is the middle code (1 of 0, 1, 2), which a model reading codes as numbers
    on a line would miss."""
    rows = encoded_rows(60, seed=9)
    rows[:, 2:] = INACTIVE  # the tree's hyper-parameters: never active so far
    y = np.where(rows[:, 0] == 1, 0.0, 1.0) + 0.1 * rows[:, 1]
    seen = rows[:, 0] != 2
    unseen = encoded_rows(6, seed=10)
    unseen[:, 0], unseen[:, 2:] = 2, INACTIVE
    partial = fitted(component, rows[seen], y[seen])
    predicted(partial, unseen, "a category not seen in training")
    surrogate = fitted(component, rows, y)
    middle, ends = encoded_rows(10, seed=11), encoded_rows(20, seed=12)
    middle[:, 0], ends[:, 0] = 1, np.repeat([0, 2], 10)
    middle[:, 2:] = ends[:, 2:] = INACTIVE
    best = predicted(surrogate, middle, "category 1")[0].mean()
    other = predicted(surrogate, ends, "categories 0 and 2")[0].mean()
    assert best < other, (
        f"category 1 (loss 0) is predicted {best:.3f}, categories 0 and 2 (loss 1) "
        f"{other:.3f}: the categorical column is not read as categories"
    )


@check(SURROGATE)
def check_surrogate_fits_constant_targets(component: Component) -> None:
    """All losses equal (a space where every trial failed alike): no division by a zero
    spread; finite predictions."""
    rows = encoded_rows(10)
    predicted(fitted(component, rows, np.full(10, 0.25)), encoded_rows(5, seed=1), "constant y")


@check(SURROGATE)
def check_surrogate_fits_duplicate_rows(component: Component) -> None:
    """The same configuration twice with different losses (a re-run, noise): fitted
    without a singular matrix; finite predictions."""
    rows = encoded_rows(6)
    doubled = np.vstack([rows, rows])
    y = np.concatenate([losses(rows), losses(rows) + 0.05])
    predicted(fitted(component, doubled, y), rows, "duplicate rows")


@check(SURROGATE)
def check_surrogate_fits_a_single_observation(component: Component) -> None:
    """One result so far (the first trial of a search): fitted, and predictions finite."""
    rows = encoded_rows(1)
    predicted(fitted(component, rows, losses(rows)), encoded_rows(4, seed=1), "one observation")


@check(SURROGATE)
def check_surrogate_is_deterministic(component: Component) -> None:
    """Two fresh surrogates (with ``seed=0`` when it takes a seed) predict the same after the
    same fit: a run is reproducible from its recipe's seed, and a surrogate without one
    must not draw on global randomness."""
    params = {"seed": 0} if component.accepts("seed") else {}
    rows, new = encoded_rows(20), encoded_rows(6, seed=3)
    first = predicted(fitted(component, rows, losses(rows), **params), new, "first fit")
    again = predicted(fitted(component, rows, losses(rows), **params), new, "second fit")
    assert np.allclose(first[0], again[0]) and np.allclose(first[1], again[1]), (
        f"two fits on the same data predicted differently: means {first[0]} vs {again[0]}"
    )


@check(SURROGATE)
def check_surrogate_refits_on_new_data(component: Component) -> None:
    """Strategies keep one surrogate and fit it again as results arrive: after a fit on 5
    rows (losses shifted by 1), a fit on 30 others predicts as a fresh surrogate fitted on
    those 30 does, within 5 % of their losses' spread (a refit may start from the previous
    state, e.g. a GP's hyper-parameters, and end a little elsewhere)."""
    params = {"seed": 0} if component.accepts("seed") else {}
    early, later, new = encoded_rows(5, seed=6), encoded_rows(30, seed=7), encoded_rows(6, seed=8)
    reused = fitted(component, early, losses(early) + 1.0, **params)
    reused.fit(later, losses(later))
    fresh = fitted(component, later, losses(later), **params)
    again, expected = predicted(reused, new, "refitted"), predicted(fresh, new, "fresh")
    spread = float(np.ptp(losses(later)))
    assert np.allclose(again[0], expected[0], atol=0.05 * spread), (
        f"a refit predicts {again[0]}, a fresh fit on the same rows {expected[0]}: the "
        "second fit() did not replace the first"
    )


@check(SURROGATE)
def check_surrogate_pickles(component: Component) -> None:
    """A fitted surrogate survives pickling (process executors and saved warm starts move
    it between processes) and predicts the same afterwards."""
    rows, new = encoded_rows(20), encoded_rows(6, seed=4)
    surrogate = fitted(component, rows, losses(rows))
    before = predicted(surrogate, new, "before pickling")
    after = predicted(pickle.loads(pickle.dumps(surrogate)), new, "after pickling")
    assert np.allclose(before[0], after[0]) and np.allclose(before[1], after[1]), (
        "the unpickled surrogate predicts differently"
    )


@check(SURROGATE)
def check_surrogate_meta_fits_when_it_offers_to(component: Component) -> None:
    """A surrogate that overrides ``meta_fit`` pre-trains on meta-data of a pool (datasets x
    candidates, a cell missing; :func:`~automl_engine.testing.data_checks.kit_metadata`), then
    fits and predicts on the pool's encodings."""
    surrogate = component.build()
    if type(surrogate).meta_fit is Surrogate.meta_fit:
        raise NotApplicable("the surrogate does not offer meta_fit")
    metadata = kit_metadata()
    pool = metadata.pool
    assert pool is not None
    performance = metadata.performance
    surrogate.meta_fit(metadata, pool)
    surrogate.prepare(pool.columns())
    rows = pool.encodings
    surrogate.fit(rows[:5], performance[1, :5])
    predicted(surrogate, rows, "after meta_fit")
