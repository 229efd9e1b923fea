"""Drawing a run's page: read the run, compute each part, draw the figures, write the HTML.

``render_report`` is what ``automl report``, the dashboard and the estimators' ``report()``
all call, so the three show the same page."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from automl_report import sections
from automl_report.figures import draw_algorithms, draw_anytime, draw_importance
from automl_report.importance import MIN_TRIALS, hyperparameter_importance
from automl_report.page import PageContent, page
from automl_report.reading import RunRecord, read_run

PAGE_FILE = "index.html"
ANYTIME_PNG = "anytime.png"
ALGORITHMS_PNG = "algorithms.png"
IMPORTANCE_PNG = "importance.png"
#: Leaderboard rows.
TOP = 20


def render_report(
    run_dir: str | Path,
    out_dir: str | Path,
    *,
    live: bool = False,
    refresh_seconds: int = 5,
) -> Path:
    """Write the page of the run in ``run_dir`` (``index.html`` and its PNG figures) into
    ``out_dir`` and return the page's path. ``live``: the page reloads itself every
    ``refresh_seconds`` (the dashboard's). Only ``out_dir`` is written to."""
    record = read_run(run_dir)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    content = page_content(record, out, live=live, refresh_seconds=refresh_seconds)
    path = out / PAGE_FILE
    _write_atomically(path, page(content))
    return path


def page_content(
    record: RunRecord, out: Path, *, live: bool = False, refresh_seconds: int = 5
) -> PageContent:
    """Every part of the page, its figures drawn into ``out``."""
    trials = record.trials
    curve = sections.anytime(trials, record.started_at)
    algorithms = sections.time_per_algorithm(trials)
    importance, note = _importance(record)
    version = str(time.time_ns())
    anytime_png = (
        _draw(draw_anytime, curve, record.metric, out / ANYTIME_PNG) if curve.trial else None
    )
    algorithms_png = (
        _draw(draw_algorithms, algorithms, out / ALGORITHMS_PNG)
        if len(algorithms) > 1 or (algorithms and algorithms[0].algorithm != "-")
        else None
    )
    importance_png = (
        _draw(draw_importance, importance, out / IMPORTANCE_PNG) if importance else None
    )
    summary = record.summary or {}
    return PageContent(
        record=record,
        anytime_png=anytime_png,
        leaderboard=sections.leaderboard(trials, record.metric, summary.get("ensemble") or {}, TOP),
        statuses=sections.status_counts(trials),
        errors=sections.error_groups(trials),
        algorithms=algorithms if algorithms_png else [],
        algorithms_png=algorithms_png,
        rungs=sections.rungs(trials),
        promotions=sections.promotion_paths(trials),
        tree=sections.mcts_tree(trials) if record.strategy == "mcts" else [],
        tree_stages=sections.tree_stages(trials) if record.strategy == "mcts" else [],
        importance=importance,
        importance_png=importance_png,
        importance_note=note,
        live=live,
        refresh_seconds=refresh_seconds,
        version=version,
    )


def _importance(record: RunRecord):
    """The importances for a model-based run, or None and why not."""
    if record.surrogate is None:
        return None, (
            "not computed: the run's strategy uses no surrogate (importance from a surrogate "
            "is shown for model-based runs)"
        )
    finished = [t for t in record.trials if t.ranks]
    if finished and all(set(t.trial.config) == {"candidate"} for t in finished):
        return None, (
            "not computed: a pool's configurations are candidate indices; the candidates' "
            "hyper-parameters are " + "not recorded by this run"
        )
    importance = hyperparameter_importance(record.trials)
    if importance is None:
        return None, (
            f"not computed yet: fewer than {MIN_TRIALS} successful trials with different losses"
        )
    return importance, ""


def _draw(draw, *arguments) -> str:
    """Draw a figure and return its file name (the page refers to it by relative path)."""
    return Path(draw(*arguments)).name


def _write_atomically(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all: a dashboard serving it never sends half a page."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".page-", suffix=".html")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text)
    os.chmod(temporary, 0o644)  # mkstemp's file is private; a page is for reading
    os.replace(temporary, path)
