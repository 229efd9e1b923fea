"""The statistics and the report of ``automl compare`` on a hand-made results.csv.

The ablation below has 3 variants, 7 ranked tasks (6 KEEL tasks with a test loss and one
table-lookup task with only a validation loss) and 2 seeds, plus a task dropped because one
variant failed on both seeds. Every loss is a multiple of 1/64, so means and differences are
exact in floating point and the expected ranks, ties and test statistics below are exact.
"""

from __future__ import annotations

import csv
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from automl_core.compare import (
    Curve,
    anytime,
    anytime_regret,
    cliques,
    compare,
    critical_difference,
    friedman_p,
    mean_ranks,
    normalised_scores,
    q_alpha,
    rank_over_time,
    read_results,
    regret_at_seconds,
    regret_at_trials,
    wilcoxon_p,
)
from automl_core.errors import AutoMLError
from automl_core.report import write_report

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
#: Curves of keel:t1 (C's seed 0 file has no loss column); all others are generated.
T1_CURVES = {
    (A, 0): [(1, 0, "0.5"), (2, 1, "inf"), (4, 2, "0.3"), (8, 3, "")],
    (A, 1): [(2, 0, "0.45"), (5, 1, "0.25")],
    (B, 0): [(1.5, 0, "0.6"), (3, 1, "0.4")],
    (B, 1): [(2, 0, "0.55"), (6, 1, "0.35")],
    (C, 1): [(3, 0, "0.8"), (10, 1, "0.2")],
}
T1_MIN, T1_MAX = 0.2, 0.8
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HEADER = [
    "variant", "search.strategy", "search.surrogate", "task", "seed", "status", "metric",
    "validation_loss", "test_loss", "test_score", "normalised_regret", "n_trials", "seconds",
    "stopped", "error", "curve", "run_dir",
]  # fmt: skip


def _row(variant, task, seed, status="ok", loss=None, error="", curve=""):
    vi = VARIANTS.index(variant)
    lookup = task.startswith("pmf:")
    row = dict.fromkeys(HEADER, "")
    row |= {"variant": variant, "task": task, "seed": seed, "status": status, "error": error}
    row |= {"search.strategy": "mcts" if vi == 1 else "random", "run_dir": f"runs/{vi}-{seed}"}
    row |= {"metric": "balanced_accuracy", "seconds": 10 * (vi + 1) + seed, "curve": curve}
    if status == "ok":
        row["validation_loss"] = loss if lookup else loss - 1 / 64  # distinct from the test loss
        row["test_loss"] = "" if lookup else loss
        row["test_score"] = "" if lookup else 1 - loss
        row["n_trials"] = 3
    return row


def _write_csv(path, rows, header):
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def _write_curve(path, points, header=("seconds", "trial", "loss")):
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(points)


def build_ablation(root: Path) -> Path:
    """results.csv and the curves of the ablation described in the module docstring."""
    rows = []
    for task, means in MEANS_64.items():
        for vi, variant in enumerate(VARIANTS):
            for seed in (0, 1):
                if task == "keel:t6" and variant == C and seed == 1:
                    rows.append(_row(variant, task, seed, "error", error="MemoryError\ntrace"))
                    continue
                loss = (means[vi] + (2 * seed - 1)) / 64
                if task == "keel:t6" and variant == C:
                    loss = means[vi] / 64
                curve = f"curves/{vi}/{task.replace(':', '_')}-{seed}.csv"
                rows.append(_row(variant, task, seed, loss=loss, curve=curve))
                if task == "keel:t1":
                    if (variant, seed) in T1_CURVES:
                        _write_curve(root / curve, T1_CURVES[variant, seed])
                    else:  # unreadable: no loss column
                        _write_curve(root / curve, [(3, 0)], header=("seconds", "trial"))
                elif not (task == "keel:t2" and variant == B and seed == 1):  # missing file
                    start = 1.5 * (vi + 1)
                    points = [(start * 2**i, i, loss + 0.3 / (i + 1)) for i in range(3)]
                    _write_curve(root / curve, points)
    for vi, variant in enumerate(VARIANTS):
        for seed in (0, 1):
            if variant == C:
                rows.append(_row(C, DROPPED, seed, "error", error="Timeout"))
            else:
                rows.append(_row(variant, DROPPED, seed, loss=(10 + vi) / 64))
    _write_csv(root / "results.csv", rows, HEADER)
    return root


@pytest.fixture(scope="module")
def ablation(tmp_path_factory) -> Path:
    return build_ablation(tmp_path_factory.mktemp("ablation"))


@pytest.fixture(scope="module")
def comparison(ablation):
    return compare(read_results(ablation))


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
    assert np.array_equal(comparison.losses, MEANS)  # exact: multiples of 1/64
    assert comparison.dropped_tasks == {DROPPED: f"no successful cell for {C}"}
    assert comparison.all_losses.loc[DROPPED, A] == 10 / 64
    assert math.isnan(comparison.all_losses.loc[DROPPED, C])


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


# ---------------------------------------------------------------------------------------------
# Pairwise and global tests
# ---------------------------------------------------------------------------------------------


def test_pairwise_win_tie_loss_and_wilcoxon_against_scipy(comparison):
    by_pair = {(p.a, p.b): p for p in comparison.pairs}
    assert set(by_pair) == {(A, B), (A, C), (B, C)}
    assert (by_pair[A, B].wins, by_pair[A, B].ties, by_pair[A, B].losses) == (4, 1, 2)
    assert (by_pair[A, C].wins, by_pair[A, C].ties, by_pair[A, C].losses) == (5, 0, 2)
    assert (by_pair[B, C].wins, by_pair[B, C].ties, by_pair[B, C].losses) == (6, 0, 1)
    for (a, b), pair in by_pair.items():
        i, j = VARIANTS.index(a), VARIANTS.index(b)
        assert pair.p_value == pytest.approx(stats.wilcoxon(MEANS[:, i], MEANS[:, j]).pvalue)


def test_wilcoxon_reports_no_p_value_when_undefined():
    assert wilcoxon_p(np.array([0.1, 0.2]), np.array([0.1, 0.2])) is None  # all ties
    assert wilcoxon_p(np.array([0.1]), np.array([0.2])) is None  # one task
    # differences under the tie tolerance are ties, not signs
    assert wilcoxon_p(np.array([0.1, 0.2]), np.array([0.1 + 1e-9, 0.2 - 1e-9])) is None


def test_friedman_against_scipy(comparison):
    expected = stats.friedmanchisquare(*MEANS.T).pvalue
    assert comparison.friedman_p == pytest.approx(expected)
    assert friedman_p(MEANS[:, :2]) is None  # needs 3 variants
    assert friedman_p(np.full((4, 3), 0.5)) is None  # all tied


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


def _curve_of(variant, task, seed):
    points = T1_CURVES[variant, seed]
    return Curve(
        variant,
        task,
        seed,
        np.array([p[0] for p in points], dtype=float),
        np.array([float(p[2]) if p[2] else math.inf for p in points]),
    )


def test_one_curve_by_hand():
    curve = _curve_of(A, "keel:t1", 0)  # losses 0.5, inf, 0.3, missing at 1, 2, 4, 8 s
    bounds = (T1_MIN, T1_MAX)
    at_seconds = regret_at_seconds(curve, np.array([0.5, 1.0, 3.0, 4.0, 100.0]), bounds)
    assert at_seconds == pytest.approx([1.0, 0.5, 0.5, 1 / 6, 1 / 6])
    at_trials = regret_at_trials(curve, np.array([0, 1, 2, 3, 10]), bounds)
    assert at_trials == pytest.approx([1.0, 0.5, 0.5, 1 / 6, 1 / 6])
    assert regret_at_seconds(curve, np.array([5.0]), (0.3, 0.3)) == pytest.approx([0.0])


def test_anytime_curves_of_the_ablation(comparison):
    curves = anytime(comparison)
    # grid: from the earliest first finish (A on t1 at 1 s) to the longest cell (C, 31 s)
    assert curves.seconds.x[0] == pytest.approx(1.0)
    assert curves.seconds.x[-1] == pytest.approx(31.0)
    assert np.all(np.diff(np.log(curves.seconds.x)) == pytest.approx(math.log(31) / 99))
    assert list(curves.trials.x) == [1, 2, 3, 4]
    # 7 ranked tasks x 2 seeds, less B's missing file, C's failed seed and C's unreadable file
    assert curves.seconds.n_curves == {A: 14, B: 13, C: 12}
    skipped = {(s.variant, s.task, s.seed): s.reason for s in curves.skipped}
    assert skipped == {
        (B, "keel:t2", 1): "file not found",
        (C, "keel:t1", 0): "missing column(s) loss",
    }
    # before any result every regret is 1; the band is mean +- 1.96 standard errors
    early = curves.seconds.x < 1.5
    assert np.all(curves.seconds.mean[B][early] == 1.0)
    assert np.all(curves.seconds.mean[A][early] < 1.0)  # A's t1 curve finished at 1 s
    half = curves.seconds.high[A] - curves.seconds.mean[A]
    assert half == pytest.approx(curves.seconds.mean[A] - curves.seconds.low[A])
    # the last point of A on t1 seed 0 counts in A's mean: mean of 14 final regrets
    assert 0 <= curves.seconds.mean[A][-1] < curves.seconds.mean[A][0] <= 1
    # 14 (task, seed) pairs less t1 seed 0, t2 seed 1 and t6 seed 1, where a curve is missing
    assert curves.ranks.n_groups == 11
    ranks_sum = sum(curves.ranks.mean_rank[v] for v in VARIANTS)
    assert ranks_sum == pytest.approx(np.full(len(curves.seconds.x), 6.0))


def test_anytime_mean_and_band_by_hand():
    curves = [  # a is best on task x (regret 0 from 1 s) and worst on task y (regret 1)
        Curve("a", "x", 0, np.array([1.0]), np.array([0.1])),
        Curve("b", "x", 0, np.array([1.0]), np.array([0.5])),
        Curve("a", "y", 0, np.array([2.0]), np.array([0.5])),
        Curve("b", "y", 0, np.array([2.0]), np.array([0.1])),
    ]
    result = anytime_regret(curves, ["a", "b"], np.array([0.5, 1.0, 2.0]), axis="seconds")
    assert result.n_curves == {"a": 2, "b": 2}
    assert result.mean["a"] == pytest.approx([1.0, 0.5, 0.5])
    # standard error of (0, 1): sd 1/sqrt(2) over sqrt(2) = 0.5; of (1, 1): 0
    assert result.high["a"] == pytest.approx([1.0, 0.5 + 1.96 * 0.5, 0.5 + 1.96 * 0.5])
    assert result.low["a"] == pytest.approx([1.0, 0.5 - 1.96 * 0.5, 0.5 - 1.96 * 0.5])
    assert result.mean["b"] == pytest.approx([1.0, 1.0, 0.5])


def test_rank_over_time_by_hand():
    curves = [
        Curve("a", "x", 0, np.array([1.0]), np.array([0.1])),
        Curve("b", "x", 0, np.array([2.0]), np.array([0.5])),
        Curve("a", "x", 1, np.array([1.0]), np.array([0.3])),  # seed 1: b has no curve
    ]
    ranks = rank_over_time(curves, ["a", "b"], np.array([0.5, 1.0, 3.0]))
    assert ranks.n_groups == 1
    assert ranks.mean_rank["a"] == pytest.approx([1.5, 1.0, 1.0])
    assert ranks.mean_rank["b"] == pytest.approx([1.5, 2.0, 2.0])


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
    rows = _table(_section(report.read_text(), "Variants"))
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


def test_report_pairwise_significance_and_per_task_tables(report, comparison):
    text = report.read_text()
    pairs = _table(_section(text, "Pairwise comparisons"))
    assert pairs[0] == ["A", "B", "wins", "ties", "losses", "Wilcoxon p"]
    assert pairs[1][:5] == [A, B, "4", "1", "2"]
    p = stats.wilcoxon(MEANS[:, 0], MEANS[:, 1]).pvalue
    assert pairs[1][5] == f"{p:.3g}"
    significance = _section(text, "Significance")
    friedman = stats.friedmanchisquare(*MEANS.T).pvalue
    assert f"p = {friedman:.3g} (alpha = 0.05)" in significance
    assert f"CD = {2.343700586 * math.sqrt(12 / 42):.2f}" in significance
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


def test_missing_results_file(tmp_path):
    with pytest.raises(AutoMLError, match=r"results\.csv: no such file"):
        read_results(tmp_path)


def test_missing_column_is_named(tmp_path):
    rows = [_row(A, "keel:t1", 0, loss=0.25)]
    _write_csv(tmp_path / "results.csv", rows, [h for h in HEADER if h != "status"])
    with pytest.raises(AutoMLError, match=r"results\.csv: missing column\(s\) status"):
        read_results(tmp_path)


def test_non_numeric_loss_names_the_line_and_column(tmp_path):
    rows = [_row(A, "keel:t1", 0, loss=0.25), _row(B, "keel:t1", 0, loss=0.25)]
    rows[1]["test_loss"] = "n/a"
    _write_csv(tmp_path / "results.csv", rows, HEADER)
    with pytest.raises(AutoMLError, match=r"line 3: column test_loss has 'n/a'"):
        read_results(tmp_path)


def test_header_only_table(tmp_path):
    _write_csv(tmp_path / "results.csv", [], HEADER)
    with pytest.raises(AutoMLError, match="no rows"):
        read_results(tmp_path)


def test_all_cells_failed(tmp_path):
    rows = [_row(v, "keel:t1", 0, "error", error="Killed") for v in (A, B)]
    _write_csv(tmp_path / "results.csv", rows, HEADER)
    with pytest.raises(AutoMLError, match=r"all 2 cells failed.*line 2: Killed"):
        compare(read_results(tmp_path))
    with pytest.raises(AutoMLError, match="all 2 cells failed"):
        write_report(tmp_path)
    assert not (tmp_path / "report").exists()
