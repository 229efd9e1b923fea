"""One of our strategies run by CARP-S's own runner on a BBOB function: CARP-S's task and
optimizer interfaces, its loggers. Needs CARP-S and ioh (`make carps-env`; then
`.venv-carps/bin/python -m pytest contrib/automl-carps`): skipped where they are missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("carps", reason="needs CARP-S: make carps-env (.venv-carps)")
pytest.importorskip("ioh", reason="needs ioh (BBOB): make carps-env (.venv-carps)")

from carps.utils.running import make_optimizer, make_task
from hydra import compose, initialize_config_module


def carps_config(tmp_path: Path, optimizer: str, task: str, trials: int, seed: int):
    with initialize_config_module(config_module="carps.configs", version_base=None):
        return compose(
            config_name="base",
            overrides=[
                f"+task/BBOB={task}",
                f"+optimizer/automl={optimizer}",
                f"seed={seed}",
                f"task.optimization_resources.n_trials={trials}",
                f"baserundir={tmp_path}",
                "hydra.searchpath=[pkg://automl_carps/configs]",
            ],
        )


def test_smbo_with_a_forest_runs_a_bbob_function_through_carps(tmp_path):
    config = carps_config(tmp_path, "smbo-rf", "cfg_2_1_0", trials=15, seed=1)
    Path(config.outdir).mkdir(parents=True, exist_ok=True)
    task = make_task(config)
    optimizer = make_optimizer(config, task)
    best_info, best_value = optimizer.run()
    logged = [json.loads(line) for line in (Path(config.outdir) / "trial_logs.jsonl").open()]
    assert len(logged) == 15
    costs = [entry["trial_value"]["cost"] for entry in logged]
    assert best_value.cost == min(costs)
    # the strategy's own proposals: its initial design, then its model's
    origins = [entry["trial_info"]["additional_info"]["origin"] for entry in logged]
    assert any(origin.startswith("acquisition") for origin in origins)
    assert best_info.name.startswith("trial-")
