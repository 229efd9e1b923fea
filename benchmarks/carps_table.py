"""The tables of ``benchmarks/carps_grid.py``'s CSV, as CARP-S's analysis computes them.

Per task, every incumbent cost is normalised by the task's best and worst incumbent over all
optimizers and seeds in the CSV (CARP-S's min-max normalisation, ``gather_data_utils``);
the table gives, per optimizer, the mean normalised incumbent after 10 %, 25 %, 50 % and
100 % of the trials (0 = the best any run found, 1 = the worst start), its mean rank over the
tasks at the end (per task, the optimizers ranked by their mean over seeds; 1 = best), the
Friedman test and Nemenyi's critical difference over the tasks, and wins/ties/losses of each
pair named with ``--pair``::

    python benchmarks/carps_table.py benchmarks/carps_bbob.csv \\
        --pair automl-smbo-rf-copula automl-smbo-rf

Only tasks every optimizer finished (all its seeds) are ranked. On a multi-fidelity suite a
run's incumbent is empty until it has a result at the maximum fidelity; until then it counts
as the task's worst incumbent (normalised 1).
"""

from __future__ import annotations

import argparse
import csv
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy.stats import friedmanchisquare, rankdata, studentized_range

FRACTIONS = ("incumbent_10", "incumbent_25", "incumbent_50", "incumbent_100")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", type=Path, nargs="+", help="one or more of carps_grid.py's CSVs")
    parser.add_argument("--pair", nargs=2, action="append", default=[], metavar=("A", "B"))
    parser.add_argument("--only", nargs="+", help="these optimizers only (default: every one)")
    parser.add_argument(
        "--tasks", nargs="+", help="only tasks whose name contains one of these (default: all)"
    )
    parser.add_argument("--plot", type=Path, help="also draw the normalised incumbents here")
    args = parser.parse_args()
    rows = [
        row
        for path in args.csv
        for row in csv.DictReader(path.open())
        if (not args.only or row["optimizer"] in args.only)
        and (not args.tasks or any(part in row["task"] for part in args.tasks))
    ]
    seeds: dict[tuple[str, str], dict[str, dict[str, float]]] = defaultdict(dict)
    for row in rows:
        seeds[(row["optimizer"], row["task"])][row["seed"]] = {k: float(row[k]) for k in FRACTIONS}
    optimizers = sorted({o for o, _ in seeds})
    counts = {o: max(len(v) for (oo, _), v in seeds.items() if oo == o) for o in optimizers}
    tasks = sorted(
        {t for _, t in seeds if all(len(seeds.get((o, t), {})) >= counts[o] for o in optimizers)}
    )
    if not tasks:
        raise SystemExit("no task that every optimizer finished")
    normalised = {o: {k: [] for k in FRACTIONS} for o in optimizers}
    final = np.zeros((len(tasks), len(optimizers)))
    for i, task in enumerate(tasks):
        values = [v[k] for o in optimizers for v in seeds[(o, task)].values() for k in FRACTIONS]
        best, worst = np.nanmin(values), np.nanmax(values)
        span = worst - best or 1.0
        for j, o in enumerate(optimizers):
            for k in FRACTIONS:
                # a multi-fidelity run with no result at the maximum fidelity yet has no
                # incumbent: it counts as the worst any run of the task had
                mean = np.mean(
                    [worst if math.isnan(v[k]) else v[k] for v in seeds[(o, task)].values()]
                )
                normalised[o][k].append((mean - best) / span)
            final[i, j] = normalised[o]["incumbent_100"][-1]
    ranks = np.vstack([rankdata(row) for row in final]).mean(axis=0)
    n_seeds = sorted({len(seeds[(o, t)]) for o in optimizers for t in tasks})
    print(f"{len(tasks)} tasks, {len(optimizers)} optimizers, seeds per run: {n_seeds}\n")
    print("| optimizer | mean rank (end) | 10 % | 25 % | 50 % | 100 % | mean s a run |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    seconds = defaultdict(list)
    for row in rows:
        if row["task"] in tasks:
            seconds[row["optimizer"]].append(float(row["seconds"]))
    for j in np.argsort(ranks):
        o = optimizers[j]
        cells = " | ".join(f"{np.mean(normalised[o][k]):.4f}" for k in FRACTIONS)
        print(f"| {o} | {ranks[j]:.2f} | {cells} | {np.mean(seconds[o]):.1f} |")
    k, n = len(optimizers), len(tasks)
    if k > 2 and n > 1:
        p = friedmanchisquare(*final.T).pvalue
        q = studentized_range.ppf(0.95, k, math.inf) / math.sqrt(2)
        cd = q * math.sqrt(k * (k + 1) / (6 * n))
        print(f"\nFriedman p = {p:.3g}; Nemenyi critical difference (alpha 0.05) = {cd:.2f}")
    for a, b in args.pair:
        ja, jb = optimizers.index(a), optimizers.index(b)
        diff = final[:, ja] - final[:, jb]
        wins, ties = (diff < -1e-12).sum(), (abs(diff) <= 1e-12).sum()
        losses = (diff > 1e-12).sum()
        print(f"\n{a} vs {b}: {wins} wins, {ties} ties, {losses} losses over {n} tasks (end)")
    if args.plot:
        plot(normalised, ranks, optimizers, args.plot, f"{n} tasks, {args.csv[0].stem}")


def plot(
    normalised: dict[str, dict[str, list[float]]],
    ranks: np.ndarray,
    optimizers: list[str],
    out: Path,
    title: str,
) -> None:
    """The mean normalised incumbent after 10, 25, 50 and 100 % of the trials, one line per
    optimizer (best final rank first in the legend), on a log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fractions = [10, 25, 50, 100]
    figure, axis = plt.subplots(figsize=(6.5, 4.2))
    for j in np.argsort(ranks):
        name = optimizers[j]
        means = [np.mean(normalised[name][k]) for k in FRACTIONS]
        axis.plot(fractions, means, marker="o", label=f"{name} (rank {ranks[j]:.2f})")
    axis.set(
        yscale="log", xlabel="% of the task's trials (budget)", ylabel="mean normalised incumbent"
    )
    axis.set_title(title)
    axis.legend(fontsize=7)
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=110)
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
