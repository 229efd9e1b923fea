"""Put the rows of several ablations into one results.csv, so that `automl compare` ranks
their variants together (an ablation run later to add a variant to a finished grid: the same
suite, seeds, budget and cores, its own folder).

The relative paths of each row (its run folder and curve) are rewritten to start from the
merged folder; a variant label found in two ablations is refused (rename one with
``--base-label``). Only the tasks and seeds every ablation ran are kept, so that no variant
is ranked on cells another never had.

    python benchmarks/merge_results.py ablations/issue44-quality-60s \\
        ablations/issue44-cv-refit-60s --out ablations/issue44-merged-60s
    automl compare ablations/issue44-merged-60s --failed last
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pandas as pd

PATH_COLUMNS = ("run_dir", "curve")


def read_rows(folder: Path, out: Path) -> pd.DataFrame:
    rows = pd.read_csv(folder / "results.csv", dtype=str, keep_default_na=False)
    for column in PATH_COLUMNS:
        if column in rows:
            rows[column] = [
                os.path.relpath(folder / value, out) if value else "" for value in rows[column]
            ]
    return rows


def merge(folders: list[Path], out: Path) -> pd.DataFrame:
    tables = [read_rows(folder, out) for folder in folders]
    seen: dict[str, Path] = {}
    for folder, table in zip(folders, tables, strict=True):
        for variant in dict.fromkeys(table["variant"]):
            if variant in seen:
                raise SystemExit(f"variant {variant!r} is in both {seen[variant]} and {folder}")
            seen[variant] = folder
    cells = [set(zip(t["task"], t["seed"], strict=True)) for t in tables]
    common = set.intersection(*cells)
    merged = pd.concat(tables, ignore_index=True)
    keep = [
        (task, seed) in common for task, seed in zip(merged["task"], merged["seed"], strict=True)
    ]
    return merged[keep]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ablations", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    merged = merge(args.ablations, args.out.resolve())
    merged.to_csv(args.out / "results.csv", index=False)
    tasks = merged[["task", "seed"]].drop_duplicates()
    print(f"{len(merged)} rows, {len(tasks)} task-seeds, to {args.out / 'results.csv'}")


if __name__ == "__main__":
    main()
