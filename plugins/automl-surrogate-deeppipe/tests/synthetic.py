"""A small synthetic family of tasks over a two-stage pool of pipelines, for meta-training
in tests: every task's loss is one shared function of the pipeline (which algorithms, which
hyper-parameters) plus a task's own small tilt, so what one task teaches transfers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData
from automl_spaces.pool_space import PoolSpace

#: (stage, algorithms with their number of hyper-parameters)
STAGES = (("scaler", (1, 2)), ("model", (2, 3, 0)))


def family_pool(size: int = 240, seed: int = 0) -> PoolSpace:
    """``size`` pipelines: a scaler (two algorithms, 1 and 2 hyper-parameters) then a model
    (three algorithms, 2, 3 and no hyper-parameters); an inactive algorithm's columns hold 0."""
    rng = np.random.default_rng(seed)
    widths = [w for _, algorithms in STAGES for w in algorithms]
    starts = np.concatenate([[0], np.cumsum(widths)])
    encodings = np.zeros((size, int(starts[-1])))
    choices = np.zeros((size, len(STAGES)), dtype=int)
    component = 0
    for s, (_, algorithms) in enumerate(STAGES):
        choices[:, s] = rng.integers(0, len(algorithms), size)
        for k, width in enumerate(algorithms):
            rows = np.flatnonzero(choices[:, s] == k)
            columns = slice(starts[component], starts[component + 1])
            encodings[rows, columns] = rng.uniform(0.05, 1.0, (len(rows), width))
            component += 1
    return PoolSpace(
        "family", encodings, stage_names=tuple(s for s, _ in STAGES), stage_choices=choices
    )


def shared_loss(pool: PoolSpace) -> np.ndarray:
    """The family's common loss surface: algorithm effects plus smooth hyper-parameter
    effects, different per algorithm."""
    x, choices = pool.encodings, np.asarray(pool.stage_choices)
    model = np.array([0.1, 0.3, 0.6])[choices[:, 1]]
    scaler = np.array([0.0, 0.1])[choices[:, 0]]
    shape = np.sin(4 * x[:, 3:8]).sum(axis=1) * 0.15 + (x[:, 0:3] - 0.5).sum(axis=1) ** 2 * 0.2
    return model + scaler + shape


def family_metadata(n_tasks: int = 18, seed: int = 0) -> MetaData:
    """``n_tasks`` tasks on :func:`family_pool`: 12 to meta-train on, 3 to validate, the rest
    to test; every task observes 70 % of the pipelines."""
    pool = family_pool()
    rng = np.random.default_rng(seed)
    base = shared_loss(pool)
    datasets = [f"t{i}" for i in range(n_tasks)]
    performance = np.empty((n_tasks, len(pool.encodings)))
    for t in range(n_tasks):
        tilt = rng.normal(0, 0.05) * pool.encodings[:, 3] + rng.normal(0, 0.02)
        performance[t] = base + tilt + rng.normal(0, 0.01, len(base))
        performance[t, rng.random(len(base)) < 0.3] = np.nan
    return MetaData(
        datasets=datasets,
        configs=[{"candidate": j} for j in range(len(pool.encodings))],
        performance=performance,
        metafeatures=pd.DataFrame(index=datasets),
        splits={"train": datasets[:12], "validation": datasets[12:15], "test": datasets[15:]},
        space=pool.name,
        pool=pool,
        info={"source": "synthetic family"},
    )
