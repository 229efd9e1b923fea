"""The initial design's size under a time budget: cut at a quarter of the trials the run is
expected to hold, estimated from the rate of the strategy's own results. The clock is
simulated, so nothing here depends on how fast the machine is."""

from __future__ import annotations

import numpy as np
from spaces import ColumnSurrogate, context, pipeline_space

from automl_core.contracts import WarmStart
from automl_core.trial import Result, Status, Trial
from automl_engine.proposals import start
from automl_mcts.strategy import MCTS

DESIGN = ("default", "initial")


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _mcts(clock: Clock, kappa: int = 10, seed: int = 0, **more) -> MCTS:
    """MCTS on the hand-built space: 3 algorithms, so (1 + kappa) x 3 design pipelines."""
    strategy = MCTS(kappa=kappa)
    strategy.clock = clock
    surrogate = ColumnSurrogate(2, {0: 0.3, 1: 0.25, 2: 0.2})
    strategy.setup(context(pipeline_space(), surrogate, seed, **more))
    return strategy


def _run(strategy: MCTS, clock: Clock, n: int, seconds: float = 1.0, first_id: int = 0, ask=None):
    """Ask (``strategy.ask``, or ``ask``: the loop's proposals), let the trial take
    ``seconds`` on the clock, tell; ``n`` times."""
    asked = []
    for trial_id in range(first_id, first_id + n):
        candidate = (ask or strategy.ask)()
        assert candidate is not None
        trial = Trial(trial_id, dict(candidate.config), origin=candidate.origin)
        clock.now += seconds
        strategy.tell(trial, Result(Status.OK, 0.3))
        asked.append(trial)
    return asked


def _design_count(trials) -> int:
    origins = [t.origin for t in trials]
    served = sum(o in DESIGN for o in origins)
    assert all(o in DESIGN for o in origins[:served]), "the design comes before the tree"
    assert all(o.startswith("mcts-depth") for o in origins[served:])
    return served


def test_a_time_budget_cuts_the_design_at_a_quarter_of_the_expected_trials():
    clock = Clock()
    strategy = _mcts(clock, time_budget=60.0)
    assert len(strategy.queue) == 33  # the full design is queued; the cut comes while serving
    trials = _run(strategy, clock, 25)  # each trial takes 1 s: 60 trials expected
    assert _design_count(trials) == 15  # 0.25 x 60
    assert strategy.queue == [] and strategy.observed == 25


def test_without_a_time_budget_the_whole_design_runs_whatever_the_clock():
    clock = Clock()
    strategy = _mcts(clock)
    design_size = len(strategy.queue)
    assert design_size == 33  # (1 + kappa) x 3 algorithms
    # knn has no hyper-parameters: some of its random pipelines repeat and are skipped
    distinct = {strategy.context.space.key(c.config) for c in strategy.queue}
    assert len(distinct) < design_size
    # 30 simulated seconds a trial (no wall clock is read): without a time budget the slow
    # trials cut nothing, every distinct design pipeline is served
    served = _design_count(_run(strategy, clock, 40, seconds=30.0))
    assert served == len(distinct)


def test_a_trial_budget_alone_cuts_at_set_up_and_ignores_the_clock():
    runs = []
    for seconds in (0.01, 100.0):
        clock = Clock()
        strategy = _mcts(clock, trial_budget=20)
        assert len(strategy.queue) == 5  # a quarter of the trial budget, as before
        runs.append(_run(strategy, clock, 12, seconds=seconds))
    assert _design_count(runs[0]) == 5
    assert [t.config for t in runs[0]] == [t.config for t in runs[1]]


def test_with_both_budgets_the_smaller_estimate_wins():
    clock = Clock()
    by_time = _mcts(clock, time_budget=60.0, trial_budget=200)
    assert _design_count(_run(by_time, clock, 20)) == 15
    clock = Clock()
    by_trials = _mcts(clock, time_budget=600.0, trial_budget=20)
    assert _design_count(_run(by_trials, clock, 10)) == 5


def test_an_explicit_initial_design_is_kept():
    clock = Clock()
    strategy = MCTS(kappa=10, initial_design=30)
    strategy.clock = clock
    strategy.setup(context(pipeline_space(), ColumnSurrogate(2, {}), 0, time_budget=60.0))
    distinct = {strategy.context.space.key(c.config) for c in strategy.queue}
    assert _design_count(_run(strategy, clock, 35)) == len(distinct) > 15


def test_slow_trials_still_leave_two_design_pipelines():
    clock = Clock()
    strategy = _mcts(clock, time_budget=60.0)
    # 10 s a trial: 6 trials expected, a quarter of which is below the floor of 2
    assert _design_count(_run(strategy, clock, 5, seconds=10.0)) == 2


def test_no_cut_on_too_few_results_until_a_quarter_of_the_time_has_passed():
    clock = Clock()
    strategy = _mcts(clock, time_budget=60.0)
    clock.now += 10.0  # no result yet, 10 s < 15 s: keep serving the design
    batch = [strategy.ask() for _ in range(8)]
    assert [c.origin for c in batch].count("default") == 2
    assert all(c.origin in DESIGN for c in batch)
    clock.now += 6.0  # 16 s gone, still no result: the rate says 0 trials; the floor is 2
    assert strategy.ask().origin.startswith("mcts-depth")


def test_the_warm_start_the_loop_serves_is_never_cut_and_counts_toward_the_rate():
    clock = Clock()
    space = pipeline_space()
    warm = space.sample(np.random.default_rng(7), 12)
    strategy = MCTS(kappa=10)
    strategy.clock = clock
    surrogate = ColumnSurrogate(2, {0: 0.3, 1: 0.25, 2: 0.2})
    proposals = start(
        strategy, context(space, surrogate, time_budget=8.0, warm_start=WarmStart(warm))
    )
    # 1 s a trial: the 12 warm-start trials outlast the 8 s budget, so the run is expected
    # to hold the 12 already finished, and the design gets a quarter of them
    trials = _run(strategy, clock, 16, ask=proposals.ask)
    origins = [t.origin for t in trials]
    assert origins[:12] == ["warmstart"] * 12
    assert _design_count(trials[12:]) == 3
    assert strategy.design_issued == 3


def test_results_replayed_on_resume_do_not_count_toward_the_rate():
    clock = Clock()
    first = _mcts(clock, kappa=20)  # 63 design pipelines, no time budget: no cut
    interrupted = _run(first, clock, 30, seconds=0.5)
    clock = Clock()
    resumed = _mcts(clock, kappa=20, time_budget=60.0)
    for trial in interrupted:  # replayed at set-up: no time passes
        resumed.tell(trial, Result(Status.OK, 0.3))
    assert resumed.observed == 0
    trials = _run(resumed, clock, 25, first_id=30)
    # counted, 34 results in 4 s would promise 510 trials and keep the whole design going
    assert _design_count(trials) == 15
    done = {resumed.context.space.key(t.config) for t in interrupted}
    assert not any(resumed.context.space.key(t.config) in done for t in trials)
