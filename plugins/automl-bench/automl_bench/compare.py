"""The statistics behind ``automl compare``: ranking variants of a recipe over many tasks.

An ablation writes ``results.csv``, one row per *cell* (one variant on one task with one seed).
This module turns that table into the numbers a reader needs to decide whether a variant is
better, following Demšar (2006), "Statistical comparisons of classifiers over multiple data
sets": losses are compared *per task* (ranks, normalised scores, wins/ties/losses, the Wilcoxon
signed-rank test between two variants with Holm's correction over the pairs, the Friedman and
Iman–Davenport tests and the Nemenyi critical difference between all of them), because losses
of different tasks are on different scales and only their order on each task is comparable.

It also builds *anytime* curves: how good each variant's best configuration was after so many
seconds or trials, as a regret normalised per task so that tasks can be averaged.

Everything here is pure computation on numpy arrays (``report.py`` draws and writes).
Conventions: losses are lower-is-better; a variant's loss on a task is its mean final loss over
its successful seeds, rounded once to a multiple of the tie resolution, so that two variants tie
on a task exactly when their rounded losses are equal (in every statistic alike); arrays of
per-task losses are ``(n_tasks, n_variants)``. The *task* is the unit of every statistic: seeds
are averaged within a task first.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from automl_core.errors import AutoMLError
from automl_engine.metrics import normalised_regret

RESULTS_FILE = "results.csv"
#: The columns of a curve file: when each configuration finished (seconds since its cell
#: began), its index in finishing order, and its validation loss.
CURVE_COLUMNS = ("seconds", "trial", "loss")
#: Columns ``results.csv`` must have for the report.
REQUIRED_COLUMNS = ("variant", "task", "seed", "status", "validation_loss", "test_loss")
#: Numeric columns the report uses, parsed as floats; an empty field is missing (NaN).
NUMERIC_COLUMNS = ("validation_loss", "test_loss", "seconds")
#: Text columns the report uses, read as strings; an empty field is "". Only ``variant``,
#: ``task`` and ``status`` are required; the others are "" when absent, and what needs them
#: is left out of the report. No other column is read or checked.
TEXT_COLUMNS = ("variant", "task", "status", "metric", "error", "curve")
STATUSES = ("ok", "error")
#: Default tie resolution: per-task mean losses are rounded to multiples of it. Losses of
#: metrics such as balanced accuracy are fractions of a test set that rarely exceeds 10^5 rows,
#: so real differences are larger than 10^-5, while the noise of averaging floats is below
#: 10^-12.
DEFAULT_TIE = 1e-6
DEFAULT_ALPHA = 0.05
#: Points of the log-spaced time grid of anytime curves.
GRID_POINTS = 100

Axis = Literal["seconds", "trials"]


# ---------------------------------------------------------------------------------------------
# Reading results.csv
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Results:
    """The rows of one ``results.csv``, checked and typed.

    ``rows`` has the columns of :data:`NUMERIC_COLUMNS` (float, NaN when missing) and
    :data:`TEXT_COLUMNS` (str, "" when missing), ``seed`` as int, and ``loss``: the final loss
    of the cell (``test_loss``, else ``validation_loss`` for table-lookup tasks, which have no
    test split; NaN for failed cells). ``line`` is the row's line number in the file, for
    messages.
    """

    path: Path
    rows: pd.DataFrame
    #: Variant labels in order of first appearance in the file: the order of every table.
    variants: tuple[str, ...]

    @property
    def directory(self) -> Path:
        """The folder the relative paths of the file (curves) start from."""
        return self.path.parent

    @property
    def ok(self) -> pd.DataFrame:
        """The successful cells: the only ones statistics are computed on."""
        return self.rows[self.rows["status"] == "ok"]

    @property
    def failed(self) -> pd.DataFrame:
        """The cells that ended on an error."""
        return self.rows[self.rows["status"] != "ok"]

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics named in the file, sorted (none when the column is absent)."""
        return tuple(sorted({m for m in self.rows["metric"] if m}))


def read_results(path: Path) -> Results:
    """Read and check ``results.csv`` (``path`` is the file or the folder holding it).

    Checks are done here, once, so that every statistic can trust its input, and so that a
    broken file is reported with its name, the column and the line rather than as a numpy error
    deep in a test statistic. Only the columns the report uses are read.
    """
    path = Path(path)
    csv_path = path / RESULTS_FILE if path.is_dir() else path
    if not csv_path.is_file():
        raise AutoMLError(f"{csv_path}: no such file; expected the results.csv of an ablation")
    try:
        raw = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise AutoMLError(f"{csv_path}: not a readable CSV file ({e})") from e
    missing = [c for c in REQUIRED_COLUMNS if c not in raw.columns]
    if missing:
        raise AutoMLError(
            f"{csv_path}: missing column(s) {', '.join(missing)}; "
            f"results.csv needs {', '.join(REQUIRED_COLUMNS)}"
        )
    if raw.empty:
        raise AutoMLError(f"{csv_path}: the table has a header but no rows")
    rows = _typed_rows(raw, csv_path)
    return Results(csv_path, rows, tuple(dict.fromkeys(rows["variant"])))


def _typed_rows(raw: pd.DataFrame, csv_path: Path) -> pd.DataFrame:
    """The used columns, typed, and the final ``loss``; raises on the first bad value."""
    rows = pd.DataFrame({"line": np.arange(len(raw)) + 2})  # line 1 is the header
    for column in TEXT_COLUMNS:
        values = raw[column] if column in raw.columns else [""] * len(raw)
        rows[column] = [str(v).strip() for v in values]
    rows["status"] = rows["status"].str.lower()
    for column in NUMERIC_COLUMNS:
        if column in raw.columns:
            rows[column] = [_number(v, column, line, csv_path) for line, v in _lines(raw[column])]
        else:
            rows[column] = np.nan
    rows["seed"] = [_integer(v, "seed", line, csv_path) for line, v in _lines(raw["seed"])]
    for line, variant, task, status in zip(
        rows["line"], rows["variant"], rows["task"], rows["status"], strict=True
    ):
        if not variant or not task:
            raise AutoMLError(f"{csv_path}, line {line}: empty variant or task")
        if status not in STATUSES:
            raise AutoMLError(
                f"{csv_path}, line {line}: status {status!r}; expected one of {', '.join(STATUSES)}"
            )
    final = rows["test_loss"].where(rows["test_loss"].notna(), rows["validation_loss"])
    rows["loss"] = final.where(rows["status"] == "ok", np.nan)
    for line, status, loss in zip(rows["line"], rows["status"], rows["loss"], strict=True):
        if status == "ok" and not math.isfinite(loss):
            raise AutoMLError(
                f"{csv_path}, line {line}: an ok row needs a finite test_loss or "
                f"validation_loss, got {loss}"
            )
    return rows


def _lines(column: pd.Series) -> zip[tuple[int, str]]:
    """(line number in the file, field) of each value of a column."""
    return zip(range(2, len(column) + 2), column, strict=True)


def _number(value: str, column: str, line: int, csv_path: Path) -> float:
    """A float from a CSV field ("" is missing: NaN)."""
    value = value.strip()
    if not value:
        return math.nan
    try:
        return float(value)
    except ValueError:
        raise AutoMLError(
            f"{csv_path}, line {line}: column {column} has {value!r}, expected a number"
        ) from None


def _integer(value: str, column: str, line: int, csv_path: Path) -> int:
    """An int from a CSV field (required)."""
    try:
        return int(value.strip())
    except ValueError:
        raise AutoMLError(
            f"{csv_path}, line {line}: column {column} has {value!r}, expected an integer"
        ) from None


# ---------------------------------------------------------------------------------------------
# Per-task losses
# ---------------------------------------------------------------------------------------------


def mean_losses(results: Results, failed: FailedCells = "drop") -> pd.DataFrame:
    """Mean final loss over seeds per task (rows, in file order) and variant (columns); NaN
    where a variant has no cell counted on a task.

    ``failed="drop"`` counts the successful cells only: a task where a variant only failed
    is then left out of every statistic (:func:`complete_tasks`). ``failed="last"`` counts a
    failed cell as the worst loss any variant reached on that task and seed: a system that
    failed lost that task (the AutoML Benchmark likewise scores a failure, as a constant
    predictor), instead of the task vanishing from the comparison of everyone else. A cell
    not run (no row) is never counted."""
    rows = results.ok
    if failed == "last":
        rows = pd.concat([rows, last_place_losses(results)])
    table = rows.pivot_table(index="task", columns="variant", values="loss", aggfunc="mean")
    tasks = list(dict.fromkeys(results.rows["task"]))
    return table.reindex(index=tasks, columns=list(results.variants))


#: What a failed cell counts as: nothing (``drop``) or the task's worst loss (``last``).
FailedCells = Literal["drop", "last"]


def last_place_losses(results: Results) -> pd.DataFrame:
    """The failed cells, each with the worst successful loss of its task and seed as its
    loss (none where no cell of that task and seed succeeded)."""
    worst = results.ok.groupby(["task", "seed"])["loss"].max()
    failed = results.failed.copy()
    keys = pd.MultiIndex.from_frame(failed[["task", "seed"]])
    failed["loss"] = worst.reindex(keys).to_numpy()
    return failed[failed["loss"].notna()]


def complete_tasks(means: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """The tasks every variant has a loss on, and why each other task was dropped.

    Ranks compare variants *on the same tasks*: a task some variant never finished would rank
    the others among fewer competitors, so it is left out of every statistic.
    """
    dropped: dict[str, str] = {}
    for task, row in means.iterrows():
        missing = [str(v) for v, loss in row.items() if pd.isna(loss)]
        if missing:
            dropped[str(task)] = "no successful cell for " + ", ".join(missing)
    return means.drop(index=list(dropped)), dropped


# ---------------------------------------------------------------------------------------------
# Ranks and scores. Every function below compares losses exactly: :func:`compare` rounds them
# to the tie resolution first, so that equal means tied everywhere.
# ---------------------------------------------------------------------------------------------


def task_ranks(losses: np.ndarray) -> np.ndarray:
    """Rank of each variant on each task: 1 for the lowest loss; equal losses share the
    average rank."""
    return np.asarray(stats.rankdata(losses, axis=1), dtype=float)


def mean_ranks(losses: np.ndarray) -> np.ndarray:
    """Mean rank of each variant over the tasks (the statistic of the Friedman test)."""
    return task_ranks(losses).mean(axis=0)


def normalised_scores(losses: np.ndarray) -> np.ndarray:
    """Mean over tasks of ``(worst - loss) / (worst - best)``: 1 for the best variant on a
    task, 0 for the worst, 1 for all when all are equal. Unlike ranks, it says *how much*
    better, on a scale comparable across tasks."""
    best = losses.min(axis=1, keepdims=True)
    worst = losses.max(axis=1, keepdims=True)
    spread = worst - best
    scores = np.where(spread > 0, (worst - losses) / np.where(spread > 0, spread, 1), 1.0)
    return np.asarray(scores.mean(axis=0), dtype=float)


# ---------------------------------------------------------------------------------------------
# Pairwise comparisons
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairComparison:
    """Variant ``a`` against variant ``b`` over the ranked tasks."""

    a: str
    b: str
    #: Tasks where ``a``'s loss is lower, equal and higher than ``b``'s.
    wins: int
    ties: int
    losses: int
    #: Two-sided Wilcoxon signed-rank p-value; None when it is undefined (fewer than 2 tasks,
    #: or every task a tie).
    p_value: float | None
    #: ``p_value`` adjusted by Holm's method over every pair with a p-value.
    p_holm: float | None


def win_tie_loss(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int]:
    """Tasks where ``a`` has a lower, equal and higher loss than ``b``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return int(np.sum(a < b)), int(np.sum(a == b)), int(np.sum(a > b))


def wilcoxon_p(a: np.ndarray, b: np.ndarray) -> float | None:
    """Two-sided Wilcoxon signed-rank p-value of the per-task losses of two variants.

    Tied tasks are dropped (scipy's default ``wilcox`` zero method). The test is undefined,
    and None is returned, with fewer than 2 tasks or when every task is a tie.
    """
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if len(diff) < 2 or not np.any(diff):
        return None
    p = float(stats.wilcoxon(diff).pvalue)
    return p if math.isfinite(p) else None


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of a family of p-values (None, an undefined test, is not
    counted in the family and stays None): the i-th smallest of m p-values is multiplied by
    ``m - i + 1``, then made non-decreasing and capped at 1. Rejecting where the adjusted
    value is below alpha bounds the chance of any false rejection by alpha."""
    defined = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(defined):
        running = max(running, min(1.0, (len(defined) - rank) * p))
        adjusted[i] = running
    return adjusted


def pairwise(losses: np.ndarray, variants: Sequence[str]) -> list[PairComparison]:
    """Every pair of variants (in the order of ``variants``), compared task by task, with
    Holm-adjusted Wilcoxon p-values over the pairs."""
    pairs = list(combinations(range(len(variants)), 2))
    p_values = [wilcoxon_p(losses[:, i], losses[:, j]) for i, j in pairs]
    return [
        PairComparison(variants[i], variants[j], *win_tie_loss(losses[:, i], losses[:, j]), p, q)
        for (i, j), p, q in zip(pairs, p_values, holm(p_values), strict=True)
    ]


# ---------------------------------------------------------------------------------------------
# Friedman test and Nemenyi critical difference
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Friedman:
    """The Friedman test that all variants perform alike, and Iman and Davenport's F form of
    it, which Demšar (2006) recommends over the chi-square approximation (Iman and Davenport
    1980 found that one too conservative)."""

    chi2: float
    p_value: float
    #: ``(N - 1) chi2 / (N (k - 1) - chi2)``, F-distributed with ``(k - 1, (k - 1)(N - 1))``
    #: degrees of freedom (infinite when every task ranks the variants alike).
    f: float
    f_p_value: float
    df: tuple[int, int]


def friedman(losses: np.ndarray) -> Friedman | None:
    """The Friedman and Iman–Davenport tests of ``losses``; None when they are undefined:
    fewer than 3 variants (scipy's test needs 3; use the Wilcoxon p-value of the pair), fewer
    than 2 tasks, or every task a complete tie."""
    n_tasks, k = losses.shape
    if k < 3 or n_tasks < 2:
        return None
    ranks = task_ranks(losses)
    if np.all(ranks == ranks[:, :1]):
        return None
    result = stats.friedmanchisquare(*losses.T)
    chi2 = float(result.statistic)
    room = n_tasks * (k - 1) - chi2
    f = (n_tasks - 1) * chi2 / room if room > 0 else math.inf
    df = (k - 1, (k - 1) * (n_tasks - 1))
    return Friedman(chi2, float(result.pvalue), f, float(stats.f.sf(f, *df)), df)


def q_alpha(k: int, alpha: float = DEFAULT_ALPHA) -> float:
    """Nemenyi's critical value for ``k`` variants: the studentised range quantile over
    sqrt(2) (Demšar 2006, Table 5a: 1.960, 2.343, 2.569, 2.728 for k = 2..5 at alpha 0.05)."""
    if k < 2:
        raise ValueError(f"the Nemenyi test compares at least 2 variants, got {k}")
    return float(stats.studentized_range.ppf(1 - alpha, k, np.inf)) / math.sqrt(2)


def critical_difference(k: int, n_tasks: int, alpha: float = DEFAULT_ALPHA) -> float:
    """Nemenyi's critical difference: two mean ranks over ``n_tasks`` tasks that differ by
    at least this much are significantly different at level ``alpha``."""
    if n_tasks < 1:
        raise ValueError("the critical difference needs at least 1 task")
    return q_alpha(k, alpha) * math.sqrt(k * (k + 1) / (6 * n_tasks))


def cliques(ranks: np.ndarray, cd: float) -> list[tuple[int, ...]]:
    """Groups of variants not significantly different: maximal runs of variants, in order of
    mean rank, whose mean ranks differ by less than ``cd`` (the bars of a CD diagram).

    Returns indices into ``ranks``, each group sorted by rank, groups in order of their best
    member; single variants are not groups. A group inside another is left out.
    """
    order = [int(i) for i in np.argsort(ranks, kind="stable")]
    groups: list[tuple[int, ...]] = []
    for start in range(len(order)):
        end = start
        while end + 1 < len(order) and ranks[order[end + 1]] - ranks[order[start]] < cd:
            end += 1
        group = tuple(order[start : end + 1])
        if len(group) > 1 and not any(set(group) <= set(g) for g in groups):
            groups.append(group)
    return groups


# ---------------------------------------------------------------------------------------------
# The whole comparison
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """Every rank statistic of one ``results.csv``, on the tasks all variants finished."""

    results: Results
    #: The ranked tasks, in file order, and their per-task mean losses ``(tasks, variants)``,
    #: rounded to multiples of ``tie``.
    tasks: tuple[str, ...]
    losses: np.ndarray
    #: Task -> why it is not ranked.
    dropped_tasks: dict[str, str]
    #: How failed cells were counted, and ``(task, variant)`` of those counted last.
    failed: FailedCells
    counted_last: tuple[tuple[str, str], ...]
    #: All tasks (rows) by variants (columns), rounded like ``losses``; NaN where a variant has
    #: no successful cell.
    all_losses: pd.DataFrame
    mean_ranks: np.ndarray
    scores: np.ndarray
    pairs: list[PairComparison]
    alpha: float
    tie: float
    #: None when undefined (see :func:`friedman`).
    friedman: Friedman | None
    #: None with fewer than 2 variants.
    cd: float | None
    #: Groups of variant labels whose mean ranks differ by less than ``cd``.
    cliques: list[tuple[str, ...]]

    @property
    def variants(self) -> tuple[str, ...]:
        return self.results.variants


def compare(
    results: Results,
    *,
    alpha: float = DEFAULT_ALPHA,
    tie: float = DEFAULT_TIE,
    failed: FailedCells = "drop",
) -> Comparison:
    """Rank the variants of ``results`` on the tasks they all finished (``failed="drop"``)
    or, with ``failed="last"``, on the tasks they all ran, a failed cell counted as the
    task's worst loss (:func:`mean_losses`).

    The per-task mean losses are rounded once to multiples of ``tie``; every statistic then
    compares the rounded losses exactly (it works on the integer multiples, whose differences
    are exact, so ties in the Wilcoxon test's absolute differences are exact too).

    Raises AutoMLError when nothing can be ranked: every cell failed, or no task has a
    successful cell of every variant.
    """
    if not tie > 0:
        raise ValueError(f"the tie resolution must be positive, got {tie}")
    if results.ok.empty:
        first = results.failed.iloc[0]
        raise AutoMLError(
            f"{results.path}: all {len(results.rows)} cells failed, nothing to compare "
            f"(line {first['line']}: {first['error'] or 'no error text'})"
        )
    steps = (mean_losses(results, failed) / tie).round()
    counted_last = (
        tuple((str(t), str(v)) for t, v in last_place_losses(results)[["task", "variant"]].values)
        if failed == "last"
        else ()
    )
    kept, dropped = complete_tasks(steps)
    if kept.empty:
        reasons = "; ".join(f"{t}: {why}" for t, why in dropped.items())
        raise AutoMLError(
            f"{results.path}: no task has a successful cell of every variant ({reasons})"
        )
    variants = results.variants
    exact = kept.to_numpy(dtype=float)  # rank statistics are invariant to the scale
    ranks = mean_ranks(exact)
    cd = critical_difference(len(variants), len(kept), alpha) if len(variants) >= 2 else None
    groups = cliques(ranks, cd) if cd is not None else []
    return Comparison(
        results=results,
        tasks=tuple(str(t) for t in kept.index),
        losses=exact * tie,
        dropped_tasks=dropped,
        failed=failed,
        counted_last=tuple(dict.fromkeys(counted_last)),
        all_losses=steps * tie,
        mean_ranks=ranks,
        scores=normalised_scores(exact),
        pairs=pairwise(exact, variants),
        alpha=alpha,
        tie=tie,
        friedman=friedman(exact),
        cd=cd,
        cliques=[tuple(variants[i] for i in g) for g in groups],
    )


# ---------------------------------------------------------------------------------------------
# Curve files
# ---------------------------------------------------------------------------------------------


def write_curve(path: Path, curve: Sequence[tuple[float, float]]) -> None:
    """Write a curve file: ``(seconds, loss)`` of each configuration in finishing order, as
    :data:`CURVE_COLUMNS` (``trial`` is the index in that order)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(CURVE_COLUMNS)
        for index, (seconds, loss) in enumerate(curve):
            writer.writerow([f"{seconds:.3f}", index, repr(float(loss))])


def read_curve(path: Path) -> np.ndarray:
    """The ``(seconds, loss)`` rows of a curve file, sorted by finishing order (``trial``, or
    the file's order without it). Empty or non-numeric losses become inf (a failed
    configuration). Raises AutoMLError when the file cannot be used."""
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise AutoMLError("file not found") from None
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as e:
        raise AutoMLError(f"unreadable ({e})") from None
    except pd.errors.EmptyDataError:
        raise AutoMLError("empty file, no header") from None
    missing = [c for c in ("seconds", "loss") if c not in table.columns]
    if missing:
        raise AutoMLError(f"missing column(s) {', '.join(missing)}")
    seconds = pd.to_numeric(table["seconds"], errors="coerce").to_numpy(dtype=float)
    if not np.all(np.isfinite(seconds)):
        raise AutoMLError("a seconds value is not a number")
    losses = pd.to_numeric(table["loss"], errors="coerce").to_numpy(dtype=float)
    losses = np.where(np.isfinite(losses), losses, np.inf)
    order = np.arange(len(table))
    if "trial" in table.columns:
        trials = pd.to_numeric(table["trial"], errors="coerce").to_numpy(dtype=float)
        if np.all(np.isfinite(trials)):
            order = np.argsort(trials, kind="stable")
    return np.column_stack([seconds[order], losses[order]])


# ---------------------------------------------------------------------------------------------
# Anytime curves
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Curve:
    """The configurations one cell evaluated, in the order they finished."""

    variant: str
    task: str
    seed: int
    #: Seconds since the cell began when each configuration finished.
    seconds: np.ndarray
    #: Validation loss of each configuration; inf for a failed one.
    losses: np.ndarray


@dataclass(frozen=True)
class SkippedCurve:
    """A successful cell left out of the anytime curves, and why."""

    variant: str
    task: str
    seed: int
    path: str
    reason: str


def load_curves(results: Results, tasks: Sequence[str]) -> tuple[list[Curve], list[SkippedCurve]]:
    """The curves of the successful cells on ``tasks``, and the cells whose curve is missing
    or unreadable. A bad curve only costs that cell its curve: the final losses, and so the
    ranks, do not depend on it."""
    wanted = set(tasks)
    curves: list[Curve] = []
    skipped: list[SkippedCurve] = []
    for row in results.ok.to_dict("records"):
        variant, task, seed = str(row["variant"]), str(row["task"]), int(row["seed"])
        relative = str(row["curve"])
        if task not in wanted:
            continue
        if not relative:
            skipped.append(SkippedCurve(variant, task, seed, "", "no curve recorded"))
            continue
        try:
            data = read_curve(results.directory / relative)
        except AutoMLError as e:
            skipped.append(SkippedCurve(variant, task, seed, relative, str(e)))
            continue
        curves.append(Curve(variant, task, seed, data[:, 0], data[:, 1]))
    return curves, skipped


def task_bounds(curves: Sequence[Curve]) -> dict[str, tuple[float, float]]:
    """Per task, the lowest and highest finite validation loss of any curve (of every
    variant): the 0 and 1 of its regret. Tasks with no finite loss at all are absent."""
    values: dict[str, list[float]] = {}
    for curve in curves:
        finite = curve.losses[np.isfinite(curve.losses)]
        values.setdefault(curve.task, []).extend(float(v) for v in finite)
    return {task: (min(v), max(v)) for task, v in values.items() if v}


def regret_at(
    curve: Curve, x: ArrayLike, bounds: tuple[float, float] | None, *, axis: Axis
) -> np.ndarray:
    """Normalised regret of the curve's best configuration at each point of ``x``: after that
    many seconds (a configuration counts from the moment it finished, inclusive) or that many
    configurations in finishing order (a cell that evaluated fewer keeps its final best).
    1 before the first finite loss, and everywhere when ``bounds`` is None (no finite loss on
    the task)."""
    if axis == "seconds":
        order = np.argsort(curve.seconds, kind="stable")
        losses = curve.losses[order]
        counts = np.searchsorted(curve.seconds[order], np.asarray(x, dtype=float), side="right")
    elif axis == "trials":
        losses = curve.losses
        counts = np.clip(np.asarray(x, dtype=int), 0, len(losses))
    else:
        raise ValueError(f"axis must be 'seconds' or 'trials', got {axis!r}")
    best = np.concatenate([[np.inf], np.minimum.accumulate(losses)])[counts]
    if bounds is None:
        return np.ones(len(best))
    return np.where(np.isfinite(best), normalised_regret(best, *bounds), 1.0)


def seconds_grid(curves: Sequence[Curve]) -> np.ndarray:
    """:data:`GRID_POINTS` log-spaced times from the earliest positive finishing time of any
    configuration to the last one. Log-spaced because searches improve fast early and slowly
    late."""
    times = np.concatenate([np.zeros(0), *(c.seconds for c in curves)])
    positive = times[times > 0]
    start = float(positive.min()) if len(positive) else 1e-3
    return np.geomspace(start, max(start, float(times.max(initial=0.0))), GRID_POINTS)


def trials_grid(curves: Sequence[Curve]) -> np.ndarray:
    """1 .. the largest number of configurations any cell evaluated."""
    most = max((len(c.losses) for c in curves), default=0)
    return np.arange(1, max(most, 1) + 1)


#: Variant -> task -> the variant's regret on the task averaged over its seeds' curves.
TaskRegrets = dict[str, dict[str, np.ndarray]]


def task_regrets(curves: Sequence[Curve], x: np.ndarray, *, axis: Axis) -> TaskRegrets:
    """Each curve's regret at the points of ``x`` (normalised by its task's
    :func:`task_bounds`), averaged over the seeds of each variant on each task: the unit of
    :func:`anytime_regret` and :func:`rank_over_time` is the task, not the (task, seed)."""
    bounds = task_bounds(curves)
    by_cell: dict[str, dict[str, list[np.ndarray]]] = {}
    for c in curves:
        regret = regret_at(c, x, bounds.get(c.task), axis=axis)
        by_cell.setdefault(c.variant, {}).setdefault(c.task, []).append(regret)
    return {
        variant: {task: np.mean(seeds, axis=0) for task, seeds in tasks.items()}
        for variant, tasks in by_cell.items()
    }


@dataclass(frozen=True)
class AnytimeCurves:
    """Mean normalised regret per variant on a grid, with a 95% confidence band over tasks."""

    #: Seconds or number of trials.
    x: np.ndarray
    mean: dict[str, np.ndarray]
    low: dict[str, np.ndarray]
    high: dict[str, np.ndarray]
    #: How many tasks each variant's mean is over (those where it has a curve).
    n_tasks: dict[str, int]


def anytime_regret(regrets: TaskRegrets, variants: Sequence[str], x: np.ndarray) -> AnytimeCurves:
    """Per variant, the mean over tasks of its per-task regret (already averaged over seeds
    by :func:`task_regrets`) at each point of ``x``, with the 95% t-interval over tasks:
    mean ± t(0.975, n - 1) · sd / sqrt(n) for n tasks (a zero-width band for one task)."""
    mean: dict[str, np.ndarray] = {}
    low: dict[str, np.ndarray] = {}
    high: dict[str, np.ndarray] = {}
    n_tasks: dict[str, int] = {}
    for variant in variants:
        own = list(regrets.get(variant, {}).values())
        n_tasks[variant] = n = len(own)
        if not own:
            continue
        matrix = np.vstack(own)
        mean[variant] = matrix.mean(axis=0)
        if n > 1:
            t = float(stats.t.ppf(0.975, n - 1))
            half = t * matrix.std(axis=0, ddof=1) / math.sqrt(n)
        else:
            half = np.zeros(len(x))
        low[variant] = mean[variant] - half
        high[variant] = mean[variant] + half
    return AnytimeCurves(x, mean, low, high, n_tasks)


@dataclass(frozen=True)
class RankCurves:
    """Mean rank of each variant's regret over time (1 = lowest regret)."""

    x: np.ndarray
    mean_rank: dict[str, np.ndarray]
    #: The tasks averaged over: those with a curve of every variant.
    n_tasks: int


def rank_over_time(regrets: TaskRegrets, variants: Sequence[str], x: np.ndarray) -> RankCurves:
    """At each point of ``x``, the rank of the variants' per-task regrets (means over seeds,
    from :func:`task_regrets`) on each task where every variant has a curve, averaged over
    those tasks."""
    tasks = [
        t for t in regrets.get(variants[0], {}) if all(t in regrets.get(v, {}) for v in variants)
    ]
    if not tasks:
        return RankCurves(x, {}, 0)
    ranks = [stats.rankdata(np.vstack([regrets[v][t] for v in variants]), axis=0) for t in tasks]
    average = np.mean(ranks, axis=0)
    return RankCurves(x, {v: average[i] for i, v in enumerate(variants)}, len(tasks))


@dataclass(frozen=True)
class Anytime:
    """The anytime curves of a comparison and the cells left out of them."""

    seconds: AnytimeCurves
    trials: AnytimeCurves
    ranks: RankCurves
    skipped: list[SkippedCurve]
    #: How many (task, seed) curves of each variant were read.
    n_curves: dict[str, int]


def anytime(comparison: Comparison) -> Anytime:
    """Regret against seconds and trials, and rank against seconds, of the successful cells
    on the ranked tasks (the same tasks as the rank statistics)."""
    curves, skipped = load_curves(comparison.results, comparison.tasks)
    variants = comparison.variants
    n_curves = {v: sum(c.variant == v for c in curves) for v in variants}
    time_x, trial_x = seconds_grid(curves), trials_grid(curves)
    by_time = task_regrets(curves, time_x, axis="seconds")
    by_trials = task_regrets(curves, trial_x, axis="trials")
    return Anytime(
        seconds=anytime_regret(by_time, variants, time_x),
        trials=anytime_regret(by_trials, variants, trial_x),
        ranks=rank_over_time(by_time, variants, time_x),
        skipped=skipped,
        n_curves=n_curves,
    )
