"""How well the ``auto-sklearn-2`` policy selector chooses, on the simulated LCDB runs.

5-fold cross-validation over LCDB's datasets, as Auto-sklearn 2.0 evaluates its selector
(portfolio-free here: the candidates are LCDB's 20 learners in single-best order): the
selector is fitted on 4/5 of the datasets and chooses a policy for each held-out one. Printed
per time budget: the mean test error and the mean normalised loss (per dataset, 0 = the best
policy there, 1 = the worst) of the selector, the single best policy of the training folds,
a random policy (the mean over policies), the oracle, and each fixed policy.

    python benchmarks/policy_selector.py --budgets 30 300 3600

The first call per budget simulates (about 10 s on an idle core); later calls read the cache.
The cross-validation's pairwise forests take most of the time either way: 154 s for the three
budgets above with the simulations cached, on 2 shared cores.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from automl_engine.metrics import normalised_regret
from automl_policy.auto_sklearn_2 import simulated_losses
from automl_policy.lcdb_runs import load_runs
from automl_policy.selector import PairwiseSelector
from automl_policy.simulate import FALLBACK, POLICIES


def cross_validate(features: np.ndarray, losses: np.ndarray, folds: int, seed: int) -> dict:
    names = [p.name for p in POLICIES]
    normalised = np.array([normalised_regret(row, row.min(), row.max()) for row in losses])
    assignment = np.random.default_rng(seed).permutation(len(features)) % folds
    chosen = np.empty(len(features), dtype=int)
    single = np.empty(len(features), dtype=int)
    fallbacks = 0
    for fold in range(folds):
        train, held_out = assignment != fold, assignment == fold
        selector = PairwiseSelector(names, FALLBACK, seed=seed).fit(features[train], losses[train])
        best_on_train = int(np.argmin(normalised[train].mean(0)))
        for i in np.flatnonzero(held_out):
            chosen[i] = names.index(selector.select(features[i]))
            fallbacks += not selector.covered(features[i])
            single[i] = best_on_train
    rows = np.arange(len(features))
    return {
        "selector": (losses[rows, chosen].mean(), normalised[rows, chosen].mean()),
        "single best": (losses[rows, single].mean(), normalised[rows, single].mean()),
        "random policy": (losses.mean(), normalised.mean()),
        "oracle": (losses.min(1).mean(), 0.0),
        **{name: (losses[:, i].mean(), normalised[:, i].mean()) for i, name in enumerate(names)},
        "_fallbacks": fallbacks,
        "_chosen": np.bincount(chosen, minlength=len(names)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[30, 300, 3600])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    runs = load_runs()
    features = np.column_stack([runs.n_rows, runs.n_features])
    print(f"{len(runs.datasets)} LCDB datasets, {args.folds}-fold CV over datasets\n")
    for budget in args.budgets:
        result = cross_validate(features, simulated_losses(budget), args.folds, args.seed)
        print(f"### simulated budget {budget} s\n")
        print("| policy choice | mean test error | mean normalised loss |\n|---|---:|---:|")
        for name, value in result.items():
            if not name.startswith("_"):
                print(f"| {name} | {value[0]:.4f} | {value[1]:.3f} |")
        counts = ", ".join(
            f"{p.name} {n}" for p, n in zip(POLICIES, result["_chosen"], strict=True)
        )
        print(f"\nchosen: {counts}; fallback on {result['_fallbacks']} datasets\n")
    print(f"wall time {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
