"""How far past ``budget.wall_time`` a whole run ends: ``automl run`` and ``AutoMLClassifier.fit``.

Each cell runs in a fresh process, as a user's would, on a synthetic dataset
(``make_classification``, ``--rows`` x 20 features, written to a CSV file for ``automl
run``), with the default recipe's space and the strategy of the cell (random, smbo, mcts),
with or without a Caruana ensemble, two workers, on an idle machine or beside a CPU-bound
process ("hog": one busy Python loop). Measured: the wall clock of the whole
command (``automl run``: from the process's start to its exit; the estimator: ``fit``), and
overrun = wall - budget; the promise is |overrun| <= max(10% of the budget, 5 s) (a run
that ends early wastes the budget). Each cell also says where its time went.

Cells already measured (in ``--out``, JSON lines) are skipped, so a stopped run resumes:

    python benchmarks/overrun.py --budgets 30 120 --out benchmarks/overrun.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIT = """
import json, sys, time, warnings
started = time.monotonic()
import pandas as pd
from automl_engine.estimator import AutoMLClassifier
from automl_core.plugins import load_plugins
data = pd.read_csv(sys.argv[1])
recipe = dict(load_plugins(entry_points=False).get("recipe", "default-classification").obj)
recipe["search"] = {"strategy": sys.argv[2], "surrogate": "rf"}
if sys.argv[4] == "yes":
    recipe["ensemble"] = {"ensembler": "caruana"}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    model = AutoMLClassifier(recipe=recipe, time_budget=float(sys.argv[3]), n_jobs=2,
                             ensemble_size=50 if sys.argv[4] == "yes" else 0)
    fit_started = time.monotonic()
    model.fit(data.drop(columns="y"), data["y"])
print(json.dumps({"fit": time.monotonic() - fit_started, "trials": model.run_summary_.n_trials,
                  "timing": model.run_summary_.timing}))
"""


#: Where the wall time went (``RunSummary.timing``): the search until it stopped, the seconds
#: it had kept back for finishing, and the finishing itself (refits, ensemble, saving).
TIMING = ("search", "reserved", "finishing")


def make_data(rows: int, folder: Path) -> Path:
    import pandas as pd
    from sklearn.datasets import make_classification

    X, y = make_classification(rows, 20, n_informative=10, random_state=0)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(20)])
    frame["y"] = y
    path = folder / "data.csv"
    frame.to_csv(path, index=False)
    return path


def run_command(data: Path, strategy: str, budget: float, ensemble: bool, folder: Path) -> dict:
    """``automl run`` in a process of its own; the wall clock from start to exit."""
    out = folder / f"run-{time.time_ns()}"
    command = [
        str(Path(sys.executable).with_name("automl")),
        "run",
        "default-classification",
        "--quiet",
        "--out",
        str(out),
        "--set",
        f"task.dataset=csv:{data}",
        "--set",
        "task.target=y",
        "--set",
        f"search={{strategy: {strategy}, surrogate: rf}}",
        "--set",
        f"budget={{wall_time: {budget}}}",
        "--set",
        "executor={name: processes, params: {workers: 2}}",
    ]
    if ensemble:
        command += ["--set", "ensemble=caruana"]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        return {"wall": wall, "error": done.stderr.strip().splitlines()[-1:]}
    summary = json.loads((out / "summary.json").read_text())
    return {"wall": wall, "trials": summary["n_trials"], "timing": summary.get("timing", {})}


def run_fit(data: Path, strategy: str, budget: float, ensemble: bool) -> dict:
    """``AutoMLClassifier.fit`` in a process of its own; the wall clock of ``fit``."""
    arguments = [str(data), strategy, str(budget), "yes" if ensemble else "no"]
    done = subprocess.run([sys.executable, "-c", FIT, *arguments], capture_output=True, text=True)
    if done.returncode != 0:
        return {"wall": float("nan"), "error": done.stderr.strip().splitlines()[-1:]}
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    return {"wall": measured["fit"], "trials": measured["trials"], "timing": measured["timing"]}


def hogs(n: int) -> list[subprocess.Popen]:
    """``n`` busy loops, a core each."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=float, nargs="+", default=[30.0, 120.0])
    parser.add_argument("--strategies", nargs="+", default=["random", "smbo", "mcts"])
    parser.add_argument("--entries", nargs="+", default=["run", "fit"])
    parser.add_argument("--loads", nargs="+", default=["idle", "hog"])
    parser.add_argument("--ensembles", nargs="+", default=["none", "caruana"])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/overrun.jsonl"))
    args = parser.parse_args()
    done = {}
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            cell = json.loads(line)
            done[cell["key"]] = cell
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    columns = "entry | budget s | strategy | ensemble | load | wall s | overrun s | allowed s"
    print(f"| {columns} | trials | search s | kept back s | finishing s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        data = make_data(args.rows, folder)
        cells = itertools.product(
            args.budgets,
            args.entries,
            args.strategies,
            [name == "caruana" for name in args.ensembles],
            args.loads,
        )
        for budget, entry, strategy, ensemble, load in cells:
            key = f"{entry}|{budget:g}|{strategy}|{ensemble}|{load}"
            if key not in done:
                busy = hogs(1) if load == "hog" else []
                try:
                    if entry == "run":
                        measured = run_command(data, strategy, budget, ensemble, folder)
                    else:
                        measured = run_fit(data, strategy, budget, ensemble)
                finally:
                    for process in busy:
                        process.kill()
                done[key] = {"key": key, **measured}
                with args.out.open("a") as file:
                    file.write(json.dumps(done[key]) + "\n")
            cell = done[key]
            allowed = max(0.1 * budget, 5.0)
            overrun = cell["wall"] - budget
            flag = " **over**" if overrun > allowed else " **early**" if -overrun > allowed else ""
            timing = cell.get("timing") or {}
            parts = [f"{timing[k]:.1f}" if k in timing else "" for k in TIMING]
            print(
                f"| {entry} | {budget:g} | {strategy} | {'caruana' if ensemble else 'none'} | "
                f"{load} | {cell['wall']:.1f} | {overrun:+.1f}{flag} | {allowed:g} | "
                f"{cell.get('trials', cell.get('error'))} | {' | '.join(parts)} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
