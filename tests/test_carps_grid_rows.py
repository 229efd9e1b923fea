"""benchmarks/carps_grid.py reads CARP-S's trial logs into rows: on a multi-fidelity task a
run's progress is the budget it spent, and its incumbent the best cost at the maximum fidelity
(a low fidelity's cost is not the function's)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "carps_grid.py"


def _script():
    spec = importlib.util.spec_from_file_location("carps_grid", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _entry(budget: float | None, cost: float, start: float = 0.0) -> dict:
    return {
        "trial_info": {"budget": budget},
        "trial_value": {"cost": cost, "starttime": start, "endtime": start + 1},
    }


def test_a_multifidelity_incumbent_counts_only_results_at_the_maximum_fidelity():
    grid = _script()
    # 3 full-budget trials' worth: nine at a ninth of it, then two at full budget
    entries = [_entry(100 / 9, -5.0)] * 9 + [_entry(100, -1.0), _entry(100, -2.0)]
    progress, incumbents = grid.multi_fidelity_trajectory(entries, top=100, n_trials=3)
    assert progress[8] == pytest.approx(1 / 3)
    assert progress[-1] == pytest.approx(1.0)
    # the cheap trials' -5 never becomes the incumbent; none exists before a full one
    assert all(math.isnan(value) for value in incumbents[:9])
    assert incumbents[9:] == [-1.0, -2.0]
    assert math.isnan(grid.incumbent_at(progress, incumbents, 0.25))
    assert grid.incumbent_at(progress, incumbents, 0.7) == -1.0
    assert grid.incumbent_at(progress, incumbents, 1.0) == -2.0


def test_a_run_folder_becomes_a_row_once_it_spent_its_budget(tmp_path):
    grid = _script()
    (tmp_path / ".hydra").mkdir()
    (tmp_path / ".hydra" / "config.yaml").write_text(
        "task:\n  optimization_resources: {n_trials: 2}\n"
        "  input_space: {fidelity_space: {max_fidelity: 10}}\n"
    )
    log = tmp_path / "trial_logs.jsonl"
    log.write_text("\n".join(json.dumps(_entry(b, c)) for b, c in [(5, 0.1), (10, 0.7)]))
    assert grid.row_of(tmp_path, "opt", "task", 1, -1.0, multi_fidelity=True) is None
    with log.open("a") as stream:
        stream.write("\n" + json.dumps(_entry(5, 0.2)))
    row = grid.row_of(tmp_path, "opt", "task", 1, -1.0, multi_fidelity=True)
    assert row is not None and row["trials"] == 3 and row["incumbent_100"] == 0.7
    # black-box: one trial a trial, the incumbent over every cost
    row = grid.row_of(tmp_path, "opt", "task", 1, -1.0, multi_fidelity=False)
    assert row is not None and row["incumbent_100"] == 0.1
