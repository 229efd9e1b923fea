"""Greedy portfolio construction: Algorithm 1 of Auto-sklearn 2.0 (Feurer et al., JMLR 2022).

A portfolio is an ordered list of configurations that together do well on many datasets: the
quality of a portfolio on a dataset is the loss of its best member there, and its loss on the
meta-data is the mean of that over datasets. Choosing the best portfolio of a given size is
NP-hard (it is a facility-location problem), but the objective is monotone and submodular, so
adding greedily the member that lowers it most comes within a factor 1 - 1/e of the best
possible reduction (Nemhauser et al., 1978; the paper's section 2.1).

Losses are compared across datasets after per-dataset min-max normalisation, so that a
dataset where every configuration scores between 0.30 and 0.31 counts as much as one where
they range from 0 to 0.9 (the paper's "distance to minimum", averaged: ADTM).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Candidates scored at once: bounds the temporary array to datasets x CHUNK floats (PMF has
#: 38,151 candidates: scoring them all at once on 449 datasets would take 137 MB).
CHUNK = 4096


def normalise_per_dataset(losses: np.ndarray) -> np.ndarray:
    """Each row (a dataset) of ``losses`` scaled to [0, 1] over its finite values:
    ``(loss - min) / (max - min)``.

    A row whose finite values are all equal becomes 0 there (every configuration is as good
    as the best). Non-finite entries (NaN = not run; an infinite loss is treated alike) stay
    NaN: what a missing result counts for is the caller's decision.
    """
    matrix = _matrix(losses)
    finite = np.isfinite(matrix)
    low = np.where(finite, matrix, np.inf).min(axis=1, keepdims=True, initial=np.inf)
    high = np.where(finite, matrix, -np.inf).max(axis=1, keepdims=True, initial=-np.inf)
    span = high - low  # -inf for a row without a finite loss: all of it stays NaN below
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = np.where(span > 0, (matrix - low) / np.where(span > 0, span, 1.0), 0.0)
    return np.where(finite, scaled, np.nan)


def _matrix(losses: np.ndarray) -> np.ndarray:
    matrix = np.asarray(losses, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"losses: expected a datasets x configurations matrix, got {matrix.shape}")
    return matrix


def _worst_filled(losses: np.ndarray) -> np.ndarray:
    """Normalised losses with a missing result counted as the worst, 1: a portfolio member
    that was never run on a dataset gives no guarantee there."""
    normalised = normalise_per_dataset(losses)
    normalised[np.isnan(normalised)] = 1.0
    return normalised


def greedy_portfolio(losses: np.ndarray, size: int) -> list[int]:
    """The column indices of a greedy portfolio of up to ``size`` configurations, in the
    order they were added (the order to evaluate them in).

    ``losses`` is datasets x configurations (NaN = not run). They are normalised per dataset
    (:func:`normalise_per_dataset`; normalising twice changes nothing, so normalised input is
    fine), a NaN counting as the worst, 1. Each step adds the configuration that minimises
    the mean over datasets of the best normalised loss in the portfolio so far plus it. Ties
    go to the configuration with the lower mean normalised loss on its own, then to the lower
    index (Algorithm 1 breaks ties by evaluation order; ours is the index).

    The portfolio grows to ``size`` or until every configuration is in it, even once no
    candidate lowers the objective (every dataset's best is already in): the later members
    then follow the single-best order (the secondary criterion above). A warm start asked
    for ``size`` configurations still gets them, and a search strategy that runs the
    portfolio in order has somewhere sensible to go on from; the objective cannot tell
    which of those members is better, so the choice among them is documented, not optimal.
    """
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ValueError(f"size: got {size!r}, expected an integer >= 0")
    matrix = _worst_filled(losses)
    n_datasets, n_configs = matrix.shape
    if n_datasets == 0:
        raise ValueError("losses: a portfolio needs at least one dataset to be built on")
    means = matrix.mean(axis=0)
    indices = np.arange(n_configs)
    current = np.ones(n_datasets)  # an empty portfolio is as bad as the worst configuration
    available = np.ones(n_configs, dtype=bool)
    members: list[int] = []
    for _ in range(min(int(size), n_configs)):
        scores = np.empty(n_configs)
        for start in range(0, n_configs, CHUNK):
            block = matrix[:, start : start + CHUNK]
            scores[start : start + block.shape[1]] = np.minimum(current[:, None], block).mean(
                axis=0
            )
        candidates = indices[available]
        order = np.lexsort((candidates, means[candidates], scores[candidates]))
        chosen = int(candidates[order[0]])
        members.append(chosen)
        available[chosen] = False
        current = np.minimum(current, matrix[:, chosen])
    return members


def portfolio_loss(losses: np.ndarray, members: Sequence[int]) -> float:
    """The mean over datasets of the best normalised loss among ``members`` (NaN counting as
    1): the objective :func:`greedy_portfolio` minimises. An empty portfolio scores 1."""
    matrix = _worst_filled(losses)
    if not len(members):
        return 1.0
    return float(matrix[:, list(members)].min(axis=1).mean())


def loss_curve(losses: np.ndarray, members: Sequence[int]) -> list[float]:
    """:func:`portfolio_loss` of each prefix of ``members``: how much each member adds."""
    matrix = _worst_filled(losses)
    current = np.ones(matrix.shape[0])
    curve = []
    for member in members:
        current = np.minimum(current, matrix[:, member])
        curve.append(float(current.mean()))
    return curve
