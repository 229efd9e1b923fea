"""From the end of the search to the saved model, over every cell of an ablation.

Reads each finished cell's ``summary.json`` (its ``elapsed``, ``timing.search`` and
``timing.finishing`` seconds, its final model's members) and the size of its ``model.skops``
and ``fold_models/``, and prints one row per variant: how long finishing took, how far the
run ended past (or short of) its wall time, and how large the saved model is. Peers (systems
run by an adapter) have no run folder of ours and are left out.

    python benchmarks/finishing_table.py ablations/issue44-quality-60s --wall-time 60
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd


def folder_megabytes(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 1e6
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def cell_row(summary_path: Path, wall_time: float) -> dict[str, object] | None:
    summary = json.loads(summary_path.read_text())
    timing = summary.get("timing") or {}
    if "finishing" not in timing:
        return None
    folder = summary_path.parent
    cell_file = folder / "cell.json"
    cell = json.loads(cell_file.read_text()) if cell_file.is_file() else {}
    return {
        "variant": cell.get("variant", folder.parts[-3]),
        "task": cell.get("task", folder.parts[-2]),
        "finishing_s": float(timing["finishing"]),
        "past_wall_s": float(summary["elapsed"]) - wall_time,
        "members": len(summary.get("ensemble") or {}) or 1,
        "model_mb": folder_megabytes(folder / "model.skops"),
        "fold_models_mb": folder_megabytes(folder / "fold_models")
        if (folder / "fold_models").exists()
        else 0.0,
    }


def table(rows: pd.DataFrame) -> str:
    lines = [
        "| variant | cells | finishing s (mean / max) | past the wall time s (mean / max) "
        "| cells past +2 s | members (mean) | model MB (mean / max) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for variant, group in rows.groupby("variant", sort=False):
        lines.append(
            f"| {variant} | {len(group)} | {group.finishing_s.mean():.1f} / "
            f"{group.finishing_s.max():.1f} | {group.past_wall_s.mean():+.1f} / "
            f"{group.past_wall_s.max():+.1f} | {int((group.past_wall_s > 2).sum())} | "
            f"{group.members.mean():.1f} | {group.model_mb.mean():.1f} / "
            f"{group.model_mb.max():.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ablation", type=Path)
    parser.add_argument("--wall-time", type=float, required=True)
    args = parser.parse_args()
    found = sorted((args.ablation / "cells").glob("*/*/seed-*/summary.json"))
    rows = [row for path in found if (row := cell_row(path, args.wall_time))]
    if not rows:
        raise SystemExit(f"{args.ablation}: no finished cell with a summary.json")
    frame = pd.DataFrame(rows)
    print(table(frame))
    worst = frame.loc[frame.past_wall_s.idxmax()]
    print(
        f"\nlatest end: {worst.variant} on {worst.task}, {worst.past_wall_s:+.1f} s "
        f"(finishing {worst.finishing_s:.1f} s); median past the wall time "
        f"{np.median(frame.past_wall_s):+.1f} s over {len(frame)} cells"
    )


if __name__ == "__main__":
    main()
