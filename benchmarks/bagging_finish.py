"""From the end of the search to the saved model: a refitted final model against a bagged one.

Runs ``default-classification`` on a few datasets with the Caruana ensemble, once with its
holdout (the members refitted on all rows) and once with ``{cv: 5, bag: true}`` (the members'
fold models kept, nothing refitted), and prints per run: when the search ended, the seconds
finishing took and the seconds it had kept back for it, how far the run ended past its wall
time, the final model's members, and the sizes of the saved model and of the kept fold
models. Rows are appended to a JSON-lines file as they finish; a row already there is not
run again.

    python benchmarks/bagging_finish.py --datasets keel:german keel:pima sklearn:digits \\
        --wall-time 60 --out benchmarks/bagging_finish.jsonl
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

VARIANTS = {
    "refit": ["--set", "ensemble=caruana"],
    "bagged": ["--set", "ensemble=caruana", "--set", "task.resampling={cv: 5, bag: true}"],
}


def folder_megabytes(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 1e6
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def run_one(dataset: str, variant: str, wall_time: float, seed: int) -> dict[str, object]:
    folder = Path(tempfile.mkdtemp(prefix="bagging-finish-")) / "run"
    command = [
        sys.executable, "-m", "automl_engine.cli", "run", "default-classification",
        "--set", f"task.dataset={dataset}", "--set", f"budget.wall_time={wall_time}",
        "--set", f"seed={seed}", "--set", "task.test_size=0.25",
        "--set", "executor={name: processes, params: {workers: 1}}",
        *VARIANTS[variant], "--out", str(folder), "--quiet",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    row: dict[str, object] = {"dataset": dataset, "variant": variant, "seed": seed}
    if done.returncode != 0:
        row["error"] = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "?"
        return row
    summary = json.loads((folder / "summary.json").read_text())
    row.update(
        wall_time=wall_time,
        elapsed=round(summary["elapsed"], 2),
        past_wall_time=round(summary["elapsed"] - wall_time, 2),
        search_end=summary["timing"].get("search"),
        reserved=summary["timing"].get("reserved"),
        finishing=summary["timing"].get("finishing"),
        refit_seconds=summary.get("refit_seconds"),
        bagged_seconds=summary.get("bagged_seconds"),
        members=len(summary["ensemble"]),
        n_trials=summary["n_trials"],
        test_score=(summary["test_scores"] or {}).get(summary["metric"]),
        model_mb=round(folder_megabytes(folder / "model.skops"), 2),
        fold_models_mb=round(folder_megabytes(folder / "fold_models"), 2)
        if (folder / "fold_models").exists()
        else 0.0,
    )
    shutil.rmtree(folder.parent, ignore_errors=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["keel:german", "keel:pima"])
    parser.add_argument("--wall-time", type=float, default=60.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/bagging_finish.jsonl"))
    args = parser.parse_args()
    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            row = json.loads(line)
            done.add((row["dataset"], row["variant"], row["seed"], row.get("wall_time")))
    for seed in args.seeds:
        for dataset in args.datasets:
            for variant in VARIANTS:  # the two variants of a dataset one after the other
                if (dataset, variant, seed, args.wall_time) in done:
                    continue
                row = run_one(dataset, variant, args.wall_time, seed)
                with args.out.open("a") as file:
                    file.write(json.dumps(row) + "\n")
    rows = [json.loads(line) for line in args.out.read_text().splitlines()]
    columns = [
        *("dataset", "variant", "seed", "n_trials", "members", "search_end", "reserved"),
        *("finishing", "past_wall_time", "model_mb", "fold_models_mb", "test_score"),
    ]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row.get(c, row.get("error", ""))) for c in columns) + " |")


if __name__ == "__main__":
    main()
