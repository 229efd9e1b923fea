"""Score a by-rows rule on an ablation that ran both of its sides: for each task, the cell of
variant ``--below`` where the task has fewer than ``--rows`` training rows, else the cell of
``--above``, as a new variant ``--label`` ranked with the others.

This is what the ``bagged-by-rows`` selector does inside one run, read off cells that ran the
same configurations (issue 44: the classification default is `bagged+portfolio` below 500
training rows and `+portfolio+caruana` above). On the grid whose rows chose the threshold it
is an in-sample figure; a seed the choice did not see is the check.

The training rows of each task come from ``train_rows.csv`` in the ablation folder (written
by ``--write-train-rows`` from the cells' histories, which the published copies do not keep).

    python benchmarks/compose_by_rows.py ablations/issue44-quality-60s --write-train-rows
    python benchmarks/compose_by_rows.py docs/ablations/issue44-quality-60s --rows 500 \\
        --below bagged+portfolio --above +portfolio+caruana --label rule-500 \\
        --out ablations/issue44-rule-60s
    automl compare ablations/issue44-rule-60s --failed last
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path

import pandas as pd
from merge_results import read_rows

TRAIN_ROWS_FILE = "train_rows.csv"


def train_rows_from_histories(folder: Path) -> pd.DataFrame:
    """Each task's training rows, as the first of its cells' histories recorded them."""
    rows: dict[str, int] = {}
    for history in sorted(folder.glob("cells/*/*/seed-*/history.sqlite")):
        with sqlite3.connect(f"file:{history}?mode=ro", uri=True) as connection:
            found = connection.execute("select value from meta where key = 'dataset'").fetchone()
        if found is None:
            continue
        dataset = json.loads(found[0])
        if dataset.get("train_rows") is not None:
            rows.setdefault(dataset["name"], int(dataset["train_rows"]))
    return pd.DataFrame({"task": list(rows), "train_rows": list(rows.values())})


def compose(
    results: pd.DataFrame, train_rows: pd.DataFrame, rows: int, below: str, above: str, label: str
) -> pd.DataFrame:
    """``results`` with one more variant: ``below``'s row where the task has fewer than
    ``rows`` training rows, ``above``'s row elsewhere (per task and seed)."""
    sizes = dict(zip(train_rows["task"], train_rows["train_rows"], strict=True))
    missing = sorted(set(results["task"]) - set(sizes))
    if missing:
        raise SystemExit(f"no training rows recorded for {missing}")
    chosen = [
        variant == (below if sizes[task] < rows else above)
        for task, variant in zip(results["task"], results["variant"], strict=True)
    ]
    composed = results[chosen].copy()
    composed["variant"] = label
    return pd.concat([results, composed], ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ablation", type=Path)
    parser.add_argument("--write-train-rows", action="store_true")
    parser.add_argument("--rows", type=int)
    parser.add_argument("--below")
    parser.add_argument("--above")
    parser.add_argument("--label")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.write_train_rows:
        table = train_rows_from_histories(args.ablation)
        table.to_csv(args.ablation / TRAIN_ROWS_FILE, index=False)
        print(f"{len(table)} tasks -> {args.ablation / TRAIN_ROWS_FILE}")
        return
    if None in (args.rows, args.below, args.above, args.label, args.out):
        parser.error("--rows, --below, --above, --label and --out are needed to compose")
    args.out.mkdir(parents=True, exist_ok=True)
    results = read_rows(args.ablation, args.out)  # paths relative to the new folder
    train_rows = pd.read_csv(args.ablation / TRAIN_ROWS_FILE)
    out = compose(results, train_rows, args.rows, args.below, args.above, args.label)
    out.to_csv(args.out / "results.csv", index=False)
    print(f"{(out['variant'] == args.label).sum()} rows of {args.label!r} -> {args.out}")


if __name__ == "__main__":
    main()
