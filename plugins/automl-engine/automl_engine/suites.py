"""A suite: one run per dataset of a table-lookup benchmark's split, resumable as a whole."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from automl_core.contracts import Benchmark
from automl_core.errors import RecipeError
from automl_core.plugins import Plugins, load_plugins
from automl_engine.recipe import Recipe, check_names
from automl_engine.run_folder import RunSummary, finished_summary, resumable, safe_folder_name
from automl_engine.runner import run
from automl_engine.tasks import suite_datasets

SUITE_FILE = "suite.json"


@dataclass
class SuiteSummary:
    """The runs of a suite, and the mean normalised regret of their best trials."""

    run_dir: str
    benchmark: str
    split: str
    runs: dict[str, RunSummary]
    mean_normalised_regret: float | None
    elapsed: float


def run_suite(
    recipe: Recipe,
    run_dir: str | Path,
    *,
    plugins: Plugins | None = None,
    observers: tuple[object, ...] = (),
) -> SuiteSummary:
    """Run ``recipe`` on every dataset of its benchmark's split ``task.suite``, each into
    ``run_dir/<dataset>/``; the benchmark's meta-data is loaded once for all of them.

    A dataset whose run folder already holds a finished summary is not run again, and one
    whose run was interrupted is resumed, so an interrupted suite is continued by running it
    again into the same folder.
    """
    started = time.monotonic()
    plugins = plugins or load_plugins()
    ref, split = recipe.task.benchmark, recipe.task.suite
    if ref is None or split is None:
        raise RecipeError("task.suite", split, "a benchmark task with a suite (split name)")
    check_names(recipe, plugins)
    benchmark: Benchmark = plugins.create("benchmark", ref.name, ref.params)
    datasets = suite_datasets(recipe, benchmark)
    run_dir = Path(run_dir)
    runs: dict[str, RunSummary] = {}
    for dataset in datasets:
        folder = run_dir / safe_folder_name(dataset)
        previous = finished_summary(folder)
        if previous is not None:
            runs[dataset] = previous
            continue
        unfinished = resumable(folder)
        raw_task = {"benchmark": recipe.raw["task"]["benchmark"], "dataset": dataset}
        one = replace(
            recipe,
            task=replace(recipe.task, dataset=dataset, suite=None),
            raw={**recipe.raw, "task": raw_task},
        )
        runs[dataset] = run(
            one,
            folder,
            plugins=plugins,
            observers=observers,
            benchmark=benchmark,
            resume=unfinished,
        )
    regrets = [
        r.benchmark["normalised_regret"]
        for r in runs.values()
        if r.benchmark and "normalised_regret" in r.benchmark
    ]
    summary = SuiteSummary(
        run_dir=str(run_dir),
        benchmark=ref.name,
        split=split,
        runs=runs,
        mean_normalised_regret=float(np.mean(regrets)) if regrets else None,
        elapsed=time.monotonic() - started,
    )
    # each run as its own summary.json has it (RunSummary.to_record: no in-process model)
    record = {
        **asdict(replace(summary, runs={})),
        "runs": {n: r.to_record() for n, r in runs.items()},
    }
    (run_dir / SUITE_FILE).write_text(json.dumps(record, indent=2, default=str))
    return summary
