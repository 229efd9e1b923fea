"""The page itself: HTML with its CSS inline and its figures by relative path, nothing from
the network, so that the folder can be copied, mailed or opened offline.

Every section says where its content comes from, and says so plainly when the run did not
record it, rather than leaving a blank or guessing."""

from __future__ import annotations

import html
import json
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from automl_engine.cli import describe_warm_start
from automl_report.figures import STATUS_COLOURS, short_name
from automl_report.importance import Importance
from automl_report.reading import RunRecord
from automl_report.sections import (
    AlgorithmTime,
    Entry,
    ErrorGroup,
    Rung,
    TreeNode,
    pipeline_text,
)

NOT_RECORDED = "not recorded by this run"

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;
background:#f6f7f9}
header{background:#1f3a5f;color:#fff;padding:14px 28px}
header h1{margin:0;font-size:1.35em}header p{margin:4px 0 0;opacity:.9}
main{padding:8px 28px 40px;max-width:1250px}
section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:10px 18px;
margin:14px 0}
h2{font-size:1.1em;margin:6px 0 10px;color:#1f3a5f}
h3{font-size:.98em;margin:14px 0 6px;color:#1f3a5f}
table{border-collapse:collapse;font-size:.86em}
th,td{border-bottom:1px solid #e4e7eb;padding:3px 9px;text-align:left;vertical-align:top}
th{background:#f0f2f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
.hp{font-size:.8em;color:#555}.note{color:#666;font-size:.88em}
.missing{color:#8a6d3b;font-style:italic}
.badge{display:inline-block;padding:1px 7px;border-radius:9px;color:#fff;font-size:.8em}
.live{background:#2ca25f}.done{background:#636363}
img{max-width:100%;height:auto}
pre{background:#f6f8fa;padding:6px;font-size:.78em;overflow-x:auto;max-height:220px}
.best{font-weight:bold;background:#fff7d6}
.grid{display:flex;flex-wrap:wrap;gap:26px;align-items:flex-start}
"""


@dataclass
class PageContent:
    """What the page shows, computed from the run (:mod:`automl_report.render`)."""

    record: RunRecord
    anytime_png: str | None
    leaderboard: list[Entry]
    statuses: dict[str, int]
    errors: list[ErrorGroup]
    algorithms: list[AlgorithmTime]
    algorithms_png: str | None
    rungs: list[Rung]
    promotions: list[list[Any]]
    tree: list[TreeNode]
    tree_stages: list[str]
    importance: Importance | None
    importance_png: str | None
    importance_note: str
    live: bool = False
    refresh_seconds: int = 5
    version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def page(content: PageContent) -> str:
    """The whole page as one HTML string."""
    record = content.record
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>automl run {_e(record.run_dir.name)}</title>",
        f"<style>{CSS}</style>",
    ]
    if content.live:
        head.append(f'<meta http-equiv="refresh" content="{content.refresh_seconds}">')
    head.append("</head><body>")
    body = [
        _header(content),
        "<main>",
        _overview(content),
        _anytime(content),
        _leaderboard(content),
        _endings(content),
        _algorithms(content),
        _final_model(record),
        _setup(record),
        _metafeatures(record),
        _fidelity(content),
        _tree(content),
        _importance(content),
        _provenance(record),
        "</main></body></html>",
    ]
    return "\n".join(head + [part for part in body if part])


# -- parts ------------------------------------------------------------------------------------
def _header(content: PageContent) -> str:
    record = content.record
    n = len(record.trials)
    if record.finished:
        state = '<span class="badge done">finished</span>'
    elif content.live:
        state = (
            '<span class="badge live">live</span> '
            f'<span class="note" style="color:#ddd">this page reloads every '
            f"{content.refresh_seconds} s</span>"
        )
    else:
        state = '<span class="badge live">not finished</span>'
    drawn = time.strftime("%Y-%m-%d %H:%M:%S")
    return (
        f"<header><h1>{_e(record.run_dir.name)} {state}</h1>"
        f"<p>{_e(record.dataset)} &middot; metric {_e(record.metric)} &middot; "
        f'<span id="trial-count">{n}</span> trials &middot; strategy {_e(record.strategy)}'
        + (f" (surrogate {_e(record.surrogate)})" if record.surrogate else "")
        + f' &middot; <span class="note" style="color:#ddd">drawn {drawn}</span></p></header>'
    )


def _overview(content: PageContent) -> str:
    record = content.record
    recipe = record.recipe
    summary = record.summary or {}
    ranked = [e for e in content.leaderboard if e.status == "ok"]
    rows: list[tuple[str, str]] = [
        ("run folder", str(record.run_dir)),
        ("dataset", record.dataset),
        ("metric", record.metric),
        ("search", _compact(recipe.get("search"))),
        ("space", _compact(recipe.get("space")) if recipe.get("space") else "(a benchmark's pool)"),
        ("budget", _compact(recipe.get("budget"))),
        ("seed", str(recipe.get("seed", "-"))),
        ("trials", ", ".join(f"{n} {s}" for s, n in content.statuses.items()) or "none yet"),
    ]
    if ranked:
        best = ranked[0]
        rows.append(("best trial", f"{best.trial}: loss {_num(best.loss)} ({best.pipeline})"))
    if summary:
        rows.append(("stopped because", str(summary.get("stopped_because", "-"))))
        rows.append(("elapsed", f"{float(summary.get('elapsed') or 0):.1f} s"))
        if summary.get("test_scores"):
            scores = ", ".join(f"{k} {_num(v)}" for k, v in summary["test_scores"].items())
            rows.append(("test scores of the final model", scores))
        regret = (summary.get("benchmark") or {}).get("normalised_regret")
        if regret is not None:
            rows.append(("normalised regret", _num(regret)))
    else:
        rows.append(("state", "the run has not finished (no summary yet)"))
    return _section("overview", "Overview", _key_values(rows))


def _anytime(content: PageContent) -> str:
    if content.anytime_png is None:
        return _section("anytime", "Anytime curve", _missing("no trial has finished yet"))
    note = (
        "Every finished trial is a point, coloured by how it ended (a failure, which has no "
        "loss, is a cross above the highest loss); the line is the best loss so far."
    )
    if any(t.trial.budget is not None for t in content.record.trials):
        note += (
            " With budgets, the line counts only trials at the largest budget reached so "
            "far: losses at different budgets are not comparable."
        )
    return _section("anytime", "Anytime curve", _img(content, content.anytime_png) + _p(note))


def _leaderboard(content: PageContent) -> str:
    if not content.leaderboard:
        return _section("leaderboard", "Leaderboard", _missing("no trial has finished yet"))
    budgeted = any(e.budget is not None for e in content.leaderboard)
    header = ["rank", "trial", "loss", content.record.metric, "status"]
    header += ["budget"] if budgeted else []
    header += ["seconds", "origin", "weight", "pipeline and hyper-parameters"]
    rows = []
    for entry in content.leaderboard:
        cells = [
            _td(entry.rank, numeric=True),
            _td(entry.trial, numeric=True),
            _td(_num(entry.loss), numeric=True),
            _td(_num(entry.score), numeric=True),
            _status_cell(entry.status),
        ]
        if budgeted:
            cells.append(_td("full" if entry.budget is None else f"{entry.budget:.4g}", True))
        cells += [
            _td(_num(entry.duration, 2), numeric=True),
            _td(entry.origin),
            _td(f"{entry.weight:.2f}" if entry.weight else "", numeric=True),
            f"<td><b>{_e(entry.pipeline)}</b><br>{_hyperparameters(entry.hyperparameters)}</td>",
        ]
        rows.append(f'<tr class="{"best" if entry.rank == 1 else ""}">{"".join(cells)}</tr>')
    note = _p(
        "Ranked as the run ranks its trials: the largest budget first, then the loss. "
        "Weight: the trial's weight in the final model."
    )
    return _section("leaderboard", "Leaderboard", _table(header, rows) + note)


def _endings(content: PageContent) -> str:
    counts = " ".join(
        f'<span class="badge" style="background:{STATUS_COLOURS.get(s, "#999")}">{_e(s)} '
        f'<span class="count" data-status="{_e(s)}">{n}</span></span>'
        for s, n in content.statuses.items()
    )
    if not content.errors:
        body = f"<p>{counts}</p>" + _p("No trial failed.")
        return _section("endings", "How trials ended", body)
    rows = []
    for group in content.errors:
        trials = ", ".join(str(t) for t in group.trials[:12])
        trials += f", ... ({len(group.trials)})" if len(group.trials) > 12 else ""
        example = (
            f"<details><summary>traceback</summary><pre>{_e(group.example[-3000:])}</pre></details>"
            if group.example
            else ""
        )
        rows.append(
            f"<tr>{_status_cell(group.status)}{_td(len(group.trials), True)}"
            f"<td><code>{_e(group.error)}</code>{example}</td>{_td(trials)}</tr>"
        )
    table = _table(["status", "trials", "error (last line)", "trial ids"], rows)
    return _section("endings", "How trials ended", f"<p>{counts}</p>{table}")


def _algorithms(content: PageContent) -> str:
    if not content.algorithms:
        return ""
    rows = [
        f"<tr>{_td(r.algorithm)}{_td(r.trials, True)}{_td(r.failed, True)}"
        f"{_td(f'{r.seconds:.1f}', True)}{_td(_num(r.best), True)}</tr>"
        for r in content.algorithms
    ]
    table = _table(["algorithm", "trials", "failed", "seconds", "best loss"], rows)
    figure = _img(content, content.algorithms_png) if content.algorithms_png else ""
    note = _p("Seconds of evaluation (fits and predictions of every fold) per learning algorithm.")
    return _section(
        "algorithms", "Time per algorithm", f'<div class="grid">{figure}{table}</div>{note}'
    )


def _final_model(record: RunRecord) -> str:
    summary = record.summary
    title = "Final model"
    if summary is None:
        unfinished = _missing("the run has not finished: no final model yet")
        return _section("final-model", title, unfinished)
    if summary.get("benchmark"):
        body = _p(
            "A table-lookup run fits no model: its result is the best trial and its "
            "normalised regret (above)."
        )
        return _section("final-model", title, body)
    choice = summary.get("final_model") or {}
    ensemble = summary.get("ensemble") or {}
    if not ensemble:
        return _section("final-model", title, _missing("no final model: no trial succeeded"))
    by_id = {t.trial.id: t for t in record.trials}
    rows = []
    for trial, weight in sorted(ensemble.items(), key=lambda kv: -float(kv[1])):
        stored = by_id.get(int(trial))
        rows.append(
            f"<tr>{_td(trial, True)}{_td(f'{float(weight):.3f}', True)}"
            f"{_td(_num(stored.loss) if stored else '-', True)}"
            f"{_td(pipeline_text(stored.trial.config) if stored else '-')}</tr>"
        )
    facts = [(k, _compact(v)) for k, v in choice.items() if k != "members" and v is not None]
    if summary.get("dropped_members"):
        facts.append(("left out (too slow to refit)", _compact(summary["dropped_members"])))
    if summary.get("refit_seconds") is not None:
        facts.append(("refit seconds", f"{float(summary['refit_seconds']):.1f}"))
    table = _table(["trial", "weight", "validation loss", "pipeline"], rows)
    return _section("final-model", title, table + _key_values(facts))


def _setup(record: RunRecord) -> str:
    parts = []
    warm = record.meta.get("warmstart")
    recipe_warm = record.recipe.get("warmstart")
    if warm:
        parts.append(_p(_e(describe_warm_start(warm))))
        datasets = (warm.get("info") or {}).get("datasets") or []
        if datasets and isinstance(datasets[0], dict):
            keys = list(datasets[0])
            rows = [
                "<tr>" + "".join(_td(_compact(d.get(k))) for k in keys) + "</tr>"
                for d in datasets[:10]
            ]
            parts.append(_table(keys, rows))
    elif recipe_warm:
        parts.append(_missing(f"warm start ({_compact(recipe_warm)}): {NOT_RECORDED}"))
    else:
        parts.append(_p("Warm start: none (the recipe names no warm-starter)."))
    policy = record.meta.get("policy")
    if policy:
        parts.append(
            _p(
                f"Policy: {_e(policy.get('name', '?'))}, resampling "
                f"{_e(_compact(policy.get('resampling')))}, strategy "
                f"{_e(policy.get('strategy', '?'))}, chosen by the policy selector."
            )
        )
    else:
        resampling = (record.recipe.get("task") or {}).get("resampling")
        parts.append(
            _p(
                "Policy: none chosen (task.resampling is "
                f"{_e(_compact(resampling) if resampling else 'the default')}, not auto)."
            )
        )
    origins: dict[str, int] = {}
    for stored in record.trials:
        origins[stored.trial.origin] = origins.get(stored.trial.origin, 0) + 1
    if origins:
        by_count = sorted(origins.items(), key=lambda kv: -kv[1])
        listed = ", ".join(f"{_e(o or '-')} {n}" for o, n in by_count)
        parts.append(_p(f"Trials by origin (who proposed them): {listed}."))
    return _section("setup", "Warm start and policy", "".join(parts))


def _metafeatures(record: RunRecord) -> str:
    values = record.meta.get("metafeatures")
    if values is None:
        return _section("metafeatures", "Meta-features", _missing(NOT_RECORDED))
    if not values:
        provider = record.recipe.get("metafeatures")
        why = "the recipe names no meta-feature provider" if not provider else NOT_RECORDED
        return _section("metafeatures", "Meta-features", _missing(f"none ({why})"))
    rows = [f"<tr>{_td(k)}{_td(_num(v), True)}</tr>" for k, v in sorted(values.items())]
    half = (len(rows) + 1) // 2
    tables = _table(["meta-feature", "value"], rows[:half])
    if rows[half:]:
        tables += _table(["meta-feature", "value"], rows[half:])
    return _section("metafeatures", "Meta-features", f'<div class="grid">{tables}</div>')


def _fidelity(content: PageContent) -> str:
    if not content.rungs:
        return ""
    rows = [
        f"<tr>{_td(f'{r.budget:.4g}', True)}{_td(r.trials, True)}{_td(r.promoted_in, True)}"
        f"{_td(r.promoted_on, True)}{_td(_num(r.best), True)}{_td(_num(r.median), True)}</tr>"
        for r in content.rungs
    ]
    rungs = _table(
        ["budget (rung)", "trials", "came by promotion", "promoted on", "best loss", "median loss"],
        rows,
    )
    paths = []
    for chain in content.promotions:
        steps = " &rarr; ".join(
            f"{t.trial.id} @{t.trial.budget:.3g}: {_num(t.loss)}" for t in chain
        )
        paths.append(f"<tr>{_td(pipeline_text(chain[0].trial.config))}<td>{steps}</td></tr>")
    body = rungs
    if paths:
        body += "<h3>Promotions (configurations evaluated at several budgets)</h3>"
        body += _table(["pipeline", "trial @budget: loss, smallest budget first"], paths)
    body += _missing(
        "brackets: " + NOT_RECORDED + " (the history keeps each trial's budget and origin, "
        "not the bracket it belonged to); the rungs above pool all brackets"
    )
    return _section("fidelity", "Multi-fidelity: rungs and promotions", body)


def _tree(content: PageContent) -> str:
    if content.record.strategy != "mcts":
        return ""
    if not content.tree:
        return _section("tree", "Tree search", _missing("no trial has finished yet"))
    stages = content.tree_stages
    if not stages:
        body = _missing(
            "the tree's structure: " + NOT_RECORDED + " (a pool's configurations are "
            "candidate indices, which do not name their components)"
        )
        return _section("tree", "Tree search (Mosaic)", body)
    finite = [x for n in content.tree for x in n.losses if math.isfinite(x)]
    worst = max(finite, default=1.0)
    rows = []
    shown = _tree_rows(content.tree)
    for node in shown:
        depth = len(node.path)
        label = "root" if not node.path else node.path[-1]
        indent = "&nbsp;" * 4 * depth
        marker = " &#9733;" if node.on_best_path and node.path else ""
        rows.append(
            f'<tr class="{"best" if node.on_best_path else ""}">'
            f"<td>{indent}{_e(label)}{marker}</td>{_td(stages[depth - 1] if depth else '', False)}"
            f'<td class="n visits">{node.visits}</td>'
            f"{_td(_num(node.value(worst)), True)}{_td(node.tree_trials, True)}</tr>"
        )
    order = " &rarr; ".join(_e(s) for s in stages)
    note = _p(
        f"Decision stages in order: {order}. A node is the components chosen in the first "
        "k stages; visits: the finished trials below it; value: the median of their losses "
        "(a failure counting as the worst loss), as Mosaic values its nodes. &#9733; marks "
        "the path to the best pipeline. 'From tree search': trials the tree proposed (the "
        "others came from the initial design or the warm start). Shown: every learning "
        f"algorithm, the next stage under the {EXPANDED} most visited, and the best path."
    )
    caveat = _missing(
        "the strategy's own tree (which nodes it expanded, its priors): "
        + NOT_RECORDED
        + "; these nodes are rebuilt from the trials' pipelines"
    )
    header = ["node", "stage", "visits", "median loss", "from tree search"]
    return _section("tree", "Tree search (Mosaic)", _table(header, rows) + note + caveat)


#: Under how many of the most visited learning algorithms the tree shows the next stage.
EXPANDED = 3


def _tree_rows(tree: Sequence[TreeNode]) -> list[TreeNode]:
    """The nodes worth a row, in depth-first order: the root, every depth-1 node, the
    depth-2 nodes under the :data:`EXPANDED` most visited depth-1 nodes, and the best path."""
    first = sorted((n for n in tree if len(n.path) == 1), key=lambda n: (-n.visits, n.path))
    opened = {n.path for n in first[:EXPANDED]}
    return [
        n
        for n in tree
        if len(n.path) <= 1 or n.on_best_path or (len(n.path) == 2 and n.path[:1] in opened)
    ]


def _importance(content: PageContent) -> str:
    title = "Hyper-parameter importance"
    if content.importance is None:
        return _section("importance", title, _missing(content.importance_note))
    imp = content.importance
    rows = [
        f'<tr><td title="{_e(name)}">{_e(short_name(name))}</td>'
        f"{_td(f'{m:.4f}', True)}{_td(f'{s:.4f}', True)}</tr>"
        for name, m, s in list(zip(imp.names, imp.mean, imp.std, strict=True))[:20]
    ]
    figure = _img(content, content.importance_png) if content.importance_png else ""
    note = _p(
        f"Permutation importance on a random-forest surrogate fitted to the run's "
        f"{imp.trials} successful trials (configuration, loss): how much the surrogate's R² "
        f"drops when one hyper-parameter's values are shuffled. The surrogate's R² on those "
        f"trials is {imp.r2:.2f}, out of bag {imp.oob_r2:.2f}: importances of a surrogate that "
        "predicts badly mean little. It explains the surrogate in the region the search "
        "visited; conditional and correlated hyper-parameters share credit. Measured: the "
        f"{len(imp.names)} of the {imp.columns} varying hyper-parameters the forest splits on "
        "most (one it never splits on has no importance); names shortened to their last two "
        "parts (hover for the whole)."
    )
    table = _table(["hyper-parameter", "R² drop", "spread"], rows)
    return _section("importance", title, f'<div class="grid">{figure}{table}</div>{note}')


def _provenance(record: RunRecord) -> str:
    rows = []
    versions = record.meta.get("versions") or {}
    rows += [(k, str(v)) for k, v in versions.items()]
    plugins = record.meta.get("plugins") or {}
    if isinstance(plugins, Mapping):
        rows += [(f"plugin {k}", _compact(v)) for k, v in plugins.items()]
    setup = record.meta.get("setup_seconds")
    if isinstance(setup, Mapping):
        rows += [(f"set-up: {k}", f"{float(v):.2f} s") for k, v in setup.items()]
    elif setup is not None:
        rows.append(("set-up seconds", f"{float(setup):.2f}"))
    if record.meta.get("resumed_at"):
        stamps = [_local_time(t) for t in record.meta["resumed_at"]]
        rows.append(("resumed at", ", ".join(stamps)))
    if not rows:
        return ""
    return _section("provenance", "Versions and set-up", _key_values(rows))


# -- helpers ----------------------------------------------------------------------------------
def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "-"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(number):
        return "-"
    return f"{number:.{digits}f}" if abs(number) < 1e5 else f"{number:.4g}"


def _compact(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=str)
    if isinstance(value, float):
        return _num(value)
    return "-" if value is None else str(value)


def _td(value: Any, numeric: bool = False) -> str:
    return f'<td class="n">{_e(value)}</td>' if numeric else f"<td>{_e(value)}</td>"


def _status_cell(status: str) -> str:
    colour = STATUS_COLOURS.get(status, "#999")
    return f'<td><span class="badge" style="background:{colour}">{_e(status)}</span></td>'


def _table(header: Sequence[str], rows: Iterable[str]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _key_values(rows: Sequence[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def _hyperparameters(groups: Mapping[str, Mapping[str, Any]]) -> str:
    parts = []
    for component, values in groups.items():
        if not values:
            continue
        listed = ", ".join(f"{_e(_last(k, 2))}={_e(_short(v))}" for k, v in values.items())
        parts.append(f"{_e(component)}: {listed}" if component else listed)
    return f'<span class="hp">{"<br>".join(parts)}</span>'


def _local_time(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def _last(name: str, parts: int) -> str:
    """``imputation:strategy`` of ``data_preprocessor:...:imputation:strategy``."""
    return ":".join(name.split(":")[-parts:])


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{_e(title)}</h2>{body}</section>'


def _p(text: str) -> str:
    return f'<p class="note">{text}</p>'


def _missing(text: str) -> str:
    return f'<p class="missing">{_e(text)}</p>'


def _img(content: PageContent, name: str) -> str:
    suffix = f"?v={content.version}" if content.live and content.version else ""
    return f'<img src="{_e(name)}{suffix}" alt="{_e(name)}">'
