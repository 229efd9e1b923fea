"""Our search strategies against SMAC3, Optuna and random search on CARP-S's tasks, run by
CARP-S itself (issue 48): resumable, one row per finished run in a committed CSV.

Two suites of tasks that need no download:

- ``bbob``: the 12 BBOB tasks of CARP-S's black-box subselection (its ``dev`` and ``test``
  sets: 2 to 32 dimensions);
- ``pymoo``: CARP-S's 8 unconstrained single-objective pymoo problems (Ackley, Griewank,
  Himmelblau, Rastrigin, Rosenbrock, Schwefel and Zakharov in 2 dimensions, the sphere in 10);

each at CARP-S's trial budgets (ceil(20 + 40 sqrt(d)): 77 to 247 trials). Each (optimizer,
seed, set of tasks) missing from the CSV is one ``python -m carps.run -m`` call over its
missing tasks (CARP-S's runner, loggers and seeds); its trial logs, under ``--rundir`` (not
committed: ~100 KB a run), are then read into rows::

    .venv-carps/bin/python benchmarks/carps_grid.py --suite bbob --seeds 1 2 3 4 5 \\
        --optimizers automl/random automl/smbo-rf automl/smbo-rf-copula automl/smbo-gp \\
        automl/evolution randomsearch/config smac20/blackbox smac20/hpo optuna/SO_TPE

(CARP-S's multi-fidelity tasks, where the halving family would run, all need downloads:
YAHPO's surrogates, HPOBench's containers, mfpbench; none is on this project's offline
index, so the suites are black-box only.)

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

#: CARP-S's black-box subselection's BBOB tasks, by set.
BBOB = {
    "dev": ["subset_bbob_2_12_0", "subset_bbob_2_12_1", "subset_bbob_2_20_0", "subset_bbob_4_6_1"],
    "test": [
        "subset_bbob_16_11_0", "subset_bbob_16_1_1", "subset_bbob_2_12_2", "subset_bbob_2_6_1",
        "subset_bbob_2_9_0", "subset_bbob_32_11_0", "subset_bbob_32_9_0", "subset_bbob_8_22_0",
    ],
}  # fmt: skip
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


SUITES = {
    "bbob": Suite(
        "bbob", BBOB, "subselection/blackbox/{}", "blackbox/20/{set}/bbob/{bbob}", "BBOB",
        bbob_f_min,
    ),
    "pymoo": Suite("pymoo", PYMOO, "Pymoo/SO/{}", "Pymoo/SO/{set}/{name}", "Pymoo", pymoo_f_min),
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
    folder: Path, optimizer_id: str, task: str, seed: int, f_min: float
) -> dict[str, object] | None:
    """The row of a finished run folder, None when it did not finish its trials."""
    log = folder / "trial_logs.jsonl"
    config = folder / ".hydra" / "config.yaml"
    if not log.is_file() or not config.is_file():
        return None
    import yaml  # CARP-S's environment has it; only needed here

    expected = int(yaml.safe_load(config.read_text())["task"]["optimization_resources"]["n_trials"])
    entries = [json.loads(line) for line in log.open()]
    if len(entries) < expected:
        return None
    costs, best = [], float("inf")
    for entry in entries:
        best = min(best, float(entry["trial_value"]["cost"]))
        costs.append(best)
    seconds = entries[-1]["trial_value"]["endtime"] - entries[0]["trial_value"]["starttime"]
    return {
        "optimizer": optimizer_id, "task": task, "seed": seed, "trials": len(entries),
        **{f"incumbent_{int(f * 100)}": costs[max(round(f * len(costs)) - 1, 0)]
           for f in FRACTIONS},
        "f_min": f_min, "seconds": round(float(seconds), 3),
    }  # fmt: skip


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
                known = ids.get(optimizer)
                done = {(r["task"], r["seed"]) for r in rows if r["optimizer"] == known}
                missing = [n for n in names if (suite.task_id(subset, n), str(seed)) not in done]
                if not missing:
                    continue
                before = {p for p in args.rundir.iterdir() if p.is_dir()}
                run_missing(optimizer, seed, suite.group.format(subset), missing, args.rundir)
                known = known or optimizer_id(optimizer, args.rundir, before)
                ids[optimizer] = known
                _save_ids(args.rundir, ids)
                for name in missing:
                    task = suite.task_id(subset, name)
                    folder = args.rundir / known / suite.benchmark / task / str(seed)
                    row = row_of(folder, known, task, seed, suite.f_min(task))
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
