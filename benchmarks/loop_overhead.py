"""Per-trial overhead of the run loop: ask + execute + history write + tell.

The objective is trivial (a look-up of a hash of the configuration), so what is measured is the
framework itself: random search's ``ask`` on a real pipeline space, the sequential executor, the
SQLite writes (trial start and finish), and ``tell``, each timed apart; then the run loop
itself (``automl_engine.loop.search``: the same steps plus the budget's bookkeeping, the best
trial's tracking and the observers), end to end.

    python benchmarks/loop_overhead.py [--trials 1000] [--repeats 3]

Prints one table row per space; times are medians over the repeats, in milliseconds per trial.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import zlib
from pathlib import Path
from types import SimpleNamespace

from automl_core.contracts import Evaluator, SearchContext
from automl_core.plugins import load_plugins
from automl_core.random_search import RandomSearch
from automl_core.space import config_key
from automl_core.trial import Result, Status, Trial
from automl_engine.builtins.sequential import SequentialExecutor
from automl_engine.history import RunHistory
from automl_engine.loop import search
from automl_engine.observers import Observers
from automl_engine.proposals import start


class TrivialObjective(Evaluator):
    """A deterministic pseudo-loss from the configuration's text; no model is fitted."""

    def evaluate(self, trial: Trial) -> Result:
        loss = zlib.crc32(config_key(trial.config).encode()) / 2**32
        return Result(Status.OK, loss, metrics={"score": 1 - loss})


class Timed:
    """Wraps a callable and accumulates its wall time."""

    def __init__(self, function):
        self.function = function
        self.seconds = 0.0

    def __call__(self, *args):
        start = time.perf_counter()
        try:
            return self.function(*args)
        finally:
            self.seconds += time.perf_counter() - start


def one_run(space, trials: int, seed: int) -> dict[str, float]:
    """The same steps as automl_engine.loop.search, timed part by part."""
    strategy = RandomSearch()
    strategy.setup(SearchContext(space=space, seed=seed))
    executor, evaluator = SequentialExecutor(), TrivialObjective()
    with tempfile.TemporaryDirectory() as folder:
        history = RunHistory(Path(folder) / "history.sqlite")
        ask, tell = Timed(strategy.ask), Timed(strategy.tell)
        start_write, finish_write = Timed(history.start), Timed(history.finish)
        submit = Timed(executor.submit)
        begin = time.perf_counter()
        for trial_id in range(trials):
            trial = Trial.from_candidate(trial_id, ask())
            start_write(trial)
            result = submit(evaluator, trial).result()
            finish_write(trial, result)
            tell(trial, result.without_predictions())
        total = time.perf_counter() - begin
        assert history.count() == trials
        history.close()
    per_trial = 1000 / trials
    return {
        "ask": ask.seconds * per_trial,
        "execute": submit.seconds * per_trial,
        "history": (start_write.seconds + finish_write.seconds) * per_trial,
        "tell": tell.seconds * per_trial,
        "total": total * per_trial,
    }


class NoFinishing:
    """The task side of the run loop, as little as it can be: the trivial objective, and
    nothing to keep back for after the search."""

    evaluator = TrivialObjective()

    def time_to_finish(self, *args) -> float:
        return 0.0

    def trial_stored(self, history) -> None:
        """Nothing to record after a trial (a data task notes its learning curves here)."""


def one_loop(space, trials: int, seed: int, plugins) -> float:
    """Milliseconds per trial of ``automl_engine.loop.search`` with random search."""
    strategy = RandomSearch()
    setup = SimpleNamespace(
        recipe=SimpleNamespace(budget=SimpleNamespace(trials=trials, wall_time=None)),
        task=NoFinishing(),
        strategy=strategy,
        proposals=start(strategy, SearchContext(space=space, seed=seed)),
        executor=SequentialExecutor(),
        space=space,
    )
    with tempfile.TemporaryDirectory() as folder:
        history = RunHistory(Path(folder) / "history.sqlite")
        begin = time.perf_counter()
        search(setup, history, Observers(plugins), info=None)
        total = time.perf_counter() - begin
        assert history.count() == trials
        history.close()
    return total * 1000 / trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    plugins = load_plugins()
    spaces = {}
    for name in ("autosklearn-classification",):
        try:
            spaces[name] = plugins.create("space", name)
        except Exception as error:  # the sklearn plugin may not be installed
            print(f"(skipping {name}: {error})")
    print(f"{args.trials} trials, median of {args.repeats} runs, ms per trial")
    print(
        "| space | hyper-parameters | ask | execute | history write | tell | total "
        "| run loop (loop.search) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, space in spaces.items():
        runs = [one_run(space, args.trials, seed) for seed in range(args.repeats)]
        median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        loop = statistics.median(
            one_loop(space, args.trials, seed, plugins) for seed in range(args.repeats)
        )
        print(
            f"| {name} | {len(space.configspace)} | {median['ask']:.3f} | {median['execute']:.3f} "
            f"| {median['history']:.3f} | {median['tell']:.3f} | {median['total']:.3f} "
            f"| {loop:.3f} |"
        )


if __name__ == "__main__":
    main()
