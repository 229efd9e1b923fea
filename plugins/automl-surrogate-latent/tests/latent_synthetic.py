"""A synthetic family of datasets over a two-stage pool: a scaler, then an algorithm (three
of them, with 2, 1 and no hyper-parameters). Every dataset's loss is a bowl per algorithm
around that algorithm's own optimum, the algorithms' best losses apart, plus a dataset's own
small shift of the optima: what a PTEM learns on one dataset transfers to the others."""

from __future__ import annotations

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData
from automl_spaces.pool_space import PoolSpace

#: the algorithms' hyper-parameter counts, where each one's optimum lies, its best loss
WIDTHS = (2, 1, 0)
OPTIMA = (np.array([0.3, 0.7]), np.array([0.6]), np.array([]))
FLOORS = (0.1, 0.2, 0.5)
#: a family whose algorithms have as many hyper-parameters each (embeddings of the same
#: dimension can overlap; a point and a surface cannot)
EVEN = {
    "widths": (2, 2, 2),
    "optima": (np.array([0.3, 0.7]), np.array([0.6, 0.2]), np.array([0.5, 0.5])),
    "floors": (0.1, 0.15, 0.2),
}


def family_pool(size: int = 300, seed: int = 0, widths: tuple[int, ...] = WIDTHS) -> PoolSpace:
    """Columns: the scaler's one hyper-parameter (scaler 1 only), then the algorithms'."""
    rng = np.random.default_rng(seed)
    choices = np.column_stack([rng.integers(0, 2, size), rng.integers(0, 3, size)])
    encodings = np.zeros((size, 1 + sum(widths)))
    scaled = choices[:, 0] == 1
    encodings[scaled, 0] = rng.uniform(0, 1, scaled.sum())
    start = 1
    for m, width in enumerate(widths):
        rows = np.flatnonzero(choices[:, 1] == m)
        encodings[np.ix_(rows, np.arange(start, start + width))] = rng.uniform(
            0.05, 1, (len(rows), width)
        )
        start += width
    return PoolSpace(
        "latent-family", encodings, stage_names=("scaler", "algorithm"), stage_choices=choices
    )


def family_losses(
    pool: PoolSpace,
    shift: float = 0.0,
    widths: tuple[int, ...] = WIDTHS,
    optima: tuple[np.ndarray, ...] = OPTIMA,
    floors: tuple[float, ...] = FLOORS,
) -> np.ndarray:
    """One dataset's losses: per algorithm, its floor plus its squared distance to its
    optimum (moved by ``shift``); the scaler adds a little."""
    choices = np.asarray(pool.stage_choices)
    losses = np.zeros(len(pool.encodings))
    start = 1
    for m, width in enumerate(widths):
        rows = np.flatnonzero(choices[:, 1] == m)
        values = pool.encodings[np.ix_(rows, np.arange(start, start + width))]
        distance = ((values - (optima[m] + shift)) ** 2).sum(axis=1)
        losses[rows] = floors[m] + distance
        start += width
    return losses + 0.02 * choices[:, 0]


def family_metadata(n: int = 6, seed: int = 0) -> MetaData:
    pool = family_pool()
    rng = np.random.default_rng(seed)
    datasets = [f"d{i}" for i in range(n)]
    performance = np.vstack([family_losses(pool, rng.normal(0, 0.05)) for _ in datasets])
    return MetaData(
        datasets=datasets,
        configs=pool.candidates(),
        performance=performance,
        metafeatures=pd.DataFrame({"shift": np.arange(n, dtype=float)}, index=datasets),
        splits={"train": datasets[: n - 2], "test": datasets[n - 2 :]},
        space="latent-family",
        pool=pool,
    )
