"""Search strategies on a table-lookup benchmark, through the real run loop.

Each strategy runs ``--trials`` trials on each of the first ``--datasets`` datasets of the
benchmark's split (one run folder per dataset, SQLite history and all, exactly as
``automl run`` with ``task: {benchmark: ..., dataset: ...}``), for each seed. A strategy is
written ``NAME`` or ``NAME:SURROGATE`` (``random``, ``smbo:rf``, ``smbo:gp``, ``smac3``,
``optuna-tpe``). Prints, after 1, 5, 10, 25, 50, 100... trials:

- the mean normalised regret of the best trial so far, ``(best found - best stored) /
  (worst stored - best stored)`` per dataset, averaged over datasets and seeds;
- the mean rank of each strategy (1 = best; ties share the mean rank) per (dataset, seed);
- the wall time of each strategy's runs.

    python benchmarks/table_lookup.py --benchmark pmf --split test --trials 100 --seeds 0
    python benchmarks/table_lookup.py --benchmark tensor-oboe --split fold0 --datasets 30 \\
        --strategies random smbo:rf smbo:gp smac3 optuna-tpe --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import yaml
from scipy.stats import rankdata

from automl_core.contracts import Benchmark
from automl_core.plugins import load_plugins
from automl_engine.history import RunHistory
from automl_engine.metrics import normalised_regret
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE, RunSummary
from automl_engine.runner import run

CHECKPOINTS = (1, 5, 10, 25, 50, 100, 200, 500)


def search_section(spec: str, params: dict[str, dict]) -> dict:
    """``smbo:rf`` -> ``{strategy: smbo, surrogate: rf}``, with the strategy's ``--param``s."""
    strategy, _, surrogate = spec.partition(":")
    section = {"strategy": strategy, "params": params.get(strategy, {})}
    return {**section, **({"surrogate": surrogate} if surrogate else {})}


def parse_params(pairs: list[str]) -> dict[str, dict]:
    """``["smac3.challengers=2000"]`` -> ``{"smac3": {"challengers": 2000}}``."""
    params: dict[str, dict] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        strategy, _, name = key.partition(".")
        params.setdefault(strategy, {})[name] = yaml.safe_load(value)
    return params


def regret_curve(run_dir: Path, best: float, worst: float, trials: int) -> np.ndarray:
    """Normalised regret of the best loss so far after each trial (padded with the last)."""
    with RunHistory(run_dir / HISTORY_FILE) as history:
        losses = [t.loss for t in history.trials(finished_only=True)]
    running = np.minimum.accumulate(np.asarray(losses, dtype=float))
    regrets = np.array([normalised_regret(loss, best, worst) for loss in running])
    padded = np.full(trials, regrets[-1] if len(regrets) else np.inf)
    padded[: len(regrets)] = regrets[:trials]
    return padded


def run_on(spec, params, benchmark_name, benchmark, dataset, trials, seed, plugins, folder):
    """One run of strategy ``spec`` on one dataset of the benchmark: its folder and summary."""
    recipe = parse_recipe(
        {
            "name": spec.replace(":", "-"),
            "task": {"benchmark": benchmark_name, "dataset": dataset},
            "search": search_section(spec, params),
            "budget": {"trials": trials},
            "seed": seed,
        }
    )
    run_dir = folder / f"{spec.replace(':', '-')}-{seed}-{dataset}"
    return run_dir, run(recipe, run_dir, plugins=plugins, benchmark=benchmark)


#: What a benchmark script measures on one finished run: (run folder, its summary, the
#: benchmark, dataset, seed) -> a row of numbers.
Measure = Callable[[Path, RunSummary, Benchmark, str, int], np.ndarray]


def run_grid(args: argparse.Namespace, measure: Measure) -> tuple[dict, dict]:
    """Every strategy of ``args.strategies`` on every dataset and seed, each a real run in a
    temporary folder, measured by ``measure``. Returns, per strategy, the measures stacked
    (seeds x datasets x ...) and the wall time of its runs."""
    plugins = load_plugins()
    started = time.perf_counter()
    benchmark = plugins.create("benchmark", args.benchmark)
    datasets = benchmark.datasets(args.split)
    datasets = datasets[: args.datasets] if args.datasets else datasets
    print(
        f"# {args.benchmark}/{args.split}: {len(datasets)} datasets, {args.trials} trials, "
        f"seeds {args.seeds}; meta-data loaded in {time.perf_counter() - started:.1f}s"
    )
    print(f"# {platform.machine()}, Python {platform.python_version()}; params {args.param}")
    params = parse_params(args.param)
    results: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.strategies:
            started = time.perf_counter()
            results[spec] = np.stack(
                [
                    np.stack(
                        [
                            measure(
                                *run_on(
                                    spec, params, args.benchmark, benchmark, dataset,
                                    args.trials, seed, plugins, Path(tmp),
                                ),
                                benchmark,
                                dataset,
                                seed,
                            )
                            for dataset in datasets
                        ]
                    )
                    for seed in args.seeds
                ]
            )  # fmt: skip
            seconds[spec] = time.perf_counter() - started
    return results, seconds


def add_grid_arguments(parser: argparse.ArgumentParser, **defaults: object) -> None:
    """The options every grid script takes (benchmark, split, datasets, strategies, trials,
    seeds, strategy parameters), with script-specific ``defaults``."""
    parser.add_argument("--benchmark", default=defaults.get("benchmark", "pmf"))
    parser.add_argument("--split", default=defaults.get("split", "test"))
    parser.add_argument(
        "--datasets", type=int, default=defaults.get("datasets", 0), help="first N (0: all)"
    )
    parser.add_argument("--strategies", nargs="+", default=defaults.get("strategies", ["random"]))
    parser.add_argument("--trials", type=int, default=defaults.get("trials", 100))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="STRATEGY.NAME=VALUE",
        help="a strategy parameter, e.g. smac3.local_search_max_steps=5 (repeatable)",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_grid_arguments(parser)
    parser.add_argument("--save", type=Path, help="also write the curves to this .npz file")
    parser.add_argument(
        "--merge", type=Path, nargs="+", help="print the tables of saved runs together, run nothing"
    )
    args = parser.parse_args()
    if args.merge:
        merge(args.merge)
        return

    def curve(
        run_dir: Path, summary: RunSummary, benchmark: Benchmark, dataset: str, seed: int
    ) -> np.ndarray:
        best, worst = summary.benchmark["best_possible"], summary.benchmark["worst_possible"]
        return regret_curve(run_dir, best, worst, args.trials)

    curves, seconds = run_grid(args, curve)  # spec -> (seeds x datasets x trials)
    points = [c for c in CHECKPOINTS if c <= args.trials]
    print_tables(curves, seconds, points)
    if args.save:
        np.savez(
            args.save,
            **{f"curves/{spec}": value for spec, value in curves.items()},
            **{f"seconds/{spec}": np.array(value) for spec, value in seconds.items()},
        )


def merge(paths: list[Path]) -> None:
    """Tables of runs saved with ``--save`` (same benchmark, datasets, trials and seeds)."""
    curves: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    for path in paths:
        with np.load(path) as saved:
            for key in saved.files:
                kind, spec = key.split("/", 1)
                if kind == "curves":
                    curves[spec] = saved[key]
                else:
                    seconds[spec] = float(saved[key])
    trials = next(iter(curves.values())).shape[-1]
    print_tables(curves, seconds, [c for c in CHECKPOINTS if c <= trials])


def print_tables(
    curves: dict[str, np.ndarray],
    seconds: dict[str, float],
    points,
    time_column: str = "wall s",
    digits: int = 1,
) -> None:
    """Mean normalised regret and mean rank per strategy at each of ``points`` trials, with
    its ``seconds`` (a run's wall time, or what ``time_column`` says)."""
    specs = list(curves)
    stacked = np.stack([curves[s] for s in specs])  # strategies x seeds x datasets x trials
    ranks = rankdata(stacked, axis=0)  # ties share the mean rank
    header = " | ".join(f"t={c}" for c in points)
    for title, values in (("mean normalised regret", stacked), ("mean rank", ranks)):
        print(f"\n{title}\n\n| strategy | {time_column} | {header} |")
        print("|---" * (2 + len(points)) + "|")
        for i, spec in enumerate(specs):
            cells = " | ".join(f"{values[i, :, :, c - 1].mean():.4f}" for c in points)
            print(f"| {spec} | {seconds[spec]:.{digits}f} | {cells} |")


if __name__ == "__main__":
    main()
