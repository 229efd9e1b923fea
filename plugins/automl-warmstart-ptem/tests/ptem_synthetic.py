"""Two kinds of dataset over one pool of two algorithms (one hyper-parameter each): on kind 0
algorithm ``a`` is best with its optimum at 0.2, on kind 1 algorithm ``b`` with its optimum
at 0.8. A PTEM pre-trained on a dataset of the same kind as the target points the search at
the right algorithm and value; one of the other kind points it away. The meta-features say
the kind (``kind``) and nothing (``noise``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData
from automl_spaces.pool_space import PoolSpace

#: per kind, per algorithm: (best loss, optimum)
KINDS = {0: ((0.1, 0.2), (0.4, 0.3)), 1: ((0.4, 0.7), (0.1, 0.8))}


def kinds_pool(size: int = 120, seed: int = 0) -> PoolSpace:
    """Column 0 is algorithm a's hyper-parameter, column 1 algorithm b's."""
    rng = np.random.default_rng(seed)
    algorithm = np.arange(size) % 2
    encodings = np.zeros((size, 2))
    encodings[np.arange(size), algorithm] = rng.uniform(0.02, 1.0, size)
    return PoolSpace(
        "ptem-kinds", encodings, stage_names=("algorithm",), stage_choices=algorithm[:, None]
    )


def kind_losses(pool: PoolSpace, kind: int, jitter: float) -> np.ndarray:
    algorithm = np.asarray(pool.stage_choices)[:, 0]
    value = pool.encodings[np.arange(len(algorithm)), algorithm]
    floors = np.array([KINDS[kind][m][0] for m in (0, 1)])[algorithm]
    optima = np.array([KINDS[kind][m][1] for m in (0, 1)])[algorithm] + jitter
    return floors + (value - optima) ** 2


def kinds_metadata(n: int = 8, seed: int = 0) -> MetaData:
    """``n`` datasets ``d0``.. alternating kinds 0 and 1."""
    pool = kinds_pool()
    rng = np.random.default_rng(seed)
    datasets = [f"d{i}" for i in range(n)]
    kinds = np.arange(n) % 2
    performance = np.vstack([kind_losses(pool, k, rng.normal(0, 0.03)) for k in kinds])
    metafeatures = pd.DataFrame(
        {"kind": kinds.astype(float), "noise": rng.random(n)}, index=datasets
    )
    return MetaData(
        datasets=datasets,
        configs=pool.candidates(),
        performance=performance,
        metafeatures=metafeatures,
        space="ptem-kinds",
        pool=pool,
    )
