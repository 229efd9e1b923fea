"""A random-forest surrogate in the manner of SMAC (Hutter et al., 2011).

The model is an ensemble of regression trees (CART, squared error), each grown on a bootstrap
sample of the observations and choosing each split among a random subset of the columns.
Its prediction at a configuration is the mean of the trees' predictions, and its uncertainty
the standard deviation *across* the trees' predictions, as in SMAC3 (which also leaves out the
within-leaf variance, the "law of total variance" term: SMAC's maintainers found it made the
search worse, and leaving it out keeps ``std`` a measure of how much the trees disagree, i.e.
of how little data constrains the prediction there).

Why trees: they need no kernel, scale or one-hot encoding, they split inactive values
(``INACTIVE = -1``, below every active value in [0, 1]) off on their own, they are unaffected
by the scale of the losses, and they fit a few hundred points in milliseconds.

Speed: the trees are scikit-learn's ``DecisionTreeRegressor`` (a Cython builder), but fitted
without the per-call parameter validation and input conversion that dominate the cost of a
small fit (the inputs are checked once here instead), with bootstrap samples given as sample
weights (as ``RandomForestRegressor`` does internally), and predicted through each fitted
tree's ``tree_.apply`` and leaf values. This is several times faster than
``RandomForestRegressor(n_jobs=1)`` on the sizes of a search (see the README's table).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import attrs
import numpy as np
import sklearn
from sklearn.tree import DecisionTreeRegressor

from automl_core.contracts import Surrogate
from automl_core.space import EncodingColumn, check_columns, check_encoded, check_losses
from automl_spaces.options import boolean, integer, number, optional, plain_integer

#: The percentile of the losses that sets the shift of the log transform (see LossScale).
LOG_SHIFT_PERCENTILE = 5.0


@dataclass(frozen=True)
class LossScale:
    """Maps losses to the scale the trees are fitted on, and tree predictions back.

    With ``log`` the trees are fitted on ``z = log(y - floor)``, where
    ``floor = min(y) - shift`` lies a little below the best loss, so that every ``z`` is finite
    and the best loss does not become an outlier at ``log(0)``. The shift follows SMAC's
    log-scaled encoder: the distance from the minimum to the 5th percentile of the losses; it
    is at least 1% of the distance from the minimum to the median (so that a few near-ties at
    the minimum do not make it tiny), and where more than half of the losses tie at the
    minimum, the distance to the next larger loss. The median, not the maximum, is the
    reference so that a huge penalty for crashed trials does not flatten the good region.
    Without ``log`` the scale is the identity.
    """

    log: bool
    floor: float = 0.0

    @classmethod
    def fit(cls, y: np.ndarray, log: bool) -> LossScale:
        """The scale for losses ``y`` (1-d, finite, non-empty)."""
        if not log:
            return cls(log=False)
        return cls(log=True, floor=float(y.min()) - _log_shift(y))

    def forward(self, y: np.ndarray) -> np.ndarray:
        """Losses to the fitting scale."""
        return np.log(y - self.floor) if self.log else y

    def inverse(self, z: np.ndarray) -> np.ndarray:
        """Fitting-scale values (e.g. tree predictions) back to losses."""
        return np.exp(z) + self.floor if self.log else z


def _log_shift(y: np.ndarray) -> float:
    """How far below ``min(y)`` the log transform's zero lies (positive); see LossScale."""
    lowest = float(y.min())
    low, middle = np.percentile(y, [LOG_SHIFT_PERCENTILE, 50.0])
    shift = max(float(low) - lowest, 0.01 * (float(middle) - lowest))
    if shift > 0.0:
        return shift
    above = y[y > lowest]
    # Constant losses: any positive shift gives equal z, and the inverse returns them exactly.
    return float(above.min()) - lowest if above.size else 1.0


@dataclass(frozen=True)
class _FittedTree:
    """One fitted tree: scikit-learn's low-level tree (for ``apply``), its leaf values, the
    loss scale they are on and how many observations it was grown on (a forest updated
    incrementally holds trees grown at different times)."""

    structure: Any  # sklearn.tree._tree.Tree
    leaf_values: np.ndarray
    scale: LossScale
    grown_on: int


@attrs.define(slots=False, eq=False, repr=False)
class RandomForestSurrogate(Surrogate):
    """SMAC-style random forest over encoded configurations; lower loss is better.

    Parameters (the recipe's ``params``; defaults are SMAC3's, but for ``max_depth``):

    * ``n_trees`` (10): trees in the forest. More trees give a smoother mean and std at a
      proportional cost in fit and predict time.
    * ``max_features`` (5/6): the *ratio* of columns considered at each split
      (at least one column); 1.0 considers all of them.
    * ``min_samples_split`` (3): a node with fewer distinct observations is not split.
    * ``min_samples_leaf`` (3): every leaf keeps at least this many distinct observations.
      With bootstrap, duplicates of an observation count once (they are weights).
    * ``max_depth`` (20): the deepest a tree may grow; None for no limit.
    * ``bootstrap`` (True): grow each tree on a bootstrap sample. Without it, the trees differ
      only by their random column subsets, and with ``max_features=1.0`` only in how they
      break ties between equally good splits (``std`` is then 0 at the training points and
      almost everywhere else).
    * ``log_y`` (False): fit the trees on log-transformed losses (see :class:`LossScale` for the
      exact transform), as SMAC does for runtimes: a leaf then holds a geometric-style mean,
      which a few very large losses (crash penalties, timeouts) cannot dominate. Each tree's
      prediction is transformed back before the mean and std are taken, so ``predict`` is on
      the loss scale either way, and expected improvement against the best observed loss
      stays consistent.
    * ``seed`` (0): seeds the bootstrap samples and the column subsets. Each ``fit`` starts
      from the seed again, so a fit is a pure function of (parameters, X, y): refitting on
      the same data, e.g. after a resume, gives the same model.
    * ``update_from`` (100) and ``update_trees`` (2): a fit on at least ``update_from``
      observations that only *adds* a few rows (at most ``n_trees / update_trees``) to the
      previous fit's data (a search's next fit) regrows the ``update_trees`` trees grown
      longest ago, on all the rows, and keeps the others: each tree then lags at most
      ``n_trees / update_trees - 1`` fits behind, and a fit costs a fifth. Any other fit
      regrows every tree. The model is then
      a pure function of the *sequence* of fits (which a resumed run replays). ``None``
      regrows every tree at every fit, as SMAC does. Why: from a few hundred observations
      the forest's fit is most of an ask (10 trees on 500 rows: 25 ms, an update 5 ms), and one
      more observation moves a tree grown on hundreds little.

    Columns: categorical columns (from :meth:`prepare`) stay category indices, so a tree
    splits them as if ordered (``index <= t``); SMAC's forest splits categories into arbitrary
    subsets, which this approximates with more splits. Inactive values (-1) stay as they are:
    a tree separates them from active values with a single split.

    ``predict`` returns the mean over the trees and the standard deviation across them
    (ddof 0), both on the loss scale. ``std`` is 0 where all trees agree: with constant
    losses, a single observation, or, mostly, ``bootstrap=False, max_features=1.0``. Acquisition
    functions must allow for that (expected improvement then is ``max(best - mean, 0)``).
    """

    #: What ``smbo`` fits a forest to unless the recipe says otherwise (``target_transform:
    #: auto``): the Gaussian copula of the losses (their ranks as normal quantiles). A
    #: forest's leaves average losses, so a heavy tail dominates its mean and spread; on the
    #: 10-d Levy function, CARP-S's BBOB and pymoo tasks the copula found better
    #: configurations, and on Tensor-OBOE's table lookups (error rates) it was level
    #: (docs/benchmarks.md, issue 48).
    preferred_target_transform = "copula"

    n_trees: int = attrs.field(default=10, converter=plain_integer, validator=integer(1))
    max_features: float = attrs.field(default=5.0 / 6.0, validator=number(above=0, at_most=1))
    min_samples_split: int = attrs.field(default=3, converter=plain_integer, validator=integer(2))
    min_samples_leaf: int = attrs.field(default=3, converter=plain_integer, validator=integer(1))
    max_depth: int | None = attrs.field(
        default=20,
        converter=attrs.converters.optional(plain_integer),
        validator=optional(integer(1)),
    )
    bootstrap: bool = attrs.field(default=True, validator=boolean())
    log_y: bool = attrs.field(default=False, validator=boolean())
    seed: int = attrs.field(
        default=0, converter=plain_integer, validator=integer(0, at_most=2**32 - 1)
    )
    update_from: int | None = attrs.field(
        default=100,
        converter=attrs.converters.optional(plain_integer),
        validator=optional(integer(1)),
    )
    update_trees: int = attrs.field(default=2, converter=plain_integer, validator=integer(1))

    def __attrs_post_init__(self) -> None:
        self.max_features = float(self.max_features)
        self.columns: tuple[EncodingColumn, ...] | None = None
        self._trees: list[_FittedTree] = []
        self._n_features = 0
        #: the data of the last fit, to recognise a fit that only adds rows to it
        self._fitted_on: tuple[np.ndarray, np.ndarray] | None = None

    def __repr__(self) -> str:
        return (
            f"RandomForestSurrogate(n_trees={self.n_trees}, max_features={self.max_features:.3g}, "
            f"min_samples_split={self.min_samples_split}, "
            f"min_samples_leaf={self.min_samples_leaf}, max_depth={self.max_depth}, "
            f"bootstrap={self.bootstrap}, log_y={self.log_y}, seed={self.seed}, "
            f"update_from={self.update_from}, update_trees={self.update_trees})"
        )

    # -- the Surrogate contract --------------------------------------------------------------
    def prepare(self, columns: Sequence[EncodingColumn]) -> None:
        """Remember what each column holds, to check category indices in :meth:`fit`.

        The trees themselves treat every column as numeric (see the class docstring)."""
        self.columns = check_columns(columns, "prepare")

    def fit(self, X: np.ndarray, y: np.ndarray) -> RandomForestSurrogate:
        """Grow ``n_trees`` trees on encoded configurations ``X`` (n x d) and losses ``y``.

        Raises ValueError for no observations, mismatched shapes, non-finite values (a
        crashed trial must be given a finite loss by the strategy), or, after
        :meth:`prepare`, a column count or category index that does not match the columns.
        """
        X = check_encoded(X, self.columns, "fit")
        y = check_losses(y, len(X), "fit")
        if len(X) == 0:
            raise ValueError("fit: needs at least one observation, X has 0 rows")
        regrown = self._trees_to_regrow(X, y)
        if not regrown:
            return self  # the same data as the last fit: the model is already fitted on it
        scale = LossScale.fit(y, self.log_y)
        targets = scale.forward(y)
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        # A full fit draws from the seed; an update from the seed and the rows' count, so
        # that the same sequence of fits grows the same trees.
        partial = len(regrown) < self.n_trees
        random_state = _fresh_random_state(self.seed, len(X) if partial else None)
        trees = list(self._trees) if partial else [None] * self.n_trees
        # Parameters were checked in __init__ and inputs above (finite); scikit-learn's own
        # checks would otherwise cost more than growing a small tree.
        with sklearn.config_context(skip_parameter_validation=True, assume_finite=True):
            for index in regrown:
                trees[index] = self._grow_tree(X32, targets, scale, random_state)
        self._trees = trees  # type: ignore[assignment]
        self._n_features = X.shape[1]
        self._fitted_on = (X.copy(), y.copy())
        return self

    def _trees_to_regrow(self, X: np.ndarray, y: np.ndarray) -> list[int]:
        """Which trees a fit on (X, y) grows: none when it is the last fit's data again; the
        ``update_trees`` grown longest ago when it only adds rows to it (from
        ``update_from`` rows on); else all of them."""
        everything = list(range(self.n_trees))
        last = self._fitted_on
        if last is None or X.shape[1] != last[0].shape[1] or len(X) < len(last[0]):
            return everything
        before = len(last[0])
        if not (np.array_equal(X[:before], last[0]) and np.array_equal(y[:before], last[1])):
            return everything
        if len(X) == before:
            return []
        lag = max(1, self.n_trees // self.update_trees)  # fits a tree may lag behind
        if self.update_from is None or len(X) < self.update_from or len(X) - before > lag:
            return everything
        oldest_first = sorted(everything, key=lambda index: self._trees[index].grown_on)
        return sorted(oldest_first[: self.update_trees])

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation across the trees of the predicted loss, per row of X."""
        per_tree = self.tree_predictions(X)
        return per_tree.mean(axis=0), per_tree.std(axis=0)

    # -- beyond the contract -----------------------------------------------------------------
    def tree_predictions(self, X: np.ndarray) -> np.ndarray:
        """Every tree's predicted loss (n_trees x rows of X), on the loss scale: the empirical
        predictive distribution, e.g. for Thompson sampling or quantile-based acquisitions."""
        if not self._trees:
            raise RuntimeError("predict: the random-forest surrogate has not been fitted yet")
        X = check_encoded(X, where="predict")
        if X.shape[1] != self._n_features:
            raise ValueError(
                f"predict: X has {X.shape[1]} columns, but the forest was fitted on "
                f"{self._n_features}"
            )
        X32 = np.ascontiguousarray(X, dtype=np.float32)
        per_tree = np.empty((len(self._trees), len(X32)))
        for row, tree in zip(per_tree, self._trees, strict=True):
            row[:] = tree.scale.inverse(tree.leaf_values[tree.structure.apply(X32)])
        return per_tree

    # -- helpers -----------------------------------------------------------------------------
    def _grow_tree(
        self,
        X32: np.ndarray,
        targets: np.ndarray,
        scale: LossScale,
        random_state: np.random.RandomState,
    ) -> _FittedTree:
        """One CART tree on a bootstrap sample (as integer sample weights) of the data."""
        n = len(targets)
        weights = None
        if self.bootstrap:
            draws = random_state.randint(0, n, size=n)
            weights = np.bincount(draws, minlength=n).astype(np.float64)
        tree = DecisionTreeRegressor(
            max_features=self.max_features,
            min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf,
            max_depth=self.max_depth,
            random_state=random_state,
        )
        tree.fit(X32, targets, sample_weight=weights, check_input=False)
        return _FittedTree(tree.tree_, tree.tree_.value[:, 0, 0].copy(), scale, n)


def _fresh_random_state(seed: int, rows: int | None = None) -> np.random.RandomState:
    """The random stream of one fit (of an update on ``rows`` observations), in the legacy
    interface scikit-learn's trees take.

    On a PCG64 generator: seeding the default MT19937 costs ~0.13 ms, a tenth of a small fit.
    """
    entropy = seed if rows is None else [seed, rows]
    return np.random.RandomState(np.random.PCG64(entropy))
