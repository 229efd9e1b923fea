"""SMBO with and without each warm start, on real KEEL datasets with a short budget.

Each (dataset, variant, seed) is a real ``automl run`` in the ``autosklearn-classification``
space: SMBO with the random-forest surrogate, ``--trials`` trials, holdout validation (a
third of the training rows) and a held-back, stratified test quarter. A warm start supplies
the first ``--warm-configs`` trials (default: half of them), SMBO the rest. The variants:

* ``smbo``: no warm start (SMBO's own random initial design);
* ``smbo+knd``: auto-sklearn 1.0's k-nearest-datasets warm start: our hand-crafted
  meta-features (auto-sklearn's 37) of the training split, auto-sklearn 0.15.0's meta-data
  (best configuration per dataset), the dataset's own OpenML entry left out;
* ``smbo+portfolio``: Auto-sklearn 2.0's greedy portfolio (32) built on Oboe's 418 datasets,
  its configurations translated into our space (``oboe-autosklearn``), the dataset's own
  OpenML ids (found by name in LCDB's id-name table) left out.

Printed: the mean normalised regret of the best validation loss after 1, 5, 10 and all
trials (per dataset, 0 = the best validation loss any variant reached there, 1 = the worst
first trial), the mean test score and rank, and wins / ties / losses with Wilcoxon p.
Results are appended to ``--save`` (JSON lines) as they come; run again to continue.

    python benchmarks/keel_warmstart.py --seeds 0 --trials 20 --save keel-warmstart.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from automl_bench.compare import mean_ranks, pairwise
from keel_strategies import DATASETS, METRIC, _read, keel_task, p_text, tied_losses

from automl_core.plugins import load_plugins
from automl_engine.history import RunHistory
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run

WARM_STARTS = {
    "smbo": {},
    "smbo+knd": {"metafeatures": "handcrafted", "warmstart": {"starter": "knd"}},
    "smbo+portfolio": {
        "warmstart": {"starter": "portfolio", "params": {"metadata": "oboe-autosklearn"}}
    },
}
CHECKPOINTS = (1, 5, 10)
#: OpenML ids of twins LCDB's table does not name (OpenML's dataset pages).
KNOWN_IDS = {"diabetes": ("37",), "wdbc": ("1510",), "tic-tac-toe": ("50",)}


def openml_ids(dataset: str) -> list[str]:
    """The OpenML ids of a KEEL dataset's twin, by name through LCDB's id-name table (Oboe's
    meta-data knows its datasets by id only): left out of the portfolio's meta-data."""
    from automl_engine.builtins.sources import KEEL_OPENML_NAMES
    from automl_engine.metastore import resolve_metadata

    name = KEEL_OPENML_NAMES.get(dataset, dataset)
    names = resolve_metadata("lcdb", None, load_plugins()).info["names"]
    found = [openml_id for openml_id, other in names.items() if other.lower() == name]
    return sorted(set(found) | set(KNOWN_IDS.get(name, ())))


def recipe_for(dataset: str, variant: str, seed: int, args: argparse.Namespace) -> dict:
    warm = dict(WARM_STARTS[variant])
    if "warmstart" in warm:
        start = {**warm["warmstart"], "configs": args.warm_configs or args.trials // 2}
        if variant == "smbo+portfolio":
            start["params"] = {**start["params"], "exclude": openml_ids(dataset)}
        warm["warmstart"] = start
    return {
        "name": f"{variant}-{dataset}",
        "task": keel_task(dataset),
        "space": "autosklearn-classification",
        "search": {"strategy": "smbo", "surrogate": "rf"},
        "executor": {"name": "processes", "params": {"workers": args.workers}},
        "budget": {"trials": args.trials, "trial_time": args.trial_time},
        "seed": seed,
        **warm,
    }


def measure(dataset: str, variant: str, seed: int, args: argparse.Namespace, plugins, folder):
    run_dir = folder / f"{dataset}-{variant}-{seed}"
    started = time.perf_counter()
    summary = run(parse_recipe(recipe_for(dataset, variant, seed, args)), run_dir, plugins=plugins)
    with RunHistory(run_dir / HISTORY_FILE) as history:
        trials = history.trials(finished_only=True)
    losses = [t.loss if t.loss is not None else np.inf for t in trials]
    return {
        "dataset": dataset,
        "variant": variant,
        "seed": seed,
        "losses": [float(x) if np.isfinite(x) else None for x in losses],
        "warm": sum(t.trial.origin == "warmstart" for t in trials),
        "test": (summary.test_scores or {}).get(METRIC),
        "seconds": time.perf_counter() - started,
    }


def run_all(args: argparse.Namespace) -> list[dict]:
    done = _read(args.save) if args.save and args.save.exists() else []
    finished = {(r["dataset"], r["variant"], r["seed"]) for r in done}
    plugins = load_plugins()
    with tempfile.TemporaryDirectory() as tmp:
        for dataset, seed, variant in itertools.product(args.datasets, args.seeds, args.variants):
            if (dataset, variant, seed) in finished:
                continue
            row = measure(dataset, variant, seed, args, plugins, Path(tmp))
            print(json.dumps({k: v for k, v in row.items() if k != "losses"}), flush=True)
            done.append(row)
            if args.save:
                with args.save.open("a") as out:
                    out.write(json.dumps(row) + "\n")
    return done


def best_after(losses: list[float | None], n: int) -> float:
    seen = [x for x in losses[:n] if x is not None]
    return min(seen) if seen else np.inf


def print_tables(rows: list[dict], trials: int) -> None:
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    # Only datasets every variant has finished on, so that every mean is over the same ones.
    datasets = [
        d
        for d in dict.fromkeys(r["dataset"] for r in rows)
        if {r["variant"] for r in rows if r["dataset"] == d} == set(variants)
    ]
    rows = [r for r in rows if r["dataset"] in datasets]
    checkpoints = (*CHECKPOINTS, trials)
    regret = {v: {c: [] for c in checkpoints} for v in variants}
    for dataset in datasets:
        mine = [r for r in rows if r["dataset"] == dataset]
        values = [x for r in mine for x in r["losses"] if x is not None]
        best, worst = min(values), max(x for r in mine for x in r["losses"][:1] if x is not None)
        span = worst - best if worst > best else 1.0
        for v, c in itertools.product(variants, checkpoints):
            per_seed = [best_after(r["losses"], c) for r in mine if r["variant"] == v]
            regret[v][c].append(np.mean([min(1.0, (x - best) / span) for x in per_seed]))
    tests = np.array([[np.mean([r["test"] for r in rows if r["dataset"] == d and r["variant"] == v
                                and r["test"] is not None] or [np.nan])
                       for v in variants] for d in datasets])  # fmt: skip
    losses = tied_losses(tests)
    ranks = mean_ranks(losses)
    seeds = sorted({r["seed"] for r in rows})
    print(f"\n{len(datasets)} KEEL datasets x {len(seeds)} seed(s), {trials} trials, SMBO + RF\n")
    head = " | ".join(f"after {c}" for c in checkpoints)
    print(f"| variant | warm-start trials | regret {head} | test {METRIC} | rank | s per run |")
    print("|---|---:|" + "---:|" * len(checkpoints) + "---:|---:|---:|")
    for i, v in enumerate(variants):
        mine = [r for r in rows if r["variant"] == v]
        cells = " | ".join(f"{np.mean(regret[v][c]):.3f}" for c in checkpoints)
        print(f"| {v} | {np.mean([r['warm'] for r in mine]):.1f} | {cells} | "
              f"{np.nanmean(tests[:, i]):.4f} | {ranks[i]:.2f} | "
              f"{np.mean([r['seconds'] for r in mine]):.1f} |")  # fmt: skip
    print("\nper dataset: test score (mean over seeds)\n")
    print("| dataset | " + " | ".join(variants) + " |\n|---" * 1 + "|---" * len(variants) + "|")
    for d, dataset in enumerate(datasets):
        print(f"| {dataset} | " + " | ".join(f"{x:.4f}" for x in tests[d]) + " |")
    print("\n| A | B | W / T / L (test) | Wilcoxon p | Holm p |\n|---|---|---|---|---|")
    for (a, b), duel in zip(
        itertools.combinations(range(len(variants)), 2), pairwise(losses, variants), strict=True
    ):
        print(f"| {variants[a]} | {variants[b]} | {duel.wins} / {duel.ties} / {duel.losses} | "
              f"{p_text(duel.p_value)} | {p_text(duel.p_holm)} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--variants", nargs="+", default=list(WARM_STARTS), choices=WARM_STARTS)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--trial-time", type=float, default=30)
    parser.add_argument(
        "--warm-configs", type=int, help="warm-start configurations (default: half the trials)"
    )
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--save", type=Path)
    parser.add_argument("--merge", type=Path, help="print the tables of a saved file only")
    args = parser.parse_args()
    rows = _read(args.merge) if args.merge else run_all(args)
    print_tables(rows, args.trials)


if __name__ == "__main__":
    main()
