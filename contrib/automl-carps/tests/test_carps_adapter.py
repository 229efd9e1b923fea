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


def dummy_multifidelity_run(tmp_path: Path, optimizer: str, trials: int) -> list[dict]:
    """Our ``optimizer`` run by CARP-S on its dummy multi-fidelity task; its trial log."""
    with initialize_config_module(config_module="carps.configs", version_base=None):
        config = compose(
            config_name="base",
            overrides=[
                "+task/DUMMY=multifidelity",
                f"+optimizer/automl={optimizer}",
                "seed=1",
                f"task.optimization_resources.n_trials={trials}",
                f"baserundir={tmp_path}",
                "hydra.searchpath=[pkg://automl_carps/configs]",
            ],
        )
    Path(config.outdir).mkdir(parents=True, exist_ok=True)
    task = make_task(config)
    make_optimizer(config, task).run()
    return [json.loads(line) for line in (Path(config.outdir) / "trial_logs.jsonl").open()]


def test_hyperband_gets_the_tasks_fidelity_range_through_carps(tmp_path):
    """CARP-S's dummy multi-fidelity task (fidelity 1..10, a constant) shows the budgets
    relayed."""
    logged = dummy_multifidelity_run(tmp_path, "hyperband", trials=20)
    budgets = [entry["trial_info"]["budget"] for entry in logged]
    # CARP-S counts a multi-fidelity trial as its share of the maximum fidelity
    assert sum(budgets) / 10 == pytest.approx(20, abs=1)
    assert min(budgets) >= 1 and max(budgets) <= 10
    # Hyperband's first bracket starts many configurations low and promotes the best upwards
    assert budgets[0] < 10 and max(budgets) == pytest.approx(10)


def test_a_strategy_that_races_budgets_is_refused_on_a_task_without_a_fidelity(tmp_path):
    config = carps_config(tmp_path, "hyperband", "cfg_2_1_0", trials=5, seed=1)
    Path(config.outdir).mkdir(parents=True, exist_ok=True)
    task = make_task(config)
    with pytest.raises(ValueError, match="needs a multi-fidelity task"):
        make_optimizer(config, task).run()


def test_a_strategy_that_does_not_race_budgets_runs_at_the_maximum_fidelity(tmp_path):
    """CARP-S's runner needs a budget on a multi-fidelity task: random search asks for none,
    and the adapter gives it the task's maximum."""
    logged = dummy_multifidelity_run(tmp_path, "random", trials=6)
    assert [entry["trial_info"]["budget"] for entry in logged] == [10] * 6


def test_bohb_style_hyperband_proposes_from_its_forest_on_a_multifidelity_hartmann(tmp_path):
    """mf-prior-bench's multi-fidelity Hartmann function (no download): hyperband with the
    forest races budgets 1..100 and, once a budget has results, proposes from the model."""
    pytest.importorskip("mfpbench", reason="needs mf-prior-bench: make carps-env")
    with initialize_config_module(config_module="carps.configs", version_base=None):
        config = compose(
            config_name="base",
            overrides=[
                "+task/MFPBench/SO/mfh=mfh3_good",
                "+optimizer/automl=hyperband-rf",
                "seed=1",
                "task.optimization_resources.n_trials=12",
                f"baserundir={tmp_path}",
                "hydra.searchpath=[pkg://automl_carps/configs]",
            ],
        )
    Path(config.outdir).mkdir(parents=True, exist_ok=True)
    task = make_task(config)
    optimizer = make_optimizer(config, task)
    optimizer.run()
    logged = [json.loads(line) for line in (Path(config.outdir) / "trial_logs.jsonl").open()]
    budgets = [entry["trial_info"]["budget"] for entry in logged]
    origins = {origin for _, origin, _ in optimizer.history}
    assert len(optimizer.history) == len(logged)
    assert min(budgets) < 100 and max(budgets) == pytest.approx(100)
    assert sum(budgets) / 100 == pytest.approx(12, abs=1)
    assert any(origin.startswith("model") for origin in origins), origins
