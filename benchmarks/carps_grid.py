"""Our search strategies against SMAC3, Optuna and random search on CARP-S's tasks, run by
CARP-S itself (issue 48): resumable, one row per finished run in a committed CSV.

Two suites of tasks that need no download:

- ``bbob``: the 12 BBOB tasks of CARP-S's black-box subselection (its ``dev`` and ``test``
  sets: 2 to 32 dimensions);
- ``pymoo``: CARP-S's 8 unconstrained single-objective pymoo problems (Ackley, Griewank,
  Himmelblau, Rastrigin, Rosenbrock, Schwefel and Zakharov in 2 dimensions, the sphere in 10);

each at CARP-S's trial budgets (ceil(20 + 40 sqrt(d)): 77 to 247 trials); and one
multi-fidelity suite:

- ``mfh``: mf-prior-bench's multi-fidelity Hartmann functions in 3 and 6 dimensions, each with
  low fidelities that are good, moderate, bad or terrible guides to the highest (CARP-S's
  ``MFPBench/SO/mfh`` tasks: fidelity 1 to 100, 90 and 118 trials), where the halving family
  runs. CARP-S counts a trial there by its share of the maximum fidelity, so a run spends
  n_trials x 100 budget units however it splits them; a row's "after 10 %" is after a tenth
  of that budget, and its incumbent the best cost *at the maximum fidelity* (what a user could
  deploy; a low fidelity's cost is not the function's), "nan" while there is none.

Each (optimizer, seed, task) missing from the CSV is one ``python -m carps.run -m`` call
(CARP-S's runner, loggers and seeds); its trial log, under ``--rundir`` (not committed: ~100 KB
a run), is then read into a row, written at once::

    .venv-carps/bin/python benchmarks/carps_grid.py --suite bbob --seeds 1 2 3 4 5 \\
        --optimizers automl/random automl/smbo-rf automl/smbo-rf-copula automl/smbo-gp \\
        automl/evolution randomsearch/config smac20/blackbox smac20/hpo optuna/SO_TPE

(CARP-S's other multi-fidelity tasks need downloads: YAHPO's surrogates, HPOBench's
containers, mf-prior-bench's PD1 tables.)

A row: the optimizer, task, seed, trials, the incumbent's cost after 10 %, 25 %, 50 % and
all of the trials, BBOB's optimum (f_min) and the run's wall seconds (first trial's start to
last trial's end, the optimizer's own time included). ``benchmarks/carps_table.py`` turns
the CSV into CARP-S's normalised-performance and rank tables.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: CARP-S's black-box subselection's BBOB tasks, by set.
BBOB = {
    "dev": ["subset_bbob_2_12_0", "subset_bbob_2_12_1", "subset_bbob_2_20_0", "subset_bbob_4_6_1"],
    "test": [
        "subset_bbob_16_11_0", "subset_bbob_16_1_1", "subset_bbob_2_12_2", "subset_bbob_2_6_1",
        "subset_bbob_2_9_0", "subset_bbob_32_11_0", "subset_bbob_32_9_0", "subset_bbob_8_22_0",
    ],
}  # fmt: skip
#: mf-prior-bench's multi-fidelity Hartmann functions (one set).
MFH = {
    "mfh": [
        f"mfh{d}_{quality}" for d in (3, 6) for quality in ("good", "moderate", "bad", "terrible")
    ]
}
#: CARP-S's unconstrained single-objective pymoo problems (one set).
PYMOO = {
    "unconstraint": [
        "ackley", "griewank", "himmelblau", "rastrigin", "rosenbrock", "schwefel", "sphere",
        "zakharov",
    ],
}  # fmt: skip
FRACTIONS = (0.1, 0.25, 0.5, 1.0)
COLUMNS = [
    "optimizer", "task", "seed", "trials", *(f"incumbent_{int(f * 100)}" for f in FRACTIONS),
    "f_min", "seconds",
]  # fmt: skip


@dataclass(frozen=True)
class Suite:
    """How CARP-S names a suite's tasks: its sets of task configurations, the hydra group of a
    set (``{}`` the set), the task id it files a run under (``{set}``, ``{name}``), the
    benchmark folder of its run logs, and each task's known optimum."""

    name: str
    sets: dict[str, list[str]]
    group: str
    task_id_format: str
    benchmark: str
    f_min: Callable[[str], float]
    multi_fidelity: bool = False

    def task_id(self, subset: str, name: str) -> str:
        """``subset_bbob_16_11_0`` in set ``test`` -> ``blackbox/20/test/bbob/16/11/0``;
        ``ackley`` -> ``Pymoo/SO/unconstraint/ackley``."""
        return self.task_id_format.format(
            set=subset, name=name, bbob=name.removeprefix("subset_bbob_").replace("_", "/")
        )


def bbob_f_min(task: str) -> float:
    """BBOB's f_opt of the task's function, instance and dimension."""
    import ioh

    dimension, function, instance = (int(x) for x in task.split("/")[-3:])
    return float(ioh.get_problem(function, instance, dimension).optimum.y)


def pymoo_f_min(task: str) -> float:
    """The pymoo problem's Pareto front: one point for one objective."""
    from pymoo.problems import get_problem

    return float(get_problem(task.rsplit("/", 1)[-1]).pareto_front().min())


def hartmann_f_min(task: str) -> float:
    """The Hartmann function's minimum, as mf-prior-bench bounds its value metric."""
    import mfpbench

    return float(mfpbench.get(task.rsplit("/", 1)[-1]).metrics["value"].bounds[0])


SUITES = {
    "bbob": Suite(
        "bbob", BBOB, "subselection/blackbox/{}", "blackbox/20/{set}/bbob/{bbob}", "BBOB",
        bbob_f_min,
    ),
    "pymoo": Suite("pymoo", PYMOO, "Pymoo/SO/{}", "Pymoo/SO/{set}/{name}", "Pymoo", pymoo_f_min),
    "mfh": Suite(
        "mfh", MFH, "MFPBench/SO/{}", "mfpbench/SO/{set}/{name}", "MFPBench", hartmann_f_min,
        multi_fidelity=True,
    ),
}  # fmt: skip


def read_rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open() as stream:
        return list(csv.DictReader(stream))


def run_missing(optimizer: str, seed: int, task_group: str, tasks: list[str], rundir: Path) -> None:
    """CARP-S's runner over ``tasks`` of ``task_group`` (one process, hydra's multirun);
    ``optimizer`` is its configuration's group and name, ``smac20/blackbox``."""
    group, _, name = optimizer.rpartition("/")
    command = [
        sys.executable, "-m", "carps.run", "hydra.searchpath=[pkg://automl_carps/configs]",
        f"+optimizer/{group}={name}", f"+task/{task_group}={','.join(tasks)}",
        f"seed={seed}", f"baserundir={rundir}", "-m",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(done.stdout[-2000:], done.stderr[-4000:], file=sys.stderr)
        raise SystemExit(f"carps.run failed: {' '.join(command)}")


def row_of(
    folder: Path, optimizer_id: str, task: str, seed: int, f_min: float, multi_fidelity: bool
) -> dict[str, object] | None:
    """The row of a finished run folder, None when it did not finish its trials."""
    log = folder / "trial_logs.jsonl"
    config = folder / ".hydra" / "config.yaml"
    if not log.is_file() or not config.is_file():
        return None
    import yaml  # CARP-S's environment has it; only needed here

    task_config = yaml.safe_load(config.read_text())["task"]
    expected = int(task_config["optimization_resources"]["n_trials"])
    entries = [json.loads(line) for line in log.open()]
    if multi_fidelity:
        top = float(task_config["input_space"]["fidelity_space"]["max_fidelity"])
        progress, incumbents = multi_fidelity_trajectory(entries, top, expected)
        if not progress or progress[-1] < 1 - 1e-9:
            return None
        at = {f: incumbent_at(progress, incumbents, f) for f in FRACTIONS}
    else:
        if len(entries) < expected:
            return None
        # the committed black-box rows were read at trial round(f * n); kept so they compare
        incumbents = list(np.minimum.accumulate([e["trial_value"]["cost"] for e in entries]))
        at = {f: incumbents[max(round(f * len(incumbents)) - 1, 0)] for f in FRACTIONS}
    seconds = entries[-1]["trial_value"]["endtime"] - entries[0]["trial_value"]["starttime"]
    return {
        "optimizer": optimizer_id, "task": task, "seed": seed, "trials": len(entries),
        **{f"incumbent_{int(f * 100)}": float(at[f]) for f in FRACTIONS},
        "f_min": f_min, "seconds": round(float(seconds), 3),
    }  # fmt: skip


def multi_fidelity_trajectory(
    entries: list[dict], top: float, n_trials: int
) -> tuple[list[float], list[float]]:
    """Per trial, the share of the run's budget (n_trials x the maximum fidelity) spent once
    it finished, and the best cost seen at the maximum fidelity by then (NaN before any)."""
    progress, incumbents, spent, best = [], [], 0.0, float("nan")
    for entry in entries:
        budget = entry["trial_info"]["budget"]
        budget = top if budget is None else float(budget)
        spent += budget / top
        cost = float(entry["trial_value"]["cost"])
        if budget >= top - 1e-9 and not cost >= best:  # NaN compares false: the first one
            best = cost
        progress.append(spent / n_trials)
        incumbents.append(best)
    return progress, incumbents


def incumbent_at(progress: list[float], incumbents: list[float], fraction: float) -> float:
    """The incumbent after the last trial that finished within ``fraction`` of the run (the
    first trial's, if none did)."""
    done = [i for i, p in enumerate(progress) if p <= fraction + 1e-9]
    return float(incumbents[done[-1] if done else 0])


def optimizer_id(optimizer: str, rundir: Path, before: set[Path]) -> str:
    """The ``optimizer_id`` CARP-S filed the runs under: the folder it created."""
    created = {p for p in rundir.iterdir() if p.is_dir()} - before
    if len(created) == 1:
        return created.pop().name
    return optimizer.replace("/", "-")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", choices=sorted(SUITES), default="bbob")
    parser.add_argument("--optimizers", nargs="+", required=True)
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    parser.add_argument("--out", type=Path, help="default: benchmarks/carps_SUITE.csv")
    parser.add_argument("--rundir", type=Path, default=Path("carps-runs"))
    args = parser.parse_args()
    suite = SUITES[args.suite]
    args.out = args.out or Path(f"benchmarks/carps_{suite.name}.csv")
    args.rundir.mkdir(parents=True, exist_ok=True)
    rows = read_rows(args.out)
    ids = _ids(args.rundir)
    for optimizer in args.optimizers:
        for seed in args.seeds:
            for subset, names in suite.sets.items():
                for name in names:
                    task = suite.task_id(subset, name)
                    known = ids.get(optimizer)
                    if any(
                        (r["optimizer"], r["task"], r["seed"]) == (known, task, str(seed))
                        for r in rows
                    ):
                        continue
                    before = {p for p in args.rundir.iterdir() if p.is_dir()}
                    # one task a call: a row is written (and can be committed) as each run
                    # ends, so a grid stopped mid-way loses one run, not a set's
                    run_missing(optimizer, seed, suite.group.format(subset), [name], args.rundir)
                    known = known or optimizer_id(optimizer, args.rundir, before)
                    ids[optimizer] = known
                    _save_ids(args.rundir, ids)
                    folder = args.rundir / known / suite.benchmark / task / str(seed)
                    row = row_of(folder, known, task, seed, suite.f_min(task), suite.multi_fidelity)
                    if row is None:
                        raise SystemExit(f"{folder}: the run did not finish its trials")
                    rows.append({k: str(v) for k, v in row.items()})
                    _write(args.out, rows)
                    print(f"{known} {task} seed {seed}: {row['incumbent_100']:.4g}", flush=True)


def _ids(rundir: Path) -> dict[str, str]:
    path = rundir / "optimizer_ids.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _save_ids(rundir: Path, ids: dict[str, str]) -> None:
    (rundir / "optimizer_ids.json").write_text(json.dumps(ids, indent=1))


def _write(path: Path, rows: list[dict[str, str]]) -> None:
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(path)


if __name__ == "__main__":
    main()
