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
from pathlib import Path

import numpy as np
import yaml
from scipy.stats import rankdata

from automl_core.history import RunHistory
from automl_core.plugins import load_plugins
from automl_core.recipe import parse_recipe
from automl_core.runner import HISTORY_FILE, normalised_regret, run

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


def curves_of(spec, params, benchmark_name, benchmark, datasets, trials, seed, plugins, folder):
    """(datasets x trials) regret curves of one strategy and seed, and the wall time."""
    curves = []
    started = time.perf_counter()
    for dataset in datasets:
        run_dir, summary = run_on(
            spec, params, benchmark_name, benchmark, dataset, trials, seed, plugins, folder
        )
        best, worst = summary.benchmark["best_possible"], summary.benchmark["worst_possible"]
        curves.append(regret_curve(run_dir, best, worst, trials))
    return np.vstack(curves), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="pmf")
    parser.add_argument("--split", default="test")
    parser.add_argument("--datasets", type=int, default=0, help="first N datasets (0: all)")
    parser.add_argument("--strategies", nargs="+", default=["random"])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="STRATEGY.NAME=VALUE",
        help="a strategy parameter, e.g. smac3.local_search_max_steps=5 (repeatable)",
    )
    parser.add_argument("--save", type=Path, help="also write the curves to this .npz file")
    parser.add_argument(
        "--merge", type=Path, nargs="+", help="print the tables of saved runs together, run nothing"
    )
    args = parser.parse_args()
    if args.merge:
        merge(args.merge)
        return
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
    curves: dict[str, np.ndarray] = {}  # spec -> (seeds x datasets x trials)
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.strategies:
            per_seed = []
            seconds[spec] = 0.0
            for seed in args.seeds:
                found, took = curves_of(
                    spec,
                    parse_params(args.param),
                    args.benchmark,
                    benchmark,
                    datasets,
                    args.trials,
                    seed,
                    plugins,
                    Path(tmp),
                )
                per_seed.append(found)
                seconds[spec] += took
            curves[spec] = np.stack(per_seed)
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


def print_tables(curves: dict[str, np.ndarray], seconds: dict[str, float], points) -> None:
    specs = list(curves)
    stacked = np.stack([curves[s] for s in specs])  # strategies x seeds x datasets x trials
    ranks = rankdata(stacked, axis=0)  # ties share the mean rank
    header = " | ".join(f"t={c}" for c in points)
    for title, values in (("mean normalised regret", stacked), ("mean rank", ranks)):
        print(f"\n{title}\n\n| strategy | wall s | {header} |")
        print("|---" * (2 + len(points)) + "|")
        for i, spec in enumerate(specs):
            cells = " | ".join(f"{values[i, :, :, c - 1].mean():.4f}" for c in points)
            print(f"| {spec} | {seconds[spec]:.1f} | {cells} |")


if __name__ == "__main__":
    main()
