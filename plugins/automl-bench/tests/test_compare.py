"""The statistics and the report of ``automl compare`` on a hand-made results.csv.

The ablation below has 3 variants, 7 ranked tasks (6 KEEL tasks with a test loss and one
table-lookup task with only a validation loss) and 2 seeds, plus a task dropped because one
variant failed on both seeds. Every loss is a multiple of 1/64, so means and differences are
exact in floating point and the expected ranks, ties and test statistics below are exact. The
files are written by the writers the ablation uses (``write_results``, ``write_curve``).
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from automl_bench.ablation import RESULT_COLUMNS, write_results
from automl_bench.compare import (
    CURVE_COLUMNS,
    RESULTS_FILE,
    Curve,
    anytime,
    anytime_regret,
    cliques,
    compare,
    critical_difference,
    friedman,
    holm,
    mean_ranks,
    normalised_scores,
    q_alpha,
    rank_over_time,
    read_curve,
    read_results,
    regret_at,
    task_regrets,
    wilcoxon_p,
    win_tie_loss,
    write_curve,
)
from automl_bench.report import write_report
from scipy import stats

from automl_core.errors import AutoMLError

A, B, C = "search.strategy=random", "search.strategy=mcts search.surrogate=rf", "flaml"
VARIANTS = (A, B, C)
#: Mean loss of (A, B, C) per ranked task, in 64ths; seeds are the mean -1/64 and +1/64.
MEANS_64 = {
    "keel:t1": (6, 12, 18),
    "keel:t2": (9, 15, 21),
    "keel:t3": (12, 6, 18),
    "keel:t4": (18, 18, 6),  # A and B tie
    "keel:t5": (7, 13, 19),
    "keel:t6": (24, 12, 18),  # C's seed 1 fails: C's mean is its seed 0 loss
    "pmf:1049": (3, 5, 7),  # table lookup: validation loss only
}
MEANS = np.array(list(MEANS_64.values()), dtype=float) / 64
TASKS = list(MEANS_64)
DROPPED = "keel:t8"  # C fails on both seeds
#: Mean ranks by hand: A 1+1+2+2.5+1+3+1, B 2+2+1+2.5+2+1+2, C 3+3+3+1+3+2+3, over 7 tasks.
EXPECTED_RANKS = np.array([11.5, 12.5, 18.0]) / 7
#: Curves of keel:t1, (seconds, validation loss) in finishing order; C's seed 0 file has no
#: loss column, and A's seed 0 file lists its rows in reverse (read_curve sorts by trial).
T1_CURVES = {
    (A, 0): [(1, 0.5), (2, math.inf), (4, 0.3), (8, math.nan)],
    (A, 1): [(2, 0.45), (5, 0.25)],
    (B, 0): [(1.5, 0.6), (3, 0.4)],
    (B, 1): [(2, 0.55), (6, 0.35)],
    (C, 1): [(3, 0.8), (10, 0.2)],
}
T1_MIN, T1_MAX = 0.2, 0.8
#: The curve files read_curve cannot use: no loss column, and a file never written.
UNREADABLE = (C, "keel:t1", 0)
NOT_WRITTEN = (B, "keel:t2", 1)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
COLUMNS = ["variant", "search.strategy", "search.surrogate", *RESULT_COLUMNS]
#: t(0.975, 1): the band's factor with 2 tasks.
T_975_1 = 12.706204736


def _final_loss(task, variant, seed):
    vi = VARIANTS.index(variant)
    if task == "keel:t6" and variant == C:
        return MEANS_64[task][vi] / 64
    return (MEANS_64[task][vi] + (2 * seed - 1)) / 64


def fixture_curves() -> dict[tuple[str, str, int], list[tuple[float, float]]]:
    """(variant, task, seed) -> the points of every readable curve of the ranked tasks."""
    curves = {}
    for task in TASKS:
        for vi, variant in enumerate(VARIANTS):
            for seed in (0, 1):
                cell = (variant, task, seed)
                if cell in (UNREADABLE, NOT_WRITTEN) or (task, variant, seed) == ("keel:t6", C, 1):
                    continue
                if task == "keel:t1":
                    curves[cell] = T1_CURVES[variant, seed]
                else:
                    start, loss = 1.5 * (vi + 1), _final_loss(task, variant, seed)
                    curves[cell] = [(start * 2**i, loss + 0.3 / (i + 1)) for i in range(3)]
    return curves


def _row(variant, task, seed, status="ok", loss=None, error="", curve=""):
    vi = VARIANTS.index(variant)
    lookup = task.startswith("pmf:")
    row = {"variant": variant, "task": task, "seed": seed, "status": status, "error": error}
    row |= {"search.strategy": "mcts" if vi == 1 else "random", "run_dir": f"runs/{vi}-{seed}"}
    row |= {"metric": "balanced_accuracy", "seconds": 10 * (vi + 1) + seed, "curve": curve}
    if status == "ok":
        row["validation_loss"] = loss if lookup else loss - 1 / 64  # distinct from the test loss
        row["test_loss"] = None if lookup else loss
        row["test_score"] = None if lookup else 1 - loss
        row["n_trials"] = 3
    return row


def _curve_path(variant, task, seed):
    return f"curves/{VARIANTS.index(variant)}/{task.replace(':', '_')}-{seed}.csv"


def build_ablation(root: Path) -> Path:
    """results.csv and the curves of the ablation described in the module docstring."""
    rows = []
    for task in TASKS:
        for variant in VARIANTS:
            for seed in (0, 1):
                if task == "keel:t6" and variant == C and seed == 1:
                    rows.append(_row(variant, task, seed, "error", error="MemoryError\ntrace"))
                    continue
                curve = _curve_path(variant, task, seed)
                loss = _final_loss(task, variant, seed)
                rows.append(_row(variant, task, seed, loss=loss, curve=curve))
    for (variant, task, seed), points in fixture_curves().items():
        write_curve(root / _curve_path(variant, task, seed), points)
    reversed_file = root / _curve_path(A, "keel:t1", 0)
    header, *lines = reversed_file.read_text().splitlines(keepends=True)
    reversed_file.write_text(header + "".join(reversed(lines)))
    (root / _curve_path(*UNREADABLE)).write_text("seconds,trial\n3.000,0\n")
    for vi, variant in enumerate(VARIANTS):
        for seed in (0, 1):
            if variant == C:
                rows.append(_row(C, DROPPED, seed, "error", error="Timeout"))
            else:
                rows.append(_row(variant, DROPPED, seed, loss=(10 + vi) / 64))
    write_results(root / RESULTS_FILE, COLUMNS, rows)
    return root


@pytest.fixture(scope="module")
def ablation(tmp_path_factory) -> Path:
    return build_ablation(tmp_path_factory.mktemp("ablation"))


@pytest.fixture(scope="module")
def comparison(ablation):
    return compare(read_results(ablation))


def _write_losses(root: Path, losses: dict[str, dict[str, float]]) -> Path:
    """A results.csv without curves: task -> variant -> the loss of its one seed."""
    rows = [
        {"variant": v, "task": task, "seed": 0, "status": "ok", "test_loss": loss}
        for task, by_variant in losses.items()
        for v, loss in by_variant.items()
    ]
    write_results(root / RESULTS_FILE, ["variant", *RESULT_COLUMNS], rows)
    return root


# ---------------------------------------------------------------------------------------------
# Reading and per-task losses
# ---------------------------------------------------------------------------------------------


def test_final_loss_is_the_test_loss_else_the_validation_loss(ablation):
    results = read_results(ablation / "results.csv")
    assert results.variants == VARIANTS
    assert results.metrics == ("balanced_accuracy",)
    ok = results.ok
    keel = ok[ok["task"] == "keel:t1"]
    assert np.array_equal(keel["loss"], keel["test_loss"])
    lookup = ok[ok["task"] == "pmf:1049"]
    assert lookup["test_loss"].isna().all()
    assert np.array_equal(lookup["loss"], lookup["validation_loss"])
    assert len(results.failed) == 3 and results.failed["loss"].isna().all()


def test_mean_losses_and_dropped_tasks(comparison):
    assert comparison.variants == VARIANTS
    assert comparison.tasks == tuple(TASKS)
    # rounded to multiples of 1e-6, which 1/64 = 15625e-6 is: equal up to the last bit
    assert comparison.losses == pytest.approx(MEANS, rel=1e-15, abs=0)
    assert comparison.dropped_tasks == {DROPPED: f"no successful cell for {C}"}
    assert comparison.all_losses.loc[DROPPED, A] == pytest.approx(10 / 64, rel=1e-15)
    assert math.isnan(comparison.all_losses.loc[DROPPED, C])
    t4 = comparison.losses[TASKS.index("keel:t4")]
    assert t4[0] == t4[1]  # a tie is exact


def test_failed_cells_counted_last_keep_their_task_and_lose_it(ablation, tmp_path):
    """``failed="last"``: a failed cell is its task-seed's worst loss, so the task where C
    only failed is ranked (C last, tied with the worst) instead of dropped for everyone."""
    last = compare(read_results(ablation), failed="last")
    assert last.dropped_tasks == {} and last.tasks == (*TASKS, DROPPED)
    assert last.counted_last == (("keel:t6", C), (DROPPED, C))
    dropped_row = last.losses[-1]
    assert tuple(dropped_row) == pytest.approx((10 / 64, 11 / 64, 11 / 64), rel=1e-15)
    t6 = last.losses[TASKS.index("keel:t6")]  # C: seed 0's 18/64 and seed 1's worst, 25/64
    assert t6[2] == pytest.approx((18 + 25) / 2 / 64, abs=1e-6)  # rounded to the tie
    assert last.mean_ranks == pytest.approx((EXPECTED_RANKS * 7 + [1, 2.5, 2.5]) / 8)
    markdown = write_report(ablation, tmp_path / "report", failed="last").read_text()
    assert f"`{C}` on `{DROPPED}`" in markdown and "counted as their task's worst" in markdown


def test_mean_ranks_and_normalised_scores(comparison):
    assert comparison.mean_ranks == pytest.approx(EXPECTED_RANKS)
    expected = np.zeros(3)
    for task_losses in MEANS:
        best, worst = task_losses.min(), task_losses.max()
        expected += (worst - task_losses) / (worst - best)
    assert comparison.scores == pytest.approx(expected / len(MEANS))
    assert mean_ranks(MEANS) == pytest.approx(EXPECTED_RANKS)


def test_normalised_score_is_one_for_all_when_a_task_is_a_tie():
    losses = np.array([[0.3, 0.3, 0.3], [0.1, 0.2, 0.3]])
    assert normalised_scores(losses) == pytest.approx([1.0, 0.75, 0.5])


def test_losses_closer_than_the_tie_resolution_tie_everywhere(tmp_path):
    # on t1, b is 4e-7 worse than a: a tie at the default resolution 1e-6, not at 1e-8
    losses = {
        "t1": {"a": 0.25, "b": 0.25 + 4e-7, "c": 0.5},
        "t2": {"a": 0.1, "b": 0.2, "c": 0.3},
        "t3": {"a": 0.3, "b": 0.2, "c": 0.1},
        "t4": {"a": 0.1, "b": 0.3, "c": 0.2},
    }
    results = read_results(_write_losses(tmp_path, losses))
    tied = compare(results)
    assert tied.all_losses.loc["t1", "a"] == tied.all_losses.loc["t1", "b"]
    assert tied.mean_ranks == pytest.approx(
        np.array([1.5 + 1 + 3 + 1, 1.5 + 2 + 2 + 3, 3 + 3 + 1 + 2]) / 4
    )
    ab = tied.pairs[0]
    assert (ab.a, ab.b, ab.wins, ab.ties, ab.losses) == ("a", "b", 2, 1, 1)
    # the Wilcoxon test drops the tied task: the p-value of the three others
    assert ab.p_value == pytest.approx(stats.wilcoxon([-0.1, 0.1, -0.2]).pvalue)
    strict = compare(results, tie=1e-8)
    assert strict.mean_ranks[0] == pytest.approx((1 + 1 + 3 + 1) / 4)
    assert (strict.pairs[0].wins, strict.pairs[0].ties, strict.pairs[0].losses) == (3, 0, 1)
    # the report bolds both tied losses of t1
    markdown = write_report(tmp_path).read_text()
    assert f"| t1 | **{0.25:.4f}** | **{0.25:.4f}** | {0.5:.4f} |" in markdown
    with pytest.raises(ValueError, match="positive"):
        compare(results, tie=0)


# ---------------------------------------------------------------------------------------------
# Pairwise and global tests
# ---------------------------------------------------------------------------------------------


def test_pairwise_win_tie_loss_wilcoxon_and_holm_against_scipy(comparison):
    by_pair = {(p.a, p.b): p for p in comparison.pairs}
    assert set(by_pair) == {(A, B), (A, C), (B, C)}
    assert (by_pair[A, B].wins, by_pair[A, B].ties, by_pair[A, B].losses) == (4, 1, 2)
    assert (by_pair[A, C].wins, by_pair[A, C].ties, by_pair[A, C].losses) == (5, 0, 2)
    assert (by_pair[B, C].wins, by_pair[B, C].ties, by_pair[B, C].losses) == (6, 0, 1)
    expected = {}
    for (a, b), pair in by_pair.items():
        i, j = VARIANTS.index(a), VARIANTS.index(b)
        expected[a, b] = stats.wilcoxon(MEANS[:, i], MEANS[:, j]).pvalue
        assert pair.p_value == pytest.approx(expected[a, b])
    # Holm over 3 pairs: the smallest p times 3, the next times 2, the largest times 1
    order = sorted(expected, key=expected.get)
    running = 0.0
    for factor, pair in zip((3, 2, 1), order, strict=True):
        running = max(running, min(1.0, factor * expected[pair]))
        assert by_pair[pair].p_holm == pytest.approx(running)


def test_holm_by_hand():
    assert holm([0.01, 0.04, None, 0.03]) == pytest.approx([0.03, 0.06, None, 0.06])
    assert holm([0.6, 0.7]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []


def test_win_tie_loss_and_wilcoxon_compare_exactly():
    assert win_tie_loss(np.array([0.1, 0.2, 0.3]), np.array([0.2, 0.2, 0.1])) == (1, 1, 1)
    assert wilcoxon_p(np.array([0.1, 0.2]), np.array([0.1, 0.2])) is None  # all ties
    assert wilcoxon_p(np.array([0.1]), np.array([0.2])) is None  # one task
    # no tolerance below compare(): tiny differences are signs (compare() rounds first)
    assert wilcoxon_p(np.array([0.1, 0.2]), np.array([0.1 + 1e-9, 0.2 - 1e-9])) is not None


def test_friedman_and_iman_davenport_against_scipy(comparison):
    chi2, p = stats.friedmanchisquare(*MEANS.T)
    result = comparison.friedman
    assert result is not None
    assert (result.chi2, result.p_value) == pytest.approx((chi2, p))
    n, k = MEANS.shape
    f = (n - 1) * chi2 / (n * (k - 1) - chi2)
    assert result.f == pytest.approx(f)
    assert result.df == (2, 12)
    assert result.f_p_value == pytest.approx(stats.f.sf(f, 2, 12))
    assert friedman(MEANS[:, :2]) is None  # needs 3 variants
    assert friedman(np.full((4, 3), 0.5)) is None  # all tied
    # every task ranks the variants alike: F is infinite, p is 0
    same = friedman(np.array([[0.1, 0.2, 0.3], [0.2, 0.4, 0.5]]))
    assert same is not None and same.f == math.inf and same.f_p_value == 0.0


@pytest.mark.parametrize(
    ("k", "table"), [(2, 1.960), (3, 2.343), (4, 2.569), (5, 2.728), (10, 3.164)]
)
def test_q_alpha_matches_demsar_table(k, table):
    assert abs(q_alpha(k, 0.05) - table) < 1e-3


def test_critical_difference_and_cliques_of_the_ablation(comparison):
    expected = 2.343700586 * math.sqrt(3 * 4 / (6 * 7))
    assert critical_difference(3, 7, 0.05) == pytest.approx(expected, rel=1e-6)
    assert comparison.cd == pytest.approx(expected, rel=1e-6)
    # the ranks span 2.571 - 1.643 = 0.93 < CD = 1.25: one group of all three
    assert comparison.cliques == [(A, B, C)]


def test_cliques_are_maximal_runs_closer_than_cd():
    ranks = np.array([1.5, 1.0, 3.0, 2.4, 3.9])  # sorted: 1.0 1.5 2.4 3.0 3.9
    assert cliques(ranks, 1.0) == [(1, 0), (0, 3), (3, 2), (2, 4)]
    # a run inside a longer one is not a group; a variant alone is not a group
    assert cliques(np.array([1.0, 1.2, 1.4, 3.0]), 0.5) == [(0, 1, 2)]
    # a difference of exactly CD is significant
    assert cliques(np.array([1.0, 2.0]), 1.0) == []


# ---------------------------------------------------------------------------------------------
# Anytime curves
# ---------------------------------------------------------------------------------------------


def _curve(variant, task, seed, seconds, losses):
    return Curve(variant, task, seed, np.array(seconds, float), np.array(losses, float))


def _curve_of(variant, seed):
    seconds, losses = zip(*T1_CURVES[variant, seed], strict=True)
    return _curve(variant, "keel:t1", seed, seconds, np.nan_to_num(losses, nan=math.inf))


def test_read_curve_sorts_by_trial_and_reads_failures_as_inf(ablation):
    # A's seed 0 file lists trials 3, 2, 1, 0
    assert (ablation / _curve_path(A, "keel:t1", 0)).read_text().splitlines()[:2] == [
        ",".join(CURVE_COLUMNS),
        "8.000,3,nan",
    ]
    data = read_curve(ablation / _curve_path(A, "keel:t1", 0))
    assert data.tolist() == [[1.0, 0.5], [2.0, math.inf], [4.0, 0.3], [8.0, math.inf]]


def test_one_curve_by_hand():
    curve = _curve_of(A, 0)  # losses 0.5, inf, 0.3, nan at 1, 2, 4, 8 s
    bounds = (T1_MIN, T1_MAX)
    at_seconds = regret_at(curve, [0.5, 1.0, 3.0, 4.0, 100.0], bounds, axis="seconds")
    assert at_seconds == pytest.approx([1.0, 0.5, 0.5, 1 / 6, 1 / 6])
    at_trials = regret_at(curve, [0, 1, 2, 3, 10], bounds, axis="trials")
    assert at_trials == pytest.approx([1.0, 0.5, 0.5, 1 / 6, 1 / 6])
    assert regret_at(curve, [5.0], (0.3, 0.3), axis="seconds") == pytest.approx([0.0])
    # rows out of time order: the seconds axis sorts them (0.8 at 1 s, 0.5 at 2 s, 0.3 at 3 s)
    shuffled = _curve(A, "keel:t1", 0, [3.0, 1.0, 2.0], [0.3, 0.8, 0.5])
    at = regret_at(shuffled, [0.5, 1.0, 2.5, 5.0], (0.3, 0.8), axis="seconds")
    assert at == pytest.approx([1.0, 1.0, 0.4, 0.0])
    # no finite loss on the task: no bounds, regret 1 throughout
    assert regret_at(curve, [1.0, 100.0], None, axis="seconds") == pytest.approx([1.0, 1.0])
    with pytest.raises(ValueError, match="axis"):
        regret_at(curve, [1.0], bounds, axis="minutes")  # type: ignore[arg-type]


def test_anytime_averages_seeds_within_a_task_then_tasks():
    # two tasks with different bounds (x: 0.1 .. 0.5, y: 0.3 .. 0.9) and two seeds on some
    curves = [
        _curve("a", "x", 0, [1.0], [0.1]),  # regret 0 from 1 s
        _curve("a", "x", 1, [2.0], [0.3]),  # 0.5 from 2 s
        _curve("b", "x", 0, [1.0], [0.5]),  # 1
        _curve("a", "y", 0, [2.0], [0.9]),  # 1
        _curve("b", "y", 0, [1.0], [0.3]),  # 0 from 1 s
        _curve("b", "y", 1, [3.0], [0.6]),  # 0.5 from 3 s
        _curve("a", "z", 0, [1.0], [math.inf]),  # no finite loss on z: regret 1
        _curve("b", "z", 0, [1.0], [math.inf]),
    ]
    x = np.array([0.5, 1.0, 2.0, 3.0])
    regrets = task_regrets(curves, x, axis="seconds")
    assert regrets["a"]["x"] == pytest.approx([1.0, 0.5, 0.25, 0.25])
    assert regrets["a"]["y"] == pytest.approx([1.0, 1.0, 1.0, 1.0])
    assert regrets["b"]["y"] == pytest.approx([1.0, 0.5, 0.5, 0.25])
    assert regrets["a"]["z"] == pytest.approx([1.0] * 4) and regrets["b"]["z"] == pytest.approx(
        [1.0] * 4
    )
    two = {v: {t: r for t, r in by_task.items() if t != "z"} for v, by_task in regrets.items()}
    result = anytime_regret(two, ["a", "b"], x)
    assert result.n_tasks == {"a": 2, "b": 2}
    assert result.mean["a"] == pytest.approx([1.0, 0.75, 0.625, 0.625])
    # the band is over the 2 tasks: t(0.975, 1) * sd / sqrt(2), sd of (0.5, 1) then (0.25, 1)
    half = T_975_1 * np.array([0.0, 0.5, 0.75, 0.75]) / 2
    assert result.high["a"] == pytest.approx(result.mean["a"] + half)
    assert result.low["a"] == pytest.approx(result.mean["a"] - half)
    assert result.mean["b"] == pytest.approx([1.0, 0.75, 0.75, 0.625])
    # a variant with one task has no band
    single = anytime_regret({"a": {"x": regrets["a"]["x"]}}, ["a", "b"], x)
    assert single.low["a"] == pytest.approx(single.high["a"]) and "b" not in single.mean
    assert single.n_tasks == {"a": 1, "b": 0}


def test_rank_over_time_ranks_the_seed_means_of_each_task():
    curves = [
        _curve("a", "x", 0, [1.0], [0.1]),  # regret 0 from 1 s
        _curve("a", "x", 1, [1.0], [0.3]),  # 1
        _curve("b", "x", 0, [2.0], [0.15]),  # 0.25 from 2 s: better than a's mean, 0.5
        _curve("a", "y", 0, [1.0], [0.2]),  # b has no curve on y: y is not ranked
    ]
    x = np.array([0.5, 1.0, 3.0])
    ranks = rank_over_time(task_regrets(curves, x, axis="seconds"), ["a", "b"], x)
    assert ranks.n_tasks == 1
    assert ranks.mean_rank["a"] == pytest.approx([1.5, 1.0, 2.0])
    assert ranks.mean_rank["b"] == pytest.approx([1.5, 2.0, 1.0])


def _final_regrets(variant):
    """Per ranked task where ``variant`` has a curve, its regret once every curve ended, by
    hand from the fixture's points: bounds per task over every variant, seeds averaged."""
    points = fixture_curves()
    finals = []
    for task in TASKS:
        finite = [loss for (_, t, _), p in points.items() if t == task for _, loss in p]
        finite = [loss for loss in finite if math.isfinite(loss)]
        low, high = min(finite), max(finite)
        own = [p for (v, t, _), p in points.items() if (v, t) == (variant, task)]
        bests = [min(loss for _, loss in p if math.isfinite(loss)) for p in own]
        if bests:
            finals.append(np.mean([(b - low) / (high - low) for b in bests]))
    return np.array(finals)


def test_anytime_curves_of_the_ablation(comparison):
    curves = anytime(comparison)
    # grid: from the earliest finish (A on t1 at 1 s) to the last (C's third point, 4.5 * 4 s)
    assert curves.seconds.x[0] == pytest.approx(1.0)
    assert curves.seconds.x[-1] == pytest.approx(18.0)
    assert np.all(np.diff(np.log(curves.seconds.x)) == pytest.approx(math.log(18) / 99))
    assert list(curves.trials.x) == [1, 2, 3, 4]
    # 7 ranked tasks x 2 seeds, less B's missing file, C's failed seed and C's unreadable file
    assert curves.n_curves == {A: 14, B: 13, C: 12}
    assert curves.seconds.n_tasks == {A: 7, B: 7, C: 7}
    skipped = {(s.variant, s.task, s.seed): s.reason for s in curves.skipped}
    assert skipped == {NOT_WRITTEN: "file not found", UNREADABLE: "missing column(s) loss"}
    # at 1 s only A's seed 0 on t1 has a result (regret 0.5; seed 1: 1): A's t1 mean is 0.75
    assert curves.seconds.mean[A][0] == pytest.approx((0.75 + 6) / 7)
    assert curves.seconds.mean[B][0] == 1.0 and curves.seconds.mean[C][0] == 1.0
    # at the end, every curve's best, per task, seeds first: mean and t-band over 7 tasks
    t = stats.t.ppf(0.975, 6)
    for variant in VARIANTS:
        finals = _final_regrets(variant)
        assert len(finals) == 7
        assert curves.seconds.mean[variant][-1] == pytest.approx(finals.mean())
        half = t * finals.std(ddof=1) / math.sqrt(7)
        assert curves.seconds.high[variant][-1] == pytest.approx(finals.mean() + half)
        assert curves.seconds.low[variant][-1] == pytest.approx(finals.mean() - half)
        assert curves.trials.mean[variant][-1] == pytest.approx(finals.mean())
    # ranks over the 7 tasks, each with a curve of every variant. At 1 s: A first on t1, all
    # tied elsewhere; at the end: C is best on t1 (0.2), A and B tie on t4, else as MEANS
    assert curves.ranks.n_tasks == 7
    ranks = curves.ranks.mean_rank
    assert [ranks[v][0] for v in VARIANTS] == pytest.approx([13 / 7, 14.5 / 7, 14.5 / 7])
    assert [ranks[v][-1] for v in VARIANTS] == pytest.approx([12.5 / 7, 13.5 / 7, 16 / 7])


# ---------------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------------


def _section(markdown: str, heading: str) -> str:
    return markdown.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _table(section: str) -> list[list[str]]:
    """The first Markdown table of a section, header first, cells unescaped."""
    lines = [line for line in section.splitlines() if line.startswith("|")]
    rows = []
    for line in lines[:1] + lines[2:]:
        cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
        rows.append([c.strip().replace("\\|", "|") for c in cells])
    return rows


def _bullets(section: str) -> list[str]:
    return [line[2:] for line in section.splitlines() if line.startswith("- ")]


@pytest.fixture(scope="module")
def report(ablation):
    return write_report(ablation)


def test_report_writes_markdown_html_and_png_figures(ablation, report):
    out = ablation / "report"
    assert report == out / "report.md"
    markdown = report.read_text()
    names = ("critical_difference.png", "regret_vs_time.png", "regret_vs_trials.png")
    for name in (*names, "rank_vs_time.png"):
        data = (out / name).read_bytes()
        assert data[:8] == PNG_SIGNATURE and len(data) > 5000
        assert re.search(rf"!\[[^\]]+\]\({re.escape(name)}\)", markdown)
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("<img ") == 4 and 'src="critical_difference.png"' in page


def test_report_variant_table_matches_the_csv(ablation, report):
    overview = report.read_text().split("\n## ", 1)[0]
    assert overview.startswith("# Comparison of 3 variants\n")
    assert f"Results: `{ablation / 'results.csv'}`." in overview
    assert "7 tasks ranked of 8, 2 seeds (0, 1); metric: `balanced_accuracy`" in overview
    assert "48 cells: 45 ok, 3 failed." in overview
    assert "the mean over its successful seeds, rounded to a multiple of 1e-06" in overview
    assert _bullets(overview) == [f"`{v}`" for v in VARIANTS]
    section = _section(report.read_text(), "Variants")
    assert "Mean loss: the mean over the ranked tasks of the variant's loss on each task" in (
        " ".join(section.split())
    )
    rows = _table(section)
    header, body = rows[0], {r[0]: dict(zip(rows[0], r, strict=True)) for r in rows[1:]}
    assert header[:4] == ["variant", "mean rank", "normalised score", "mean loss"]
    assert [r[0] for r in rows[1:]] == [A, B, C]  # by mean rank
    scores = normalised_scores(MEANS)
    for i, variant in enumerate(VARIANTS):
        row = body[variant]
        assert float(row["mean rank"]) == round(EXPECTED_RANKS[i], 2)
        assert float(row["normalised score"]) == round(scores[i], 4)
        assert float(row["mean loss"]) == round(MEANS[:, i].mean(), 4)
        # seconds are 10 (vi + 1) + seed: mean 10.5, 20.5; C lost its seed-1 cell on t6
        expected_seconds = 10 * (i + 1) + (0.5 if variant != C else 6 / 13)
        assert float(row["mean seconds"]) == round(expected_seconds, 1)
    assert (body[A]["ok cells"], body[A]["failed cells"]) == ("16", "0")
    assert (body[C]["ok cells"], body[C]["failed cells"]) == ("13", "3")


def test_report_significance_section(report, comparison):
    significance = " ".join(_section(report.read_text(), "Significance").split())
    chi2, p = stats.friedmanchisquare(*MEANS.T)
    f = comparison.friedman
    assert f is not None and f.f_p_value > 0.05  # 7 tasks do not separate these three
    assert f"Friedman test over 7 tasks: chi² = {chi2:.4g}, p = {p:.3g}." in significance
    assert (
        f"F = {f.f:.4g} with (2, 12) degrees of freedom, p = {f.f_p_value:.3g}. By the "
        "Iman–Davenport test at alpha = 0.05, the variants do not differ significantly."
    ) in significance
    assert f"CD = {2.343700586 * math.sqrt(12 / 42):.2f}" in significance
    assert "The groups are shown whatever the omnibus test says" in significance
    assert _bullets(_section(report.read_text(), "Significance")) == [f"`{A}` / `{B}` / `{C}`"]


def test_report_verdict_follows_iman_davenport(tmp_path):
    # 4 variants on 4 tasks, a always best: Friedman's chi-square does not reject (p = 0.058),
    # the Iman–Davenport F-test does (p = 0.026), and the verdict is the latter's
    orders = ["abcd", "acdb", "abcd", "adbc"]
    losses = {
        f"t{i}": {v: (order.index(v) + 1) / 10 for v in "abcd"} for i, order in enumerate(orders)
    }
    text = write_report(_write_losses(tmp_path, losses)).read_text()
    significance = " ".join(_section(text, "Significance").split())
    assert "Friedman test over 4 tasks: chi² = 7.5, p = 0.0576." in significance
    assert "F = 5 with (3, 9) degrees of freedom, p = 0.0261." in significance
    assert "By the Iman–Davenport test at alpha = 0.05, the variants differ significantly." in (
        significance
    )
    # mean ranks 1, 2.75, 3, 3.25 all within CD = 2.35 of each other
    assert _bullets(_section(text, "Significance")) == ["`a` / `b` / `c` / `d`"]
    # without curves, the anytime figures say why they are missing
    anytime_text = _section(text, "Anytime performance")
    assert "`regret_vs_time.png`: not drawn: no readable curve." in anytime_text
    assert not (tmp_path / "report" / "regret_vs_time.png").exists()


def test_nemenyi_groups_without_overlap(tmp_path):
    # a best on 7 of 8 tasks, c worst on 6: a and c are more than CD = 1.17 apart
    losses = {f"t{i}": {"a": 0.1, "b": 0.2, "c": 0.3} for i in range(6)}
    losses |= {"t6": {"a": 0.1, "b": 0.3, "c": 0.2}, "t7": {"a": 0.2, "b": 0.1, "c": 0.3}}
    result = compare(read_results(_write_losses(tmp_path, losses)))
    assert result.mean_ranks == pytest.approx([9 / 8, 16 / 8, 23 / 8])
    assert result.cliques == [("a", "b"), ("b", "c")]


def test_report_pairwise_and_per_task_tables(report, comparison):
    text = report.read_text()
    pairs = _table(_section(text, "Pairwise comparisons"))
    assert pairs[0] == ["A", "B", "wins", "ties", "losses", "Wilcoxon p", "Holm p"]
    assert pairs[1][:5] == [A, B, "4", "1", "2"]
    p = stats.wilcoxon(MEANS[:, 0], MEANS[:, 1]).pvalue
    assert pairs[1][5] == f"{p:.3g}"
    assert [row[6] for row in pairs[1:]] == [f"{pair.p_holm:.3g}" for pair in comparison.pairs]
    tasks = _table(_section(text, "Loss per task"))
    assert tasks[0] == ["task", A, B, C]
    for row in tasks[1:]:
        task = row[0]
        if task == DROPPED:
            assert row[1:] == [f"**{10 / 64:.4f}**", f"{11 / 64:.4f}", "—"]
            continue
        values = MEANS[TASKS.index(task)]
        best = values.min()
        expected = [f"**{v:.4f}**" if v == best else f"{v:.4f}" for v in values]
        assert row[1:] == expected
    assert f"`{DROPPED}`: no successful cell for {C}" in text


def test_report_anytime_text_says_what_is_averaged(report):
    anytime_text = " ".join(_section(report.read_text(), "Anytime performance").split())
    assert "first averaged over its seeds on each task, then over the tasks" in anytime_text
    assert "mean ± t(0.975, n - 1) · sd / √n for n tasks" in anytime_text
    assert "whole-system peers included" in anytime_text
    assert f"39 curves (14 of `{A}`, 13 of `{B}`, 12 of `{C}`)." in anytime_text
    assert "on each of the 7 tasks with a curve of every variant" in anytime_text


def test_report_lists_failed_cells_and_skipped_curves(report):
    text = report.read_text()
    failed = _table(_section(text, "Failed cells"))
    assert failed[1:] == [
        [C, "keel:t6", "1", "MemoryError"],
        [C, DROPPED, "0", "Timeout"],
        [C, DROPPED, "1", "Timeout"],
    ]
    skipped = _table(_section(text, "Skipped curves"))
    assert [r[:3] + r[4:] for r in skipped[1:]] == [
        [C, "keel:t1", "0", "missing column(s) loss"],
        [B, "keel:t2", "1", "file not found"],
    ]
    assert skipped[2][3] == "curves/1/keel_t2-1.csv"


def test_report_html_has_the_markdown_numbers(ablation, report):
    markdown = report.read_text()
    page = (ablation / "report" / "report.html").read_text()
    numbers = set(re.findall(r"\b\d+\.\d+(?:e-\d+)?\b", markdown))
    assert numbers and all(n in page for n in numbers)
    assert page.count("<strong>") == markdown.count("**") // 2


def test_report_without_matplotlib_says_what_to_install(ablation, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    with pytest.raises(AutoMLError, match=r'pip install "automl-core\[report\]"'):
        write_report(ablation, tmp_path / "out")


# ---------------------------------------------------------------------------------------------
# Broken input
# ---------------------------------------------------------------------------------------------


def _write_rows(root: Path, rows, columns=COLUMNS) -> Path:
    write_results(root / RESULTS_FILE, columns, rows)
    return root


def test_missing_results_file(tmp_path):
    with pytest.raises(AutoMLError, match=r"results\.csv: no such file"):
        read_results(tmp_path)


def test_missing_column_is_named(tmp_path):
    rows = [_row(A, "keel:t1", 0, loss=0.25)]
    _write_rows(tmp_path, rows, [c for c in COLUMNS if c != "status"])
    with pytest.raises(AutoMLError, match=r"results\.csv: missing column\(s\) status"):
        read_results(tmp_path)


def test_non_numeric_loss_names_the_line_and_column(tmp_path):
    rows = [_row(A, "keel:t1", 0, loss=0.25), _row(B, "keel:t1", 0, loss=0.25)]
    rows[1]["test_loss"] = "n/a"
    with pytest.raises(AutoMLError, match=r"line 3: column test_loss has 'n/a'"):
        read_results(_write_rows(tmp_path, rows))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("status", "done", r"line 3: status 'done'; expected one of ok, error"),
        ("variant", "", r"line 3: empty variant or task"),
        ("task", " ", r"line 3: empty variant or task"),
        ("seed", "1.5", r"line 3: column seed has '1\.5', expected an integer"),
        ("seed", "", r"line 3: column seed has '', expected an integer"),
        ("test_loss", "inf", r"line 3: an ok row needs a finite test_loss or validation_loss"),
        ("seconds", "fast", r"line 3: column seconds has 'fast', expected a number"),
    ],
)
def test_bad_values_name_the_line(tmp_path, field, value, message):
    rows = [_row(A, "keel:t1", 0, loss=0.25), _row(B, "keel:t1", 0, loss=0.25)]
    rows[1][field] = value
    with pytest.raises(AutoMLError, match=message):
        read_results(_write_rows(tmp_path, rows))


def test_an_ok_row_without_any_loss(tmp_path):
    rows = [_row(A, "keel:t1", 0, loss=0.25)]
    rows[0] |= {"test_loss": None, "validation_loss": None}
    with pytest.raises(AutoMLError, match=r"line 2: an ok row needs a finite .* got nan"):
        read_results(_write_rows(tmp_path, rows))


def test_columns_the_report_does_not_use_are_not_checked(tmp_path):
    rows = [_row(A, "keel:t1", 0, loss=0.25), _row(B, "keel:t1", 0, loss=0.5)]
    rows[0] |= {"test_score": "high", "normalised_regret": "?", "n_trials": "many"}
    results = read_results(_write_rows(tmp_path, rows))
    assert compare(results).mean_ranks == pytest.approx([1.0, 2.0])
    # the optional columns may be absent altogether
    required = ["variant", "task", "seed", "status", "validation_loss", "test_loss"]
    _write_rows(tmp_path, rows, required)
    results = read_results(tmp_path)
    assert results.metrics == () and results.rows["seconds"].isna().all()
    assert compare(results).mean_ranks == pytest.approx([1.0, 2.0])


def test_header_only_table(tmp_path):
    with pytest.raises(AutoMLError, match="no rows"):
        read_results(_write_rows(tmp_path, []))


def test_all_cells_failed(tmp_path):
    rows = [_row(v, "keel:t1", 0, "error", error="Killed") for v in (A, B)]
    _write_rows(tmp_path, rows)
    with pytest.raises(AutoMLError, match=r"all 2 cells failed.*line 2: Killed"):
        compare(read_results(tmp_path))
    with pytest.raises(AutoMLError, match="all 2 cells failed"):
        write_report(tmp_path)
    assert not (tmp_path / "report").exists()
