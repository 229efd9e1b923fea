"""The report of ``automl compare``: Markdown, HTML and figures from an ablation's results.

:func:`write_report` reads ``results.csv`` with :mod:`automl_bench.compare` and writes, into one
folder, ``report.md`` and ``report.html`` (the same content: the Markdown for a repository or a
pull request, the HTML for a browser) and the PNG figures both embed. The report is built once
as a list of blocks (headings, paragraphs, tables, figures) and rendered twice, so the two can
never disagree.

Figures need matplotlib, an optional dependency (``pip install "automl-core[report]"``): it is
imported only when a figure is drawn, and drawn on the non-interactive Agg canvas, so writing a
report changes no global matplotlib state and needs no display.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from automl_bench.compare import (
    DEFAULT_ALPHA,
    DEFAULT_TIE,
    Anytime,
    AnytimeCurves,
    Comparison,
    FailedCells,
    RankCurves,
    anytime,
    compare,
    read_results,
)
from automl_core.errors import AutoMLError

REPORT_DIR = "report"
CD_FIGURE = "critical_difference.png"
TIME_FIGURE = "regret_vs_time.png"
TRIALS_FIGURE = "regret_vs_trials.png"
RANK_FIGURE = "rank_vs_time.png"
MISSING = "—"
#: Error texts are cut to their first line and this many characters in the failed-cells table.
ERROR_CHARS = 200


def write_report(
    results_dir: Path,
    out_dir: Path | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
    tie: float = DEFAULT_TIE,
    failed: FailedCells = "drop",
) -> Path:
    """Write the comparison report of ``results_dir/results.csv`` into ``out_dir`` (default
    ``results_dir/report``) and return the path of ``report.md``.

    ``alpha`` is the significance level of the omnibus tests, the critical difference and the
    Holm-adjusted pairwise p-values; ``tie`` the resolution the per-task mean losses are
    rounded to (variants whose rounded losses are equal tie on a task); ``failed`` how a
    failed cell counts (see :func:`~automl_bench.compare.mean_losses`).
    """
    results_dir = Path(results_dir)
    comparison = compare(read_results(results_dir), alpha=alpha, tie=tie, failed=failed)
    out = Path(out_dir) if out_dir is not None else results_dir / REPORT_DIR
    out.mkdir(parents=True, exist_ok=True)
    curves = anytime(comparison)
    figures = draw_figures(comparison, curves, out)
    title = f"Comparison of {_count(len(comparison.variants), 'variant')}"
    blocks: list[Block] = [Heading(title, 1), *report_blocks(comparison, curves, figures)]
    (out / "report.md").write_text(to_markdown(blocks), encoding="utf-8")
    (out / "report.html").write_text(to_html(blocks, title), encoding="utf-8")
    return out / "report.md"


# ---------------------------------------------------------------------------------------------
# Number formats: one per kind of quantity, used by every table and sentence
# ---------------------------------------------------------------------------------------------


def fmt_loss(value: float) -> str:
    """Losses and other values in [0, 1] (normalised scores, regrets): 4 decimals."""
    return f"{value:.4f}" if math.isfinite(value) else MISSING


def fmt_rank(value: float) -> str:
    """Ranks and rank differences (the critical difference): 2 decimals."""
    return f"{value:.2f}" if math.isfinite(value) else MISSING


def fmt_p(value: float | None) -> str:
    """p-values: 3 significant digits."""
    return f"{value:.3g}" if value is not None and math.isfinite(value) else MISSING


def fmt_stat(value: float) -> str:
    """Test statistics (chi-square, F): 4 significant digits."""
    return f"{value:.4g}" if math.isfinite(value) else "∞"


def fmt_seconds(value: float) -> str:
    """Wall times: 1 decimal."""
    return f"{value:.1f}" if math.isfinite(value) else MISSING


# ---------------------------------------------------------------------------------------------
# The document: blocks rendered as Markdown and as HTML
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Paragraph:
    """Text where `backquoted` spans are code."""

    text: str


@dataclass(frozen=True)
class Bullets:
    items: list[str]


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]
    #: "l" or "r" per column (numbers are right-aligned).
    align: str = ""
    #: (row, column) of the cells to print in bold.
    bold: set[tuple[int, int]] = field(default_factory=set)


@dataclass(frozen=True)
class Figure:
    file: str
    alt: str


Block = Heading | Paragraph | Bullets | Table | Figure


def to_markdown(blocks: Sequence[Block]) -> str:
    """GitHub-flavoured Markdown of the blocks."""
    parts = []
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(f"{'#' * block.level} {block.text}")
        elif isinstance(block, Paragraph):
            parts.append(block.text)
        elif isinstance(block, Bullets):
            parts.append("\n".join(f"- {item}" for item in block.items))
        elif isinstance(block, Table):
            parts.append(_markdown_table(block))
        else:
            parts.append(f"![{block.alt}]({block.file})")
    return "\n\n".join(parts) + "\n"


def _markdown_table(table: Table) -> str:
    def cell(text: str, bold: bool) -> str:
        text = text.replace("|", "\\|")
        return f"**{text}**" if bold else text

    align = table.align or "l" * len(table.header)
    lines = [
        "| " + " | ".join(cell(h, False) for h in table.header) + " |",
        "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|",
    ]
    for r, row in enumerate(table.rows):
        lines.append("| " + " | ".join(cell(v, (r, c) in table.bold) for c, v in enumerate(row)))
        lines[-1] += " |"
    return "\n".join(lines)


def to_html(blocks: Sequence[Block], title: str) -> str:
    """A self-contained HTML page of the blocks (figures are relative ``<img>`` links);
    ``title`` is the page's title in the browser."""
    body = []
    for block in blocks:
        if isinstance(block, Heading):
            body.append(f"<h{block.level}>{html.escape(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            body.append(f"<p>{_inline_html(block.text)}</p>")
        elif isinstance(block, Bullets):
            items = "".join(f"<li>{_inline_html(item)}</li>" for item in block.items)
            body.append(f"<ul>{items}</ul>")
        elif isinstance(block, Table):
            body.append(_html_table(block))
        else:
            body.append(
                f'<figure><img src="{html.escape(block.file)}" alt="{html.escape(block.alt)}">'
                f"<figcaption>{html.escape(block.alt)}</figcaption></figure>"
            )
    return _HTML_PAGE.format(title=html.escape(title), body="\n".join(body))


def _inline_html(text: str) -> str:
    """Escape ``text`` and turn its `backquoted` spans into <code>."""
    return re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(text))


def _html_table(table: Table) -> str:
    align = table.align or "l" * len(table.header)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.header)
    rows = []
    for r, row in enumerate(table.rows):
        cells = []
        for c, value in enumerate(row):
            text = html.escape(value)
            if (r, c) in table.bold:
                text = f"<strong>{text}</strong>"
            style = ' class="num"' if align[c] == "r" else ""
            cells.append(f"<td{style}>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


_HTML_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 75em; margin: 2em auto; padding: 0 1em;
       color: #222; line-height: 1.45; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }}
th {{ background: #f3f3f3; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
code {{ background: #f3f3f3; padding: 0 0.2em; }}
img {{ max-width: 100%; }}
figure {{ margin: 1em 0; }}
figcaption {{ color: #555; font-size: 0.9em; }}
</style>
</head>
<body>
{body}
</body>
</html>
"""


# ---------------------------------------------------------------------------------------------
# The content
# ---------------------------------------------------------------------------------------------


def report_blocks(
    comparison: Comparison, curves: Anytime, figures: dict[str, Block]
) -> list[Block]:
    """Every section of the report, in reading order: what was compared, the verdict, the
    details behind it, and what was left out. ``figures`` maps a figure's file name to its
    block (from :func:`draw_figures`): the figure, or a paragraph saying why it was not
    drawn."""
    return [
        *_overview(comparison),
        *_variants_section(comparison),
        *_significance_section(comparison, figures),
        *_pairwise_section(comparison),
        *_anytime_section(curves, figures),
        *_per_task_section(comparison),
        *_left_out_section(comparison, curves),
    ]


def _overview(c: Comparison) -> list[Block]:
    results = c.results
    rows = results.rows
    seeds = sorted({int(s) for s in results.ok["seed"]})
    metrics = ", ".join(f"`{m}`" for m in results.metrics) or "not recorded"
    n_all_tasks = len(c.all_losses.index)
    return [
        Paragraph(
            f"Results: `{results.path}`. {_count(len(c.variants), 'variant')}, "
            f"{_count(len(c.tasks), 'task')} ranked of {n_all_tasks}, "
            f"{_count(len(seeds), 'seed')} ({', '.join(map(str, seeds))}); metric: {metrics}. "
            f"{_count(len(rows), 'cell')}: {len(results.ok)} ok, {len(results.failed)} failed."
        ),
        Paragraph(
            "The loss of a cell is its test loss (lower is better, `1 - score` for scores), or "
            "its validation loss on table-lookup tasks, which have no test split. A variant's "
            "loss on a task is the mean over its successful seeds, rounded to a multiple of "
            f"{c.tie:g}: variants whose rounded losses are equal tie on the task, in every "
            "statistic below. Statistics are over the tasks where every variant has at least "
            "one successful cell; each task counts once, whatever its number of seeds."
        ),
        Bullets([f"`{v}`" for v in c.variants]),
    ]


def _variants_section(c: Comparison) -> list[Block]:
    results = c.results
    ok = results.ok[results.ok["task"].isin(c.tasks)]
    order = np.argsort(c.mean_ranks, kind="stable")
    rows = []
    for i in order:
        variant = c.variants[i]
        own = results.rows[results.rows["variant"] == variant]
        seconds = ok[ok["variant"] == variant]["seconds"]
        rows.append(
            [
                variant,
                fmt_rank(float(c.mean_ranks[i])),
                fmt_loss(float(c.scores[i])),
                fmt_loss(float(c.losses[:, i].mean())),
                fmt_seconds(float(seconds.mean()) if seconds.notna().any() else math.nan),
                str(int((own["status"] == "ok").sum())),
                str(int((own["status"] != "ok").sum())),
            ]
        )
    return [
        Heading("Variants"),
        Paragraph(
            f"Sorted by mean rank over the {len(c.tasks)} ranked tasks (1 = lowest loss, ties "
            "share the average rank). Normalised score: per task `(worst - loss) / (worst - "
            "best)` over the variants' mean losses, averaged over tasks (1 = always best). Mean "
            "loss: the mean over the ranked tasks of the variant's loss on each task (itself a "
            "mean over seeds). Mean seconds: the mean over the variant's successful cells of the "
            "ranked tasks. The cell counts are over all tasks."
        ),
        Table(
            [
                "variant",
                "mean rank",
                "normalised score",
                "mean loss",
                "mean seconds",
                "ok cells",
                "failed cells",
            ],
            rows,
            align="lrrrrrr",
        ),
    ]


def _significance_section(c: Comparison, figures: dict[str, Block]) -> list[Block]:
    k, n = len(c.variants), len(c.tasks)
    blocks: list[Block] = [Heading("Significance")]
    f = c.friedman
    if f is None:
        why = (
            "they need at least 3 variants; see the pairwise Wilcoxon test"
            if k < 3
            else "too few tasks, or every task a complete tie"
        )
        blocks.append(Paragraph(f"Friedman and Iman–Davenport tests: not applicable ({why})."))
    else:
        verdict = "differ" if f.f_p_value < c.alpha else "do not differ"
        blocks.append(
            Paragraph(
                f"Friedman test over {n} tasks: chi² = {fmt_stat(f.chi2)}, "
                f"p = {fmt_p(f.p_value)}. Iman–Davenport F-test (the F form of the Friedman "
                f"statistic, which Demšar 2006 recommends): F = {fmt_stat(f.f)} with "
                f"({f.df[0]}, {f.df[1]}) degrees of freedom, p = {fmt_p(f.f_p_value)}. By the "
                f"Iman–Davenport test at alpha = {c.alpha:g}, the variants {verdict} "
                "significantly."
            )
        )
    if c.cd is not None:
        blocks.append(
            Paragraph(
                f"Nemenyi critical difference (Demšar 2006), alpha = {c.alpha:g}, k = {k} "
                f"variants, N = {n} tasks: CD = {fmt_rank(c.cd)}. Two variants whose mean ranks "
                "differ by less than CD are not significantly different; the bars of the "
                "diagram join such groups. The groups are shown whatever the omnibus test "
                "says: Demšar's protocol reads this post-hoc test only when the Iman–Davenport "
                "test rejects."
            )
        )
        groups = [" / ".join(f"`{v}`" for v in g) for g in c.cliques]
        blocks.append(Bullets(groups or ["no group: every pair of variants differs by CD"]))
    blocks.append(figures[CD_FIGURE])
    return blocks


def _pairwise_section(c: Comparison) -> list[Block]:
    if not c.pairs:
        return []
    rows = [
        [p.a, p.b, str(p.wins), str(p.ties), str(p.losses), fmt_p(p.p_value), fmt_p(p.p_holm)]
        for p in c.pairs
    ]
    return [
        Heading("Pairwise comparisons"),
        Paragraph(
            f"Tasks where variant A's rounded mean loss is lower (wins), equal (ties) or "
            f"higher (losses) than B's, over the {len(c.tasks)} ranked tasks; two-sided "
            "Wilcoxon signed-rank p-value of the per-task differences (ties dropped; "
            f"{MISSING} when every task is a tie or there are fewer than 2 tasks), and the same "
            f"p-value adjusted by Holm's method for the {len(c.pairs)} comparisons (Holm p): "
            f"a pair differs significantly at alpha = {c.alpha:g} when its Holm p is below it."
        ),
        Table(["A", "B", "wins", "ties", "losses", "Wilcoxon p", "Holm p"], rows, align="llrrrrr"),
    ]


def _anytime_section(curves: Anytime, figures: dict[str, Block]) -> list[Block]:
    per_variant = ", ".join(f"{n} of `{v}`" for v, n in curves.n_curves.items())
    counts = f"{_count(sum(curves.n_curves.values()), 'curve')} ({per_variant})"
    return [
        Heading("Anytime performance"),
        Paragraph(
            "Regret of the best configuration found so far (by validation loss), normalised per "
            "task to [0, 1] between the lowest and highest validation loss of any curve on that "
            "task (1 before a cell's first result, and throughout on a task with no finite "
            "loss). Each variant's regret is first averaged over its seeds on each task, then "
            "over the tasks where it has a curve (the legend says how many): the task is the "
            "unit, as in the rank statistics. The bands are 95% confidence intervals over "
            "tasks, mean ± t(0.975, n - 1) · sd / √n for n tasks (no band with one task). The "
            f"time axis runs from the first result to the last of any curve. {counts}."
        ),
        Paragraph(
            "The bounds pool the validation losses of every variant, whole-system peers "
            "included, and a peer validates on its own split or subsamples: its validation "
            "losses are not comparable with the recipe's, so a peer can move a task's bounds "
            "and its own regret is only roughly on the others' scale. The final losses and the "
            "ranks above do not depend on these bounds."
        ),
        figures[TIME_FIGURE],
        figures[TRIALS_FIGURE],
        Paragraph(
            "Mean rank of the variants' regrets over time: on each of the "
            f"{curves.ranks.n_tasks} tasks with a curve of every variant, the variants' "
            "regrets (averaged over seeds) are ranked, and the ranks averaged over the tasks."
        ),
        figures[RANK_FIGURE],
    ]


def _per_task_section(c: Comparison) -> list[Block]:
    table = c.all_losses
    rows, bold = [], set()
    for r, (task, values) in enumerate(table.iterrows()):
        losses = values.to_numpy(dtype=float)
        rows.append([str(task), *(fmt_loss(float(v)) for v in losses)])
        if np.any(np.isfinite(losses)):
            best = np.nanmin(losses)
            bold |= {(r, 1 + i) for i, v in enumerate(losses) if v == best}
    blocks: list[Block] = [
        Heading("Loss per task"),
        Paragraph(
            f"Mean loss over successful seeds, rounded to a multiple of {c.tie:g}; the best of "
            f"each task in bold, every tied variant included ({MISSING}: no successful cell)."
        ),
        Table(["task", *c.variants], rows, align="l" + "r" * len(c.variants), bold=bold),
    ]
    if c.counted_last:
        blocks.append(
            Paragraph("Failed cells counted as their task's worst loss (`--failed last`):")
        )
        blocks.append(Bullets([f"`{v}` on `{t}`" for t, v in c.counted_last]))
    if c.dropped_tasks:
        blocks.append(Paragraph("Tasks left out of every statistic:"))
        blocks.append(Bullets([f"`{t}`: {why}" for t, why in c.dropped_tasks.items()]))
    return blocks


def _left_out_section(c: Comparison, curves: Anytime) -> list[Block]:
    failed = c.results.failed
    blocks: list[Block] = [Heading("Failed cells")]
    if failed.empty:
        blocks.append(Paragraph("None."))
    else:
        rows = [
            [str(r["variant"]), str(r["task"]), str(r["seed"]), _first_line(str(r["error"]))]
            for r in failed.to_dict("records")
        ]
        blocks.append(Table(["variant", "task", "seed", "error"], rows, align="llrl"))
    blocks.append(Heading("Skipped curves"))
    if not curves.skipped:
        blocks.append(Paragraph("None."))
    else:
        rows = [[s.variant, s.task, str(s.seed), s.path, s.reason] for s in curves.skipped]
        blocks.append(Table(["variant", "task", "seed", "curve", "reason"], rows, align="llrll"))
    return blocks


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    line = lines[0] if lines else ""
    return line if len(line) <= ERROR_CHARS else line[: ERROR_CHARS - 1] + "…"


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def draw_figures(comparison: Comparison, curves: Anytime, out: Path) -> dict[str, Block]:
    """Draw every figure the data allows into ``out``. Returns, for each figure's file name,
    its block in the report: the figure with its caption, or a paragraph saying why it was not
    drawn."""
    variants = comparison.variants

    def not_drawn(name: str, why: str) -> Block:
        return Paragraph(f"`{name}`: not drawn: {why}.")

    figures: dict[str, Block] = {}
    if comparison.cd is None:
        figures[CD_FIGURE] = not_drawn(CD_FIGURE, "a critical-difference diagram needs 2 variants")
    else:
        plot_critical_difference(
            variants, comparison.mean_ranks, comparison.cd, comparison.cliques, out / CD_FIGURE
        )
        figures[CD_FIGURE] = Figure(
            CD_FIGURE,
            f"Critical-difference diagram: mean ranks (1 = best), CD = "
            f"{fmt_rank(comparison.cd)} at alpha = {comparison.alpha:g}",
        )
    if not any(curves.n_curves.values()):
        for name in (TIME_FIGURE, TRIALS_FIGURE, RANK_FIGURE):
            figures[name] = not_drawn(name, "no readable curve")
        return figures
    plot_regret(curves.seconds, variants, out / TIME_FIGURE, x_label="seconds", log_x=True)
    figures[TIME_FIGURE] = Figure(
        TIME_FIGURE, "Normalised regret of the best so far against wall time, mean over tasks"
    )
    plot_regret(curves.trials, variants, out / TRIALS_FIGURE, x_label="configurations evaluated")
    figures[TRIALS_FIGURE] = Figure(
        TRIALS_FIGURE, "Normalised regret of the best so far against trials, mean over tasks"
    )
    if curves.ranks.n_tasks == 0:
        figures[RANK_FIGURE] = not_drawn(RANK_FIGURE, "no task has a curve of every variant")
    else:
        plot_rank_over_time(curves.ranks, variants, out / RANK_FIGURE)
        figures[RANK_FIGURE] = Figure(
            RANK_FIGURE, "Mean rank over tasks of the variants' regrets against wall time"
        )
    return figures


def _new_figure(width: float, height: float) -> Any:
    """A matplotlib Figure on an Agg canvas (no pyplot: no global state, no display)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure as MplFigure
    except ImportError:
        raise AutoMLError(
            'the report\'s figures need matplotlib: pip install "automl-core[report]"'
        ) from None
    figure = MplFigure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(figure)
    return figure


def _colours(variants: Sequence[str]) -> dict[str, Any]:
    """One colour per variant, the same in every figure."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(variants) <= 10 else "tab20"]
    return {v: cmap(i % cmap.N) for i, v in enumerate(variants)}


def plot_critical_difference(
    variants: Sequence[str],
    ranks: np.ndarray,
    cd: float,
    cliques: Sequence[Sequence[str]],
    path: Path,
) -> None:
    """Demšar's critical-difference diagram: a rank axis (1, the best, on the left), each
    variant's mean rank joined to its label (the better half on the left), a bar as long as
    the critical difference, and thick bars under the axis joining variants that are not
    significantly different."""
    k = len(variants)
    labels = [f"{v} ({r:.2f})" for v, r in zip(variants, ranks, strict=True)]
    label_in = 0.075 * max(len(s) for s in labels) + 0.3  # inches of text each side
    axis_in = max(3.0, 1.1 * (k - 1))
    half = (k + 1) // 2
    depth = 0.45 + 0.18 * len(cliques)  # below the axis: clique bars, then labels
    height_units = 1.0 + depth + 0.3 * half
    width = axis_in + 2 * label_in
    figure = _new_figure(width, 0.55 * height_units + 0.3)
    ax = figure.add_axes((label_in / width, 0.05, axis_in / width, 0.9))
    low, high = 1.0, float(max(k, 2))
    ax.set_xlim(low, high)
    ax.set_ylim(height_units - 0.8, -1.0)  # y grows downwards
    ax.axis("off")
    per_inch = (high - low) / axis_in
    ink = {"color": "black", "clip_on": False}
    # the rank axis, with a tick per integer rank
    ax.plot([low, high], [0, 0], lw=1.2, **ink)
    for tick in range(1, k + 1):
        ax.plot([tick, tick], [0, -0.1], lw=1.2, **ink)
        ax.text(tick, -0.15, str(tick), ha="center", va="bottom", fontsize=10)
    # the critical difference, above the axis from rank 1
    ax.plot([low, low + cd], [-0.7, -0.7], lw=2, **ink)
    for end in (low, low + cd):
        ax.plot([end, end], [-0.65, -0.75], lw=2, **ink)
    ax.text(low + cd / 2, -0.77, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=10)
    # cliques: thick bars just below the axis
    index = {v: i for i, v in enumerate(variants)}
    for g, group in enumerate(cliques):
        members = [float(ranks[index[v]]) for v in group]
        y = 0.25 + 0.18 * g
        ax.plot(
            [min(members) - 0.03, max(members) + 0.03], [y, y], lw=4, solid_capstyle="round", **ink
        )
    # each variant: a line down from its rank, then out to its label
    order = list(np.argsort(ranks, kind="stable"))
    out = 0.15 * per_inch
    for row, i in enumerate(order[:half]):
        y = depth + 0.3 * row
        r = float(ranks[i])
        ax.plot([r, r, low - out], [0, y, y], lw=1, **ink)
        ax.text(low - out - 0.05 * per_inch, y, labels[i], ha="right", va="center", fontsize=10)
    for row, i in enumerate(reversed(order[half:])):
        y = depth + 0.3 * row
        r = float(ranks[i])
        ax.plot([r, r, high + out], [0, y, y], lw=1, **ink)
        ax.text(high + out + 0.05 * per_inch, y, labels[i], ha="left", va="center", fontsize=10)
    figure.savefig(path, bbox_inches="tight")


def _log_seconds(ax: Any) -> None:
    """A log-scaled x axis labelled 1, 10, 100 rather than 10^0, 10^1, 10^2."""
    from matplotlib.ticker import ScalarFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(ScalarFormatter())


def _legend_below(ax: Any) -> None:
    """Legend under the axes, one variant a line: labels are long recipe overrides."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False, fontsize=9)


def plot_regret(
    curves: AnytimeCurves,
    variants: Sequence[str],
    path: Path,
    *,
    x_label: str,
    log_x: bool = False,
) -> None:
    """Mean normalised regret over tasks per variant against ``x_label``, with its confidence
    band."""
    figure = _new_figure(7.5, 4.5 + 0.22 * len(variants))
    ax = figure.add_subplot()
    colours = _colours(variants)
    for v in variants:
        if v not in curves.mean:
            continue
        label = f"{v} ({_count(curves.n_tasks[v], 'task')})"
        ax.step(curves.x, curves.mean[v], where="post", color=colours[v], label=label)
        ax.fill_between(
            curves.x, curves.low[v], curves.high[v], step="post", color=colours[v], alpha=0.2
        )
    if log_x:
        _log_seconds(ax)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(x_label)
    ax.set_ylabel("normalised regret (0 = best loss seen on the task)")
    ax.set_title(f"Best validation loss so far, as regret, against {x_label}")
    ax.grid(alpha=0.3)
    _legend_below(ax)
    figure.savefig(path, bbox_inches="tight")


def plot_rank_over_time(ranks: RankCurves, variants: Sequence[str], path: Path) -> None:
    """Mean rank of each variant's regret against wall time (log scale)."""
    figure = _new_figure(7.5, 4.5 + 0.22 * len(variants))
    ax = figure.add_subplot()
    colours = _colours(variants)
    for v in variants:
        ax.step(ranks.x, ranks.mean_rank[v], where="post", color=colours[v], label=v)
    _log_seconds(ax)
    ax.set_ylim(0.9, len(variants) + 0.1)
    ax.set_xlabel("seconds")
    ax.set_ylabel("mean rank (1 = lowest regret)")
    ax.set_title(f"Mean rank over time ({_count(ranks.n_tasks, 'task')})")
    ax.grid(alpha=0.3)
    _legend_below(ax)
    figure.savefig(path, bbox_inches="tight")
