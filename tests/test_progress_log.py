"""What a run prints when standard error is not a terminal (a batch job's log): a line per
trial (or per N trials, and at each new best) with the time, the trial, its status, its loss
and the best so far; ``--quiet`` prints none. And the history opened read-only, as a
dashboard beside a live run opens it."""

from __future__ import annotations

import re

import pytest
import yaml

from automl_core.errors import AutoMLError
from automl_core.plugins import load_plugins
from automl_engine.cli import main, run_plugin_command
from automl_engine.history import HistoryError, RunHistory
from automl_engine.run_folder import HISTORY_FILE

RECIPE = {
    "name": "log",
    "task": {"dataset": "sklearn:iris", "metric": "accuracy"},
    "space": {
        "name": "autosklearn-classification",
        "params": {"include": {"classifier": ["decision_tree", "k_nearest_neighbors"]}},
    },
    "search": "random",
    "executor": "sequential",
    "budget": {"trials": 6},
    "seed": 0,
}
LINE = re.compile(r"^\[\s*[\d.]+s\] trial (\d+) (ok|crashed|timeout|memout) loss (\S+) best (\S+)$")


def run_logged(tmp_path, capsys, *options: str) -> list[str]:
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(RECIPE))
    assert main(["run", str(path), "--out", str(tmp_path / "run"), *options]) == 0
    return capsys.readouterr().err.splitlines()


def test_a_line_per_trial_when_stderr_is_not_a_terminal(tmp_path, capsys):
    lines = run_logged(tmp_path, capsys)
    assert lines[0].startswith(f"run {tmp_path / 'run'}: sklearn:iris (classification)")
    assert "metric accuracy, 6 trials" in lines[0]
    trial_lines = [LINE.match(line) for line in lines[1:]]
    assert all(trial_lines) and len(trial_lines) == 6
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        stored = {t.trial.id: t for t in history.trials()}
    best = float("inf")
    for match in trial_lines:
        trial = stored[int(match.group(1))]
        assert match.group(2) == trial.status
        assert match.group(3) == f"{trial.loss:.4f}"
        best = min(best, trial.loss)
        assert match.group(4) == f"{best:.4f}"


def test_every_n_trials_and_each_new_best(tmp_path, capsys):
    lines = [LINE.match(line) for line in run_logged(tmp_path, capsys, "--log-every", "4")[1:]]
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        losses = [t.loss for t in sorted(history.trials(), key=lambda t: t.finished_at)]
    improved = {i for i, loss in enumerate(losses) if loss < min(losses[:i], default=1e9)}
    expected = sorted(improved | {3})  # the 4th trial to finish, and every new best
    assert [int(m.group(1)) for m in lines if m] == expected


def test_quiet_prints_no_line(tmp_path, capsys):
    assert run_logged(tmp_path, capsys, "--quiet") == []


def test_log_every_must_be_positive(tmp_path, capsys):
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(RECIPE))
    assert main(["run", str(path), "--out", str(tmp_path / "r"), "--log-every", "0"]) == 2
    assert "--log-every must be at least 1" in capsys.readouterr().err


def test_a_read_only_history_reads_and_refuses_writes(tmp_path):
    path = tmp_path / HISTORY_FILE
    with RunHistory(path) as history:
        history.set_meta("metric", "accuracy")
    with RunHistory(path, read_only=True) as reader:
        assert reader.get_meta("metric") == "accuracy" and reader.trials() == []
        with pytest.raises(HistoryError):
            reader.set_meta("metric", "other")
    assert sorted(p.name for p in tmp_path.iterdir()) == [HISTORY_FILE]  # no log left
    with pytest.raises(HistoryError):
        RunHistory(tmp_path / "missing.sqlite", read_only=True)
    assert not (tmp_path / "missing.sqlite").exists()


def test_a_read_only_history_sees_a_live_writer(tmp_path):
    """WAL mode: the reader sees each committed write of a writer that stays open."""
    path = tmp_path / HISTORY_FILE
    writer = RunHistory(path)
    writer.set_meta("n", 1)
    with RunHistory(path, read_only=True) as reader:
        assert reader.get_meta("n") == 1
        writer.set_meta("n", 2)
        assert reader.get_meta("n") == 2
    writer.close()


def test_a_plugin_command_that_is_not_installed_says_how_to_get_it():
    bare = load_plugins(entry_points=False)
    with pytest.raises(
        AutoMLError, match=r"'automl report' is not a command here.*`automl` distribution installs"
    ):
        run_plugin_command(["report", "somewhere"], plugins=bare)
