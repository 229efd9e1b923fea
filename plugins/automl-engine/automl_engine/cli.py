"""The ``automl`` command: run, resume, validate, plugins, show, predict, data, ablate,
compare, report, dashboard.

Errors the user can fix (a bad recipe, unknown name, bad data) print one clear message and
exit with status 2; a run that stopped on a plugin error exits with 1 after saving its work.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from pandas.api.types import is_numeric_dtype

from automl_core import __version__
from automl_core.errors import AutoMLError
from automl_core.plugins import KINDS, Plugins, load_plugins
from automl_engine.history import RunHistory, rank_key
from automl_engine.metrics import get_metric
from automl_engine.model_trust import declared_model_types
from automl_engine.recipe import load_recipe
from automl_engine.run_folder import (
    HISTORY_FILE,
    MODEL_FILE,
    PICKLED_MODEL_FILE,
    RECIPE_FILE,
    RunError,
    RunSummary,
    how_trials_ended,
    load_saved_model,
    memory_limit_note,
)
from automl_engine.runner import run
from automl_engine.suites import run_suite
from automl_engine.validation import check_benchmark, check_recipe

#: The commands of the core itself; any other is a plugin's (``register_commands``).
CORE_COMMANDS = ("run", "resume", "validate", "plugins", "show", "predict")
#: The help of command groups the core's users know; a plugin may start any other group
#: (``"name action"``), which gets a generic help. A group exists once a plugin adds an
#: action to it.
GROUP_HELP = {"data": "meta-data sources and data commands"}


def main(argv: Sequence[str] | None = None) -> int:
    # a run's wall time counts the command's own start-up, its imports included
    started = time.monotonic() - process_age()
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    # plugins' commands are looked up only for a command the core does not have (or help)
    plugins = None if command in CORE_COMMANDS else load_plugins()
    parser = build_parser(plugins)
    if plugins is not None and command is not None and command not in _registered(parser):
        print(f"error: {missing_command(command, _registered(parser))}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    args.started = started
    try:
        return int(args.handler(args))
    except BrokenPipeError:  # `automl show RUN | head`: the reader had what it wanted
        _quiet_stdout()
        return 0
    except RunError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except AutoMLError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # a read-only folder, a full disk: the file and the reason
        where = f" {error.filename}" if error.filename else ""
        print(f"error: cannot read or write{where}: {error.strerror or error}", file=sys.stderr)
        return 1


def process_age() -> float:
    """Seconds since this process started (0 where the system does not say: not Linux):
    the ``automl`` command imports for about a second before :func:`main` runs, and the
    README promises the wall time counts from the command's start."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        started_ticks = int(fields[19])  # field 22 of stat(5), after pid and (comm)
        ticks = os.sysconf("SC_CLK_TCK")
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started_ticks / ticks
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0
    return age if 0.0 <= age < 3600.0 else 0.0


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so that flushing it at exit after its reader
    went away (a pipe into ``head``) raises nothing (Python's documented recipe)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def missing_command(command: str, available: set[str]) -> str:
    """Why ``automl COMMAND`` is not there: neither the engine nor a loaded plugin has it.
    The engine names no plugin, so it cannot say which one would; the ``automl``
    distribution installs every command of the project's own plugins."""
    return (
        f"'automl {command}' is not a command here (the commands: {', '.join(sorted(available))}"
        "); a plugin that would provide it is not installed or failed to load (see `automl "
        "plugins`): the `automl` distribution installs every command of automl-core's own "
        "plugins (in this repository: make install, or pip install -e plugins/automl)"
    )


def run_plugin_command(argv: Sequence[str], plugins: Plugins | None = None) -> int:
    """Run ``automl ARGV...`` in this process, for a command a plugin registers: how the
    estimators' ``report()`` finds automl-report's page without the core importing a plugin.
    A command no loaded plugin registers is an :class:`AutoMLError` naming the distribution
    to install."""
    parser = build_parser(plugins if plugins is not None else load_plugins())
    if not argv or argv[0] not in _registered(parser):
        raise AutoMLError(missing_command(argv[0] if argv else "", _registered(parser)))
    args = parser.parse_args(list(argv))
    return int(args.handler(args))


def build_parser(loaded: Plugins | None = None) -> argparse.ArgumentParser:
    """The ``automl`` parser: the core's commands, and those the ``loaded`` plugins
    register."""
    parser = argparse.ArgumentParser(prog="automl", description="Plugin-oriented AutoML.")
    parser.add_argument("--version", action="version", version=f"automl-core {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    run_cmd = commands.add_parser("run", help="run a recipe (a file or a registered name)")
    run_cmd.add_argument(
        "recipe", type=Path, help="a recipe file, or a name from automl plugins --kind recipe"
    )
    run_cmd.add_argument("--out", type=Path, help="run folder (default: runs/<name>-<time>)")
    _add_set(run_cmd)
    _add_progress(run_cmd)
    run_cmd.add_argument(
        "--resume", action="store_true", help="continue the interrupted run in --out"
    )
    run_cmd.set_defaults(handler=cmd_run)

    resume = commands.add_parser(
        "resume", help="continue an interrupted run from its folder (its recipe.yaml)"
    )
    resume.add_argument("run_dir", type=Path)
    _add_set(resume)
    _add_progress(resume)
    resume.set_defaults(handler=cmd_resume)

    validate = commands.add_parser("validate", help="check a recipe without running it")
    validate.add_argument("recipe", type=Path, help="a recipe file, or a registered name")
    _add_set(validate)
    validate.set_defaults(handler=cmd_validate)

    plugins = commands.add_parser("plugins", help="list registered components")
    plugins.add_argument("--kind", help=f"only this kind ({', '.join(sorted(KINDS))}, ...)")
    plugins.add_argument("--json", action="store_true", help="machine-readable output")
    plugins.set_defaults(handler=cmd_plugins)

    show = commands.add_parser("show", help="leaderboard of a run folder")
    show.add_argument("run_dir", type=Path)
    show.add_argument("--top", type=int, default=20, help="rows to show (default 20)")
    show.set_defaults(handler=cmd_show)

    predict = commands.add_parser(
        "predict", help="predict a CSV file's rows with the model a run saved"
    )
    predict.add_argument("run_dir", type=Path, help=f"a run folder holding {MODEL_FILE}")
    predict.add_argument(
        "data", type=Path, help="a CSV file with a header row: the training features"
    )
    predict.add_argument("--out", type=Path, help="write the CSV here (default: stdout)")
    predict.add_argument(
        "--proba", action="store_true", help="class probabilities, one column per class"
    )
    predict.add_argument(
        "--trust",
        action="store_true",
        help=f"also load a pickled model ({PICKLED_MODEL_FILE}): only one you made yourself, "
        "as loading a pickle runs any code it holds",
    )
    predict.set_defaults(handler=cmd_predict)

    if loaded is not None:
        add_plugin_commands(commands, loaded)
    return parser


def add_plugin_commands(commands: Any, plugins: Plugins) -> None:
    """Add the sub-commands plugins register (``register_commands``): ``"name"`` for
    ``automl name``, ``"data name"`` for an action of a command group (created by the first
    action a plugin adds to it).
    A plugin that raises there, or claims a command that exists, is skipped with a warning
    naming it."""
    groups: dict[str, Any] = {}

    def group_actions(group: str) -> Any:
        if group not in groups:
            if group in _registered(commands):
                raise AutoMLError(f"{group!r} is a command, not a group of actions")
            help = GROUP_HELP.get(group, f"{group} commands (from plugins)")
            parser = commands.add_parser(group, help=help)
            groups[group] = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        return groups[group]

    for impl in plugins.manager.hook.register_commands.get_hookimpls():

        def register(
            name: str,
            configure: Callable[[argparse.ArgumentParser], None],
            handler: Callable[[argparse.Namespace], int],
            help: str = "",
        ) -> None:
            group, _, leaf = name.rpartition(" ")
            target = group_actions(group) if group else commands
            if leaf in _registered(target):
                raise AutoMLError(f"the command {name!r} exists already")
            parser = target.add_parser(leaf, help=help, description=help)
            configure(parser)
            parser.set_defaults(handler=handler)

        try:
            impl.function(register=register)
        except Exception as error:
            warnings.warn(
                f"plugin {impl.plugin_name!r} failed to register its commands: "
                f"{type(error).__name__}: {error}",
                stacklevel=2,
            )


def _registered(parser_or_commands: Any) -> set[str]:
    """The sub-command names of a parser (or of its sub-parsers action)."""
    if isinstance(parser_or_commands, argparse.ArgumentParser):
        actions = [
            a for a in parser_or_commands._actions if isinstance(a, argparse._SubParsersAction)
        ]
        return {name for action in actions for name in action.choices}
    return set(parser_or_commands.choices)


def _add_set(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a recipe value, e.g. --set search.params.c_ucb=1.3 (repeatable)",
    )


def _add_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress display (and, when stderr is not a terminal, no line per trial)",
    )
    parser.add_argument(
        "--log-every",
        type=int,
        default=1,
        metavar="N",
        help="when stderr is not a terminal, a line every N trials and at each new best "
        "(default 1)",
    )


def _progress(args: argparse.Namespace) -> tuple[object, ...]:
    """The run's progress display, or none with ``--quiet``."""
    from automl_engine.progress import ProgressDisplay

    if args.log_every < 1:
        raise AutoMLError(f"--log-every must be at least 1, got {args.log_every}")
    return () if args.quiet else (ProgressDisplay(every=args.log_every),)


def cmd_run(args: argparse.Namespace) -> int:
    plugins = load_plugins()
    recipe = load_recipe(args.recipe, args.overrides, plugins)
    if args.resume and args.out is None:
        raise AutoMLError("--resume needs --out RUN_DIR: the folder of the run to continue")
    out = args.out or Path("runs") / f"{recipe.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    observers = _progress(args)
    if recipe.task.suite is not None:
        suite = run_suite(recipe, out, plugins=plugins, observers=observers)
        print(f"suite folder: {suite.run_dir} ({len(suite.runs)} runs, {suite.elapsed:.1f}s)")
        if suite.mean_normalised_regret is not None:
            print(
                f"mean normalised regret on {suite.benchmark}/{suite.split}: "
                f"{suite.mean_normalised_regret:.4f}"
            )
        return 0
    summary = run(
        recipe, out, plugins=plugins, observers=observers, resume=args.resume, started=args.started
    )
    print_summary(summary)
    return exit_status(summary)


def cmd_resume(args: argparse.Namespace) -> int:
    path = args.run_dir / RECIPE_FILE
    if not path.is_file():
        raise AutoMLError(f"{args.run_dir} is not a run folder ({RECIPE_FILE} is missing)")
    recipe = load_recipe(path, args.overrides)
    observers = _progress(args)
    summary = run(recipe, args.run_dir, observers=observers, resume=True, started=args.started)
    print_summary(summary)
    return exit_status(summary)


def exit_status(summary: RunSummary) -> int:
    """1, with how the trials ended, when no trial succeeded: a run without a result is not
    a success for a script that runs it."""
    if summary.best_trial is not None:
        return 0
    with RunHistory(Path(summary.run_dir) / HISTORY_FILE, read_only=True) as history:
        trials = history.trials()
        limit = ((history.get_meta("recipe") or {}).get("budget") or {}).get("trial_memory_mb")
    print(
        f"error: no trial succeeded: {how_trials_ended(trials, summary.stopped_because)}"
        + memory_limit_note(trials, limit),
        file=sys.stderr,
    )
    return 1


def print_summary(summary: RunSummary) -> None:
    print(f"run folder: {summary.run_dir}")
    print(f"trials: {summary.n_trials} ({summary.stopped_because}, {summary.elapsed:.1f}s)")
    if summary.timing and summary.model_path:
        search, finishing = summary.timing["search"], summary.timing["finishing"]
        print(
            f"time: search until {search:.1f}s, then finishing {finishing:.1f}s "
            f"({summary.timing['reserved']:.1f}s kept back for it)"
        )
    if summary.best_loss is not None:
        print(f"best validation {describe_loss(summary.best_loss, summary.metric)} "
              f"(trial {summary.best_trial})")  # fmt: skip
    if summary.benchmark and "normalised_regret" in summary.benchmark:
        print(f"normalised regret: {summary.benchmark['normalised_regret']:.4f}")
    if summary.test_scores:
        print(f"test {summary.metric}: {summary.test_scores.get(summary.metric, math.nan):.4f}")
    if summary.model_path:
        print(f"model: {summary.model_path}")


def describe_loss(loss: float, metric: str) -> str:
    """``r2 0.3583 (loss 0.6417)``: the metric's own value first, as users read it; the
    loss (what the search minimises, lower is better) beside it. A name the metrics do not
    know (a benchmark's loss) is shown as the loss only."""
    try:
        value = get_metric(metric).score_of_loss(loss)
    except AutoMLError:
        return f"loss ({metric}): {loss:.4f}"
    return f"{metric}: {value:.4f} (loss {loss:.4f}, lower is better)"


def cmd_validate(args: argparse.Namespace) -> int:
    plugins = load_plugins()
    recipe = load_recipe(args.recipe, args.overrides, plugins)
    for warning in check_recipe(recipe, plugins):
        print(f"warning: {warning}", file=sys.stderr)
    if recipe.task.benchmark is not None:
        check_benchmark(recipe, plugins)
    print(
        f"{args.recipe}: valid (strategy {recipe.search.strategy.name}, "
        + (
            f"space {recipe.space.name})"
            if recipe.space is not None
            else f"benchmark {recipe.task.benchmark.name})"  # type: ignore[union-attr]
        )
    )
    return 0


def plugin_listing(
    plugins: Plugins, kind: str | None = None, parameters: bool = True
) -> dict[str, list[dict[str, Any]]]:
    """What ``automl plugins --json`` prints. Listing the ``parameters`` imports the plugins
    that registered their factories lazily; the plain listing does without them."""
    components = [r.as_dict(parameters) for r in plugins.registry.all() if kind in (None, r.kind)]
    conflicts = [
        {"kind": k, "name": n, "claimed_by": [str(r.origin) for r in claims]}
        for (k, n), claims in plugins.registry.conflicts.items()
        if kind in (None, k)
    ]
    broken = [dict(vars(b)) for b in plugins.broken]
    return {"components": components, "conflicts": conflicts, "broken": broken}


def cmd_plugins(args: argparse.Namespace) -> int:
    plugins = load_plugins()
    if args.kind is not None and args.kind not in KINDS:  # plugins may add kinds: known now
        raise AutoMLError(f"unknown kind {args.kind!r}; kinds: {', '.join(sorted(KINDS))}")
    listing = plugin_listing(plugins, args.kind, parameters=args.json)
    if args.json:
        print(json.dumps(listing, indent=2))
        return 0
    current = None
    for item in listing["components"]:
        if item["kind"] != current:
            current = item["kind"]
            print(f"\n{current}:")
        line = f"  {item['name']:<40} {item['distribution']} {item['version']}"
        if item["kind"] == "recipe" and item["description"]:
            line += f"  {item['description']}"
        print(line)
    for conflict in listing["conflicts"]:
        print(f"\nCONFLICT {conflict['kind']} {conflict['name']!r}: {conflict['claimed_by']}")
    for broken in listing["broken"]:
        print(f"\nBROKEN plugin {broken['name']} ({broken['distribution']}): {broken['error']}")
    return 0


def describe_warm_start(record: dict[str, Any]) -> str:
    """One line on the warm start: the starter, its count, and the nearest datasets or the
    meta-data it drew on, when its info says."""
    info = record.get("info", {})
    line = f"warm start: {record['configs']} configurations from {record['starter']}"
    if info.get("metadata"):
        line += f" (meta-data {info['metadata']})"
    datasets = info.get("datasets") or []
    if datasets and isinstance(datasets[0], dict) and "distance" in datasets[0]:
        nearest = ", ".join(f"{d['dataset']} {d['distance']:.3g}" for d in datasets[:5])
        line += f"; nearest datasets: {nearest}" + (", ..." if len(datasets) > 5 else "")
    elif datasets:
        line += f"; built on {len(datasets)} datasets"
    if info.get("state"):
        line += f"; surrogate state: {info['state']}"
    if info.get("excluded"):
        line += f"; left out: {', '.join(map(str, info['excluded']))}"
    return line


def cmd_show(args: argparse.Namespace) -> int:
    path = args.run_dir / HISTORY_FILE
    if not path.is_file():
        raise AutoMLError(f"{args.run_dir} is not a run folder (no {HISTORY_FILE})")
    with RunHistory(path, read_only=True) as history:
        trials = history.trials()
        metric = history.get_meta("metric", "loss")
        benchmark = history.get_meta("benchmark")
        dataset = (
            f"{benchmark['name']}:{benchmark['dataset']}"
            if benchmark
            else history.get_meta("dataset", {}).get("name", "?")
        )
        summary = history.get_meta("summary")
        warm_start = history.get_meta("warmstart")
        policy = history.get_meta("policy")
    statuses: dict[str, int] = {}
    for t in trials:
        statuses[t.status] = statuses.get(t.status, 0) + 1
    print(
        f"{args.run_dir}: {len(trials)} trials on {dataset}, metric {metric}, "
        + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    )
    if policy:
        print(f"policy: {policy['name']} (resampling {policy['resampling']}, strategy "
              f"{policy['strategy']}), chosen by the policy selector")  # fmt: skip
    if warm_start:
        print(describe_warm_start(warm_start))
    budgeted = any(t.trial.budget is not None for t in trials)
    ranked = sorted(trials, key=rank_key)[: args.top]
    budget_header = f" {'budget':>8}" if budgeted else ""
    width = max([10, *(len(t.trial.origin) for t in ranked)])
    print(
        f"{'rank':>4} {'trial':>5}{budget_header} {'loss':>9} {'status':<8} "
        f"{'origin':<{width}} {'time':>7}  pipeline"
    )
    for rank, t in enumerate(ranked, 1):
        loss = "-" if not math.isfinite(t.loss) else f"{t.loss:.4f}"
        budget = (
            ""
            if not budgeted
            else f" {'full' if t.trial.budget is None else f'{t.trial.budget:.4g}':>8}"
        )
        print(
            f"{rank:>4} {t.trial.id:>5}{budget} {loss:>9} {t.status:<8} {t.trial.origin:<{width}} "
            f"{(t.duration or 0):>6.2f}s  {describe_pipeline(t.trial.config)}"
        )
    if summary and summary.get("final_model"):
        print(describe_final_model(summary))
    if summary and summary.get("test_scores"):
        print(f"test {metric} of the final model: {summary['test_scores'].get(metric)}")
    return 0


def describe_final_model(summary: dict[str, Any]) -> str:
    """One line on the final model: its trials and weights, and why it was chosen."""
    weights = ", ".join(f"trial {t} {float(w):.2f}" for t, w in summary["ensemble"].items())
    return f"final model: {weights}; {summary['final_model']['reason']}"


def cmd_predict(args: argparse.Namespace) -> int:
    allowed = declared_model_types(load_plugins())
    stored = load_saved_model(args.run_dir, trust=args.trust, allowed=allowed)
    frame = read_features(args.data, stored)
    model = stored["model"]
    if args.proba:
        if model.label_encoder is None:
            raise AutoMLError(
                f"--proba needs a classification model; the model in {args.run_dir} is for "
                f"{model.task}"
            )
        table = pd.DataFrame(model.predict_proba(frame), columns=list(model.label_encoder.classes_))
    else:
        table = pd.DataFrame({stored.get("target") or "prediction": model.predict(frame)})
    if args.out is None:
        table.to_csv(sys.stdout, index=False)
    else:
        table.to_csv(args.out, index=False)
        print(f"{len(table)} predictions written to {args.out}", file=sys.stderr)
    return 0


def read_features(path: Path, stored: Mapping[str, Any]) -> pd.DataFrame:
    """The CSV file's feature columns, in training order. The target column, if present, is
    dropped; a missing or unknown column is an error naming it."""
    try:
        frame = pd.read_csv(path)
    except OSError as error:  # missing, a folder, unreadable
        raise AutoMLError(f"cannot read csv file {str(path)!r}: {error.strerror}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise AutoMLError(f"cannot read {str(path)!r} as CSV: {error}") from None
    features = _training_features(stored)
    target = stored.get("target")
    missing = [c for c in features if c not in frame.columns]
    extra = [c for c in frame.columns if c not in features and c != target]
    if missing or extra:
        problems = []
        if missing:
            problems.append(f"lacks the training features {missing}")
        if extra:
            problems.append(f"has columns the model was not trained on {extra}")
        raise AutoMLError(
            f"{path}: the columns must be the training features"
            + (f" (the target {target!r} may be present and is ignored)" if target else "")
            + f"; the file {' and '.join(problems)}"
        )
    if frame.empty:
        raise AutoMLError(f"{path} has a header but no rows: there is nothing to predict")
    return with_numbers_checked(frame[features], stored.get("numeric_features") or [], path)


def with_numbers_checked(frame: pd.DataFrame, numeric: Sequence[str], path: Path) -> pd.DataFrame:
    """``frame`` with the columns the model was trained on as numbers read as numbers; a
    value that is not a number (text where the training data had numbers) is an error
    naming the column and the first such row (by its line in the file), not quoting it."""
    frame = frame.copy()
    for column in numeric:
        values = frame[column]
        if is_numeric_dtype(values):
            continue
        numbers = pd.to_numeric(values, errors="coerce")
        bad = values.notna() & numbers.isna()
        if bad.any():
            line = int(bad.to_numpy().nonzero()[0][0]) + 2  # after the header, from 1
            raise AutoMLError(
                f"{path}: column {column!r} must hold numbers, as it did in the training "
                f"data; {int(bad.sum())} values are not numbers (the first on line {line})"
            )
        frame[column] = numbers
    return frame


def _training_features(stored: Mapping[str, Any]) -> list[str]:
    """The training columns saved with the model or, for a model saved before they were,
    those its first pipeline recorded when fitted."""
    if stored.get("features") is not None:
        return list(stored["features"])
    names = getattr(stored["model"].estimators[0], "feature_names_in_", None)
    if names is None:
        raise AutoMLError(
            "the saved model does not record its training columns; predict in Python with "
            "load_saved_model(run_dir)['model'].predict(frame)"
        )
    return [str(n) for n in names]


def describe_pipeline(config: Mapping[str, Any]) -> str:
    """The chosen component of each stage, e.g. ``standardize > pca > random_forest``."""
    chosen = [
        str(v) for k, v in config.items() if k.endswith(":__choice__") and v != "feature_type"
    ]
    return " > ".join(chosen) if chosen else json.dumps(config)[:60]


if __name__ == "__main__":
    sys.exit(main())
