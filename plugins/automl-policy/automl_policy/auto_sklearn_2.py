"""The ``auto-sklearn-2`` policy selector: trained on simulated runs over LCDB's datasets.

At the first selection for a time budget, every policy's run is simulated on LCDB's 197
datasets that have sizes (:mod:`automl_policy.simulate`) with that budget, rounded to a grid
(10 s ... 1 h) so that the simulations are cached and shared; the pairwise selector
(:mod:`automl_policy.selector`) is fitted on the datasets' numbers of rows and features.
Simulation and fit take a few seconds once per budget and process; the simulated losses are
cached on disk.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from automl_core.contracts import Policy, PolicySelector, TaskDescription
from automl_engine.cache import building, cache_dir, write_atomically
from automl_policy.lcdb_runs import CACHE_VERSION, Runs, load_runs
from automl_policy.selector import PairwiseSelector
from automl_policy.simulate import FALLBACK, POLICIES, simulate_all
from automl_spaces.options import integer

log = logging.getLogger(__name__)

#: Budgets (seconds) the simulations are run at; a run's budget is rounded to the nearest on
#: a log scale.
BUDGET_GRID = (10, 30, 60, 120, 300, 600, 1800, 3600)
#: The budget assumed for a run bounded by trials only (Auto-sklearn 2.0's longer horizon).
UNBOUNDED_BUDGET = 3600
RESAMPLING = {1: {"holdout": 0.33}, 3: {"cv": 3}, 5: {"cv": 5}}
#: Bumped when the simulation (policies, learner order, rules) changes, so that outcomes
#: cached by an older version are not read.
SIMULATION_VERSION = 1


#: The strategy that races candidates under a halving policy: automl-halving's successive
#: halving (a name, not an import: the recipe's plugins must include automl-halving).
RACING_STRATEGY = "successive_halving"


def _policy_names(chosen: list[str] | None) -> tuple[str, ...]:
    """The recipe's ``policies`` as a tuple; None: every policy of :data:`POLICIES`."""
    return tuple(p.name for p in POLICIES) if chosen is None else tuple(chosen)


@attrs.define(slots=False, eq=False)
class AutoSklearn2Selector(PolicySelector):
    """Auto-sklearn 2.0's policy selector (see the module docstring and README).

    ``policies`` restricts the choice (names of :data:`automl_policy.simulate.POLICIES`);
    ``fallback`` is the policy for datasets larger than every meta-dataset in rows or
    features; ``trees`` and ``seed`` configure the pairwise forests.
    """

    policies: tuple[str, ...] = attrs.field(default=None, converter=_policy_names)
    fallback: str = FALLBACK
    trees: int = attrs.field(default=100, validator=integer(at_least=1))
    seed: int = attrs.field(default=0, validator=integer(at_least=0))

    @policies.validator
    def _known_policies(self, _attribute: attrs.Attribute[Any], chosen: tuple[str, ...]) -> None:
        known = [p.name for p in POLICIES]
        if not chosen or any(p not in known for p in chosen):
            raise ValueError(f"policies must be a non-empty list of {known}, got {list(chosen)}")

    def __attrs_post_init__(self) -> None:
        if self.fallback not in self.policies:
            raise ValueError(
                f"fallback {self.fallback!r} must be one of the policies {list(self.policies)}"
            )

    def select(self, task: TaskDescription, time_budget: float | None) -> Policy:
        budget = grid_budget(time_budget)
        selector = fitted_selector(self.policies, self.fallback, self.trees, self.seed, budget)
        features = [float(task.n_rows), float(task.n_features)]
        name = selector.select(features)
        spec = next(p for p in POLICIES if p.name == name)
        info: dict[str, Any] = {
            "selector": "auto-sklearn-2",
            "simulated_budget_s": budget,
            "fallback": not selector.covered(features),
            # The selector's policies are in POLICIES order, not necessarily ours.
            "votes": dict(
                zip(selector.policies, np.round(selector.votes(features), 3).tolist(), strict=True)
            ),
        }
        racing = RACING_STRATEGY if spec.halving else None
        return Policy(name, RESAMPLING[spec.folds], spec.halving, info, racing)


def grid_budget(seconds: float | None) -> int:
    """The grid budget nearest to ``seconds`` on a log scale."""
    if seconds is None:
        return UNBOUNDED_BUDGET
    if seconds <= 0:
        raise ValueError(f"the time budget must be positive, got {seconds}")
    grid = np.array(BUDGET_GRID, dtype=float)
    return int(grid[np.argmin(np.abs(np.log(grid) - np.log(seconds)))])


@functools.lru_cache(maxsize=16)
def fitted_selector(
    policies: tuple[str, ...], fallback: str, trees: int, seed: int, budget: int
) -> PairwiseSelector:
    runs = load_runs()
    losses = simulated_losses(budget, runs)
    columns = [i for i, p in enumerate(POLICIES) if p.name in policies]
    features = np.column_stack([runs.n_rows, runs.n_features])
    selector = PairwiseSelector(
        [POLICIES[i].name for i in columns], fallback, trees=trees, seed=seed
    )
    return selector.fit(features, losses[:, columns])


def simulated_losses(budget: int, runs: Runs | None = None) -> np.ndarray:
    """``[dataset, policy]`` test errors of the simulated runs at ``budget``, cached.

    ``runs`` is LCDB's table when the caller has it already (None: loaded when needed)."""
    name = f"lcdb-outcomes-v{CACHE_VERSION}-s{SIMULATION_VERSION}-{budget}s.npy"
    path = cache_dir() / "policy" / name
    runs = runs if runs is not None else load_runs()
    cached = _cached_losses(path, runs)
    if cached is not None:
        return cached
    with building(path):
        cached = _cached_losses(path, runs)  # built while this process waited?
        if cached is not None:
            return cached
        losses = simulate_all(runs, budget)
        write_atomically(path, lambda tmp: np.save(tmp, losses))
    return losses


def _cached_losses(path: Path, runs: Runs) -> np.ndarray | None:
    """The simulated losses saved at ``path``, or None when absent, unreadable or of
    another shape (they are then rebuilt, said in a warning)."""
    if not path.is_file():
        return None
    try:
        losses = np.load(path)
    except (OSError, ValueError) as error:
        log.warning("rebuilding the unreadable policy cache %s: %s", path, error)
        return None
    if losses.shape != (len(runs.datasets), len(POLICIES)):
        log.warning("rebuilding the policy cache %s: it has shape %s", path, losses.shape)
        return None
    return losses
