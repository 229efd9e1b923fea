"""DeepPipe on table lookups, the paper's protocol: 5 initial pipelines (the meta-data's
``init_ids``) then 95 steps of each search, against random search, smbo:rf (SMAC-like) and
smbo:gp in the same run, on the same datasets and seeds.

Each method is a real run (``automl run`` with ``task: {benchmark: ..., dataset: ...}``,
``warmstart: initial-ids``), written ``NAME[:SURROGATE][@STARTER][+PARAM=VALUE...]``, e.g.
``smbo:deeppipe`` (non-transfer), ``smbo:deeppipe+metadata=pmf`` (meta-trained on PMF's
training split, the checkpoint cached), ``mcts:deeppipe+metadata=pmf``, ``smbo:gp@portfolio``
(the first 5 members of Auto-sklearn 2.0's portfolio built on the meta-data's training split
instead of the ``init_ids``; ``@knd`` likewise, on meta-data with meta-features). Prints, after 10,
25, 50 and 100 trials, the mean normalised regret and the mean rank, the Friedman test and
Nemenyi's critical difference of the final ranks (``automl compare``'s statistics), and the
seconds per search step:

    python benchmarks/deeppipe_lookup.py --benchmark pmf --split test --datasets 20 \\
        --methods random smbo:rf smbo:gp smbo:deeppipe --seeds 0 1 2 --save exp1.json

Runs already in ``--save`` are skipped, so a stopped grid resumes (a run that fails, e.g.
knd on a dataset without meta-features, is recorded with its error); the grid runs dataset by
dataset, and the tables cover the (dataset, seed) tasks that every method has finished
(``--report`` prints them without running anything). ``--train-split`` names the splits the
portfolio and knd warm starts learn from (Tensor-OBOE: folds).
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml
from automl_bench.compare import critical_difference, friedman
from table_lookup import print_tables, regret_curve

from automl_core.plugins import load_plugins
from automl_engine.recipe import parse_recipe
from automl_engine.runner import run

POINTS = (10, 25, 50, 100)
INITIAL = 5


def warmstart_of(method: str, held_out: list[str]) -> dict | str:
    """``smbo:gp@portfolio`` -> a portfolio (or knd) warm start of :data:`INITIAL`
    configurations learned without the ``held_out`` datasets (the test and validation
    splits); otherwise the meta-data's ``init_ids``."""
    starter = method.split("+")[0].partition("@")[2]
    if not starter:
        return "initial-ids"
    params: dict = {"exclude": held_out}
    if starter == "portfolio":
        params["size"] = INITIAL
    return {"starter": starter, "params": params, "configs": INITIAL}


def search_of(method: str) -> dict:
    """``smbo:deeppipe+metadata=pmf+fine_tune=all`` -> the recipe's search section."""
    head, *pairs = method.split("+")
    strategy, _, surrogate = head.partition("@")[0].partition(":")
    params = {k: yaml.safe_load(v) for k, _, v in (p.partition("=") for p in pairs)}
    section: dict = {"strategy": strategy}
    if strategy == "smbo":
        section["params"] = {"initial_design": INITIAL}
    if surrogate:
        section["surrogate"] = {"name": surrogate, "params": params} if params else surrogate
    return section


def one_run(
    method: str,
    benchmark_name: str,
    benchmark,
    dataset: str,
    trials: int,
    seed: int,
    plugins,
    folder: Path,
    held_out: list[str],
) -> dict:
    recipe = parse_recipe(
        {
            "name": "deeppipe-lookup",
            "task": {"benchmark": benchmark_name, "dataset": dataset},
            "search": search_of(method),
            "warmstart": warmstart_of(method, held_out),
            "budget": {"trials": trials},
            "seed": seed,
        }
    )
    run_dir = folder / f"{abs(hash((method, dataset, seed)))}"
    started = time.perf_counter()
    summary = run(recipe, run_dir, plugins=plugins, benchmark=benchmark)
    seconds = time.perf_counter() - started
    best, worst = summary.benchmark["best_possible"], summary.benchmark["worst_possible"]
    curve = regret_curve(run_dir, best, worst, trials)
    return {"curve": curve.tolist(), "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="pmf")
    parser.add_argument("--split", default="test")
    parser.add_argument("--datasets", type=int, default=0, help="first N (0: all)")
    parser.add_argument(
        "--start", type=int, default=0, help="skip the split's first K datasets (a second shard)"
    )
    parser.add_argument(
        "--methods", nargs="+", default=["random", "smbo:rf", "smbo:gp", "smbo:deeppipe"]
    )
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--train-split",
        nargs="+",
        default=["train"],
        help="the splits the warm starts learn from (portfolio, knd; DeepPipe names its own)",
    )
    parser.add_argument("--save", type=Path, required=True, help="results (JSON), resumed from")
    parser.add_argument(
        "--report", action="store_true", help="print the tables of --save, run nothing"
    )
    args = parser.parse_args()
    plugins = load_plugins()
    benchmark = plugins.create("benchmark", args.benchmark)
    datasets = benchmark.datasets(args.split)
    datasets = datasets[args.start :]
    datasets = datasets[: args.datasets] if args.datasets else datasets
    training = {d for split in args.train_split for d in benchmark.datasets(split)}
    held_out = sorted(set(benchmark.datasets("all")) - training)
    done = json.loads(args.save.read_text()) if args.save.exists() else {}
    print(
        f"# {args.benchmark}/{args.split}: {len(datasets)} datasets, {args.trials} trials, "
        f"seeds {args.seeds}"
    )
    print(f"# {platform.machine()}, Python {platform.python_version()}")
    # dataset by dataset, so that a grid stopped early has every method on the same tasks
    with tempfile.TemporaryDirectory() as tmp:
        for dataset in [] if args.report else datasets:
            for seed in args.seeds:
                for method in args.methods:
                    key = f"{method}|{dataset}|{seed}"
                    if key in done:
                        continue
                    try:
                        done[key] = one_run(
                            method,
                            args.benchmark,
                            benchmark,
                            dataset,
                            args.trials,
                            seed,
                            plugins,
                            Path(tmp),
                            held_out,
                        )
                    except Exception as error:  # e.g. knd on a dataset without meta-features
                        print(f"# {key}: {type(error).__name__}: {error}", flush=True)
                        done[key] = {"error": f"{type(error).__name__}: {error}"}
                    args.save.write_text(json.dumps(done))
    report(done, args.methods, datasets, args.seeds, args.trials)


def report(
    done: dict, methods: list[str], datasets: list[str], seeds: list[int], trials: int
) -> None:
    """The tables over the (seed, dataset) tasks every method has finished (a run that
    failed is recorded with its error and leaves its task out)."""
    tasks = [
        (d, s)
        for d in datasets
        for s in seeds
        if all("curve" in done.get(f"{m}|{d}|{s}", {}) for m in methods)
    ]
    print(f"\n{len(tasks)} (dataset, seed) tasks finished by every method")
    curves = np.array(
        [[done[f"{m}|{d}|{s}"]["curve"] for d, s in tasks] for m in methods]
    )  # methods x tasks x trials
    per_step = {
        m: np.mean([done[f"{m}|{d}|{s}"]["seconds"] for d, s in tasks]) / max(trials - INITIAL, 1)
        for m in methods
    }
    points = [p for p in POINTS if p <= trials]
    print_tables(
        dict(zip(methods, curves[:, None], strict=True)), per_step, points, "s per step", 3
    )
    final = curves[:, :, -1].T  # tasks x methods
    test = friedman(final)
    if len(methods) >= 2:
        cd = critical_difference(len(methods), len(final))
        where = (
            ""
            if test is None
            else f"; Friedman p = {test.p_value:.3g}, Iman-Davenport p = {test.f_p_value:.3g}"
        )
        print(
            f"\nfinal ranks over {len(final)} (seed, dataset) tasks: Nemenyi CD = {cd:.3f}{where}"
        )


if __name__ == "__main__":
    main()
