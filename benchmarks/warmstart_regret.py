"""Warm starts compared by regret on the Oboe and PMF meta-datasets: Auto-sklearn 2.0's
greedy portfolio against auto-sklearn 1.0's k nearest datasets (knd), random orders and the
single best configurations.

    python benchmarks/warmstart_regret.py [--budgets 1,5,10,25] [--random-orders 100]
                                          [--seed 0] [--pmf-portfolio 100]

Each method orders the configurations of a meta-dataset for a held-out dataset, and the
configurations are "evaluated" in that order by looking their losses up. After ``b`` of
them, the regret is the best loss so far minus the dataset's best loss over all its
configurations (raw, in the meta-data's loss units: balanced error rate), and, normalised,
that divided by the dataset's range (max - min over all its configurations; 0 where all are
equal). Tables give the mean and the standard error over datasets.

* **Oboe** (418 datasets x 219 configurations, dense): leave one dataset out. Oboe has 7
  groups of datasets with identical error rows (the same data under several OpenML ids); a
  group is left out together, so no method can find the held-out dataset's twin.
* **PMF** (DeepPipe's split): the methods learn from the 449 ``train`` datasets and are
  evaluated on the 89 ``test`` datasets. 20% of PMF's cells were never run: a configuration
  without a loss on the held-out dataset is skipped by every method, without counting
  against the budget (as a table-lookup run, which never offers it, would).

The methods (the same functions as the ``portfolio`` and ``knd`` warm-starters use):

* ``portfolio``: Algorithm 1 (``greedy_portfolio``) on the training datasets' losses,
  normalised per dataset, a missing loss counting as the worst. It is built prefix by
  prefix, so its first 25 members are those of any longer portfolio (32 in the paper). On
  PMF it is built to ``--pmf-portfolio`` members so that members not run on the held-out
  dataset can be skipped and the budget still filled.
* ``knd``: the held-out dataset's nearest training datasets by L1 distance over min-max
  scaled meta-features (``nearest_datasets``), taking each one's best configuration, then
  each one's second best, and so on (``knd_order``; ``k`` unlimited, one per dataset per
  round, as auto-sklearn 1.0), duplicates dropped. Meta-features: Oboe's two sizes
  (``n_rows``, ``n_columns``, for every Oboe dataset), scaled by log10 because they span
  five orders of magnitude and min-max scaling of raw counts squeezes nearly every dataset
  against 0 (the raw variant is reported too); and the 64 OpenML meta-features LCDB ships,
  as they are (89 Oboe datasets have them; neighbours are then sought among those 89). On
  PMF, the two Oboe sizes of the PMF datasets Oboe has (52 of the 89 test datasets, 256 of
  the 449 training datasets). knd can only be run where the held-out dataset has
  meta-features, so each table says which datasets it covers, and every method in a table
  is evaluated on exactly those datasets.
* ``single best``: the configurations by their mean normalised loss over the training
  datasets (a missing loss counting as the worst).
* ``random``: the mean over ``--random-orders`` seeded random orders of the held-out
  dataset's configurations.

Below the regret tables, ``portfolio - knd`` pairs the two per dataset (negative: the
portfolio is better) and counts the datasets where each is strictly better.
"""

from __future__ import annotations

import argparse
import collections
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData
from automl_core.plugins import load_plugins
from automl_engine.metastore import resolve_metadata
from automl_engine.metrics import normalised_regret
from automl_warmstart_knd import knd_order, nearest_datasets
from automl_warmstart_portfolio import greedy_portfolio, normalise_per_dataset

#: An ordering method: the held-out dataset's row and the training rows -> configurations.
Order = Callable[[int, Sequence[int]], Iterable[int]]


@dataclass
class Table:
    """Regrets of several methods on the same held-out datasets."""

    title: str
    datasets: str
    budgets: list[int]
    normalised: dict[str, list[np.ndarray]] = field(default_factory=dict)
    raw: dict[str, list[np.ndarray]] = field(default_factory=dict)

    def add(self, method: str, normalised: np.ndarray, raw: np.ndarray) -> None:
        self.normalised.setdefault(method, []).append(normalised)
        self.raw.setdefault(method, []).append(raw)


def best_so_far(losses: np.ndarray, order: Iterable[int], budgets: Sequence[int]) -> np.ndarray:
    """The lowest loss among the first ``b`` configurations of ``order`` that have a loss on
    this dataset, for each ``b`` in ``budgets`` (repeats and missing losses skipped, not
    counted). An order that runs out keeps its last value."""
    wanted = max(budgets)
    seen: set[int] = set()
    best, curve = np.inf, []
    for column in order:
        if column in seen or not np.isfinite(losses[column]):
            continue
        seen.add(column)
        best = min(best, float(losses[column]))
        curve.append(best)
        if len(curve) >= wanted:
            break
    if not curve:
        return np.full(len(budgets), np.nanmax(losses))
    return np.array([curve[min(b, len(curve)) - 1] for b in budgets])


def regrets(losses: np.ndarray, curve: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(normalised, raw) regret of a best-so-far ``curve`` on a dataset with ``losses``."""
    low, high = np.nanmin(losses), np.nanmax(losses)
    return normalised_regret(curve, low, high), curve - low


def random_regrets(
    losses: np.ndarray, budgets: Sequence[int], orders: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The mean regret over ``orders`` random orders of the configurations with a loss."""
    finite = losses[np.isfinite(losses)]
    take = min(max(budgets), len(finite))
    normalised, raw = [], []
    for _ in range(orders):
        drawn = finite[rng.choice(len(finite), size=take, replace=False)]
        curve = np.minimum.accumulate(drawn)
        n, r = regrets(losses, np.array([curve[min(b, take) - 1] for b in budgets]))
        normalised.append(n)
        raw.append(r)
    return np.mean(normalised, axis=0), np.mean(raw, axis=0)


def worst_filled(normalised: np.ndarray) -> np.ndarray:
    filled = normalised.copy()
    filled[np.isnan(filled)] = 1.0
    return filled


# -- the methods ------------------------------------------------------------------------------


def portfolio_order(normalised: np.ndarray, size: int) -> Order:
    def order(test: int, train: Sequence[int]) -> list[int]:
        return greedy_portfolio(normalised[list(train)], size)

    return order


def single_best_order(normalised: np.ndarray) -> Order:
    filled = worst_filled(normalised)

    def order(test: int, train: Sequence[int]) -> list[int]:
        return list(np.argsort(filled[list(train)].mean(axis=0), kind="stable"))

    return order


def knd_order_for(metadata: MetaData, table: pd.DataFrame) -> Order:
    """knd with the meta-features of ``table`` (index: dataset ids); neighbours are sought
    among the training rows that have a row in it."""
    in_table = set(table.index)

    def order(test: int, train: Sequence[int]) -> Iterable[int]:
        features = table.loc[metadata.datasets[test]].to_dict()
        candidates = [metadata.datasets[i] for i in train if metadata.datasets[i] in in_table]
        nearest = nearest_datasets(features, table.loc[candidates])
        rows = [metadata.row(d) for d, _ in nearest]
        return (column for _, column in knd_order(metadata.performance, rows))

    return order


def evaluate(
    table: Table,
    metadata: MetaData,
    tests: Sequence[int],
    train_of: Callable[[int], Sequence[int]],
    methods: dict[str, Order],
    orders: int,
    seed: int,
) -> None:
    for test in tests:
        losses = metadata.performance[test]
        train = train_of(test)
        for name, method in methods.items():
            table.add(
                name, *regrets(losses, best_so_far(losses, method(test, train), table.budgets))
            )
        rng = np.random.default_rng([seed, test])
        table.add("random", *random_regrets(losses, table.budgets, orders, rng))


# -- the scenarios -----------------------------------------------------------------------------


def duplicate_groups(metadata: MetaData) -> dict[int, set[int]]:
    """Row -> the rows with an identical performance row (itself included)."""
    groups: dict[bytes, set[int]] = collections.defaultdict(set)
    for i, row in enumerate(metadata.performance):
        groups[np.ascontiguousarray(row).tobytes()].add(i)
    return {i: group for group in groups.values() for i in group}


def log_sizes(table: pd.DataFrame) -> pd.DataFrame:
    return np.log10(table[["n_rows", "n_columns"]].astype(float).clip(lower=1))


def oboe_tables(budgets: list[int], orders: int, seed: int) -> list[Table]:
    from automl_metadata.lcdb import LCDB

    oboe = resolve_metadata("oboe", None, load_plugins())
    assert oboe.metafeatures is not None
    normalised = normalise_per_dataset(oboe.performance)
    groups = duplicate_groups(oboe)
    everyone = range(len(oboe.datasets))

    def train_of(test: int) -> list[int]:
        return [i for i in everyone if i not in groups[test]]

    sizes = oboe.metafeatures.loc[oboe.datasets]
    lcdb = LCDB().load().metafeatures
    assert lcdb is not None
    lcdb = lcdb.loc[[d for d in lcdb.index if d in set(oboe.datasets)]]
    common: dict[str, Order] = {
        "portfolio": portfolio_order(normalised, max(budgets)),
        "single best": single_best_order(normalised),
        "knd, log sizes": knd_order_for(oboe, log_sizes(sizes)),
        "knd, raw sizes": knd_order_for(oboe, sizes[["n_rows", "n_columns"]]),
    }
    every = Table(
        "Oboe, leave one dataset out",
        f"all {len(oboe.datasets)} Oboe datasets",
        budgets,
    )
    evaluate(every, oboe, list(everyone), train_of, common, orders, seed)
    with_lcdb = Table(
        "Oboe, leave one dataset out, datasets with LCDB's OpenML meta-features",
        f"the {len(lcdb)} Oboe datasets LCDB has meta-features for (knd with them looks for "
        "neighbours among these; the other methods learn from all other Oboe datasets)",
        budgets,
    )
    tests = [oboe.row(d) for d in lcdb.index]
    methods = {**common, "knd, LCDB's 64 meta-features": knd_order_for(oboe, lcdb)}
    evaluate(with_lcdb, oboe, tests, train_of, methods, orders, seed)
    return [every, with_lcdb]


def pmf_tables(budgets: list[int], orders: int, seed: int, size: int) -> list[Table]:
    pmf = resolve_metadata("pmf", None, load_plugins())
    oboe = resolve_metadata("oboe", None, load_plugins())
    assert oboe.metafeatures is not None
    train = [pmf.row(d) for d in pmf.splits["train"]]
    test = [pmf.row(d) for d in pmf.splits["test"]]
    normalised = normalise_per_dataset(pmf.performance)
    sizes = oboe.metafeatures.loc[[d for d in pmf.datasets if d in set(oboe.metafeatures.index)]]
    with_sizes = [i for i in test if pmf.datasets[i] in set(sizes.index)]
    trained = [i for i in train if pmf.datasets[i] in set(sizes.index)]

    def train_of(_: int) -> list[int]:
        return train

    common: dict[str, Order] = {
        "portfolio": portfolio_order(normalised, size),
        "single best": single_best_order(normalised),
    }
    # The portfolio and single best are the same for every test dataset: built once.
    built = {name: list(method(-1, train)) for name, method in common.items()}
    fixed = {name: (lambda t, r, order=order: order) for name, order in built.items()}
    knd_sizes = knd_order_for(pmf, log_sizes(sizes))
    first = Table(
        "PMF, train -> test, test datasets with Oboe's sizes",
        f"the {len(with_sizes)} of {len(test)} PMF test datasets Oboe has sizes for (knd's "
        f"neighbours: the {len(trained)} of {len(train)} training datasets with sizes)",
        budgets,
    )
    evaluate(first, pmf, with_sizes, train_of, {**fixed, "knd, log sizes": knd_sizes}, orders, seed)
    every = Table(
        "PMF, train -> test, every test dataset (no knd: most have no meta-features)",
        f"all {len(test)} PMF test datasets",
        budgets,
    )
    evaluate(every, pmf, test, train_of, fixed, orders, seed)
    return [first, every]


# -- output ------------------------------------------------------------------------------------


def mean_se(values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    array = np.array(values)
    se = array.std(axis=0, ddof=1) / np.sqrt(len(array)) if len(array) > 1 else 0 * array[0]
    return array.mean(axis=0), se


def print_table(table: Table, number: int) -> None:
    print(f"### {number}. {table.title}\n")
    print(f"Datasets: {table.datasets}.\n")
    for label, data, digits in (
        ("normalised regret", table.normalised, 3),
        ("raw regret (balanced error rate)", table.raw, 4),
    ):
        header = " | ".join(f"after {b}" for b in table.budgets)
        print(f"| {label} | {header} |")
        print("|---" * (len(table.budgets) + 1) + "|")
        for method, values in data.items():
            mean, se = mean_se(values)
            cells = " | ".join(
                f"{m:.{digits}f} ± {s:.{digits}f}" for m, s in zip(mean, se, strict=True)
            )
            print(f"| {method} | {cells} |")
        print()
    knds = [m for m in table.normalised if m.startswith("knd")]
    if not knds:
        return
    print(
        "| portfolio − knd, normalised regret (portfolio better / worse, datasets) | "
        + " | ".join(f"after {b}" for b in table.budgets)
        + " |"
    )
    print("|---" * (len(table.budgets) + 1) + "|")
    portfolio = np.array(table.normalised["portfolio"])
    for knd in knds:
        difference = portfolio - np.array(table.normalised[knd])
        mean, se = mean_se(list(difference))
        better, worse = (difference < 0).sum(axis=0), (difference > 0).sum(axis=0)
        cells = " | ".join(
            f"{m:+.3f} ± {s:.3f} ({b} / {w})"
            for m, s, b, w in zip(mean, se, better, worse, strict=True)
        )
        print(f"| vs {knd} | {cells} |")
    print()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budgets", default="1,5,10,25", help="configurations evaluated")
    parser.add_argument("--random-orders", type=int, default=100, help="random orders per dataset")
    parser.add_argument("--seed", type=int, default=0, help="seeds the random orders")
    parser.add_argument(
        "--pmf-portfolio",
        type=int,
        default=100,
        help="members of PMF's portfolio (members not run on a test dataset are skipped)",
    )
    args = parser.parse_args(argv)
    budgets = sorted({int(b) for b in args.budgets.split(",")})
    started = time.perf_counter()
    tables = oboe_tables(budgets, args.random_orders, args.seed)
    tables += pmf_tables(budgets, args.random_orders, args.seed, args.pmf_portfolio)
    print("## Warm starts: regret after the first configurations\n")
    print(
        f"Random: mean over {args.random_orders} orders per dataset (seed {args.seed}). "
        "knd: L1, k unlimited, best of each neighbour, then second best... "
        "Mean ± standard error over datasets.\n"
    )
    for number, table in enumerate(tables, 1):
        print_table(table, number)
    print(f"Wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
