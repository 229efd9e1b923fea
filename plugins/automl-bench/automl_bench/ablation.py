"""Ablations: one recipe, some of its values varied, run on every task of a suite and seed.

``automl ablate recipe.yaml --vary search.name=smbo,mcts --suite keel-small --seeds 5``
plans a grid of *cells* (variant x task x seed). Each cell is a normal run with its own run
folder and history, or, for a whole-system peer (``--peer flaml``), a fit of that
:class:`~automl_core.contracts.System` on the same training rows, metric, wall time and
cores, scored on the same test rows. Cells are evaluated through an executor like trials
are (``--jobs N`` runs N at once in worker processes, each under a time limit, so a cell
that hangs is stopped and recorded, not waited for). Every finished cell writes
``cell.json`` into its folder at once, and ``results.csv`` is rewritten after every cell, so
a killed ablation loses at most the cells in flight: run the same command again and finished
cells are skipped, interrupted runs resumed.

Layout of the output folder::

    ablation.json              the base recipe and the grid (a re-run must use the same recipe)
    results.csv                one row per cell (see RESULT_COLUMNS)
    cells/<variant>/<task>/seed-<n>/
        recipe.yaml, history.sqlite, summary.json, model ...   (a run)
        cell.json              the cell's row
        curve.csv              seconds, trial, loss of every evaluated configuration
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from automl_bench.compare import RESULTS_FILE, write_curve
from automl_bench.contracts import System, SystemResult
from automl_bench.suites import SuiteTask
from automl_core.contracts import Evaluator, Executor
from automl_core.errors import AutoMLError, RecipeError
from automl_core.plugins import Plugins, load_plugins
from automl_core.trial import Result, Status, Trial
from automl_engine.cache import write_atomically
from automl_engine.evaluator import predict_scores
from automl_engine.history import RunHistory, rank_key
from automl_engine.metrics import get_metric
from automl_engine.recipe import Recipe, apply_overrides, check_names, parse_recipe
from automl_engine.run_folder import (
    HISTORY_FILE,
    RECIPE_FILE,
    RunSummary,
    finished_summary,
    resumable,
    safe_folder_name,
)
from automl_engine.runner import run
from automl_engine.tasks import load_task_data

PLAN_FILE = "ablation.json"
CELL_FILE = "cell.json"
CURVE_FILE = "curve.csv"
#: The columns of results.csv after ``variant`` and one column per varied recipe key.
RESULT_COLUMNS = (
    "task",
    "seed",
    "status",
    "metric",
    "validation_loss",
    "test_loss",
    "test_score",
    "normalised_regret",
    "n_trials",
    "seconds",
    "stopped",
    "curve",
    "run_dir",
    "error",
)
#: A cell may take this multiple of the recipe's wall time, plus CELL_GRACE_S, before the
#: executor stops it (loading data, the final refit and a peer's own overrun fit inside).
CELL_TIME_FACTOR = 2.0
CELL_GRACE_S = 120.0


# ---------------------------------------------------------------------------------------------
# The grid
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """One column of the comparison: recipe overrides (``(key, value text)`` pairs), or a
    whole-system ``peer`` run on the recipe's task and budget, built with ``peer_params``."""

    label: str
    overrides: tuple[tuple[str, str], ...] = ()
    peer: str | None = None
    peer_params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Cell:
    """One run of the grid, and its folder relative to the ablation's output folder."""

    variant: Variant
    task: SuiteTask
    seed: int

    @property
    def folder(self) -> str:
        return f"cells/{_slug(self.variant.label)}/{_slug(self.task.label)}/seed-{self.seed}"


def parse_vary(values: Sequence[str]) -> list[tuple[str, list[str]]]:
    """``["search.name=smbo,mcts"]`` -> ``[("search.name", ["smbo", "mcts"])]``."""
    varied: list[tuple[str, list[str]]] = []
    for value in values:
        key, sep, text = value.partition("=")
        options = [option.strip() for option in text.split(",")]
        if not sep or not key.strip() or not all(options):
            raise RecipeError("--vary", value, "KEY=V1,V2,..., e.g. search.name=smbo,mcts")
        if key.strip() in (k for k, _ in varied):
            raise RecipeError("--vary", value, f"each key once ({key.strip()!r} is repeated)")
        if len(set(options)) != len(options):
            raise RecipeError("--vary", value, "distinct values")
        varied.append((key.strip(), options))
    return varied


def make_variants(
    varied: Sequence[tuple[str, list[str]]],
    peers: Sequence[str],
    named: Sequence[str] = (),
    base_label: str = "recipe",
) -> list[Variant]:
    """Every combination of the varied values (the recipe itself, labelled ``base_label``,
    when nothing is varied), then one variant per ``named`` variant (see
    :func:`parse_variant`), then one per peer."""
    keys = [key for key, _ in varied]
    variants = [
        Variant(
            " ".join(f"{key}={value}" for key, value in zip(keys, values, strict=True))
            or base_label,
            tuple(zip(keys, values, strict=True)),
        )
        for values in itertools.product(*(options for _, options in varied))
    ]
    variants += [parse_variant(value) for value in named]
    peer_variants = [parse_peer(peer) for peer in peers]
    labels = [variant.label for variant in peer_variants]
    if len(set(labels)) != len(labels):
        raise AutoMLError(f"--peer lists a system twice: {labels}")
    labels = [variant.label for variant in variants + peer_variants]
    if len(set(labels)) != len(labels):
        raise AutoMLError(f"two variants have the same label: {labels}")
    return variants + peer_variants


def parse_variant(value: str) -> Variant:
    """``"+portfolio {warmstart: portfolio}"`` (a label, then a YAML mapping of recipe keys,
    dotted as in ``--set``, to values) -> one variant of the base recipe with those values.
    Unlike ``--vary``, whose values combine, each named variant changes the base recipe on
    its own: the one-factor-at-a-time ablation (``+caruana``, ``+portfolio``, ``smbo``)."""
    label, _, text = value.strip().partition(" ")
    try:
        changes = yaml.safe_load(text) if text.strip() else None
    except yaml.YAMLError as error:
        raise RecipeError("--variant", value, f"a YAML mapping after the label ({error})") from None
    if not label or not isinstance(changes, dict) or not changes:
        raise RecipeError(
            "--variant",
            value,
            "'LABEL {key: value, ...}', e.g. '+caruana {ensemble: {name: caruana}}'",
        )
    overrides = tuple((str(key), _flow_yaml(v)) for key, v in changes.items())
    return Variant(label, overrides)


def _flow_yaml(value: Any) -> str:
    """``value`` as one line of YAML, the form a ``--set`` value takes."""
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("\n...").strip()


def parse_peer(value: str) -> Variant:
    """``"flaml"`` or ``"tpot {cv: 3, population_size: 20}"`` (a name, then its parameters as
    a YAML mapping) -> the peer's variant, labelled ``tpot(cv=3, population_size=20)``."""
    name, _, text = value.strip().partition(" ")
    params = yaml.safe_load(text) if text.strip() else {}
    if not name or not isinstance(params, dict):
        raise RecipeError("--peer", value, "SYSTEM or 'SYSTEM {param: value, ...}'")
    label = f"{name}({', '.join(f'{k}={v}' for k, v in params.items())})" if params else name
    return Variant(label, peer=name, peer_params=params)


#: The keys of the base recipe's ``task`` that every cell keeps; the suite task sets the rest.
KEPT_TASK_KEYS = ("metric", "resampling")
#: In a variant's values, the cell's dataset: a leave-one-dataset-out ablation of a component
#: fitted on meta-data that holds the suite's datasets names the one to leave out, e.g.
#: ``'knd-metabu {metafeatures: {name: metabu, params: {exclude: ["{dataset}"]}}}'``.
DATASET_PLACEHOLDER = "{dataset}"


def plan_cells(
    variants: Sequence[Variant], tasks: Sequence[SuiteTask], seeds: Sequence[int]
) -> list[Cell]:
    """The grid, task by task and seed by seed, so that a partial ablation already compares
    every variant on the tasks it reached."""
    return [Cell(variant, task, seed) for task in tasks for seed in seeds for variant in variants]


def cell_recipe(base: dict[str, Any], cell: Cell) -> dict[str, Any]:
    """The recipe of a cell: the base recipe with the variant's overrides, the suite task's
    ``task`` section and the cell's seed."""
    dataset = str(cell.task.task.get("dataset", cell.task.label))
    overrides = [f"{key}={with_dataset(value, dataset)}" for key, value in cell.variant.overrides]
    raw = apply_overrides(base, overrides)
    if cell.task.is_benchmark:
        raw["task"] = dict(cell.task.task)
        raw.pop("space", None)  # a benchmark's pool is the space
    else:
        kept = {k: v for k, v in (raw.get("task") or {}).items() if k in KEPT_TASK_KEYS}
        raw["task"] = {**kept, **cell.task.task}
    raw["seed"] = cell.seed
    raw["name"] = f"{raw.get('name', 'ablation')}-{_slug(cell.variant.label)}"
    return raw


def with_dataset(value: str, dataset: str) -> str:
    """A variant's value (YAML text) with :data:`DATASET_PLACEHOLDER` in its strings replaced
    by ``dataset``; the text itself when it holds none."""
    if DATASET_PLACEHOLDER not in value:
        return value
    return _flow_yaml(_substitute(yaml.safe_load(value), dataset))


def _substitute(value: Any, dataset: str) -> Any:
    if isinstance(value, str):
        return value.replace(DATASET_PLACEHOLDER, dataset)
    if isinstance(value, dict):
        return {key: _substitute(item, dataset) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(item, dataset) for item in value]
    return value


def _replaced_by_cells(key: str) -> bool:
    """Whether :func:`cell_recipe` overwrites the recipe key ``key`` in every cell."""
    parts = key.split(".")
    if parts[0] in ("seed", "name"):
        return True
    return parts[0] == "task" and (len(parts) == 1 or parts[1] not in KEPT_TASK_KEYS)


def check_cells(base: dict[str, Any], cells: Sequence[Cell], plugins: Plugins) -> None:
    """Parse every cell's recipe and resolve its names before anything runs, so that a typo in
    a ``--vary`` value fails at once with the variant and task it is in."""
    checked: set[tuple[str, bool]] = set()
    for cell in cells:
        key = (cell.variant.label, cell.task.is_benchmark)
        if key in checked:
            continue
        checked.add(key)
        where = f"variant {cell.variant.label!r} on task {cell.task.label!r}"
        replaced = [key for key, _ in cell.variant.overrides if _replaced_by_cells(key)]
        if replaced:
            raise AutoMLError(
                f"variant {cell.variant.label!r} sets {', '.join(replaced)}, which every cell "
                "takes from its suite task and seed (only task.metric and task.resampling of "
                "the recipe's task are kept): vary the suite or --seeds instead"
            )
        try:
            recipe = parse_recipe(cell_recipe(base, cell))
            if cell.variant.peer is None:
                check_names(recipe, plugins)
                continue
            plugins.create("system", cell.variant.peer, cell.variant.peer_params)
        except (AutoMLError, ValueError) as error:  # ValueError: a system's bad parameter
            raise AutoMLError(f"{where}: {error}") from None
        if cell.task.is_benchmark:
            raise AutoMLError(f"{where}: a peer runs on datasets, not on table-lookup benchmarks")
        if recipe.budget.wall_time is None:
            raise AutoMLError(f"{where}: a peer needs the recipe's budget.wall_time")


# ---------------------------------------------------------------------------------------------
# One cell
# ---------------------------------------------------------------------------------------------


@dataclass
class CellEvaluator(Evaluator):
    """Evaluates cells as an executor evaluates trials: ``trial.config["cell"]`` is the index
    of the cell in ``cells``. Picklable (no plugin manager inside; each process loads the
    plugins once), so that cells can run in worker processes."""

    base: dict[str, Any]
    cells: list[Cell]
    out_dir: Path
    _plugins: Plugins | None = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_plugins": None}

    def evaluate(self, trial: Trial) -> Result:
        cell = self.cells[int(trial.config["cell"])]
        started = time.monotonic()
        try:
            row = run_cell(self.base, cell, self.out_dir, self.plugins)
        except Exception as error:  # a cell's failure is its row, not the ablation's end
            folder = self.out_dir / cell.folder
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "error.txt").write_text(traceback.format_exc())
            row = failed_row(cell, f"{type(error).__name__}: {error}".splitlines()[0])
        write_json(self.out_dir / cell.folder / CELL_FILE, row)
        loss = row["test_loss"] if row["test_loss"] is not None else row["validation_loss"]
        status = Status.OK if row["status"] == "ok" else Status.CRASHED
        return Result(
            status,
            math.inf if loss is None else float(loss),
            duration=time.monotonic() - started,
            error=row["error"] or None,
            info={"row": row},
        )

    @property
    def plugins(self) -> Plugins:
        if self._plugins is None:
            self._plugins = load_plugins()
        return self._plugins


def run_cell(base: dict[str, Any], cell: Cell, out_dir: Path, plugins: Plugins) -> dict[str, Any]:
    """Run one cell into its folder and return its row of results.csv."""
    folder = out_dir / cell.folder
    raw = cell_recipe(base, cell)
    if cell.variant.peer is not None:
        return _run_peer(raw, cell, folder, out_dir, plugins)
    summary = finished_summary(folder)
    if summary is None:
        resume = resumable(folder)
        summary = run(parse_recipe(raw), folder, plugins=plugins, resume=resume)
    write_curve(folder / CURVE_FILE, _history_curve(folder / HISTORY_FILE))
    return _run_row(cell, summary, out_dir)


def _run_row(cell: Cell, summary: RunSummary, out_dir: Path) -> dict[str, Any]:
    test_score = test_loss = None
    if summary.test_scores and summary.metric in summary.test_scores:
        test_score = summary.test_scores[summary.metric]
        test_loss = get_metric(summary.metric).loss_of_score(test_score)
    regret = (summary.benchmark or {}).get("normalised_regret")
    failed = summary.best_loss is None
    return {
        **_keys(cell),
        "status": "error" if failed else "ok",
        "metric": summary.metric,
        "validation_loss": summary.best_loss,
        "test_loss": test_loss,
        "test_score": test_score,
        "normalised_regret": regret,
        "n_trials": summary.n_trials,
        "seconds": summary.elapsed,
        "stopped": summary.stopped_because,
        "curve": f"{cell.folder}/{CURVE_FILE}",
        "run_dir": cell.folder,
        "error": "no trial succeeded" if failed else "",
    }


def _run_peer(
    raw: dict[str, Any], cell: Cell, folder: Path, out_dir: Path, plugins: Plugins
) -> dict[str, Any]:
    """Fit the peer system on the cell's training rows; score it on the test rows."""
    assert cell.variant.peer is not None
    recipe = parse_recipe(raw)
    dataset, train, test, metric = load_task_data(recipe, plugins)
    if test is None:
        raise AutoMLError(f"task {cell.task.label!r} has no test rows (set test_size)")
    classes = np.unique(np.asarray(dataset.y)) if dataset.task == "classification" else None
    system: System = plugins.create("system", cell.variant.peer, cell.variant.peer_params)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RECIPE_FILE).write_text(yaml.safe_dump(raw, sort_keys=False))
    assert recipe.budget.wall_time is not None
    started = time.monotonic()
    result: SystemResult = system.fit(
        train.X,
        _encoded(train.y, classes),
        task=dataset.task,
        metric=metric,
        time_budget=recipe.budget.wall_time,
        seed=recipe.seed,
        n_jobs=_cores(recipe, plugins),
        workdir=folder,
    )
    seconds = time.monotonic() - started
    y_test = _encoded(test.y, classes)
    if classes is not None:  # the model's classes_ placed among all the dataset's classes
        predictions = predict_scores(result.model, test.X, len(classes))
    else:
        predictions = np.asarray(result.model.predict(test.X), dtype=float)
    test_loss = metric.loss(y_test, predictions)
    write_curve(folder / CURVE_FILE, result.curve)
    write_json(
        folder / "peer.json",
        {"params": cell.variant.peer_params, "info": result.info, "seconds": seconds},
    )
    return {
        **_keys(cell),
        "status": "ok",
        "metric": metric.name,
        "validation_loss": result.validation_loss,
        "test_loss": test_loss,
        "test_score": metric.score_of_loss(test_loss),
        "normalised_regret": None,
        "n_trials": len(result.curve),
        "seconds": seconds,
        "stopped": "time budget",
        "curve": f"{cell.folder}/{CURVE_FILE}",
        "run_dir": cell.folder,
        "error": "",
    }


def _cores(recipe: Recipe, plugins: Plugins) -> int:
    """The cores a run of the recipe uses: its executor's ``workers``, as the recipe sets it or
    by the executor's default (1 for executors without workers, such as ``sequential``)."""
    ref = recipe.executor
    workers = ref.params.get(
        "workers", plugins.get("executor", ref.name).parameters().get("workers")
    )
    return int(workers or 1)


def _encoded(y: np.ndarray, classes: np.ndarray | None) -> np.ndarray:
    """Class labels as ``0..k-1`` in the order of ``classes`` (all the dataset's classes, so
    that train and test agree); regression targets as floats."""
    if classes is None:
        return np.asarray(y, dtype=float)
    return np.searchsorted(classes, np.asarray(y))


def failed_row(cell: Cell, error: str) -> dict[str, Any]:
    """The row of a cell that raised or was stopped."""
    row: dict[str, Any] = dict.fromkeys(RESULT_COLUMNS)
    row.update(_keys(cell))
    row.update(status="error", run_dir=cell.folder, error=error, curve="")
    return row


def _keys(cell: Cell) -> dict[str, Any]:
    return {
        "variant": cell.variant.label,
        **dict(cell.variant.overrides),
        "task": cell.task.label,
        "seed": cell.seed,
    }


def _history_curve(path: Path) -> list[tuple[float, float]]:
    """``(seconds since the run began, loss)`` of every finished trial at the largest budget
    the run used, in finishing order: losses at smaller budgets of a multi-fidelity search
    are not comparable with them (the rule of :func:`automl_engine.history.rank_key`)."""
    with RunHistory(path, read_only=True) as history:
        began = float(history.get_meta("started_at"))  # written before the first trial
        finished = history.trials(finished_only=True)
    full = min((rank_key(stored)[0] for stored in finished), default=0.0)  # -largest budget
    finished = [stored for stored in finished if rank_key(stored)[0] == full]
    times = [float(stored.finished_at or began) for stored in finished]
    order = np.argsort(times, kind="stable")
    return [(times[i] - began, float(finished[i].loss)) for i in order]


def write_json(path: Path, value: Any) -> None:
    _write_whole(path, json.dumps(value, indent=2, default=str))


def _write_whole(path: Path, text: str) -> None:
    """Written atomically, so that a killed ablation never leaves half a cell.json (or
    results.csv) that a re-run or a reader would have to tell from a whole one."""
    write_atomically(path, lambda tmp: tmp.write_text(text))


# ---------------------------------------------------------------------------------------------
# The whole ablation
# ---------------------------------------------------------------------------------------------


@dataclass
class AblationSummary:
    out_dir: str
    cells: int
    skipped: int
    failed: int
    elapsed: float
    results: str


def ablate(
    base: dict[str, Any],
    out_dir: str | Path,
    *,
    varied: Sequence[tuple[str, list[str]]],
    peers: Sequence[str] = (),
    named: Sequence[str] = (),
    tasks: Sequence[SuiteTask],
    seeds: Sequence[int],
    jobs: int = 1,
    cell_executor: str | None = None,
    cell_time: float | None = None,
    plugins: Plugins | None = None,
    on_cell: Callable[[dict[str, Any], bool], None] | None = None,
    base_label: str = "recipe",
) -> AblationSummary:
    """Run the grid of ``base`` x ``varied`` (+ ``named`` variants, + ``peers``) x ``tasks``
    x ``seeds`` into
    ``out_dir``; see the module docstring. ``jobs`` cells run at once through
    ``cell_executor`` (default: in this process for one job, else ``processes``), each
    stopped after ``cell_time`` seconds by executors that enforce limits (default: twice the
    recipe's wall time plus two minutes; none without a wall time). ``on_cell(row,
    skipped)`` is told every cell's row as it is known. ``base_label``: the label of the
    recipe's own variant (when nothing is varied)."""
    started = time.monotonic()
    plugins = plugins or load_plugins()
    out_dir = Path(out_dir)
    variants = make_variants(varied, peers, named, base_label)
    cells = plan_cells(variants, tasks, seeds)
    check_cells(base, cells, plugins)
    _check_plan(out_dir, base, variants)
    rows: dict[int, dict[str, Any]] = {}
    for index, cell in enumerate(cells):
        row = _finished_row(out_dir / cell.folder)
        if row is not None:
            rows[index] = row
            if on_cell:
                on_cell(row, True)
    skipped = len(rows)
    todo = [index for index in range(len(cells)) if index not in rows]
    columns = ["variant", *(key for key, _ in varied), *RESULT_COLUMNS]
    write_results(out_dir / RESULTS_FILE, columns, [rows[i] for i in sorted(rows)])
    if todo:
        executor = _cell_executor(plugins, jobs, cell_executor)
        executor.set_limits(cell_time or _default_cell_time(base), None)
        evaluator = CellEvaluator(base, cells, out_dir, plugins)
        try:
            for index, row in _run_cells(executor, evaluator, todo):
                rows[index] = row
                write_results(out_dir / RESULTS_FILE, columns, [rows[i] for i in sorted(rows)])
                if on_cell:
                    on_cell(row, False)
        finally:
            executor.shutdown()
    return AblationSummary(
        out_dir=str(out_dir),
        cells=len(cells),
        skipped=skipped,
        failed=sum(row["status"] != "ok" for row in rows.values()),
        elapsed=time.monotonic() - started,
        results=str(out_dir / RESULTS_FILE),
    )


def _check_plan(out_dir: Path, base: dict[str, Any], variants: Sequence[Variant]) -> None:
    """Record the base recipe and what each variant label stands for; refuse a folder that
    holds an ablation of another recipe, or a label that stood for other overrides there:
    their finished cells would be reused as if they were this command's."""
    path = out_dir / PLAN_FILE
    normalised = json.loads(json.dumps(base, default=str))
    defined = {v.label: _definition(v) for v in variants}
    plan: dict[str, Any] = {"recipe": normalised, "created_at": time.time(), "variants": {}}
    if path.is_file():
        plan = json.loads(path.read_text())
        if plan.get("recipe") != normalised:
            raise AutoMLError(
                f"{out_dir} holds an ablation of another recipe ({PLAN_FILE}); its finished "
                "cells would not be comparable: choose another --out, or use the same recipe"
            )
        for label, definition in defined.items():
            before = plan.get("variants", {}).get(label)
            if before is not None and before != definition:
                raise AutoMLError(
                    f"variant {label!r} stood for {before} in {out_dir} ({PLAN_FILE}), now for "
                    f"{definition}: its finished cells would be reused as this one's. Give "
                    "the variant another label, or choose another --out"
                )
    plan["variants"] = {**plan.get("variants", {}), **defined}
    write_json(path, plan)


def _definition(variant: Variant) -> dict[str, Any]:
    """What a variant label stands for, as plain data (stored in the plan)."""
    definition = json.loads(
        json.dumps(
            {
                "overrides": [list(pair) for pair in variant.overrides],
                "peer": variant.peer,
                "peer_params": variant.peer_params,
            },
            default=str,
        )
    )
    return dict(definition)


def _finished_row(folder: Path) -> dict[str, Any] | None:
    """The stored row of a cell that finished well; None for one to run (again)."""
    path = folder / CELL_FILE
    if not path.is_file():
        return None
    try:
        row = json.loads(path.read_text())
    except ValueError:
        return None
    return row if isinstance(row, dict) and row.get("status") == "ok" else None


def _cell_executor(plugins: Plugins, jobs: int, name: str | None) -> Executor:
    if jobs < 1:
        raise AutoMLError(f"--jobs must be at least 1, got {jobs}")
    name = name or ("sequential" if jobs == 1 else "processes")
    params = {} if name == "sequential" else {"workers": jobs}
    executor: Executor = plugins.create("executor", name, params)
    return executor


def _default_cell_time(base: dict[str, Any]) -> float | None:
    wall_time = (base.get("budget") or {}).get("wall_time")
    return float(wall_time) * CELL_TIME_FACTOR + CELL_GRACE_S if wall_time else None


def _run_cells(
    executor: Executor, evaluator: CellEvaluator, todo: list[int]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Keep ``executor.capacity`` cells in flight; yield ``(index, row)`` as they finish."""
    queue = list(reversed(todo))
    running: dict[Future[Result], int] = {}
    while queue or running:
        while queue and len(running) < max(1, executor.capacity):
            index = queue.pop()
            running[executor.submit(evaluator, Trial(index, {"cell": index}))] = index
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:
            index = running.pop(future)
            yield index, _row_of(future, evaluator.cells[index], evaluator.out_dir)


def _row_of(future: Future[Result], cell: Cell, out_dir: Path) -> dict[str, Any]:
    """The row a finished cell wrote, or a failed row when its worker was stopped (time
    limit, crash) before it could write one."""
    try:
        result = future.result()
    except Exception as error:
        row = failed_row(cell, f"{type(error).__name__}: {error}")
    else:
        if result.info.get("row"):  # the cell wrote it itself
            return dict(result.info["row"])
        row = failed_row(cell, f"{result.status.value}: {result.error}")
    write_json(out_dir / cell.folder / CELL_FILE, row)
    return row


def write_results(path: Path, columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
    """results.csv: one row per known cell, written whole each time."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(columns), extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if row.get(key) is None else row[key] for key in columns})
    _write_whole(path, text.getvalue())


def _slug(label: str) -> str:
    """A folder name for a variant or task label: ``search.name=mcts`` ->
    ``search.name-mcts``, ``keel:german`` -> ``keel-german``."""
    return safe_folder_name(label.replace("=", "-").replace(" ", "_").replace(":", "-"))
