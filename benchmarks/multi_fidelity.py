"""Multi-fidelity search on learning curves: regret against the total budget spent.

Each strategy runs ``--trials`` trials on each of the first ``--datasets`` datasets of a
benchmark with learning curves (LCDB: the budget is the training-set size), through the real
run loop (``automl run`` with ``task: {benchmark: lcdb, dataset: ...}``), for each seed.

The budget spent by a trial is its training size as a fraction of the largest (a trial at
full budget costs 1; random search, SMBO and evolution always pay 1). After each trial the
*incumbent* is the configuration the run would return: the best trial at the largest budget
evaluated so far (as ``RunHistory.best``). Its regret is that of its **full-budget** stored
loss, normalised per dataset, ``(loss - best) / (worst - best)``, so a configuration that only
looked good on a small subsample is not credited for it. Prints the mean regret (over
datasets and seeds) once 1, 2, 3, 5, 10, 20 full evaluations' worth of budget are spent, and
the mean rank of each strategy at the same points.

    python benchmarks/multi_fidelity.py --datasets 40 --seeds 0 1 2 \\
        --strategies random hyperband hyperband:rf successive_halving asha evolution smbo:rf
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy.stats import rankdata
from table_lookup import add_grid_arguments, run_grid

from automl_core.contracts import Benchmark
from automl_core.space import config_key
from automl_core.trial import Trial
from automl_engine.history import RunHistory
from automl_engine.metrics import normalised_regret
from automl_engine.run_folder import HISTORY_FILE, RunSummary

#: Budget spent, in full evaluations, at which the regret is reported.
SPENT = (1, 2, 3, 5, 10, 20)


def incumbent_curve(run_dir: Path, full_loss, max_budget: float) -> tuple[np.ndarray, np.ndarray]:
    """(cumulative budget spent, full-budget loss of the incumbent) after each trial."""
    with RunHistory(run_dir / HISTORY_FILE) as history:
        trials = history.trials(finished_only=True)
    spent, losses = [], []
    total, top_budget, incumbent = 0.0, -np.inf, (np.inf, None)
    for stored in trials:
        budget = max_budget if stored.trial.budget is None else stored.trial.budget
        total += budget / max_budget
        if np.isfinite(stored.loss):
            if budget > top_budget:  # a larger budget: its trials outrank every smaller one
                top_budget, incumbent = budget, (stored.loss, stored.trial.config)
            elif budget == top_budget and stored.loss < incumbent[0]:
                incumbent = (stored.loss, stored.trial.config)
        spent.append(total)
        losses.append(full_loss(incumbent[1]) if incumbent[1] is not None else np.inf)
    return np.array(spent), np.array(losses)


def regret_at(spent: np.ndarray, regrets: np.ndarray, points) -> np.ndarray:
    """The regret once each point's budget was spent (the last trial within it); the run's
    final regret if it ended before spending that much (it ran out of candidates)."""
    values = []
    for point in points:
        within = np.flatnonzero(spent <= point + 1e-9)
        values.append(regrets[within[-1]] if len(within) else 1.0)
    return np.array(values)


def regrets_by_spend(
    run_dir: Path, summary: RunSummary, benchmark: Benchmark, dataset: str, seed: int
) -> np.ndarray:
    """The run's incumbent regret (full-budget loss) at each point of ``SPENT``."""
    best, worst = summary.benchmark["best_possible"], summary.benchmark["worst_possible"]
    evaluator = benchmark.evaluator(dataset, seed)
    cache: dict[str, float] = {}

    def full_loss(config) -> float:
        key = config_key(config)
        if key not in cache:
            cache[key] = evaluator.evaluate(Trial(0, config)).loss
        return cache[key]

    spent, losses = incumbent_curve(run_dir, full_loss, benchmark.fidelity(dataset).max)
    regrets = np.array([normalised_regret(loss, best, worst) for loss in losses])
    return regret_at(spent, regrets, SPENT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_grid_arguments(
        parser,
        benchmark="lcdb",
        split="all",
        datasets=40,
        strategies=["random", "hyperband"],
        trials=150,  # enough to spend the largest point
    )
    args = parser.parse_args()
    results, seconds = run_grid(args, regrets_by_spend)
    print_tables({spec: r.reshape(-1, len(SPENT)) for spec, r in results.items()}, seconds)


def print_tables(results: dict[str, np.ndarray], seconds: dict[str, float]) -> None:
    header = " | ".join(f"{point:g}" for point in SPENT)
    print("\nMean normalised regret of the incumbent (full-budget loss) after spending N full")
    print("evaluations' worth of budget:\n")
    print(f"| strategy | {header} | wall time |")
    print("|---|" + "---:|" * (len(SPENT) + 1))
    for spec, regrets in results.items():
        cells = " | ".join(f"{value:.4f}" for value in regrets.mean(axis=0))
        print(f"| {spec} | {cells} | {seconds[spec]:.0f}s |")
    specs = list(results)
    stacked = np.stack([results[s] for s in specs])  # strategies x runs x points
    ranks = np.apply_along_axis(rankdata, 0, stacked)
    print("\nMean rank (1 = best, ties share):\n")
    print(f"| strategy | {header} |")
    print("|---|" + "---:|" * len(SPENT))
    for index, spec in enumerate(specs):
        cells = " | ".join(f"{value:.2f}" for value in ranks[index].mean(axis=0))
        print(f"| {spec} | {cells} |")


if __name__ == "__main__":
    main()
