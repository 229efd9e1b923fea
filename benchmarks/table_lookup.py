"""Search strategies on a table-lookup benchmark suite, through the real run loop.

Each strategy runs ``--trials`` trials on every dataset of the benchmark's split (one run
folder per dataset, SQLite history and all, exactly as ``automl run`` does with
``task: {benchmark: ..., suite: ...}``), for each seed. Prints the wall time of each suite and
the mean normalised regret of the best trial so far after 1, 5, 10, 25, 50, 100... trials
(regret normalised per dataset by the best and worst stored losses; lower is better).

    python benchmarks/table_lookup.py --benchmark pmf --split test --trials 100 --seeds 0
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from automl_core.history import RunHistory
from automl_core.plugins import load_plugins
from automl_core.recipe import parse_recipe
from automl_core.runner import HISTORY_FILE, normalised_regret, run_suite

CHECKPOINTS = (1, 5, 10, 25, 50, 100, 200, 500)


def regret_curve(run_dir: Path, best: float, worst: float, trials: int) -> np.ndarray:
    """Normalised regret of the best loss so far after each trial (padded with the last)."""
    with RunHistory(run_dir / HISTORY_FILE) as history:
        losses = [t.loss for t in history.trials(finished_only=True)]
    running = np.minimum.accumulate(np.asarray(losses, dtype=float))
    regrets = np.array([normalised_regret(loss, best, worst) for loss in running])
    padded = np.full(trials, regrets[-1] if len(regrets) else 1.0)
    padded[: len(regrets)] = regrets[:trials]
    return padded


def one_suite(benchmark: str, split: str, strategy: str, trials: int, seed: int, plugins):
    recipe = parse_recipe(
        {
            "name": f"{benchmark}-{strategy}",
            "task": {"benchmark": benchmark, "suite": split},
            "search": strategy,
            "budget": {"trials": trials},
            "seed": seed,
        }
    )
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        suite = run_suite(recipe, Path(folder) / "suite", plugins=plugins)
        seconds = time.perf_counter() - started
        curves = [
            regret_curve(
                Path(summary.run_dir),
                summary.benchmark["best_possible"],
                summary.benchmark["worst_possible"],
                trials,
            )
            for summary in suite.runs.values()
        ]
    return seconds, len(suite.runs), np.mean(curves, axis=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="pmf")
    parser.add_argument("--split", default="test")
    parser.add_argument("--strategies", nargs="+", default=["random"])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    plugins = load_plugins()
    started = time.perf_counter()
    plugins.create("benchmark", args.benchmark)  # loads (and on first use converts) the data
    print(f"# {args.benchmark}: meta-data loaded in {time.perf_counter() - started:.1f}s")
    print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    points = [c for c in CHECKPOINTS if c <= args.trials]
    header = " | ".join(f"t={c}" for c in points)
    print(f"| strategy | seed | datasets | wall s | {header} |")
    print("|---" * (4 + len(points)) + "|")
    for strategy in args.strategies:
        for seed in args.seeds:
            seconds, n, curve = one_suite(
                args.benchmark, args.split, strategy, args.trials, seed, plugins
            )
            cells = " | ".join(f"{curve[c - 1]:.4f}" for c in points)
            print(f"| {strategy} | {seed} | {n} | {seconds:.1f} | {cells} |")


if __name__ == "__main__":
    main()
