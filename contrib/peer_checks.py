"""Checks every peer strategy (``smac3``, ``optuna-tpe``) must pass, and the small objectives
their tests share. Imported by the peers' tests (``contrib/conftest.py`` puts this folder on
the path)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from automl_core.plugins import Plugins
from automl_core.trial import Result, Status
from automl_engine.history import RunHistory, StoredTrial
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_spaces.pipeline_space import PipelineSpace
from automl_spaces.pool_space import PoolSpace


def stored_trials(run_dir: Path) -> list[StoredTrial]:
    with RunHistory(run_dir / HISTORY_FILE) as history:
        return history.trials()


def grid_pool(n: int = 25) -> PoolSpace:
    """A 5 x 5 grid in [0, 4]^2 plus a constant column; the candidate at index 7 is not offered."""
    xs, ys = np.meshgrid(np.arange(5.0), np.arange(5.0))
    encodings = np.column_stack([xs.ravel(), ys.ravel(), np.full(n, 3.0)])
    available = np.ones(n, dtype=bool)
    available[7] = False
    return PoolSpace("grid", encodings, available=available)


def pool_loss(space: PoolSpace, config: dict) -> float:
    """Distance to the grid point (3, 1): a smooth objective a model can learn."""
    x, y, _ = space.encodings[config["candidate"]]
    return float(math.hypot(x - 3, y - 1))


def ok(loss: float) -> Result:
    return Result(Status.OK, loss)


def check_oboe_run(search: Any, plugins: Plugins, tmp_path: Path) -> list[StoredTrial]:
    """30 trials on the oboe benchmark's dataset 3 through the run loop: each an offered
    candidate, none twice, all ok, the best below the dataset's median. The trials, for the
    peer's own checks (e.g. that its model took over)."""
    recipe = parse_recipe(
        {
            "task": {"benchmark": "oboe", "dataset": "3"},
            "search": search,
            "budget": {"trials": 30},
            "seed": 0,
        }
    )
    summary = run(recipe, tmp_path / "run", plugins=plugins)
    trials = stored_trials(tmp_path / "run")
    candidates = [t.trial.config["candidate"] for t in trials]
    assert summary.n_trials == len(trials) == 30
    assert len(set(candidates)) == 30  # never the same candidate twice
    assert all(t.status == "ok" for t in trials)
    benchmark = plugins.create("benchmark", "oboe")
    assert set(candidates) <= {c["candidate"] for c in benchmark.space("3").candidates()}
    losses = benchmark.metadata.performance[benchmark.metadata.row("3")]
    assert summary.best_loss < np.nanmedian(losses)
    return trials


def check_pipeline_run(
    search: Any,
    plugins: Plugins,
    cheap_space: PipelineSpace,
    cheap_include: dict[str, list[str]],
    tmp_path: Path,
) -> None:
    """6 trials of real pipelines on iris: valid, distinct, within the included classifiers,
    and a good best loss."""
    recipe = parse_recipe(
        {
            "task": {"dataset": "sklearn:iris"},
            "space": {"name": "autosklearn-classification", "params": {"include": cheap_include}},
            "search": search,
            "budget": {"trials": 6},
            "seed": 0,
        }
    )
    summary = run(recipe, tmp_path / "run", plugins=plugins)
    trials = stored_trials(tmp_path / "run")
    assert summary.n_trials == 6 and all(t.status == "ok" for t in trials)
    for stored in trials:
        config = dict(stored.trial.config)
        assert cheap_space.validate(config) == config
        assert config["classifier:__choice__"] in cheap_include["classifier"]
    assert len({cheap_space.key(t.trial.config) for t in trials}) == 6
    assert summary.best_loss < 0.2  # a real pipeline on iris
