"""What the run loop writes after each result, and how cheaply: one transaction for the
result and the run's elapsed time, the tell order numbered in the database."""

from __future__ import annotations

import numpy as np
import pytest

from automl_core.contracts import SearchContext
from automl_core.random_search import RandomSearch
from automl_core.trial import Result, Status, Trial
from automl_engine.history import RunHistory


def test_a_result_and_its_meta_are_written_in_one_transaction(tmp_path):
    history = RunHistory(tmp_path / "history.sqlite")
    history.start(Trial(0, {"x": 1}))
    with pytest.raises(TypeError):  # the meta cannot be written: nothing of it is
        history.finish(Trial(0, {"x": 1}), Result(Status.OK, 0.5), 1, meta={"bad": object()})
    assert history.trials()[0].status == "running" and history.get_meta("bad") is None
    history.finish(Trial(0, {"x": 1}), Result(Status.OK, 0.5), 1, meta={"elapsed": 2.5})
    assert history.trials()[0].loss == 0.5 and history.get_meta("elapsed") == 2.5


def test_tell_orders_count_the_told_results_only(tmp_path):
    history = RunHistory(tmp_path / "history.sqlite")
    for trial_id in range(4):
        history.start(Trial(trial_id, {"x": trial_id}))
    history.finish(Trial(2, {"x": 2}), Result(Status.OK, 0.1), asked=3)
    history.finish(Trial(0, {"x": 0}), Result(Status.OK, 0.2), asked=None)  # not told
    history.finish(Trial(3, {"x": 3}), Result(Status.OK, 0.3), asked=4)
    history.close()
    reopened = RunHistory(tmp_path / "history.sqlite")
    history_orders = {t.trial.id: t.tell_order for t in reopened.trials()}
    assert history_orders == {0: None, 1: None, 2: 1, 3: 2}
    reopened.finish(Trial(1, {"x": 1}), Result(Status.OK, 0.4), asked=4)
    assert reopened.trials()[1].tell_order == 3


def test_random_search_never_proposes_what_it_was_told(plugins):
    """A result told without an ask of this search's (replayed on resume) marks its
    configuration as seen; the search's own asks are not kept once told."""
    space = plugins.create("space", "toy-classification")
    search = RandomSearch()
    search.setup(SearchContext(space=space, seed=0))
    first = search.ask()
    other = RandomSearch()
    other.setup(SearchContext(space=space, seed=0))
    other.tell(Trial(0, dict(first.config)), Result(Status.OK, 0.1))
    assert other.ask().config != first.config
    search.tell(Trial(0, dict(first.config)), Result(Status.OK, 0.1))
    assert search._untold == []
    proposed = [search.ask().config for _ in range(20)]
    assert first.config not in proposed
    assert len({space.key(c) for c in proposed}) == 20
    assert np.all([space.key(c) in search.seen for c in proposed])


def test_the_best_trials_are_in_rank_order_once_per_configuration(tmp_path):
    """``best`` sorts in SQLite: the same order as :func:`rank_key` over every row (larger
    budgets first, no budget as the full one, then loss, then id), each configuration once
    at its largest budget."""
    from automl_core.space import config_key
    from automl_engine.history import rank_key

    rng = np.random.default_rng(0)
    history = RunHistory(tmp_path / "history.sqlite")
    for trial_id in range(300):
        budget = [None, 1 / 9, 1 / 3, 1.0][rng.integers(4)]
        trial = Trial(trial_id, {"x": int(rng.integers(40))}, budget)
        history.start(trial)
        status = Status.OK if rng.random() < 0.8 else Status.CRASHED
        loss = float(rng.integers(10)) / 10 if status is Status.OK else float("inf")
        history.finish(trial, Result(status, loss))
    ranked = sorted((t for t in history.trials() if t.ranks), key=rank_key)
    expected, seen = [], set()
    for stored in ranked:
        if config_key(stored.trial.config) not in seen:
            seen.add(config_key(stored.trial.config))
            expected.append(stored.trial.id)
    for n in (1, 5, 25, 1000):
        assert [t.trial.id for t in history.best(n)] == expected[:n]


def test_the_loop_stores_the_elapsed_time_at_most_every_half_second(monkeypatch):
    """What a resumed run counts as spent is stored with a result when 0.5 s have passed
    since it was last stored, not with every result."""
    from automl_engine import wall_time

    now = [100.0]
    monkeypatch.setattr(wall_time.time, "monotonic", lambda: now[0])
    budget = wall_time.Budget(trials=None, seconds=60)
    recorded = []
    for _ in range(8):
        recorded.append(budget.elapsed_to_record())
        now[0] += 0.25
    stored = [r["elapsed"] for r in recorded if r is not None]
    assert stored == [0.0, 0.5, 1.0, 1.5]
