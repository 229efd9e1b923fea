"""Observers that can act: ``on_trial_end`` returning False stops a run gracefully, and an
observer that raises is named in a warning while the run finishes and saves everything."""

from __future__ import annotations

import warnings

import pytest
from toy_plugin import toy_recipe

from automl_core import hookimpl
from automl_core.plugins import load_plugins
from automl_engine.history import RunHistory
from automl_engine.observers import ObserverWarning
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE, MODEL_FILE
from automl_engine.runner import run


class StopAfter:
    """Early stopping: asks the run to stop once it has seen ``trials`` results."""

    def __init__(self, trials: int) -> None:
        self.trials = trials
        self.seen = 0

    @hookimpl
    def on_trial_end(self, result):
        self.seen += 1
        return False if self.seen >= self.trials else None


class Broken:
    """Raises in every lifecycle hook."""

    @hookimpl
    def on_run_start(self, run):
        raise RuntimeError("cannot open the dashboard")

    @hookimpl
    def on_trial_end(self, trial):
        raise ValueError(f"no room for trial {trial.id}")

    @hookimpl
    def on_run_end(self, summary):
        raise KeyError("summary")


class Counter:
    def __init__(self) -> None:
        self.trials = 0
        self.ended = False

    @hookimpl
    def on_trial_end(self):
        self.trials += 1

    @hookimpl
    def on_run_end(self):
        self.ended = True


def test_an_observer_returning_false_stops_the_run_and_it_still_saves_a_model(plugins, tmp_path):
    summary = run(
        parse_recipe(toy_recipe(budget={"trials": 20})),
        tmp_path / "run",
        plugins=plugins,
        observers=(StopAfter(3),),
    )
    assert summary.stopped_because == "stopped by observer 'StopAfter'"
    assert summary.n_trials == 3
    assert summary.model_path is not None and (tmp_path / "run" / MODEL_FILE).is_file()


def test_a_stop_lets_the_running_trials_finish_and_stores_them(plugins, tmp_path):
    recipe = toy_recipe(
        budget={"trials": 20}, executor={"name": "processes", "params": {"workers": 2}}
    )
    summary = run(
        parse_recipe(recipe), tmp_path / "run", plugins=plugins, observers=(StopAfter(1),)
    )
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        trials = history.trials()
    # both workers' trials were submitted before either ended: the one still running when
    # the observer asked to stop finished and was stored, not killed
    assert summary.n_trials == len(trials) == 2
    assert all(t.status == "ok" for t in trials)
    assert summary.stopped_because == "stopped by observer 'StopAfter'"


class Answers:
    """Answers 0, "", True, then nothing: falsy values that are not False included."""

    def __init__(self) -> None:
        self.answers = [0, "", True, None]

    @hookimpl
    def on_trial_end(self):
        return self.answers.pop(0)


def test_none_and_other_answers_do_not_stop(plugins, tmp_path):
    counter, answers = Counter(), Answers()
    summary = run(
        parse_recipe(toy_recipe(budget={"trials": 4})),
        tmp_path / "run",
        plugins=plugins,
        observers=(counter, answers),
    )
    assert summary.stopped_because == "trial budget reached" and counter.trials == 4
    assert answers.answers == []


def test_an_observer_that_raises_is_named_and_the_run_finishes(plugins, tmp_path):
    counter = Counter()
    with pytest.warns(ObserverWarning) as caught:
        summary = run(
            parse_recipe(toy_recipe(budget={"trials": 3})),
            tmp_path / "run",
            plugins=plugins,
            observers=(Broken(), counter),
        )
    messages = [str(w.message) for w in caught]
    assert any("observer 'Broken' raised in on_run_start" in m for m in messages)
    assert sum("'Broken' raised in on_trial_end" in m and "no room" in m for m in messages) == 3
    assert any("'Broken' raised in on_run_end" in m for m in messages)
    # the others were still told, and everything was saved
    assert counter.trials == 3 and counter.ended
    assert summary.n_trials == 3 and summary.stopped_because == "trial budget reached"
    assert (tmp_path / "run" / MODEL_FILE).is_file()


def test_an_installed_plugins_observer_is_named_by_its_distribution(tmp_path):
    class Logger:
        distribution = "automl-fancy-logger"

        @hookimpl
        def on_trial_end(self):
            raise OSError("disk full")

    from toy_plugin import ToyPlugin

    plugins = load_plugins(extra=[ToyPlugin(), Logger()], entry_points=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(parse_recipe(toy_recipe(budget={"trials": 1})), tmp_path / "run", plugins=plugins)
    assert any(
        "observer 'Logger-1' (automl-fancy-logger) raised in on_trial_end" in str(w.message)
        for w in caught
    )


class Events:
    """Records the order of the ask and tell events (SMAC's callbacks' pair)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []

    @hookimpl
    def on_trial_start(self, trial):
        self.events.append(("start", trial.id))

    @hookimpl
    def on_trial_end(self, trial):
        self.events.append(("end", trial.id))


def test_each_trial_starts_before_it_ends_and_every_one_is_announced(plugins, tmp_path):
    events = Events()
    summary = run(parse_recipe(toy_recipe()), tmp_path / "run", plugins=plugins, observers=[events])
    started = [trial for event, trial in events.events if event == "start"]
    ended = [trial for event, trial in events.events if event == "end"]
    assert started == list(range(summary.n_trials)) and sorted(ended) == started
    for trial in started:
        assert events.events.index(("start", trial)) < events.events.index(("end", trial))
