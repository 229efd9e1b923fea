"""The statistics behind ``automl compare``: ranking variants of a recipe over many tasks.

An ablation writes ``results.csv``, one row per *cell* (one variant on one task with one seed).
This module turns that table into the numbers a reader needs to decide whether a variant is
better, following Demšar (2006), "Statistical comparisons of classifiers over multiple data
sets": losses are compared *per task* (ranks, normalised scores, wins/ties/losses, the Wilcoxon
signed-rank test between two variants, the Friedman test and the Nemenyi critical difference
between all of them), because losses of different tasks are on different scales and only their
order on each task is comparable.

It also builds *anytime* curves: how good each variant's best configuration was after so many
seconds or trials, as a regret normalised per task so that tasks can be averaged.

Everything here is pure computation on numpy arrays (``report.py`` draws and writes).
Conventions: losses are lower-is-better; a variant's loss on a task is its mean final loss over
its successful seeds; arrays of per-task losses are ``(n_tasks, n_variants)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from automl_core.errors import AutoMLError

RESULTS_FILE = "results.csv"
#: Columns ``results.csv`` must have. The others (``metric``, ``seconds``, ``curve``...) are
#: optional: what needs them is left out of the report when they are absent.
REQUIRED_COLUMNS = ("variant", "task", "seed", "status", "validation_loss", "test_loss")
#: Numeric columns, parsed as floats; an empty field is missing (NaN).
NUMERIC_COLUMNS = ("validation_loss", "test_loss", "test_score", "normalised_regret", "seconds")
#: Text columns, read as strings; an empty field is "".
TEXT_COLUMNS = ("variant", "task", "status", "metric", "stopped", "error", "curve", "run_dir")
STATUSES = ("ok", "error")
#: Default tie tolerance: two mean losses closer than this are a tie. Losses of metrics such as
#: balanced accuracy are fractions of a test set that rarely exceeds 10^5 rows, so real
#: differences are larger than 10^-5, while the noise of averaging floats is below 10^-12.
DEFAULT_TIE = 1e-6
DEFAULT_ALPHA = 0.05
#: Points of the log-spaced time grid of anytime curves.
GRID_POINTS = 100
#: z-value of a two-sided 95% normal interval, for the confidence bands of anytime curves.
Z_95 = 1.96


# ---------------------------------------------------------------------------------------------
# Reading results.csv
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Results:
    """The rows of one ``results.csv``, checked and typed.

    ``rows`` has every column of :data:`REQUIRED_COLUMNS`, :data:`NUMERIC_COLUMNS` (float,
    NaN when missing) and :data:`TEXT_COLUMNS` (str, "" when missing), ``seed`` as int, and
    ``loss``: the final loss of the cell (``test_loss``, else ``validation_loss`` for
    table-lookup tasks, which have no test split; NaN for failed cells). ``line`` is the row's
    line number in the file, for messages.
    """

    path: Path
    rows: pd.DataFrame
    #: Variant labels in order of first appearance in the file: the order of every table.
    variants: tuple[str, ...]

    @property
    def directory(self) -> Path:
        """The folder the relative paths of the file (curves, run folders) start from."""
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
        """The metrics named in the file, sorted ("" when the column is absent)."""
        return tuple(sorted({m for m in self.rows["metric"] if m}))


def read_results(path: Path) -> Results:
    """Read and check ``results.csv`` (``path`` is the file or the folder holding it).

    Checks are done here, once, so that every statistic can trust its input, and so that a
    broken file is reported with its name, the column and the line rather than as a numpy error
    deep in a test statistic.
    """
    path = Path(path)
    csv = path / RESULTS_FILE if path.is_dir() else path
    if not csv.is_file():
        raise AutoMLError(f"{csv}: no such file; expected the results.csv of an ablation")
    try:
        raw = pd.read_csv(csv, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise AutoMLError(f"{csv}: not a readable CSV file ({e})") from e
    missing = [c for c in REQUIRED_COLUMNS if c not in raw.columns]
    if missing:
        raise AutoMLError(
            f"{csv}: missing column(s) {', '.join(missing)}; "
            f"results.csv needs {', '.join(REQUIRED_COLUMNS)}"
        )
    if raw.empty:
        raise AutoMLError(f"{csv}: the table has a header but no rows")
    rows = _typed_rows(raw, csv)
    variants = tuple(dict.fromkeys(rows["variant"]))
    return Results(csv, rows, variants)


def _typed_rows(raw: pd.DataFrame, csv: Path) -> pd.DataFrame:
    """The rows with typed columns and the final ``loss``; raises on the first bad value."""
    rows = pd.DataFrame({"line": np.arange(len(raw)) + 2})  # line 1 is the header
    for column in TEXT_COLUMNS:
        values = raw[column] if column in raw.columns else pd.Series([""] * len(raw))
        rows[column] = [str(v).strip() for v in values]
    rows["status"] = rows["status"].str.lower()
    for column in NUMERIC_COLUMNS:
        if column in raw.columns:
            rows[column] = [_number(v, column, i, csv) for i, v in enumerate(raw[column])]
        else:
            rows[column] = np.nan
    rows["seed"] = [_integer(v, "seed", i, csv) for i, v in enumerate(raw["seed"])]
    for i, (variant, task, status) in enumerate(
        zip(rows["variant"], rows["task"], rows["status"], strict=True)
    ):
        if not variant or not task:
            raise AutoMLError(f"{csv}, line {i + 2}: empty variant or task")
        if status not in STATUSES:
            raise AutoMLError(
                f"{csv}, line {i + 2}: status {status!r}; expected one of {', '.join(STATUSES)}"
            )
    final = rows["test_loss"].where(rows["test_loss"].notna(), rows["validation_loss"])
    rows["loss"] = final.where(rows["status"] == "ok", np.nan)
    for i, (status, loss) in enumerate(zip(rows["status"], rows["loss"], strict=True)):
        if status == "ok" and not math.isfinite(loss):
            raise AutoMLError(
                f"{csv}, line {i + 2}: an ok row needs a finite test_loss or validation_loss, "
                f"got {loss}"
            )
    return rows


def _number(value: str, column: str, index: int, csv: Path) -> float:
    """A float from a CSV field ("" is missing: NaN)."""
    value = value.strip()
    if not value:
        return math.nan
    try:
        return float(value)
    except ValueError:
        raise AutoMLError(
            f"{csv}, line {index + 2}: column {column} has {value!r}, expected a number"
        ) from None


def _integer(value: str, column: str, index: int, csv: Path) -> int:
    """An int from a CSV field (required)."""
    try:
        return int(value.strip())
    except ValueError:
        raise AutoMLError(
            f"{csv}, line {index + 2}: column {column} has {value!r}, expected an integer"
        ) from None


# ---------------------------------------------------------------------------------------------
# Per-task losses
# ---------------------------------------------------------------------------------------------


def mean_losses(results: Results) -> pd.DataFrame:
    """Mean final loss over successful seeds per task (rows, in file order) and variant
    (columns); NaN where a variant has no successful cell on a task."""
    ok = results.ok
    table = ok.pivot_table(index="task", columns="variant", values="loss", aggfunc="mean")
    tasks = list(dict.fromkeys(results.rows["task"]))
    return table.reindex(index=tasks, columns=list(results.variants))


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
    kept = means.drop(index=list(dropped))
    return kept, dropped


# ---------------------------------------------------------------------------------------------
# Ranks and scores
# ---------------------------------------------------------------------------------------------


def task_ranks(losses: np.ndarray) -> np.ndarray:
    """Rank of each variant on each task: 1 for the lowest loss, exactly equal losses share
    the average rank (the tie tolerance of :func:`win_tie_loss` does not apply here)."""
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
    with np.errstate(invalid="ignore", divide="ignore"):
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
    #: Tasks where ``a``'s mean loss is lower by at least the tie tolerance.
    wins: int
    ties: int
    losses: int
    #: Two-sided Wilcoxon signed-rank p-value; None when it is undefined (fewer than 2 tasks,
    #: or every difference is a tie).
    p_value: float | None


def win_tie_loss(a: np.ndarray, b: np.ndarray, tie: float = DEFAULT_TIE) -> tuple[int, int, int]:
    """Tasks where ``a`` has a lower, equal (within ``tie``) and higher loss than ``b``."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    ties = np.abs(diff) < tie
    return int(np.sum((diff < 0) & ~ties)), int(np.sum(ties)), int(np.sum((diff > 0) & ~ties))


def wilcoxon_p(a: np.ndarray, b: np.ndarray, tie: float = DEFAULT_TIE) -> float | None:
    """Two-sided Wilcoxon signed-rank p-value of the per-task losses of two variants.

    Differences within ``tie`` count as zero (and are dropped, scipy's default ``wilcox``
    zero method), so that floating-point noise does not decide a sign. The test is undefined,
    and None is returned, with fewer than 2 tasks or when every difference is zero.
    """
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    diff = np.where(np.abs(diff) < tie, 0.0, diff)
    if len(diff) < 2 or not np.any(diff):
        return None
    p = float(stats.wilcoxon(diff).pvalue)
    return p if math.isfinite(p) else None


def pairwise(
    losses: np.ndarray, variants: Sequence[str], tie: float = DEFAULT_TIE
) -> list[PairComparison]:
    """Every pair of variants (in the order of ``variants``), compared task by task."""
    pairs = []
    for i, j in combinations(range(len(variants)), 2):
        wins, ties, lost = win_tie_loss(losses[:, i], losses[:, j], tie)
        p = wilcoxon_p(losses[:, i], losses[:, j], tie)
        pairs.append(PairComparison(variants[i], variants[j], wins, ties, lost, p))
    return pairs


# ---------------------------------------------------------------------------------------------
# Friedman test and Nemenyi critical difference
# ---------------------------------------------------------------------------------------------


def friedman_p(losses: np.ndarray) -> float | None:
    """p-value of the Friedman test that all variants perform alike; None when it is
    undefined: fewer than 3 variants (scipy's test needs 3; use the Wilcoxon p-value of the
    pair), fewer than 2 tasks, or every task a complete tie."""
    n_tasks, k = losses.shape
    if k < 3 or n_tasks < 2:
        return None
    ranks = task_ranks(losses)
    if np.all(ranks == ranks[:, :1]):
        return None
    p = float(stats.friedmanchisquare(*losses.T).pvalue)
    return p if math.isfinite(p) else None


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
    variants: tuple[str, ...]
    #: The ranked tasks, in file order, and the per-task mean losses ``(tasks, variants)``.
    tasks: tuple[str, ...]
    losses: np.ndarray
    #: Task -> why it is not ranked.
    dropped_tasks: dict[str, str]
    #: All tasks (rows) by variants (columns), NaN where a variant has no successful cell.
    all_losses: pd.DataFrame
    mean_ranks: np.ndarray
    scores: np.ndarray
    pairs: list[PairComparison]
    alpha: float
    tie: float
    friedman_p: float | None
    #: None with fewer than 2 variants.
    cd: float | None
    #: Groups of variant labels whose mean ranks differ by less than ``cd``.
    cliques: list[tuple[str, ...]]


def compare(
    results: Results, *, alpha: float = DEFAULT_ALPHA, tie: float = DEFAULT_TIE
) -> Comparison:
    """Rank the variants of ``results`` on the tasks they all finished.

    Raises AutoMLError when nothing can be ranked: every cell failed, or no task has a
    successful cell of every variant.
    """
    if results.ok.empty:
        first = results.failed.iloc[0]
        raise AutoMLError(
            f"{results.path}: all {len(results.rows)} cells failed, nothing to compare "
            f"(line {first['line']}: {first['error'] or 'no error text'})"
        )
    means = mean_losses(results)
    kept, dropped = complete_tasks(means)
    if kept.empty:
        reasons = "; ".join(f"{t}: {why}" for t, why in dropped.items())
        raise AutoMLError(
            f"{results.path}: no task has a successful cell of every variant ({reasons})"
        )
    variants = results.variants
    losses = kept.to_numpy(dtype=float)
    ranks = mean_ranks(losses)
    cd = critical_difference(len(variants), len(kept), alpha) if len(variants) >= 2 else None
    groups = cliques(ranks, cd) if cd is not None else []
    return Comparison(
        results=results,
        variants=variants,
        tasks=tuple(str(t) for t in kept.index),
        losses=losses,
        dropped_tasks=dropped,
        all_losses=means,
        mean_ranks=ranks,
        scores=normalised_scores(losses),
        pairs=pairwise(losses, variants, tie),
        alpha=alpha,
        tie=tie,
        friedman_p=friedman_p(losses),
        cd=cd,
        cliques=[tuple(variants[i] for i in g) for g in groups],
    )


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


def load_curves(
    results: Results, tasks: Sequence[str] | None = None
) -> tuple[list[Curve], list[SkippedCurve]]:
    """The curves of the successful cells on ``tasks`` (all tasks when None), and the cells
    whose curve is missing or unreadable. A bad curve only costs that cell its curve: the
    final losses, and so the ranks, do not depend on it."""
    wanted = set(results.rows["task"] if tasks is None else tasks)
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
    """Per task, the lowest and highest finite validation loss of any curve: the 0 and 1 of
    its regret. Tasks with no finite loss at all are absent."""
    values: dict[str, list[float]] = {}
    for curve in curves:
        finite = curve.losses[np.isfinite(curve.losses)]
        values.setdefault(curve.task, []).extend(float(v) for v in finite)
    return {task: (min(v), max(v)) for task, v in values.items() if v}


def _regret(best: np.ndarray, bounds: tuple[float, float] | None) -> np.ndarray:
    """Best-so-far losses as regret in [0, 1]; 1 before the first finite loss."""
    if bounds is None:
        return np.ones_like(best)
    low, high = bounds
    if high == low:
        regret = np.zeros_like(best)
    else:
        with np.errstate(invalid="ignore"):
            regret = np.clip((best - low) / (high - low), 0.0, 1.0)
    return np.where(np.isfinite(best), regret, 1.0)


def regret_at_seconds(
    curve: Curve, seconds: np.ndarray, bounds: tuple[float, float] | None
) -> np.ndarray:
    """Normalised regret of the best configuration finished by each time in ``seconds`` (a
    step function: a configuration counts from the moment it finished, inclusive)."""
    order = np.argsort(curve.seconds, kind="stable")
    times = curve.seconds[order]
    best = np.concatenate([[np.inf], np.minimum.accumulate(curve.losses[order])])
    finished = np.searchsorted(times, np.asarray(seconds, dtype=float), side="right")
    return _regret(best[finished], bounds)


def regret_at_trials(
    curve: Curve, trials: np.ndarray, bounds: tuple[float, float] | None
) -> np.ndarray:
    """Normalised regret of the best of the first ``n`` configurations to finish, for each
    ``n`` in ``trials``; a cell that evaluated fewer keeps its final best."""
    best = np.concatenate([[np.inf], np.minimum.accumulate(curve.losses)])
    counts = np.clip(np.asarray(trials, dtype=int), 0, len(curve.losses))
    return _regret(best[counts], bounds)


def seconds_grid(
    curves: Sequence[Curve], cell_seconds: Sequence[float] = (), points: int = GRID_POINTS
) -> np.ndarray:
    """Log-spaced times from the earliest first finish of any cell to the longest cell (its
    wall time from ``cell_seconds``, or its last finish when that is larger or unknown).
    Log-spaced because searches improve fast early and slowly late."""
    firsts = [float(c.seconds.min()) for c in curves if len(c.seconds)]
    positive = [t for t in firsts if t > 0] or [
        float(t) for c in curves for t in c.seconds if t > 0
    ]
    start = min(positive) if positive else 1e-3
    lasts = [float(c.seconds.max()) for c in curves if len(c.seconds)]
    ends = [float(s) for s in cell_seconds if math.isfinite(s)] + lasts
    end = max([start, *ends])
    return np.geomspace(start, end, points)


def trials_grid(curves: Sequence[Curve]) -> np.ndarray:
    """1 .. the largest number of configurations any cell evaluated."""
    most = max((len(c.losses) for c in curves), default=0)
    return np.arange(1, max(most, 1) + 1)


@dataclass(frozen=True)
class AnytimeCurves:
    """Mean normalised regret per variant on a grid, with a 95% confidence band."""

    #: Seconds or number of trials.
    x: np.ndarray
    mean: dict[str, np.ndarray]
    low: dict[str, np.ndarray]
    high: dict[str, np.ndarray]
    #: How many (task, seed) curves each variant's mean is over.
    n_curves: dict[str, int]


def anytime_regret(
    curves: Sequence[Curve], variants: Sequence[str], x: np.ndarray, *, axis: str
) -> AnytimeCurves:
    """Per variant, the mean regret over its (task, seed) curves at each point of ``x``
    (``axis`` "seconds" or "trials"), with mean ± 1.96 standard errors (a zero-width band for
    a single curve). Each task's regret is normalised by :func:`task_bounds` first, so that
    every task weighs the same."""
    at = _evaluator(axis)
    bounds = task_bounds(curves)
    mean: dict[str, np.ndarray] = {}
    low: dict[str, np.ndarray] = {}
    high: dict[str, np.ndarray] = {}
    counts: dict[str, int] = {}
    for variant in variants:
        own = [at(c, x, bounds.get(c.task)) for c in curves if c.variant == variant]
        counts[variant] = len(own)
        if not own:
            continue
        matrix = np.vstack(own)
        mean[variant] = matrix.mean(axis=0)
        if len(own) > 1:
            half = Z_95 * matrix.std(axis=0, ddof=1) / math.sqrt(len(own))
        else:
            half = np.zeros(len(x))
        low[variant] = mean[variant] - half
        high[variant] = mean[variant] + half
    return AnytimeCurves(x, mean, low, high, counts)


#: Regret of a curve at points of a grid, given its task's bounds.
RegretAt = Callable[[Curve, np.ndarray, tuple[float, float] | None], np.ndarray]


def _evaluator(axis: str) -> RegretAt:
    """The regret function of an axis name."""
    if axis == "seconds":
        return regret_at_seconds
    if axis == "trials":
        return regret_at_trials
    raise ValueError(f"axis must be 'seconds' or 'trials', got {axis!r}")


@dataclass(frozen=True)
class RankCurves:
    """Mean rank of each variant's regret over time (1 = lowest regret)."""

    x: np.ndarray
    mean_rank: dict[str, np.ndarray]
    #: The (task, seed) pairs averaged over: those with a curve of every variant.
    n_groups: int


def rank_over_time(curves: Sequence[Curve], variants: Sequence[str], x: np.ndarray) -> RankCurves:
    """At each time of ``x``, the rank of the variants' regrets on each (task, seed) where
    every variant has a curve, averaged over those (task, seed) pairs. Where a variant has
    several curves for one (task, seed), their mean regret is ranked."""
    bounds = task_bounds(curves)
    groups: dict[tuple[str, int], dict[str, list[np.ndarray]]] = {}
    for c in curves:
        regret = regret_at_seconds(c, x, bounds.get(c.task))
        groups.setdefault((c.task, c.seed), {}).setdefault(c.variant, []).append(regret)
    ranks = []
    for by_variant in groups.values():
        if not all(v in by_variant for v in variants):
            continue
        regrets = np.vstack([np.mean(by_variant[v], axis=0) for v in variants])
        ranks.append(stats.rankdata(regrets, axis=0))
    if not ranks:
        return RankCurves(x, {}, 0)
    average = np.mean(ranks, axis=0)
    return RankCurves(x, {v: average[i] for i, v in enumerate(variants)}, len(ranks))


@dataclass(frozen=True)
class Anytime:
    """The anytime curves of a comparison and the cells left out of them."""

    seconds: AnytimeCurves
    trials: AnytimeCurves
    ranks: RankCurves
    skipped: list[SkippedCurve]
    n_curves: int


def anytime(comparison: Comparison, points: int = GRID_POINTS) -> Anytime:
    """Regret against seconds and trials, and rank against seconds, of the successful cells
    on the ranked tasks (the same tasks as the rank statistics)."""
    results = comparison.results
    curves, skipped = load_curves(results, comparison.tasks)
    ok = results.ok
    cell_seconds = ok[ok["task"].isin(comparison.tasks)]["seconds"].tolist()
    time_x = seconds_grid(curves, cell_seconds, points)
    trial_x = trials_grid(curves)
    return Anytime(
        seconds=anytime_regret(curves, comparison.variants, time_x, axis="seconds"),
        trials=anytime_regret(curves, comparison.variants, trial_x, axis="trials"),
        ranks=rank_over_time(curves, comparison.variants, time_x),
        skipped=skipped,
        n_curves=len(curves),
    )
