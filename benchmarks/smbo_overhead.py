"""Time of one ask + tell of model-based strategies as observations accumulate.

Each strategy runs ``--trials`` sequential trials on a 10-d continuous problem (the Levy
function on [0, 1]^10, as a one-component pipeline space, so every strategy sees the same
ConfigSpace); the objective costs microseconds, so what is timed is the strategy. For each
checkpoint n the table gives the median ask + tell time, in milliseconds, of the trials
n-4 .. n+5 (the model then holds about n observations), and the best loss found in the first n
trials (Levy's minimum is 0).

    python benchmarks/smbo_overhead.py --strategies smbo:rf smbo:gp smac3 optuna-tpe \\
        --checkpoints 50 200 500

``--space choice`` makes the problem a choice between two components, each with its own 10
hyper-parameters (the second one's loss is Levy's plus 0.5), so that strategies over pipeline
structure (mcts) can be timed beside the others:

    python benchmarks/smbo_overhead.py --space choice --strategies mcts:rf smbo:rf optuna-tpe

Strategies that race budgets (``hyperband``, ``successive_halving``, ``asha``; with a surrogate,
BOHB's model-based sampling) get a budget range of 1/27 to 1 (``subsample``) and a loss that
is Levy's plus ``0.1 * (1 - budget)``, a low budget a slightly pessimistic view of the same
function; a checkpoint n then counts trials at any budget:

    python benchmarks/smbo_overhead.py --strategies hyperband:rf smbo:rf optuna-tpe

A strategy's parameters follow an ``@``: ``smbo:rf@target_transform=copula,xi=0.01``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np
import yaml
from ConfigSpace import ConfigurationSpace, Float

from automl_core.contracts import Fidelity, SearchContext
from automl_core.plugins import Plugins, load_plugins
from automl_core.space import PipelineComponent, Stage
from automl_core.trial import Result, Status, Trial
from automl_spaces.pipeline_space import PipelineSpace

DIMENSIONS = 10
#: the budget range given to strategies that race budgets
FIDELITY = Fidelity("subsample", 1 / 27, 1.0)
WINDOW = (4, 5)  # trials before and after a checkpoint


def levy_space() -> PipelineSpace:
    def hyperparameters() -> ConfigurationSpace:
        return ConfigurationSpace([Float(f"x{i}", (0.0, 1.0)) for i in range(DIMENSIONS)])

    component = PipelineComponent("levy", "problem", lambda p, c: p, hyperparameters)
    stage = Stage("problem", (component,), choice=False)
    return PipelineSpace("levy-10d", "regression", (stage,), assemble=lambda c, ctx: None)


def levy_choice_space() -> PipelineSpace:
    """Two components ``a`` and ``b`` of one choice stage, each with Levy's 10 inputs."""

    def hyperparameters() -> ConfigurationSpace:
        return ConfigurationSpace([Float(f"x{i}", (0.0, 1.0)) for i in range(DIMENSIONS)])

    components = tuple(
        PipelineComponent(name, "problem", lambda p, c: p, hyperparameters) for name in "ab"
    )
    stage = Stage("problem", components, choice=True)
    return PipelineSpace("levy-choice", "regression", (stage,), assemble=lambda c, ctx: None)


def levy_choice(config: dict) -> float:
    """Levy's function of the chosen component's inputs, plus 0.5 for component ``b``."""
    name = config["problem:__choice__"]
    inputs = {f"problem:x{i}": config[f"problem:{name}:x{i}"] for i in range(DIMENSIONS)}
    return levy(inputs) + (0.5 if name == "b" else 0.0)


def levy(config: dict) -> float:
    """The Levy function, its domain [-10, 10]^d mapped to [0, 1]^d; minimum 0."""
    x = np.array([config[f"problem:x{i}"] for i in range(DIMENSIONS)]) * 20 - 10
    w = 1 + (x - 1) / 4
    body = (w[:-1] - 1) ** 2 * (1 + 10 * np.sin(np.pi * w[:-1] + 1) ** 2)
    tail = (w[-1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[-1]) ** 2)
    return float(np.sin(np.pi * w[0]) ** 2 + body.sum() + tail)


#: the problems: (space, loss of a configuration)
PROBLEMS = {"levy": (levy_space, levy), "choice": (levy_choice_space, levy_choice)}


def strategy_of(spec: str, plugins: Plugins, space: PipelineSpace, seed: int):
    """``name[:surrogate][@key=value,...]``: e.g. ``smbo:rf@target_transform=copula``
    (values are read as YAML)."""
    spec, _, settings = spec.partition("@")
    params = {
        key: yaml.safe_load(value)
        for key, value in (item.split("=", 1) for item in settings.split(",") if item)
    }
    name, _, surrogate = spec.partition(":")
    strategy = plugins.create("search_strategy", name, params)
    factory = (lambda: plugins.create("surrogate", surrogate)) if surrogate else None
    fidelity = FIDELITY if strategy.races_budgets else None
    strategy.setup(
        SearchContext(space=space, seed=seed, surrogate_factory=factory, fidelity=fidelity)
    )
    return strategy


def time_strategy(
    spec: str, plugins: Plugins, trials: int, seed: int, problem: str = "levy"
) -> tuple[list, list]:
    """Seconds of ask + tell for each trial, and the losses found."""
    make_space, objective = PROBLEMS[problem]
    space = make_space()
    strategy = strategy_of(spec, plugins, space, seed)
    times, losses = [], []
    for i in range(trials):
        started = time.perf_counter()
        candidate = strategy.ask()
        elapsed = time.perf_counter() - started
        loss = objective(candidate.config)
        if candidate.budget is not None:  # a low budget: a slightly pessimistic view
            loss += 0.1 * (1.0 - candidate.budget)
        started = time.perf_counter()
        trial = Trial(i, candidate.config, candidate.budget)
        strategy.tell(trial, Result(Status.OK, loss))
        times.append(elapsed + time.perf_counter() - started)
        losses.append(loss)
    return times, losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategies", nargs="+", default=["smbo:rf", "smac3", "optuna-tpe"])
    parser.add_argument("--checkpoints", type=int, nargs="+", default=[50, 200, 500])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--space", choices=sorted(PROBLEMS), default="levy")
    args = parser.parse_args()
    plugins = load_plugins()
    trials = max(args.checkpoints) + WINDOW[1]
    print(
        f"# {DIMENSIONS}-d Levy ({args.space}), {trials} trials, seed {args.seed}; "
        f"{platform.machine()}, Python {platform.python_version()}"
    )
    header = " | ".join(f"n={c}" for c in args.checkpoints)
    found = " | ".join(f"best at {c}" for c in args.checkpoints)
    print(f"\n| strategy | {header} | total s | {found} |")
    print("|---" * (2 + 2 * len(args.checkpoints)) + "|")
    for spec in args.strategies:
        times, losses = time_strategy(spec, plugins, trials, args.seed, args.space)
        cells = " | ".join(
            f"{statistics.median(times[c - WINDOW[0] - 1 : c + WINDOW[1]]) * 1e3:.1f}"
            for c in args.checkpoints
        )
        best = " | ".join(f"{min(losses[:c]):.3f}" for c in args.checkpoints)
        print(f"| {spec} | {cells} | {sum(times):.1f} | {best} |", flush=True)


if __name__ == "__main__":
    main()
