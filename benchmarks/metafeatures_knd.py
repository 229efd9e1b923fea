"""Meta-features compared where they are used: the k-nearest-datasets warm start (knd) with
hand-crafted, Metabu and Dida meta-features, against the greedy portfolio, the single best
configurations and random orders, leaving one dataset out at a time (Metabu's Task 2,
thesis §6.4; issue 23's knd comparison). And Metabu's Task 1: NDCG@10 of each meta-feature
space's neighbours against the target topology.

    python benchmarks/metafeatures_knd.py --metadata ~/keel-metadata/metadata
    python benchmarks/metafeatures_knd.py --metadata autosklearn --methods handcrafted metabu

``--metadata``: a meta-data source name or folder with a performance matrix and meta-features
(the hand-crafted ones: the basic representation), with ``--param KEY=VALUE`` for its
parameters (``--metadata joined --param performance=oboe --param metafeatures=lcdb``). Each
dataset in turn is the held-out one, with its twins (datasets with an identical performance
row: re-uploads, such as Oboe's 7 groups) left out too;
every method orders the configurations for it from the other datasets only, and they are
"evaluated" in that order by looking their losses up (``warmstart_regret.py``'s functions:
repeats and missing losses skipped). After ``b`` configurations the normalised regret is
(best so far - the dataset's best) / (its worst - its best).

- ``knd-handcrafted``: knd (L1 over min-max scaled meta-features, the best configuration of
  each neighbour in turn) on the meta-data's own meta-feature table;
- ``knd-metabu``: knd on Metabu's meta-features, ψ fitted without the held-out dataset
  (``fit_metabu(..., exclude=[it])``: its target is never seen), the whole table mapped;
- ``knd-dida``: knd on ``metafeatures: dida`` of each dataset (the patch-trained network;
  the datasets must be loadable references such as ``keel:pima``);
- ``portfolio``: the greedy portfolio of the other datasets (auto-sklearn 2.0);
- ``single-best``: configurations by mean normalised loss on the other datasets;
- ``random``: the mean over ``--random-orders`` seeded random orders.

Then the mean rank of each method per budget (rank 1 the lowest regret, ties averaged),
Friedman's test and Nemenyi's critical difference (automl-bench's).

Task 1 (``--task1``): for each held-out dataset, its 10 nearest other datasets by the target
distances (optimal transport between the top-20 configurations, as Metabu's target) against
its nearest by each meta-feature space's Euclidean distance (standardised hand-crafted; Metabu
fitted without it; random distances), NDCG@10 averaged over datasets.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import numpy as np
import pandas as pd
from automl_bench.compare import critical_difference, friedman, mean_ranks
from warmstart_regret import (
    Order,
    best_so_far,
    duplicate_groups,
    knd_order_for,
    mean_se,
    portfolio_order,
    random_regrets,
    regrets,
    single_best_order,
)

from automl_core.contracts import MetaData
from automl_core.plugins import Plugins, load_plugins
from automl_engine.metastore import resolve_metadata
from automl_engine.sources import load_dataset
from automl_metafeatures_metabu.encoding import configuration_matrix
from automl_metafeatures_metabu.fitting import (
    FittedMetabu,
    basic_columns,
    fit_metabu,
    training_datasets,
)
from automl_metafeatures_metabu.learn import (
    ndcg_at_k,
    pairwise_distances,
    target_distances,
    top_configurations,
)
from automl_warmstart_portfolio import normalise_per_dataset

METHODS = ("handcrafted", "metabu", "dida", "portfolio", "single-best", "random")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metadata", required=True, help="a source name or folder")
    parser.add_argument(
        "--param", action="append", default=[], metavar="KEY=VALUE", help="source parameters"
    )
    parser.add_argument("--methods", nargs="*", default=list(METHODS), choices=METHODS)
    parser.add_argument("--budgets", default="1,5,10,25")
    parser.add_argument("--random-orders", type=int, default=100)
    parser.add_argument("--portfolio", type=int, default=25, help="portfolio size")
    parser.add_argument("--task1", action="store_true", help="also Metabu's Task 1 (NDCG@10)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]

    plugins = load_plugins()
    params = dict(text.split("=", 1) for text in args.param)
    metadata = resolve_metadata(args.metadata, params or None, plugins)
    datasets, _ = training_datasets(metadata, set())
    rows = [metadata.row(d) for d in datasets]
    twins = duplicate_groups(metadata)
    left_out = {d: sorted(metadata.datasets[r] for r in twins[metadata.row(d)]) for d in datasets}
    print(
        f"{args.metadata}: {len(datasets)} datasets with meta-features and losses x "
        f"{len(metadata.configs)} configurations "
        f"({np.isfinite(metadata.performance[rows]).mean():.1%} of their cells observed)\n"
    )
    started = time.monotonic()
    metabu = (
        {d: fit_metabu(metadata, exclude=left_out[d]) for d in datasets}
        if "metabu" in args.methods or args.task1
        else {}
    )
    if metabu:
        dims = [f.dimension for f in metabu.values()]
        print(
            f"Metabu: {len(metabu)} leave-one-out fits in {time.monotonic() - started:.0f} s, "
            f"dimension {min(dims)}-{max(dims)} (median {int(np.median(dims))})\n"
        )
    methods = build_methods(args, metadata, datasets, metabu, plugins)
    curves = evaluate(metadata, rows, twins, methods, budgets, args)
    print_regrets(curves, budgets)
    print_ranks(curves, budgets)
    if args.task1:
        print_task1(metadata, datasets, metabu, args.seed)


def build_methods(
    args: argparse.Namespace,
    metadata: MetaData,
    datasets: list[str],
    metabu: dict[str, FittedMetabu],
    plugins: Plugins,
) -> dict[str, Order]:
    normalised = normalise_per_dataset(metadata.performance)
    assert metadata.metafeatures is not None
    table = metadata.metafeatures.set_axis(metadata.metafeatures.index.astype(str), axis=0)
    table = table.loc[datasets]
    methods: dict[str, Order] = {}
    for method in args.methods:
        if method == "handcrafted":
            methods["knd-handcrafted"] = knd_order_for(metadata, table)
        elif method == "metabu":
            methods["knd-metabu"] = metabu_order(metadata, table, metabu)
        elif method == "dida":
            methods["knd-dida"] = knd_order_for(metadata, dida_table(datasets, plugins))
        elif method == "portfolio":
            methods["portfolio"] = portfolio_order(normalised, args.portfolio)
        elif method == "single-best":
            methods["single-best"] = single_best_order(normalised)
    return methods


def metabu_order(metadata: MetaData, table: pd.DataFrame, fitted: dict[str, FittedMetabu]) -> Order:
    """knd on the table mapped by the map fitted without the held-out dataset."""

    def order(test: int, train: Sequence[int]) -> object:
        held_out = metadata.datasets[test]
        mapped = fitted[held_out].transform(table)
        return knd_order_for(metadata, mapped)(test, train)

    return order  # type: ignore[return-value]


def dida_table(datasets: list[str], plugins: Plugins) -> pd.DataFrame:
    from automl_metafeatures_dida.provider import DidaMetaFeatures

    provider = DidaMetaFeatures()
    described = {}
    for reference in datasets:
        dataset = load_dataset(plugins, reference)
        described[reference] = provider.compute(dataset.X, np.asarray(dataset.y), dataset.task)
    return pd.DataFrame.from_dict(described, orient="index")


def evaluate(
    metadata: MetaData,
    rows: list[int],
    twins: dict[int, set[int]],
    methods: dict[str, Order],
    budgets: list[int],
    args: argparse.Namespace,
) -> dict[str, np.ndarray]:
    """Per method, the normalised regret per held-out dataset and budget."""
    curves: dict[str, list[np.ndarray]] = {name: [] for name in methods}
    if "random" in args.methods:
        curves["random"] = []
    for test in rows:
        losses = metadata.performance[test]
        train = [r for r in rows if r not in twins[test]]
        for name, method in methods.items():
            curve = best_so_far(losses, method(test, train), budgets)
            curves[name].append(regrets(losses, curve)[0])
        if "random" in curves:
            rng = np.random.default_rng([args.seed, test])
            curves["random"].append(random_regrets(losses, budgets, args.random_orders, rng)[0])
    return {name: np.array(values) for name, values in curves.items()}


def print_regrets(curves: dict[str, np.ndarray], budgets: list[int]) -> None:
    print("| normalised regret | " + " | ".join(f"after {b}" for b in budgets) + " |")
    print("|---" * (len(budgets) + 1) + "|")
    for name, values in curves.items():
        mean, se = mean_se(list(values))
        cells = " | ".join(f"{m:.3f} ± {s:.3f}" for m, s in zip(mean, se, strict=True))
        print(f"| {name} | {cells} |")
    print()


def print_ranks(curves: dict[str, np.ndarray], budgets: list[int]) -> None:
    names = list(curves)
    n_tasks = len(next(iter(curves.values())))
    cd = critical_difference(len(names), n_tasks)
    print(f"| mean rank (CD {cd:.2f} at 0.05, {n_tasks} datasets) | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for j, budget in enumerate(budgets):
        losses = np.column_stack([curves[n][:, j] for n in names])
        ranks = mean_ranks(losses)
        test = friedman(losses)
        p = f", Iman-Davenport p {test.f_p_value:.3g}" if test is not None else ""
        cells = " | ".join(f"{r:.2f}" for r in ranks)
        print(f"| after {budget}{p} | {cells} |")
    print()


def print_task1(
    metadata: MetaData, datasets: list[str], metabu: dict[str, FittedMetabu], seed: int
) -> None:
    """NDCG@10 of each space's neighbours of a held-out dataset against the target's."""
    rows = [metadata.row(d) for d in datasets]
    targets = top_configurations(metadata.performance[rows], configuration_matrix(metadata))
    target = target_distances(targets)
    assert metadata.metafeatures is not None
    table = metadata.metafeatures.set_axis(metadata.metafeatures.index.astype(str), axis=0)
    table = table.loc[datasets].apply(pd.to_numeric, errors="coerce")
    basic = table[basic_columns(table)].to_numpy(float)
    basic = np.where(np.isfinite(basic), basic, np.nanmedian(basic, axis=0))
    spread = basic.std(axis=0)
    basic = (basic - basic.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    rng = np.random.default_rng(seed)
    scores: dict[str, list[float]] = {"metabu": [], "handcrafted": [], "random": []}
    for i, dataset in enumerate(datasets):
        mapped = metabu[dataset].transform(table).to_numpy()
        random = rng.random((len(datasets), len(datasets)))
        for name, distances in (
            ("metabu", pairwise_distances(mapped)),
            ("handcrafted", pairwise_distances(basic)),
            ("random", (random + random.T) / 2),
        ):
            scores[name].append(ndcg_at_k(distances, target, 10, queries=[i]))
    print("| Task 1, NDCG@10 (leave one dataset out) | mean ± s.e. |\n|---|---|")
    for name, values in scores.items():
        mean, se = mean_se([np.array([v]) for v in values])
        print(f"| {name} | {mean[0]:.3f} ± {se[0]:.3f} |")
    print()


if __name__ == "__main__":
    main()
