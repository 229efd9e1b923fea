"""One dataset seen the ways the meta-features need it, each view computed once, on demand.

A meta-feature is a small function of a :class:`DataView`. What several features share (the
class counts, the per-column moments, the subsample, the one-hot matrix, a fitted PCA) is a
*helper*: a method computed the first time a feature asks for it and kept, together with its
error if it failed, so that a failing helper costs its time once and every feature depending
on it fails with the same message (and becomes NaN, see :mod:`automl_metafeatures.provider`).

Two sets of rows are used:

* the **full data**, for everything that counts (rows, missing values, symbols, classes) and
  for the cheap column statistics (moments, entropies): these are computed column by column
  without materialising an encoded matrix, so they stay exact on large data;
* a **subsample** of at most ``max_rows`` rows (stratified by class for classification, drawn
  with ``seed``) for the costly groups, which fit models or decompose a matrix.

The encoded ("transformed") matrix follows auto-sklearn's default data preprocessing, because
auto-sklearn computes its skewness, kurtosis, PCA and landmark features on it:

* categorical columns: a missing value is a category of its own (auto-sklearn imputes a
  constant), categories holding less than 1 % of the rows of their column are merged into one
  (auto-sklearn's minority coalescer, default ``minimum_fraction=0.01``), then every remaining
  category becomes a 0/1 column (no category dropped);
* numeric columns: missing values (and infinities) imputed by the column mean, constant and
  all-missing columns dropped (auto-sklearn's mean imputation and zero-variance threshold),
  then standardised (its default rescaling; moments do not depend on it, the models do).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from automl_engine.dataset import is_categorical

#: auto-sklearn's default ``minimum_fraction``: rarer categories are merged into one.
MINORITY_FRACTION = 0.01
#: The encoded subsample may hold at most this many cells (float64: 400 MB); beyond it the
#: features needing it fail (NaN and a warning) instead of exhausting memory.
MAX_ENCODED_CELLS = 50_000_000
#: Columns per block when moments are computed over the full data (bounds the temporary
#: arrays to about ``rows x block`` floats).
_BLOCK_CELLS = 4_000_000

T = TypeVar("T")


class HelperError(RuntimeError):
    """A shared computation failed; every meta-feature that needs it reports this."""


def helper(method: Callable[[DataView], T]) -> Callable[[DataView], T]:
    """Compute ``method`` once per view and keep its value, or its error.

    Keeping the error matters as much as keeping the value: a failing encoding would
    otherwise be recomputed (and fail again, at the same cost) for each of the features that
    need it.
    """
    name = method.__name__

    @functools.wraps(method)
    def wrapper(self: DataView) -> T:
        if name not in self._cache:
            try:
                self._cache[name] = (True, method(self))
            except HelperError as error:
                self._cache[name] = (False, error)
            except Exception as error:
                reason = HelperError(f"{name} failed ({type(error).__name__}: {error})")
                self._cache[name] = (False, reason)
        ok, value = self._cache[name]
        if ok:
            return value
        raise HelperError(str(value))  # a fresh one: re-raising would grow its traceback

    return wrapper


class DataView:
    """``X`` and ``y`` of one dataset, with the views the meta-features share.

    ``y`` holds class labels (any hashable type; missing labels are not a class) when
    ``task`` is ``classification``, numbers otherwise.
    """

    def __init__(
        self, X: pd.DataFrame, y: np.ndarray, task: str, *, max_rows: int | None, seed: int
    ) -> None:
        self.X = X
        self.y = y
        self.task = task
        self.max_rows = max_rows
        self.seed = seed
        self._cache: dict[str, tuple[bool, Any]] = {}

    # -- shapes and types (full data) ---------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_columns(self) -> int:
        return int(self.X.shape[1])

    @property
    def is_classification(self) -> bool:
        return self.task == "classification"

    @helper
    def categorical(self) -> np.ndarray:
        """Whether each column is categorical (``category``/``object``/``bool``/strings)."""
        return np.array(
            [is_categorical(self.X.iloc[:, j]) for j in range(self.n_columns)], dtype=bool
        )

    @helper
    def _missing_counts(self) -> tuple[np.ndarray, np.ndarray]:
        missing = self.X.isna().to_numpy()
        return missing.sum(axis=0, dtype=np.int64), missing.sum(axis=1, dtype=np.int64)

    def missing_per_column(self) -> np.ndarray:
        """Missing values (NaN, None, NA) in each column."""
        return self._missing_counts()[0]

    def missing_per_row(self) -> np.ndarray:
        """Missing values in each row."""
        return self._missing_counts()[1]

    def column_values(self, j: int) -> np.ndarray:
        """Numeric column ``j`` as floats, with missing values and infinities as NaN."""
        values = _as_float(self.X.iloc[:, j])
        return np.where(np.isfinite(values), values, np.nan)

    def numeric_indices(self) -> list[int]:
        return [j for j, cat in enumerate(self.categorical()) if not cat]

    def categorical_indices(self) -> list[int]:
        return [j for j, cat in enumerate(self.categorical()) if cat]

    @helper
    def category_counts(self) -> list[np.ndarray]:
        """Per categorical column, the row count of each category seen, missing excluded."""
        counts = []
        for j in self.categorical_indices():
            column = self.X.iloc[:, j]
            observed = column.value_counts(dropna=True, sort=False).to_numpy(dtype=np.int64)
            counts.append(observed[observed > 0])
        return counts

    @helper
    def symbols(self) -> list[int]:
        """auto-sklearn's ``NumSymbols``: distinct non-missing values per categorical column."""
        return [len(c) for c in self.category_counts()]

    # -- classes (full data) --------------------------------------------------------------------
    @helper
    def class_codes(self) -> np.ndarray:
        """Integer class codes (``-1`` for a missing label)."""
        if not self.is_classification:
            raise HelperError("class codes exist only for classification")
        codes, _ = pd.factorize(pd.Series(self.y, dtype=object), use_na_sentinel=True)
        return np.asarray(codes, dtype=np.int64)

    @helper
    def class_counts(self) -> np.ndarray:
        """Rows per class (classes in order of first appearance)."""
        codes = self.class_codes()
        counts = np.bincount(codes[codes >= 0])
        if counts.size == 0:
            raise HelperError("no labelled row")
        return counts[counts > 0]

    # -- moments of the encoded matrix, over the full data ---------------------------------------
    @helper
    def encoded_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """(skewness, excess kurtosis) of every column of the encoded matrix, full data.

        The numeric part is computed from the observed values: mean imputation adds values at
        the mean, which add nothing to the central sums but count in the divisor. A one-hot
        column is a 0/1 vector with share ``p`` of ones, whose (biased) sample skewness and
        kurtosis are exactly the Bernoulli ones, so no one-hot matrix is built. A constant
        one-hot column (a category present on every row) gets skewness 0 and kurtosis -3, the
        values SciPy returned for constant data when auto-sklearn's stored meta-features were
        computed (mushroom's ``veil-type``: ``KurtosisMin`` -3.0 in the stored table).
        """
        skews, kurts = numeric_moments(self, self.numeric_indices())
        cat_skews, cat_kurts = [], []
        n = self.n_rows
        for j in self.categorical_indices():
            counts = self.X.iloc[:, j].value_counts(dropna=False, sort=False).to_numpy()
            for p in coalesced_shares(counts[counts > 0], n):
                s, k = bernoulli_moments(p)
                cat_skews.append(s)
                cat_kurts.append(k)
        return (
            np.concatenate([skews, np.asarray(cat_skews, dtype=float)]),
            np.concatenate([kurts, np.asarray(cat_kurts, dtype=float)]),
        )

    # -- the subsample and its encoded matrix ------------------------------------------------
    @helper
    def sample_rows(self) -> np.ndarray:
        """Row positions of the subsample (all rows when there are at most ``max_rows``)."""
        n = self.n_rows
        if self.max_rows is None or n <= self.max_rows:
            return np.arange(n)
        rng = np.random.default_rng(self.seed)
        if not self.is_classification:
            return np.sort(rng.choice(n, size=self.max_rows, replace=False))
        return stratified_rows(self.class_codes(), self.max_rows, rng)

    @helper
    def encoded_sample(self) -> np.ndarray:
        """The encoded matrix (see the module's docstring) of the subsample's rows."""
        rows = self.sample_rows()
        if rows.size == 0:
            raise HelperError("no rows")
        blocks: list[np.ndarray] = []
        cells = 0
        for j in self.numeric_indices():
            values = self.column_values(j)[rows]
            finite = values[~np.isnan(values)]
            if finite.size == 0 or finite.min() == finite.max():
                continue  # all missing or constant: dropped, as auto-sklearn does
            values = np.where(np.isnan(values), finite.mean(), values)
            std = values.std()
            if std == 0:
                continue
            blocks.append(((values - values.mean()) / std)[:, None])
            cells += rows.size
        for j in self.categorical_indices():
            codes, _ = pd.factorize(self.X.iloc[rows, j], use_na_sentinel=False)
            codes = np.asarray(codes)
            counts = np.bincount(codes)
            rare = counts < MINORITY_FRACTION * rows.size
            if rare.any():
                merged = np.where(rare, -1, np.arange(counts.size))
                codes = merged[codes]
                _, codes = np.unique(codes, return_inverse=True)
            width = int(codes.max()) + 1
            cells += rows.size * width
            if cells > MAX_ENCODED_CELLS:
                raise HelperError(
                    f"the encoded matrix would exceed {MAX_ENCODED_CELLS} cells; lower max_rows"
                )
            onehot = np.zeros((rows.size, width))
            onehot[np.arange(rows.size), codes] = 1.0
            blocks.append(onehot)
        if not blocks:
            raise HelperError("no column left after encoding (all constant or missing)")
        return np.hstack(blocks)

    @helper
    def sample_classes(self) -> tuple[np.ndarray, np.ndarray]:
        """(encoded rows, class codes) of the labelled rows of the subsample."""
        X = self.encoded_sample()
        codes = self.class_codes()[self.sample_rows()]
        labelled = codes >= 0
        return X[labelled], codes[labelled]


# -- pure functions ----------------------------------------------------------------------------
def _as_float(column: pd.Series) -> np.ndarray:
    if isinstance(column.dtype, pd.CategoricalDtype) or column.dtype == object:
        return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    return column.to_numpy(dtype=float, na_value=np.nan)


def numeric_moments(view: DataView, columns: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Biased skewness and excess kurtosis of mean-imputed numeric columns (full data).

    Constant and all-missing columns are left out, as auto-sklearn's variance threshold and
    imputer drop them before its moments are taken. Columns are processed in blocks so that
    the temporaries stay near ``_BLOCK_CELLS`` floats on large data.
    """
    n = view.n_rows
    if n == 0 or not columns:
        return np.empty(0), np.empty(0)
    block = max(1, _BLOCK_CELLS // max(n, 1))
    skews: list[np.ndarray] = []
    kurts: list[np.ndarray] = []
    for start in range(0, len(columns), block):
        chunk = np.column_stack([view.column_values(j) for j in columns[start : start + block]])
        observed = ~np.isnan(chunk)
        count = observed.sum(axis=0)
        with np.errstate(all="ignore"):
            low = np.where(observed, chunk, np.inf).min(axis=0)
            high = np.where(observed, chunk, -np.inf).max(axis=0)
            keep = (count > 0) & (high > low)
            chunk, observed, count = chunk[:, keep], observed[:, keep], count[keep]
            mean = np.where(observed, chunk, 0.0).sum(axis=0) / count
            centred = np.where(observed, chunk - mean, 0.0)
            m2 = (centred**2).sum(axis=0) / n
            m3 = (centred**3).sum(axis=0) / n
            m4 = (centred**4).sum(axis=0) / n
            skews.append(m3 / m2**1.5)
            kurts.append(m4 / m2**2 - 3.0)
    return np.concatenate(skews), np.concatenate(kurts)


def coalesced_shares(counts: np.ndarray, n: int) -> np.ndarray:
    """Shares of a column's categories after merging those under ``MINORITY_FRACTION``."""
    shares = counts / n
    rare = shares < MINORITY_FRACTION
    if not rare.any():
        return shares
    return np.append(shares[~rare], shares[rare].sum())


def bernoulli_moments(p: float) -> tuple[float, float]:
    """(skewness, excess kurtosis) of a 0/1 column with share ``p`` of ones.

    A constant column gives (0, -3): SciPy's value for constant data before version 1.9 (it
    now gives NaN), which auto-sklearn's stored meta-features contain.
    """
    pq = p * (1.0 - p)
    if pq <= 0.0:
        return 0.0, -3.0
    return (1.0 - 2.0 * p) / math.sqrt(pq), 1.0 / pq - 6.0


def stratified_rows(codes: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` row positions drawn so that each class keeps its share of the rows.

    Quotas are the classes' shares of ``size`` rounded by largest remainder (so they sum to
    ``size`` exactly); rows with a missing label (code -1) form a group of their own.
    """
    groups, inverse, counts = np.unique(codes, return_inverse=True, return_counts=True)
    exact = counts * size / codes.size
    quotas = np.floor(exact).astype(int)
    short = size - int(quotas.sum())
    if short > 0:
        order = np.argsort(-(exact - quotas), kind="stable")
        quotas[order[:short]] += 1
    chosen = [
        rng.choice(np.flatnonzero(inverse == g), size=q, replace=False)
        for g, q in zip(range(groups.size), quotas, strict=True)
        if q > 0
    ]
    return np.sort(np.concatenate(chosen))


def moments_of(values: np.ndarray) -> tuple[float, float]:
    """Biased skewness and excess kurtosis of ``values`` (NaN for constant data)."""
    values = np.asarray(values, dtype=float)
    centred = values - values.mean()
    m2 = float(np.mean(centred**2))
    if m2 == 0.0 or not math.isfinite(m2):
        return math.nan, math.nan
    return float(np.mean(centred**3)) / m2**1.5, float(np.mean(centred**4)) / m2**2 - 3.0
