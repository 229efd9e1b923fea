"""Search strategies on real KEEL datasets, with and without ensembling: the protocol of the
Mosaic experiments (thesis ch. 4) at a small scale.

Each (dataset, strategy, seed) is a real ``automl run``: holdout validation (a third of the
training rows), a held-back test split (a quarter of the rows, stratified), the
``autosklearn-classification`` space, ``--trials`` trials on ``--workers`` process workers.
The final model's test score is recorded twice from the *same* search: refitting the best
trial alone, then (the run resumed with only its ``ensemble`` section changed, which resume
allows) the Caruana ensemble over the stored validation predictions. Results are appended to
``--save`` (JSON lines) as they come, so an interrupted benchmark keeps what it measured and
is continued by running it again.

Prints, per variant (strategy, with/without ensemble), the mean test score, the mean rank
over datasets (scores averaged over seeds first; 1 = best), and for each pair of variants
the datasets won / tied / lost with a two-sided Wilcoxon signed-rank test over datasets,
plus per dataset a Mann-Whitney U test over seeds, as the thesis's duels do.

    python benchmarks/keel_strategies.py --seeds 0 1 2 --trials 40 --save keel.jsonl
    python benchmarks/keel_strategies.py --merge keel.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
from automl_bench.compare import DEFAULT_TIE, mean_ranks, pairwise
from scipy.stats import mannwhitneyu
from table_lookup import search_section

from automl_core.plugins import load_plugins
from automl_engine.recipe import parse_recipe
from automl_engine.runner import run

DATASETS = ("australian", "german", "pima", "vehicle", "contraceptive", "segment", "splice",
            "phoneme", "wdbc", "tic-tac-toe")  # fmt: skip
METRIC = "balanced_accuracy"


def keel_task(dataset: str) -> dict:
    """The task section of every KEEL benchmark run: holdout validation on a third of the
    training rows, a stratified test quarter held back."""
    return {
        "dataset": f"keel:{dataset}",
        "metric": METRIC,
        "resampling": {"holdout": 0.33},
        "test_size": 0.25,
    }


def tied_losses(scores: np.ndarray) -> np.ndarray:
    """Scores (higher is better) as losses rounded as ``automl compare`` rounds them (its
    default tie), so that ranks and duels are the same statistics as its report's."""
    return np.round(-scores / DEFAULT_TIE) * DEFAULT_TIE


def p_text(value: float | None) -> str:
    """A p-value for a table; "-" where none was computed."""
    return "-" if value is None else f"{value:.3f}"


def recipe_for(dataset: str, spec: str, seed: int, args: argparse.Namespace) -> dict:
    return {
        "name": f"{spec}-{dataset}",
        "task": keel_task(dataset),
        "space": "autosklearn-classification",
        "search": search_section(spec, {}),
        "executor": {"name": "processes", "params": {"workers": args.workers}},
        "budget": {
            "trials": args.trials,
            "trial_time": args.trial_time,
            "wall_time": args.wall_time,
        },
        "seed": seed,
    }


def measure(dataset: str, spec: str, seed: int, args: argparse.Namespace, plugins, folder) -> dict:
    """One search, scored as the best single pipeline and as an ensemble."""
    raw = recipe_for(dataset, spec, seed, args)
    run_dir = folder / f"{dataset}-{spec.replace(':', '-')}-{seed}"
    started = time.perf_counter()
    single = run(parse_recipe(raw), run_dir, plugins=plugins)
    searched = time.perf_counter() - started
    ensemble_recipe = {**raw, "ensemble": {"ensembler": "caruana", "params": {"size": args.size}}}
    ensemble = run(parse_recipe(ensemble_recipe), run_dir, plugins=plugins, resume=True)
    return {
        "dataset": dataset,
        "strategy": spec,
        "seed": seed,
        "trials": single.n_trials,
        "stopped": single.stopped_because,
        "validation_loss": single.best_loss,
        "single": (single.test_scores or {}).get(METRIC),
        "ensemble": (ensemble.test_scores or {}).get(METRIC),
        "ensemble_members": len(ensemble.ensemble),
        "seconds": searched,
    }


def run_all(args: argparse.Namespace) -> list[dict]:
    done = _read(args.save) if args.save and args.save.exists() else []
    finished = {(r["dataset"], r["strategy"], r["seed"]) for r in done}
    plugins = load_plugins()
    with tempfile.TemporaryDirectory() as tmp:
        for dataset, seed, spec in itertools.product(args.datasets, args.seeds, args.strategies):
            if (dataset, spec, seed) in finished:
                continue
            row = measure(dataset, spec, seed, args, plugins, Path(tmp))
            print(json.dumps(row), flush=True)
            done.append(row)
            if args.save:
                with args.save.open("a") as out:
                    out.write(json.dumps(row) + "\n")
    return done


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def print_tables(rows: list[dict]) -> None:
    variants = [(s, kind) for s in dict.fromkeys(r["strategy"] for r in rows)
                for kind in ("single", "ensemble")]  # fmt: skip
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    seeds = sorted({r["seed"] for r in rows})
    scores = np.full((len(variants), len(datasets), len(seeds)), np.nan)
    for r in rows:
        for v, (spec, kind) in enumerate(variants):
            if r["strategy"] == spec and r[kind] is not None:
                scores[v, datasets.index(r["dataset"]), seeds.index(r["seed"])] = r[kind]
    names = [f"{spec} {'+ ensemble' if kind == 'ensemble' else 'best'}" for spec, kind in variants]
    means = np.nanmean(scores, axis=2)  # variants x datasets
    losses = tied_losses(means.T)  # datasets x variants
    ranks = mean_ranks(losses)
    seconds = {s: np.mean([r["seconds"] for r in rows if r["strategy"] == s]) for s, _ in variants}
    per_dataset = [len({r["seed"] for r in rows if r["dataset"] == d}) for d in datasets]
    counts = (
        f"{min(per_dataset)}"
        if min(per_dataset) == max(per_dataset)
        else (f"{min(per_dataset)} to {max(per_dataset)}")
    )
    print(f"\n{len(datasets)} datasets x {counts} seeds; test {METRIC} (higher is better)\n")
    print("| variant | mean test score | mean rank | search s per run |")
    print("|---|---|---|---|")
    for v, name in enumerate(names):
        print(f"| {name} | {np.nanmean(means[v]):.4f} | {ranks[v]:.2f} | "
              f"{seconds[variants[v][0]]:.1f} |")  # fmt: skip
    print("\nper dataset (mean over seeds)\n")
    print("| dataset | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for d, dataset in enumerate(datasets):
        print(
            f"| {dataset} | " + " | ".join(f"{means[v, d]:.4f}" for v in range(len(names))) + " |"
        )
    print("\nduels: wins / ties / losses of A against B over datasets (mean over seeds), "
          "Wilcoxon signed-rank p over datasets and Holm's adjustment of it over the pairs, "
          "and datasets where a Mann-Whitney U test over seeds is significant at 5% "
          "(A better / B better)\n")  # fmt: skip
    print("| A | B | W / T / L | Wilcoxon p | Holm p | MWW sig. A / B |")
    print("|---|---|---|---|---|---|")
    duels = pairwise(losses, names)
    for (a, b), duel in zip(itertools.combinations(range(len(names)), 2), duels, strict=True):
        sig_a = sig_b = 0
        for d in range(len(datasets)):
            x, y = scores[a, d], scores[b, d]
            if len(seeds) > 1 and not np.allclose(x, y):
                if mannwhitneyu(x, y, alternative="greater").pvalue < 0.05:
                    sig_a += 1
                elif mannwhitneyu(x, y, alternative="less").pvalue < 0.05:
                    sig_b += 1
        print(f"| {names[a]} | {names[b]} | {duel.wins} / {duel.ties} / {duel.losses} | "
              f"{p_text(duel.p_value)} | {p_text(duel.p_holm)} | {sig_a} / {sig_b} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--strategies", nargs="+", default=["random", "smbo:rf", "mcts:rf"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--trial-time", type=float, default=30.0)
    parser.add_argument("--wall-time", type=float, default=300.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--size", type=int, default=50, help="ensemble size (Caruana rounds)")
    parser.add_argument("--save", type=Path, help="append results to this JSON-lines file")
    parser.add_argument("--merge", type=Path, nargs="+", help="print saved results, run nothing")
    args = parser.parse_args()
    print(f"# {platform.machine()}, Python {platform.python_version()}; {vars(args)}")
    rows = [r for path in args.merge for r in _read(path)] if args.merge else run_all(args)
    print_tables(rows)


if __name__ == "__main__":
    main()
