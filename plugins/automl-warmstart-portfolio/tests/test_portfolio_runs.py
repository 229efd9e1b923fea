"""The portfolio through the real plugin registry and the run loop, on table-lookup
benchmarks: the first trials of a run are the portfolio, built without the run's dataset,
and successive halving's first bracket starts with it (Auto-sklearn 2.0's PoSH)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from automl_core.errors import AutoMLError
from automl_core.plugins import load_plugins
from automl_engine.history import RunHistory
from automl_engine.metastore import resolve_metadata
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_warmstart_portfolio import greedy_portfolio

pytest.importorskip("automl_metadata")  # the oboe and lcdb sources and benchmarks


def run_trials(document: dict[str, Any], out: Path) -> list:
    run(parse_recipe(document), out, plugins=load_plugins())
    with RunHistory(out / HISTORY_FILE) as history:
        return history.trials()


def without(performance: np.ndarray, row: int) -> np.ndarray:
    return np.delete(performance, row, axis=0)


def test_an_oboe_run_starts_with_the_portfolio_built_without_its_dataset(
    tmp_path, own_portfolio_cache
):
    oboe = resolve_metadata("oboe", None, load_plugins())

    def first_five(dataset: str, leave_out: bool) -> list[int]:
        losses = without(oboe.performance, oboe.row(dataset)) if leave_out else oboe.performance
        return greedy_portfolio(losses, 5)  # greedy is built prefix by prefix: size 32's first 5

    # a dataset that changes the portfolio's first five when it is part of the meta-data
    dataset = next(d for d in oboe.datasets if first_five(d, True) != first_five(d, False))
    trials = run_trials(
        {
            "name": "portfolio-oboe",
            "task": {"benchmark": "oboe", "dataset": dataset},
            "search": "random",
            "warmstart": {"starter": "portfolio", "params": {"metadata": "oboe"}, "configs": 5},
            "budget": {"trials": 7},
            "seed": 0,
        },
        tmp_path / "run",
    )
    assert [t.trial.origin for t in trials] == ["warmstart"] * 5 + ["random"] * 2
    assert [t.trial.config["candidate"] for t in trials[:5]] == first_five(dataset, True)
    assert len(list((own_portfolio_cache / "portfolios").glob("*.json"))) == 1


def test_successive_halving_starts_its_first_bracket_with_the_portfolio(tmp_path):
    pytest.importorskip("automl_halving")
    lcdb = resolve_metadata("lcdb", None, load_plugins())
    dataset = "6"  # every LCDB learner was run on it: the whole portfolio is offered
    portfolio = greedy_portfolio(without(lcdb.performance, lcdb.row(dataset)), 9)
    trials = run_trials(
        {
            "name": "posh-lcdb",
            "task": {"benchmark": "lcdb", "dataset": dataset},
            # eta 3 from 128 to 1152 training rows: 9 configurations at 128, 3 at 384, 1 at 1152
            "search": {
                "strategy": "successive_halving",
                "params": {"eta": 3},
                "fidelity": {"min": 128, "max": 1152},
            },
            "warmstart": {"starter": "portfolio", "params": {"metadata": "lcdb", "size": 9}},
            "budget": {"trials": 13},
            "seed": 0,
        },
        tmp_path / "run",
    )
    first_rung = trials[:9]
    assert [t.trial.config["candidate"] for t in first_rung] == portfolio
    assert {t.trial.origin for t in first_rung} == {"warmstart"}
    assert {t.trial.budget for t in first_rung} == {128}
    best_three = sorted(first_rung, key=lambda t: (t.loss, t.trial.id))[:3]
    promoted = trials[9:12]
    assert {t.trial.budget for t in promoted} == {384}
    assert {t.trial.config["candidate"] for t in promoted} == {
        t.trial.config["candidate"] for t in best_three
    }
    assert trials[12].trial.budget == 1152


def optional_portfolio_recipe(metadata: str, optional: bool) -> dict[str, Any]:
    return {
        "name": "optional-portfolio",
        "task": {"dataset": "sklearn:iris"},
        "space": {
            "name": "autosklearn-classification",
            "params": {"include": {"classifier": ["lda"]}},
        },
        "search": "random",
        "warmstart": {"name": "portfolio", "params": {"metadata": metadata}, "optional": optional},
        "executor": "sequential",
        "budget": {"trials": 2},
        "seed": 0,
    }


def test_an_optional_warm_start_that_cannot_serve_leaves_the_search_cold(tmp_path):
    """The default recipe's portfolio is optional: meta-data that cannot be had (here a
    folder that does not exist; offline, a registry package) starts the search cold, and the
    history says why. Not optional, the same recipe fails before any trial."""
    missing = str(tmp_path / "no-such-metadata")
    trials = run_trials(optional_portfolio_recipe(missing, optional=True), tmp_path / "cold")
    assert [t.trial.origin for t in trials] == ["random", "random"]
    with RunHistory(tmp_path / "cold" / HISTORY_FILE) as history:
        skipped = history.get_meta("warmstart")["info"]["skipped"]
    assert "no-such-metadata" in skipped
    with pytest.raises(AutoMLError, match="no-such-metadata"):
        run_trials(optional_portfolio_recipe(missing, optional=False), tmp_path / "strict")
