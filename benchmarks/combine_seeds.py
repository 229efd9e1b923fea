"""Rank the seeds of two grids together when the same system carries another label in each:
seed 0 of issue 44's grid ran the chosen defaults as variants (`bagged-by-rows`,
or the by-rows rule composed by ``compose_by_rows.py``), seed 1 ran them as the base
(`default`). Each source is a results folder and a label map ``OLD=NEW,...`` (a label that
is not mapped is dropped; ``*`` keeps every other label as it is); the rows of the mapped
labels are written to one results.csv, their paths rewritten to start from it, for
``automl compare``. A (variant, task, seed) found in two sources is refused.
``--common-tasks`` keeps only the tasks every source has a row of (a grid still running
holds some tasks only in part; ``automl compare`` then ranks those on one seed).

    python benchmarks/combine_seeds.py \\
        "docs/ablations/issue44-regression-60s:bagged-by-rows=default,default=old-default,*" \\
        "ablations/issue44-defaults-regression-60s:*" --out ablations/issue44-regression-2seeds
    automl compare ablations/issue44-regression-2seeds --failed last
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from merge_results import read_rows


def parse_source(text: str) -> tuple[Path, dict[str, str], bool]:
    """``FOLDER:OLD=NEW,...[,*]`` -> the folder, the label map, whether to keep the rest."""
    folder, _, mapping = text.rpartition(":")
    if not folder:
        raise SystemExit(f"{text!r}: expected FOLDER:OLD=NEW,... (or FOLDER:*)")
    labels, keep_rest = {}, False
    for item in filter(None, mapping.split(",")):
        if item == "*":
            keep_rest = True
            continue
        old, _, new = item.partition("=")
        if not old or not new:
            raise SystemExit(f"{item!r}: expected OLD=NEW")
        labels[old] = new
    return Path(folder), labels, keep_rest


def relabelled(folder: Path, labels: dict[str, str], keep_rest: bool, out: Path) -> pd.DataFrame:
    rows = read_rows(folder, out)
    kept = rows["variant"].isin(labels) | (keep_rest & ~rows["variant"].isin(labels.values()))
    rows = rows[kept].copy()
    rows["variant"] = [labels.get(v, v) for v in rows["variant"]]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--common-tasks", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out.resolve()
    tables = [relabelled(*parse_source(text), out) for text in args.sources]
    if args.common_tasks:
        common = set.intersection(*(set(table["task"]) for table in tables))
        tables = [table[table["task"].isin(common)] for table in tables]
    combined = pd.concat(tables, ignore_index=True)
    repeated = combined.duplicated(["variant", "task", "seed"], keep=False)
    if repeated.any():
        first = combined[repeated].iloc[0]
        raise SystemExit(f"{first['variant']} on {first['task']} seed {first['seed']} twice")
    combined.to_csv(args.out / "results.csv", index=False)
    counts = combined.groupby("variant")["seed"].agg(lambda s: sorted(set(s)))
    for variant, seeds in counts.items():
        print(f"{variant}: seeds {', '.join(seeds)}")


if __name__ == "__main__":
    main()
