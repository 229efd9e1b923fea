"""Suites: named sets of tasks that an ablation runs every variant on.

A suite is a YAML document, registered by a plugin (``register_suites``) or given as a file::

    description: Ten KEEL datasets.
    defaults: {test_size: 0.25}          # applied to every dataset entry
    tasks:
      - keel:australian                  # a dataset, as task.dataset would name it
      - {dataset: keel:german, test_size: 0.3, split_seed: 0}
      - {dataset: keel:letter, max_rows: 3000}   # search a stratified sample of 3,000 rows
      - {benchmark: pmf, dataset: "1049"}   # one dataset of a table-lookup benchmark
      - {benchmark: pmf, split: test}       # every dataset of a benchmark's split

Each entry becomes the ``task`` section of one run's recipe; the recipe keeps its metric and
resampling. ``split_seed`` fixes the test split, so that every seed of an ablation sees the
same training and test rows; without it the split follows the run's seed, which is still
the same for every variant and peer of that seed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from automl_core.documents import read_recipe_file
from automl_core.errors import AutoMLError, RecipeError, UnknownComponentError
from automl_core.plugins import Plugins

SUITE_KEYS = ("description", "defaults", "tasks")
#: What a dataset entry may set of the recipe's task (its metric and resampling stay).
DATASET_ENTRY_KEYS = ("dataset", "target", "type", "test_size", "split_seed", "max_rows")
BENCHMARK_ENTRY_KEYS = ("benchmark", "dataset", "split")


@dataclass(frozen=True)
class SuiteTask:
    """One task of a suite: its label (``keel:german``, ``pmf:1049``) and what it sets of the
    recipe's ``task`` section."""

    label: str
    task: dict[str, Any]

    @property
    def is_benchmark(self) -> bool:
        return "benchmark" in self.task


@dataclass(frozen=True)
class Suite:
    """A named list of task entries; benchmark splits are expanded by :func:`suite_tasks`."""

    name: str
    description: str
    entries: tuple[dict[str, Any], ...]


def read_suite(reference: str, plugins: Plugins) -> Suite:
    """The suite in the YAML file ``reference``, else the registered suite of that name."""
    path = Path(reference)
    if path.is_file():
        return parse_suite(path.stem, read_recipe_file(path, "suite"), where=str(path))
    if path.suffix in (".yaml", ".yml"):
        raise AutoMLError(f"suite file {reference!r} not found (looked from {Path.cwd()})")
    try:
        registration = plugins.get("suite", reference)
    except UnknownComponentError as error:
        raise AutoMLError(f"{error}; or give the path of a suite YAML file") from None
    return parse_suite(reference, registration.obj, where=f"suite {reference!r}")


def parse_suite(name: str, document: Mapping[str, Any], *, where: str = "") -> Suite:
    """Check a suite document; errors say which entry is wrong and why."""
    where = where or f"suite {name!r}"
    unknown = sorted(set(document) - set(SUITE_KEYS))
    if unknown:
        raise RecipeError(f"{where}: {unknown[0]}", document[unknown[0]], f"one of {SUITE_KEYS}")
    defaults = document.get("defaults") or {}
    if not isinstance(defaults, Mapping):
        raise RecipeError(f"{where}: defaults", defaults, "a mapping of task keys")
    _check_keys(f"{where}: defaults", defaults, DATASET_ENTRY_KEYS[1:])
    tasks = document.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise RecipeError(f"{where}: tasks", tasks, "a non-empty list of task entries")
    entries = tuple(
        _entry(f"{where}: tasks[{index}]", value, defaults) for index, value in enumerate(tasks)
    )
    return Suite(name, str(document.get("description", "")).strip(), entries)


def _entry(where: str, value: Any, defaults: Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(value, str):
        value = {"dataset": value}
    if not isinstance(value, Mapping):
        raise RecipeError(where, value, "a dataset such as 'keel:german' or a mapping")
    if "benchmark" in value:
        _check_keys(where, value, BENCHMARK_ENTRY_KEYS)
        if ("dataset" in value) == ("split" in value):
            raise RecipeError(where, dict(value), "a benchmark with exactly one of dataset, split")
        return {key: str(item) for key, item in value.items()}
    _check_keys(where, value, DATASET_ENTRY_KEYS)
    if not isinstance(value.get("dataset"), str):
        raise RecipeError(f"{where}.dataset", value.get("dataset"), "a dataset such as 'keel:x'")
    return {**defaults, **value}


def _check_keys(where: str, value: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for key in value:
        if key not in allowed:
            raise RecipeError(f"{where}.{key}", value[key], f"one of {list(allowed)}")


def suite_tasks(suite: Suite, plugins: Plugins) -> list[SuiteTask]:
    """The suite's tasks, with every benchmark split expanded into its datasets (the
    benchmark's meta-data is loaded for that); a task listed twice is an error."""
    tasks: list[SuiteTask] = []
    for entry in suite.entries:
        if "split" in entry:
            benchmark = plugins.create("benchmark", entry["benchmark"])
            try:
                datasets = benchmark.datasets(entry["split"])
            except AutoMLError as error:
                raise AutoMLError(f"suite {suite.name!r}: {error}") from None
            tasks += [_benchmark_task(entry["benchmark"], dataset) for dataset in datasets]
        elif "benchmark" in entry:
            tasks.append(_benchmark_task(entry["benchmark"], entry["dataset"]))
        else:
            tasks.append(SuiteTask(entry["dataset"], dict(entry)))
    labels = [task.label for task in tasks]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise AutoMLError(f"suite {suite.name!r} lists {repeated[0]!r} more than once")
    return tasks


def _benchmark_task(benchmark: str, dataset: str) -> SuiteTask:
    return SuiteTask(f"{benchmark}:{dataset}", {"benchmark": benchmark, "dataset": dataset})
