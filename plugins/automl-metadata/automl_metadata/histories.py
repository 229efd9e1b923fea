"""Meta-data from this framework's own runs: run folders (and ablation folders of them) into a
:class:`~automl_core.contracts.MetaData`.

Every run on a dataset (a data task, not a table lookup) adds a row for its dataset; every
configuration any run tried adds a column. A cell is the mean loss of that configuration's
successful full-budget trials on that dataset (several runs or seeds of it are averaged), NaN
where it was not run or only failed; ``runtimes`` holds the mean trial duration in seconds the
same way. The datasets' meta-features are the ones the runs stored (a recipe with a
``metafeatures:`` provider stores them). Every run must search the same space with the same
metric: a table of mixed losses would compare what cannot be compared.

The strategy ``design`` (:mod:`automl_metadata.design`) runs the same configurations on every
dataset, so that the table is dense; any other strategy's runs make a sparse one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from automl_core.contracts import MetaData, MetaFeatureProvider
from automl_core.errors import AutoMLError
from automl_core.plugins import Plugins, load_plugins
from automl_core.space import config_key
from automl_engine.history import RunHistory
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.sources import load_dataset


@dataclass
class _Cells:
    """What the runs measured, cell by cell: (dataset, configuration key) -> values."""

    losses: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    durations: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    failed: dict[tuple[str, str], int] = field(default_factory=dict)
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    datasets: dict[str, dict[str, float]] = field(default_factory=dict)


def run_folders(paths: Iterable[Path]) -> Iterator[Path]:
    """Every run folder (one with a history) at or under ``paths``, in a stable order."""
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise AutoMLError(f"{path}: no such run or ablation folder")
        if (path / HISTORY_FILE).exists():
            yield path
            continue
        found = sorted(history.parent for history in path.rglob(HISTORY_FILE))
        if not found:
            raise AutoMLError(f"{path}: no run folder (with {HISTORY_FILE}) in it")
        yield from found


def metadata_from_runs(
    paths: Iterable[Path],
    space: str | None = None,
    describe: MetaFeatureProvider | None = None,
    plugins: Plugins | None = None,
) -> MetaData:
    """The meta-data the runs at or under ``paths`` measured. ``space``: keep only the runs
    that searched this space (default: every run, which must then share one space).
    ``describe``: a meta-feature provider whose meta-features of each dataset (loaded again
    by its reference) replace the ones the runs stored, e.g. learned ones (Dida) that the
    runs did not compute."""
    cells, spaces, metrics, used = _Cells(), set(), set(), 0
    for folder in run_folders(paths):
        with RunHistory(folder / HISTORY_FILE, read_only=True) as history:
            recipe = history.get_meta("recipe") or {}
            dataset = (history.get_meta("dataset") or {}).get("name")
            searched = _space_name(recipe)
            if dataset is None or (space is not None and searched != space):
                continue  # a table lookup (its meta-data exists already), or another space
            spaces.add(searched)
            metrics.add(history.get_meta("metric"))
            described = history.get_meta("metafeatures") or {}
            cells.datasets.setdefault(dataset, {})
            if described and not cells.datasets[dataset]:
                cells.datasets[dataset] = {str(k): float(v) for k, v in described.items()}
            _add_trials(cells, dataset, history)
            used += 1
    if not used:
        raise AutoMLError("no run on a dataset (with data, not a table lookup) to build from")
    if len(spaces) > 1:
        raise AutoMLError(
            f"the runs searched {len(spaces)} spaces ({', '.join(sorted(map(str, spaces)))}): "
            "build one space at a time (--space)"
        )
    if len(metrics) > 1:
        raise AutoMLError(
            f"the runs measured {len(metrics)} metrics ({', '.join(sorted(map(str, metrics)))}):"
            " their losses cannot share a table"
        )
    if describe is not None:
        plugins = plugins or load_plugins()
        for dataset in cells.datasets:
            data = load_dataset(plugins, dataset)
            values = describe.compute(data.X, data.y, data.task)
            cells.datasets[dataset] = {str(k): float(v) for k, v in values.items()}
    return _table(cells, spaces.pop(), metrics.pop(), used)


def _space_name(recipe: dict[str, Any]) -> str:
    space = recipe.get("space", "")
    return str(space.get("name", "")) if isinstance(space, dict) else str(space)


def _add_trials(cells: _Cells, dataset: str, history: RunHistory) -> None:
    for stored in history.trials(finished_only=True):
        budget = stored.trial.budget
        if budget is not None and budget < 1:
            continue  # a low-fidelity trial is not the configuration's loss
        key = config_key(stored.trial.config)
        cells.configs.setdefault(key, dict(stored.trial.config))
        cell = (dataset, key)
        if stored.ranks:
            cells.losses.setdefault(cell, []).append(float(stored.loss))
            if stored.duration is not None and math.isfinite(stored.duration):
                cells.durations.setdefault(cell, []).append(float(stored.duration))
        else:
            cells.failed[cell] = cells.failed.get(cell, 0) + 1


def _table(cells: _Cells, space: str, metric: Any, runs: int) -> MetaData:
    datasets, keys = sorted(cells.datasets), list(cells.configs)
    row, column = {d: i for i, d in enumerate(datasets)}, {k: j for j, k in enumerate(keys)}
    performance = np.full((len(datasets), len(keys)), np.nan)
    runtimes = np.full_like(performance, np.nan)
    for (dataset, key), losses in cells.losses.items():
        performance[row[dataset], column[key]] = np.mean(losses)
    for (dataset, key), durations in cells.durations.items():
        runtimes[row[dataset], column[key]] = np.mean(durations)
    described = {d: f for d, f in cells.datasets.items() if f}
    metafeatures = pd.DataFrame.from_dict(described, orient="index") if described else None
    return MetaData(
        datasets=datasets,
        configs=[cells.configs[k] for k in keys],
        performance=performance,
        metafeatures=metafeatures,
        runtimes=runtimes,
        space=space,
        info={
            "source": "histories",
            "metric": str(metric),
            "runs": runs,
            "failed_cells": len([c for c in cells.failed if c not in cells.losses]),
        },
    )


def add_configurations(base: MetaData, more: MetaData) -> MetaData:
    """``base`` with the configurations of ``more`` added as columns: meta-data built before
    a component existed (``keel-autosklearn`` before CatBoost) extended by a design of that
    component's pipelines run on the same datasets, so that nothing already measured is run
    again. Both must be of one space and metric. A configuration both measured keeps
    ``base``'s cell where it has one; a dataset only ``more`` has becomes a row (NaN under
    ``base``'s configurations); meta-features and runtimes follow the same rule."""
    if base.space != more.space:
        raise AutoMLError(f"cannot add meta-data of space {more.space!r} to {base.space!r}")
    metrics = {str(m.info.get("metric")) for m in (base, more)}
    if len(metrics) > 1:
        raise AutoMLError(f"cannot add losses of two metrics ({', '.join(sorted(metrics))})")
    datasets = [*base.datasets, *(d for d in more.datasets if d not in set(base.datasets))]
    columns = {config_key(c): j for j, c in enumerate(base.configs)}
    configs = list(base.configs)
    for config in more.configs:
        if config_key(config) not in columns:
            columns[config_key(config)] = len(configs)
            configs.append(dict(config))
    performance = _combined(base, more, base.performance, more.performance, datasets, columns)
    runtimes = None
    if base.runtimes is not None or more.runtimes is not None:
        runtimes = _combined(base, more, base.runtimes, more.runtimes, datasets, columns)
    tables = [t for t in (base.metafeatures, more.metafeatures) if t is not None]
    metafeatures = None
    if tables:
        stacked = pd.concat(tables)
        metafeatures = stacked[~stacked.index.duplicated(keep="first")]
    info = {**more.info, **base.info}
    for count in ("runs", "failed_cells"):
        info[count] = int(base.info.get(count, 0)) + int(more.info.get(count, 0))
    info["added_configurations"] = len(configs) - len(base.configs)
    return MetaData(
        datasets=datasets,
        configs=configs,
        performance=performance,
        metafeatures=metafeatures,
        runtimes=runtimes,
        space=base.space,
        info=info,
    )


def _combined(
    base: MetaData,
    more: MetaData,
    base_cells: np.ndarray | None,
    more_cells: np.ndarray | None,
    datasets: list[str],
    columns: dict[str, int],
) -> np.ndarray:
    """One datasets x configurations array: ``base``'s cells, then ``more``'s where empty."""
    rows = {d: i for i, d in enumerate(datasets)}
    table = np.full((len(datasets), len(columns)), np.nan)
    if base_cells is not None:
        table[: len(base.datasets), : len(base.configs)] = base_cells
    if more_cells is None:
        return table
    for i, dataset in enumerate(more.datasets):
        for j, config in enumerate(more.configs):
            row, column = rows[dataset], columns[config_key(config)]
            if np.isnan(table[row, column]):
                table[row, column] = more_cells[i, j]
    return table
