"""Resuming an interrupted run: nothing finished is lost or repeated, running trials are run
again under their ids, and a changed recipe is refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings

import pytest
import yaml
from toy_plugin import toy_recipe

from automl_core.errors import AutoMLError
from automl_core.trial import Trial
from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import ELAPSED, HISTORY_FILE
from automl_engine.runner import run


def trials_of(run_dir):
    with RunHistory(run_dir / HISTORY_FILE) as history:
        return history.trials()


def test_resume_reruns_the_running_trial_and_completes_the_budget(plugins, tmp_path):
    first = parse_recipe(toy_recipe(budget={"trials": 4}))
    run(first, tmp_path / "run", plugins=plugins)
    config = trials_of(tmp_path / "run")[0].trial.config
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:  # as if killed mid-trial 4
        history.start(Trial(4, config, None, "lost"))
        history.set_meta(ELAPSED, 1.5)
    before = {t.trial.id: t for t in trials_of(tmp_path / "run")}
    summary = run(
        parse_recipe(toy_recipe(budget={"trials": 8})),
        tmp_path / "run",
        plugins=plugins,
        resume=True,
    )
    after = trials_of(tmp_path / "run")
    assert summary.n_trials == 8 and [t.trial.id for t in after] == list(range(8))
    assert all(t.finished for t in after)
    for trial_id in range(4):  # finished trials untouched
        assert after[trial_id].loss == before[trial_id].loss
        assert after[trial_id].finished_at == before[trial_id].finished_at
    assert after[4].trial.origin == "lost"  # the interrupted trial ran again, same id
    keys = [yaml.safe_dump(t.trial.config) for t in after if t.trial.origin != "lost"]
    assert len(set(keys)) == len(keys)  # the strategy was told the old trials: no repeats


def test_resume_refuses_a_changed_search_and_a_missing_run(plugins, tmp_path):
    run(parse_recipe(toy_recipe(budget={"trials": 2})), tmp_path / "run", plugins=plugins)
    changed = parse_recipe(toy_recipe(budget={"trials": 4}, seed=9))
    with pytest.raises(AutoMLError, match="with a different seed"):
        run(changed, tmp_path / "run", plugins=plugins, resume=True)
    with pytest.raises(AutoMLError, match="holds no run"):
        run(changed, tmp_path / "elsewhere", plugins=plugins, resume=True)
    with pytest.raises(AutoMLError, match="resume it"):
        run(changed, tmp_path / "run", plugins=plugins)


def test_sigkill_mid_search_then_resume(tmp_path, capsys):
    """The real command, killed with SIGKILL while trials run, then ``automl resume``."""
    budget = 20
    quick = {  # pipelines of a fraction of a second: the kill lands mid-search, not mid-trial
        "classifier": ["decision_tree", "k_nearest_neighbors"],
        "feature_preprocessor": ["no_preprocessing"],
    }
    recipe = {
        "name": "killed",
        "task": {"dataset": "sklearn:digits", "metric": "accuracy"},
        "space": {"name": "autosklearn-classification", "params": {"include": quick}},
        "search": "random",
        "budget": {"trials": budget},
        "seed": 5,
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    out = tmp_path / "run"
    command = [sys.executable, "-m", "automl_engine.cli", "run", str(path), "--out", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and _count(out) < 5 and process.poll() is None:
            time.sleep(0.02)
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    killed_at = _count(out)
    assert 5 <= killed_at < budget
    before = {t.trial.id: t for t in trials_of(out) if t.finished}
    assert main(["resume", str(out), "--quiet"]) == 0
    assert f"trials: {budget}" in capsys.readouterr().out
    trials = trials_of(out)
    assert [t.trial.id for t in trials] == list(range(budget))
    assert all(t.finished for t in trials)
    for trial_id, finished in before.items():  # what finished before the kill is kept as is
        after = trials[trial_id]
        assert (after.trial.config, after.loss, after.finished_at) == (
            finished.trial.config,
            finished.loss,
            finished.finished_at,
        )
    configs = [yaml.safe_dump(t.trial.config) for t in trials]
    assert len(set(configs)) == budget  # none repeated


def _count(run_dir) -> int:
    if not (run_dir / HISTORY_FILE).exists():
        return 0
    try:
        with RunHistory(run_dir / HISTORY_FILE) as history:
            return len(history.trials(finished_only=True))
    except Exception:  # the file is being created
        return 0


def test_a_resumed_run_counts_the_time_already_spent(plugins, tmp_path):
    run(parse_recipe(toy_recipe(budget={"trials": 2})), tmp_path / "run", plugins=plugins)
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        history.set_meta(ELAPSED, 100.0)  # as if the run had searched for 100 s
    resumed = parse_recipe(toy_recipe(budget={"trials": 8, "wall_time": 50}))
    summary = run(resumed, tmp_path / "run", plugins=plugins, resume=True)
    assert summary.stopped_because == "wall-time budget reached" and summary.n_trials == 2


@pytest.mark.parametrize("strategy", ["successive_halving", "hyperband", "asha", "random"])
def test_a_stopped_then_resumed_run_proposes_what_an_uninterrupted_one_does(tmp_path, strategy):
    """Brackets in progress (successive halving, Hyperband, ASHA) and random streams come
    back on resume: the resumed strategy is called as the stopped one was, so 9 trials then
    a resume to 24 propose exactly the 24 trials of one run."""
    pytest.importorskip("automl_halving")
    from toy_plugin import DoublesPlugin, ToyPlugin

    from automl_core.plugins import load_plugins

    plugins = load_plugins(extra=[ToyPlugin(), DoublesPlugin()])
    search = {"strategy": strategy, "fidelity": "subsample"}

    def proposals(folder):
        return [(yaml.safe_dump(t.trial.config), t.trial.budget) for t in trials_of(folder)]

    run(
        parse_recipe(toy_recipe(search=search, budget={"trials": 24})),
        tmp_path / "one",
        plugins=plugins,
    )
    run(
        parse_recipe(toy_recipe(search=search, budget={"trials": 9})),
        tmp_path / "two",
        plugins=plugins,
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="on replay")  # it proposed differently
        run(
            parse_recipe(toy_recipe(search=search, budget={"trials": 24})),
            tmp_path / "two",
            plugins=plugins,
            resume=True,
        )
    assert proposals(tmp_path / "two") == proposals(tmp_path / "one")
    assert len(set(b for _, b in proposals(tmp_path / "one"))) >= (1 if strategy == "random" else 2)


def test_a_result_s_info_is_stored_and_told_again_on_resume(tmp_path):
    """A strategy that learns from ``Result.info`` (a budget used, a learning-curve point) is
    told on replay what it was told before: the history keeps ``info`` as JSON (numpy values
    as Python's), and an older history without the column opens with empty ones."""
    import sqlite3

    import numpy as np

    from automl_core.trial import Result, Status

    info = {"budget_used": np.float64(0.5), "curve": np.arange(3), "at": tmp_path / "model"}
    path = tmp_path / HISTORY_FILE
    with RunHistory(path) as history:
        history.start(Trial(0, {"x": 1}))
        history.finish(Trial(0, {"x": 1}), Result(Status.OK, 0.2, info=info), asked=1)
        (stored,) = history.trials()
    expected = {"budget_used": 0.5, "curve": [0, 1, 2], "at": str(tmp_path / "model")}
    assert stored.info == expected and stored.result().info == expected
    with sqlite3.connect(path) as db:  # the table as it was before the column
        db.execute("ALTER TABLE trials DROP COLUMN info")
    with RunHistory(path) as history:
        assert history.trials()[0].result().info == {}


def test_a_resumed_runs_progress_goes_on_from_its_finished_trials_and_best(plugins, tmp_path):
    """The log of a resumed run counts on from the trials finished before and shows their
    best loss as the best so far, rather than starting from zero and forgetting it."""
    import io

    from automl_core import hookimpl
    from automl_engine.progress import TrialLog

    run(parse_recipe(toy_recipe(budget={"trials": 4})), tmp_path / "run", plugins=plugins)
    best_before = min(t.loss for t in trials_of(tmp_path / "run"))
    stream = io.StringIO()
    log = TrialLog(stream=stream)

    class Observer:
        @hookimpl
        def on_run_start(self, run):
            log.on_run_start(run)

        @hookimpl
        def on_trial_end(self, run, trial, result):
            log.on_trial_end(run, trial, result)

    resumed = parse_recipe(toy_recipe(budget={"trials": 7}))
    run(resumed, tmp_path / "run", plugins=plugins, resume=True, observers=(Observer(),))
    lines = stream.getvalue().splitlines()
    assert lines[1] == f"resumed after 4 finished trials, best {best_before:.4f}"
    shown = [float(line.rsplit("best ", 1)[1]) for line in lines[2:]]
    assert len(shown) == 3 and all(best <= round(best_before, 4) for best in shown)
    assert log.done == 7
