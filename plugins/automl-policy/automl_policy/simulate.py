"""Simulated AutoML runs under each policy, looked up in LCDB's measured curves.

A *policy* is Auto-sklearn 2.0's pair (model selection, budget allocation): holdout or
k-fold cross-validation, crossed with full budget (every candidate trained on all the
training rows) or successive halving (candidates start on a ninth of the rows; the best
third go on). For one dataset, outer split and time budget, a policy's run is replayed:

* candidates are LCDB's 20 learners in one fixed order (their mean normalised error over
  the datasets, best first: the single-best order, a stand-in for a portfolio);
* an evaluation with k-fold CV costs k trainings; LCDB's 5 inner validation splits stand in
  for folds (so holdout uses inner split 0, 3-fold CV splits 0-2, 5-fold CV all five); there
  are no 10 splits, so 10-fold CV is not among the policies;
* evaluations run one after the other until the budget (seconds of LCDB's measured training
  time) is spent; the one that would overrun it is lost, like a trial killed at the deadline;
  a learner LCDB has no measurement for at an anchor (it failed or timed out there: 46 of
  3,940 dataset-learner pairs) costs nothing and gives no result;
* the run returns the candidate with the lowest validation error at the largest train size
  it reached, and its *test* error (averaged over the folds' models, as a CV ensemble would
  be roughly) is the policy's outcome; a run that finished nothing gets the dataset's worst
  test error (Auto-sklearn 2.0 gives a failed run the worst possible loss).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from automl_policy.lcdb_runs import OUTER_SPLITS, Runs


@dataclass(frozen=True)
class PolicySpec:
    """How one policy evaluates: ``folds`` validation splits (1 = holdout), and whether
    candidates are raced by successive halving with ``eta``."""

    name: str
    folds: int
    halving: bool
    eta: int = 3


POLICIES = (
    PolicySpec("holdout", 1, False),
    PolicySpec("holdout+sh", 1, True),
    PolicySpec("cv3", 3, False),
    PolicySpec("cv3+sh", 3, True),
    PolicySpec("cv5", 5, False),
    PolicySpec("cv5+sh", 5, True),
)
#: Auto-sklearn 2.0's fallback for a dataset unlike every meta-dataset: the cheapest and
#: most aggressive policy.
FALLBACK = "holdout+sh"


def learner_order(runs: Runs) -> np.ndarray:
    """Learners by mean normalised validation error at each dataset's largest anchor."""
    scores = []
    for valid in runs.valid:
        error = np.nanmean(valid[:, -1], axis=(1, 2))
        low, high = np.nanmin(error), np.nanmax(error)
        span = high - low if high > low else 1.0
        scores.append(np.where(np.isfinite(error), (error - low) / span, 1.0))
    return np.argsort(np.mean(scores, axis=0), kind="stable")


def simulate_all(runs: Runs, budget: float) -> np.ndarray:
    """Test error of every policy on every dataset: ``[dataset, policy]``, the mean over
    LCDB's outer splits."""
    with warnings.catch_warnings():
        # Learners LCDB could not measure somewhere are all-NaN slices: NaN is the answer.
        warnings.simplefilter("ignore", RuntimeWarning)
        return _simulate_all(runs, budget)


def _simulate_all(runs: Runs, budget: float) -> np.ndarray:
    order = learner_order(runs)
    outcome = np.empty((len(runs.datasets), len(POLICIES)))
    for d in range(len(runs.datasets)):
        for p, policy in enumerate(POLICIES):
            errors = [
                simulate(runs, d, policy, outer, budget, order) for outer in range(OUTER_SPLITS)
            ]
            outcome[d, p] = float(np.nanmean(errors))
    return outcome


def simulate(
    runs: Runs, dataset: int, policy: PolicySpec, outer: int, budget: float, order: np.ndarray
) -> float:
    """The test error one policy's run ends with on one dataset and outer split."""
    times = runs.times[dataset][:, :, outer, : policy.folds]
    valid = runs.valid[dataset][:, :, outer, : policy.folds]
    test = runs.test[dataset][:, :, outer, : policy.folds]
    full = len(runs.anchors[dataset]) - 1
    rungs = halving_anchors(runs.anchors[dataset], policy.eta) if policy.halving else [full]
    clock = Clock(budget)
    survivors = list(order)
    best: tuple[int, float, float] | None = None  # (rung, validation error, test error)
    for rung, anchor in enumerate(rungs):
        results = []
        for learner in survivors:
            cost = float(np.nansum(times[learner, anchor]))
            measured = bool(np.isfinite(valid[learner, anchor]).all())
            error = float(np.nanmean(valid[learner, anchor])) if measured else np.nan
            if not clock.spend(cost):
                break
            if np.isfinite(error):
                results.append((error, learner))
                # Rungs only grow: a result at a higher rung replaces the best so far.
                if best is None or rung > best[0] or error < best[1]:
                    best = (rung, error, float(np.nanmean(test[learner, anchor])))
        if clock.spent_out or rung == len(rungs) - 1:
            break
        keep = max(1, int(np.ceil(len(survivors) / policy.eta)))
        survivors = [learner for _, learner in sorted(results)[:keep]]
        if not survivors:
            break
    if best is None:
        return float(np.nanmax(np.nanmean(runs.test[dataset][:, full, outer], axis=-1)))
    return best[2]


def halving_anchors(anchors: np.ndarray, eta: int) -> list[int]:
    """The anchors successive halving trains on: the largest at most full/eta^k for k = 2,
    1, 0 (three rungs, as our ``successive_halving`` with its default eta and a ninth of the
    data), without repeats (small datasets have fewer)."""
    full = anchors[-1]
    chosen = []
    for power in (2, 1, 0):
        target = full / eta**power
        index = int(np.searchsorted(anchors, target, side="right")) - 1
        if index >= 0 and index not in chosen:
            chosen.append(index)
    return chosen


class Clock:
    """The run's remaining time; an evaluation that does not fit uses it up and is lost."""

    def __init__(self, budget: float) -> None:
        self.left = budget
        self.spent_out = False

    def spend(self, seconds: float) -> bool:
        if seconds > self.left:
            self.left = 0.0
            self.spent_out = True
            return False
        self.left -= seconds
        return True
