"""The page's figures, drawn with matplotlib (its non-interactive Agg backend: no display,
safe in a server thread) into PNG files beside the page."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from automl_report.importance import Importance
from automl_report.sections import AlgorithmTime, Anytime

#: A colour per status, the same in every figure and in the page's tables.
STATUS_COLOURS = {
    "ok": "#2b8cbe",
    "crashed": "#d7301f",
    "timeout": "#fd8d3c",
    "memout": "#984ea3",
}
DPI = 90


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def draw_anytime(curve: Anytime, metric: str, path: Path) -> Path:
    """Best loss so far against seconds and against trials, every trial a point coloured by
    status; a failed trial (no loss) is drawn as a cross above the highest loss."""
    plt = _pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(12, 3.8), dpi=DPI, sharey=True)
    losses = np.array(curve.loss, dtype=float)
    finite = losses[np.isfinite(losses)]
    ceiling = (finite.max() + 0.05 * (np.ptp(finite) or 1.0)) if len(finite) else 1.0
    order = np.arange(1, len(losses) + 1)
    statuses = np.array(curve.status)
    for ax, x, label in (
        (axes[0], np.array(curve.seconds), "seconds since the search started"),
        (axes[1], order, "trials finished"),
    ):
        for status, colour in STATUS_COLOURS.items():
            chosen = statuses == status
            if not chosen.any():
                continue
            y = np.where(np.isfinite(losses[chosen]), losses[chosen], ceiling)
            ax.scatter(
                x[chosen],
                y,
                s=16 if status == "ok" else 28,
                c=colour,
                marker="o" if status == "ok" else "x",
                alpha=0.7 if status == "ok" else 0.9,
                linewidths=1.0 if status != "ok" else 0,
                label=f"{status} ({int(chosen.sum())})",
            )
        best = np.array(curve.best, dtype=float)
        shown = np.isfinite(best)
        if shown.any():
            ax.step(x[shown], best[shown], where="post", color="black", lw=1.6, label="best")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"validation loss ({metric})")
    if len(finite):
        margin = 0.05 * (np.ptp(finite) or 1.0)
        axes[0].set_ylim(finite.min() - margin, ceiling + margin)
    # beside the plots, not on them: failures are drawn along the top, where a legend sits
    axes[1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    figure.subplots_adjust(left=0.07, right=0.88, bottom=0.13, top=0.97, wspace=0.04)
    return _save(figure, path)


def draw_algorithms(rows: Sequence[AlgorithmTime], path: Path, top: int = 15) -> Path:
    """Seconds of evaluation per learning algorithm (the most first), failed trials' share
    in red."""
    plt = _pyplot()
    rows = list(rows)[:top]
    figure, ax = plt.subplots(figsize=(7, 0.35 * len(rows) + 1.0), dpi=DPI)
    names = [r.algorithm for r in rows][::-1]
    seconds = np.array([r.seconds for r in rows][::-1])
    ax.barh(names, seconds, color=STATUS_COLOURS["ok"])
    ax.set_xlabel("seconds of evaluation")
    for y, row in enumerate(rows[::-1]):
        ax.text(row.seconds, y, f" {row.trials} trials", va="center", fontsize=8)
    ax.set_xlim(0, (seconds.max() if len(seconds) else 1.0) * 1.25 or 1.0)
    ax.grid(axis="x", alpha=0.3)
    _leave_room_for(figure, names)
    return _save(figure, path)


def draw_importance(importance: Importance, path: Path, top: int = 15) -> Path:
    """The hyper-parameters whose permutation hurts the surrogate most."""
    plt = _pyplot()
    n = min(top, len(importance.names))
    figure, ax = plt.subplots(figsize=(7, 0.32 * n + 1.1), dpi=DPI)
    names = [short_name(name) for name in importance.names[:n]][::-1]
    ax.barh(
        names,
        importance.mean[:n][::-1],
        xerr=importance.std[:n][::-1],
        color="#41ab5d",
        error_kw={"lw": 0.8},
    )
    ax.set_xlabel("drop of the surrogate's R² when permuted")
    ax.tick_params(axis="y", labelsize=8)
    ax.grid(axis="x", alpha=0.3)
    _leave_room_for(figure, names, fontsize=8)
    return _save(figure, path)


def short_name(name: str, width: int = 40) -> str:
    """A hyper-parameter's last two name parts (``rescaling:__choice__``,
    ``minority_coalescer:minimum_fraction``), at most ``width`` characters (the start cut):
    auto-sklearn's full names run to 100 characters."""
    short = ":".join(name.split(":")[-2:])
    return short if len(short) <= width else "…" + short[-(width - 1) :]


def _leave_room_for(figure, labels: Sequence[str], fontsize: float = 10) -> None:
    """Margins for horizontal bars with ``labels`` on the left, set directly: matplotlib's
    ``tight_layout`` measures every text and costs a tenth of a second per figure."""
    width_inches = figure.get_figwidth()
    label_inches = 0.6 * fontsize / 72 * max((len(label) for label in labels), default=1)
    left = min(0.6, (label_inches + 0.2) / width_inches)
    bottom = min(0.4, 0.5 / figure.get_figheight())
    figure.subplots_adjust(left=left, right=0.97, top=0.97, bottom=bottom)


def _save(figure, path: Path) -> Path:
    figure.savefig(path, format="png")
    _pyplot().close(figure)
    return path
