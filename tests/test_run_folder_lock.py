"""One writer per run folder, and readers that never write (issue 43).

Concurrency is tested with real processes (``automl run`` in a subprocess) and waits on
what the processes leave (the lock file's pid, trials in the history), never on a clock."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from toy_plugin import toy_recipe

from automl_core.errors import AutoMLError
from automl_engine.cli import main
from automl_engine.history import HistoryError, RunHistory
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.run_lock import LOCK_FILE, RunFolderBusy, RunFolderLock
from automl_engine.runner import run

AUTOML = [sys.executable, "-m", "automl_engine.cli"]
#: A run of the installed plugins that takes long enough to be caught alive: cheap trials,
#: many of them, one at a time in this process (no worker processes to wait for).
SLOW_RUN = {
    "task": {"dataset": "sklearn:iris"},
    "space": {
        "name": "autosklearn-classification",
        "params": {"include": {"classifier": ["decision_tree"]}},
    },
    "search": "random",
    "executor": "sequential",
    "budget": {"trials": 100_000},
    "seed": 0,
}
#: Long enough for any machine; each wait ends as soon as its condition holds.
PATIENCE = 240.0


def wait_for(condition, what: str):
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"gave up waiting for {what}")


def finished_trials(run_dir: Path) -> dict[int, float]:
    """Trial id -> loss of the finished trials (empty while there is no history yet)."""
    try:
        with RunHistory(run_dir / HISTORY_FILE, read_only=True) as history:
            return {t.trial.id: t.loss for t in history.trials() if t.finished}
    except HistoryError:
        return {}


def start_run(tmp_path: Path, run_dir: Path, **changes) -> subprocess.Popen:
    recipe = tmp_path / "slow.yaml"
    recipe.write_text(yaml.safe_dump({**SLOW_RUN, **changes}))
    return subprocess.Popen(
        [*AUTOML, "run", str(recipe), "--out", str(run_dir), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_run_refuses_a_folder_another_holds_and_says_who(plugins, tmp_path):
    recipe = parse_recipe(toy_recipe(budget={"trials": 3}))
    folder = tmp_path / "run"
    with RunFolderLock(folder):
        with pytest.raises(RunFolderBusy, match=rf"is in use by another run \(pid {os.getpid()}"):
            run(recipe, folder, plugins=plugins)
        assert not (folder / HISTORY_FILE).exists()  # refused before the folder was read
    summary = run(recipe, folder, plugins=plugins)  # released: the folder is free
    assert summary.n_trials == 3
    with RunFolderLock(folder), pytest.raises(RunFolderBusy):
        run(recipe, folder, plugins=plugins, resume=True)


def test_a_failed_set_up_leaves_no_folder_and_no_lock(plugins, tmp_path):
    one_column = tmp_path / "one.csv"
    one_column.write_text("a\n1\n2\n")  # exists (validation passes), fails to load
    recipe = parse_recipe(toy_recipe(task={"dataset": f"csv:{one_column}"}))
    with pytest.raises(AutoMLError, match="single column"):
        run(recipe, tmp_path / "run", plugins=plugins)
    assert not (tmp_path / "run").exists()


def _hold_until_told(started, told) -> None:  # in a forked child
    started.set()  # the fork's handlers have run: the child's copy of the lock is closed
    told.wait(PATIENCE)


def test_a_forked_child_does_not_keep_the_folder_locked(tmp_path):
    """The ``processes`` executor forks workers while the run holds its lock: a worker
    still running after its driver died must not keep the folder from being resumed."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    context = multiprocessing.get_context("fork")
    started, told = context.Event(), context.Event()
    lock = RunFolderLock(tmp_path / "run").acquire()
    child = context.Process(target=_hold_until_told, args=(started, told))
    child.start()
    try:
        assert started.wait(PATIENCE)
        lock.release()  # the driver is gone; its forked child lives on
        assert child.is_alive()
        with RunFolderLock(tmp_path / "run") as again:
            assert again.held
    finally:
        told.set()
        child.join(PATIENCE)


def test_two_runs_into_one_folder_give_one_history_and_one_refusal(tmp_path):
    folder = tmp_path / "same"
    first = start_run(tmp_path, folder, budget={"trials": 60})
    try:
        wait_for(lambda: finished_trials(folder), "the first run's first trial")
        first.send_signal(signal.SIGSTOP)  # paused mid-run: still alive, still the holder
        second = start_run(tmp_path, folder, budget={"trials": 60}, seed=5)
        _, err = second.communicate(timeout=PATIENCE)
        first.send_signal(signal.SIGCONT)
        assert second.returncode == 2
        assert f"is in use by another run (pid {first.pid}" in err
        first.communicate(timeout=PATIENCE)
        assert first.returncode == 0
    finally:
        first.kill()
    with RunHistory(folder / HISTORY_FILE, read_only=True) as history:
        assert history.count() == 60  # one complete history, nothing of the second run's
        assert history.get_meta("recipe")["seed"] == 0
    assert yaml.safe_load((folder / "recipe.yaml").read_text())["seed"] == 0
    assert json.loads((folder / "summary.json").read_text())["n_trials"] == 60


def test_resume_is_refused_while_the_run_lives_and_loses_nothing_after_kill_9(tmp_path, capsys):
    folder = tmp_path / "run"
    live = start_run(tmp_path, folder)
    try:
        wait_for(lambda: len(finished_trials(folder)) >= 3, "three finished trials")
        assert main(["resume", str(folder)]) == 2
        assert f"in use by another run (pid {live.pid}" in capsys.readouterr().err
        live.send_signal(signal.SIGKILL)
        live.wait(PATIENCE)
    finally:
        live.kill()
    before = finished_trials(folder)
    assert (folder / LOCK_FILE).exists()  # left behind by the killed run: it is no lock
    goal = max(before) + 3
    assert main(["resume", str(folder), "--quiet", "--set", f"budget.trials={goal}"]) == 0
    after = finished_trials(folder)
    assert len(after) == goal
    assert all(after[trial] == loss for trial, loss in before.items())  # nothing lost


# --- readers never write ------------------------------------------------------------------------


def test_show_on_an_empty_history_refuses_and_leaves_the_file_untouched(plugins, tmp_path, capsys):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / HISTORY_FILE).write_bytes(b"")
    assert main(["show", str(folder)]) == 2
    assert "holds no run history (0 bytes" in capsys.readouterr().err
    assert (folder / HISTORY_FILE).stat().st_size == 0
    assert sorted(p.name for p in folder.iterdir()) == [HISTORY_FILE]  # no -wal, no -shm


def test_show_writes_nothing_into_a_finished_run(plugins, tmp_path, capsys):
    folder = tmp_path / "run"
    run(parse_recipe(toy_recipe(budget={"trials": 3})), folder, plugins=plugins)
    before = {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.iterdir()}
    assert main(["show", str(folder)]) == 0
    assert "3 trials" in capsys.readouterr().out
    after = {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.iterdir()}
    assert after == before


def read_only_mount_command(folder: Path, command: list[str]) -> list[str] | None:
    """``command`` run with ``folder`` bind-mounted read-only over itself, in a mount
    namespace of its own (root: ``unshare -m``; others: ``unshare -rm``); None where the
    system does not allow it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    flags = "-m" if os.geteuid() == 0 else "-rm"
    probe = subprocess.run(
        [unshare, flags, "sh", "-c", f"mount --bind {folder} {folder} && "
         f"mount -o remount,bind,ro {folder} && ! touch {folder}/probe"],
        capture_output=True,
    )  # fmt: skip
    if probe.returncode != 0:
        return None
    quoted = " ".join(f"'{part}'" for part in command)
    return [unshare, flags, "sh", "-c", f"mount --bind {folder} {folder} && "
            f"mount -o remount,bind,ro {folder} && exec {quoted}"]  # fmt: skip


def test_show_works_on_a_read_only_mount(plugins, tmp_path):
    """Root writes through file modes, so the folder is made read-only the way a read-only
    disk is: a read-only bind mount."""
    folder = tmp_path / "run"
    run(parse_recipe(toy_recipe(budget={"trials": 3})), folder, plugins=plugins)
    command = read_only_mount_command(folder, [*AUTOML, "show", str(folder)])
    if command is None:
        pytest.skip("this system allows no read-only bind mount (unshare -m)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=PATIENCE, env=env)
    assert done.returncode == 0, done.stderr
    assert "3 trials" in done.stdout
